// The whole pipeline on every bundled mini-app: a real MPICH run traced with the LD_PRELOAD
// tracer, `llamp schedgen` to GOAL text and to the binary graph, then `llamp analyze` with the
// native engine on both files and with the LP route (COIN-OR Clp) on the GOAL file.
//
// What a user relies on (issue 4, "native and Clp agree on every bundled graph"):
//  - the native engine and the LP give the same runtime, λ_L, λ_G, critical latencies and
//    tolerances (1e-9 relative) on graphs of real applications, not only on hand-made ones;
//  - the .goal and the .lgr of one trace give identical native reports.
// The LogGPS parameters put the rendezvous threshold (1 KiB) below some of the apps' messages, so
// both protocols are exercised.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct AppCase {
  std::string app, args;
  int np;
};
void PrintTo(const AppCase& c, std::ostream* os) { *os << c.app << " -n " << c.np << " " << c.args; }

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs `cmd` with its output in `log`; returns whether it exited 0.
bool run(const std::string& cmd, const fs::path& log) {
  const std::string full = cmd + " > " + quote(log.string()) + " 2>&1";
  const int status = std::system(full.c_str());
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

// Equal to 1e-9 relative (absolute 1e-9 near zero, where relative means nothing).
::testing::AssertionResult agree(const char* what, const char* /*lp_expr*/, const json& native, const json& lp) {
  if (native.is_null() || lp.is_null()) {
    if (native.is_null() && lp.is_null()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << what << ": native " << native << ", clp " << lp;
  }
  const double a = native.get<double>(), b = lp.get<double>();
  if (std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)})) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": native " << a << ", clp " << b << " (difference " << a - b << ")";
}

// A critical latency is where two lines of T(L) cross, x = (C2 − C1)/(λ1 − λ2), with intercepts C
// of T's size; in double precision x is only known to about ulp(T)/(λ1 − λ2). A traced run's T is
// ~50 ms (mostly the tracer's start-up, the first calc), so a 30 ns breakpoint carries ~1e-8 ns of
// rounding in either engine, and Clp's own T differs from the native one by ~1e-13 relative
// (measured: up to 1.5e-7 ns apart at Δλ = 2). Agreement to 1e-9 relative therefore means: T at
// the two estimates differs by at most 1e-9·T, i.e. |Δx|·Δλ ≤ 1e-9·T with Δλ ≥ 1 (λ_L counts
// latency terms): |Δx| ≤ 1e-9·max(T, |x|).
::testing::AssertionResult same_breakpoint(const char* what, const char*, const char*, const json& native,
                                           const json& lp, double T) {
  const double a = native.get<double>(), b = lp.get<double>();
  if (std::abs(a - b) <= 1e-9 * std::max({T, std::abs(a), std::abs(b)})) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": native " << a << ", clp " << b << " (difference " << a - b
                                       << ", T = " << T << ")";
}

// The report without what legitimately differs between two runs on two files of one graph.
json comparable(json j) {
  j.erase("seconds");
  j["graph"].erase("source");
  return j;
}

const char* kModel = "--L 1us --o 300ns --G 0.1ns --S 1KiB --range 0:20us --tolerance 1,2,5";

class Pipeline : public ::testing::TestWithParam<AppCase> {};

TEST_P(Pipeline, NativeAndClpAgreeOnTheTracedGraph) {
  const AppCase& c = GetParam();
  const std::string app = std::string(LLAMP_APPS_DIR) + "/app_" + c.app;
  ASSERT_TRUE(fs::exists(app)) << app << " not built";
  const fs::path work = fs::path(LLAMP_TEST_SCRATCH) / (c.app + "_np" + std::to_string(c.np));
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string llamp = quote(LLAMP_BIN);
  const fs::path trace = work / "trace", goal = work / "app.goal", lgr = work / "app.lgr";

  ASSERT_TRUE(run("cd " + quote(work.string()) + " && timeout 240 " + LLAMP_MPIEXEC + " -n " + std::to_string(c.np) +
                      " -genv LD_PRELOAD " + quote(LLAMP_TRACER_LIB) + " -genv LLAMP_TRACE_DIR " +
                      quote(trace.string()) + " " + quote(app) + " " + c.args,
                  work / "run.log"))
      << slurp(work / "run.log");
  for (const fs::path& out : {goal, lgr})
    ASSERT_TRUE(run(llamp + " schedgen " + quote(trace.string()) + " -o " + quote(out.string()), work / "schedgen.log"))
        << slurp(work / "schedgen.log");

  struct Report {
    fs::path graph;
    const char* solver;
    fs::path json;
  };
  const std::vector<Report> reports = {{goal, "native", work / "native_goal.json"},
                                       {lgr, "native", work / "native_lgr.json"},
                                       {goal, "clp", work / "clp_goal.json"}};
  for (const Report& r : reports)
    ASSERT_TRUE(run(llamp + " analyze " + quote(r.graph.string()) + " " + kModel + " --solver " + r.solver +
                        " --json " + quote(r.json.string()),
                    work / "analyze.log"))
        << slurp(work / "analyze.log");
  const json native = read_json(reports[0].json), native_lgr = read_json(reports[1].json),
             lp = read_json(reports[2].json);

  // The graph is a real one: messages, and a runtime.
  EXPECT_GT(native["graph"]["messages"].get<uint64_t>(), 0u);
  EXPECT_GT(native["runtime_ns"].get<double>(), 0.0);

  // .goal and .lgr: the same graph, so the same native report, number for number.
  EXPECT_EQ(comparable(native), comparable(native_lgr));

  // Native engine against the LP.
  EXPECT_PRED_FORMAT2(agree, native["runtime_ns"], lp["runtime_ns"]);
  EXPECT_PRED_FORMAT2(agree, native["lambda_L"], lp["lambda_L"]);
  EXPECT_PRED_FORMAT2(agree, native["lambda_G"], lp["lambda_G"]);
  EXPECT_PRED_FORMAT2(agree, native["rho_L"], lp["rho_L"]);
  const json& cl_native = native["critical_latencies_ns"];
  const json& cl_lp = lp["critical_latencies_ns"];
  ASSERT_EQ(cl_native.size(), cl_lp.size()) << "native " << cl_native << "\nclp    " << cl_lp;
  const double T = native["runtime_ns"].get<double>();
  for (size_t i = 0; i < cl_native.size(); ++i)
    EXPECT_PRED_FORMAT3(same_breakpoint, cl_native[i], cl_lp[i], T) << "breakpoint " << i;
  // The curve between them: the same segments, slopes and runtimes.
  const json &curve_native = native["curve"], &curve_lp = lp["curve"];
  ASSERT_EQ(curve_native.size(), curve_lp.size());
  ASSERT_EQ(curve_native.size(), cl_native.size() + 1);
  for (size_t i = 0; i < curve_native.size(); ++i) {
    const json &sn = curve_native[i], &sl = curve_lp[i];
    SCOPED_TRACE("curve segment " + std::to_string(i));
    EXPECT_PRED_FORMAT2(agree, sn["lambda_L"], sl["lambda_L"]);
    EXPECT_PRED_FORMAT2(agree, sn["T_begin_ns"], sl["T_begin_ns"]);
    EXPECT_PRED_FORMAT2(agree, sn["T_end_ns"], sl["T_end_ns"]);
  }
  ASSERT_EQ(native["tolerance"].size(), 3u);
  ASSERT_EQ(lp["tolerance"].size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const json &tn = native["tolerance"][i], &tl = lp["tolerance"][i];
    SCOPED_TRACE(tn["percent"].dump() + " % tolerance");
    EXPECT_PRED_FORMAT2(agree, tn["runtime_bound_ns"], tl["runtime_bound_ns"]);
    EXPECT_PRED_FORMAT2(agree, tn["max_L_ns"], tl["max_L_ns"]);
    EXPECT_PRED_FORMAT2(agree, tn["max_G_ns_per_byte"], tl["max_G_ns_per_byte"]);
  }
}

// Small arguments (each run well under a second); two apps also at 4 ranks. threads runs two
// threads per rank (MPI_THREAD_MULTIPLE): schedgen gives each thread its own chain, so the graph
// is acyclic whatever the threads' interleaving (one merged chain per rank used to order one
// thread's Isend after the other's Wait and, about one run in three, close a cycle across ranks).
std::vector<AppCase> cases() {
  const std::vector<std::pair<std::string, std::string>> apps = {
      {"hello", ""},          {"pingpong", "10 4096"},   {"halo2d", "20 32 4 5"},
      {"cg", "10 1000 4"},    {"ring", "3 64 2"},        {"master_worker", "30 100"},
      {"subcomm", "2 8"},     {"persistent", "10 64 4"}, {"completions", "3 16 100"},
      {"threads", "10 16 2"}, {"fhalo", "20 100 2 5"},   {"nhalo", "20 32 4 5"},
      {"pcoll", "20 32 4 5"}, {"gradavg", "6 512 3 4"},  {"halo3d", "20 8 2 5"}};
  std::vector<AppCase> out;
  for (const auto& [app, args] : apps) out.push_back({app, args, 2});
  out.push_back({"halo2d", "20 32 4 5", 4});
  out.push_back({"cg", "10 1000 4", 4});
  out.push_back({"nhalo", "20 32 4 5", 4});
  out.push_back({"pcoll", "20 32 4 5", 4});
  out.push_back({"gradavg", "6 512 3 4", 4});
  return out;
}

INSTANTIATE_TEST_SUITE_P(MiniApps, Pipeline, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<AppCase>& i) {
                           return i.param.app + "_np" + std::to_string(i.param.np);
                         });

}  // namespace
