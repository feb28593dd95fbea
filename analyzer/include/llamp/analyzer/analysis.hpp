#pragma once
// One full analysis of a graph (what `llamp analyze` prints): T, λ_L, ρ_L, λ_G, ρ_G at the base
// point, the critical latencies and the T(L) curve over a range, latency and bandwidth tolerance,
// and the critical path. Reports as text, JSON and CSV.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llamp/analyzer/critical_path.hpp"
#include "llamp/analyzer/curve.hpp"

namespace llamp::analyzer {

struct AnalyzeOptions {
  double x_min = 0, x_max = 100000;  // range of the latency sweep variable, ns
  double step = 0;                   // > 0: Algorithm 2 style sweep with this resolution
  std::vector<double> tolerance_percent{1, 2, 5};
  bool critical_path = true;
  size_t top = 10;
  unsigned threads = 0;  // engines evaluating the exact curve at once; 0: auto (curve_plan)
};

// How the exact curve runs: `threads` engines at once, each evaluating `lanes` points per pass.
struct CurvePlan {
  unsigned threads = 1, lanes = 1;
};
// Engines: `requested` if > 0, else one per hardware thread. Lanes (Engine::kLanes points per
// pass, ~2x faster per point) where half the available memory holds every engine's lane state
// (Engine::lane_bytes() each); otherwise single points, and with `requested` = 0 only as many
// extra engines as half the memory holds (Engine::twin_bytes() each).
CurvePlan curve_plan(const Engine& e, unsigned requested);

struct Tolerance {
  double percent = 0;
  double T_bound = 0;
  std::optional<double> max_L;  // largest latency variable with T ≤ bound (nullopt: unbounded)
  std::optional<double> max_G;  // largest G with T ≤ bound
};

struct Analysis {
  // Graph facts.
  uint32_t ranks = 0;
  uint64_t vertices = 0, edges = 0, messages = 0;
  std::string source;
  bool homogeneous = true;
  LogGP loggp;
  // At the base point.
  double L0 = 0, G0 = 0;  // base of the sweep variables (homogeneous: L and G; else ΔL = ΔG = 0)
  double T = 0, lambda_L = 0, lambda_G = 0, rho_L = 0, rho_G = 0;
  // Over the range.
  Curve curve;
  std::vector<Tolerance> tolerance;
  std::optional<CriticalPath> path;
  uint64_t evaluations = 0;
  double seconds = 0;
};

Analysis analyze(Engine& e, const AnalyzeOptions& opt);

nlohmann::json to_json(const Analysis& a, const graph::Graph& g);
std::string to_text(const Analysis& a, const graph::Graph& g);
// One row per segment end: x_ns, delta_L_ns, T_ns, lambda_L, rho_L.
std::string curve_csv(const Analysis& a);

}  // namespace llamp::analyzer
