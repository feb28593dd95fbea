// Heterogeneous LogGP (Appendix I), topologies (Appendix H) and rank placement (Algorithm 3).
#include <gtest/gtest.h>

#include "llamp/analyzer/analysis.hpp"
#include "llamp/analyzer/placement.hpp"
#include "llamp/analyzer/topology.hpp"
#include "llamp/graph_io.hpp"

using namespace llamp;
using namespace llamp::analyzer;

namespace {
LogGP params(double L, double G) {
  LogGP p;
  p.L_ns = L;
  p.G_ns_per_byte = G;
  p.S_bytes = UINT64_MAX;
  return p;
}

// Four ranks, two chains: 0 ↔ 2 and 1 ↔ 3 exchange many messages in turn.
graph::Graph pairs_graph() {
  graph::InMemoryGraphBuilder b;
  b.begin(4);
  for (uint32_t a : {0u, 1u}) {
    uint32_t c = a + 2;
    uint64_t last_a = b.calc(a, 10), last_c = b.calc(c, 10);
    for (int i = 0; i < 20; ++i) {
      uint64_t s = b.send(a, 8, c, 0), r = b.recv(c, 8, a, 0);
      b.requires_edge(a, s, last_a);
      b.requires_edge(c, r, last_c);
      uint64_t s2 = b.send(c, 8, a, 1), r2 = b.recv(a, 8, c, 1);
      b.requires_edge(c, s2, r);
      b.requires_edge(a, r2, s);
      last_a = r2;
      last_c = s2;
    }
  }
  b.finish();
  return b.take();
}
}  // namespace

TEST(Heterogeneous, TwoLevelModelUsesIntraAndInterLatency) {
  graph::Graph g = graph::read_goal(LLAMP_TEST_DATA "/running_example.goal");
  // Same node: the message costs L_intra = 100; c0 + 100 + 15 + c3 = 1215 < 1500.
  Engine same(g, two_level_model(params(500, 5), {0, 0}, 100, 5, 500, 5));
  EXPECT_DOUBLE_EQ(same.at_L(0).T, 1500);
  Engine apart(g, two_level_model(params(500, 5), {0, 1}, 100, 5, 500, 5));
  Point p = apart.at_L(0);  // xL = ΔL = 0: inter-node latency 500
  EXPECT_DOUBLE_EQ(p.T, 1615);
  EXPECT_DOUBLE_EQ(p.slope, 1);
  // ΔL sweep: breakpoint where 500 + ΔL + 115 + 1000 ... = 1500 → ΔL = −115 (outside), so none.
  EXPECT_TRUE(exact_curve(apart, Sweep::L, 0, 10000).breakpoints.empty());
  auto pw = pairwise_sensitivity(apart, 10);
  ASSERT_EQ(pw.size(), 1u);
  EXPECT_EQ(pw[0]["src"], 0);
  EXPECT_EQ(pw[0]["dst"], 1);
  EXPECT_EQ(pw[0]["lambda_L"], 1);
  EXPECT_EQ(pw[0]["route"], "inter-node");
}

TEST(Topology, FatTreeAndDragonflyRoutes) {
  Topology ft = parse_topology("fattree:k=4,tiers=3");
  EXPECT_EQ(ft.capacity(), 16u);
  EXPECT_EQ(topo_route(ft, 0, 1).switches, 1u);  // same leaf (k/2 = 2 nodes)
  EXPECT_EQ(topo_route(ft, 0, 2).switches, 3u);  // same pod
  EXPECT_EQ(topo_route(ft, 0, 4).switches, 5u);  // across the core
  EXPECT_EQ(topo_route(ft, 0, 4).wires, (std::vector<uint32_t>{2, 2, 2}));
  Topology df = parse_topology("dragonfly:g=3,a=2,p=2");
  EXPECT_EQ(df.capacity(), 12u);
  EXPECT_EQ(topo_route(df, 0, 1).switches, 1u);                             // same router
  EXPECT_EQ(topo_route(df, 0, 2).wires, (std::vector<uint32_t>{2, 1, 0}));  // same group
  TopoRoute inter = topo_route(df, 0, 4);                                   // group 0 → group 1
  EXPECT_EQ(inter.wires[2], 1u);
  EXPECT_EQ(inter.switches, 2u + inter.wires[1]);
  EXPECT_THROW(parse_topology("torus:k=3"), Error);
  EXPECT_THROW(parse_topology("fattree:k=3,tiers=2"), Error);
  EXPECT_THROW(parse_topology("dragonfly:g=3,a=2"), Error);
}

TEST(Topology, LinkClassSensitivityCountsWiresOnThePath) {
  graph::Graph g = graph::read_goal(LLAMP_TEST_DATA "/running_example.goal");
  Topology ft = parse_topology("fattree:k=4,tiers=3");
  // Ranks on nodes 0 and 4: 6 wires of 100 ns and 5 switches of 100 ns = 1.1 µs > 385 ns: critical.
  Engine e(g, topology_model(params(0, 5), ft, {0, 4}, 100, 100, 50, 5));
  Point p = e.at_L(0);
  EXPECT_DOUBLE_EQ(p.T, 100 + 1100 + 15 + 1000);
  auto rep = topology_report(e, ft, {1, 5}, p.T);
  auto& classes = rep["link_classes"];
  ASSERT_EQ(classes.size(), 4u);  // terminal, tier1-2, tier2-3, switch
  EXPECT_EQ(classes[0]["class"], "terminal");
  EXPECT_DOUBLE_EQ(classes[0]["sensitivity"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(classes[3]["sensitivity"].get<double>(), 5);
  // 5 %: T may grow by 110.75 ns; 2 terminal wires per message → +55.375 ns per wire.
  EXPECT_NEAR(classes[0]["tolerance"][1]["max_value_ns"].get<double>(), 100 + 0.05 * p.T / 2, 1e-6);
  // The engine's model is restored afterwards.
  EXPECT_DOUBLE_EQ(e.at_L(0).T, p.T);
}

TEST(Placement, SwapsRanksThatTalkOntoOneNode) {
  graph::Graph g = pairs_graph();
  // Block placement 0,1 | 2,3 puts both chatty pairs across nodes.
  NodeMap nodes = block_node_map(4, 2);
  Engine e(g, two_level_model(params(5000, 0), nodes.node_of_rank, 100, 0, 5000, 0));
  PlacementResult r = optimize_placement(e, nodes);
  EXPECT_LT(r.T_after, r.T_before);
  EXPECT_EQ(r.node_of_rank[0], r.node_of_rank[2]);
  EXPECT_EQ(r.node_of_rank[1], r.node_of_rank[3]);
  EXPECT_DOUBLE_EQ(e.at_L(0).T, r.T_after);
  std::string mf = machine_file(r, nodes);
  EXPECT_EQ(std::count(mf.begin(), mf.end(), '\n'), 4);
  EXPECT_NE(mf.find("node0:1"), std::string::npos);
}
