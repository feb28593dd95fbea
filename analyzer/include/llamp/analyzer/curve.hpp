#pragma once
// The runtime as a function of one sweep variable, T(x) = max_i (a_i·x + C_i) (paper 000, Eq. 3/4):
// convex, piecewise linear, non-decreasing. Everything here is exact on that structure.
#include <optional>
#include <vector>

#include "llamp/analyzer/engine.hpp"

namespace llamp::analyzer {

struct Segment {
  double x_begin = 0, x_end = 0;  // [x_begin, x_end]
  double T_begin = 0, T_end = 0;
  double slope = 0;  // dT/dx on the segment (λ_L or λ_G)
};

struct Curve {
  std::vector<double> breakpoints;  // critical latencies (or gaps) inside (x_min, x_max), increasing
  std::vector<Segment> segments;    // covering [x_min, x_max]
  uint64_t evaluations = 0;
};

// All breakpoints of T on [x_min, x_max] by tangent intersection: evaluate at both ends, intersect
// the two supporting lines, evaluate there; if T meets the lines at the intersection it is a
// breakpoint, otherwise recurse on both halves. About 2 evaluations per breakpoint. With
// threads > 1, that many engines (e and twins of it, Engine::twin) evaluate open intervals at
// once; the result is the same. e's per-vertex state is left at one of the evaluated points.
// With lanes > 1 the bisection runs breadth first and each engine evaluates Engine::kLanes points
// per pass (Engine::evaluate_lanes, lane_bytes() more memory per engine); lanes a round leaves
// idle evaluate extra points in the widest intervals. Same breakpoints, fewer passes over the graph.
Curve exact_curve(Engine& e, Sweep sweep, double x_min, double x_max, unsigned threads = 1, unsigned lanes = 1);

// Paper 000's Algorithm 2 counterpart with a resolution: evaluate at x_max, x_max − step, ...,
// x_min, and refine every interval where the slope changes with exact_curve (so the breakpoints
// are exact; `step` only sets the minimum number of evaluations, as a simulator sweep would).
Curve stepped_curve(Engine& e, Sweep sweep, double x_min, double x_max, double step);

// The largest x ≥ x0 with T(x) ≤ bound (T non-decreasing, convex): Newton steps from above,
// exact after finitely many steps. nullopt when T never exceeds the bound (no message on any
// path: the tolerance is unbounded). Requires T(x0) ≤ bound.
std::optional<double> max_x_within(Engine& e, Sweep sweep, double x0, double bound);

// T at x read off a curve (x inside its range).
double curve_value(const Curve& c, double x);

// The largest x of the curve's range with T(x) ≤ bound, read off its segments; nullopt when T
// stays within the bound up to the range's end (the answer lies beyond it) or exceeds it at the
// start.
std::optional<double> x_reaching(const Curve& c, double bound);

}  // namespace llamp::analyzer
