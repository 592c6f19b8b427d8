// common/terminal_text.h: the one escaping of file- and peer-supplied text in human output.
#include "common/terminal_text.h"

#include <gtest/gtest.h>

#include <string>

namespace wipeproof {
namespace {

TEST(TerminalSafeTest, PlainTextAndUtf8PassUnchanged) {
  EXPECT_EQ(TerminalSafe("gpu-01.rack_2"), "gpu-01.rack_2");
  EXPECT_EQ(TerminalSafe("NVIDIA H200 (140 GiB) 'x' \"y\" ~"), "NVIDIA H200 (140 GiB) 'x' \"y\" ~");
  EXPECT_EQ(TerminalSafe("n\xc3\xa9ud-\xe6\x97\xa5\xf0\x9f\x94\x92"), "n\xc3\xa9ud-\xe6\x97\xa5\xf0\x9f\x94\x92");
  EXPECT_EQ(TerminalSafe(""), "");
}

TEST(TerminalSafeTest, C0DelAndC1ControlsBecomeU00XX) {
  EXPECT_EQ(TerminalSafe("y\nfake line"), "y\\u000afake line");
  EXPECT_EQ(TerminalSafe("x\x1b[31mred\r\t"), "x\\u001b[31mred\\u000d\\u0009");
  EXPECT_EQ(TerminalSafe(std::string("a\0b", 3)), "a\\u0000b");
  EXPECT_EQ(TerminalSafe("\x7f"), "\\u007f");
  EXPECT_EQ(TerminalSafe("\xc2\x9b"
                         "31m"),
            "\\u009b31m");  // 8-bit CSI, U+009B
  EXPECT_EQ(TerminalSafe("a\xc2\x85"
                         "b"),
            "a\\u0085b");                                                         // NEL, U+0085
  EXPECT_EQ(TerminalSafe("\xc2\x80\xc2\x9f\xc2\xa0"), "\\u0080\\u009f\xc2\xa0");  // U+00A0 is printable
}

TEST(TerminalSafeTest, BidiControlsAndLineSeparatorsAreEscaped) {
  EXPECT_EQ(TerminalSafe("abc\xe2\x80\xae"
                         "cba"),
            "abc\\u202ecba");  // RIGHT-TO-LEFT OVERRIDE
  EXPECT_EQ(TerminalSafe("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad"), "\\u202a\\u202b\\u202c\\u202d");
  EXPECT_EQ(TerminalSafe("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9"), "\\u2066\\u2067\\u2068\\u2069");
  EXPECT_EQ(TerminalSafe("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c"), "\\u200e\\u200f\\u061c");
  EXPECT_EQ(TerminalSafe("a\xe2\x80\xa8"
                         "b\xe2\x80\xa9"),
            "a\\u2028b\\u2029");
  EXPECT_EQ(TerminalSafe("\xe2\x81\xaa"), "\xe2\x81\xaa");  // U+206A is no bidi control: unchanged
}

TEST(TerminalSafeTest, BytesThatAreNotUtf8BecomeXNN) {
  EXPECT_EQ(TerminalSafe("a\xff"
                         "b"),
            "a\\xffb");
  EXPECT_EQ(TerminalSafe("\x9b"), "\\x9b");                             // a lone C1 byte (Latin-1 CSI) is not UTF-8
  EXPECT_EQ(TerminalSafe("\xc3"), "\\xc3");                             // truncated sequence
  EXPECT_EQ(TerminalSafe("\xc0\x8a"), "\\xc0\\x8a");                    // overlong newline
  EXPECT_EQ(TerminalSafe("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(TerminalSafe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(TerminalSafe("\xe2\x80"
                         "x"),
            "\\xe2\\x80x");
}

// The escape forms cannot be forged: a backslash is doubled, so the literal text "\u001b" and a real
// ESC print differently.
TEST(TerminalSafeTest, BackslashIsEscapedSoNoTwoTextsPrintTheSame) {
  EXPECT_EQ(TerminalSafe("x\\u001b[31m"), "x\\\\u001b[31m");
  EXPECT_EQ(TerminalSafe("x\x1b[31m"), "x\\u001b[31m");
  EXPECT_NE(TerminalSafe("x\\u001b[31m"), TerminalSafe("x\x1b[31m"));
  EXPECT_NE(TerminalSafe("\\xff"), TerminalSafe("\xff"));
  EXPECT_EQ(TerminalSafe("C:\\dir"), "C:\\\\dir");
}

}  // namespace
}  // namespace wipeproof
