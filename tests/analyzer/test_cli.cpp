// `analyze` end to end through the CLI (the driver registers the same subcommand as `llamp`).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "../scratch_dir.hpp"

namespace fs = std::filesystem;

namespace {
struct CliRun {
  int status;
  std::string out;
};
CliRun run(const std::string& args) {
  std::string cmd = std::string(LLAMP_ANALYZE_DRIVER) + " analyze " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int st = pclose(p);
  return {WEXITSTATUS(st), out};
}
const std::string kExample = std::string(LLAMP_TEST_DATA) + "/running_example.goal";
}  // namespace

TEST(AnalyzeCli, JsonReportOfRunningExample) {
  CliRun r = run(kExample + " --L 0.5us --o 0ns --G 5ns --S inf --json -");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["runtime_ns"].get<double>(), 1615);
  EXPECT_DOUBLE_EQ(j["lambda_L"].get<double>(), 1);
  ASSERT_EQ(j["critical_latencies_ns"].size(), 1u);
  EXPECT_NEAR(j["critical_latencies_ns"][0].get<double>(), 385, 1e-9);
  EXPECT_EQ(j["tolerance"].size(), 3u);
}

// A fresh, empty scratch directory for one test (tests/scratch_dir.hpp removes it at exit).
struct ScratchDir {
  fs::path path = llamp::test::scratch_dir("analyze-cli");
};

TEST(AnalyzeCli, ParamsFileFlagsOverrideAndTextSummary) {
  ScratchDir scratch;
  const fs::path& dir = scratch.path;
  auto params = dir / "p.json";
  std::ofstream(params)
      << R"({"format":"llamp-loggp","version":1,"L_ns":9000,"o_ns":0,"g_ns":0,"G_ns_per_byte":5,"S_bytes":1000000})";
  CliRun r = run(kExample + " --params " + params.string() + " --L 500ns --csv " + (dir / "c.csv").string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("T = 1.615 µs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("critical latencies"), std::string::npos);
  std::ifstream csv(dir / "c.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "L_ns,delta_L_ns,T_ns,lambda_L,rho_L");
}

TEST(AnalyzeCli, ClearErrors) {
  CliRun r = run(kExample + " --L 3 --o 0ns --G 5ns --S inf");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("--L"), std::string::npos) << r.out;
  r = run(kExample + " --L 3us --G 5ns --S inf");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("parameter o is missing"), std::string::npos) << r.out;
  ScratchDir scratch;
  auto bad = scratch.path / "llamp-cli-bad.goal";
  std::ofstream(bad) << "num_ranks 1\nrank 0 {\n  calc x\n}\n";
  r = run(bad.string() + " --L 3us --o 0ns --G 5ns --S inf");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("llamp-cli-bad.goal:3:"), std::string::npos) << r.out;
}

TEST(AnalyzeCli, PlotWritesPng) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  ScratchDir scratch;
  auto png = scratch.path / "plot.png";
  auto measured = scratch.path / "measured.csv";
  std::ofstream(measured) << "delta_L_ns,T_ns\n0,1620\n1000,2600\n";
  CliRun r =
      run(kExample + " --L 0.5us --o 0ns --G 5ns --S inf --plot " + png.string() + " --measured " + measured.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(fs::exists(png));
  EXPECT_GT(fs::file_size(png), 1000u);
  EXPECT_NE(r.out.find("RRMSE"), std::string::npos);
}
