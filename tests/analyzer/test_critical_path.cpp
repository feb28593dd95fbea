// The critical-path walk on the graph shape schedgen makes of a nonblocking halo exchange (the
// shape of the halo2d graph `llamp analyze` crashed on, /work/notes/halo_crash.goal): per
// iteration the Irecv is posted after the previous Waitall's computation (the receive requires
// it), a calc that requires the same computation, the Isend, a calc overlapping the send
// (irequires), and the Waitall's calc requiring the send, the overlapping calc and the receive;
// a final 8-byte exchange stands for the Allreduce.
//
// The walk must account for all of T: the CPU time it charges to ranks plus the latency and
// bandwidth time of its messages add up to T, its latency terms are λ_L, and it ends at a vertex
// without predecessors. Checked across a sweep of L for eager and rendezvous messages and for a
// heterogeneous (two-level) model, whose walk is the other template instance.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "llamp/analyzer/analysis.hpp"
#include "llamp/graph_io.hpp"

using namespace llamp;
using namespace llamp::analyzer;

namespace {

LogGP params(double L, double o, double G, uint64_t S) {
  LogGP p;
  p.L_ns = L;
  p.o_send_ns = p.o_recv_ns = o;
  p.G_ns_per_byte = G;
  p.S_bytes = S;
  return p;
}

// One rank's part: `iterations` exchanges of `bytes` with `peer`, compute costs varying per rank
// and iteration so that the path changes sides as L grows.
std::string halo_rank(uint32_t rank, uint32_t peer, int iterations, uint64_t bytes) {
  std::string s = fmt::format("rank {} {{\nw0: calc {}\n", rank, 5000 + 3000 * rank);
  for (int i = 1; i <= iterations; ++i) {
    const std::string prev = fmt::format("w{}", i - 1), w = fmt::format("w{}", i);
    s += fmt::format("r{i}: recv {b}b from {p} tag 7\nr{i} requires {prev}\n", fmt::arg("i", i), fmt::arg("b", bytes),
                     fmt::arg("p", peer), fmt::arg("prev", prev));
    s += fmt::format("pre{i}: calc {c}\npre{i} requires {prev}\n", fmt::arg("i", i),
                     fmt::arg("c", 300 + 40 * i + 90 * rank), fmt::arg("prev", prev));
    s += fmt::format("s{i}: send {b}b to {p} tag 7\ns{i} requires pre{i}\n", fmt::arg("i", i), fmt::arg("b", bytes),
                     fmt::arg("p", peer));
    s += fmt::format("ov{i}: calc {c}\nov{i} irequires s{i}\n", fmt::arg("i", i),
                     fmt::arg("c", 3000 + 700 * ((i + rank) % 3)));
    s += fmt::format("{w}: calc {c}\n{w} requires s{i}\n{w} requires ov{i}\n{w} requires r{i}\n", fmt::arg("w", w),
                     fmt::arg("c", 400 + 150 * ((i * (rank + 2)) % 4)), fmt::arg("i", i));
  }
  const std::string last = fmt::format("w{}", iterations);
  s += fmt::format(
      "ar_s: send 8b to {p} tag 9\nar_s requires {l}\nar_r: recv 8b from {p} tag 9\nar_r requires {l}\n"
      "fin: calc 2000\nfin requires ar_s\nfin requires ar_r\n}}\n",
      fmt::arg("p", peer), fmt::arg("l", last));
  return s;
}

graph::Graph halo_exchange(int iterations, uint64_t bytes) {
  return graph::parse_goal("num_ranks 2\n" + halo_rank(0, 1, iterations, bytes) + halo_rank(1, 0, iterations, bytes),
                           "halo-exchange");
}

// Walks the path at L and checks that it explains the evaluation.
void expect_path_accounts_for_T(Engine& e, double xL, bool homogeneous) {
  const Point p = e.at_L(xL);
  const CriticalPath cp = critical_path(e);
  SCOPED_TRACE(fmt::format("L = {} ns", xL));
  EXPECT_DOUBLE_EQ(cp.T, p.T);
  double cpu = 0;
  for (double ns : cp.rank_ns) cpu += ns;
  EXPECT_NEAR(cpu + cp.latency_ns + cp.bandwidth_ns, p.T, 1e-9 * p.T);
  if (homogeneous) EXPECT_EQ(static_cast<double>(cp.latency_terms), p.slope);
  ASSERT_FALSE(cp.vertices.empty());
  EXPECT_TRUE(e.graph().preds(cp.vertices.front()).empty());
  EXPECT_EQ(cp.vertices.back(), e.last_vertex());
}

}  // namespace

TEST(CriticalPath, NonblockingHaloExchangeEager) {
  const graph::Graph g = halo_exchange(6, 256);
  Engine e(g, homogeneous_model(params(400, 200, 0.1, 65536)));
  for (double L = 0; L <= 20000; L += 250) expect_path_accounts_for_T(e, L, true);
  // With a large L every exchange is on the path: one latency term per iteration plus the final one.
  EXPECT_EQ(e.at_L(1e6).slope, 7);
  EXPECT_EQ(critical_path(e).latency_terms, 7u);
}

TEST(CriticalPath, NonblockingHaloExchangeRendezvous) {
  const graph::Graph g = halo_exchange(6, 256);
  Engine e(g, homogeneous_model(params(400, 200, 0.1, /*S=*/64)));
  for (double L = 0; L <= 20000; L += 250) expect_path_accounts_for_T(e, L, true);
  // with the handshake's time (o_rndv), charged to the receiving rank's CPU
  LogGP with_handshake = params(400, 200, 0.1, 64);
  with_handshake.o_rndv_ns = 1900;
  Engine h(g, homogeneous_model(with_handshake));
  for (double L = 0; L <= 20000; L += 250) expect_path_accounts_for_T(h, L, true);
}

TEST(CriticalPath, NonblockingHaloExchangeTwoLevelModel) {
  const graph::Graph g = halo_exchange(6, 256);
  Engine e(g, two_level_model(params(400, 200, 0.1, 65536), {0, 1}, 100, 0.05, 1500, 0.2));
  for (double dL = 0; dL <= 20000; dL += 250) expect_path_accounts_for_T(e, dL, false);
}

// What `llamp analyze` does: λ_G, then λ_L at the base point, then the walk.
TEST(CriticalPath, AnalyzeReportsThePathOfTheHaloExchange) {
  const graph::Graph g = halo_exchange(6, 256);
  Engine e(g, homogeneous_model(params(400, 200, 0.1, 65536)));
  AnalyzeOptions opt;
  opt.x_min = 0;
  opt.x_max = 100000;
  const Analysis a = analyze(e, opt);
  ASSERT_TRUE(a.path);
  EXPECT_DOUBLE_EQ(a.path->T, a.T);
  EXPECT_EQ(static_cast<double>(a.path->latency_terms), a.lambda_L);
}
