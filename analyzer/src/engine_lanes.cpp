// Engine::evaluate_lanes: the pass of engine.cpp at up to Engine::kLanes values of the sweep
// variable at once. The exact curve needs ~2 evaluations per breakpoint, and one pass is mostly
// reading the graph (order, predecessors, kinds, sizes, peers), which the lanes share: a vertex's
// lanes sit in one cache line. The equations are model_terms.hpp's (docs/analyzer.md), lane by lane
// and with the same order of operations, so every lane is bit-identical to evaluate() at its point
// (test: EngineLanes.*). Machine noise is not laned: noisy passes go through evaluate_noisy().
#include <fmt/format.h>

#include "llamp/analyzer/engine.hpp"
#include "model_terms.hpp"

namespace llamp::analyzer {

using graph::Graph;
using graph::VertexId;
using graph::VertexKind;

namespace {

constexpr unsigned K = Engine::kLanes;

// A time and its slope in every lane (plain arrays: the pass is bound by memory, and GCC's
// vector types made it slower on baseline x86-64).
using Lanes = Engine::LaneState;

// max() keeping the larger slope on ties, lane by lane (detail::take).
inline void take(Lanes& a, const Lanes& b) {
  for (unsigned k = 0; k < K; ++k)
    if (b.v[k] > a.v[k] || (b.v[k] == a.v[k] && b.d[k] > a.d[k])) {
      a.v[k] = b.v[k];
      a.d[k] = b.d[k];
    }
}

struct LaneRoute {
  double lat[K], gap[K];
  double lat_d, gap_d;
};

struct LaneMessage {
  double o_send, o_recv;
  double bytes_term[K], bytes_term_d;
  const LaneRoute* route;
  bool rendezvous;
};

template <bool Uniform>
struct LaneTerms : detail::Overheads {
  LaneTerms(const Graph& g, const NetworkModel& model, const uint32_t* rank, const Lanes* state, const double* xL,
            const double* xG, Sweep sweep)
      : Overheads(model.loggp), g(g), model(model), rank(rank), state(state) {
    routes.resize(model.L_const.size());
    for (size_t r = 0; r < routes.size(); ++r) {
      for (unsigned k = 0; k < K; ++k) {
        routes[r].lat[k] = model.L_const[r] + model.L_coef[r] * xL[k];
        routes[r].gap[k] = model.G_const[r] + model.G_coef[r] * xG[k];
      }
      routes[r].lat_d = sweep == Sweep::L ? model.L_coef[r] : 0.0;
      routes[r].gap_d = sweep == Sweep::G ? model.G_coef[r] : 0.0;
    }
  }

  const LaneRoute& route(VertexId send, VertexId recv) const {
    return routes[detail::route_index<Uniform>(model, rank, send, recv)];
  }

  LaneMessage message(VertexId send) const {
    const uint64_t bytes = g.value[send];
    const double sb = bytes ? static_cast<double>(bytes - 1) : 0.0;
    const LaneRoute& c = route(send, g.peer[send]);
    LaneMessage m{o_send + sb * O, o_recv + sb * O, {}, sb * c.gap_d, &c, bytes > S};
    for (unsigned k = 0; k < K; ++k) m.bytes_term[k] = sb * c.gap[k];
    return m;
  }

  Lanes recv_end(VertexId r) const {
    const VertexId s = g.peer[r];
    const LaneMessage m = message(s);
    Lanes h = state[r];
    const Lanes& ss = state[s];
    Lanes arm, out;
    if (!m.rendezvous) {
      for (unsigned k = 0; k < K; ++k) {
        arm.v[k] = ss.v[k] + m.o_send + m.route->lat[k] + m.bytes_term[k];
        arm.d[k] = ss.d[k] + m.route->lat_d + m.bytes_term_d;
      }
      take(h, arm);
      for (unsigned k = 0; k < K; ++k) {
        out.v[k] = h.v[k] + m.o_recv;
        out.d[k] = h.d[k];
      }
      return out;
    }
    for (unsigned k = 0; k < K; ++k) {
      arm.v[k] = ss.v[k] + m.o_send + m.route->lat[k];
      arm.d[k] = ss.d[k] + m.route->lat_d;
    }
    take(h, arm);
    for (unsigned k = 0; k < K; ++k) {
      out.v[k] = h.v[k] + m.o_recv + o_rndv + 2 * m.route->lat[k] + m.bytes_term[k];
      out.d[k] = h.d[k] + 2 * m.route->lat_d + m.bytes_term_d;
    }
    return out;
  }

  Lanes end_of(VertexId u) const {
    Lanes out;
    switch (g.kind[u]) {
      case VertexKind::Calc: {
        const double cost = static_cast<double>(g.value[u]);
        for (unsigned k = 0; k < K; ++k) {
          out.v[k] = state[u].v[k] + cost;
          out.d[k] = state[u].d[k];
        }
        return out;
      }
      case VertexKind::Send: {
        const LaneMessage m = message(u);
        if (!m.rendezvous) {
          for (unsigned k = 0; k < K; ++k) {
            out.v[k] = state[u].v[k] + m.o_send;
            out.d[k] = state[u].d[k];
          }
          return out;
        }
        const Lanes e = recv_end(g.peer[u]);
        for (unsigned k = 0; k < K; ++k) {
          out.v[k] = e.v[k] + m.route->lat[k] + m.o_send;
          out.d[k] = e.d[k] + m.route->lat_d;
        }
        return out;
      }
      case VertexKind::Recv:
        return recv_end(u);
    }
    return Lanes{};
  }

  const Graph& g;
  const NetworkModel& model;
  const uint32_t* rank;
  const Lanes* state;
  std::vector<LaneRoute> routes;
};

}  // namespace

uint64_t Engine::lane_bytes() const { return g_.num_vertices() * sizeof(LaneState); }

void Engine::evaluate_lanes(std::span<const double> xs, Sweep sweep, std::span<Point> out) {
  if (xs.empty() || xs.size() > K || out.size() < xs.size())
    throw Error(fmt::format("evaluate_lanes takes 1 to {} points, got {}", K, xs.size()));
  double xL[K], xG[K];
  for (unsigned k = 0; k < K; ++k) {
    // Idle lanes repeat the last point (their results are dropped).
    const double x = xs[std::min<size_t>(k, xs.size() - 1)];
    xL[k] = sweep == Sweep::L ? x : base_xL_;
    xG[k] = sweep == Sweep::G ? x : base_xG_;
  }
  if (lane_state_.size() != g_.num_vertices()) lane_state_.resize(g_.num_vertices());
  Point p[K];
  if (model_.homogeneous())
    run_lanes<true>(xL, xG, sweep, p);
  else
    run_lanes<false>(xL, xG, sweep, p);
  evaluations_ += xs.size();
  for (size_t k = 0; k < xs.size(); ++k) out[k] = Point{xs[k], p[k].T, p[k].slope};
}

template <bool Uniform>
void Engine::run_lanes(const double* xL, const double* xG, Sweep sweep, Point* out) {
  const Graph& g = g_;
  const auto* pred_begin = g.pred_begin.data();
  const auto* pred = g.pred.data();
  const auto* kind = g.kind.data();
  const auto* value = g.value.data();
  const uint64_t S = model_.loggp.S_bytes;
  Lanes* st = lane_state_.data();
  const uint64_t* followed = followed_->data();
  const LaneTerms<Uniform> terms(g, model_, rank_->data(), st, xL, xG, sweep);

  Lanes T{};
  bool first = true;
  auto raise_T = [&](const Lanes& en) {
    if (first) {
      T = en;
      first = false;
    } else {
      take(T, en);
    }
  };
  for (VertexId v : *order_) {
    Lanes s{};
    for (uint64_t i = pred_begin[v], e = pred_begin[v + 1]; i < e; ++i) {
      const uint32_t entry = pred[i];
      const VertexId u = Graph::pred_vertex(entry);
      if (Graph::pred_is_irequires(entry))
        take(s, st[u]);
      else
        take(s, terms.end_of(u));
    }
    st[v] = s;
    VertexId ended = v;
    if (kind[v] == VertexKind::Send && value[v] > S) continue;
    if (kind[v] == VertexKind::Recv && value[g.peer[v]] > S) {
      if (!detail::is_followed(followed, v) || first) raise_T(terms.end_of(v));
      ended = g.peer[v];
    }
    if (detail::is_followed(followed, ended) && !first) continue;
    raise_T(terms.end_of(ended));
  }
  for (unsigned k = 0; k < K; ++k) out[k] = Point{0, T.v[k], T.d[k]};
}

template void Engine::run_lanes<true>(const double*, const double*, Sweep, Point*);
template void Engine::run_lanes<false>(const double*, const double*, Sweep, Point*);

}  // namespace llamp::analyzer
