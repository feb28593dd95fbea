#pragma once
// `llamp analyze --solver clp`: the same Analysis (analysis.hpp) computed by the LP route, as the
// paper does it: T = min t with l >= L; λ_L and λ_G = reduced costs of l and g; critical
// latencies by Algorithm 2 (primal ranging of l); tolerance by max l (max g) with t <= bound.
// The report has the native route's JSON keys; `evaluations` counts LP solves. The critical-path
// report is the native engine's (a graph walk), so the LP route leaves it out; for
// heterogeneous models ρ_L and ρ_G need that path and are reported as NaN (JSON null).
#include "llamp/analyzer/analysis.hpp"
#include "llamp/analyzer/network.hpp"

namespace llamp::analyzer {

Analysis analyze_lp(const graph::Graph& g, const NetworkModel& model, const AnalyzeOptions& opt);

}  // namespace llamp::analyzer
