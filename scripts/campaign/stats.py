"""Per-ΔL statistics of measured runs, prediction errors and measured latency tolerance.

RMSE and RRMSE follow paper 000 (Sec. III-C, Table II): the measured value at each ΔL is the mean
of its successful runs, RMSE = sqrt(mean over ΔL of (measured - predicted)^2) and
RRMSE = RMSE / mean over ΔL of measured. Only "ok" runs count; failed, timed-out, slow-cores and
noisy-host attempts are listed separately.
"""
import math


def mean(xs):
    return sum(xs) / len(xs)


def sample_std(xs):
    if len(xs) < 2:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def standard_error(xs):
    """Standard error of the mean of xs (sample std / √n; 0 for fewer than two values)."""
    return sample_std(xs) / math.sqrt(len(xs)) if len(xs) >= 2 else 0.0


def weighted_mean(xs, weights=None):
    if weights is None:
        return mean(xs)
    return sum(w * x for w, x in zip(weights, xs)) / sum(weights)


def weighted_standard_error(xs, weights=None):
    """Standard error of the weighted mean of xs: the weighted sample std over √n_eff, n_eff =
    (Σw)² / Σw² (with Bessel's correction for n_eff); standard_error for equal weights, 0 for fewer
    than two values."""
    if weights is None or len(xs) < 2:
        return standard_error(xs)
    total, squares = sum(weights), sum(w * w for w in weights)
    n_eff = total * total / squares
    if n_eff <= 1.0:
        return 0.0
    m = weighted_mean(xs, weights)
    variance = sum(w * (x - m) ** 2 for w, x in zip(weights, xs)) / total * n_eff / (n_eff - 1)
    return math.sqrt(variance / n_eff)


def per_delta(records, deltas_ns):
    """One row per ΔL: ok runtimes and their summary, plus the failures."""
    rows = []
    for d in deltas_ns:
        mine = [r for r in records if r["delta_ns"] == d]
        ok = [r["runtime_ns"] for r in mine if r["status"] == "ok"]
        row = {"delta_ns": d, "runs_ok": len(ok), "attempts": len(mine),
               "failed": sum(1 for r in mine if r["status"] == "failed"),
               "timed_out": sum(1 for r in mine if r["status"] == "timeout"),
               "slow_cores": sum(1 for r in mine if r["status"] == "slow-cores"),
               "noisy_host": sum(1 for r in mine if r["status"] == "noisy-host"),
               "runtimes_ns": ok}
        if ok:
            m = mean(ok)
            row.update(mean_ns=m, std_ns=sample_std(ok), min_ns=min(ok), max_ns=max(ok),
                       cv=sample_std(ok) / m if m > 0 else 0.0)
        rows.append(row)
    return rows


def rmse(measured, predicted):
    if len(measured) != len(predicted) or not measured:
        raise ValueError("RMSE needs equally many measured and predicted values, at least one")
    return math.sqrt(mean([(m - p) ** 2 for m, p in zip(measured, predicted)]))


def rrmse(measured, predicted):
    return rmse(measured, predicted) / mean(measured)


def noise_floor(rows):
    """The RRMSE an exact prediction would still show, because each measured mean carries the
    run-to-run noise of its runs: sqrt(mean over ΔL of std² / n) / mean over ΔL of the means (std
    is the sample standard deviation of the n ok runs). A ΔL with one run adds nothing (its noise
    is unknown). An RRMSE near this floor cannot tell the prediction from noise; more runs
    (--reps) lower the floor by sqrt(n)."""
    measured = [r for r in rows if "mean_ns" in r]
    if not measured:
        raise ValueError("a noise floor needs at least one measured ΔL")
    variance_of_means = [r["std_ns"] ** 2 / r["runs_ok"] if r["runs_ok"] >= 2 else 0.0 for r in measured]
    return math.sqrt(mean(variance_of_means)) / mean([r["mean_ns"] for r in measured])


def prediction_floor(predictions_per_delta, measured_means, weights=None):
    """The traces' floor: the RRMSE an exact model would still show when its prediction is the mean of
    K traced runs' predictions, from their spread, as noise_floor is for the measured means:
    sqrt(mean over ΔL of se²) / mean measured, se = sample std / sqrt(K) of the K predictions at that
    ΔL (predictions_per_delta: one list of K values per measured ΔL); with weights (the traced runs'
    in the mean, trace_weights.py), the weighted mean's standard error."""
    se = [weighted_standard_error(values, weights) for values in predictions_per_delta]
    return math.sqrt(mean([x * x for x in se])) / mean(measured_means)


def tolerance_from_curve(deltas, values, pct):
    """Largest ΔL with value(ΔL) <= (1 + pct/100) value(first ΔL), the first crossing linearly
    interpolated. Returns (ΔL, reached): reached is False when the curve stays below the bound
    over the whole range (the tolerance is then at least the largest ΔL)."""
    bound = values[0] * (1 + pct / 100.0)
    for i in range(1, len(deltas)):
        if values[i] > bound:
            d0, d1, v0, v1 = deltas[i - 1], deltas[i], values[i - 1], values[i]
            if v1 == v0:
                return d0, True
            return d0 + (bound - v0) * (d1 - d0) / (v1 - v0), True
    return deltas[-1], False


def _line_fit(xs, ys):
    """The least-squares line of ys over xs: (slope, mean of xs, mean of ys, spread of xs)."""
    mx, my = mean(xs), mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("a slope needs at least two distinct x values")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx, mx, my, sxx


def fitted_slope(xs, ys):
    """Least-squares slope of ys over xs: the measured runtime's average response to ΔL, to set
    against the predicted one (a constant offset between measured and predicted runtimes, e.g.
    from tracing overhead, leaves it unchanged)."""
    return _line_fit(xs, ys)[0]


def slope_standard_error(xs, ys):
    """Standard error of fitted_slope(xs, ys): the residuals' variance over n - 2 degrees of
    freedom divided by the spread of xs. Over every run it says how far the measured response can
    sit from the true one by run-to-run noise alone, which decides whether a gap to the
    predicted response is a model term or noise. None with fewer than three points."""
    if len(xs) < 3:
        return None
    slope, mx, my, sxx = _line_fit(xs, ys)
    ssr = sum((y - my - slope * (x - mx)) ** 2 for x, y in zip(xs, ys))
    return math.sqrt(ssr / (len(xs) - 2) / sxx)


def beyond_noise(rrmse, *floors):
    """The part of an RRMSE the noise floors do not explain, √(max(0, RRMSE² − Σ floor²)). In
    expectation the squared error at each ΔL is bias² + the measured mean's variance + the
    prediction's; the floors are the last two as RRMSEs, so this estimates the RMS bias, the model's
    own error. It is an estimate from estimates (the floors come from a few runs each): 0 means the
    error is within the noise, not that the model is exact."""
    return math.sqrt(max(0.0, rrmse * rrmse - sum(f * f for f in floors)))

