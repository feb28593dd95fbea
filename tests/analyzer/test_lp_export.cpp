// The exported LP (CPLEX LP and MPS) is the model the LP route solves: Clp reading the file back
// finds the same optimum T, and the reduced cost of l is λ_L. Also `llamp lp` / `llamp analyze
// --solver clp` from the command line.
#include <gtest/gtest.h>

#include <ClpSimplex.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "llamp/analyzer/lp_export.hpp"
#include "llamp/analyzer/lp_model.hpp"
#include "llamp/analyzer/lp_solver.hpp"
#include "llamp/error.hpp"
#include "llamp/graph_io.hpp"
#include "../scratch_dir.hpp"
#include "test_lp_graphs.hpp"

namespace lp = llamp::analyzer::lp;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir() { return llamp::test::scratch_dir("lp"); }

llamp::LogGP params(double L, double G, uint64_t S) {
  llamp::LogGP p;
  p.L_ns = L;
  p.o_send_ns = 200;
  p.o_recv_ns = 250;
  p.G_ns_per_byte = G;
  p.S_bytes = S;
  return p;
}

int column_named(const ClpSimplex& m, const std::string& name) {
  for (int c = 0; c < m.numberColumns(); ++c)
    if (m.getColumnName(c) == name) return c;
  return -1;
}

TEST(LpExport, FilesReadBackGiveTheSameOptimum) {
  const fs::path dir = temp_dir();
  for (uint64_t seed : {3u, 11u}) {
    llamp::lp_test::RandomGraphSpec spec;
    spec.ranks = 4;
    spec.steps = 300;
    const auto g = llamp::lp_test::random_graph(spec, seed);
    const llamp::LogGP p = params(1234.567, 0.37, 4096);
    const lp::LpProblem problem = lp::build_lp(g, p);
    lp::LpSolver solver(problem);
    const lp::LpPoint direct = solver.solve_at(p.L_ns);
    for (const char* ext : {".lp", ".mps"}) {
      SCOPED_TRACE(std::string(ext) + " seed " + std::to_string(seed));
      const std::string path = (dir / ("graph" + std::to_string(seed) + ext)).string();
      lp::write_lp_file(g, problem, path);
      ClpSimplex m;
      m.setLogLevel(0);
      const int rc = std::string(ext) == ".lp" ? m.readLp(path.c_str()) : m.readMps(path.c_str(), true);
      ASSERT_EQ(rc, 0);
      EXPECT_EQ(m.numberRows(), problem.num_rows());
      EXPECT_EQ(m.numberColumns(), problem.num_cols());
      m.dual();
      ASSERT_EQ(m.status(), 0);
      EXPECT_NEAR(m.objectiveValue(), direct.T, 1e-9 * direct.T);
      const int l = column_named(m, "l");
      ASSERT_GE(l, 0);
      EXPECT_NEAR(m.dualColumnSolution()[l], direct.lambda_L, 1e-6);
    }
  }
}

TEST(LpExport, RunningExampleIsEquation6) {
  // The CPLEX LP text of the running example has exactly the four constraints of Eq. 6.
  const fs::path dir = temp_dir();
  const auto g = llamp::graph::read_goal(std::string(LLAMP_TEST_DATA) + "/running_example.goal");
  llamp::LogGP p = params(500, 5, std::numeric_limits<uint64_t>::max());
  p.o_send_ns = p.o_recv_ns = 0;
  const std::string path = (dir / "example.lp").string();
  lp::write_lp_file(g, lp::build_lp(g, p), path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  EXPECT_NE(s.find("y_r1_v1_end >= 500"), std::string::npos) << s;             // y1 >= 0.5 µs
  EXPECT_NE(s.find("- l -3 g + y_r1_v1_end >= 100"), std::string::npos) << s;  // y1 >= l + 0.1 + 3G
  EXPECT_NE(s.find("t >= 1100"), std::string::npos) << s;                      // t >= 1.1 µs
  EXPECT_NE(s.find("t - y_r1_v1_end >= 1000"), std::string::npos) << s;        // t >= y1 + 1 µs
  EXPECT_NE(s.find("500 <= l"), std::string::npos) << s;
}

TEST(LpExport, BadOutputNamesAreClearErrors) {
  const auto g = llamp::graph::read_goal(std::string(LLAMP_TEST_DATA) + "/running_example.goal");
  const lp::LpProblem problem = lp::build_lp(g, params(500, 5, 1 << 20));
  try {
    lp::write_lp_file(g, problem, "/tmp/model.txt");
    FAIL() << "no error for a .txt name";
  } catch (const llamp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/tmp/model.txt"), std::string::npos);
  }
  EXPECT_THROW(lp::write_lp_file(g, problem, "/nonexistent-dir/model.lp"), llamp::Error);
}

// Runs the analyzer CLI (llamp-analyze-driver: the subcommands llamp registers); returns its
// exit status, with stdout and stderr in `out`.
int run_llamp(const std::string& args, std::string& out) {
  const std::string cmd = std::string(LLAMP_ANALYZE_DRIVER) + " " + args + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return -1;
  char buf[4096];
  out.clear();
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  const int status = pclose(f);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(LpCli, LpSubcommandWritesBothFormats) {
  const fs::path dir = temp_dir();
  const std::string graph = std::string(LLAMP_TEST_DATA) + "/running_example.goal";
  std::string out;
  for (const char* name : {"a.lp", "a.mps"}) {
    const std::string path = (dir / name).string();
    ASSERT_EQ(run_llamp("lp " + graph + " -o " + path + " --L 500ns --o 0ns --G 5ns --S inf", out), 0) << out;
    ClpSimplex m;
    m.setLogLevel(0);
    ASSERT_EQ(fs::path(path).extension() == ".lp" ? m.readLp(path.c_str()) : m.readMps(path.c_str(), true), 0);
    m.dual();
    EXPECT_NEAR(m.objectiveValue(), 1615, 1e-9 * 1615);
  }
  EXPECT_NE(run_llamp("lp " + graph + " -o " + (dir / "a.txt").string() + " --L 1us --o 0ns --G 5ns --S inf", out), 0);
  EXPECT_NE(out.find("a.txt"), std::string::npos) << out;
  EXPECT_NE(run_llamp("lp " + graph + " -o " + (dir / "b.lp").string() + " --o 0ns --G 5ns --S inf", out), 0);
  EXPECT_NE(run_llamp("lp /nonexistent.goal -o " + (dir / "c.lp").string() + " --L 1us --o 0ns --G 5ns --S inf", out),
            0);
  EXPECT_NE(out.find("/nonexistent.goal"), std::string::npos) << out;
}

TEST(LpCli, AnalyzeWithClpReportsTheNativeNumbers) {
  const fs::path dir = temp_dir();
  const std::string graph = std::string(LLAMP_TEST_DATA) + "/running_example.goal";
  const std::string common = " --L 500ns --o 0ns --G 5ns --S inf --range 0:1us --tolerance 0,33.3 --no-path --json ";
  std::string out;
  ASSERT_EQ(run_llamp("analyze " + graph + common + (dir / "n.json").string(), out), 0) << out;
  ASSERT_EQ(run_llamp("analyze " + graph + common + (dir / "c.json").string() + " --solver clp", out), 0) << out;
  auto read = [](const fs::path& p) { return nlohmann::json::parse(std::ifstream(p)); };
  const nlohmann::json n = read(dir / "n.json"), c = read(dir / "c.json");
  for (const char* key : {"runtime_ns", "lambda_L", "rho_L", "lambda_G", "rho_G"})
    EXPECT_NEAR(c[key].get<double>(), n[key].get<double>(), 1e-9 * std::max(1.0, std::abs(n[key].get<double>())))
        << key;
  ASSERT_EQ(c["critical_latencies_ns"].size(), 1u);
  EXPECT_NEAR(c["critical_latencies_ns"][0].get<double>(), 385, 1e-9 * 385);
  ASSERT_EQ(c["tolerance"].size(), n["tolerance"].size());
  for (size_t i = 0; i < n["tolerance"].size(); ++i)
    for (const char* key : {"max_L_ns", "max_G_ns_per_byte"})
      EXPECT_NEAR(c["tolerance"][i][key].get<double>(), n["tolerance"][i][key].get<double>(),
                  1e-9 * n["tolerance"][i][key].get<double>())
          << key;
  // Same keys in both reports (the LP route has no critical-path walk; --no-path drops it in both).
  for (auto it = n.begin(); it != n.end(); ++it) EXPECT_TRUE(c.contains(it.key())) << it.key();
  EXPECT_NE(run_llamp("analyze " + graph + common + (dir / "x.json").string() + " --solver gurobi", out), 0);
}

}  // namespace
