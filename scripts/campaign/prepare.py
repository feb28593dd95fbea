"""Steps (a)-(c): LogGP parameters, K traced runs (the median one is kept), schedgen + analyze.

Each step writes its product into the campaign folder and is skipped when the product already
exists, so a resumed campaign does not redo them. Commands and output go to <out>/logs/.
"""
import glob
import json
import math
import os
import re
import shutil
import statistics
import subprocess

from . import compute_check, cores, environment, quiet_gate
from .runs import OK, log_path, probed_cpus, run_command
from .runtime_records import RecordError, read_core_probes, read_run


class StepError(Exception):
    pass


def _run_step(campaign, name, cmd, env, attempts=2):
    """Runs a preparation command, retrying once like an application run."""
    log = log_path(campaign, name)
    for attempt in range(1, attempts + 1):
        status, code, wall = run_command(cmd, env, log, campaign.timeout_s)
        if status == OK:
            return wall
        with open(log, "a") as f:
            f.write(f"\nllamp-campaign: {name} attempt {attempt} {status} (exit code {code})\n")
    raise StepError(f"{name} failed {attempts} times; see {log}")


def _guarded_step(campaign, launch, cpus, run, log):
    """A parameter launch or traced run between core probes (cores.py), launched again while the
    probes say slow-cores; what the probes said goes to prepare-cores.json for the report."""
    _, guard, slow = cores.guarded(campaign, launch, cpus, run, log)
    if guard.limit is None:
        return
    path = campaign.path("prepare-cores.json")
    ledger = {}
    if os.path.exists(path):
        with open(path) as f:
            ledger = json.load(f)
    ledger[launch] = dict(guard.fields(), slow_cores_launches=slow, kept_slow=guard.slow, host=os.uname().nodename)
    with open(path + ".tmp", "w") as f:
        json.dump(ledger, f, indent=2)
    os.replace(path + ".tmp", path)
    if guard.slow:
        log(f"{launch}: still slow-cores after {slow} more launches; kept ({guard.reason()})")


def _require(path, what):
    if not os.path.exists(path):
        raise StepError(f"{what} not found at {path}; build it or pass its path (see --help)")


# Parameters combined over the llamp-loggp launches (each the median of the launches).
AVERAGED_PARAMETERS = ("L_ns", "o_ns", "g_ns", "G_ns_per_byte", "o_send_ns", "o_recv_ns", "o_coll_ns", "o_probe_ns",
                       "o_rndv_ns", "o_rndv_cold_ns")


def message_cost_ns(params):
    """L + o_s + o_r of a parameter file (or one launch of it): what one eager message costs."""
    return params["L_ns"] + params.get("o_send_ns", params.get("o_ns", 0)) + params.get("o_recv_ns", params.get("o_ns", 0))


def _median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


# What llamp-loggp's first-use probe keeps per size (measurement.first_use.sizes).
FIRST_USE_KEYS = ("bytes", "warm_rtt_ns", "excess_ns", "slow_trips", "send_excess_ns")


def combine_parameter_files(files):
    """One parameter file from K llamp-loggp launches: the median of each parameter over the
    launches, the first launch's measurement details plus every launch's values.

    The median, not the mean: launches whose cores the probes found apart are launched again
    (cores.py), and the measured runs in the same state are not averaged in, so the parameters are
    those of the fast state; what is left are launches the vCPUs left mid-job, between fast probes at
    both edges (stop 13, app_pingpong: one of five at G 0.637 ns/B and o 1272 ns against 0.175-0.202
    and 240-316; their mean put G at 0.276 and T(0) 42 % high)."""
    combined = dict(files[0])
    launches = [{k: f[k] for k in AVERAGED_PARAMETERS + ("S_bytes",) if k in f} for f in files]
    for launch, f in zip(launches, files):
        overrun = f.get("measurement", {}).get("busy_wait_overrun", {}).get("mean")
        if overrun is not None:
            launch["busy_wait_overrun"] = overrun
        cold = f.get("measurement", {}).get("cold_copy", {})
        if "hot_ns" in cold and "after_wait_ns" in cold:
            launch["cold_copy_ns"] = [cold["hot_ns"], cold["after_wait_ns"]]
        first = f.get("measurement", {}).get("first_use", {}).get("sizes")
        if first:
            launch["first_use"] = [{k: x[k] for k in FIRST_USE_KEYS if k in x} for x in first]
    for key in AVERAGED_PARAMETERS:
        values = [f[key] for f in files if key in f]
        if values:
            combined[key] = _median(values)
    sizes = sorted(f["S_bytes"] for f in files)
    combined["S_bytes"] = sizes[(len(sizes) - 1) // 2]  # a threshold: one of the measured ones
    measurement = dict(combined.get("measurement", {}))
    measurement["launches"] = launches
    overruns = [x["busy_wait_overrun"] for x in launches if "busy_wait_overrun" in x]
    if overruns:
        measurement["busy_wait_overrun_mean"] = sum(overruns) / len(overruns)
    colds = [x["cold_copy_ns"] for x in launches if "cold_copy_ns" in x]
    if colds:  # medians over launches, like the parameters
        measurement["cold_copy_median_ns"] = [_median([c[0] for c in colds]), _median([c[1] for c in colds])]
    firsts = [x["first_use"] for x in launches if "first_use" in x]
    if firsts:  # per size, the median over the launches that measured it
        medians = []
        for size in sorted({x["bytes"] for first in firsts for x in first}):
            rows = [x for first in firsts for x in first if x["bytes"] == size]
            row = {"bytes": size, "launches": len(rows)}
            row.update({k: _median([r[k] for r in rows]) for k in FIRST_USE_KEYS
                        if k != "bytes" and all(k in r for r in rows)})
            medians.append(row)
        measurement["first_use_median"] = medians
    measurement["combination_over_launches"] = (
        f"median of {len(files)} llamp-loggp launches (each its own MPI job) for "
        f"{', '.join(AVERAGED_PARAMETERS)}; lower median S_bytes; the other measurement details are launch 1's")
    combined["measurement"] = measurement
    return combined


def _loggp_arguments(campaign, log):
    """llamp-loggp's arguments beyond -o: the sizes `--o-size/--max-size auto` read from app.goal,
    and --loggp-arg."""
    extra = []
    if campaign.o_size == "auto":
        size = reference_size_from_graph(campaign.path("app.goal"))
        log(f"parameters: o and L taken at {size} B (mean message size of the application, power of two)")
        extra += ["--o-size", f"{size}B"]
    elif campaign.o_size:
        extra += ["--o-size", campaign.o_size]
    if campaign.max_size == "auto":
        largest = largest_size_from_graph(campaign.path("app.goal"))
        log(f"parameters: sizes measured and G fit up to {largest} B (the application's largest message, power of "
            f"two, at least {AUTO_MAX_SIZE_FLOOR} B)")
        extra += ["--max-size", f"{largest}B"]
    elif campaign.max_size:
        extra += ["--max-size", campaign.max_size]
    return extra + list(campaign.loggp_args)


def parameter_launch_once(campaign, k, log=print, extra=None):
    """Parameter launch k (params-k.json), between core probes; skipped when it exists."""
    one = campaign.path(f"params-{k}.json")
    if parameter_launch_done(campaign, k):
        return
    _require(campaign.tools.loggp, "llamp-loggp")
    env = environment.base_environment(campaign)
    # (launches among the runs take the sizes launch 1 logged)
    cmd = list(campaign.mpiexec) + ["-n", "2", campaign.tools.loggp, "-o", one + ".tmp"] + (
        _loggp_arguments(campaign, lambda *_: None) if extra is None else extra)
    _guarded_step(campaign, f"params-{k}", probed_cpus(campaign, 2),
                  lambda guard: _parameter_launch(campaign, k, cmd, env, guard), log)
    os.replace(one + ".tmp", one)


def measure_parameters(campaign, log=print, first_only=False):
    """(a) params.json: llamp-loggp between two ranks on the same stack, at ΔL = 0, launched
    --param-runs times (params-k.json each) and combined (combine_parameter_files). One launch is
    one draw: on the 2-vCPU VM a job's 64 B half round trip is either ~150 or ~490 ns, the same
    for the whole job (where the host has put the vCPUs: cores.py, which now launches a slow one
    again), and one slow launch put L0 at 174 ns instead of 7 ns, every subcomm message 0.2 µs
    late in the prediction. With first_only, launch 1 only, and params.json combined from the
    launches there are (provisional: run_local spreads the others over the measured runs and
    settle_parameters combines them all). params.json is made again whenever it was combined
    from other launches than there are now."""
    target = campaign.path("params.json")
    if campaign.given_params:
        if not os.path.exists(target):
            shutil.copyfile(campaign.given_params, target)
            log(f"parameters: copied {campaign.given_params}")
        return target
    planned = 1 if first_only else campaign.param_runs
    present = [k for k in range(1, campaign.param_runs + 1) if os.path.exists(campaign.path(f"params-{k}.json"))]
    if os.path.exists(target) and _combined_from(target) in (None, present) and len(present) >= planned:
        return target  # (None: a campaign from before the record of what was combined)
    missing = [k for k in range(1, planned + 1) if k not in present]
    extra = _loggp_arguments(campaign, log) if missing else None
    for k in missing:
        parameter_launch_once(campaign, k, log, extra)
    launched = sorted(present + missing)
    files = []
    for k in launched:
        with open(campaign.path(f"params-{k}.json")) as f:
            files.append(json.load(f))
    combined = combine_parameter_files(files)
    combined["measurement"]["combined_launches"] = launched
    with open(target + ".tmp", "w") as f:
        json.dump(combined, f, indent=2)
    os.replace(target + ".tmp", target)
    for name in ("analysis.json", "analysis-cap.json", "analysis-noise.json", "analysis-mean.json"):
        if os.path.exists(campaign.path(name)):
            os.remove(campaign.path(name))  # they analysed other parameters
    spread = ", ".join(f"{message_cost_ns(f):.0f}" for f in files)
    log(f"parameters: L = {combined['L_ns']:.1f} ns, o = {combined['o_ns']:.1f} ns, G = "
        f"{combined['G_ns_per_byte']:.4f} ns/B, S = {combined['S_bytes']} B (median of {len(files)} launches; "
        f"L + o_s + o_r per launch: {spread} ns)")
    return target


def _combined_from(params_path):
    with open(params_path) as f:
        return json.load(f).get("measurement", {}).get("combined_launches")


def interleaved_parameter_slots(campaign):
    """Local mode: before which schedule slot each parameter launch after the first happens, {slot:
    [k]}, evenly over the measured runs like the traced runs and the noise recordings. All five
    launches before the runs measured the machine of the campaign's first minute: on a noisy
    hour (stop 17) three of pingpong's five measured G at 0.172-0.180 ns/B, two at 0.154, the
    median put its T(0) 7.4 % above the runs, whose points at ΔL >= 20 us were within 0.7 %."""
    return spread_over_slots(campaign.param_runs, len(campaign.schedule))


def settle_parameters(campaign, log=print):
    """After the measured runs of an interleaved campaign: any parameter launch still missing, and
    params.json, the graph (whose schedgen arguments take o_coll and o_probe from it) and the
    analysis again when the launches changed it. Needs the kept (or provisional) trace."""
    measure_parameters(campaign, log)
    build_graph(campaign, log)  # made again if params.json changed o_coll or o_probe
    analyze(campaign, log)  # again if measure_parameters changed params.json (it drops the analyses)


def _parameter_launch(campaign, k, cmd, env, guard):
    """One llamp-loggp launch with the runtime timer preloaded for its core probes inside the job
    (a launch in the slow vCPU state between fast outside probes had put L at 143 ns and G at
    0.5 ns/B into one of five, the others 0-11 ns and 0.2 ns/B)."""
    runtime_dir = campaign.path("logs", f"params-{k}-runtime")
    shutil.rmtree(runtime_dir, ignore_errors=True)
    os.makedirs(runtime_dir)
    launch_env = guard.environment(dict(env))
    if campaign.tools.timer_lib and os.path.isfile(campaign.tools.timer_lib):
        launch_env["LLAMP_RUNTIME_DIR"] = runtime_dir
        environment.with_preload(launch_env, [campaign.tools.timer_lib])
    _run_step(campaign, "loggp", cmd, launch_env)
    try:
        guard.in_run(read_core_probes(runtime_dir))
    except RecordError:
        pass  # no records: the probes outside the launch judge it


_SEND = re.compile(r"\bsend (\d+)b\b")
AUTO_O_SIZE_CAP = 4096  # stays below the eager limits seen with MPICH/UCX (8 KiB and up)


def reference_size_from_graph(goal_path):
    """Paper 000 (Sec. III-B) takes o at the application's average message size: the largest power
    of two not above the mean size of the graph's sends, capped at 4 KiB so it stays eager."""
    total = count = 0
    with open(goal_path) as f:
        for line in f:
            m = _SEND.search(line)
            if m:
                total += int(m.group(1))
                count += 1
    if count == 0:
        return 1
    size = 1
    while size * 2 <= min(total / count, AUTO_O_SIZE_CAP):
        size *= 2
    return size


AUTO_MAX_SIZE_FLOOR = 65536  # three rendezvous sizes above the 8 KiB eager limits seen here: a fit, not a pair


def largest_size_from_graph(goal_path):
    """G's fit range for `--max-size auto`: the smallest power of two not below the graph's largest
    send, at least 64 KiB. On the 2-vCPU VM the half round trip of an echoed message bends (16 KiB
    5.8 µs, 256 KiB 49-51 µs, 1 MiB 130-138 µs: caches), so G fit up to 1 MiB (0.12 ns/B) put
    app_pingpong's 256 KiB messages 11 µs short and its T(0) 19 % low; fit up to 256 KiB (0.18 ns/B)
    the same runs give 0.67 % instead of 3.20 % RRMSE."""
    largest = 0
    with open(goal_path) as f:
        for line in f:
            m = _SEND.search(line)
            if m:
                largest = max(largest, int(m.group(1)))
    size = AUTO_MAX_SIZE_FLOOR
    while size < largest:
        size *= 2
    return size


def trace_run_dirs(campaign, k):
    """Trace k (1-based): its trace folder and the runtime timer's records of that run."""
    return campaign.path(f"trace-{k}"), campaign.path(f"trace-{k}-runtime")


def reference_run_dir(campaign, k):
    """The runtime records of the untraced reference run launched just before traced run k."""
    return campaign.path(f"trace-{k}-reference")


def _added_mark(campaign, k):
    """trace-k.added: traced run k was added beyond the planned ones, and why. Written before it is
    launched and kept when a recalibration takes the run back (rejudge.py removes trace-k.done), so
    the run is launched again, for the same reason."""
    return trace_run_dirs(campaign, k)[0] + ".added"


def traced_count(campaign):
    """How many traced runs the campaign has: the --trace-runs planned, and any --trace-target or
    --trace-floor-target added (trace-k.added, or trace-k.done of a campaign from before it, for k
    beyond them)."""
    k = campaign.trace_runs
    while os.path.exists(trace_run_dirs(campaign, k + 1)[0] + ".done") or os.path.exists(_added_mark(campaign, k + 1)):
        k += 1
    return k


def _reference_runtimes(campaign):
    """Runtimes of the untraced reference runs that exist (none with --no-trace-reference)."""
    runtimes = []
    for k in range(1, traced_count(campaign) + 1):
        try:
            runtimes.append(read_run(reference_run_dir(campaign, k), campaign.ranks)[1])
        except RecordError:
            pass
    return runtimes


def representative_trace(campaign):
    """Which of the K traced runs to model. With untraced reference runs (the default): the traced
    run whose runtime is closest to their median, earlier trace on ties. Tracing costs tens of ns
    per call, and an application whose polls race its messages can change its behaviour with it:
    app_completions' untraced runs made ~8 000 more failed polls than its traced ones and took
    0.26 s against 0.20 s; a trace that ran like the untraced application is the one to model
    when there is one. Without references: the median traced runtime (lower median for even K),
    so one traced run far off the typical one does not set every prediction."""
    runtimes = []
    for k in range(1, traced_count(campaign) + 1):
        _, runtime_dir = trace_run_dirs(campaign, k)
        try:
            runtimes.append(read_run(runtime_dir, campaign.ranks)[1])
        except RecordError as e:
            raise StepError(f"traced run {k}: {e}")
    references = _reference_runtimes(campaign)
    chosen = {"given": False, "traced_runtimes_ns": runtimes}
    if references:
        reference = statistics.median(references)
        kept = min(range(len(runtimes)), key=lambda i: (abs(runtimes[i] - reference), i)) + 1
        chosen.update(selection="closest to the untraced reference", reference_runtimes_ns=references,
                      reference_runtime_ns=reference)
    else:
        order = sorted(range(len(runtimes)), key=lambda i: (runtimes[i], i))
        kept = order[(len(runtimes) - 1) // 2] + 1
        chosen["selection"] = "median"
    chosen.update(trace_dir=trace_run_dirs(campaign, kept)[0], kept_trace=kept, traced_runtime_ns=runtimes[kept - 1])
    return chosen


def close_enough(chosen, target_pct):
    """Whether the kept traced run is within target_pct % of the untraced references' median."""
    reference = chosen.get("reference_runtime_ns")
    return bool(reference) and abs(chosen["traced_runtime_ns"] - reference) <= target_pct / 100 * reference


def trace_until_representative(campaign, log):
    """--trace-target: traced runs (each after its reference run) beyond the planned ones while the
    closest is further than the target from the untraced references, up to --max-trace-runs. An
    application that tracing tips into another behaviour (app_completions: 0 or 1 of 5 traced runs
    polled like the untraced ones, on the margin of tens of ns) gets more draws at one."""
    if campaign.trace_target_pct <= 0:
        return
    k = traced_count(campaign)
    while k < campaign.max_trace_runs and not close_enough(representative_trace(campaign), campaign.trace_target_pct):
        k += 1
        trace_once(campaign, k, log, "trace-target")


def _probed_launch(campaign, name, what, cmd, env, fresh_dirs, runtime_dir, log, kind=compute_check.UNTRACED):
    """One launch at ΔL = 0 between core probes (launched again while they say slow-cores, and while
    it is noisy-host: a rank computed too slowly, compute_check.check, or the quiet gate's probe after
    it says noisy, quiet_gate.check_after), into fresh folders; returns the run's runtime from its
    runtime records."""

    def launch(guard):
        for d in fresh_dirs:
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
        _run_step(campaign, name, cmd, guard.environment(dict(env)))
        try:
            guard.in_run(read_core_probes(runtime_dir))
        except RecordError:
            pass  # a missing record fails the launch just below

    for noisy in range(campaign.noisy_retries + 1):
        _guarded_step(campaign, name, probed_cpus(campaign), launch, log)
        slowed = compute_check.check(campaign, runtime_dir, kind, log)[0]
        after = "" if slowed else quiet_gate.check_after(campaign, name)
        spell = f"in it {slowed}" if slowed else f"after it {after}" if after else ""
        if not spell:
            break
        if noisy == campaign.noisy_retries:
            log(f"{name}: still noisy-host after {noisy} more launches; kept ({spell})")
            break
        log(f"{name}: noisy-host, launching again once the host is quiet ({spell})")
        if quiet_gate.gate_relaunch(campaign, name, log) == quiet_gate.TIMED_OUT:
            # a spell that outlasts --quiet-gate-wait: another launch now would run in it too
            log(f"{name}: the host stayed noisy for --quiet-gate-wait; the noisy-host launch is kept")
            break
    try:
        return read_run(runtime_dir, campaign.ranks)[1]
    except RecordError as e:
        raise StepError(f"{what}: {e}")


def trace_done(campaign, k):
    """Whether traced run k is made (trace_once skips it)."""
    return os.path.exists(trace_run_dirs(campaign, k)[0] + ".done")


def parameter_launch_done(campaign, k):
    """Whether parameter launch k is made (parameter_launch_once skips it)."""
    return os.path.exists(campaign.path(f"params-{k}.json"))


def trace_once(campaign, k, log, added_because=""):
    """Traced run k at ΔL = 0, after its untraced reference run (launched like a measured run, for
    representative_trace); skipped when a resumed campaign already finished it. added_because: why
    a traced run beyond the planned ones is launched (trace-k.added, for the report)."""
    trace_dir, runtime_dir = trace_run_dirs(campaign, k)
    done = trace_dir + ".done"
    if trace_done(campaign, k):
        return
    if added_because and not os.path.exists(_added_mark(campaign, k)):
        with open(_added_mark(campaign, k), "w") as f:
            f.write(added_because)
    _require(campaign.tools.tracer_lib, "the tracer library")
    cmd = list(campaign.mpiexec) + ["-n", str(campaign.ranks)] + list(campaign.app)
    reference = ""
    if campaign.trace_reference:
        reference_dir = reference_run_dir(campaign, k)
        env = environment.base_environment(campaign)
        env["LLAMP_RUNTIME_DIR"] = reference_dir
        environment.with_preload(env, [campaign.tools.timer_lib])
        untraced = _probed_launch(campaign, f"trace-{k}-reference", f"untraced reference run {k}", cmd, env,
                                  [reference_dir], reference_dir, log)
        reference = f", untraced reference {untraced / 1e9:.4f} s"
    env = environment.base_environment(campaign)
    env["LLAMP_TRACE_DIR"] = trace_dir
    env["LLAMP_RUNTIME_DIR"] = runtime_dir
    environment.with_preload(env, [campaign.tools.timer_lib, campaign.tools.tracer_lib])
    traced_runtime = _probed_launch(campaign, f"trace-{k}", f"traced run {k}", cmd, env, [trace_dir, runtime_dir],
                                    runtime_dir, log, compute_check.TRACED)
    open(done, "w").close()
    log(f"trace {k}/{max(campaign.trace_runs, k)}: {trace_dir} (traced run {traced_runtime / 1e9:.4f} s{reference})")


def added_because(campaign, k):
    """Why traced run k was added beyond the planned ones: "trace-target", "trace-floor-target" or
    "every-round" (rounds.keeps_traces_in_step); "" when planned, or added by a campaign from before
    the reason was kept."""
    try:
        with open(_added_mark(campaign, k)) as f:
            return f.read().strip()
    except FileNotFoundError:
        return ""


def trace_application(campaign, log=print, first_only=False):
    """(b) K traced runs at ΔL = 0 (--trace-runs), each after an untraced reference run; the one
    representative_trace picks is modelled.
    The timer library runs too, so the tracing overhead shows in the report. With first_only,
    only trace 1 runs now and its folder is returned (provisional: run_local spreads the others
    over the measured rounds and settles the choice with settle_traces)."""
    done = campaign.path("trace.done.json")
    if os.path.exists(done):
        return trace_location(campaign)
    if campaign.given_trace:
        with open(done, "w") as f:
            json.dump({"trace_dir": os.path.abspath(campaign.given_trace), "given": True}, f)
        return campaign.given_trace
    if first_only:
        trace_once(campaign, 1, log)
        return trace_run_dirs(campaign, 1)[0]
    for k in range(1, traced_count(campaign) + 1):  # the added ones too, when one was taken back
        trace_once(campaign, k, log, added_because(campaign, k))
    trace_until_representative(campaign, log)
    return _keep_representative_trace(campaign, log)["trace_dir"]


def _keep_representative_trace(campaign, log, interleaved=False):
    chosen = representative_trace(campaign)
    chosen["interleaved"] = interleaved
    done = campaign.path("trace.done.json")
    with open(done + ".tmp", "w") as f:
        json.dump(chosen, f, indent=2)
    os.replace(done + ".tmp", done)
    against = (f"closest to the untraced reference {chosen['reference_runtime_ns'] / 1e9:.4f} s"
               if "reference_runtime_ns" in chosen else "median")
    log(f"trace: keeping trace-{chosen['kept_trace']} ({against}; traced "
        f"{', '.join(f'{t / 1e9:.4f}' for t in chosen['traced_runtimes_ns'])} s)")
    return chosen


def interleaved_trace_slots(campaign):
    """Local mode: before which schedule slot each traced run after the first happens, {slot: [k]}.
    Traces 2..K are spread evenly over the measured runs, so a machine that drifts during the
    campaign (this VM's runs at ΔL = 0 went from 0.67 s in the first rounds to 0.78 s in the
    last) affects the traced runs as it affects the measured ones; all K traced runs before the
    first measured one made the kept trace systematically faster than the runs it predicts."""
    return spread_over_slots(campaign.trace_runs, len(campaign.schedule))


def spread_over_slots(k_total, n):
    """{slot: [k]}: launches 2..k_total before slots ⌊(k−1)·n/k_total⌉ of n, evenly over the runs."""
    slots = {}
    for k in range(2, k_total + 1):
        slots.setdefault(min(round((k - 1) * n / k_total), max(n - 1, 0)), []).append(k)
    return slots


def settle_traces(campaign, log=print):
    """After the measured runs of an interleaved campaign: any traced run still missing (a resumed
    campaign), the choice of trace, and the graph and analysis again if the kept trace is not the
    provisional trace 1 they were built from."""
    if os.path.exists(campaign.path("trace.done.json")):
        return
    for k in range(1, traced_count(campaign) + 1):
        trace_once(campaign, k, log, added_because(campaign, k))
    trace_until_representative(campaign, log)
    _keep(campaign, log, provisional=1, interleaved=True)


def _keep(campaign, log, provisional, interleaved):
    chosen = _keep_representative_trace(campaign, log, interleaved=interleaved)
    if chosen["kept_trace"] != provisional:
        os.remove(campaign.path("app.goal"))  # build_graph drops the analyses of the graph it replaces
        build_graph(campaign, log)
        analyze(campaign, log)


def rechoose_trace(campaign, log=print):
    """After traced runs were added to a campaign whose kept trace was already chosen (one planned
    traced run, or a resumed campaign; --trace-floor-target): the choice again among all of them,
    and the graph and analysis again if it moved."""
    path = campaign.path("trace.done.json")
    if not os.path.exists(path):
        return
    with open(path) as f:
        done = json.load(f)
    if done.get("given") or "kept_trace" not in done:
        return
    if len(done.get("traced_runtimes_ns", [])) == traced_count(campaign):
        return
    _keep(campaign, log, provisional=done["kept_trace"], interleaved=bool(done.get("interleaved")))


def trace_location(campaign):
    with open(campaign.path("trace.done.json")) as f:
        done = json.load(f)
    if not done.get("given") and "kept_trace" in done:
        return trace_run_dirs(campaign, done["kept_trace"])[0]  # inside the folder, which may have moved
    return done["trace_dir"]


# schedgen options that put a measured CPU cost outside the path model into the graph, and the
# parameter (params.json, llamp-loggp) each comes from.
MEASURED_SCHEDGEN_COSTS = (("--collective-overhead", "o_coll_ns"), ("--probe-overhead", "o_probe_ns"))


# Above this S (llamp-loggp writes UINT64_MAX for "inf") no message is a rendezvous one.
NO_RENDEZVOUS_BYTES = 2**63


def first_use_bands(params):
    """schedgen's `--first-use` bands (BYTES:MESSAGES:SEND:RECV) from llamp-loggp's first-use probe:
    the median over the launches per size (measurement.first_use_median), else the one launch's.

    Each round trip of the probe is two messages, so a band's `slow_trips` first messages per
    direction carry its excess: per message, the senders' share (send_excess_ns, the time inside
    MPI_Send) is the send cost and the rest the receive cost. Above S a blocking send waits for
    the whole transfer, so its time is no sender's CPU: there the whole excess is the receiver's
    (the transfer ends that much later). Launches from before send_excess_ns was measured give the
    receivers the whole excess."""
    measurement = params.get("measurement", {})
    rows = measurement.get("first_use_median") or measurement.get("first_use", {}).get("sizes") or []
    s_bytes = int(params.get("S_bytes", NO_RENDEZVOUS_BYTES))
    bands = []
    for row in sorted(rows, key=lambda r: r["bytes"]):
        messages = int(math.ceil(row.get("slow_trips", 0)))
        excess = max(0.0, float(row.get("excess_ns", 0.0)))
        send = min(excess, max(0.0, float(row.get("send_excess_ns", 0.0))))
        if int(row["bytes"]) > s_bytes:
            send = 0.0
        per = 2 * messages
        send_ns, recv_ns = (send / per, (excess - send) / per) if messages > 0 else (0.0, 0.0)
        bands.append(f"{int(row['bytes'])}B:{messages}:{send_ns:.1f}ns:{recv_ns:.1f}ns")
    return bands


def schedgen_arguments(campaign):
    """The campaign's schedgen arguments, plus `--collective-overhead` and `--probe-overhead` from
    params.json's o_coll_ns and o_probe_ns (llamp-loggp measures them) once the parameters exist,
    `--S` from its S_bytes (the rendezvous receives' handshake waits for the receiver's next
    progressing call, docs/schedgen.md), `--eager-progress` (an eager receive's copy waits for it
    too; not with a given --[no-]eager-progress or --async-progress), `--cold-handshake` from its
    o_rndv_cold_ns and the computation llamp-loggp measured it after (with `--S`; not with a given
    --async-progress), and `--first-use` bands from
    its first-use probe (unless the campaign runs with --no-first-use), each unless the user gave
    it."""
    args = list(campaign.schedgen_args)
    try:
        with open(campaign.path("params.json")) as f:
            params = json.load(f)
    except FileNotFoundError:
        return args

    def given(option):
        return any(a == option or a.startswith(option + "=") for a in campaign.schedgen_args)

    for option, key in MEASURED_SCHEDGEN_COSTS:
        value = float(params.get(key, 0.0))
        if not given(option) and value > 0:
            args += [option, f"{value:.1f}ns"]
    s_bytes = params.get("S_bytes")
    if not given("--S") and s_bytes is not None and int(s_bytes) < NO_RENDEZVOUS_BYTES:
        args += ["--S", f"{int(s_bytes)}B"]
    if not any(given(o) for o in ("--eager-progress", "--no-eager-progress", "--async-progress")):
        args += ["--eager-progress"]
    cold_ns = float(params.get("o_rndv_cold_ns", 0.0))
    has_s = "--S" in args or given("--S")
    if cold_ns > 0 and has_s and not any(given(o) for o in ("--cold-handshake", "--async-progress")):
        after_ns = float(params.get("measurement", {}).get("cold_handshake", {}).get("compute_ns", 100000.0))
        args += ["--cold-handshake", f"{cold_ns:.1f}ns:{after_ns:.0f}ns"]
    if not given("--first-use") and campaign.first_use:
        for band in first_use_bands(params):
            args += ["--first-use", band]
    return args


def build_graph(campaign, log=print, trace_dir=None):
    """(c1) llamp schedgen TRACE -o app.goal (TRACE: the kept trace unless given). app.goal.json
    records the arguments it was made with; a graph made with others (e.g. before params.json
    supplied the collective overhead) is made again."""
    goal = campaign.path("app.goal")
    record = goal + ".json"
    args = schedgen_arguments(campaign)
    if os.path.exists(goal):
        if not os.path.exists(record):
            return goal  # a campaign from before the record: keep what it predicted with
        with open(record) as f:
            if json.load(f).get("schedgen_args") == args:
                return goal
    _require(campaign.tools.llamp, "the llamp CLI")
    cmd = [campaign.tools.llamp, "schedgen", trace_dir or trace_location(campaign), "-o", goal + ".tmp.goal"] + args
    _run_step(campaign, "schedgen", cmd, dict(os.environ), attempts=1)
    if not os.path.exists(goal + ".tmp.goal"):  # e.g. `--schedgen-arg=--help`: it printed and exited 0
        raise StepError(f"schedgen exited without writing a graph (its arguments: {' '.join(args)}); see "
                        f"{log_path(campaign, 'schedgen')}")
    os.replace(goal + ".tmp.goal", goal)
    with open(record + ".tmp", "w") as f:
        json.dump({"schedgen_args": args}, f)
    os.replace(record + ".tmp", record)
    for name in ("analysis.json", "analysis-cap.json", "analysis-noise.json"):
        if os.path.exists(campaign.path(name)):
            os.remove(campaign.path(name))  # it analysed the graph just replaced
    log(f"graph: {goal}")
    return goal


def analysis_range_ns(campaign, params):
    """The L range the analyzer evaluates: from 0 to L0 + the largest ΔL (absolute latency),
    at least 1 µs wide (the analyzer rejects an empty range, e.g. L0 = 0 with ΔL = 0 only)."""
    return 0, int(math.ceil(params["L_ns"] + max(max(campaign.deltas_ns), 1000.0)))


def _run_analyze(campaign, target, extra_args, goal=None):
    """llamp analyze GOAL (app.goal unless given) with params.json over the campaign's range into target."""
    with open(campaign.path("params.json")) as f:
        params = json.load(f)
    lo, hi = analysis_range_ns(campaign, params)
    tolerance = ",".join(f"{t:g}" for t in campaign.tolerances_pct)
    cmd = [campaign.tools.llamp, "analyze", goal or campaign.path("app.goal"), "--params", campaign.path("params.json"),
           "--range", f"{lo}ns:{hi}ns", "--tolerance", tolerance, "--json", target + ".tmp"] + list(
               campaign.analyze_args) + list(extra_args)
    analyze_log = log_path(campaign, "analyze")
    with open(analyze_log, "ab") as log_file:
        log_file.write(("$ " + " ".join(cmd) + "\n").encode())
        log_file.flush()
        rc = subprocess.run(cmd, stdout=log_file, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        raise StepError(f"llamp analyze failed (exit code {rc}); see {analyze_log}")
    try:
        with open(target + ".tmp") as f:
            result = json.load(f)
    except json.JSONDecodeError as e:
        raise StepError(f"llamp analyze wrote invalid JSON ({e.msg} at line {e.lineno}); see {target}.tmp")
    os.replace(target + ".tmp", target)
    return result


def analyze(campaign, log=print):
    """(c2) llamp analyze app.goal --params params.json --range ... --tolerance ... --json analysis.json.
    A graph with polling lags is analysed a second time with the lags at their caps
    (analysis-cap.json; the report compares both): the default (`--poll-lag phase`) keeps the
    polling phase the trace showed at L0 and loses it over one polling period of added latency
    (docs/analyzer.md, "Polling lag")."""
    target = campaign.path("analysis.json")
    if not os.path.exists(target):
        result = _run_analyze(campaign, target, [])
        log(f"analysis: {target}")
        if os.path.exists(campaign.path("analysis-cap.json")):
            os.remove(campaign.path("analysis-cap.json"))
    else:
        with open(target) as f:
            result = json.load(f)
    lags = result.get("poll_lags", {})
    if (lags.get("vertices", 0) > 0 and lags.get("mode") in ("phase", "resolved")
            and not os.path.exists(campaign.path("analysis-cap.json"))):
        _run_analyze(campaign, campaign.path("analysis-cap.json"), ["--poll-lag", "cap"])
    return target


def repredict(campaign, log=print):
    """`llamp-campaign repredict`: the graph and the analysis again from the kept trace and
    params.json (every traced run's follow in ensemble.analyze), with the llamp the campaign names
    (e.g. after an upgrade or with other --schedgen-arg); the measured runs stay. The previous graph and analysis are kept as
    *.previous."""
    if not os.path.exists(campaign.path("trace.done.json")):
        raise StepError("no kept trace yet (trace.done.json); finish the campaign with 'llamp-campaign resume'")
    if not os.path.exists(campaign.path("params.json")):
        raise StepError("no params.json yet; finish the campaign with 'llamp-campaign resume'")
    for name in ("app.goal", "analysis.json", "analysis-cap.json", "analysis-noise.json", "analysis-mean.json"):
        if os.path.exists(campaign.path(name)):
            os.replace(campaign.path(name), campaign.path(name + ".previous"))
    # every traced run's analysis too (ensemble.py): their record does not name the llamp that made them
    for path in glob.glob(campaign.path("analysis-trace-*.json")):
        os.remove(path)
    if os.path.exists(campaign.path("app.goal.json")):
        os.remove(campaign.path("app.goal.json"))
    build_graph(campaign, log)
    analyze(campaign, log)


def prepare(campaign, log=print, first_trace_only=False, first_params_only=False):
    trace_dir = trace_application(campaign, log, first_trace_only)
    if "auto" in (campaign.o_size, campaign.max_size):
        build_graph(campaign, log, trace_dir)  # `--o-size/--max-size auto` read the application's message sizes
    measure_parameters(campaign, log, first_params_only)
    build_graph(campaign, log, trace_dir)  # again if params.json brought a collective overhead
    analyze(campaign, log)
