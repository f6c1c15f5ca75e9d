// Parsing JSON read from a file (gulp `.gmeta` indexes, label2idx.json) with
// limits no input can push past.
//
// nlohmann::json is fine on the happy path but has two ways to take a process
// down on hostile text: values nested hundreds of thousands deep (its parser
// is iterative, but dump(), copies and comparisons recurse once per level, so
// a deep value overflows the stack later) and numbers a double cannot hold
// (`1e400` throws out_of_range, not parse_error, which callers catching only
// parse errors let escape as std::terminate). CheckJsonLimits scans the text
// once, before the parser sees it, for both; ParseJson then parses, turning
// every exception the library may throw into a DataLoss Status that names the
// file and the byte offset. TensorFlow-free.
#ifndef TF_GULP_CC_UTIL_JSON_TEXT_H_
#define TF_GULP_CC_UTIL_JSON_TEXT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "cc/util/printable_text.h"
#include "cc/util/status.h"

namespace tfg {

// Deepest nesting of arrays/objects accepted. Python's json module (which
// wrote most gulp indexes) stops near 1000 levels, and real indexes use 3 or
// 4, so this refuses nothing a reference writer produces while keeping the
// recursion of dump()/copies to a few hundred kilobytes of stack.
constexpr int kMaxJsonDepth = 1000;

// DataLoss naming `path` and the byte offset when `text` nests arrays/objects
// deeper than `max_depth`, or holds a number outside the range of a double.
// Checks only what it needs to; malformed text is left to the parser.
Status CheckJsonLimits(const std::string& text, const std::string& path,
                       int max_depth = kMaxJsonDepth);

// CheckJsonLimits, then parses `text` into `*out`. Every failure is DataLoss
// naming `path` (and the byte offset where the parser reports one).
template <typename JsonT>
Status ParseJson(const std::string& text, const std::string& path, JsonT* out,
                 int max_depth = kMaxJsonDepth) {
  TFG_RETURN_IF_ERROR(CheckJsonLimits(text, path, max_depth));
  try {
    *out = JsonT::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // what() quotes the bytes last read, which may be anything.
    return DataLossError(path, ": invalid JSON at byte offset ", e.byte, ": ",
                         PrintableText(e.what()));
  } catch (const nlohmann::json::exception& e) {
    // Not expected after CheckJsonLimits; never let it escape as a crash.
    return DataLossError(path, ": unreadable JSON: ", PrintableText(e.what()));
  }
  return Status::Ok();
}

// `text` as a JSON string literal, for the one-line JSON reports the GPU
// tools print: quotes and backslashes escaped, control characters dropped.
inline std::string JsonQuoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

}  // namespace tfg

#endif  // TF_GULP_CC_UTIL_JSON_TEXT_H_
