#include "cc/util/printable_text.h"

#include <gtest/gtest.h>

#include <string>

namespace tfg {
namespace {

using std::string_literals::operator""s;

TEST(PrintableTextTest, KeepsPrintableUtf8) {
  EXPECT_EQ(PrintableText("moov"), "moov");
  EXPECT_EQ(PrintableText("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\x9e a\\b"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\x9e a\\b");
}

TEST(PrintableTextTest, EscapesControlBytes) {
  EXPECT_EQ(PrintableText("B\0\0\0"s), "B\\x00\\x00\\x00");
  EXPECT_EQ(PrintableText("a\tb\nc\rd\x7f"), "a\\tb\\nc\\rd\\x7f");
  EXPECT_EQ(PrintableText("\xc2\x85"), "\\xc2\\x85");  // U+0085, a C1 control
}

TEST(PrintableTextTest, EscapesEveryByteOfIllFormedUtf8) {
  EXPECT_EQ(PrintableText("vid\xc3\x28"), "vid\\xc3(");  // lead byte, no continuation
  EXPECT_EQ(PrintableText("\x80"), "\\x80");              // stray continuation byte
  EXPECT_EQ(PrintableText("\xc0\xaf"), "\\xc0\\xaf");     // overlong '/'
  EXPECT_EQ(PrintableText("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(PrintableText("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(PrintableText("\xe2\x82"), "\\xe2\\x82");     // truncated at the end
  EXPECT_EQ(PrintableText("\xff\xfe"), "\\xff\\xfe");
}

TEST(PrintableTextTest, ValidUtf8KeepsValidTextAndControls) {
  EXPECT_EQ(ValidUtf8("line 1\nline 2 caf\xc3\xa9"), "line 1\nline 2 caf\xc3\xa9");
  EXPECT_EQ(ValidUtf8("data_\xff.gulp: bad\n"), "data_\\xff.gulp: bad\n");
}

TEST(PrintableTextTest, EveryByteStringComesOutValidUtf8WithoutControls) {
  // Every 2-byte string: the output decodes and holds no control character.
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string in{static_cast<char>(a), static_cast<char>(b)};
      const std::string out = PrintableText(in);
      EXPECT_EQ(ValidUtf8(out), out);
      for (unsigned char c : out) EXPECT_FALSE(c < 0x20 || c == 0x7f) << a << "," << b;
    }
  }
}

}  // namespace
}  // namespace tfg
