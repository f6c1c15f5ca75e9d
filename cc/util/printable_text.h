// File bytes made safe to quote in an error message.
//
// Messages name what a file holds where it goes wrong (a box type, a JSON
// parser's view of the text, an id, a label), and those bytes are whatever
// the file holds: NUL bytes make a log "binary" to grep, and bytes that are
// not UTF-8 cannot become a Python str, so TensorFlow's and pybind11's
// conversions raise UnicodeDecodeError instead of the DataLossError. Every
// message that quotes file content passes it through PrintableText, where the
// message is made. TensorFlow-free.
#ifndef TF_GULP_CC_UTIL_PRINTABLE_TEXT_H_
#define TF_GULP_CC_UTIL_PRINTABLE_TEXT_H_

#include <string>
#include <string_view>

namespace tfg {

// `bytes` with printable UTF-8 kept as is and everything else escaped the way
// Python's repr() shows it: ASCII control bytes and DEL as \t \n \r or \xNN,
// C1 controls (U+0080..U+009F) as \xNN of their code point's bytes, and each
// byte of an ill-formed UTF-8 sequence (a stray continuation byte, a
// truncated, overlong or surrogate sequence, a code point past U+10FFFF) as
// \xNN. A backslash stays a backslash. The result is always valid UTF-8 with
// no control characters.
std::string PrintableText(std::string_view bytes);

// `text` unchanged when it is valid UTF-8, else with each byte of every
// ill-formed sequence escaped as \xNN (control characters kept: a whole
// message's newlines stay newlines). The last resort where a message leaves
// the core (tf_gulp/ops/framework/core_status.h, the _core module): a file name read
// from a directory listing may be any bytes.
std::string ValidUtf8(std::string_view text);

}  // namespace tfg

#endif  // TF_GULP_CC_UTIL_PRINTABLE_TEXT_H_
