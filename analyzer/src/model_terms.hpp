#pragma once
// The LogGPS cost terms of docs/analyzer.md, shared by the evaluation pass (engine.cpp) and the
// critical-path walk (critical_path.cpp) so both read the model from one place.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "llamp/analyzer/engine.hpp"
#include "llamp/analyzer/noise.hpp"

namespace llamp::analyzer::detail {

// A time and its derivative with respect to the sweep variable.
struct Lin {
  double v, d;
};

// max() that keeps the larger slope on ties: the right-derivative of a max of lines.
inline bool beats(Lin b, Lin a) { return b.v > a.v || (b.v == a.v && b.d > a.d); }
inline void take(Lin& a, Lin b) {
  if (beats(b, a)) a = b;
}

// Bit v of the engine's followed set (Engine::followed_): something Requires v, so v's end cannot
// raise T. Shared by the point and the lane pass.
inline bool is_followed(const uint64_t* bits, graph::VertexId v) { return (bits[v / 64] >> (v % 64)) & 1u; }

// The LogGPS constants every message's cost reads (the route's L and G come separately).
struct Overheads {
  explicit Overheads(const LogGP& p)
      : o_send(p.o_send_ns), o_recv(p.o_recv_ns), O(p.O_ns_per_byte), o_rndv(p.o_rndv_ns), S(p.S_bytes) {}
  double o_send, o_recv, O, o_rndv;
  uint64_t S;
};

// Index of the route a message takes (homogeneous models have one).
template <bool Uniform>
inline uint32_t route_index(const NetworkModel& model, const uint32_t* rank, graph::VertexId send,
                            graph::VertexId recv) {
  if constexpr (Uniform) {
    (void)model, (void)rank, (void)send, (void)recv;
    return 0;
  } else {
    return model.route_of(rank[send], rank[recv]);
  }
}

// Per-route message costs at one evaluation point.
struct RouteCost {
  double lat, lat_d, gap, gap_d;
};

// The parts of one message's cost (s = the send's bytes, sb = max(s − 1, 0)).
struct MessageCost {
  double o_send, o_recv;            // o_send + sb·O, o_recv + sb·O (a rendezvous adds o_rndv: receive_cpu)
  double bytes_term, bytes_term_d;  // B(s) = sb·G and its slope
  const RouteCost* route;
  bool rendezvous;
};

// Noisy: a rank notices what it waited for from another rank only after the detour covering that
// moment, if the detour began after the rank began waiting (the operation's start, or the entry of
// the completion call that waits for it: waited_end(); noise.hpp); computation is not stretched.
// St: the engine's per-vertex state (Engine::State32 or State64, the one its last evaluate()
// filled: Engine::narrow_slopes()).
template <bool Uniform, bool Noisy, class St>
struct Terms : Overheads {
  Terms(const Engine& e, double xL, double xG, Sweep sweep, const NoiseShift* noise_shift = nullptr)
      : Overheads(e.model_.loggp),
        g(e.g_),
        state(state_of(e)),
        rank(e.rank_->data()),
        model(e.model_),
        noise(noise_shift) {
    routes.resize(model.L_const.size());
    for (size_t r = 0; r < routes.size(); ++r) {
      routes[r].lat = model.L_const[r] + model.L_coef[r] * xL;
      routes[r].gap = model.G_const[r] + model.G_coef[r] * xG;
      routes[r].lat_d = sweep == Sweep::L ? model.L_coef[r] : 0.0;
      routes[r].gap_d = sweep == Sweep::G ? model.G_coef[r] : 0.0;
    }
  }

  const RouteCost& route(graph::VertexId send, graph::VertexId recv) const {
    return routes[route_index<Uniform>(model, rank, send, recv)];
  }

  MessageCost message(graph::VertexId send) const {
    const uint64_t bytes = g.value[send];
    const double sb = bytes ? static_cast<double>(bytes - 1) : 0.0;
    const RouteCost& c = route(send, g.peer[send]);
    return MessageCost{o_send + sb * O, o_recv + sb * O, sb * c.gap, sb * c.gap_d, &c, bytes > S};
  }

  // The arm of the receive's max() that comes from the sender: arrival of an eager message, or
  // arrival of the request-to-send of a rendezvous one.
  Lin sender_arm(graph::VertexId s, const MessageCost& m) const {
    const Lin ss = start(s);
    if (!m.rendezvous)
      return Lin{ss.v + m.o_send + m.route->lat + m.bytes_term, ss.d + m.route->lat_d + m.bytes_term_d};
    return Lin{ss.v + m.o_send + m.route->lat, ss.d + m.route->lat_d};
  }

  // When the rank of v, waiting since `since` (the operation's start), notices what becomes due at
  // t (a polling loop's receive: at once, see polled_receives()).
  double notice(graph::VertexId v, double t, double since) const {
    if constexpr (Noisy) {
      if (noise->noticed_by_poll(v)) return t;
      if constexpr (Uniform)
        return noise->notice(v, g.rank_of(v), t, since);
      else
        return noise->notice(v, rank[v], t, since);
    }
    (void)v;
    (void)since;
    return t;
  }

  Lin recv_end(graph::VertexId r) const {
    if constexpr (Noisy) {
      return waited_recv_end(r, state[r].t);
    } else {
      const graph::VertexId s = g.peer[r];
      const MessageCost m = message(s);
      Lin h = start(r);
      take(h, sender_arm(s, m));
      if (!m.rendezvous) return Lin{h.v + m.o_recv, h.d};
      return Lin{h.v + m.o_recv + o_rndv + 2 * m.route->lat + m.bytes_term, h.d + 2 * m.route->lat_d + m.bytes_term_d};
    }
  }

  // Noisy: the end of receive r, whose rank waits for it from `posted` on (its start, or later if
  // it entered the completion call later: waited_end()).
  Lin waited_recv_end(graph::VertexId r, double posted) const {
    const graph::VertexId s = g.peer[r];
    const MessageCost m = message(s);
    Lin h = start(r);
    const Lin arm = sender_arm(s, m);
    if (!m.rendezvous) {
      if (beats(arm, h)) h = Lin{notice(r, arm.v, posted), arm.d};  // it waited for the arrival
      return Lin{h.v + m.o_recv, h.d};
    }
    take(h, arm);
    return Lin{notice(r, h.v + 2 * m.route->lat + m.bytes_term, posted) + m.o_recv + o_rndv,
               h.d + 2 * m.route->lat_d + m.bytes_term_d};
  }

  // The receive's own CPU time: o_r, and for a rendezvous its handshake o_rndv (added only on the
  // rendezvous branches above, so an eager message's path is the same as without it).
  double receive_cpu(const MessageCost& m) const { return m.rendezvous ? m.o_recv + o_rndv : m.o_recv; }

  Lin end_of(graph::VertexId u) const {
    switch (g.kind[u]) {
      case graph::VertexKind::Calc:
        return Lin{state[u].t + static_cast<double>(g.value[u]), static_cast<double>(state[u].d)};
      case graph::VertexKind::Send: {
        const MessageCost m = message(u);
        if (!m.rendezvous) return Lin{state[u].t + m.o_send, static_cast<double>(state[u].d)};
        const Lin e = recv_end(g.peer[u]);
        return Lin{notice(u, e.v + m.route->lat, state[u].t) + m.o_send, e.d + m.route->lat_d};
      }
      case graph::VertexKind::Recv:
        return recv_end(u);
    }
    return Lin{0, 0};
  }

  // Noisy: the end of operation u for a vertex whose rank entered the call that waits for it at
  // `entered` (Engine::run). The wait counts from the later of that and u's start: a detour that
  // began before found the rank computing. A function of its own so that end_of(), which the
  // pass without noise runs, stays as it was.
  Lin waited_end(graph::VertexId u, double entered) const {
    if (g.kind[u] == graph::VertexKind::Recv)
      return waited_recv_end(u, std::max(static_cast<double>(state[u].t), entered));
    if (g.kind[u] == graph::VertexKind::Send) {
      const MessageCost m = message(u);
      if (m.rendezvous) {
        const Lin e = recv_end(g.peer[u]);  // the receiver's own wait, from its start
        return Lin{notice(u, e.v + m.route->lat, std::max(static_cast<double>(state[u].t), entered)) + m.o_send,
                   e.d + m.route->lat_d};
      }
    }
    return end_of(u);
  }

  static const St* state_of(const Engine& e) {
    if constexpr (std::is_same_v<St, Engine::State32>)
      return e.state32_.data();
    else
      return e.state64_.data();
  }
  // The pass writes the state it reads through.
  St* mutable_state() const { return const_cast<St*>(state); }

  const graph::Graph& g;
  const St* state;
  Lin start(graph::VertexId v) const { return Lin{state[v].t, static_cast<double>(state[v].d)}; }
  const uint32_t* rank;
  const NetworkModel& model;
  const NoiseShift* noise;
  std::vector<RouteCost> routes;
};

}  // namespace llamp::analyzer::detail
