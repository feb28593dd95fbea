// LogGP parameter file and flags with units.
#include <gtest/gtest.h>

#include "llamp/error.hpp"
#include "llamp/loggp_params.hpp"

using namespace llamp;

namespace {
std::string error_of(const std::string& json) {
  try {
    parse_loggp_params(json, "p.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(LogGPParams, ParsesTheSchema) {
  LogGPParams p = parse_loggp_params(R"({"format":"llamp-loggp","version":1,"L_ns":3000,"o_ns":5000,"g_ns":0,
    "G_ns_per_byte":0.018,"S_bytes":262144,"o_recv_ns":4000,"measurement":{"tool":"x","runs":[1,2]}})",
                                     "p.json");
  LogGP r = resolve(p);
  EXPECT_DOUBLE_EQ(r.L_ns, 3000);
  EXPECT_DOUBLE_EQ(r.o_send_ns, 5000);
  EXPECT_DOUBLE_EQ(r.o_recv_ns, 4000);
  EXPECT_DOUBLE_EQ(r.G_ns_per_byte, 0.018);
  EXPECT_EQ(r.S_bytes, 262144u);
  EXPECT_EQ(p.measurement["tool"], "x");
  EXPECT_EQ(to_json(p)["S_bytes"], 262144);
}

// The optional times (0 without them): each read from its key, kept by to_json, set by its flag,
// and checked like the others.
TEST(LogGPParams, OptionalTimesAreReadKeptAndSetByFlag) {
  struct Optional {
    const char* key;
    const char* flag;
    double LogGP::*member;
  };
  const Optional optionals[] = {{"o_coll_ns", "--o-coll", &LogGP::o_coll_ns},
                                {"o_probe_ns", "o_probe", &LogGP::o_probe_ns},
                                {"o_rndv_ns", "--o-rndv", &LogGP::o_rndv_ns},
                                {"o_rndv_cold_ns", "--o-rndv-cold", &LogGP::o_rndv_cold_ns}};
  const std::string base = R"({"format":"llamp-loggp","version":1,"L_ns":3000,"o_ns":5000,"g_ns":0,
    "G_ns_per_byte":0.018,"S_bytes":262144)";
  for (const Optional& o : optionals) {
    SCOPED_TRACE(o.key);
    EXPECT_DOUBLE_EQ(resolve(parse_loggp_params(base + "}", "p.json")).*o.member, 0);
    LogGPParams p = parse_loggp_params(base + ",\"" + o.key + "\":420}", "p.json");
    EXPECT_DOUBLE_EQ(resolve(p).*o.member, 420);
    EXPECT_EQ(to_json(p)[o.key], 420);
    set_loggp_flag(p, o.flag, "0.5us");
    EXPECT_DOUBLE_EQ(resolve(p).*o.member, 500);
    EXPECT_THROW(parse_loggp_params(base + ",\"" + o.key + "\":-1}", "p.json"), llamp::Error);
  }
}

TEST(LogGPParams, RejectsBadFilesWithTheKey) {
  EXPECT_NE(error_of("{").find("p.json: offset"), std::string::npos);
  EXPECT_NE(error_of(R"({"format":"other","version":1})").find("\"format\""), std::string::npos);
  EXPECT_NE(error_of(R"({"format":"llamp-loggp","version":2})").find("version"), std::string::npos);
  EXPECT_NE(error_of(R"({"format":"llamp-loggp","version":1,"L_ns":1,"o_ns":1,"g_ns":0,"G_ns_per_byte":0})")
                .find("\"S_bytes\" is missing"),
            std::string::npos);
  EXPECT_NE(
      error_of(R"({"format":"llamp-loggp","version":1,"L_ns":-1,"o_ns":1,"g_ns":0,"G_ns_per_byte":0,"S_bytes":1})")
          .find("\"L_ns\""),
      std::string::npos);
  EXPECT_NE(
      error_of(R"({"format":"llamp-loggp","version":1,"L_ns":1,"o_ns":1,"g_ns":0,"G_ns_per_byte":0,"S_bytes":1.5})")
          .find("whole number"),
      std::string::npos);
  EXPECT_NE(
      error_of(
          R"({"format":"llamp-loggp","version":1,"L_ns":1,"o_ns":1,"g_ns":0,"G_ns_per_byte":0,"S_bytes":1,"Lns":3})")
          .find("unknown key \"Lns\""),
      std::string::npos);
}

TEST(LogGPParams, FlagsNeedUnitsAndOverride) {
  LogGPParams p;
  set_loggp_flag(p, "--L", "3us");
  set_loggp_flag(p, "--o", "5us");
  set_loggp_flag(p, "--G", "0.018ns");
  set_loggp_flag(p, "--S", "256KiB");
  LogGP r = resolve(p);
  EXPECT_DOUBLE_EQ(r.L_ns, 3000);
  EXPECT_DOUBLE_EQ(r.o_send_ns, 5000);
  EXPECT_DOUBLE_EQ(r.G_ns_per_byte, 0.018);
  EXPECT_EQ(r.S_bytes, 262144u);
  set_loggp_flag(p, "L", "1ms");
  EXPECT_DOUBLE_EQ(resolve(p).L_ns, 1e6);
  set_loggp_flag(p, "S", "inf");
  EXPECT_EQ(resolve(p).S_bytes, UINT64_MAX);
  try {
    set_loggp_flag(p, "--L", "3");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--L"), std::string::npos);
  }
  EXPECT_THROW(set_loggp_flag(p, "--o", "-1us"), Error);
  EXPECT_THROW(set_loggp_flag(p, "--S", "3"), Error);
  EXPECT_THROW(set_loggp_flag(p, "--Q", "3us"), Error);
  LogGPParams missing;
  set_loggp_flag(missing, "--L", "1us");
  try {
    resolve(missing);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--o"), std::string::npos);
  }
}
