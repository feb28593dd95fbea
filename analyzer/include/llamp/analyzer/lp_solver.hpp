#pragma once
// Solving the LP of lp_model.hpp with COIN-OR Clp (paper 000, Sec. II-D):
//   T(L)      = min t  with l >= L, g >= G              (solve_at)
//   λ_L, λ_G  = reduced costs of l and g at that optimum
//   [L_fl, L_fu] = range of L over which the optimal basis stays feasible (Clp primal ranging)
//   critical latencies in [L_min, L_max]: Algorithm 2, walking down from L_max region by region
//   tolerance = max l  with t <= T_bound                (max_latency)
// The model stays loaded between calls (see LpStart for how each solve starts); the tolerance
// LPs start from a copy of the last basis.
#include <memory>
#include <optional>
#include <vector>

#include "llamp/analyzer/lp_model.hpp"

class ClpSimplex;

namespace llamp::analyzer::lp {

struct LpPoint {
  double L = 0;
  double T = 0;         // ns
  double lambda_L = 0;  // ∂T/∂L: messages on the critical path (rendezvous ones count 3 L)
  double lambda_G = 0;  // ∂T/∂G: bytes on the critical path
  // The optimal basis found at L stays optimal for L in [feasible_low, feasible_high] (±inf
  // when unbounded): T is linear with slope lambda_L there.
  double feasible_low = 0;
  double feasible_high = 0;
  int iterations = 0;  // simplex iterations this solve took
};

// A point where T(L) changes slope, with the slopes on either side.
struct CriticalLatency {
  double L = 0;
  double lambda_below = 0;
  double lambda_above = 0;
};

struct CriticalLatencyWalk {
  std::vector<CriticalLatency> critical;  // in increasing L
  std::vector<LpPoint> solves;            // every LP solved, in the order solved (decreasing L)
  // The first (highest-L) solve of each stretch of equal λ_L, in decreasing L: runs[k] lies on
  // the segment of T between critical latencies, so its T and λ_L give that segment's line.
  std::vector<LpPoint> runs;
};

// How the first LP is started. Clp's simplex from the slack basis, and its presolve, grow about
// quadratically on these LPs (measured: 150 k vertices, dual simplex 579 s; presolve 71 s). The
// crash basis evaluates the LP's own rows forward (every column is created after the columns its
// rows read, so one pass in row order finds each column's binding row) and hands Clp the basis
// "each column basic with its binding row tight, every other row slack". That basis is
// triangular and, with all costs on t, dual feasible, so Clp factorizes it, proves it optimal and
// computes duals and ranges. With CrashBasis every solve_at() starts from the crash basis at its
// L; the other starts solve the first LP from scratch and warm-start later ones (dual simplex).
enum class LpStart { CrashBasis, Presolve, DualSimplex };

class LpSolver {
 public:
  explicit LpSolver(const LpProblem& lp, LpStart start = LpStart::CrashBasis);
  ~LpSolver();
  LpSolver(const LpSolver&) = delete;
  LpSolver& operator=(const LpSolver&) = delete;

  // min t with l >= L. Throws llamp::Error if Clp does not prove an optimum.
  LpPoint solve_at(double L);

  // Algorithm 2 on [L_min, L_max], walking down from L_max: after solving at L (reduced cost λ',
  // range [L_fl, L_fu] from Clp's primal ranging of l) the next L is min(L - step, L_fl - ε).
  // Where λ changes between two solves the critical latency is where the supporting lines of the
  // two regions cross (T and λ of each solve): exact when no region was skipped, which step = 0
  // guarantees. A positive step trades that for fewer solves, as the paper's resolution does.
  CriticalLatencyWalk critical_latencies(double L_min, double L_max, double step);

  // Tolerance LP (Sec. II-D2): max l with t <= T_bound, l >= L_min, g fixed at its base value.
  // nullopt when l is unbounded (T does not grow with L); throws llamp::Error when even
  // L_min exceeds the bound (the LP is infeasible).
  std::optional<double> max_latency(double T_bound, double L_min);
  // The same for bandwidth: max g with t <= T_bound, g >= G_min, l fixed at its base value.
  std::optional<double> max_gap(double T_bound, double G_min);

  const LpProblem& problem() const { return lp_; }
  ClpSimplex& clp() { return *clp_; }

 private:
  std::optional<double> maximize(int col, double lower, int fixed_col, double fixed_value, double T_bound);
  void crash_basis(double L);
  const LpProblem& lp_;
  std::unique_ptr<ClpSimplex> clp_;
  LpStart start_;
  bool solved_once_ = false;
};

// Loads an LpProblem into a fresh Clp model (columns, rows, bounds, objective; no names).
std::unique_ptr<ClpSimplex> make_clp_model(const LpProblem& lp);

}  // namespace llamp::analyzer::lp
