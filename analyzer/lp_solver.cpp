// Clp side of the LP route: load, solve, read reduced costs and ranges, Algorithm 2, tolerance.
#include "llamp/analyzer/lp_solver.hpp"

#include <ClpSimplex.hpp>
#include <ClpSolve.hpp>
#include <CoinPackedMatrix.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "llamp/error.hpp"

namespace llamp::analyzer::lp {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Algorithm 2's ε, in ns: far above Clp's primal tolerance; growing to at most 10 ps where Clp
// keeps a basis past the end of its range (two critical latencies closer than that merge).
constexpr double kMinEpsilon = 1e-6;
constexpr double kMaxEpsilon = 1e-2;

double clp_bound(double v) {
  if (v == kInf) return COIN_DBL_MAX;
  if (v == -kInf) return -COIN_DBL_MAX;
  return v;
}

// Reduced costs are sums of ±1 and integer byte counts along paths; they are compared with a
// tolerance far below 1 message and far above Clp's dual tolerance (1e-7).
bool same_slope(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(a)); }

const char* status_text(int status) {
  switch (status) {
    case 0:
      return "optimal";
    case 1:
      return "primal infeasible";
    case 2:
      return "dual infeasible (unbounded)";
    case 3:
      return "stopped on iterations or time";
    case 4:
      return "stopped due to errors";
    default:
      return "unknown status";
  }
}

// Where the slope changes between two solves with different λ_L. The range of the basis above
// ends at the breakpoint in exact arithmetic, but Clp accepts a basis as optimal while its primal
// infeasibility is within tolerance, so the range can end a few ε early or late. The two solves
// give the supporting lines of T on either side; where they cross is the breakpoint (exact when
// the walk left no unexplored stretch between the regions, i.e. with step = 0).
double breakpoint(const LpPoint& above, const LpPoint& below) {
  if (same_slope(above.lambda_L, below.lambda_L)) return below.L;
  const double x =
      (below.T - above.T + above.lambda_L * above.L - below.lambda_L * below.L) / (above.lambda_L - below.lambda_L);
  if (std::isfinite(x) && x >= below.L && x <= above.L) return x;
  return std::clamp(above.feasible_low, below.L, above.L);
}

}  // namespace

std::unique_ptr<ClpSimplex> make_clp_model(const LpProblem& lp) {
  std::vector<CoinBigIndex> starts(lp.row_start.begin(), lp.row_start.end());
  std::vector<int> lengths(lp.num_rows());
  for (int r = 0; r < lp.num_rows(); ++r) lengths[r] = static_cast<int>(starts[r + 1] - starts[r]);
  // Row-ordered matrix (isColOrdered = false): minor dimension = columns.
  CoinPackedMatrix matrix(false, lp.num_cols(), lp.num_rows(), lp.num_nonzeros(), lp.row_value.data(),
                          lp.row_index.data(), starts.data(), lengths.data());
  std::vector<double> col_lower(lp.col_lower), col_upper(lp.col_upper.size());
  std::transform(lp.col_upper.begin(), lp.col_upper.end(), col_upper.begin(), clp_bound);
  std::vector<double> row_upper(lp.num_rows(), COIN_DBL_MAX);
  auto model = std::make_unique<ClpSimplex>();
  model->setLogLevel(0);
  model->loadProblem(matrix, col_lower.data(), col_upper.data(), lp.objective.data(), lp.row_lower.data(),
                     row_upper.data());
  model->setOptimizationDirection(1.0);
  return model;
}

LpSolver::LpSolver(const LpProblem& lp, LpStart start) : lp_(lp), clp_(make_clp_model(lp)), start_(start) {}

void LpSolver::crash_basis(double L) {
  ClpSimplex& m = *clp_;
  std::vector<double> x(lp_.col_lower);
  x[lp_.col_l] = L;
  std::vector<int> binding(lp_.num_cols(), -1);
  // Rows are grouped by the column they bound (its coefficient +1 comes first) and read only
  // columns created before it; t's rows come last.
  for (int r = 0; r < lp_.num_rows(); ++r) {
    const int64_t b = lp_.row_start[r], e = lp_.row_start[r + 1];
    const int owner = lp_.row_index[b];
    double need = lp_.row_lower[r];
    for (int64_t k = b + 1; k < e; ++k) need -= lp_.row_value[k] * x[lp_.row_index[k]];
    if (binding[owner] < 0 || need > x[owner]) {
      x[owner] = need;
      binding[owner] = r;
    }
  }
  for (int r = 0; r < lp_.num_rows(); ++r) m.setRowStatus(r, ClpSimplex::basic);
  for (int c = 0; c < lp_.num_cols(); ++c) {
    if (binding[c] >= 0) {
      m.setColumnStatus(c, ClpSimplex::basic);
      m.setRowStatus(binding[c], ClpSimplex::atLowerBound);
    } else {
      m.setColumnStatus(c, ClpSimplex::atLowerBound);
    }
  }
  std::copy(x.begin(), x.end(), m.primalColumnSolution());
}
LpSolver::~LpSolver() = default;

LpPoint LpSolver::solve_at(double L) {
  ClpSimplex& m = *clp_;
  m.setColumnLower(lp_.col_l, L);
  // Re-crashing at every L costs one forward pass and one factorization; a warm dual simplex
  // from the previous L took ~1500 iterations (54 s) on a 1 M-vertex graph for a 500 ns change.
  if (start_ == LpStart::CrashBasis) crash_basis(L);
  if (!solved_once_ && start_ == LpStart::Presolve) {
    ClpSolve options;
    options.setSolveType(ClpSolve::useDual);
    options.setPresolveType(ClpSolve::presolveOn);
    m.initialSolve(options);
  } else {
    m.dual();
  }
  solved_once_ = true;
  if (m.status() != 0)
    throw Error(fmt::format("{}: Clp did not solve the LP at L = {} ns: {}", lp_.source, L, status_text(m.status())));
  LpPoint pt;
  pt.L = L;
  pt.T = m.primalColumnSolution()[lp_.col_t];
  pt.lambda_L = m.dualColumnSolution()[lp_.col_l];
  pt.lambda_G = m.dualColumnSolution()[lp_.col_g];
  pt.iterations = m.numberIterations();
  if (m.getColumnStatus(lp_.col_l) == ClpSimplex::basic) {
    // l is basic: its bound is not active, lowering it changes nothing, raising it past l's
    // value is where the basis would change.
    pt.feasible_low = -kInf;
    pt.feasible_high = std::max(L, m.primalColumnSolution()[lp_.col_l]);
  } else {
    int which = lp_.col_l, seq_up = -1, seq_down = -1;
    double up = 0, down = 0;
    if (m.primalRanging(1, &which, &up, &seq_up, &down, &seq_down) != 0)
      throw Error(fmt::format("{}: Clp primal ranging failed at L = {} ns", lp_.source, L));
    pt.feasible_low = down >= 1e300 ? -kInf : L - down;
    pt.feasible_high = up >= 1e300 ? kInf : L + up;
  }
  return pt;
}

CriticalLatencyWalk LpSolver::critical_latencies(double L_min, double L_max, double step) {
  if (!(L_min <= L_max)) throw Error(fmt::format("critical latencies: L_min {} > L_max {}", L_min, L_max));
  if (!(step >= 0)) throw Error("critical latencies: step must be >= 0");
  CriticalLatencyWalk walk;
  // The first (highest-L) solve of the current slope: Clp may keep a basis a little past the end
  // of its range (it accepts primal infeasibility within tolerance), so points of a run taken
  // near its lower end can sit slightly off T; the first one of the run is a clean supporting line.
  LpPoint run_first;
  double epsilon = kMinEpsilon;
  double L = L_max;
  for (;;) {
    const LpPoint pt = solve_at(L);
    if (walk.solves.empty()) {
      run_first = pt;
      walk.runs.push_back(pt);
    } else if (!same_slope(walk.solves.back().lambda_L, pt.lambda_L)) {
      walk.critical.push_back({breakpoint(run_first, pt), pt.lambda_L, walk.solves.back().lambda_L});
      run_first = pt;
      walk.runs.push_back(pt);
    }
    walk.solves.push_back(pt);
    if (pt.feasible_low <= L_min || L <= L_min) break;
    // An empty range means the basis was kept within tolerance past its end: step a little
    // further each time (ε doubles up to kMaxEpsilon) until Clp changes basis.
    const bool degenerate = pt.feasible_low >= L - kMinEpsilon;
    epsilon = degenerate ? std::min(2 * epsilon, kMaxEpsilon) : kMinEpsilon;
    double next = std::min(L - step, pt.feasible_low - epsilon);
    next = std::max(next, L_min);
    if (!(next < L)) break;
    L = next;
  }
  std::reverse(walk.critical.begin(), walk.critical.end());
  return walk;
}

std::optional<double> LpSolver::max_latency(double T_bound, double L_min) {
  return maximize(lp_.col_l, L_min, lp_.col_g, lp_.base.xG, T_bound);
}

std::optional<double> LpSolver::max_gap(double T_bound, double G_min) {
  return maximize(lp_.col_g, G_min, lp_.col_l, lp_.base.xL, T_bound);
}

std::optional<double> LpSolver::maximize(int col, double lower, int fixed_col, double fixed_value, double T_bound) {
  ClpSimplex m(*clp_);  // a copy: the runtime LP keeps its warm basis
  std::vector<double> objective(lp_.num_cols(), 0.0);
  objective[col] = -1.0;  // max col
  m.chgObjCoefficients(objective.data());
  m.setColumnLower(col, lower);
  m.setColumnUpper(lp_.col_t, T_bound);
  m.setColumnLower(fixed_col, fixed_value);
  m.setColumnUpper(fixed_col, fixed_value);
  m.dual();
  const char* what = col == lp_.col_l ? "latency" : "gap per byte";
  if (m.isProvenDualInfeasible()) return std::nullopt;
  if (m.isProvenPrimalInfeasible())
    throw Error(fmt::format("{}: no {} >= {} keeps the runtime within {} ns", lp_.source, what, lower, T_bound));
  if (m.status() != 0)
    throw Error(fmt::format("{}: Clp did not solve the tolerance LP for the {}: {}", lp_.source, what,
                            status_text(m.status())));
  return m.primalColumnSolution()[col];
}

}  // namespace llamp::analyzer::lp
