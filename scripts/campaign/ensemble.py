"""The prediction from every traced run (docs/campaign.md, "Prediction from every traced run").

Each traced run is one draw of the machine: its computation times are what the CPUs gave that run
(on the 2-vCPU VM a throughput-bound kernel ran 1.0-1.6x its fast time on average, from run to
run), and one graph inherits that draw in every predicted point. The measured runs estimate the
*mean* runtime at each ΔL, so the prediction should too: every traced run's graph is analysed
alike (analysis-trace-k.json) and the prediction is the mean of their curves (analysis-mean.json).
The mean of piecewise-linear curves is piecewise linear with the union of their breakpoints, so the
mean curve is exact, not sampled. Curves are averaged, not computation times: the ranks of a
tightly coupled application wait for the slower one at every synchronisation, and averaged
computation times would smooth each rank's slow spells away, with the waits they cause (a reason,
not a measurement: averaging computation times was not tried).

Re-analysing 58 finished campaigns of the VM (tables C-G of stops 20-24, 5-15 traced runs each)
this way, against the kept trace's prediction: RRMSE mean 3.43 % against 4.27 %, better in 42 of
58; in the two tables run with it since (stop 25's H and I), 18 of 28.

The mean is weighted by round (trace_weights.py, `--trace-weights`): traced runs are not spread
evenly over the campaign's rounds, and the host's speed changes in spells.
"""
import hashlib
import json
import os

from . import compute_check
from . import prediction as prediction_mod
from . import runs, stats, trace_weights
from .prepare import StepError, _require, _run_analyze, _run_step, schedgen_arguments, trace_run_dirs, traced_count

MEAN_NAME = "analysis-mean.json"


def member_path(campaign, k):
    return campaign.path(f"analysis-trace-{k}.json")


def enabled(campaign):
    return (campaign.prediction_from == "every-trace" and not campaign.no_prediction and not campaign.given_trace
            and os.path.exists(campaign.path("trace.done.json")) and os.path.exists(campaign.path("params.json")))


def _made_from(campaign, k):
    """What analysis-trace-k.json depends on: the schedgen arguments, params.json's content and the
    traced run itself (trace-k.done is written anew when a traced run is launched again)."""
    with open(campaign.path("params.json"), "rb") as f:
        params = hashlib.sha256(f.read()).hexdigest()
    done = trace_run_dirs(campaign, k)[0] + ".done"
    return {"schedgen_args": schedgen_arguments(campaign), "params_sha256": params,
            "trace_done_mtime_ns": os.stat(done).st_mtime_ns, "analyze_args": list(campaign.analyze_args)}


def _write_json(path, value):
    """Whole or not at all: a campaign stopped mid-write leaves no half file a resume would trust."""
    with open(path + ".tmp", "w") as f:
        json.dump(value, f)
    os.replace(path + ".tmp", path)


def _analyze_trace(campaign, k, log):
    """analysis-trace-k.json: trace k's graph (made, analysed and removed again) unless it is current."""
    target = member_path(campaign, k)
    made_from = _made_from(campaign, k)
    if os.path.exists(target):
        with open(target) as f:
            if json.load(f).get("made_from") == made_from:
                return target
    _require(campaign.tools.llamp, "the llamp CLI")
    goal = campaign.path(f"trace-{k}.tmp.goal")
    cmd = [campaign.tools.llamp, "schedgen", trace_run_dirs(campaign, k)[0], "-o", goal] + made_from["schedgen_args"]
    try:
        _run_step(campaign, f"schedgen-trace-{k}", cmd, dict(os.environ), attempts=1)
        result = _run_analyze(campaign, target, [], goal=goal)
    finally:
        if os.path.exists(goal):
            os.remove(goal)
    result["made_from"] = made_from
    _write_json(target, result)
    log(f"analysis of trace {k}: {target}")
    return target


def mean_analysis(analyses, names, weights=None):
    """The mean of several `llamp analyze --json` results over the same L range, as one result the
    campaign's Prediction reads: its curve is the exact mean of theirs (breakpoints: the union),
    λ_L and ρ_L at L0 follow from it; with weights (one per analysis), the weighted mean, likewise
    exact. Tolerances are left to the report, which reads them off the mean curve ("predicted
    curve")."""
    preds = [prediction_mod.Prediction(a, n) for a, n in zip(analyses, names)]

    def fmean(values):
        return stats.weighted_mean(list(values), weights)

    L0 = preds[0].L0_ns
    for p in preds[1:]:
        if abs(p.L0_ns - L0) > 1e-6:
            raise StepError(f"{p.source}: L0 {p.L0_ns} ns, but {preds[0].source} has {L0} ns")
    lo = max(p.segments[0][0] for p in preds)
    hi = min(p.segments[-1][1] for p in preds)
    points = sorted({lo, hi} | {b for p in preds for s in p.segments for b in s[:2] if lo < b < hi})
    curve = []
    for begin, end in zip(points, points[1:]):
        # the segment starting at `begin` (right derivative there) of every curve
        curve.append({"L_begin_ns": begin, "L_end_ns": end,
                      "T_begin_ns": fmean(p.runtime_ns(begin) for p in preds),
                      "T_end_ns": fmean(p.runtime_ns(end) for p in preds),
                      "lambda_L": fmean(p.lambda_L(begin) for p in preds)})
    runtime = fmean(p.runtime_ns(L0) for p in preds)
    lam = fmean(p.lambda_L(L0) for p in preds)
    return {"format": "llamp-campaign-mean-analysis", "L0_ns": L0, "runtime_ns": runtime, "lambda_L": lam,
            "rho_L": lam * L0 / runtime if runtime > 0 else 0.0,
            "critical_latencies_ns": sorted({c for p in preds for c in p.critical_ns}), "curve": curve,
            "tolerance": [], "poll_lags": analyses[0].get("poll_lags", {}), "members": list(names),
            "weights": list(weights) if weights is not None else [1.0] * len(preds)}


def _done_traces(campaign):
    return [k for k in range(1, traced_count(campaign) + 1) if os.path.exists(trace_run_dirs(campaign, k)[0] + ".done")]


def averaged_traces(campaign):
    """(ks, left_out): the traced runs the mean averages, and {k: why} of those it leaves out: the ones
    --noisy-compute judges slowed by the host against the campaign's traced launches now
    (compute_check.slowed_traced_runs). Such a run is kept only when every relaunch was noisy too
    (--noisy-retries, or a spell past --quiet-gate-wait: prepare._probed_launch), and its graph carries
    the host's slow spell in every predicted point (table AG31's traced run 7 computed 32 % longer
    than the quick traced runs, 0.96 s against 0.71-0.78 s). Left out only while two others remain."""
    done = _done_traces(campaign)
    slowed = compute_check.slowed_traced_runs(campaign)
    clean = [k for k in done if k not in slowed]
    if len(clean) < 2:
        return done, {}
    return clean, {k: slowed[k] for k in done if k in slowed}


def weights(campaign, ks, records):
    """The traced runs' weights in the mean, in the order of ks (sorted): --trace-weights."""
    times = trace_weights.traced_run_times(campaign, ks, lambda c, k: trace_run_dirs(c, k)[0])
    return trace_weights.weights_for(campaign.trace_weights, records, times)


def traces_floor(campaign, records, log=print):
    """The traces' floor (stats.prediction_floor) of the traced runs there are so far, against the
    measured means there are so far, each traced run analysed as the mean prediction will average it
    (kept for it when nothing changes). None before params.json, with fewer than two traced runs or
    no measured ΔL. --trace-floor-target adds traced runs while it is above the target (rounds.py)."""
    if not os.path.exists(campaign.path("params.json")):
        return None
    ks = averaged_traces(campaign)[0]
    rows = [r for r in stats.per_delta(records, campaign.deltas_ns) if "mean_ns" in r]
    if len(ks) < 2 or not rows:
        return None
    preds = []
    for k in ks:
        path = _analyze_trace(campaign, k, log)
        with open(path) as f:
            preds.append(prediction_mod.Prediction(json.load(f), os.path.basename(path)))
    return stats.prediction_floor([[p.runtime_ns(p.L0_ns + r["delta_ns"]) for p in preds] for r in rows],
                                  [r["mean_ns"] for r in rows], weights(campaign, ks, records))


def analyze(campaign, log=print):
    """Every traced run's analysis, then analysis-mean.json, their mean (made anew each time); nothing
    with one traced run, a given trace or `--prediction-from kept-trace`."""
    target = campaign.path(MEAN_NAME)
    if os.path.exists(target):
        os.remove(target)
    if not enabled(campaign):
        return None
    ks, left_out = averaged_traces(campaign)
    if len(ks) < 2:
        return None
    return _write_mean(campaign, ks, [_analyze_trace(campaign, k, log) for k in ks], log, left_out)


def reweigh(campaign, log=print):
    """analysis-mean.json again from the traced runs' analyses it averages, as they are, with weights
    from the runs recorded now (`llamp-campaign report`: a Slurm campaign's traced runs are analysed
    before its runs); nothing without it."""
    target = campaign.path(MEAN_NAME)
    if not os.path.exists(target) or not enabled(campaign):
        return None
    with open(target) as f:
        mean = json.load(f)
    ks = mean.get("traces", [])
    files = [member_path(campaign, k) for k in ks]
    if len(ks) < 2 or not all(os.path.exists(p) for p in files):
        return None
    return _write_mean(campaign, ks, files, log, {int(k): why for k, why in mean.get("left_out", {}).items()})


def _write_mean(campaign, ks, files, log, left_out=None):
    analyses = []
    for path in files:
        with open(path) as f:
            analyses.append(json.load(f))
    target = campaign.path(MEAN_NAME)
    weighted = weights(campaign, ks, runs.load_records(campaign))
    mean = mean_analysis(analyses, [os.path.basename(p) for p in files], weighted)
    mean["traces"] = ks
    mean["trace_weights"] = campaign.trace_weights
    mean["left_out"] = {str(k): why for k, why in sorted((left_out or {}).items())}
    _write_json(target, mean)
    log(f"prediction: the mean of {len(ks)} traced runs' analyses, weighted by {campaign.trace_weights} "
        f"(as many as {trace_weights.effective_count(weighted):.1f} equal ones)"
        + (f", leaving out {', '.join(f'trace-{k}' for k in sorted(left_out))} (slowed by the host)" if left_out else "")
        + f": {target}")
    return target
