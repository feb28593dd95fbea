#pragma once
// `llamp analyze --poll-lag phase` (the default; docs/analyzer.md, "Polling lag"): the runtime of a
// graph whose polled completions keep the polling phase the trace showed at L0 and lose it once
// the added latency has moved their arrivals by a polling period.
//
// A rank that polls notices an arrival at its next poll. In the trace the two ranks of a polling
// exchange often run in lock-step, each arrival landing just before the poll that notices it: the
// resolved lag, r = min(cap, slack at L0), reproduces that, and T(L0) is the traced run's. Added
// latency moves the arrival later; once it has moved by r it misses that poll, and from then on
// its phase against the poll rhythm is arbitrary and the expected lag is the cap c (P/2 for
// MPI_Test* loops, 1.5 P for MPI_Iprobe loops). No lag per wait does both in a max-plus graph, so
// at each x the graph is evaluated with
//
//   lag(x) = r + (c − r) · min(1, (x − L0) / max(r, 1 ns))
//
// Below L0 the curve is the resolved graph's, from L0 + max r on the capped graph's (both exact);
// in between it is sampled (kPhaseSamples intervals, linear between samples). It is continuous
// and non-decreasing, not convex: its first segment is steep where lock-stepped waits (r ≈ 0)
// lose their phase at once.
//
// Same measured runs (2 ranks, 2-vCPU VM): app_completions 6.25 / 6.35 % RRMSE (resolved) and
// 3.38 / 2.43 % (cap, T(L0) +58 / +31 %) → 2.28 / 2.29 %; app_master_worker 1.61 → 1.26 %.
#include "llamp/analyzer/analysis.hpp"
#include "llamp/analyzer/poll_lag.hpp"

namespace llamp::analyzer {

inline constexpr int kPhaseSamples = 50;

// Where every lag has reached its cap: L0 + twice the largest cap.
double polling_phase_end(double L0, const PollLagResolution& lags);

// T(x) with the lags of the phase ramp at x (g's lags are left at those values).
double polling_phase_runtime(Engine& e, graph::Graph& g, const PollLagResolution& lags, double L0, double x);

// The composed analysis over [x_min, x_max] from `resolved` (the graph analysed with the resolved
// lags; only its curve below L0 is used, so it may cover just [x_min, L0]) and `at_cap` (with
// every lag at its cap; only its curve from the ramp's end is used, so it may cover just that, or
// nothing when the ramp reaches past x_max). Base-point figures (T, λ, ρ, the critical path, the
// bandwidth tolerance) stay those of `resolved`; the latency tolerances are read off the composed
// curve (beyond its range: the ramp, then the capped graph). Leaves g's lags at their caps.
Analysis compose_polling_phase(const Analysis& resolved, const Analysis& at_cap, Engine& e, graph::Graph& g,
                               const PollLagResolution& lags, double x_min, double x_max);

}  // namespace llamp::analyzer
