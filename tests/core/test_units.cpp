#include <gtest/gtest.h>

#include "llamp/error.hpp"
#include "llamp/units.hpp"

using namespace llamp::units;

TEST(Units, TimeSuffixes) {
  EXPECT_DOUBLE_EQ(parse_time_ns("3us", "--L"), 3000.0);
  EXPECT_DOUBLE_EQ(parse_time_ns("0.018ns", "--G"), 0.018);
  EXPECT_DOUBLE_EQ(parse_time_ns("2ms", "--L"), 2e6);
  EXPECT_DOUBLE_EQ(parse_time_ns("1s", "--L"), 1e9);
  EXPECT_DOUBLE_EQ(parse_time_ns("5 µs", "--L"), 5000.0);
}

TEST(Units, BareNumberNeedsExplicitDefault) {
  EXPECT_THROW(parse_time_ns("10", "--L"), llamp::Error);
  EXPECT_DOUBLE_EQ(parse_time_ns("10", "LLAMP_DELTA_L", "us"), 10000.0);
}

TEST(Units, ErrorsNameTheFlag) {
  try {
    parse_time_ns("3parsecs", "--L");
    FAIL();
  } catch (const llamp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("--L"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("parsecs"), std::string::npos);
  }
  EXPECT_THROW(parse_time_ns("-3us", "--L"), llamp::Error);
  EXPECT_THROW(parse_time_ns("abc", "--L"), llamp::Error);
}

TEST(Units, Sizes) {
  EXPECT_EQ(parse_size_bytes("256KiB", "--S"), 262144u);
  EXPECT_EQ(parse_size_bytes("64KB", "--S"), 64000u);
  EXPECT_EQ(parse_size_bytes("1MiB", "--S"), 1048576u);
  EXPECT_EQ(parse_size_bytes("17B", "--S"), 17u);
  EXPECT_THROW(parse_size_bytes("0.5B", "--S"), llamp::Error);
  EXPECT_THROW(parse_size_bytes("12", "--S"), llamp::Error);
}
