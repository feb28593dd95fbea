#pragma once
// The native evaluation engine: T, ∂T/∂L and ∂T/∂G of an execution graph under LogGPS in one
// topological pass (model and equations in docs/analyzer.md, identical to the LP route's):
//   start(v) = max(0, end(p) for Requires preds p, start(p) for IRequires preds p)
//   calc:          end = start + cost
//   eager send:    end = start + o_s                  (s ≤ S)
//   eager recv:    end = max(start, start(send) + o_s + L + B(s)) + o_r
//   rendezvous:    h = max(start(recv), start(send) + o_s + L)       (s > S)
//                  end(recv) = h + o_r + 2L + B(s);   end(send) = end(recv) + L + o_s
//   B(s) = (s−1)·G for s ≥ 1, 0 for s = 0;  o_s = o_send + (s−1)·O,  o_r = o_recv + (s−1)·O
//   (+ o_rndv for a rendezvous receive: its handshake, measured by llamp-loggp)
//   T = max over vertices of end(v)
// Every time is carried as (value, slope) where slope is the derivative with respect to the sweep
// variable (xL or xG, network.hpp); a max() with tied values keeps the larger slope, so the
// result is the right-derivative of the convex piecewise-linear T.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "llamp/analyzer/network.hpp"
#include "llamp/graph.hpp"

namespace llamp::analyzer {

struct NoiseShift;  // noise.hpp

namespace detail {
template <bool Uniform, bool Noisy, class St>
struct Terms;
}

enum class Sweep : uint8_t { L, G };

struct Point {
  double x = 0;      // value of the sweep variable
  double T = 0;      // runtime, ns
  double slope = 0;  // right-derivative dT/dx (λ_L: latency terms, λ_G: bytes on the critical path)
};

class Engine {
 public:
  // Computes the topological order for the model's S once (throws graph::CycleError).
  Engine(const graph::Graph& g, NetworkModel model);
  // Another engine on the same graph and model, for evaluating at other points concurrently: it
  // shares the topological order and the rank table (read-only) and has its own per-vertex state.
  Engine twin() const;

  // T at (xL, xG), with the slope with respect to `sweep`. Keeps per-vertex start times for
  // critical_path() until the next call.
  Point evaluate(double xL, double xG, Sweep sweep);
  // T at (xL, xG) with a rank noticing each remote completion it waited for only after the detour
  // covering it (noise.hpp). Leaves the noisy run's start times (not for critical_path()).
  double evaluate_noisy(double xL, double xG, const NoiseShift& noise);
  // Shorthands: the sweep variable at x, the other at the model's base value.
  Point at_L(double xL) { return evaluate(xL, base_xG(), Sweep::L); }
  Point at_G(double xG) { return evaluate(base_xL(), xG, Sweep::G); }
  uint64_t evaluations() const { return evaluations_; }

  // Points evaluate_lanes() takes at once.
  static constexpr unsigned kLanes = 4;
  // T and its slope at 1..kLanes values of the sweep variable (the other at its base value) in
  // one pass that reads the graph once for all of them (engine_lanes.cpp); each out[k] is what
  // at_L/at_G(xs[k]) returns. Keeps no per-vertex state for critical_path(); its own state,
  // lane_bytes(), is allocated on the first call.
  void evaluate_lanes(std::span<const double> xs, Sweep sweep, std::span<Point> out);
  uint64_t lane_bytes() const;
  // Start time and slope of a vertex, side by side: the pass reads both for every predecessor.
  // The slope is a count (latency terms, or bytes) and fits 32 bits in almost every L sweep:
  // 12 bytes per vertex instead of 16, which keeps the analyzer within 40 bytes per event.
  struct [[gnu::packed]] State32 {
    double t;
    uint32_t d;
  };
  struct State64 {
    double t, d;
  };
  // A vertex's times and slopes in evaluate_lanes(): one cache line.
  struct alignas(64) LaneState {
    double v[kLanes], d[kLanes];
  };

  // The base values of the sweep variables (homogeneous: the model's L and G; heterogeneous: 0).
  double base_xL() const { return base_xL_; }
  double base_xG() const { return base_xG_; }
  void set_base(double xL, double xG) {
    base_xL_ = xL;
    base_xG_ = xG;
  }

  const graph::Graph& graph() const { return g_; }
  const NetworkModel& model() const { return model_; }
  NetworkModel& model() { return model_; }
  std::span<const graph::VertexId> order() const { return *order_; }

  // Results of the last evaluate(): per-vertex start time and its slope, and the vertex whose end
  // is T.
  double start_value(graph::VertexId v) const { return narrow_ ? state32_[v].t : state64_[v].t; }
  double start_slope(graph::VertexId v) const { return narrow_ ? state32_[v].d : state64_[v].d; }
  // The last evaluate() kept slopes in 32 bits (see State32).
  bool narrow_slopes() const { return narrow_; }
  graph::VertexId last_vertex() const { return last_; }
  double last_xL() const { return xL_; }
  double last_xG() const { return xG_; }

  // Message latency and per-byte gap of the message sent by `send` at the last evaluation point.
  double message_latency(graph::VertexId send) const;
  double message_gap(graph::VertexId send) const;
  uint32_t route_of_send(graph::VertexId send) const;
  uint32_t rank_of(graph::VertexId v) const { return rank_->empty() ? g_.rank_of(v) : (*rank_)[v]; }

  // Working memory of the engine in bytes (order + followed bits + the per-vertex state of
  // evaluate() and of evaluate_lanes(), as far as allocated), and what a twin() evaluating single
  // points adds (one evaluating lanes adds lane_bytes()).
  uint64_t memory_bytes() const;
  uint64_t twin_bytes() const;

 private:
  template <bool Uniform, bool Noisy, class St>
  friend struct detail::Terms;
  template <bool Uniform, bool Noisy, class St>
  Point run(double xL, double xG, Sweep sweep, const NoiseShift* noise);
  template <bool Uniform, bool Noisy>
  Point run_any(double xL, double xG, Sweep sweep, const NoiseShift* noise);
  // Every slope of an evaluation in `sweep` is an integer below 2^32: the route coefficients of
  // the sweep variable are non-negative integers, and even all messages' terms together stay
  // below 2^32 (at most 4 latency terms per message, or all bytes once).
  bool slopes_fit_32(Sweep sweep) const;
  template <bool Uniform>
  void run_lanes(const double* xL, const double* xG, Sweep sweep, Point* out);

  const graph::Graph& g_;
  NetworkModel model_;
  Engine(const graph::Graph& g, NetworkModel model, std::shared_ptr<const std::vector<graph::VertexId>> order,
         std::shared_ptr<const std::vector<uint32_t>> rank, std::shared_ptr<const std::vector<uint64_t>> followed);
  std::shared_ptr<const std::vector<graph::VertexId>> order_;
  std::shared_ptr<const std::vector<uint32_t>> rank_;  // only for heterogeneous models (else empty)
  // Bit v set: some vertex Requires v, so it ends no earlier than v (with a slope no smaller on a
  // tie) and v's end cannot raise T. The pass skips those ends instead of computing them twice.
  std::shared_ptr<const std::vector<uint64_t>> followed_;
  uint64_t num_messages_ = 0, sum_sb_ = 0;  // for slopes_fit_32
  bool narrow_ = true;                      // which state the last evaluate() filled
  std::vector<State32> state32_;
  std::vector<State64> state64_;
  std::vector<LaneState> lane_state_;
  graph::VertexId last_ = graph::kNoVertex;
  double xL_ = 0, xG_ = 0, base_xL_ = 0, base_xG_ = 0;
  uint64_t evaluations_ = 0;
};

}  // namespace llamp::analyzer
