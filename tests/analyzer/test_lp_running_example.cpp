// The LP route on the paper's running example (paper 000 Fig. 4/5/6, Eq. 6, Appendix D):
// c0 = 0.1 µs, c1 = 1 µs on rank 0 around a 4-byte send; c2 = 0.5 µs, recv, c3 = 1 µs on rank 1;
// o = 0, G = 5 ns/B:  T = max(L + 1.115 µs, 1.5 µs), L_c = 0.385 µs, max L with T <= 2 µs = 0.885 µs.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "llamp/analyzer/lp_model.hpp"
#include "llamp/analyzer/lp_solver.hpp"
#include "llamp/graph_io.hpp"

namespace lp = llamp::analyzer::lp;

namespace {

llamp::graph::Graph running_example() {
  return llamp::graph::read_goal(std::string(LLAMP_TEST_DATA) + "/running_example.goal");
}

llamp::LogGP example_params(double L_ns) {
  llamp::LogGP p;
  p.L_ns = L_ns;
  p.o_send_ns = p.o_recv_ns = 0;
  p.G_ns_per_byte = 5;
  p.S_bytes = std::numeric_limits<uint64_t>::max();
  return p;
}

TEST(LpRunningExample, HasTheShapeOfEquation6) {
  // Eq. 6: one decision variable y1 besides l and t (and g here), four constraints.
  const auto g = running_example();
  const lp::LpProblem problem = lp::build_lp(g, example_params(500));
  EXPECT_EQ(problem.num_cols(), 4);  // l, g, t, y1
  EXPECT_EQ(problem.num_rows(), 4);
}

TEST(LpRunningExample, RuntimeAndSensitivityMatchThePaper) {
  const auto g = running_example();
  const lp::LpProblem problem = lp::build_lp(g, example_params(500));
  lp::LpSolver solver(problem);
  const lp::LpPoint above = solver.solve_at(500);  // Fig. 5: (0.5, 1.615)
  EXPECT_NEAR(above.T, 1615, 1e-9 * 1615);
  EXPECT_NEAR(above.lambda_L, 1, 1e-9);
  EXPECT_NEAR(above.lambda_G, 3, 1e-9);  // (s-1) bytes on the critical path
  EXPECT_NEAR(above.feasible_low, 385, 1e-9 * 385);
  const lp::LpPoint below = solver.solve_at(200);
  EXPECT_NEAR(below.T, 1500, 1e-9 * 1500);
  EXPECT_NEAR(below.lambda_L, 0, 1e-9);
  EXPECT_NEAR(below.lambda_G, 0, 1e-9);
  EXPECT_NEAR(below.feasible_high, 385, 1e-9 * 385);
}

TEST(LpRunningExample, Algorithm2FindsTheCriticalLatency) {
  // Appendix D / Fig. 16: interval [0.2, 0.5] µs, one critical latency at 0.385 µs.
  const auto g = running_example();
  const lp::LpProblem problem = lp::build_lp(g, example_params(500));
  lp::LpSolver solver(problem);
  const lp::CriticalLatencyWalk walk = solver.critical_latencies(200, 500, 0);
  ASSERT_EQ(walk.critical.size(), 1u);
  EXPECT_NEAR(walk.critical[0].L, 385, 1e-9 * 385);
  EXPECT_NEAR(walk.critical[0].lambda_below, 0, 1e-9);
  EXPECT_NEAR(walk.critical[0].lambda_above, 1, 1e-9);
  EXPECT_EQ(walk.solves.size(), 2u);  // "after two iterations"
  // A step wider than the interval still finds it: the range of the first basis ends there.
  const lp::CriticalLatencyWalk coarse = solver.critical_latencies(200, 500, 1000);
  ASSERT_EQ(coarse.critical.size(), 1u);
  EXPECT_NEAR(coarse.critical[0].L, 385, 1e-9 * 385);
}

TEST(LpRunningExample, ToleranceLpMatchesFigure6) {
  const auto g = running_example();
  const lp::LpProblem problem = lp::build_lp(g, example_params(500));
  lp::LpSolver solver(problem);
  const auto max_L = solver.max_latency(2000, 0);
  ASSERT_TRUE(max_L.has_value());
  EXPECT_NEAR(*max_L, 885, 1e-9 * 885);
  // Below T(0) = 1.5 µs no latency fits: a clear error, not a number.
  EXPECT_THROW(solver.max_latency(1400, 0), llamp::Error);
}

TEST(LpRunningExample, GraphWithoutMessagesToleratesAnyLatency) {
  const auto g =
      llamp::graph::parse_goal("num_ranks 1\nrank 0 {\n a: calc 10\n b: calc 20\n b requires a\n}\n", "calc_only.goal");
  const lp::LpProblem problem = lp::build_lp(g, example_params(1000));
  lp::LpSolver solver(problem);
  const lp::LpPoint pt = solver.solve_at(1000);
  EXPECT_NEAR(pt.T, 30, 1e-12);
  EXPECT_EQ(pt.lambda_L, 0);
  EXPECT_FALSE(solver.max_latency(100, 0).has_value());
}

}  // namespace
