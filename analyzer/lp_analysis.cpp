// The LP route's full analysis (lp_analysis.hpp), filling the native route's Analysis record.
#include "llamp/analyzer/lp_analysis.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "llamp/analyzer/lp_model.hpp"
#include "llamp/analyzer/lp_solver.hpp"
#include "llamp/error.hpp"

namespace llamp::analyzer {

namespace {

// T(L) as segments between the critical latencies, each on the line of the first LP solved in it.
Curve curve_from_walk(const lp::CriticalLatencyWalk& walk, double x_min, double x_max) {
  Curve c;
  std::vector<double> xs{x_min};
  for (const lp::CriticalLatency& k : walk.critical) {
    if (k.L > x_min && k.L < x_max) {
      c.breakpoints.push_back(k.L);
      xs.push_back(k.L);
    }
  }
  xs.push_back(x_max);
  // Each segment takes the line of the run solved inside it (runs[k] lies between the critical
  // latencies around it; a critical latency exactly at x_min or x_max leaves one run outside).
  for (size_t i = 0; i + 1 < xs.size(); ++i) {
    const lp::LpPoint* best = nullptr;
    double best_distance = std::numeric_limits<double>::infinity();
    for (const lp::LpPoint& r : walk.runs) {
      const double distance = r.L < xs[i] ? xs[i] - r.L : (r.L > xs[i + 1] ? r.L - xs[i + 1] : 0.0);
      if (distance < best_distance) {
        best_distance = distance;
        best = &r;
      }
    }
    if (!best) throw Error("LP route: Algorithm 2 solved no LP");
    const lp::LpPoint& r = *best;
    c.segments.push_back(
        Segment{xs[i], xs[i + 1], r.T + r.lambda_L * (xs[i] - r.L), r.T + r.lambda_L * (xs[i + 1] - r.L), r.lambda_L});
  }
  c.evaluations = walk.solves.size();
  return c;
}

}  // namespace

Analysis analyze_lp(const graph::Graph& g, const NetworkModel& model, const AnalyzeOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!(opt.x_max >= opt.x_min) || opt.x_min < 0)
    throw Error(fmt::format("--range {}:{} must satisfy 0 ≤ min ≤ max", opt.x_min, opt.x_max));
  Analysis a;
  a.ranks = g.num_ranks;
  a.vertices = g.num_vertices();
  a.edges = g.num_edges();
  a.messages = g.num_messages();
  a.source = g.source;
  a.homogeneous = model.homogeneous();
  a.loggp = model.loggp;
  // The sweep variables' base values, as the native engine takes them.
  a.L0 = a.homogeneous ? model.loggp.L_ns : 0.0;
  a.G0 = a.homogeneous ? model.loggp.G_ns_per_byte : 0.0;

  const lp::LpProblem problem = lp::build_lp(g, model, lp::LpBounds{a.L0, a.G0});
  lp::LpSolver solver(problem);
  uint64_t solves = 0;
  const lp::LpPoint base = solver.solve_at(a.L0);
  ++solves;
  a.T = base.T;
  a.lambda_L = base.lambda_L;
  a.lambda_G = base.lambda_G;
  if (a.homogeneous) {
    a.rho_L = a.T > 0 ? a.L0 * a.lambda_L / a.T : 0.0;
    a.rho_G = a.T > 0 ? a.G0 * a.lambda_G / a.T : 0.0;
  } else {
    a.rho_L = a.rho_G = std::numeric_limits<double>::quiet_NaN();
  }

  const lp::CriticalLatencyWalk walk = solver.critical_latencies(opt.x_min, opt.x_max, opt.step);
  solves += walk.solves.size();
  a.curve = curve_from_walk(walk, opt.x_min, opt.x_max);
  for (double pct : opt.tolerance_percent) {
    if (!(pct >= 0)) throw Error(fmt::format("--tolerance {}: percentages must be non-negative", pct));
    Tolerance t;
    t.percent = pct;
    t.T_bound = a.T * (1 + pct / 100);
    t.max_L = solver.max_latency(t.T_bound, a.L0);
    t.max_G = solver.max_gap(t.T_bound, a.G0);
    solves += 2;
    a.tolerance.push_back(t);
  }
  a.evaluations = solves;
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return a;
}

}  // namespace llamp::analyzer
