// The LP route (Clp) and the native engine compute the same model: T, λ_L, λ_G, critical
// latencies and tolerance agree to 1e-9 relative on hand-made graphs (eager, rendezvous,
// nonblocking) and on random graphs from the builder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "llamp/analyzer/curve.hpp"
#include "llamp/analyzer/engine.hpp"
#include "llamp/analyzer/lp_model.hpp"
#include "llamp/analyzer/lp_solver.hpp"
#include "llamp/graph_io.hpp"
#include "test_lp_graphs.hpp"

namespace lp = llamp::analyzer::lp;
using llamp::analyzer::Engine;
using llamp::analyzer::Sweep;

namespace {

constexpr double kRel = 1e-9;

void expect_close(double expected, double actual, const std::string& what) {
  EXPECT_NEAR(actual, expected, kRel * std::max(1.0, std::abs(expected))) << what;
}

llamp::LogGP params(double L, double o, double G, uint64_t S, double O = 0, double o_rndv = 0) {
  llamp::LogGP p;
  p.o_rndv_ns = o_rndv;
  p.L_ns = L;
  p.o_send_ns = o;
  p.o_recv_ns = o * 1.25;  // distinct send/receive overheads catch a swapped term
  p.G_ns_per_byte = G;
  p.O_ns_per_byte = O;
  p.S_bytes = S;
  return p;
}

// Compares both routes at several L (λ_L), at the base L for λ_G, the critical latencies on
// [L_min, L_max] and the tolerance for a 10 % and a 50 % runtime budget.
void expect_agreement(const llamp::graph::Graph& g, const llamp::LogGP& p, double L_min, double L_max,
                      const std::string& name, lp::LpStart start = lp::LpStart::CrashBasis) {
  SCOPED_TRACE(name);
  Engine native(g, llamp::analyzer::homogeneous_model(p));
  const lp::LpProblem problem = lp::build_lp(g, p);
  lp::LpSolver solver(problem, start);
  // Sample latencies away from integers: costs are whole ns, so breakpoints of T rarely fall there.
  for (double L : {L_min, L_min + 0.3183 * (L_max - L_min), L_min + 0.7071 * (L_max - L_min), L_max}) {
    const auto n = native.at_L(L);
    const lp::LpPoint x = solver.solve_at(L);
    expect_close(n.T, x.T, "T at L = " + std::to_string(L));
    EXPECT_NEAR(x.lambda_L, n.slope, 1e-6) << "λ_L at L = " << L;
  }
  {
    const lp::LpPoint x = solver.solve_at(p.L_ns);
    const auto n = native.at_G(p.G_ns_per_byte);
    expect_close(n.T, x.T, "T at base");
    EXPECT_NEAR(x.lambda_G, n.slope, 1e-6 * std::max(1.0, n.slope)) << "λ_G";
  }
  const auto curve = llamp::analyzer::exact_curve(native, Sweep::L, L_min, L_max);
  const lp::CriticalLatencyWalk walk = solver.critical_latencies(L_min, L_max, 0);
  std::vector<double> lp_critical;
  for (const auto& c : walk.critical)
    if (c.L > L_min && c.L < L_max) lp_critical.push_back(c.L);
  ASSERT_EQ(lp_critical.size(), curve.breakpoints.size()) << "critical latencies";
  for (size_t i = 0; i < lp_critical.size(); ++i)
    expect_close(curve.breakpoints[i], lp_critical[i], "critical latency " + std::to_string(i));
  const double T0 = native.at_L(p.L_ns).T;
  for (double budget : {1.1, 1.5}) {
    const auto n = llamp::analyzer::max_x_within(native, Sweep::L, p.L_ns, budget * T0);
    const auto x = solver.max_latency(budget * T0, p.L_ns);
    ASSERT_EQ(n.has_value(), x.has_value()) << "tolerance bounded?";
    if (n) expect_close(*n, *x, "tolerance at " + std::to_string(budget));
  }
}

TEST(LpAgreement, RunningExampleEagerAndRendezvous) {
  const auto g = llamp::graph::read_goal(std::string(LLAMP_TEST_DATA) + "/running_example.goal");
  expect_agreement(g, params(500, 0, 5, std::numeric_limits<uint64_t>::max()), 200, 500, "eager");
  expect_agreement(g, params(500, 0, 5, 2), 10, 1000, "rendezvous");
  expect_agreement(g, params(500, 30, 5, 2, 0.5), 10, 1000, "rendezvous with o and O");
  expect_agreement(g, params(500, 30, 5, 2, 0.5, 700), 10, 1000, "rendezvous with o, O and o_rndv");
}

TEST(LpAgreement, RendezvousRunningExampleByHand) {
  // S = 2 B makes the 4-byte message rendezvous: h = max(0.5 µs, 0.1 µs + L),
  // T = h + 3L + 15 ns + 1 µs: slope 3 below L = 0.4 µs, 4 above.
  const auto g = llamp::graph::read_goal(std::string(LLAMP_TEST_DATA) + "/running_example.goal");
  const lp::LpProblem problem = lp::build_lp(g, params(500, 0, 5, 2));
  lp::LpSolver solver(problem);
  const lp::LpPoint hi = solver.solve_at(500);
  EXPECT_NEAR(hi.T, 3115, 1e-9 * 3115);
  EXPECT_NEAR(hi.lambda_L, 4, 1e-9);
  const lp::LpPoint lo = solver.solve_at(100);
  EXPECT_NEAR(lo.T, 1815, 1e-9 * 1815);
  EXPECT_NEAR(lo.lambda_L, 3, 1e-9);
  const auto walk = solver.critical_latencies(10, 1000, 0);
  ASSERT_EQ(walk.critical.size(), 1u);
  EXPECT_NEAR(walk.critical[0].L, 400, 1e-9 * 400);
}

TEST(LpAgreement, NonblockingExchangeWithWildcards) {
  // Two ranks exchange with Isend/Irecv + wait while computing; one 1 KiB message per direction.
  const auto g = llamp::graph::parse_goal(R"(num_ranks 2
rank 0 {
  a: calc 300
  s: send 1024b to 1 tag 7
  r: recv 1024b from -1 tag -1
  c: calc 2000
  w: calc 0
  s requires a
  r requires a
  c irequires s
  c irequires r
  w requires c
  w requires s
  w requires r
}
rank 1 {
  a: calc 1200
  s: send 1024b to 0 tag 3
  r: recv 1024b from 0 tag 7
  c: calc 800
  w: calc 0
  s requires a
  r requires a
  c irequires s
  c irequires r
  w requires c
  w requires s
  w requires r
}
)",
                                          "exchange.goal");
  expect_agreement(g, params(1000, 100, 0.5, std::numeric_limits<uint64_t>::max()), 0, 10000, "eager");
  expect_agreement(g, params(1000, 100, 0.5, 512), 0, 10000, "rendezvous");
}

class LpRandomAgreement : public ::testing::TestWithParam<uint64_t> {};

TEST_P(LpRandomAgreement, NativeAndClpAgree) {
  const uint64_t seed = GetParam();
  llamp::lp_test::RandomGraphSpec spec;
  spec.ranks = 2 + static_cast<uint32_t>(seed % 5);
  spec.steps = 60 + static_cast<uint32_t>(seed * 37 % 300);
  const auto g = llamp::lp_test::random_graph(spec, seed);
  std::mt19937_64 rng(seed * 7919);
  const double L = std::uniform_real_distribution<double>(300, 5000)(rng);
  const double G = std::uniform_real_distribution<double>(0.01, 2)(rng);
  const double o = std::uniform_real_distribution<double>(0, 500)(rng);
  expect_agreement(g, params(L, o, G, std::numeric_limits<uint64_t>::max()), 0.5, 20000.5,
                   "eager, seed " + std::to_string(seed));
  expect_agreement(g, params(L, o, G, 4096, 0.01, 1900), 0.5, 20000.5, "rendezvous, seed " + std::to_string(seed));
  // Clp on its own (no crash basis): presolve + dual simplex, and plain dual simplex.
  if (seed % 5 == 0) {
    expect_agreement(g, params(L, o, G, 4096, 0.01), 0.5, 20000.5, "presolve, seed " + std::to_string(seed),
                     lp::LpStart::Presolve);
    expect_agreement(g, params(L, o, G, 4096, 0.01), 0.5, 20000.5, "dual simplex, seed " + std::to_string(seed),
                     lp::LpStart::DualSimplex);
  }
}

TEST(LpAgreement, TwoLevelNetworkModel) {
  // Heterogeneous LogGP (Appendix I): intra-node messages get their own L and G, l is ΔL.
  llamp::lp_test::RandomGraphSpec spec;
  spec.ranks = 4;
  spec.steps = 250;
  const auto g = llamp::lp_test::random_graph(spec, 77);
  const llamp::LogGP p = params(2000.25, 150, 0.3, 4096, 0.02);
  const auto model = llamp::analyzer::two_level_model(p, {0, 0, 1, 1}, 400.5, 0.05, p.L_ns, p.G_ns_per_byte);
  Engine native(g, model);
  const lp::LpProblem problem = lp::build_lp(g, model, lp::LpBounds{0, 0});
  lp::LpSolver solver(problem);
  for (double dL : {0.0, 333.3, 5000.7}) {
    const auto n = native.evaluate(dL, 0, Sweep::L);
    const lp::LpPoint x = solver.solve_at(dL);
    expect_close(n.T, x.T, "T at ΔL = " + std::to_string(dL));
    EXPECT_NEAR(x.lambda_L, n.slope, 1e-6);
  }
  const auto curve = llamp::analyzer::exact_curve(native, Sweep::L, 0, 20000);
  const auto walk = solver.critical_latencies(0, 20000, 0);
  std::vector<double> lp_critical;
  for (const auto& c : walk.critical)
    if (c.L > 0 && c.L < 20000) lp_critical.push_back(c.L);
  ASSERT_EQ(lp_critical.size(), curve.breakpoints.size());
  for (size_t i = 0; i < lp_critical.size(); ++i) expect_close(curve.breakpoints[i], lp_critical[i], "critical");
}

INSTANTIATE_TEST_SUITE_P(Seeds, LpRandomAgreement, ::testing::Range<uint64_t>(1, 21));

}  // namespace
