#include "llamp/analyzer/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "llamp/analyzer/noise.hpp"
#include "model_terms.hpp"

namespace llamp::analyzer {

using graph::Graph;
using graph::VertexId;
using graph::VertexKind;

using detail::Lin;
using detail::take;

namespace {
std::vector<uint32_t> rank_table(const Graph& g, const NetworkModel& m) {
  std::vector<uint32_t> rank;
  if (m.homogeneous()) return rank;
  if (m.node_of_rank.size() != g.num_ranks)
    throw Error(fmt::format("the rank → node map has {} ranks, the graph {}", m.node_of_rank.size(), g.num_ranks));
  rank.resize(g.num_vertices());
  for (uint32_t r = 0; r < g.num_ranks; ++r)
    for (uint64_t v = g.rank_begin[r]; v < g.rank_begin[r + 1]; ++v) rank[v] = r;
  return rank;
}
std::vector<uint64_t> followed_bits(const Graph& g) {
  std::vector<uint64_t> bits((g.num_vertices() + 63) / 64, 0);
  for (uint32_t entry : g.pred)
    if (!Graph::pred_is_irequires(entry)) {
      const VertexId u = Graph::pred_vertex(entry);
      bits[u / 64] |= uint64_t{1} << (u % 64);
    }
  return bits;
}
}  // namespace

Engine::Engine(const Graph& g, NetworkModel model)
    : Engine(g, model, std::make_shared<const std::vector<VertexId>>(graph::topological_order(g, model.loggp.S_bytes)),
             std::make_shared<const std::vector<uint32_t>>(rank_table(g, model)),
             std::make_shared<const std::vector<uint64_t>>(followed_bits(g))) {
  for (uint64_t v = 0; v < g_.num_vertices(); ++v)
    if (g_.kind[v] == VertexKind::Send) {
      ++num_messages_;
      sum_sb_ += g_.value[v] ? g_.value[v] - 1 : 0;
    }
}

Engine::Engine(const Graph& g, NetworkModel model, std::shared_ptr<const std::vector<VertexId>> order,
               std::shared_ptr<const std::vector<uint32_t>> rank, std::shared_ptr<const std::vector<uint64_t>> followed)
    : g_(g),
      model_(std::move(model)),
      order_(std::move(order)),
      rank_(std::move(rank)),
      followed_(std::move(followed)) {
  base_xL_ = model_.homogeneous() ? model_.loggp.L_ns : 0.0;
  base_xG_ = model_.homogeneous() ? model_.loggp.G_ns_per_byte : 0.0;
  // The per-vertex state is allocated by the first evaluate(): twins that only evaluate lanes
  // never need it.
}

Engine Engine::twin() const {
  Engine t(g_, model_, order_, rank_, followed_);
  t.set_base(base_xL_, base_xG_);
  t.num_messages_ = num_messages_;
  t.sum_sb_ = sum_sb_;
  return t;
}

uint64_t Engine::memory_bytes() const {
  return order_->capacity() * sizeof(VertexId) + rank_->capacity() * sizeof(uint32_t) +
         followed_->capacity() * sizeof(uint64_t) + state32_.capacity() * sizeof(State32) +
         state64_.capacity() * sizeof(State64) + lane_state_.capacity() * sizeof(LaneState);
}

uint64_t Engine::twin_bytes() const { return g_.num_vertices() * sizeof(State32); }

bool Engine::slopes_fit_32(Sweep sweep) const {
  const std::vector<double>& coef = sweep == Sweep::L ? model_.L_coef : model_.G_coef;
  double largest = 0;
  for (double c : coef) {
    if (!(c >= 0) || c != std::floor(c) || c > 1e9) return false;
    largest = std::max(largest, c);
  }
  const double terms = sweep == Sweep::L ? 4.0 * static_cast<double>(num_messages_) : static_cast<double>(sum_sb_);
  return terms * largest < 4294967295.0;
}

uint32_t Engine::route_of_send(VertexId send) const { return model_.route_of(rank_of(send), rank_of(g_.peer[send])); }

double Engine::message_latency(VertexId send) const {
  uint32_t r = route_of_send(send);
  return model_.L_const[r] + model_.L_coef[r] * xL_;
}

double Engine::message_gap(VertexId send) const {
  uint32_t r = route_of_send(send);
  return model_.G_const[r] + model_.G_coef[r] * xG_;
}

Point Engine::evaluate(double xL, double xG, Sweep sweep) {
  ++evaluations_;
  xL_ = xL;
  xG_ = xG;
  return model_.homogeneous() ? run_any<true, false>(xL, xG, sweep, nullptr)
                              : run_any<false, false>(xL, xG, sweep, nullptr);
}

double Engine::evaluate_noisy(double xL, double xG, const NoiseShift& noise) {
  ++evaluations_;
  xL_ = xL;
  xG_ = xG;
  return (model_.homogeneous() ? run_any<true, true>(xL, xG, Sweep::L, &noise)
                               : run_any<false, true>(xL, xG, Sweep::L, &noise))
      .T;
}

// One state array at a time: switching frees the other, so memory holds 12 or 16 bytes per
// vertex, never both.
template <bool Uniform, bool Noisy>
Point Engine::run_any(double xL, double xG, Sweep sweep, const NoiseShift* noise) {
  narrow_ = slopes_fit_32(sweep);
  if (narrow_) {
    std::vector<State64>().swap(state64_);
    if (state32_.size() != g_.num_vertices()) state32_.resize(g_.num_vertices());
    return run<Uniform, Noisy, State32>(xL, xG, sweep, noise);
  }
  std::vector<State32>().swap(state32_);
  if (state64_.size() != g_.num_vertices()) state64_.resize(g_.num_vertices());
  return run<Uniform, Noisy, State64>(xL, xG, sweep, noise);
}

template <bool Uniform, bool Noisy, class St>
Point Engine::run(double xL, double xG, Sweep sweep, const NoiseShift* noise) {
  const Graph& g = g_;
  const auto* pred_begin = g.pred_begin.data();
  const auto* pred = g.pred.data();
  const auto* kind = g.kind.data();
  const auto* value = g.value.data();
  const uint64_t S = model_.loggp.S_bytes;
  detail::Terms<Uniform, Noisy, St> terms(*this, xL, xG, sweep, noise);
  St* st_ = terms.mutable_state();
  const uint64_t* followed = followed_->data();

  Lin T{0, 0};
  VertexId last = graph::kNoVertex;
  for (VertexId v : *order_) {
    Lin st{0, 0};
    if constexpr (Noisy) {
      // When the rank entered the call that waits for v's operations: the end of the calc v
      // requires beside them (the one before the completion call, docs/schedgen.md), and no
      // earlier than any of them was posted (a blocking call's operations start at its entry; a
      // synchronous send's acknowledgement receive has no edges and starts at 0).
      double entered = -1.0;
      for (uint64_t i = pred_begin[v], e = pred_begin[v + 1]; i < e; ++i) {
        const uint32_t entry = pred[i];
        const VertexId u = Graph::pred_vertex(entry);
        if (!Graph::pred_is_irequires(entry))
          entered = std::max(entered, kind[u] == VertexKind::Calc ? terms.end_of(u).v : static_cast<double>(st_[u].t));
      }
      for (uint64_t i = pred_begin[v], e = pred_begin[v + 1]; i < e; ++i) {
        const uint32_t entry = pred[i];
        const VertexId u = Graph::pred_vertex(entry);
        take(st, Graph::pred_is_irequires(entry) ? terms.start(u) : terms.waited_end(u, entered));
      }
    } else {
      for (uint64_t i = pred_begin[v], e = pred_begin[v + 1]; i < e; ++i) {
        const uint32_t entry = pred[i];
        const VertexId u = Graph::pred_vertex(entry);
        take(st, Graph::pred_is_irequires(entry) ? terms.start(u) : terms.end_of(u));
      }
    }
    st_[v].t = st.v;
    st_[v].d = static_cast<decltype(St::d)>(st.d);
    // A rendezvous send's end is known only once its receive has started: count it there.
    VertexId ended = v;
    if (kind[v] == VertexKind::Send && value[v] > S) continue;
    if (kind[v] == VertexKind::Recv && value[g.peer[v]] > S) {
      if (!detail::is_followed(followed, v) || last == graph::kNoVertex) {
        const Lin r = terms.end_of(v);
        if (r.v > T.v || (r.v == T.v && r.d > T.d) || last == graph::kNoVertex) {
          T = r;
          last = v;
        }
      }
      ended = g.peer[v];
    }
    if (detail::is_followed(followed, ended) && last != graph::kNoVertex) continue;
    const Lin en = terms.end_of(ended);
    if (en.v > T.v || (en.v == T.v && en.d > T.d) || last == graph::kNoVertex) {
      T = en;
      last = ended;
    }
  }
  last_ = last;
  return Point{sweep == Sweep::L ? xL : xG, T.v, T.d};
}

template Point Engine::run_any<true, false>(double, double, Sweep, const NoiseShift*);
template Point Engine::run_any<false, false>(double, double, Sweep, const NoiseShift*);
template Point Engine::run_any<true, true>(double, double, Sweep, const NoiseShift*);
template Point Engine::run_any<false, true>(double, double, Sweep, const NoiseShift*);

}  // namespace llamp::analyzer
