#include "llamp/graph.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace llamp::graph {

const char* kind_name(VertexKind kind) {
  switch (kind) {
    case VertexKind::Calc:
      return "calc";
    case VertexKind::Send:
      return "send";
    case VertexKind::Recv:
      return "recv";
  }
  return "invalid";
}

uint64_t Graph::num_messages() const {
  return static_cast<uint64_t>(std::count(kind.begin(), kind.end(), VertexKind::Send));
}

uint32_t Graph::rank_of(VertexId v) const {
  // rank_begin is non-decreasing; the owner is the last rank whose range starts at or before v
  // (empty ranks share their start with the next one, so take the last such rank).
  auto it = std::upper_bound(rank_begin.begin(), rank_begin.end() - 1, uint64_t{v});
  return static_cast<uint32_t>((it - rank_begin.begin()) - 1);
}

void release_tags(Graph& g) { std::vector<int32_t>().swap(g.tag); }

uint64_t Graph::memory_bytes() const {
  return rank_begin.capacity() * sizeof(uint64_t) + kind.capacity() * sizeof(VertexKind) +
         value.capacity() * sizeof(uint64_t) + tag.capacity() * sizeof(int32_t) + peer.capacity() * sizeof(VertexId) +
         pred_begin.capacity() * sizeof(uint32_t) + pred.capacity() * sizeof(uint32_t) +
         source_line.capacity() * sizeof(uint32_t);
}

std::string describe_vertex(const Graph& g, VertexId v) {
  if (v >= g.num_vertices()) return fmt::format("vertex #{} (out of range)", v);
  uint32_t r = g.rank_of(v);
  std::string where;
  if (!g.source_line.empty() && g.source_line[v] != 0)
    where = fmt::format(", {}:{}", g.source, g.source_line[v]);
  else if (!g.source.empty())
    where = fmt::format(", {}", g.source);
  return fmt::format("rank {} vertex {} ({}{})", r, v - g.rank_begin[r], kind_name(g.kind[v]), where);
}

void validate(const Graph& g) {
  const uint64_t n = g.num_vertices();
  auto fail = [&](const std::string& what) {
    throw Error(fmt::format("{}: invalid graph: {}", g.source.empty() ? "graph" : g.source, what));
  };
  if (g.num_ranks == 0 || g.num_ranks > kMaxRanks) fail(fmt::format("{} ranks", g.num_ranks));
  if (n > kMaxVertices) fail(fmt::format("{} vertices exceed the limit of {}", n, kMaxVertices));
  if (g.rank_begin.size() != g.num_ranks + 1ull || g.rank_begin.front() != 0 || g.rank_begin.back() != n)
    fail("rank table does not cover the vertices");
  for (uint32_t r = 0; r < g.num_ranks; ++r)
    if (g.rank_begin[r] > g.rank_begin[r + 1]) fail(fmt::format("rank table decreases at rank {}", r));
  if (g.value.size() != n || (g.tag.size() != n && !g.tag.empty()) || g.peer.size() != n ||
      g.pred_begin.size() != n + 1 || (!g.source_line.empty() && g.source_line.size() != n))
    fail("per-vertex arrays differ in length");
  if (g.pred_begin.front() != 0 || g.pred_begin.back() != g.pred.size())
    fail("predecessor table does not cover the edges");

  for (uint32_t r = 0; r < g.num_ranks; ++r) {
    for (uint64_t v = g.rank_begin[r]; v < g.rank_begin[r + 1]; ++v) {
      const auto id = static_cast<VertexId>(v);
      switch (g.kind[v]) {
        case VertexKind::Calc:
          if (g.peer[v] != kNoVertex) fail(describe_vertex(g, id) + " is a calc with a message peer");
          break;
        case VertexKind::Send:
        case VertexKind::Recv: {
          VertexId p = g.peer[v];
          VertexKind want = g.kind[v] == VertexKind::Send ? VertexKind::Recv : VertexKind::Send;
          if (p == kNoVertex) fail(describe_vertex(g, id) + " has no matching " + kind_name(want));
          if (p >= n || g.kind[p] != want || g.peer[p] != id)
            fail(describe_vertex(g, id) + " has an inconsistent message peer");
          if (!g.tag.empty() && g.tag[v] < 0)
            fail(describe_vertex(g, id) + fmt::format(" has negative tag {}", g.tag[v]));
          break;
        }
        default:
          fail(fmt::format("vertex #{} has unknown kind {}", v, static_cast<int>(g.kind[v])));
      }
      if (g.pred_begin[v] > g.pred_begin[v + 1]) fail("predecessor table decreases");
      for (uint32_t e : g.preds(id)) {
        VertexId p = Graph::pred_vertex(e);
        if (p >= n) fail(describe_vertex(g, id) + " depends on a vertex out of range");
        if (p == id) fail(describe_vertex(g, id) + " depends on itself");
        if (p < g.rank_begin[r] || p >= g.rank_begin[r + 1])
          fail(describe_vertex(g, id) + " depends on " + describe_vertex(g, p) + " of another rank");
      }
    }
  }
}

namespace {

bool is_rendezvous_send(const Graph& g, VertexId v, uint64_t rendezvous_above) {
  return g.kind[v] == VertexKind::Send && g.value[v] > rendezvous_above;
}

// The vertex whose processing makes `entry`'s dependency of v satisfied.
VertexId dependency_source(const Graph& g, uint32_t entry, uint64_t rendezvous_above) {
  VertexId p = Graph::pred_vertex(entry);
  if (!Graph::pred_is_irequires(entry) && is_rendezvous_send(g, p, rendezvous_above)) return g.peer[p];
  return p;
}

template <typename F>
void for_each_dependency(const Graph& g, VertexId v, uint64_t rendezvous_above, F&& f) {
  for (uint32_t e : g.preds(v)) f(dependency_source(g, e, rendezvous_above));
  if (g.kind[v] == VertexKind::Recv) f(g.peer[v]);
}

[[noreturn]] void report_cycle(const Graph& g, const std::vector<uint32_t>& indegree, uint64_t rendezvous_above) {
  // Every unprocessed vertex has an unprocessed dependency; walking those must revisit a vertex,
  // and the first revisited one lies on a cycle.
  VertexId start = kNoVertex;
  for (uint64_t v = 0; v < g.num_vertices(); ++v)
    if (indegree[v] > 0) {
      start = static_cast<VertexId>(v);
      break;
    }
  std::vector<bool> seen(g.num_vertices(), false);
  VertexId x = start;
  while (!seen[x]) {
    seen[x] = true;
    VertexId next = kNoVertex;
    for_each_dependency(g, x, rendezvous_above, [&](VertexId d) {
      if (next == kNoVertex && indegree[d] > 0) next = d;
    });
    x = next;
  }
  std::string hint = rendezvous_above == std::numeric_limits<uint64_t>::max()
                         ? ""
                         : " (with rendezvous sends, a cycle is a deadlock: two blocking large sends "
                           "waiting for each other; check the S parameter)";
  throw CycleError(fmt::format("{}: dependency cycle through {}{}", g.source.empty() ? "graph" : g.source,
                               describe_vertex(g, x), hint),
                   x);
}

}  // namespace

std::vector<VertexId> topological_order(const Graph& g, uint64_t rendezvous_above) {
  const uint64_t n = g.num_vertices();
  std::vector<uint32_t> rank(n);
  for (uint32_t r = 0; r < g.num_ranks; ++r)
    std::fill(rank.begin() + static_cast<int64_t>(g.rank_begin[r]),
              rank.begin() + static_cast<int64_t>(g.rank_begin[r + 1]), r);

  // Successor lists of the dependency relation, in CSR form.
  std::vector<uint32_t> indegree(n, 0);
  std::vector<uint64_t> succ_begin(n + 1, 0);
  for (uint64_t v = 0; v < n; ++v)
    for_each_dependency(g, static_cast<VertexId>(v), rendezvous_above, [&](VertexId d) {
      ++indegree[v];
      ++succ_begin[d + 1];
    });
  for (uint64_t v = 0; v < n; ++v) succ_begin[v + 1] += succ_begin[v];
  std::vector<VertexId> succ(succ_begin[n]);
  {
    std::vector<uint64_t> fill(succ_begin.begin(), succ_begin.end() - 1);
    for (uint64_t v = 0; v < n; ++v)
      for_each_dependency(g, static_cast<VertexId>(v), rendezvous_above,
                          [&](VertexId d) { succ[fill[d]++] = static_cast<VertexId>(v); });
  }

  // Kahn's algorithm with one ready stack per rank: a rank is drained before switching, which
  // keeps long runs of consecutive vertices of one rank in the order.
  std::vector<std::vector<VertexId>> ready(g.num_ranks);
  std::vector<uint32_t> active;
  for (uint64_t v = n; v-- > 0;)
    if (indegree[v] == 0) ready[rank[v]].push_back(static_cast<VertexId>(v));
  for (uint32_t r = g.num_ranks; r-- > 0;)
    if (!ready[r].empty()) active.push_back(r);

  std::vector<VertexId> order;
  order.reserve(n);
  while (!active.empty()) {
    uint32_t r = active.back();
    active.pop_back();
    auto& stack = ready[r];
    while (!stack.empty()) {
      VertexId v = stack.back();
      stack.pop_back();
      order.push_back(v);
      // Push in reverse so the lowest-numbered successor is taken next.
      for (uint64_t i = succ_begin[v + 1]; i-- > succ_begin[v];) {
        VertexId s = succ[i];
        if (--indegree[s] == 0) {
          uint32_t rs = rank[s];
          if (rs != r && ready[rs].empty()) active.push_back(rs);
          ready[rs].push_back(s);
        }
      }
    }
  }
  if (order.size() != n) report_cycle(g, indegree, rendezvous_above);
  return order;
}

}  // namespace llamp::graph
