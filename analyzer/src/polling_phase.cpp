#include "llamp/analyzer/polling_phase.hpp"

#include <algorithm>
#include <cmath>

namespace llamp::analyzer {
namespace {

// Appends the part of `c` inside [lo, hi] to `out` (segments clipped at the ends).
void append_clipped(const Curve& c, double lo, double hi, Curve& out) {
  for (const Segment& s : c.segments) {
    if (s.x_end <= lo || s.x_begin >= hi) continue;
    Segment t = s;
    if (t.x_begin < lo) {
      t.T_begin += t.slope * (lo - t.x_begin);
      t.x_begin = lo;
    }
    if (t.x_end > hi) {
      t.x_end = hi;
      t.T_end = t.T_begin + t.slope * (hi - t.x_begin);
    }
    out.segments.push_back(t);
  }
  for (double b : c.breakpoints)
    if (b > lo && b < hi) out.breakpoints.push_back(b);
}

}  // namespace

double polling_phase_end(double L0, const PollLagResolution& lags) {
  const uint64_t largest = lags.resolved.empty() ? 0 : *std::max_element(lags.resolved.begin(), lags.resolved.end());
  return L0 + std::max(1.0, static_cast<double>(largest));
}

double polling_phase_runtime(Engine& e, graph::Graph& g, const PollLagResolution& lags, double L0, double x) {
  const double moved = std::max(0.0, x - L0);
  for (size_t i = 0; i < g.poll_lags.size(); ++i) {
    const double c = static_cast<double>(lags.cap[i]), r = static_cast<double>(lags.resolved[i]);
    const double w = std::min(1.0, moved / std::max(1.0, r));
    g.value[g.poll_lags[i]] = static_cast<uint64_t>(std::llround(r + (c - r) * w));
  }
  return e.at_L(x).T;
}

Analysis compose_polling_phase(const Analysis& resolved, const Analysis& at_cap, Engine& e, graph::Graph& g,
                               const PollLagResolution& lags, double x_min, double x_max) {
  Analysis a = resolved;
  a.evaluations += at_cap.evaluations;
  a.seconds += at_cap.seconds;
  const double L0 = resolved.L0, ramp_end = polling_phase_end(L0, lags);

  Curve c;
  c.evaluations = resolved.curve.evaluations + at_cap.curve.evaluations;
  append_clipped(resolved.curve, x_min, std::min(L0, x_max), c);
  const double lo = std::max(L0, x_min), hi = std::min(ramp_end, x_max);
  if (hi > lo) {
    // The ramp, sampled: kPhaseSamples segments between evaluated points.
    double x_prev = lo, T_prev = polling_phase_runtime(e, g, lags, L0, lo);
    for (int k = 1; k <= kPhaseSamples; ++k) {
      const double x = lo + (hi - lo) * k / kPhaseSamples;
      const double T = polling_phase_runtime(e, g, lags, L0, x);
      if (x_prev > x_min) c.breakpoints.push_back(x_prev);
      c.segments.push_back({x_prev, x, T_prev, T, (T - T_prev) / (x - x_prev)});
      x_prev = x;
      T_prev = T;
    }
    c.evaluations += kPhaseSamples + 1;
  }
  if (ramp_end < x_max) {
    if (ramp_end > x_min) c.breakpoints.push_back(ramp_end);
    append_clipped(at_cap.curve, std::max(ramp_end, x_min), x_max, c);
  }
  std::sort(c.breakpoints.begin(), c.breakpoints.end());
  c.breakpoints.erase(std::unique(c.breakpoints.begin(), c.breakpoints.end()), c.breakpoints.end());
  a.evaluations += c.evaluations - resolved.curve.evaluations - at_cap.curve.evaluations;
  a.curve = std::move(c);

  for (Tolerance& t : a.tolerance) {
    // Same bound, T(L0)·(1 + x %), read off the composed curve. (A range that starts above the
    // bound keeps the resolved graph's answer.)
    if (a.curve.segments.empty() || a.curve.segments.front().T_begin > t.T_bound) continue;
    std::optional<double> hit = x_reaching(a.curve, t.T_bound);
    if (!hit && x_max < ramp_end) {
      // Past the range on the ramp: T is non-decreasing there, so bisect between the range's end
      // and the ramp's end if the bound lies in between.
      double below = x_max, above = ramp_end;
      if (polling_phase_runtime(e, g, lags, L0, above) > t.T_bound) {
        for (int step = 0; step < 60 && above - below > 1.0; ++step) {
          const double mid = (below + above) / 2;
          (polling_phase_runtime(e, g, lags, L0, mid) <= t.T_bound ? below : above) = mid;
        }
        hit = below;
      }
    }
    if (!hit) {
      // Beyond the ramp every lag is at its cap and T is the capped graph's.
      set_poll_lags(g, lags.cap);
      const double from = std::max(ramp_end, x_max);
      hit = e.at_L(from).T <= t.T_bound ? max_x_within(e, Sweep::L, from, t.T_bound) : std::nullopt;
    }
    t.max_L = hit;
  }
  set_poll_lags(g, lags.cap);
  return a;
}

}  // namespace llamp::analyzer
