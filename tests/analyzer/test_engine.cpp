// The native engine on hand-computed graphs: T(L), λ_L, λ_G, critical latencies, tolerance,
// rendezvous, zero-byte messages, critical path.
#include <gtest/gtest.h>

#include <filesystem>
#include <fmt/format.h>

#include "../scratch_dir.hpp"
#include "llamp/analyzer/analysis.hpp"
#include "llamp/analyzer/poll_lag.hpp"
#include "llamp/analyzer/polling_phase.hpp"
#include "llamp/graph_io.hpp"

using namespace llamp;
using namespace llamp::analyzer;

namespace {

LogGP params(double L, double o, double G, uint64_t S = UINT64_MAX) {
  LogGP p;
  p.L_ns = L;
  p.o_send_ns = p.o_recv_ns = o;
  p.G_ns_per_byte = G;
  p.S_bytes = S;
  return p;
}

graph::Graph example(const std::string& name = "running_example.goal") {
  return graph::read_goal(std::string(LLAMP_TEST_DATA) + "/" + name);
}

// The running example with costs and message size as parameters.
graph::Graph example_with(uint64_t c0, uint64_t bytes) {
  return graph::parse_goal(fmt::format(R"(num_ranks 2
rank 0 {{ c0: calc {}  s: send {}b to 1  c1: calc 1000  s requires c0  c1 requires s }}
rank 1 {{ c2: calc 500  r: recv {}b from 0  c3: calc 1000  r requires c2  c3 requires r }}
)",
                                       c0, bytes, bytes),
                           "example");
}

// A two-rank ladder of `stages` round trips: rank 1 computes W_i while rank 0's message and the
// previous acknowledgement travel, so stage i's message becomes critical once 2L exceeds W_i plus
// the overheads: one breakpoint per distinct W_i.
graph::Graph ladder(int stages) {
  std::string r0, r1;
  for (int i = 0; i < stages; ++i) {
    const uint64_t w = 2000 + (static_cast<uint64_t>(i) * 7919) % 150000;  // distinct, shuffled
    r0 += fmt::format(" s{0}: send 8b to 1 tag {0}  k{0}: recv 8b from 1 tag {1}  k{0} requires s{0}", i, 1000 + i);
    if (i > 0) r0 += fmt::format("  s{} requires k{}", i, i - 1);
    r1 += fmt::format(" w{0}: calc {1}  r{0}: recv 8b from 0 tag {0}  a{0}: send 8b to 0 tag {2}", i, w, 1000 + i);
    r1 += fmt::format("  r{0} requires w{0}  a{0} requires r{0}", i);
    if (i > 0) r1 += fmt::format("  w{} requires a{}", i, i - 1);
  }
  return graph::parse_goal(fmt::format("num_ranks 2\nrank 0 {{{}}}\nrank 1 {{{}}}\n", r0, r1), "ladder");
}

}  // namespace

// Several engines (Engine::twin) bisecting at once find exactly the serial curve, with the same
// number of evaluations.
TEST(Engine, ParallelExactCurveEqualsSerial) {
  graph::Graph g = ladder(60);
  Engine e(g, homogeneous_model(params(500, 100, 0.1)));
  const Curve serial = exact_curve(e, Sweep::L, 0, 100000, 1);
  ASSERT_GE(serial.breakpoints.size(), 30u);
  // Exact: the curve is T everywhere (every 25 ns), though some evaluations land on a kink.
  for (double x = 0; x <= 100000; x += 25) {
    const double T = e.at_L(x).T;
    ASSERT_NEAR(curve_value(serial, x), T, 1e-9 * T) << "at L = " << x;
  }
  for (unsigned threads : {2u, 3u, 8u}) {
    SCOPED_TRACE(threads);
    const Curve parallel = exact_curve(e, Sweep::L, 0, 100000, threads);
    EXPECT_EQ(parallel.breakpoints, serial.breakpoints);
    EXPECT_EQ(parallel.evaluations, serial.evaluations);
    ASSERT_EQ(parallel.segments.size(), serial.segments.size());
    for (size_t i = 0; i < serial.segments.size(); ++i) {
      EXPECT_EQ(parallel.segments[i].T_begin, serial.segments[i].T_begin);
      EXPECT_EQ(parallel.segments[i].slope, serial.segments[i].slope);
    }
  }
  // The Algorithm 2 style sweep finds the same breakpoints, including kinks on its grid points.
  const Curve stepped = stepped_curve(e, Sweep::L, 0, 100000, 5000);
  ASSERT_EQ(stepped.breakpoints.size(), serial.breakpoints.size());
  for (size_t i = 0; i < serial.breakpoints.size(); ++i)
    EXPECT_NEAR(stepped.breakpoints[i], serial.breakpoints[i], 1e-6) << i;
  // Tolerances inside the curve's range are read off it; they are where Newton's method lands.
  AnalyzeOptions opt;
  opt.tolerance_percent = {1, 2, 5, 50};
  opt.critical_path = false;
  const Analysis a = analyze(e, opt);
  for (const Tolerance& t : a.tolerance) {
    SCOPED_TRACE(t.percent);
    ASSERT_TRUE(t.max_L.has_value());
    const std::optional<double> newton = max_x_within(e, Sweep::L, a.L0, t.T_bound);
    ASSERT_TRUE(newton.has_value());
    EXPECT_NEAR(*t.max_L, *newton, 1e-6 * *newton);
  }
  // A twin shares the order but not the state: evaluating one leaves the other's result alone.
  Engine t = e.twin();
  const Point at0 = e.at_L(0);
  const double last_start = e.start_value(e.last_vertex());
  EXPECT_GT(t.at_L(100000).T, at0.T);
  EXPECT_EQ(e.start_value(e.last_vertex()), last_start);
  EXPECT_EQ(t.at_L(0).T, at0.T);
}

// Paper 000 Fig. 4c / slides: T = max(L + 1.115 µs, 1.5 µs), L_c = 0.385 µs.
TEST(Engine, RunningExampleRuntimeAndSensitivity) {
  graph::Graph g = example();
  Engine e(g, homogeneous_model(params(500, 0, 5)));
  Point p = e.at_L(500);
  EXPECT_DOUBLE_EQ(p.T, 1615);
  EXPECT_DOUBLE_EQ(p.slope, 1);
  p = e.at_L(0);
  EXPECT_DOUBLE_EQ(p.T, 1500);
  EXPECT_DOUBLE_EQ(p.slope, 0);
  p = e.at_L(385);  // the breakpoint itself: right-derivative
  EXPECT_DOUBLE_EQ(p.T, 1500);
  EXPECT_DOUBLE_EQ(p.slope, 1);
  p = e.at_G(5);  // at L = 500 the message is critical: λ_G = s − 1 = 3 bytes
  EXPECT_DOUBLE_EQ(p.slope, 3);
}

TEST(Engine, RunningExampleCriticalLatencyAndTolerance) {
  graph::Graph g = example();
  Engine e(g, homogeneous_model(params(500, 0, 5)));
  Curve c = exact_curve(e, Sweep::L, 0, 100000);
  ASSERT_EQ(c.breakpoints.size(), 1u);
  EXPECT_NEAR(c.breakpoints[0], 385, 1e-9);
  ASSERT_EQ(c.segments.size(), 2u);
  EXPECT_DOUBLE_EQ(c.segments[0].slope, 0);
  EXPECT_DOUBLE_EQ(c.segments[1].slope, 1);
  EXPECT_NEAR(c.segments[1].T_end, 100000 + 1115, 1e-6);
  // Fig. 6: the largest L with T ≤ 2 µs is 0.885 µs.
  auto L = max_x_within(e, Sweep::L, 0, 2000);
  ASSERT_TRUE(L);
  EXPECT_NEAR(*L, 885, 1e-9);
  // Starting on the flat part, too.
  L = max_x_within(e, Sweep::L, 100, 1500);
  ASSERT_TRUE(L);
  EXPECT_NEAR(*L, 385, 1e-9);
}

TEST(Engine, AlgorithmTwoSweepFindsTheSameBreakpoints) {
  graph::Graph g = example();
  Engine e(g, homogeneous_model(params(500, 0, 5)));
  Curve c = stepped_curve(e, Sweep::L, 200, 500, 100);
  ASSERT_EQ(c.breakpoints.size(), 1u);
  EXPECT_NEAR(c.breakpoints[0], 385, 1e-9);
  EXPECT_GE(c.evaluations, 4u);  // at least the grid 500, 400, 300, 200
}

// A tolerance read off the curve: inside the range exact, outside it nothing (Newton takes over).
TEST(Engine, XReachingReadsTheBoundOffTheCurve) {
  graph::Graph g = example();
  Engine e(g, homogeneous_model(params(500, 0, 5)));
  const Curve c = exact_curve(e, Sweep::L, 200, 500);  // breakpoint at 385
  ASSERT_EQ(c.breakpoints.size(), 1u);
  const double T385 = e.at_L(385).T;
  EXPECT_NEAR(*x_reaching(c, T385), 385, 1e-9);
  const double mid = e.at_L(450).T;
  EXPECT_NEAR(*x_reaching(c, mid), 450, 1e-9);
  EXPECT_FALSE(x_reaching(c, e.at_L(200).T - 1).has_value());  // already above at the start
  EXPECT_FALSE(x_reaching(c, e.at_L(500).T + 1).has_value());  // reached only beyond the range
}

// Fig. 4b: with c0 = 1 µs the message is always critical: T = L + 2.015 µs, no critical latency.
TEST(Engine, LateSenderKeepsMessageCritical) {
  graph::Graph g = example_with(1000, 4);
  Engine e(g, homogeneous_model(params(0, 0, 5)));
  Curve c = exact_curve(e, Sweep::L, 0, 100000);
  EXPECT_TRUE(c.breakpoints.empty());
  EXPECT_DOUBLE_EQ(e.at_L(1000).T, 3015);
  EXPECT_DOUBLE_EQ(e.at_L(0).slope, 1);
}

TEST(Engine, ZeroByteMessageHasNoBandwidthTerm) {
  graph::Graph g = example_with(100, 0);
  Engine e(g, homogeneous_model(params(500, 0, 5)));
  EXPECT_DOUBLE_EQ(e.at_L(500).T, 1600);  // 100 + L + 1000, no (s − 1)G
  EXPECT_DOUBLE_EQ(e.at_G(5).slope, 0);
  Curve c = exact_curve(e, Sweep::L, 0, 1000);
  ASSERT_EQ(c.breakpoints.size(), 1u);
  EXPECT_NEAR(c.breakpoints[0], 400, 1e-9);
}

// Rendezvous (Appendix B, docs/analyzer.md): h = max(t_r, t_s + o + L), end(recv) = h + o + 2L +
// (s−1)G, end(send) = end(recv) + L + o. Here T = max(500, 100 + L) + 3L + 15 + 1000.
TEST(Engine, RendezvousCountsHandshakeLatencies) {
  graph::Graph g = example();
  Engine e(g, homogeneous_model(params(0, 0, 5, /*S=*/2)));
  Point p = e.at_L(0);
  EXPECT_DOUBLE_EQ(p.T, 1515);
  EXPECT_DOUBLE_EQ(p.slope, 3);  // read request, data, acknowledgement
  p = e.at_L(1000);
  EXPECT_DOUBLE_EQ(p.T, 100 + 4000 + 15 + 1000);
  EXPECT_DOUBLE_EQ(p.slope, 4);  // and the request-to-send once the sender is late
  Curve c = exact_curve(e, Sweep::L, 0, 100000);
  ASSERT_EQ(c.breakpoints.size(), 1u);
  EXPECT_NEAR(c.breakpoints[0], 400, 1e-9);
  CriticalPath cp = (e.at_L(1000), critical_path(e));
  EXPECT_EQ(cp.latency_terms, 4u);
  EXPECT_DOUBLE_EQ(cp.T, 5115);
}

TEST(Engine, RendezvousWithOverheads) {
  // o = 50: h = max(500, 100 + 50 + L); end(recv) = h + 50 + 2L + 15; end(send) = end(recv) + L + 50.
  graph::Graph g = example();
  Engine e(g, homogeneous_model(params(1000, 50, 5, 2)));
  EXPECT_DOUBLE_EQ(e.at_L(1000).T, (150 + 1000) + 50 + 2000 + 15 + 1000 + 50 + 1000);
}

// o_rndv (llamp-loggp: the rendezvous handshake beyond its latency terms) is the receiver's: it
// ends the receive later, and the send with it; an eager message does not pay it.
TEST(Engine, RendezvousHandshakeCostEndsTheReceiveLater) {
  graph::Graph g = example();
  llamp::LogGP p = params(1000, 50, 5, 2);
  p.o_rndv_ns = 1900;
  Engine e(g, homogeneous_model(p));
  EXPECT_DOUBLE_EQ(e.at_L(1000).T, (150 + 1000) + 50 + 1900 + 2000 + 15 + 1000 + 50 + 1000);
  EXPECT_DOUBLE_EQ(e.at_L(1000).slope, 4);  // a constant: λ_L does not change
  CriticalPath cp = (e.at_L(1000), critical_path(e));
  EXPECT_DOUBLE_EQ(cp.T, e.at_L(1000).T);
  p.S_bytes = 1u << 20;  // eager: no handshake
  Engine eager(g, homogeneous_model(p));
  p.o_rndv_ns = 0;
  EXPECT_DOUBLE_EQ(eager.at_L(1000).T, Engine(g, homogeneous_model(p)).at_L(1000).T);
}

TEST(Engine, NonblockingOverlap) {
  // o = 200: T = max(1100, max(500, 315 + L) + 200 + 1000): L_c = 185.
  graph::Graph g = example("running_example_nonblocking.goal");
  Engine e(g, homogeneous_model(params(0, 200, 5)));
  EXPECT_DOUBLE_EQ(e.at_L(0).T, 1700);
  Curve c = exact_curve(e, Sweep::L, 0, 100000);
  ASSERT_EQ(c.breakpoints.size(), 1u);
  EXPECT_NEAR(c.breakpoints[0], 185, 1e-9);
}

TEST(Engine, CriticalPathOfRunningExample) {
  graph::Graph g = example();
  Engine e(g, homogeneous_model(params(500, 0, 5)));
  e.at_L(500);
  CriticalPath cp = critical_path(e);
  EXPECT_DOUBLE_EQ(cp.T, 1615);
  EXPECT_EQ(cp.latency_terms, 1u);
  EXPECT_DOUBLE_EQ(cp.gap_bytes, 3);
  ASSERT_EQ(cp.pairs.size(), 1u);
  EXPECT_EQ(cp.pairs.begin()->first, std::make_pair(0u, 1u));
  // c0 → s → r → c3
  ASSERT_EQ(cp.vertices.size(), 4u);
  EXPECT_EQ(cp.vertices.front(), g.global_id(0, 0));
  EXPECT_EQ(cp.vertices.back(), g.global_id(1, 2));
  EXPECT_DOUBLE_EQ(cp.rank_ns[0], 100);
  EXPECT_DOUBLE_EQ(cp.rank_ns[1], 1000);
  EXPECT_DOUBLE_EQ(cp.latency_ns, 500);
  EXPECT_DOUBLE_EQ(cp.bandwidth_ns, 15);
  // Below the critical latency the message is off the path.
  e.at_L(100);
  cp = critical_path(e);
  EXPECT_EQ(cp.latency_terms, 0u);
  EXPECT_DOUBLE_EQ(cp.rank_ns[1], 1500);
}

TEST(Engine, AnalyzeReportsMetricsAndTolerance) {
  graph::Graph g = example();
  Engine e(g, homogeneous_model(params(500, 0, 5)));
  AnalyzeOptions opt;
  Analysis a = analyze(e, opt);
  EXPECT_DOUBLE_EQ(a.T, 1615);
  EXPECT_DOUBLE_EQ(a.lambda_L, 1);
  EXPECT_NEAR(a.rho_L, 500.0 / 1615, 1e-12);
  EXPECT_DOUBLE_EQ(a.lambda_G, 3);
  ASSERT_EQ(a.tolerance.size(), 3u);
  // 1 %: T ≤ 1631.15 → L ≤ 516.15
  ASSERT_TRUE(a.tolerance[0].max_L);
  EXPECT_NEAR(*a.tolerance[0].max_L, 1615 * 1.01 - 1115, 1e-6);
  // Bandwidth: T = 100 + L + 3G + 1000 + ... ≤ 1631.15 → 3G ≤ 31.15 + 15
  ASSERT_TRUE(a.tolerance[0].max_G);
  EXPECT_NEAR(*a.tolerance[0].max_G, (1615 * 1.01 - 1600) / 3, 1e-6);
  auto j = to_json(a, g);
  for (const char* key : {"runtime_ns", "lambda_L", "rho_L", "lambda_G", "critical_latencies_ns", "curve", "tolerance"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_NE(curve_csv(a).find("L_ns,delta_L_ns,T_ns,lambda_L,rho_L"), std::string::npos);
}

TEST(Engine, ToleranceUnboundedWithoutMessages) {
  graph::Graph g = graph::parse_goal("num_ranks 1\nrank 0 { calc 10 }", "calc-only");
  Engine e(g, homogeneous_model(params(500, 0, 5)));
  EXPECT_FALSE(max_x_within(e, Sweep::L, 500, 20));
}

TEST(Engine, RendezvousDeadlockIsReportedAsCycle) {
  graph::Graph g = graph::parse_goal(R"(num_ranks 2
rank 0 { a: send 1000b to 1  b: recv 1000b from 1  b requires a }
rank 1 { c: send 1000b to 0  d: recv 1000b from 0  d requires c }
)",
                                     "headtohead.goal");
  EXPECT_NO_THROW(Engine(g, homogeneous_model(params(0, 0, 0, 4096))));
  EXPECT_THROW(Engine(g, homogeneous_model(params(0, 0, 0, 100))), graph::CycleError);
}

TEST(Engine, BinaryAndTextGiveTheSameRuntime) {
  graph::Graph g = example("running_example_nonblocking.goal");
  auto path = llamp::test::scratch_file("engine-rt.lgr");
  {
    graph::BinaryGraphWriter w(path.string());
    graph::write_graph(g, w);
  }
  graph::Graph b = graph::load_graph(path.string());
  Engine e1(g, homogeneous_model(params(700, 30, 2)));
  Engine e2(b, homogeneous_model(params(700, 30, 2)));
  EXPECT_DOUBLE_EQ(e1.at_L(700).T, e2.at_L(700).T);
}

// A polled receive (schedgen, "Polling"): rank 0 posts its receive after c0 (10 ns), computes
// its polling loop c1 (100 ns), and goes on (c2) once the loop ended and it noticed the message.
// Rank 1 sends after c3 (30 ns). With o = 0, G = 0 the message arrives at 30 + L; the lag's cap
// is 20 ns.
graph::Graph polled_receive_graph() {
  graph::InMemoryGraphBuilder b;
  b.begin(2);
  const uint64_t c0 = b.calc(0, 10), r = b.recv(0, 8, 1, 0), c1 = b.calc(0, 100), lag = b.poll_lag(0, 20),
                 c2 = b.calc(0, 5);
  b.requires_edge(0, r, c0);
  b.requires_edge(0, c1, c0);
  b.requires_edge(0, lag, r);
  b.requires_edge(0, c2, c1);
  b.requires_edge(0, c2, lag);
  const uint64_t c3 = b.calc(1, 30), s = b.send(1, 8, 0, 0);
  b.requires_edge(1, s, c3);
  b.finish();
  return b.take();
}

TEST(PollLag, ResolvedAtL0ExactThereAndLateBeyond) {
  auto build = polled_receive_graph;
  LogGP p;
  p.L_ns = 50;  // arrival at 80: the loop ends at 110, 30 ns of slack
  p.S_bytes = UINT64_MAX;
  graph::Graph g = build();
  ASSERT_EQ(g.poll_lags.size(), 1u);
  Engine e(g, homogeneous_model(p));
  const PollLagResolution r = resolve_poll_lags(g, e);
  EXPECT_EQ(g.value[g.poll_lags[0]], 20u);  // slack 30 ≥ cap 20: the cap
  EXPECT_EQ(r.capped, 1u);
  EXPECT_DOUBLE_EQ(e.at_L(50).T, 115);   // the loop's end: 10 + 100 + 5
  EXPECT_DOUBLE_EQ(e.at_L(150).T, 205);  // arrival 180 + lag 20 + 5

  p.L_ns = 70;  // arrival at 100: 10 ns of slack
  g = build();
  Engine f(g, homogeneous_model(p));
  resolve_poll_lags(g, f);
  EXPECT_EQ(g.value[g.poll_lags[0]], 10u);
  EXPECT_DOUBLE_EQ(f.at_L(70).T, 115);   // still exactly the traced loop at L0
  EXPECT_DOUBLE_EQ(f.at_L(170).T, 215);  // arrival 200 + lag 10 + 5
}

// --poll-lag phase on the same graph at L0 = 70 (resolved lag 10, cap 20): the traced phase at L0,
// the lag ramping from 10 to its cap while the arrival moves by the 10 ns of slack, the capped
// graph from there on; tolerances read off the composed curve.
TEST(PollLag, PhaseKeepsTheTraceAtL0AndReachesTheCapOneSlackLater) {
  graph::Graph g = polled_receive_graph();
  LogGP p;
  p.L_ns = 70;
  p.S_bytes = UINT64_MAX;
  Engine e(g, homogeneous_model(p));
  const PollLagResolution lags = resolve_poll_lags(g, e);
  ASSERT_EQ(lags.resolved, (std::vector<uint64_t>{10}));
  ASSERT_EQ(lags.cap, (std::vector<uint64_t>{20}));
  AnalyzeOptions opt;
  opt.x_min = 0;
  opt.x_max = 200;
  opt.tolerance_percent = {10};
  opt.critical_path = false;
  const Analysis resolved = analyze(e, opt);
  set_poll_lags(g, lags.cap);
  const Analysis at_cap = analyze(e, opt);
  const Analysis a = compose_polling_phase(resolved, at_cap, e, g, lags, 0, 200);
  // The CLI analyses each graph only where its curve is used (below L0, past the ramp's end):
  // the same composed curve.
  AnalyzeOptions below = opt, above = opt;
  below.x_max = 70;
  above.x_min = 80;
  set_poll_lags(g, lags.resolved);
  const Analysis resolved_part = analyze(e, below);
  set_poll_lags(g, lags.cap);
  const Analysis cap_part = analyze(e, above);
  const Analysis parts = compose_polling_phase(resolved_part, cap_part, e, g, lags, 0, 200);
  for (double x = 0; x <= 200; x += 2.5) EXPECT_DOUBLE_EQ(curve_value(a.curve, x), curve_value(parts.curve, x)) << x;

  EXPECT_DOUBLE_EQ(polling_phase_end(70, lags), 80);
  EXPECT_DOUBLE_EQ(a.T, 115);                       // the traced run's T(L0)
  EXPECT_DOUBLE_EQ(curve_value(a.curve, 60), 115);  // below L0: the resolved graph
  EXPECT_DOUBLE_EQ(curve_value(a.curve, 70), 115);
  EXPECT_DOUBLE_EQ(curve_value(a.curve, 75), 125);   // lag 15: arrival 105 + 15 + 5
  EXPECT_DOUBLE_EQ(curve_value(a.curve, 80), 135);   // lag at its cap: 110 + 20 + 5
  EXPECT_DOUBLE_EQ(curve_value(a.curve, 170), 225);  // the capped graph (resolved: 215)
  EXPECT_DOUBLE_EQ(curve_value(a.curve, 200), 255);
  for (double x = 0; x < 200; x += 0.5) EXPECT_LE(curve_value(a.curve, x), curve_value(a.curve, x + 0.5)) << x;
  ASSERT_EQ(a.tolerance.size(), 1u);
  ASSERT_TRUE(a.tolerance[0].max_L);
  EXPECT_NEAR(*a.tolerance[0].max_L, 75.75, 0.3);  // T = 2x − 25 on the ramp reaches 126.5
  EXPECT_EQ(g.value[g.poll_lags[0]], 20u);         // left at the caps
}

// Slopes are kept in 32 bits when they are integer counts that fit (L sweeps, small G sweeps) and
// in 64 bits otherwise; both give the same T and exact slopes, and switching back and forth keeps
// one state array only.
TEST(Engine, SlopesBeyond32BitsAreKeptWide) {
  const uint64_t big = uint64_t{6} << 30;  // 6 GiB: λ_G = 6 GiB − 1 bytes does not fit 32 bits
  const graph::Graph g = example_with(5000, big);
  Engine e(g, homogeneous_model(params(1000, 100, 0.001)));
  const Point l1 = e.at_L(1000);
  EXPECT_TRUE(e.narrow_slopes());
  EXPECT_EQ(l1.slope, 1.0);
  const uint64_t narrow_bytes = e.memory_bytes();
  const Point gp = e.at_G(0.001);
  EXPECT_FALSE(e.narrow_slopes());
  EXPECT_EQ(gp.slope, static_cast<double>(big - 1));
  EXPECT_EQ(e.start_slope(g.rank_begin[1] + 2), static_cast<double>(big - 1));  // c3 after the receive
  EXPECT_EQ(e.memory_bytes(), narrow_bytes + 4 * g.num_vertices());             // 16 instead of 12 bytes per vertex
  const Point l2 = e.at_L(1000);
  EXPECT_TRUE(e.narrow_slopes());
  EXPECT_EQ(l2.T, l1.T);
  EXPECT_EQ(l2.slope, l1.slope);
  EXPECT_EQ(e.memory_bytes(), narrow_bytes);
  // A fractional coefficient of the sweep variable makes slopes fractional: wide.
  NetworkModel half = homogeneous_model(params(1000, 100, 0.001));
  half.L_coef[0] = 0.5;
  Engine h(g, half);
  const Point hp = h.at_L(1000);
  EXPECT_FALSE(h.narrow_slopes());
  EXPECT_EQ(hp.slope, 0.5);
}
