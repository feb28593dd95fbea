#pragma once
// Graphs for the LP-route tests: random MPI-like execution graphs built with the graph builder.
#include <cstdint>
#include <random>
#include <vector>

#include "llamp/graph.hpp"
#include "llamp/graph_sink.hpp"

namespace llamp::lp_test {

struct RandomGraphSpec {
  uint32_t ranks = 4;
  uint32_t steps = 200;  // operations placed over all ranks
  uint64_t max_calc_ns = 2000;
  uint64_t max_small_bytes = 64;     // most messages
  uint64_t max_large_bytes = 65536;  // one in five (rendezvous above S)
  double nonblocking = 0.4;          // share of sends/receives that are nonblocking
  double extra_edges = 0.1;          // share of vertices with an extra Requires edge
};

// Ranks run a sequence of operations; a message appears on both its ranks at the same global
// step, blocking or nonblocking (the op starts after the previous one ends, the next op starts
// when it starts (IRequires), a later wait-all requires it). Every dependency points back in the
// global step order, so the graph is acyclic under any rendezvous threshold.
inline graph::Graph random_graph(const RandomGraphSpec& spec, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  graph::InMemoryGraphBuilder b;
  b.begin(spec.ranks);
  struct RankState {
    bool has_frontier = false;
    uint64_t frontier = 0;
    bool frontier_irequires = false;
    std::vector<uint64_t> pending;  // nonblocking ops not yet waited for
    uint64_t count = 0;
  };
  std::vector<RankState> st(spec.ranks);
  auto link = [&](uint32_t r, uint64_t v) {
    RankState& s = st[r];
    if (s.has_frontier) {
      if (s.frontier_irequires)
        b.irequires_edge(r, v, s.frontier);
      else
        b.requires_edge(r, v, s.frontier);
    }
    if (s.count > 2 && chance(spec.extra_edges)) {
      const uint64_t earlier = uniform(0, s.count - 2);
      if (!s.has_frontier || earlier != s.frontier) b.requires_edge(r, v, earlier);
    }
    s.count = v + 1;
  };
  auto place = [&](uint32_t r, uint64_t v, bool nonblocking) {
    link(r, v);
    st[r].has_frontier = true;
    st[r].frontier = v;
    st[r].frontier_irequires = nonblocking;
    if (nonblocking) st[r].pending.push_back(v);
  };
  auto wait_all = [&](uint32_t r) {
    const uint64_t w = b.calc(r, 0);
    link(r, w);
    for (uint64_t p : st[r].pending)
      if (!(st[r].has_frontier && p == st[r].frontier && !st[r].frontier_irequires)) b.requires_edge(r, w, p);
    st[r].pending.clear();
    st[r].has_frontier = true;
    st[r].frontier = w;
    st[r].frontier_irequires = false;
  };
  for (uint32_t step = 0; step < spec.steps; ++step) {
    const uint32_t r = static_cast<uint32_t>(uniform(0, spec.ranks - 1));
    const uint64_t what = uniform(0, 9);
    if (what < 4 || spec.ranks < 2) {
      place(r, b.calc(r, uniform(0, spec.max_calc_ns)), false);
    } else if (what < 9) {
      uint32_t dst = static_cast<uint32_t>(uniform(0, spec.ranks - 2));
      if (dst >= r) ++dst;
      const uint64_t bytes =
          chance(0.2) ? uniform(spec.max_small_bytes + 1, spec.max_large_bytes) : uniform(0, spec.max_small_bytes);
      const uint64_t s = b.send(r, bytes, dst, 0);
      place(r, s, chance(spec.nonblocking));
      const uint64_t v = b.recv(dst, bytes, r, 0);
      place(dst, v, chance(spec.nonblocking));
      b.message(r, s, dst, v);
    } else {
      wait_all(r);
    }
  }
  for (uint32_t r = 0; r < spec.ranks; ++r)
    if (!st[r].pending.empty() || st[r].count == 0) wait_all(r);
  b.finish();
  return b.take();
}

}  // namespace llamp::lp_test
