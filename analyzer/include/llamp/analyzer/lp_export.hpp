#pragma once
// Writes the LP of lp_model.hpp for other solvers (Gurobi, CPLEX, glpsol, clp): CPLEX LP format
// for ".lp" paths, MPS (free-format numbers, 17 significant digits) for ".mps" paths. Columns are
// named l (latency), g (gap per byte), t (runtime, the objective) and y_r<rank>_v<local>_<start|
// end|hs> for the times of vertex <local> of rank <rank>; the bounds l >= L and g >= G carry the
// parameters the file was written for. Solving it (min t) gives T; the reduced cost of l is λ_L.
#include <string>

#include "llamp/analyzer/lp_model.hpp"

namespace llamp::analyzer::lp {

enum class LpFileFormat { CplexLp, Mps };

// ".lp" → CplexLp, ".mps" → Mps; anything else throws llamp::Error naming the path.
LpFileFormat lp_format_for_path(const std::string& path);

// Throws llamp::Error naming the path if it cannot be written.
void write_lp_file(const graph::Graph& g, const LpProblem& lp, const std::string& path);

}  // namespace llamp::analyzer::lp
