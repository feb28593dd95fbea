"""Predicted runtime T(L0 + ΔL), λ_L and ρ_L from `llamp analyze --json` (format llamp-analysis).

T(L) is piecewise linear in L with breakpoints at the critical latencies (paper 000, Sec. II-C;
convex, except that a graph with polling lags blends into the capped lags over one polling period
under the default `--poll-lag phase`); the analyzer reports it exactly as segments
    {"L_begin_ns", "L_end_ns", "T_begin_ns", "T_end_ns", "lambda_L"}
over the --range it was given, so T at any L inside is T_begin + λ_L (L - L_begin): no sampling
and no interpolation error.
"""
import bisect
import json


class PredictionError(Exception):
    pass


class Prediction:
    def __init__(self, analysis, source="analysis.json"):
        self.source = source
        for key in ("L0_ns", "runtime_ns", "lambda_L", "rho_L", "critical_latencies_ns", "curve", "tolerance"):
            if key not in analysis:
                raise PredictionError(f"{source}: key '{key}' missing (is it `llamp analyze --json` output?)")
        if analysis.get("latency_variable", "L") != "L":
            raise PredictionError(f"{source}: latency variable '{analysis['latency_variable']}': the campaign "
                                  f"compares a homogeneous L (no --L-matrix / topology)")
        self.L0_ns = float(analysis["L0_ns"])
        self.runtime_at_L0_ns = float(analysis["runtime_ns"])
        self.lambda_L_at_L0 = float(analysis["lambda_L"])
        self.rho_L_at_L0 = float(analysis["rho_L"])
        self.critical_ns = sorted(float(c) for c in analysis["critical_latencies_ns"])
        self.segments = []
        for i, s in enumerate(analysis["curve"]):
            try:
                self.segments.append((float(s["L_begin_ns"]), float(s["L_end_ns"]), float(s["T_begin_ns"]),
                                      float(s["lambda_L"])))
            except (KeyError, TypeError, ValueError) as e:
                raise PredictionError(f"{source}: curve[{i}]: {e!r} (expected L_begin_ns, L_end_ns, T_begin_ns, "
                                      f"lambda_L)")
        if not self.segments:
            raise PredictionError(f"{source}: the curve is empty")
        self.segments.sort()
        self._begins = [s[0] for s in self.segments]
        self.tolerance = analysis["tolerance"]
        self.poll_lag_mode = analysis.get("poll_lags", {}).get("mode")  # None: no polling lags

    def _segment(self, L):
        lo, hi = self.segments[0][0], self.segments[-1][1]
        # Allow rounding at the ends (the range is whole ns).
        if L < lo - 0.5 or L > hi + 0.5:
            raise PredictionError(f"{self.source}: L = {L:.1f} ns is outside the analysed range "
                                  f"{lo:.1f}..{hi:.1f} ns")
        i = max(0, bisect.bisect_right(self._begins, L) - 1)
        return self.segments[i]

    def runtime_ns(self, L):
        begin, _, T_begin, slope = self._segment(L)
        return T_begin + slope * (L - begin)

    def lambda_L(self, L):
        """∂T/∂L: the slope of the segment L lies in (the right derivative at a breakpoint)."""
        return self._segment(L)[3]

    def rho_L(self, L):
        """Share of the runtime due to latency, λ_L · L / T (paper 000, Sec. II-B)."""
        T = self.runtime_ns(L)
        return self.lambda_L(L) * L / T if T > 0 else 0.0

    def tolerance_L_ns(self, pct):
        """Largest L with T(L) <= (1 + pct/100) T(L0), as the analyzer's tolerance LP found it;
        None when the analyzer reports none (unbounded or not asked)."""
        for item in self.tolerance:
            if abs(float(item.get("percent", -1)) - pct) < 1e-9:
                v = item.get("max_L_ns")
                return None if v is None else float(v)
        return None


def load(analysis_path):
    try:
        with open(analysis_path) as f:
            analysis = json.load(f)
    except json.JSONDecodeError as e:
        raise PredictionError(f"{analysis_path}: invalid JSON at line {e.lineno}: {e.msg}")
    return Prediction(analysis, analysis_path)
