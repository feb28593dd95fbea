"""Steps (e)-(g): compare measured and predicted runtimes and write the campaign folder's
report.md, report.json, runs.csv (every attempt), summary.csv (per ΔL) and campaign.png."""
import csv
import glob
import json
import os
import statistics

from . import prediction as prediction_mod
from . import prepare
from . import (compute_check, ensemble, inject_stats, noise, quiet_gate, rounds, runs, stats, t0_split, trace_weights,
               units)


def _prediction(campaign, name="analysis.json"):
    analysis = campaign.path(name)
    if not os.path.exists(analysis):
        return None
    return prediction_mod.load(analysis)


MEAN_OF_TRACES = "every traced run (mean)"  # report.json prediction_from


def _main_prediction(campaign):
    """The prediction the report judges: the mean of every traced run's (analysis-mean.json,
    ensemble.py) unless the campaign asked for the kept trace's or has one traced run only."""
    if campaign.prediction_from == "every-trace":
        mean = _prediction(campaign, ensemble.MEAN_NAME)
        if mean is not None:
            return mean
    return _prediction(campaign)


def _members(campaign):
    """([(k, Prediction, weight)], how they were weighted, {k: why} of those it leaves out) of the
    traced runs analysis-mean.json averages (equal weights in one made before weights were kept;
    ensemble.averaged_traces leaves out the ones the host slowed)."""
    with open(campaign.path(ensemble.MEAN_NAME)) as f:
        mean = json.load(f)
    ks = mean.get("traces", [])
    weights = mean.get("weights") or [1.0] * len(ks)
    members = [(k, _prediction(campaign, os.path.basename(ensemble.member_path(campaign, k))), w)
               for k, w in zip(ks, weights)]
    return ([(k, p, w) for k, p, w in members if p is not None], mean.get("trace_weights", trace_weights.EQUAL),
            mean.get("left_out", {}))


def _per_trace(pred, members, weighted_by, rows, measured_rows):
    """With the mean prediction: every traced run's own prediction, its RRMSE, response and weight in
    the mean, the kept trace's among them, and the mean's standard error at each ΔL from their spread
    (sample std / √K; with unequal weights that of the weighted mean, stats.weighted_standard_error).
    rrmse_prediction_floor is the RRMSE that error alone would give an exact model, as the noise floor
    is for the measured means. With weights by round, rrmse_equal_weights is the RRMSE the mean with
    equal weights would have had (LogGPS alone)."""
    deltas = [r["delta_ns"] for r in measured_rows]
    measured = [r["mean_ns"] for r in measured_rows]
    weights = [w for _, _, w in members]
    traces = []
    for k, p, w in members:
        predicted = [p.runtime_ns(pred.L0_ns + d) for d in deltas]
        item = {"trace": k, "runtime_at_L0_ns": p.runtime_at_L0_ns, "weight": w}
        if measured_rows:
            item["rrmse"] = stats.rrmse(measured, predicted)
            if len(deltas) >= 2:
                item["predicted_slope"] = stats.fitted_slope(deltas, predicted)
        traces.append(item)
    values = {}  # ΔL -> every traced run's prediction there
    for row in rows:
        values[row["delta_ns"]] = [p.runtime_ns(pred.L0_ns + row["delta_ns"]) for _, p, _ in members]
        row["predicted_se_ns"] = stats.weighted_standard_error(values[row["delta_ns"]], weights)
    result = {"traces": traces, "trace_weights": weighted_by,
              "effective_traces": trace_weights.effective_count(weights)}
    if measured_rows:
        result["rrmse_prediction_floor"] = stats.prediction_floor([values[d] for d in deltas], measured, weights)
        if len(set(weights)) > 1:
            result["rrmse_equal_weights"] = stats.rrmse(measured, [stats.mean(values[d]) for d in deltas])
    return result


def _with_lags_at_cap(campaign, measured_rows, L0):
    """RRMSE and T(L0) of the second analysis (polling lags at their caps), if there is one."""
    cap = _prediction(campaign, "analysis-cap.json")
    if cap is None or not measured_rows:
        return None
    predicted = [cap.runtime_ns(L0 + r["delta_ns"]) for r in measured_rows]
    measured = [r["mean_ns"] for r in measured_rows]
    return {"rrmse": stats.rrmse(measured, predicted), "runtime_at_L0_ns": cap.runtime_at_L0_ns,
            "predicted_ns": predicted}


def _with_noise(campaign, pred, rows):
    """The prediction with the machine's recorded noise (analysis-noise.json, noise.py): at each ΔL the
    main prediction plus the delay the recorded detours add there (the mean over the analyzer's
    samples, or their median with --noise-statistic median: NOISE_STATISTICS). None without that analysis."""
    path = campaign.path("analysis-noise.json")
    if pred is None or not os.path.exists(path):
        return None
    with open(path) as f:
        noise = json.load(f).get("noise")
    if not noise:
        return None
    statistic = campaign.noise_statistic
    added = _noise_delay_by_delta(noise, pred.L0_ns, statistic)
    for row in rows:
        delay = added.get(round(row["delta_ns"], 1))
        if delay is None:
            continue
        row["predicted_noise_ns"] = row["predicted_ns"] + delay
        if "mean_ns" in row:
            row["relative_error_noise"] = (row["mean_ns"] - row["predicted_noise_ns"]) / row["mean_ns"]
    result = {"files": [os.path.basename(f) for f in noise.get("files", [])], "samples": noise["samples"],
              "statistic": statistic, "planned_recordings": campaign.noise_runs,
              "lane_fractions": [lane["fraction"] for lane in noise["lanes"]]}
    resume = [_interpolate(lane["resume_extra_ns"], 100000.0) for lane in noise["lanes"] if "resume_extra_ns" in lane]
    if resume:
        result["resume_extra_at_100us_ns"] = resume
    slowdown = [_interpolate(lane["resume_following"]["slowdown"], 100000.0) for lane in noise["lanes"]
                if "resume_following" in lane]
    if slowdown:
        result["following_slowdown_at_100us"] = slowdown
    measured_rows = [r for r in rows if "mean_ns" in r and "predicted_noise_ns" in r]
    if measured_rows and len(measured_rows) == len([r for r in rows if "mean_ns" in r]):
        predicted = [r["predicted_noise_ns"] for r in measured_rows]
        judged = _judge(measured_rows, predicted)
        result.update(judged)
        result["mean_error_ns"] = stats.mean([r["mean_ns"] - p for r, p in zip(measured_rows, predicted)])
        other = next(s for s in NOISE_STATISTICS if s != statistic)
        other_added = _noise_delay_by_delta(noise, pred.L0_ns, other)
        if all(round(r["delta_ns"], 1) in other_added for r in measured_rows):
            result["rrmse_other_statistic"] = {"statistic": other, "rrmse": stats.rrmse(
                [r["mean_ns"] for r in measured_rows],
                [r["predicted_ns"] + other_added[round(r["delta_ns"], 1)] for r in measured_rows])}
        steps = _term_steps(campaign, pred, measured_rows, noise.get("files"))
        if steps:
            steps.append(dict(judged, terms=noise.get("terms", ["detours", "resume", "following"])))
            result["term_steps"] = steps
    return result


# What the prediction with noise adds of the replay's samples (`--noise-statistic`). The mean, because
# it is set against the measured runs' means: the host's rare long stalls, which a few samples and a
# few runs meet, count in both (stop 53: pingpong in a noisy spell, 4.58 % with the median, 1.53 %
# with the mean). The median was the default until stop 53.
NOISE_STATISTICS = ("mean", "median")
_NOISE_KEYS = {"mean": "T_noise_mean_ns", "median": "T_noise_median_ns"}


def _noise_delay_by_delta(noise, L0_ns, statistic):
    """{ΔL: the delay an analysis with noise adds there}: the statistic ("mean" or "median") of its
    samples less the model."""
    key = _NOISE_KEYS[statistic]
    return {round(p["L_ns"] - L0_ns, 1): p[key] - p["T_model_ns"] for p in noise["points"] if key in p}


def _judge(measured_rows, predicted):
    """RRMSE of `predicted` against the rows' measured means, and its response (slope over ΔL)."""
    judged = {"rrmse": stats.rrmse([r["mean_ns"] for r in measured_rows], predicted)}
    if len(measured_rows) >= 2:
        judged["predicted_slope"] = stats.fitted_slope([r["delta_ns"] for r in measured_rows], predicted)
    return judged


def _term_steps(campaign, pred, measured_rows, files):
    """The judged prediction with the replay's terms one at a time (noise.TERM_STEPS: the detours
    alone, then with the resume block), each analysed from the same recordings: its RRMSE and
    response. Empty when a step is missing or replayed other recordings."""
    steps = []
    for name, _ in noise.TERM_STEPS:
        path = noise.term_path(campaign, name)
        if not os.path.exists(path):
            return []
        with open(path) as f:
            step = json.load(f).get("noise")
        if not step or step.get("files") != files:
            return []
        added = _noise_delay_by_delta(step, pred.L0_ns, campaign.noise_statistic)
        if any(round(r["delta_ns"], 1) not in added for r in measured_rows):
            return []
        predicted = [r["predicted_ns"] + added[round(r["delta_ns"], 1)] for r in measured_rows]
        steps.append(dict(_judge(measured_rows, predicted), terms=step.get("terms", [])))
    return steps


def _throughput(campaign):
    """The throughput slices of the llamp-noise recordings present (their second phase, docs/FORMATS.md):
    per recording and rank the share of slices at least 1.3x the CPU's fast speed and the mean slice
    over the fast one. How much the host slowed computation on the ranks' CPUs, which detours do not
    show. None when no recording has them."""
    recordings = []
    for path in noise.recorded(campaign):
        try:
            with open(path) as f:
                ranks = json.load(f).get("ranks", [])
        except (OSError, ValueError):
            continue
        slices = [r["throughput"] for r in ranks if "throughput" in r]
        if slices:
            recordings.append({"file": os.path.basename(path),
                               "slow_fraction": [t["slow_fraction"] for t in slices],
                               "mean_over_fast": [t["mean_ns"] / t["base_ns"] for t in slices]})
    if not recordings:
        return None
    fractions = [x for r in recordings for x in r["slow_fraction"]]
    means = [x for r in recordings for x in r["mean_over_fast"]]
    return {"recordings": recordings, "slow_fraction_range": [min(fractions), max(fractions)],
            "mean_over_fast_range": [min(means), max(means)]}


def _throughput_paragraph(result):
    t = result.get("throughput")
    if not t:
        return []
    (f0, f1), (m0, m1) = t["slow_fraction_range"], t["mean_over_fast_range"]
    return [f"Computation on this machine: a fixed throughput-bound kernel (llamp-noise, "
            f"{len(t['recordings'])} recordings) took at least 1.3× its fast time in {100 * f0:.1f}–{100 * f1:.1f} % "
            f"of its slices on the ranks' CPUs, {m0:.2f}–{m1:.2f}× its fast time on average. Other work on the same "
            f"physical core (a busy SMT sibling on a VM's host) slows the application's computation without "
            f"taking its CPU away, so detours do not show it. The prediction's computation times are "
            + ("the traced runs' (the mean of their predictions); a run whose CPUs were slowed more or less than "
               "theirs on average sits above or below it" if result.get("per_trace_prediction") else
               "the traced run's; a run whose CPUs were slowed more or less than the traced run's sits above or "
               "below it")
            + " (docs/campaign.md, \"Machine noise\").", ""]


def _tracer_writes_sentence(writes):
    """What the tracer's writer took from the ranks' cores during the traced runs, if recorded."""
    if not writes:
        return ""
    busy = [w for w in writes if w["blocks"] > 0]
    if not busy:
        return (f" The tracer wrote no block during any of the {len(writes)} traced runs (each rank's trace "
                f"fit its buffer and was written at MPI_Finalize; LLAMP_TRACE_FLUSH, docs/tracer.md).")
    worst = max(busy, key=lambda w: w["cpu_ns"])
    return (f" The tracer's writer compressed blocks during {len(busy)} of the {len(writes)} traced runs (at most "
            f"{worst['blocks']} blocks and {worst['cpu_ns'] / 1e6:.2f} ms of one rank's CPU, trace-{worst['trace']}): "
            f"time the rank's core lost that its graph counts as the application's computation (a larger "
            f"LLAMP_TRACE_BUFFER keeps the trace in memory until MPI_Finalize; docs/tracer.md).")


def _traced_runs(campaign):
    """trace.done.json: the kept trace's runtime, every traced runtime and which one was kept
    (a given --trace has none; a campaign from before --trace-runs has one runtime only)."""
    path = campaign.path("trace.done.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def _tracer_writes(campaign, traced):
    """Per traced run K (trace-K/tracer-cost-*.json): the most blocks and writer CPU ns any rank's
    trace writer spent before MPI_Finalize, time no stamp shows (docs/tracer.md, "When blocks are
    written"); runs whose files predate those figures are left out."""
    writes = []
    for k in range(1, traced + 1):
        costs = []
        for path in sorted(glob.glob(os.path.join(campaign.path(f"trace-{k}"), "tracer-cost-*.json"))):
            try:
                with open(path) as f:
                    costs.append(json.load(f))
            except (OSError, json.JSONDecodeError):
                continue
        costs = [c for c in costs if "write_cpu_ns_during_run" in c]
        if costs:
            writes.append({"trace": k, "blocks": max(c["blocks_written_during_run"] for c in costs),
                           "cpu_ns": max(c["write_cpu_ns_during_run"] for c in costs)})
    return writes


def _traces_added(campaign, traced):
    """How many of the `traced` runs beyond the planned --trace-runs each target added (a campaign
    from before the reason was kept added them by --trace-target only)."""
    reasons = [prepare.added_because(campaign, k) for k in range(campaign.trace_runs + 1, traced + 1)]
    return {"trace_target": sum(1 for r in reasons if r in ("", "trace-target")),
            "trace_floor_target": sum(1 for r in reasons if r == "trace-floor-target"),
            "every_round": sum(1 for r in reasons if r == "every-round")}


def _parameters(campaign):
    """params.json ({} if absent)."""
    try:
        with open(campaign.path("params.json")) as f:
            return json.load(f)
    except (FileNotFoundError, json.JSONDecodeError):
        return {}


def _graph_arguments(campaign):
    """The llamp schedgen arguments app.goal was made with (app.goal.json), None if unrecorded."""
    try:
        with open(campaign.path("app.goal.json")) as f:
            return json.load(f).get("schedgen_args")
    except FileNotFoundError:
        return None


def _one_core_per_threaded_rank(campaign, trace_dir):
    """True when the traced application asked for MPI_THREAD_MULTIPLE and every rank was pinned
    to a single core: its threads then shared that core in every run."""
    launcher = list(campaign.mpiexec)
    pinned_alone = any(a == "-bind-to" and b in ("core", "hwthread") for a, b in zip(launcher, launcher[1:]))
    if not pinned_alone or not trace_dir:
        return False
    try:
        with open(os.path.join(trace_dir, "meta.json")) as f:
            return json.load(f).get("thread_level") == "MPI_THREAD_MULTIPLE"
    except (OSError, ValueError):
        return False


def _core_probes(campaign, records):
    """What the core probes said (cores.py): the limit per host, the accepted runs' probes, and the
    slow-cores launches of the measured runs, the traced runs and the parameter launches."""
    hosts = []
    for path in sorted(glob.glob(campaign.path("cores-*.json"))):
        with open(path) as f:
            hosts.append(json.load(f))
    probed = [r for r in records if r.get("core_limit_ns") is not None]
    if not probed and not hosts:
        return None
    ok = [r for r in probed if r["status"] == runs.OK]
    values = sorted(v for r in ok for v in (r.get(k) for k in ("core_before_ns", "core_init_ns", "core_finalize_ns",
                                                               "core_during_ns", "core_during_min_ns",
                                                               "core_after_ns")) if v is not None)
    prepared = {}
    if os.path.exists(campaign.path("prepare-cores.json")):
        with open(campaign.path("prepare-cores.json")) as f:
            prepared = json.load(f)
    return {"hosts": hosts, "limit_ns": sorted({r["core_limit_ns"] for r in probed}),
            "floor_ns": sorted({r["core_floor_ns"] for r in probed if r.get("core_floor_ns") is not None}),
            "probed_attempts": len(probed),
            "slow_cores_attempts": sum(1 for r in probed if r["status"] == runs.SLOW_CORES),
            "accepted_probe_median_ns": values[len(values) // 2] if values else None,
            "accepted_probe_min_ns": values[0] if values else None,
            "accepted_probe_max_ns": values[-1] if values else None,
            "prepare": prepared}


def build(campaign):
    """Everything the report says, as one JSON-ready dict."""
    records = runs.load_records(campaign)
    pred = _main_prediction(campaign)
    rows = stats.per_delta(records, campaign.deltas_ns)
    L0 = pred.L0_ns if pred else None
    for row in rows:
        if pred:
            L = L0 + row["delta_ns"]
            row["predicted_ns"] = pred.runtime_ns(L)
            row["lambda_L"] = pred.lambda_L(L)
            row["rho_L"] = pred.rho_L(L)
            if "mean_ns" in row:
                row["error_ns"] = row["mean_ns"] - row["predicted_ns"]
                row["relative_error"] = row["error_ns"] / row["mean_ns"]

    measured_rows = [r for r in rows if "mean_ns" in r]
    missing = [r["delta_ns"] for r in rows if "mean_ns" not in r]
    with_noise = _with_noise(campaign, pred, rows)
    result = {
        "app": campaign.app, "ranks": campaign.ranks, "reps": campaign.reps,
        "rounds": rounds.rounds_in(campaign.schedule), "floor_target_pct": campaign.floor_target_pct or None,
        "deltas_ns": campaign.deltas_ns, "mpi_env": campaign.mpi_env, "launcher": list(campaign.mpiexec),
        "injector_prefix": campaign.injector_prefix or None,
        "L0_ns": L0, "per_delta": rows,
        "attempts": len(records),
        "failures": [r for r in records if r["status"] in (runs.FAILED, runs.TIMEOUT)],
        "slow_cores": [r for r in records if r["status"] == runs.SLOW_CORES],
        "noisy_host": [r for r in records if r["status"] == runs.NOISY_HOST],
        "core_probes": _core_probes(campaign, records),
        "slots_without_success": [s.slot for s in campaign.schedule if not runs.slot_done(records, s.slot)],
        "deltas_without_measurement": missing,
        "with_noise": with_noise,
        "throughput": _throughput(campaign),
        # after _with_noise, which gives the rows the replay's prediction
        "injector_delivery": inject_stats.per_delta(records, rows),
        "injector_late_spread": inject_stats.late_spread(records),
        "quiet_gate": quiet_gate.summary(campaign),
        "noisy_compute": compute_check.summary(campaign, records),
    }
    traced = _traced_runs(campaign)
    result["traced_runtime_ns"] = traced.get("traced_runtime_ns")
    result["traced_runtimes_ns"] = traced.get("traced_runtimes_ns",
                                              [] if result["traced_runtime_ns"] is None else [result["traced_runtime_ns"]])
    result["kept_trace"] = traced.get("kept_trace")
    result["trace_selection"] = traced.get("selection", "median" if traced.get("kept_trace") else None)
    result["reference_runtimes_ns"] = traced.get("reference_runtimes_ns", [])
    result["reference_runtime_ns"] = traced.get("reference_runtime_ns")
    result["trace_target_pct"] = campaign.trace_target_pct
    result["trace_floor_target_pct"] = campaign.trace_floor_target_pct or None
    result["max_trace_runs"] = campaign.max_trace_runs
    result["traces_added"] = _traces_added(campaign, len(traced.get("traced_runtimes_ns", [])))
    result["tracer_writes"] = _tracer_writes(campaign, len(traced.get("traced_runtimes_ns", [])))
    result["trace_dir"] = prepare.trace_location(campaign) if traced else None
    result["traces_interleaved"] = bool(traced.get("interleaved"))
    result["schedgen_args"] = _graph_arguments(campaign)
    # The traced runs the prediction averages (none: it is the kept trace's)
    members, weighted_by, left_out = (_members(campaign)
                                      if pred and os.path.basename(pred.source) == ensemble.MEAN_NAME
                                      else ([], None, {}))
    result["prediction_from"] = MEAN_OF_TRACES if members else ("kept trace" if pred else None)
    if members:
        result["per_trace_prediction"] = _per_trace(pred, members, weighted_by, rows, measured_rows)
        result["per_trace_prediction"]["left_out"] = left_out
    if pred:
        # The graphs the prediction stands on: every traced run's, or the kept trace's alone.
        graphs = {k: p.runtime_at_L0_ns for k, p, _ in members}
        weights = {k: w for k, _, w in members} or None
        if not members and result["kept_trace"]:
            graphs = {result["kept_trace"]: pred.runtime_at_L0_ns}
        zero = next((r["runtimes_ns"] for r in measured_rows if r["delta_ns"] == 0), [])
        result["t0_split"] = t0_split.split(graphs, result["traced_runtimes_ns"], result["reference_runtimes_ns"],
                                            zero, weights)
    params = _parameters(campaign)
    measurement = params.get("measurement", {})
    fit = measurement.get("G_fit", {})
    result["G_ns_per_byte"] = params.get("G_ns_per_byte")
    result["o_rndv_ns"] = params.get("o_rndv_ns")
    result["G_fit_bytes"] = [fit["min_bytes"], fit["max_bytes"]] if "min_bytes" in fit and "max_bytes" in fit else None
    # L + o_s + o_r of every llamp-loggp launch averaged into params.json, and the machine's
    # busy-wait overrun (mean over launches; one launch's for a single measurement).
    result["parameter_launches_L_plus_o_ns"] = [prepare.message_cost_ns(x) for x in measurement.get("launches", [])
                                                if "L_ns" in x]
    result["busy_wait_overrun"] = measurement.get("busy_wait_overrun_mean",
                                                  measurement.get("busy_wait_overrun", {}).get("mean"))
    # A 16 KiB copy hot and right after a 1 ms wait [ns] (median over launches; one launch's for a
    # single measurement): how cold a waiting core comes back.
    cold = measurement.get("cold_copy", {})
    result["cold_copy_ns"] = measurement.get(
        "cold_copy_median_ns", [cold["hot_ns"], cold["after_wait_ns"]] if "hot_ns" in cold else None)
    # The transport's first use on a fresh pair of ranks, per size (median over launches; one
    # launch's for a single measurement): a cost every run pays once, which the graph charges
    # unless the campaign runs with --no-first-use.
    result["first_use"] = measurement.get("first_use_median", measurement.get("first_use", {}).get("sizes"))
    result["threaded_ranks_on_one_core"] = _one_core_per_threaded_rank(campaign, result["trace_dir"])
    # The prediction's computation times are one traced run's: their spread over the K traced runs
    # is noise the prediction inherits, which the noise floor of the measured means does not show.
    runtimes = result["traced_runtimes_ns"]
    result["traced_runtime_cv"] = stats.sample_std(runtimes) / stats.mean(runtimes) if len(runtimes) >= 2 else None
    if pred and measured_rows:
        measured = [r["mean_ns"] for r in measured_rows]
        predicted = [r["predicted_ns"] for r in measured_rows]
        result["rmse_ns"] = stats.rmse(measured, predicted)
        result["rrmse"] = stats.rrmse(measured, predicted)
        result["rrmse_noise_floor"] = stats.noise_floor(measured_rows)
        traces_floor = (result.get("per_trace_prediction") or {}).get("rrmse_prediction_floor")
        result["rrmse_beyond_noise"] = stats.beyond_noise(result["rrmse"], result["rrmse_noise_floor"],
                                                          traces_floor or 0.0)
        every_run = [(r, t) for r in measured_rows for t in r["runtimes_ns"]]  # (its ΔL's row, runtime)
        run_times = [t for _, t in every_run]
        result["rmse_all_runs_ns"] = stats.rmse(run_times, [r["predicted_ns"] for r, _ in every_run])
        result["rrmse_all_runs"] = result["rmse_all_runs_ns"] / stats.mean(run_times)
        result["analysis"] = {"runtime_at_L0_ns": pred.runtime_at_L0_ns, "lambda_L_at_L0": pred.lambda_L_at_L0,
                              "rho_L_at_L0": pred.rho_L_at_L0, "critical_latencies_ns": pred.critical_ns}
        result["tolerance"] = tolerance_table(campaign, pred, measured_rows)
        result["poll_lags_at_cap"] = _with_lags_at_cap(campaign, measured_rows, pred.L0_ns)
        result["poll_lag_mode"] = pred.poll_lag_mode
        result["mean_error_ns"] = stats.mean([m - p for m, p in zip(measured, predicted)])
        result["judged"] = _judged(result, traces_floor)
        if len(measured_rows) >= 2:
            deltas = [r["delta_ns"] for r in measured_rows]
            result["response"] = {"measured_slope": stats.fitted_slope(deltas, measured),
                                  "predicted_slope": stats.fitted_slope(deltas, predicted),
                                  # over every run: the noise in the measured slope
                                  "measured_slope_se": stats.slope_standard_error(
                                      [r["delta_ns"] for r, _ in every_run], run_times)}
    if pred:
        result["predicted_curve"] = predicted_curve(campaign, pred, [p for _, p, _ in members])
    return result


WITH_NOISE = "with the machine's noise"  # report.json judged.prediction
LOGGPS_ALONE = "LogGPS alone"


def _judged(result, traces_floor):
    """The prediction the campaign is judged by: the one with the machine's recorded noise where the
    campaign recorded it (the default), else the LogGPS prediction alone. A rank that waits loses
    the host's detours that begin during its wait and last past its end, which LogGPS leaves out; over 100 campaigns of the VM
    (tables C-J) the prediction with noise had the lower RRMSE in 74 (docs/campaign.md, "The
    judged prediction"). The LogGPS prediction alone stays in report.json's `rrmse`, as LLAMP
    predicts."""
    noise = result.get("with_noise") or {}
    if "rrmse" in noise:
        judged = {"prediction": WITH_NOISE, "rrmse": noise["rrmse"], "mean_error_ns": noise["mean_error_ns"]}
    else:
        judged = {"prediction": LOGGPS_ALONE, "rrmse": result["rrmse"], "mean_error_ns": result["mean_error_ns"]}
    judged["rrmse_beyond_noise"] = stats.beyond_noise(judged["rrmse"], result["rrmse_noise_floor"],
                                                      traces_floor or 0.0)
    return judged


def predicted_curve(campaign, pred, members=(), points=200):
    """T, λ_L, ρ_L over the ΔL range on a grid plus every critical latency, for the figure; with the
    mean of several traced runs' predictions also the lowest and highest of them at each point."""
    top = max(campaign.deltas_ns)
    deltas = {top * i / points for i in range(points + 1)}
    deltas |= {c - pred.L0_ns for c in pred.critical_ns if 0 <= c - pred.L0_ns <= top}
    curve = []
    for d in sorted(deltas):
        L = pred.L0_ns + d
        point = {"delta_ns": d, "predicted_ns": pred.runtime_ns(L), "lambda_L": pred.lambda_L(L),
                 "rho_L": pred.rho_L(L)}
        if members:
            each = [p.runtime_ns(L) for p in members]
            point.update(predicted_min_ns=min(each), predicted_max_ns=max(each))
        curve.append(point)
    return curve


def tolerance_table(campaign, pred, measured_rows):
    deltas = [r["delta_ns"] for r in measured_rows]
    means = [r["mean_ns"] for r in measured_rows]
    table = []
    for pct in campaign.tolerances_pct:
        measured, reached = stats.tolerance_from_curve(deltas, means, pct)
        analyzer_L = pred.tolerance_L_ns(pct)
        if analyzer_L is not None and analyzer_L - pred.L0_ns > deltas[-1]:
            analyzer_L = None  # beyond the measured range: report it like the measured side
        # The same rule applied to the predicted curve on a fine grid over the measured range.
        grid = [deltas[0] + (deltas[-1] - deltas[0]) * i / 2000 for i in range(2001)]
        curve = [pred.runtime_ns(pred.L0_ns + d) for d in grid]
        from_curve, pred_reached = stats.tolerance_from_curve(grid, curve, pct)
        table.append({"percent": pct,
                      "predicted_delta_ns": (analyzer_L - pred.L0_ns) if analyzer_L is not None else from_curve,
                      "predicted_source": "llamp analyze --tolerance" if analyzer_L is not None else "predicted curve",
                      "predicted_reached_in_range": pred_reached,
                      "measured_delta_ns": measured, "measured_reached_in_range": reached})
    return table


def write_csvs(campaign, result):
    records = runs.load_records(campaign)
    fields = ["slot", "round", "delta_ns", "attempt", "status", "exit_code", "runtime_ns", "wall_s",
              "started_unix", "host", "core_before_ns", "core_init_ns", "core_finalize_ns", "core_during_ns",
              "core_during_min_ns", "core_after_ns", "compute_slowed_pct", "compute_stage",
              "reason", "directory"]
    with open(campaign.path("runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in sorted(records, key=lambda r: (r["slot"], r["attempt"])):
            w.writerow(r)
    # The analyzer's own plot overlays these: llamp analyze app.goal --params params.json
    # --plot fig.png --measured measured.csv
    with open(campaign.path("measured.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["delta_L_ns", "T_ns"])
        for row in result["per_delta"]:
            for t in row["runtimes_ns"]:
                w.writerow([row["delta_ns"], t])
    fields = ["delta_ns", "runs_ok", "attempts", "failed", "timed_out", "slow_cores", "noisy_host", "mean_ns", "std_ns",
              "min_ns", "max_ns", "cv", "predicted_ns", "predicted_se_ns", "error_ns", "relative_error", "predicted_noise_ns",
              "relative_error_noise", "lambda_L", "rho_L"]
    with open(campaign.path("summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for row in result["per_delta"]:
            w.writerow(row)


def _s(ns):
    return "–" if ns is None else f"{ns / 1e9:.5f}"


def _critical_list(inside, shown=5, source="analysis.json"):
    """The critical latencies inside the ΔL range; a long list (an app with many independent
    waits has thousands) shows its count, ends and the full list's place instead."""
    if not inside:
        return "none"
    if len(inside) <= 2 * shown + 2:
        return ", ".join(units.fmt_us(c, 2) for c in inside)
    return (f"{len(inside)} of them, " + ", ".join(units.fmt_us(c, 2) for c in inside[:shown]) + ", …, " +
            ", ".join(units.fmt_us(c, 2) for c in inside[-shown:]) + f" (all in {source})")


def _table_row(r, with_noise=False):
    def pct(x):
        return f"{100 * x:+.2f} %"
    cells = [units.fmt_us(r["delta_ns"]), f"{r['runs_ok']} / {r['attempts']}", _s(r.get("mean_ns")),
             _s(r.get("std_ns")), f"{100 * r['cv']:.2f} %" if "cv" in r else "–", _s(r.get("predicted_ns")),
             pct(r["relative_error"]) if "relative_error" in r else "–",
             f"{r['lambda_L']:.1f}" if "lambda_L" in r else "–", f"{r['rho_L']:.4f}" if "rho_L" in r else "–"]
    if with_noise:
        cells[7:7] = [_s(r.get("predicted_noise_ns")),
                      pct(r["relative_error_noise"]) if "relative_error_noise" in r else "–"]
    return "| " + " | ".join(cells) + " |"


def _core_probe_paragraph(result, probes):
    """One paragraph on the cores' state around the launches (cores.py, docs/campaign.md)."""
    limits = ", ".join(f"{x:.0f}" for x in probes["limit_ns"]) or "–"
    text = (f"Core hand-off (llamp-coreprobe before and after every launch, the runtime timer before MPI_Init, "
            f"every 100 ms during the run and after MPI_Finalize inside it; cores.csv): limit {limits} ns")
    floors = ", ".join(f"{x:.0f}" for x in probes.get("floor_ns", []))
    if floors:
        text += f", floor {floors} ns"
    if probes["hosts"]:
        text += " (" + "; ".join(f"{h['host']}: 3 x (limit) and 0.6 x (floor) the median of the fast ones of "
                                 f"{len(h['probes_ns'])} probes, {h.get('reference_ns', h['fastest_ns']):.0f} ns"
                                 for h in probes["hosts"]) + ")"
    for h in probes["hosts"]:
        for again in h.get("recalibrations", []):
            taken = again.get("taken_back", [])
            if "stall_launches" in again:  # since stop 47: launches in a row outside the band widen it
                text += (f". On {h['host']} {len(again['stall_launches'])} launches in a row ran {again['side']} "
                         f"(median probe {again['placement_ns']:.0f} ns, the reference {again['reference_ns']:.0f} ns), "
                         f"a placement the host kept giving, so the accepted band widened to it: limit "
                         f"{again['limit_ns']:.0f} ns, floor {again['floor_ns']:.0f} ns")
                continue
            heard = (f"a probe read {again['trigger_ns']:.0f} ns, under a third of the reference "
                     f"{again['reference_before_ns']:.0f} ns (a placement the calibration had not seen)")
            if "new_probes" in again:  # since stop 47: spaced probes, and the reference moves only by most of them
                heard += (f"; {again['new_probes_that_fast']} of {again['new_probes']} more probes, "
                          f"{again['spacing_s']:g} s apart, read that fast")
            if not again.get("moved", True):
                text += (f". On {h['host']} {heard}: a passing placement, so the reference stayed "
                         f"{again['reference_ns']:.0f} ns")
                continue
            text += (f". Calibrated again on {h['host']}: {heard}, and the reference became "
                     f"{again['reference_ns']:.0f} ns; "
                     + (f"{len(taken)} launch(es) the earlier limits had accepted ran outside the new ones and were "
                        f"launched again ({', '.join(taken)})" if taken else
                        "nothing the earlier limits had accepted ran outside the new ones"))
    text += (f". {probes['slow_cores_attempts']} of {probes['probed_attempts']} measured attempts were slow-cores "
             f"(the host had placed the ranks' cores apart, where every message is slower, or on one physical core, "
             f"where the ranks share its execution units) and were launched again; never averaged in.")
    if probes["accepted_probe_median_ns"] is not None:
        text += (f" The accepted runs' probes: median {probes['accepted_probe_median_ns']:.0f} ns, smallest "
                 f"{probes.get('accepted_probe_min_ns', 0):.0f} ns, largest {probes['accepted_probe_max_ns']:.0f} ns.")
    prepared = probes.get("prepare", {})
    if prepared:
        again = sum(v.get("slow_cores_launches", 0) for v in prepared.values())
        kept = [k for k, v in prepared.items() if v.get("kept_slow")]
        text += f" Parameter launches and traced runs: {again} launched again"
        text += f"; kept although slow-cores: {', '.join(kept)}." if kept else "."
    return text


def _noisy_host_sentence(result):
    """The measured attempts rejected as noisy-host, per ΔL and by which check: a spell during a run
    does not care about its ΔL, and a ΔL that lost many more would show otherwise."""
    per_delta = ", ".join(f"{units.fmt_us(r['delta_ns'])}: {r['noisy_host']}" for r in result["per_delta"])
    in_run = sum(1 for r in result["noisy_host"] if r.get("reason", "").startswith("in the run"))
    after = len(result["noisy_host"]) - in_run
    why = []
    if in_run:
        why.append(f"{in_run} because a rank computed too slowly outside MPI (`--noisy-compute`)")
    if after:
        why.append(f"{after} because the quiet gate's probe after the run said a noisy spell had begun during it "
                   f"(`--quiet-gate-after`)")
    return (f"{len(result['noisy_host'])} measured attempt(s) were noisy-host ({'; '.join(why)}), excluded from "
            f"every mean and launched again; per ΔL {per_delta}.")


def _interpolate(points, x):
    """Piecewise-linear y(x) through [[x, y], ...] (ascending x), held beyond the ends."""
    if x <= points[0][0]:
        return points[0][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return points[-1][1]


def _noise_paragraph(result):
    n = result.get("with_noise")
    if not n or "rrmse" not in n:
        return []
    fractions = n["lane_fractions"]
    spread = (f"{100 * min(fractions):.2f}–{100 * max(fractions):.2f} %" if len(fractions) > 1
              else f"{100 * fractions[0]:.2f} %")
    slope = (f", predicted response {n['predicted_slope']:.1f}" if "predicted_slope" in n else "")
    added = len(n["files"]) - n.get("planned_recordings", len(n["files"]))
    added = (f"; {added} of them in the rounds added after the planned ones, to keep --noise-runs' share of rounds"
             if added > 0 else "")
    return [f"**With this machine's noise: RRMSE {100 * n['rrmse']:.2f} %** (mean error {n['mean_error_ns'] / 1e9:+.5f} s"
            f"{slope}). {len(n['files'])} llamp-noise recordings ({', '.join(n['files'])}{added}; spinning CPUs lost {spread} "
            f"of their time to detours) replayed by `llamp analyze --noise` (the {n['statistic']} "
            f"of {n['samples']} phases, analysis-noise.json{_other_statistic(n)}): every wait for another rank ends only after a detour that began during it and covers its end "
            f"(docs/analyzer.md, 'Machine noise'){_resume_sentence(n)}. The model above has no noise; the difference "
            f"is what the machine takes away from ranks that wait.{_term_steps_sentence(result)}", ""]


def _other_statistic(n):
    """The judged RRMSE with the replay's other statistic (`--noise-statistic`), as a clause."""
    other = n.get("rrmse_other_statistic")
    if not other:
        return ""
    return (f"; with their {other['statistic']} RRMSE {100 * other['rrmse']:.2f} %, docs/campaign.md "
            f"\"The replay's mean\"")


_TERM_NAMES = {"detours": "the detours", "resume": "the resume block", "following": "the following work"}


def _term_steps_sentence(result):
    """The replay's terms one at a time: each step's RRMSE and response, against the measured one."""
    steps = (result.get("with_noise") or {}).get("term_steps")
    if not steps:
        return ""
    parts = []
    for i, step in enumerate(steps):
        added = [t for t in step["terms"] if i == 0 or t not in steps[i - 1]["terms"]]
        name = " + ".join(_TERM_NAMES.get(t, t) for t in added)
        slope = f", response {step['predicted_slope']:.1f}" if step.get("predicted_slope") is not None else ""
        parts.append(f"{'' if i == 0 else '+ '}{name}{' alone' if i == 0 else ''} {100 * step['rrmse']:.2f} %{slope}")
    measured = ""
    r = result.get("response")
    if r and "measured_slope" in r:
        se = r.get("measured_slope_se")
        measured = f"; measured response {r['measured_slope']:.1f}" + (f" ± {se:.1f}" if se is not None else "")
    return (f" The replay's terms one at a time (`llamp analyze --noise-terms`, analysis-noise-detours.json and "
            f"analysis-noise-resume.json): {'; '.join(parts)}{measured} (docs/campaign.md, \"The replay's terms\").")


def _resume_sentence(n):
    extra = n.get("resume_extra_at_100us_ns")
    if not extra:
        return ""
    spread = (f"{min(extra):.0f}–{max(extra):.0f} ns" if len(extra) > 1 else f"{extra[0]:.0f} ns")
    slowdown = n.get("following_slowdown_at_100us")
    following = ""
    if slowdown:
        pct = [100 * s for s in slowdown]
        following = (f"; the rank's computation up to its next receive runs slower by as much as the other MPI calls "
                     f"timed after the block did, "
                     + (f"{min(pct):.0f}–{max(pct):.0f} %" if len(pct) > 1 else f"{pct[0]:.0f} %")
                     + " after a 100 µs spin, on at most as much computation as they took hot")
    return (f", and is followed by the CPU's resume cost after a wait that long, less that of the same wait at the "
            f"traced latency (the recordings' block of MPI calls ran {spread} longer after a 100 µs spin than hot"
            f"{following})")


def _prediction_paragraph(result):
    """Where the prediction comes from: the mean of every traced run's, with each one's RRMSE."""
    per = result.get("per_trace_prediction")
    if not per:
        return []
    traces = per["traces"]
    each = ", ".join(f"trace-{t['trace']} {100 * t['rrmse']:.2f} %" for t in traces if "rrmse" in t)
    kept = next((t for t in traces if t["trace"] == result.get("kept_trace")), None)
    text = (f"Prediction: the mean of the {len(traces)} traced runs' predictions (each traced run's graph analysed "
            f"alike, analysis-trace-K.json; their mean curve analysis-mean.json): each traced run is one draw of "
            f"how fast the CPUs computed, and the measured means average over such draws "
            f"(docs/campaign.md, 'Prediction from every traced run'). Each alone: {each}")
    if kept and "rrmse" in kept:
        text += f"; the kept trace-{kept['trace']} alone (`--prediction-from kept-trace`) {100 * kept['rrmse']:.2f} %"
    text += "."
    left_out = per.get("left_out") or {}
    if left_out:
        text += (f" Left out of the mean, slowed by the host (kept only because every relaunch was noisy too): "
                 + "; ".join(f"trace-{k}: {why}" for k, why in sorted(left_out.items(), key=lambda kv: int(kv[0])))
                 + ".")
    if per.get("trace_weights") == "rounds":
        text += (f" The mean is weighted by round (`--trace-weights rounds`): each round counts as often as it has "
                 f"ok measured runs, shared by the traced runs launched in it, as the measured means count it; the "
                 f"weights ({_weights_text(traces)}) are worth {per['effective_traces']:.1f} equal ones")
        if "rrmse_equal_weights" in per:
            text += (f"; with equal weights (`--trace-weights equal`) the LogGPS prediction's RRMSE would be "
                     f"{100 * per['rrmse_equal_weights']:.2f} % instead of {100 * result['rrmse']:.2f} %")
        text += " (docs/campaign.md, 'Weights by round')."
    if "rrmse_prediction_floor" in per:
        text += (f" Their spread leaves the mean a standard error worth RRMSE "
                 f"{100 * per['rrmse_prediction_floor']:.2f} % (√(mean of se²) / mean measured): what an exact model "
                 f"fed these traced runs would still miss by, beside the noise floor below.")
    target = result.get("trace_floor_target_pct")
    if target:
        added = (result.get("traces_added") or {}).get("trace_floor_target", 0)
        in_step = (result.get("traces_added") or {}).get("every_round", 0)
        text += (f" --trace-floor-target {target:g} %: {added} traced run(s) added among the added rounds' runs "
                 f"while that floor was above it"
                 + (f", up to --max-trace-runs {result['max_trace_runs']} and --max-reps; it stayed above (about "
                    f"{rounds.count_to_reach(len(traces), per['rrmse_prediction_floor'], target)} traced runs would "
                    f"reach it: the floor falls with √K)."
                    if "rrmse_prediction_floor" in per and 100 * per["rrmse_prediction_floor"] > target else ".")
                 + (f" {in_step} more, one in each round added after it was met, so that the traced runs span the "
                    f"campaign's time as the measured runs do (the host drifts over minutes)." if in_step else ""))
    return [text, ""]


def _weights_text(traces, shown=8):
    """"trace-1 6.0, trace-2 3.0, ..." with the first `shown` traced runs, the range of the rest."""
    items = [f"trace-{t['trace']} {t['weight']:.1f}" for t in traces[:shown]]
    rest = [t["weight"] for t in traces[shown:]]
    if rest:
        items.append(f"the other {len(rest)} {min(rest):.1f}–{max(rest):.1f}")
    return ", ".join(items)


def _rounds_sentence(result):
    targets = []
    if result.get("floor_target_pct"):
        targets.append(f"--floor-target {result['floor_target_pct']:g} % adds a round of every ΔL while the floor is "
                       f"above it or a ΔL has fewer than two ok runs")
    if result.get("trace_floor_target_pct"):
        targets.append(f"--trace-floor-target {result['trace_floor_target_pct']:g} % while the traces' floor is "
                       f"above it")
    if not targets:
        return ""
    text = f" Rounds: {result['rounds']} ({result['reps']} planned; {'; '.join(targets)})."
    floor, target = result.get("rrmse_noise_floor"), result.get("floor_target_pct")
    if target and floor is not None and 100 * floor > target:
        text += (f" The noise floor stayed above {target:g} % (--max-reps); about "
                 f"{rounds.count_to_reach(result['rounds'], floor, target)} rounds would reach it on this machine.")
    return text


def _first_use_paragraph(first_use, schedgen_args):
    """report.md's lines for llamp-loggp's first-use probe (none without one), and whether the graph
    charges it (llamp schedgen --first-use, which the campaign passes unless --no-first-use)."""
    if not first_use:
        return []
    parts = [f"{x['bytes']} B {x['excess_ns'] / 1e6:.2f} ms ({x['slow_trips']:.0f} above 3× the warm "
             f"{x['warm_rtt_ns'] / 1e3:.2f} µs)" for x in first_use]
    total = sum(x["excess_ns"] for x in first_use)
    charged = any(a == "--first-use" or a.startswith("--first-use=") for a in schedgen_args or [])
    model = ("The graph charges it: the first messages of each pair of ranks in each size band cost their "
             "sender (blocking sends) and receiver that much more computation (`llamp schedgen --first-use`)"
             if charged else
             "The graph charges warm costs only (`--no-first-use`), so it is part of the graph's term above for "
             "an application whose messages take those sizes")
    return [f"The transport's first use (llamp-loggp, on a fresh pair of ranks before any larger message): the "
            f"first half of its round trips at each size took beyond the warm ones {', '.join(parts)}; "
            f"{total / 1e6:.2f} ms in all. Every run pays such a cost once per pair of ranks and size of message "
            f"(the transport's buffers touched for the first time). {model} "
            f"(docs/campaign.md, \"The transport's first use\").", ""]


def _delivery_paragraph(result):
    """How late the injector released what it held, per ΔL (inject_stats.py), beside what the runs
    measured beyond LogGPS and what the noise replay adds: late releases are the part of the
    machine's noise that lands on the injected latency itself."""
    rows = result.get("injector_delivery") or []
    if not rows:
        return []
    lines = ["The injector's delivery (`LLAMP_INJECT_STATS` of every run at ΔL > 0; docs/campaign.md, \"The "
             "injector's delivery\"): how late each rank released the messages it held, against their target "
             "(arrival + ΔL), over the releases in a pass of the MPI call that was polling when they fell due. "
             "A message already due when first seen, or released in the first pass of a call (it may have "
             "fallen due while the application computed), was not late: ΔL hid behind computation. A rank's "
             "late time in a run bounds what late releases add to the run from above: only releases on the "
             "critical path add theirs. Measured − LogGPS is what the runs took beyond the model without "
             "noise; the noise replay's share of it is the prediction with noise less LogGPS.", "",
             "| ΔL | runs | held per rank | late median | p99 | mean | late per rank and run | measured − LogGPS "
             "| replay adds | stamped, already due | due outside MPI |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def ms(key, row):
        return f"{row[key] / 1e6:.2f} ms" if row.get(key) is not None else "–"
    for r in rows:
        due = f"{100 * r['due_when_seen']:.1f} %" if r.get("due_when_seen") is not None else "–"
        outside = f"{100 * r['due_outside_mpi']:.1f} %" if r.get("due_outside_mpi") is not None else "–"
        lines.append(f"| {units.fmt_us(r['delta_ns'])} | {r['runs']} | {r['held_per_rank']:.0f} | "
                     f"{r['lateness_median_ns']:.0f} ns | {r['lateness_p99_ns'] / 1e3:.2f} µs | "
                     f"{r['lateness_mean_ns']:.0f} ns | {ms('late_per_rank_ns', r)} | "
                     f"{ms('measured_minus_loggps_ns', r)} | {ms('replay_adds_ns', r)} | {due} | {outside} |")
    dropped = sum(r["dropped_at_finalize"] for r in rows)
    turns = sorted({t for r in rows for t in r["turns"]})
    tail = [f"Messages still held at MPI_Finalize: {dropped}" + (" (a message the application never waited "
            "for, or one that finalize cut short)" if dropped else "") + "."]
    if turns:
        tail.append(f"The application and the injector's thread took turns by {' and '.join(turns)} "
                    f"(docs/injector.md, \"The application gate\").")
    if any(r.get("due_outside_mpi") is None for r in rows):
        tail.append("Lines without due_outside_mpi come from an injector that timed every release, also one at "
                    "the first pass of an MPI call after the application computed: there the lateness includes "
                    "computation.")
    if "on" in {w for r in rows for w in r.get("watch", [])}:
        tail.append("Some ranks received messages without a send stamp (a peer on another node), so the "
                    "injector's thread watched for their arrivals while the application computed "
                    "(docs/injector.md, \"Arrival times while the application computes\").")
    return lines + ["", " ".join(tail), ""] + _late_spread_paragraph(result.get("injector_late_spread"))


def _late_spread_paragraph(spread):
    """What the runs' spread at one ΔL has to do with their late releases (inject_stats.late_spread)."""
    if not spread:
        return []
    slope, se = spread["slope"], spread["slope_se"]
    text = (f"Run to run at one ΔL ({spread['runs']} runs at {spread['deltas']} ΔL values), the runtime follows "
            f"the run's late releases (the late time of its ranks summed): least squares within each ΔL, slope "
            f"{slope:.2f} ± {se:.2f} (a run whose ranks released 1 ms later in all took {slope:.2f} ms longer), "
            f"correlation {spread['correlation']:.2f}. The line accounts for {100 * spread['explained']:.0f} % of "
            f"the runtimes' spread within ΔL (standard deviation {spread['runtime_sd_ns'] / 1e6:.2f} ms, "
            f"{spread['residual_sd_ns'] / 1e6:.2f} ms left; the late time's {spread['late_sd_ns'] / 1e6:.2f} ms). ")
    if slope - 2 * se <= 0 or spread["explained"] < 0.25:
        text += ("So what varies between these runs is mostly not the host's stalls at the messages' due times: "
                 "for example where the host placed the ranks' cores, or computation slowed without its CPU "
                 "being taken away.")
    elif slope - 2 * se > 1.5:
        text += ("A slope well above 1: the late releases mark the runs in which the host took the CPUs away "
                 "more often, while they computed too. That spread is the host's, and the prediction with noise "
                 "carries only its average (the recordings).")
    else:
        text += ("A slope near 1: a run's late releases add their own lateness to it, as releases on the "
                 "critical path do; the spread the line leaves is something else.")
    return [text[:-1] + " (docs/campaign.md, \"The injector's delivery\").", ""]


def markdown(campaign, result):
    lines = [f"# llamp validation campaign: `{' '.join(campaign.app)}` on {campaign.ranks} ranks", ""]
    if "rrmse" in result:
        judged = result["judged"]
        if judged["prediction"] == WITH_NOISE:
            lines += [f"**RRMSE {100 * judged['rrmse']:.2f} %**, the prediction with this machine's noise (below), "
                      f"which the campaign is judged by (docs/campaign.md, 'The judged prediction'); the LogGPS "
                      f"prediction alone, as LLAMP predicts: RRMSE {100 * result['rrmse']:.2f} %.", ""]
        lines += [("LogGPS alone: " if judged["prediction"] == WITH_NOISE else "")
                  + f"**RRMSE {100 * result['rrmse']:.2f} %** (RMSE {result['rmse_ns'] / 1e9:.5f} s) over "
                  f"{len([r for r in result['per_delta'] if 'mean_ns' in r])} ΔL values; over every single run: "
                  f"RRMSE {100 * result['rrmse_all_runs']:.2f} %. Mean error (measured − predicted) "
                  f"{result['mean_error_ns'] / 1e9:+.5f} s.", ""]
        lines += _noise_paragraph(result)
        lines += [f"Noise floor: an exact prediction would still show RRMSE "
                  f"{100 * result['rrmse_noise_floor']:.2f} % from the run-to-run spread of the measured means "
                  f"(√(mean of std²/n) / mean); more runs per ΔL lower it.{_rounds_sentence(result)}", ""]
        lines += quiet_gate.paragraph(result.get("quiet_gate"))
        lines += _prediction_paragraph(result)
        traces_floor = (result.get("per_trace_prediction") or {}).get("rrmse_prediction_floor")
        lines += [f"**Beyond the noise: RRMSE {100 * judged['rrmse_beyond_noise']:.2f} %**, √(max(0, RRMSE² − "
                  + ("noise floor² − traces' floor²" if traces_floor is not None else "noise floor²")
                  + f")) of the judged prediction ({judged['prediction']}; LogGPS alone "
                  f"{100 * result['rrmse_beyond_noise']:.2f} %): the model's own error as far as these runs can tell "
                  f"it (the floors are estimates from a few runs each; 0 means within the noise).", ""]
        lines += _throughput_paragraph(result)
        lines += t0_split.paragraph(result.get("t0_split"))
        lines += _first_use_paragraph(result.get("first_use"), result.get("schedgen_args"))
        if "response" in result:
            r = result["response"]
            se = r.get("measured_slope_se")
            runs = sum(row["runs_ok"] for row in result["per_delta"])
            spread = (f" ± {se:.1f} (standard error from the spread of the {runs} runs: a gap to the prediction "
                      f"within about twice that can be noise)" if se is not None else "")
            lines += [f"Response to latency (least-squares slope of runtime over ΔL, s per s): measured "
                      f"{r['measured_slope']:.1f}{spread}, predicted {r['predicted_slope']:.1f}. A constant offset "
                      f"between measured and predicted (e.g. time the tracer adds) shows in the mean error, not "
                      f"here.", ""]
            if result.get("busy_wait_overrun") is not None:
                excess = 100 * (r["measured_slope"] / r["predicted_slope"] - 1) if r["predicted_slope"] else float("nan")
                lines += [f"Busy waits on this machine overran by {100 * result['busy_wait_overrun']:.2f} % "
                          f"(llamp-loggp: 100 µs spins on both ranks): a rank waiting out ΔL loses about that much "
                          f"to interrupts or a VM's host, which no model of the application predicts. Measured "
                          f"response − predicted: {excess:+.2f} %.", ""]
            if result.get("cold_copy_ns"):
                hot, after = result["cold_copy_ns"]
                lines += [f"A core that waited comes back cold: a 16 KiB copy took {hot:.0f} ns hot and "
                          f"{after:.0f} ns right after a 1 ms wait (llamp-loggp). The prediction charges what the "
                          f"application's work cost in its trace, between short waits; where other work shares "
                          f"the cores (a VM's host) and empties their caches while a rank waits out ΔL, the work "
                          f"after each long wait costs more than that (docs/injector.md, \"Waiting CPUs come back "
                          f"cold\").", ""]
    else:
        lines += ["No prediction (analysis.json missing): measured runtimes only.", ""]
    lines += _delivery_paragraph(result)
    if result["L0_ns"] is not None:
        a = result["analysis"] if "analysis" in result else {}
        lines += [f"L0 = {result['L0_ns']:.1f} ns (params.json); predicted T(L0) = "
                  f"{_s(a.get('runtime_at_L0_ns'))} s, λ_L(L0) = {a.get('lambda_L_at_L0', float('nan')):.1f}, "
                  f"ρ_L(L0) = {a.get('rho_L_at_L0', float('nan')):.4f}.", ""]
        if result.get("G_ns_per_byte") is not None and result.get("G_fit_bytes"):
            lo, hi = result["G_fit_bytes"]
            lines += [f"G = {result['G_ns_per_byte']:.4f} ns/B, the slope of the echoed ping-pong's half round trip "
                      f"over {lo}–{hi} B (llamp-loggp; `--max-size auto` fits it up to the application's largest "
                      f"message)."
                      + (f" A rendezvous transfer's handshake beyond its latency terms, o_rndv = "
                         f"{result['o_rndv_ns']:.0f} ns (the fit's intercept less o_s + o_r + 3L), is part of "
                         f"each receive of more than S bytes." if result.get("o_rndv_ns") else ""), ""]
        launches = result.get("parameter_launches_L_plus_o_ns", [])
        if len(launches) > 1:
            per_launch = ", ".join(f"{x:.0f}" for x in launches)
            lines += [f"params.json is the median of {len(launches)} llamp-loggp launches; L + o_s + o_r per launch: "
                      f"{per_launch} ns (on a VM whose host places the vCPUs apart every message is 2-3x slower; such launches "
                      f"are launched again, see 'Core hand-off' below).", ""]
        cap = result.get("poll_lags_at_cap")
        if cap:
            lines += [f"With the polling lags at their caps instead (`llamp analyze --poll-lag cap`, "
                      f"analysis-cap.json): RRMSE {100 * cap['rrmse']:.2f} %, T(L0) {_s(cap['runtime_at_L0_ns'])} s. "
                      f"The prediction above (`--poll-lag {result.get('poll_lag_mode') or 'phase'}`) keeps the polling "
                      f"phase the trace showed at L0, which added latency destroys within a polling period; from "
                      f"there on the cap, the expected lag, holds (docs/analyzer.md, 'Polling lag').", ""]
        if result.get("schedgen_args"):
            lines += [f"Graph made with `llamp schedgen {' '.join(result['schedgen_args'])}` (app.goal.json; a "
                      f"`--collective-overhead` is params.json's o_coll_ns, the CPU time of a blocking collective "
                      f"beyond its messages; a `--probe-overhead` its o_probe_ns, the CPU time of a blocking probe "
                      f"once its message is there).", ""]
        if a:
            top = max(campaign.deltas_ns)
            inside = [c - result["L0_ns"] for c in a["critical_latencies_ns"] if 0 <= c - result["L0_ns"] <= top]
            source = ensemble.MEAN_NAME if result.get("per_trace_prediction") else "analysis.json"
            lines += ["Critical latencies in the ΔL range (λ_L changes there"
                      + (", in any traced run's graph" if result.get("per_trace_prediction") else "") + "): "
                      + _critical_list(inside, source=source) + ".", ""]
    if result["traced_runtime_ns"] is not None:
        base = next((r for r in result["per_delta"] if r["delta_ns"] == min(campaign.deltas_ns) and "mean_ns" in r), None)
        overhead = (f" ({100 * (result['traced_runtime_ns'] / base['mean_ns'] - 1):+.2f} % vs. the untraced mean)"
                    if base else "")
        kept = ""
        if result.get("reference_runtime_ns") is not None:
            reference = result["reference_runtime_ns"]
            kept = (f" Kept trace-{result['kept_trace']}, of {len(result['traced_runtimes_ns'])} traced runs ("
                    + ", ".join(f"{_s(t)}" for t in result["traced_runtimes_ns"]) + " s) the closest to the median "
                    f"of the untraced reference runs launched just before each ({_s(reference)} s; "
                    + ", ".join(f"{_s(t)}" for t in result["reference_runtimes_ns"]) + " s). Tracing changed the "
                    f"runtime by {100 * (statistics.median(result['traced_runtimes_ns']) / reference - 1):+.2f} % "
                    f"(median traced against median untraced).")
            added = result["traces_added"]["trace_target"]
            if campaign.trace_target_pct > 0:
                kept += (f" --trace-target {campaign.trace_target_pct:g} %: "
                         + (f"{added} traced run(s) added to the {campaign.trace_runs} planned, because none was that "
                            f"close before" if added > 0 else "the planned traced runs had one that close")
                         + ("." if abs(result["traced_runtime_ns"] - reference) <= campaign.trace_target_pct / 100 * reference
                            else f"; none was, up to {campaign.max_trace_runs}."))
        elif len(result["traced_runtimes_ns"]) > 1:
            kept = (f" Kept trace-{result['kept_trace']}, the median of {len(result['traced_runtimes_ns'])} traced "
                    f"runs: " + ", ".join(f"{_s(t)}" for t in result["traced_runtimes_ns"]) + " s.")
        if len(result["traced_runtimes_ns"]) > 1:
            if result.get("traces_interleaved"):
                kept += " Trace 1 ran before the measured runs, the others evenly spread among them."
            kept += (f" Their spread (CV {100 * result['traced_runtime_cv']:.2f} %) is noise the prediction "
                     + ("inherits, reduced by averaging over the traced runs." if result.get("per_trace_prediction")
                        else "inherits through the kept run's computation times."))
        lines += [f"Traced run: {_s(result['traced_runtime_ns'])} s{overhead}.{kept}"
                  + _tracer_writes_sentence(result.get("tracer_writes", [])), ""]
    noisy = bool(result.get("with_noise"))
    lines += ["| ΔL | runs ok / attempts | measured mean [s] | std [s] | CV | predicted [s] | error | "
              + ("with noise [s] | error | " if noisy else "") + "λ_L | ρ_L |",
              "|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if noisy else "") + "---:|---:|"]
    for r in result["per_delta"]:
        lines.append(_table_row(r, noisy))
    if "tolerance" in result:
        lines += ["", "| tolerance | predicted ΔL | measured ΔL |", "|---:|---:|---:|"]
        for t in result["tolerance"]:
            p = units.fmt_us(t["predicted_delta_ns"]) + ("" if t["predicted_reached_in_range"] else " (≥, not reached)")
            m = units.fmt_us(t["measured_delta_ns"]) + ("" if t["measured_reached_in_range"] else " (≥, not reached)")
            lines.append(f"| {t['percent']:g} % | {p} | {m} |")
    lines += [""]
    if result["failures"]:
        lines += [f"{len(result['failures'])} failed or timed-out attempt(s), excluded from every mean:", ""]
        for r in result["failures"]:
            lines.append(f"- slot {r['slot']} (ΔL {units.fmt_us(r['delta_ns'])}, round {r['round']}, "
                         f"attempt {r['attempt']}): {r['status']}: {r['reason']}")
        lines.append("")
    if result["noisy_host"]:
        lines += [_noisy_host_sentence(result), ""]
    lines += compute_check.paragraph(result.get("noisy_compute"))
    probes = result.get("core_probes")
    if probes:
        lines += [_core_probe_paragraph(result, probes), ""]
    if result["slots_without_success"]:
        lines += [f"Slots with no successful run: {result['slots_without_success']} "
                  f"(resume with `llamp-campaign resume {campaign.out_dir}`).", ""]
    env = " ".join(f"{k}={v}" for k, v in sorted(campaign.mpi_env.items()))
    lines += [f"Every run, traced or not, was launched as `{(env + ' ') if env else ''}{' '.join(campaign.mpiexec)} "
              f"-n {campaign.ranks} APP` (docs/campaign.md, 'Environment of all runs').", ""]
    if result.get("threaded_ranks_on_one_core"):
        lines += ["**Note:** the application runs MPI_THREAD_MULTIPLE and each rank was pinned to one core, so its "
                  "threads shared that core in every run; `--bind-to core:N` gives each rank N cores, "
                  "`--bind-to none` leaves placement to the OS.", ""]
    lines += ["Runtime of a run: max over ranks of (MPI_Finalize start − MPI_Init end), measured by "
              "libllamp_runtime_timer.so; predicted runtime: `llamp analyze` T(L0 + ΔL). Rounds are "
              "shuffled permutations of the ΔL list. Files: runs.csv (every attempt), summary.csv, measured.csv "
              "(for `llamp analyze --plot --measured`), "
              "report.json, campaign.png, params.json, analysis.json (the kept trace's graph app.goal), "
              "analysis-trace-K.json and analysis-mean.json (every traced run's, and their mean), noise-K.json and "
              "analysis-noise.json (with noise; analysis-noise-detours.json and analysis-noise-resume.json with its terms one at "
              "a time), logs/.", ""]
    return "\n".join(lines)


def write(campaign, log=print):
    result = build(campaign)
    write_csvs(campaign, result)
    with open(campaign.path("report.json"), "w") as f:
        json.dump(result, f, indent=2)
    with open(campaign.path("report.md"), "w") as f:
        f.write(markdown(campaign, result))
    if any("mean_ns" in r for r in result["per_delta"]):
        try:
            from . import plot
        except ImportError as e:  # the numbers matter more than the figure
            log(f"no figure: matplotlib is not importable ({e}); run with Debian's /usr/bin/python3")
        else:
            plot.figure(campaign, result, campaign.path("campaign.png"))
    if "rrmse" in result:
        judged = result["judged"]
        log(f"report: {campaign.path('report.md')} (RRMSE {100 * judged['rrmse']:.2f} %, {judged['prediction']}"
            + (f"; LogGPS alone {100 * result['rrmse']:.2f} %" if judged["prediction"] == WITH_NOISE else "") + ")")
    else:
        log(f"report: {campaign.path('report.md')}")
    return result
