// Engine::evaluate_lanes evaluates several points in one pass; every lane must be bit-identical
// to evaluate() at its point (T and slope), on random graphs with eager and rendezvous messages,
// homogeneous and two-level models, L and G sweeps, full and partial batches. And the exact curve
// built from lanes has the same breakpoints and segments as the one built point by point.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <vector>

#include "llamp/analyzer/curve.hpp"
#include "llamp/analyzer/engine.hpp"
#include "test_lp_graphs.hpp"

using llamp::analyzer::Engine;
using llamp::analyzer::Point;
using llamp::analyzer::Sweep;

namespace {

llamp::LogGP params(uint64_t S) {
  llamp::LogGP p;
  p.L_ns = 1500;
  p.o_send_ns = 120;
  p.o_recv_ns = 150;
  p.G_ns_per_byte = 0.3;
  p.O_ns_per_byte = 0.01;
  p.S_bytes = S;
  p.o_rndv_ns = 1900;
  return p;
}

void expect_lanes_equal_points(Engine& e, Sweep sweep, const std::vector<double>& xs, const std::string& what) {
  for (size_t n = 1; n <= Engine::kLanes && n <= xs.size(); ++n) {
    std::vector<Point> lanes(n);
    e.evaluate_lanes(std::span(xs.data(), n), sweep, lanes);
    for (size_t k = 0; k < n; ++k) {
      const Point p = sweep == Sweep::L ? e.at_L(xs[k]) : e.at_G(xs[k]);
      EXPECT_EQ(lanes[k].x, xs[k]) << what;
      EXPECT_EQ(lanes[k].T, p.T) << what << ", " << n << " lanes, lane " << k << " at x = " << xs[k];
      EXPECT_EQ(lanes[k].slope, p.slope) << what << ", " << n << " lanes, lane " << k << " at x = " << xs[k];
    }
  }
}

// A random graph of 2 to 6 ranks, different for every seed.
llamp::graph::Graph random_case(uint64_t seed) {
  llamp::lp_test::RandomGraphSpec spec;
  spec.ranks = 2 + static_cast<uint32_t>(seed % 5);
  spec.steps = 80 + static_cast<uint32_t>(seed * 37 % 300);
  return llamp::lp_test::random_graph(spec, seed);
}

class EngineLanes : public ::testing::TestWithParam<uint64_t> {};

TEST_P(EngineLanes, EveryLaneEqualsTheSinglePointEvaluation) {
  const uint64_t seed = GetParam();
  const auto g = random_case(seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> L(0, 20000), G(0, 3);
  const std::vector<double> Ls{L(rng), 0, L(rng), 1500, L(rng)};
  const std::vector<double> Gs{G(rng), 0.3, G(rng), G(rng)};
  for (uint64_t S : {std::numeric_limits<uint64_t>::max(), uint64_t{4096}}) {
    const std::string name = (S == 4096 ? "rendezvous" : "eager") + std::string(", seed ") + std::to_string(seed);
    Engine e(g, llamp::analyzer::homogeneous_model(params(S)));
    expect_lanes_equal_points(e, Sweep::L, Ls, name + ", L");
    expect_lanes_equal_points(e, Sweep::G, Gs, name + ", G");
    std::vector<uint32_t> node(g.num_ranks);
    for (uint32_t r = 0; r < g.num_ranks; ++r) node[r] = r / 2;
    const llamp::LogGP p = params(S);
    Engine two(g, llamp::analyzer::two_level_model(p, node, 400.5, 0.05, p.L_ns, p.G_ns_per_byte));
    expect_lanes_equal_points(two, Sweep::L, Ls, name + ", two-level L");
  }
}

TEST_P(EngineLanes, CurveFromLanesEqualsCurveFromPoints) {
  const uint64_t seed = GetParam();
  const auto g = random_case(seed);
  for (uint64_t S : {std::numeric_limits<uint64_t>::max(), uint64_t{4096}}) {
    Engine e(g, llamp::analyzer::homogeneous_model(params(S)));
    const auto points = llamp::analyzer::exact_curve(e, Sweep::L, 0.5, 20000.5, 1, 1);
    for (unsigned threads : {1u, 2u}) {
      const auto lanes = llamp::analyzer::exact_curve(e, Sweep::L, 0.5, 20000.5, threads, Engine::kLanes);
      ASSERT_EQ(lanes.breakpoints.size(), points.breakpoints.size()) << "seed " << seed << ", threads " << threads;
      for (size_t i = 0; i < points.breakpoints.size(); ++i)
        EXPECT_NEAR(lanes.breakpoints[i], points.breakpoints[i], 1e-9 * std::max(1.0, points.breakpoints[i]));
      ASSERT_EQ(lanes.segments.size(), points.segments.size());
      for (size_t i = 0; i < points.segments.size(); ++i) {
        EXPECT_EQ(lanes.segments[i].slope, points.segments[i].slope) << "segment " << i;
        EXPECT_NEAR(lanes.segments[i].T_begin, points.segments[i].T_begin, 1e-9 * points.segments[i].T_begin);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, EngineLanes, ::testing::Range<uint64_t>(1, 13));

}  // namespace
