#include "llamp/analyzer/critical_path.hpp"

#include <algorithm>

#include "model_terms.hpp"

namespace llamp::analyzer {

using graph::Graph;
using graph::VertexId;
using graph::VertexKind;

namespace {

template <bool Uniform, class St>
CriticalPath walk(const Engine& e, size_t top) {
  const Graph& g = e.graph();
  detail::Terms<Uniform, false, St> terms(e, e.last_xL(), e.last_xG(), Sweep::L);
  CriticalPath cp;
  cp.rank_ns.assign(g.num_ranks, 0.0);
  std::vector<std::pair<VertexId, double>> costs;  // vertex → time it adds to the path

  auto add_message = [&](VertexId send, uint64_t lat_terms, bool with_bytes) {
    const detail::MessageCost m = terms.message(send);
    PairTraffic& p = cp.pairs[{e.rank_of(send), e.rank_of(g.peer[send])}];
    ++p.messages;
    p.latency_terms += lat_terms;
    cp.latency_terms += lat_terms;
    cp.latency_ns += static_cast<double>(lat_terms) * m.route->lat;
    if (with_bytes) {
      const double sb = g.value[send] ? static_cast<double>(g.value[send] - 1) : 0.0;
      p.gap_bytes += sb;
      cp.gap_bytes += sb;
      cp.bandwidth_ns += m.bytes_term;
    }
  };
  auto cpu = [&](VertexId v, double ns) {
    cp.rank_ns[e.rank_of(v)] += ns;
    costs.emplace_back(v, ns);
  };

  VertexId v = e.last_vertex();
  if (v == graph::kNoVertex) return cp;
  cp.T = terms.end_of(v).v;
  bool at_end = true;  // looking at end(v) (else start(v))
  for (uint64_t guard = 0; guard < 4 * g.num_vertices() + 4; ++guard) {
    if (at_end) {
      cp.vertices.push_back(v);
      switch (g.kind[v]) {
        case VertexKind::Calc:
          cpu(v, static_cast<double>(g.value[v]));
          at_end = false;
          break;
        case VertexKind::Send: {
          const detail::MessageCost m = terms.message(v);
          cpu(v, m.o_send);
          if (!m.rendezvous) {
            at_end = false;
          } else {
            add_message(v, 1, false);  // the acknowledgement back to the sender
            v = g.peer[v];             // ... sent when the receive completed
          }
          break;
        }
        case VertexKind::Recv: {
          const VertexId s = g.peer[v];
          const detail::MessageCost m = terms.message(s);
          cpu(v, terms.receive_cpu(m));
          if (m.rendezvous) add_message(s, 2, true);  // read request and data
          const detail::Lin own = terms.start(v);
          const detail::Lin arm = terms.sender_arm(s, m);
          if (detail::beats(arm, own)) {  // the same tie rule as the evaluation
            if (m.rendezvous)
              add_message(s, 1, false);  // request-to-send
            else
              add_message(s, 1, true);
            cpu(s, m.o_send);
            cp.vertices.push_back(s);
            v = s;
          }
          at_end = false;
          break;
        }
      }
    } else {
      // start(v): the predecessor attaining it, if any.
      detail::Lin best{0, 0};
      VertexId from = graph::kNoVertex;
      bool from_end = false;
      for (uint32_t entry : g.preds(v)) {
        const VertexId u = Graph::pred_vertex(entry);
        const bool ir = Graph::pred_is_irequires(entry);
        const detail::Lin c = ir ? terms.start(u) : terms.end_of(u);
        if (from == graph::kNoVertex || detail::beats(c, best)) {
          best = c;
          from = u;
          from_end = !ir;
        }
      }
      if (from == graph::kNoVertex || best.v < e.start_value(v) - 1e-9 * std::max(1.0, e.start_value(v)))
        break;  // path starts here
      v = from;
      at_end = from_end;
    }
  }
  std::reverse(cp.vertices.begin(), cp.vertices.end());
  cp.vertices.erase(std::unique(cp.vertices.begin(), cp.vertices.end()), cp.vertices.end());
  std::sort(costs.begin(), costs.end(), [](auto& a, auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < costs.size() && i < top; ++i) cp.top_vertices.push_back(costs[i]);
  return cp;
}

}  // namespace

CriticalPath critical_path(const Engine& e, size_t top) {
  if (e.narrow_slopes())
    return e.model().homogeneous() ? walk<true, Engine::State32>(e, top) : walk<false, Engine::State32>(e, top);
  return e.model().homogeneous() ? walk<true, Engine::State64>(e, top) : walk<false, Engine::State64>(e, top);
}

}  // namespace llamp::analyzer
