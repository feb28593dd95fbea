"""Command line of scripts/llamp-campaign."""
import argparse
import os
import sys

from . import (compute_check, config, cores, ensemble, environment, noise, prediction, prepare, quiet_gate, rejudge,
               report, rounds, runs, schedule, slurm, trace_weights, units)
from .runtime_records import RecordError

USAGE = """llamp-campaign [options] -- APP [APP ARGS...]     run a campaign
       llamp-campaign resume DIR [--mode local|slurm]  finish the runs without a success
       llamp-campaign report DIR [--trace-weights rounds|equal] [--noise-statistic mean|median]
                                                       the report (and the mean prediction's weights)
                                                       again from the records
       llamp-campaign repredict DIR [--schedgen-arg A | --no-schedgen-args] [--prediction-from every-trace|kept-trace]
                                    [--trace-weights rounds|equal] [--noise-statistic mean|median]
                                    [--[no-]first-use]
                                                       graphs + analyses again from the traces, then the report
       llamp-campaign prepare DIR | run-slot DIR K     (steps, used by the Slurm jobs)"""

DEFAULT_DELTAS = "0,10,20,30,40,50,60,70,80,90,100"


def _log(msg):
    print(f"llamp-campaign: {msg}", flush=True)


def _key_values(items, what):
    out = {}
    for item in items:
        if item == "none":
            out.clear()
            continue
        if "=" not in item:
            raise SystemExit(f"llamp-campaign: {what} '{item}' is not VAR=VALUE")
        k, v = item.split("=", 1)
        out[k] = v
    return out


def run_parser():
    p = argparse.ArgumentParser(prog="llamp-campaign", usage=USAGE,
                                description="Validate llamp's predictions: measured vs predicted runtime "
                                            "of APP under injected network latency ΔL.")
    p.add_argument("-n", "--ranks", type=int, default=2, help="MPI ranks of the application (default 2)")
    p.add_argument("--delta-l", default=DEFAULT_DELTAS,
                   help=f"ΔL values, comma-separated, µs unless a unit is given (default {DEFAULT_DELTAS})")
    p.add_argument("--reps", type=int, default=5, help="runs per ΔL (default 5)")
    p.add_argument("--floor-target", type=float, default=0.0, metavar="PCT",
                   help="local mode: after the --reps rounds, add shuffled rounds of every ΔL while the noise "
                        "floor (the RRMSE an exact prediction would still show from the run-to-run spread) is "
                        "above PCT %% or some ΔL has fewer than two ok runs, up to --max-reps rounds (default 0: off)")
    p.add_argument("--max-reps", type=int, default=0,
                   help="most rounds with --floor-target or --trace-floor-target (default: twice --reps)")
    p.add_argument("-o", "--out", help="output folder (default ./campaign-<app>-<ranks>r)")
    p.add_argument("--mode", choices=["local", "slurm"], default="local")
    p.add_argument("--injector-prefix", default=os.environ.get("LLAMP_PATCHED_MPICH_PREFIX", ""),
                   help="prefix of the patched MPICH+UCX (scripts/build-patched-mpich.sh); needed for ΔL > 0 "
                        "(default $LLAMP_PATCHED_MPICH_PREFIX)")
    p.add_argument("--mpiexec", default="mpiexec.mpich", help="launcher (default mpiexec.mpich)")
    p.add_argument("--bind-to", default="core", metavar="core|core:N|none|...",
                   help="Hydra's -bind-to for every run: core (default: one core per rank), core:N (N cores per "
                        "rank, for multithreaded ranks), socket, numa, ... or none (placement left to the OS); see "
                        "docs/campaign.md, 'Environment of all runs'")
    p.add_argument("--mpiexec-arg", action="append", default=[], metavar="ARG",
                   help="extra launcher argument before -n, repeatable (e.g. --mpiexec-arg=-bind-to "
                        "--mpiexec-arg=core)")
    p.add_argument("--mpi-env", action="append", default=None, metavar="VAR=VALUE",
                   help="environment of every MPI run; default MPIR_CVAR_NOLOCAL=1 (the injector sends on-node "
                        "messages through UCX, so ΔL = 0 must too); 'none' clears")
    p.add_argument("--no-inject-stats", action="store_true",
                   help="do not set LLAMP_INJECT_STATS in the runs at ΔL > 0: the report then has no section on how "
                        "late the injector released messages, and a run whose MPICH did not inject is not caught "
                        "(default: set; the line is printed in MPI_Finalize, after the measured time)")
    p.add_argument("--timeout", type=float, default=600, help="seconds before a run counts as timed out")
    p.add_argument("--seed", type=int, default=1, help="seed of the round shuffling")
    p.add_argument("--build-dir", help="llamp build folder (default $LLAMP_BUILD_DIR or <repo>/build)")
    p.add_argument("--llamp", help="llamp CLI (default <build>/bin/llamp)")
    p.add_argument("--loggp", help="llamp-loggp (default <build>/bin/llamp-loggp)")
    p.add_argument("--tracer-lib", help="tracer (default <build>/lib/libllamptrace.so)")
    p.add_argument("--timer-lib", help="runtime timer (default <build>/lib/libllamp_runtime_timer.so)")
    p.add_argument("--coreprobe", help="llamp-coreprobe (default <build>/bin/llamp-coreprobe)")
    p.add_argument("--core-limit", default="auto", metavar="auto|off|TIME",
                   help="a launch whose cores pass a cache line slower than this, probed before and after it, is "
                        "'slow-cores': recorded, not averaged, launched again. auto (default): 3x the fastest of 20 "
                        "probes on the host; off: no probes. On a VM the host sometimes places the vCPUs apart and "
                        "every message is 2-3x slower (docs/campaign.md, 'Core hand-off')")
    p.add_argument("--core-retries", type=int, default=5, metavar="K",
                   help="launches again after slow-cores ones, per run, traced run and parameter launch (default 5)")
    p.add_argument("--core-wait", type=float, default=10.0, metavar="S",
                   help="seconds a launch waits for fast cores before it starts anyway (default 10)")
    p.add_argument("--noise", help="llamp-noise (default <build>/bin/llamp-noise)")
    p.add_argument("--noise-runs", type=int, default=3, metavar="K",
                   help="record the machine's noise K times with llamp-noise, spread over the planned rounds like the "
                        "traced runs (and as many per round in rounds a floor target adds), and predict with it too "
                        "(analysis-noise.json); 0: not (default 3)")
    p.add_argument("--noise-duration", default="2s", help="how long each noise recording spins (default 2s)")
    p.add_argument("--noise-samples", type=int, default=32,
                   help="phases of the recordings `llamp analyze --noise` averages (default 32)")
    p.add_argument("--noise-statistic", choices=report.NOISE_STATISTICS, default="mean",
                   help="what the prediction with noise adds of the replay's samples: mean (default; the runs are "
                        "judged by their means) or median (before stop 53)")
    p.add_argument("--quiet-gate", type=float, default=0.0, metavar="PCT",
                   help="local mode: before the preparation and every round, spin llamp-noise on the ranks' CPUs for "
                        "--quiet-gate-probe and wait while some CPU loses more than PCT %% of it to detours (a VM's "
                        "host in a noisy spell), probing every --quiet-gate-pause seconds for at most "
                        "--quiet-gate-wait; every probe goes to quiet-gate.csv (default 0: off)")
    p.add_argument("--quiet-gate-wait", type=float, default=300.0, metavar="S",
                   help="most seconds the quiet gate waits before a round runs anyway (default 300)")
    p.add_argument("--quiet-gate-pause", type=float, default=10.0, metavar="S",
                   help="seconds between the quiet gate's probes (default 10)")
    p.add_argument("--quiet-gate-probe", default="300ms", metavar="TIME",
                   help="how long each quiet-gate probe spins (default 300ms)")
    p.add_argument("--quiet-gate-throughput", default="200ms", metavar="TIME",
                   help="then how long it times slices of llamp-noise's throughput kernel (default 200ms; 0s: not)")
    p.add_argument("--quiet-gate-slowdown", type=float, default=6.0, metavar="PCT",
                   help="the quiet gate also waits while a rank's median slice is more than PCT %% slower than that "
                        "rank's fastest probe of the campaign (a busy sibling on the host's core; default 6; 0: off)")
    p.add_argument("--quiet-gate-every", choices=["round", "launch"], default="round",
                   help="gate before every round (default) or before every launch among them: runs, traced runs, "
                        "noise recordings, parameter launches (spells that begin mid-round)")
    p.add_argument("--quiet-gate-after", type=float, default=0.0, metavar="PCT",
                   help="probe once more after every measured run, traced run and reference run: one after which a "
                        "rank computes more than PCT %% slower than its fastest probe (or loses more than --quiet-gate "
                        "%% to detours) ran into a noisy spell: 'noisy-host', recorded, never averaged in, launched "
                        "again once the gate finds the host quiet (default 0: off)")
    p.add_argument("--noisy-compute", type=float, default=0.0, metavar="PCT",
                   help="a measured run, traced run or reference run in which a rank computed (outside MPI) more than "
                        "PCT %% longer than in the campaign's quick launches of its kind (the 10th percentile; untraced "
                        "ones at the same ΔL) was "
                        "slowed by the host: 'noisy-host', recorded, never averaged in, launched again; at the "
                        "campaign's end every kept launch is judged again; when more than 3 in 4 of at least 20 "
                        "measured runs fail it (the machine's ordinary launch is that slow) it compares with the "
                        "median launch instead, and switches itself off where that fails as often "
                        "(default 0: off)")
    p.add_argument("--noisy-retries", type=int, default=5, metavar="K",
                   help="launches again after noisy-host ones, per run over the whole campaign, per traced run "
                        "and reference run (default 5)")
    p.add_argument("--params", help="use this LogGP parameter file instead of measuring one")
    p.add_argument("--trace", help="use this trace folder instead of tracing the app")
    p.add_argument("--param-runs", type=int, default=5, metavar="K",
                   help="launch llamp-loggp K times and use the median of each parameter: on a VM one launch can "
                        "run all its messages 3x slower than the next when the host places the vCPUs apart (default 5)")
    p.add_argument("--trace-runs", type=int, default=3, metavar="K",
                   help="trace the app K times, each after an untraced reference run, and model the traced run "
                        "closest to the references' median runtime (default 3)")
    p.add_argument("--trace-target", type=float, default=0.0, metavar="PCT",
                   help="after the --trace-runs traced runs, trace again (each after its reference run) while no "
                        "traced runtime is within PCT %% of the untraced references' median, up to --max-trace-runs "
                        "(default 0: off)")
    p.add_argument("--trace-floor-target", type=float, default=0.0, metavar="PCT",
                   help="local mode, with the mean prediction: after the --reps rounds, add shuffled rounds while "
                        "the traces' floor (the RRMSE an exact model would still show from the spread of the traced "
                        "runs' predictions) is above PCT %%, each with the traced runs it asks for among its runs "
                        "(each after its reference run), up to --max-reps rounds and --max-trace-runs traced runs; "
                        "once it is met, a round added for --floor-target still brings one, so the traced runs span "
                        "the campaign's time as the measured runs do (default 0: off)")
    p.add_argument("--max-trace-runs", type=int, default=0, metavar="K",
                   help="most traced runs with --trace-target or --trace-floor-target (default: three times "
                        "--trace-runs)")
    p.add_argument("--prediction-from", choices=("every-trace", "kept-trace"), default="every-trace",
                   help="every-trace (default): the prediction is the mean of every traced run's (each one draw of "
                        "the machine's speed); kept-trace: the one kept traced run's, as LLAMP does")
    p.add_argument("--trace-weights", choices=trace_weights.CHOICES, default=trace_weights.ROUNDS,
                   help="how the mean prediction weighs the traced runs: rounds (default): each round as often as it "
                        "has ok measured runs, shared by the traced runs launched in it (the host changes in spells "
                        "and rounds get different numbers of traced runs); equal: each traced run alike")
    p.add_argument("--no-trace-reference", action="store_true",
                   help="no untraced reference runs: model the traced run with the median runtime (lower median "
                        "for even K)")
    p.add_argument("--algo", action="append", default=[], help="passed to llamp schedgen as --algo")
    p.add_argument("--schedgen-arg", action="append", default=[], help="extra llamp schedgen argument")
    p.add_argument("--no-first-use", action="store_true",
                   help="do not charge the transport's first use that llamp-loggp measures (llamp schedgen "
                        "--first-use); the graph then has warm costs only")
    p.add_argument("--analyze-arg", action="append", default=[], help="extra llamp analyze argument")
    p.add_argument("--loggp-arg", action="append", default=[], help="extra llamp-loggp argument")
    p.add_argument("--o-size", default="",
                   help="message size o and L are measured at (llamp-loggp --o-size, default 1B); 'auto': the "
                        "application's mean message size from the graph, as in paper 000 (at most 4 KiB)")
    p.add_argument("--max-size", default="",
                   help="largest message llamp-loggp measures and fits G up to (its --max-size, default 1MiB); "
                        "'auto': the application's largest message from the graph, rounded up to a power of two, "
                        "at least 64 KiB: G is a straight line through a curve that bends, so it is fit over the "
                        "sizes the application sends")
    p.add_argument("--tolerance", default="1,2,5", help="tolerance levels in percent (default 1,2,5)")
    p.add_argument("--no-prediction", action="store_true",
                   help="measure runtimes only: no trace, schedgen or analyze")
    p.add_argument("--sbatch-arg", action="append", default=[], help="extra #SBATCH line, e.g. --partition=x")
    p.add_argument("--slurm-parallel", type=int, default=1,
                   help="array tasks running at once (default 1: runs never share a node's cores)")
    return p


def new_campaign(argv):
    if "--" not in argv:
        raise SystemExit("llamp-campaign: give the application after '--', e.g.\n"
                         "  llamp-campaign -n 2 -- ./build/apps/app_halo2d 100")
    cut = argv.index("--")
    args, app = run_parser().parse_args(argv[:cut]), argv[cut + 1:]
    if not app:
        raise SystemExit("llamp-campaign: no application command after '--'")
    if args.ranks < 1 or args.reps < 1 or args.trace_runs < 1 or args.param_runs < 1 or args.noise_samples < 1:
        raise SystemExit("llamp-campaign: --ranks, --reps, --trace-runs, --param-runs and --noise-samples must be at "
                         "least 1")
    if args.noise_runs < 0:
        raise SystemExit("llamp-campaign: --noise-runs must not be negative")
    if min(args.trace_target, args.trace_floor_target) < 0:
        raise SystemExit("llamp-campaign: --trace-target and --trace-floor-target must not be negative")
    # either target adds traced runs, up to the one bound
    _check_target("--trace-target or --trace-floor-target", max(args.trace_target, args.trace_floor_target),
                  "--max-trace-runs", args.max_trace_runs, "--trace-runs", args.trace_runs, "traced runs")
    if args.trace_floor_target > 0 and (args.mode == "slurm" or args.trace or args.no_prediction
                                        or args.prediction_from != "every-trace"):
        raise SystemExit("llamp-campaign: --trace-floor-target adds traced runs to the mean prediction as the runs "
                         "come in: it needs local mode, traced runs (no --trace, --no-prediction) and "
                         "--prediction-from every-trace")
    if args.trace_target > 0 and args.no_trace_reference:
        raise SystemExit("llamp-campaign: --trace-target compares traced runs with the untraced reference runs; "
                         "drop --no-trace-reference")
    if args.floor_target < 0:
        raise SystemExit("llamp-campaign: --floor-target must not be negative")
    # either floor target adds rounds (--trace-floor-target adds its traced runs among them)
    _check_target("--floor-target or --trace-floor-target", max(args.floor_target, args.trace_floor_target),
                  "--max-reps", args.max_reps, "--reps", args.reps, "rounds")
    if args.floor_target > 0 and args.mode == "slurm":
        raise SystemExit("llamp-campaign: --floor-target adds rounds as the runs come in, which needs local mode; "
                         "on Slurm raise --reps instead")
    try:
        units.parse_time_ns(args.noise_duration, "--noise-duration")
        if units.parse_time_ns(args.quiet_gate_probe, "--quiet-gate-probe") <= 0:
            raise units.UnitError("--quiet-gate-probe must be positive")
        if units.parse_time_ns(args.quiet_gate_throughput, "--quiet-gate-throughput") < 0:
            raise units.UnitError("--quiet-gate-throughput must not be negative")
    except units.UnitError as e:
        raise SystemExit(f"llamp-campaign: {e}")
    if min(args.quiet_gate, args.quiet_gate_wait, args.quiet_gate_pause, args.quiet_gate_slowdown,
           args.quiet_gate_after, args.noisy_compute, args.noisy_retries) < 0:
        raise SystemExit("llamp-campaign: --quiet-gate, --quiet-gate-wait, --quiet-gate-pause, "
                         "--quiet-gate-slowdown, --quiet-gate-after, --noisy-compute and --noisy-retries must not be "
                         "negative")
    if args.quiet_gate_after > 0 and args.quiet_gate <= 0:
        raise SystemExit("llamp-campaign: --quiet-gate-after probes with the quiet gate's probe; set --quiet-gate too")
    if args.quiet_gate > 0 and args.mode == "slurm":
        raise SystemExit("llamp-campaign: --quiet-gate waits before each round of a local campaign; on Slurm the "
                         "rounds are jobs the scheduler starts")
    if args.core_retries < 0 or args.core_wait < 0:
        raise SystemExit("llamp-campaign: --core-retries and --core-wait must not be negative")
    if args.core_limit not in ("auto", "off"):
        try:
            units.parse_time_ns(args.core_limit, "--core-limit", default_unit="ns")
        except units.UnitError as e:
            raise SystemExit(f"llamp-campaign: {e}")
    try:
        deltas = units.parse_time_list_ns(args.delta_l, "--delta-l")
        tolerances = [float(t) for t in args.tolerance.split(",") if t.strip()]
    except (units.UnitError, ValueError) as e:
        raise SystemExit(f"llamp-campaign: {e}")
    if "auto" in (args.o_size, args.max_size) and args.no_prediction:
        raise SystemExit("llamp-campaign: --o-size/--max-size auto read the application's graph; they need the "
                         "prediction steps")
    if max(deltas) > 0 and not args.injector_prefix:
        raise SystemExit("llamp-campaign: ΔL > 0 needs the latency injector: pass --injector-prefix (the prefix "
                         "scripts/build-patched-mpich.sh prints) or use --delta-l 0")
    if args.injector_prefix:
        environment.injector_environment(os.path.abspath(args.injector_prefix))  # fails now, not in a job
    script_dir = os.path.dirname(os.path.abspath(sys.argv[0]))
    build_dir = os.path.abspath(args.build_dir) if args.build_dir else config.default_build_dir(script_dir)
    tools = config.find_tools(build_dir, {"llamp": args.llamp, "loggp": args.loggp,
                                          "tracer_lib": args.tracer_lib, "timer_lib": args.timer_lib,
                                          "coreprobe": args.coreprobe, "noise": args.noise})
    if not os.path.isfile(tools.timer_lib):
        raise SystemExit(f"llamp-campaign: runtime timer {tools.timer_lib} not found; build target "
                         f"llamp_runtime_timer or pass --timer-lib / --build-dir")
    if args.core_limit != "off" and not tools.coreprobe:
        _log("note: llamp-coreprobe not found in the build: the cores are not probed (--core-limit off)")
    if args.noise_runs > 0 and not tools.noise:
        _log("note: llamp-noise not found in the build: no prediction with the machine's noise (--noise-runs 0)")
    if args.quiet_gate > 0 and not tools.noise:
        _log("note: llamp-noise not found in the build: no quiet gate (--quiet-gate 0)")
    app[0] = config.resolve_program(app[0])
    out = os.path.abspath(args.out or f"campaign-{os.path.basename(app[0])}-{args.ranks}r")
    if os.path.exists(os.path.join(out, config.CONFIG_NAME)):
        raise SystemExit(f"llamp-campaign: {out} already holds a campaign; use 'llamp-campaign resume {out}' "
                         f"or another --out")
    os.makedirs(out, exist_ok=True)
    mpi_env = _key_values(args.mpi_env if args.mpi_env is not None else ["MPIR_CVAR_NOLOCAL=1"], "--mpi-env")
    schedgen_args = [a for algo in args.algo for a in ("--algo", algo)] + args.schedgen_arg
    launcher = config.resolve_program(args.mpiexec)
    binding = environment.binding_args(launcher, args.bind_to, args.ranks, args.mode)
    c = config.Campaign(
        out_dir=out, app=app, ranks=args.ranks, deltas_ns=deltas, reps=args.reps, seed=args.seed,
        timeout_s=args.timeout, mpiexec=[launcher] + binding + args.mpiexec_arg, mpi_env=mpi_env,
        injector_prefix=os.path.abspath(args.injector_prefix) if args.injector_prefix else "",
        tools=tools, schedgen_args=schedgen_args, first_use=not args.no_first_use, analyze_args=args.analyze_arg,
        loggp_args=args.loggp_arg,
        o_size=args.o_size, max_size=args.max_size,
        tolerances_pct=tolerances, given_params=os.path.abspath(args.params) if args.params else "",
        given_trace=os.path.abspath(args.trace) if args.trace else "", trace_runs=args.trace_runs,
        trace_reference=not args.no_trace_reference, param_runs=args.param_runs,
        trace_target_pct=args.trace_target, prediction_from=args.prediction_from, trace_weights=args.trace_weights,
        trace_floor_target_pct=args.trace_floor_target,
        max_trace_runs=_bound(max(args.trace_target, args.trace_floor_target), args.max_trace_runs, args.trace_runs, 3),
        no_prediction=args.no_prediction, core_limit=args.core_limit, core_retries=args.core_retries,
        core_wait_s=args.core_wait, noise_runs=args.noise_runs, noise_duration=args.noise_duration,
        noise_samples=args.noise_samples, noise_statistic=args.noise_statistic, floor_target_pct=args.floor_target,
        inject_stats=not args.no_inject_stats, quiet_gate_pct=args.quiet_gate, quiet_gate_wait_s=args.quiet_gate_wait,
        quiet_gate_pause_s=args.quiet_gate_pause, quiet_gate_probe=args.quiet_gate_probe,
        quiet_gate_throughput=args.quiet_gate_throughput, quiet_gate_slowdown_pct=args.quiet_gate_slowdown,
        quiet_gate_every=args.quiet_gate_every, quiet_gate_after_pct=args.quiet_gate_after,
        noisy_compute_pct=args.noisy_compute, noisy_retries=args.noisy_retries,
        max_reps=_bound(max(args.floor_target, args.trace_floor_target), args.max_reps, args.reps, 2),
        schedule=schedule.make_schedule(deltas, args.reps, args.seed))
    c.save()
    return c, args


def prepare_step(c, first_trace_only=False, first_noise_only=False, first_params_only=False):
    try:
        if c.no_prediction:
            prepare.measure_parameters(c, _log, first_params_only)
        else:
            prepare.prepare(c, _log, first_trace_only, first_params_only)
            if first_noise_only:
                noise.record_once(c, 1, _log)
            else:
                noise.record_all(c, _log)
                noise.analyze(c, _log)
            ensemble.analyze(c, _log)  # nothing before every traced run is there
    except prepare.StepError as e:
        raise SystemExit(f"llamp-campaign: {e}")



def _check_target(target_flag, target, bound_flag, bound, planned_flag, planned, what):
    """An option that adds `what` beyond the `planned` ones until a target is met (--floor-target,
    --trace-target or --trace-floor-target) and the option bounding how many there may be in all."""
    if target < 0 or bound < 0:
        raise SystemExit(f"llamp-campaign: {target_flag} and {bound_flag} must not be negative")
    if bound and target <= 0:
        raise SystemExit(f"llamp-campaign: {bound_flag} only bounds the {what} {target_flag} adds; give "
                         f"{target_flag} too, or use {planned_flag}")
    if bound and bound < planned:
        raise SystemExit(f"llamp-campaign: {bound_flag} {bound} is below {planned_flag} {planned}")


def _bound(target, bound, planned, factor):
    """How many there may be in all: the given bound or factor × planned with a target, else planned."""
    return (bound or factor * planned) if target > 0 else planned


# How often a campaign launches again what a recalibration took back (each pass can recalibrate
# once more only if the host shows yet another, faster placement).
REJUDGE_PASSES = 3


def run_local(c):
    # Traced runs after the first are spread over the measured rounds (prepare.interleaved_trace_slots);
    # a campaign whose trace is settled (or given, or without prediction) only runs what is missing.
    interleave = (not c.no_prediction and not c.given_trace and c.trace_runs > 1
                  and not os.path.exists(c.path("trace.done.json")))
    # Noise recordings after the first likewise, while some are missing.
    noise_interleave = noise.enabled(c) and c.noise_runs > 1 and len(noise.recorded(c)) < c.noise_runs
    # Parameter launches after the first likewise (the host drifts: prepare.interleaved_parameter_slots).
    params_interleave = (not c.given_params and c.param_runs > 1
                         and not all(os.path.exists(c.path(f"params-{k}.json")) for k in range(1, c.param_runs + 1)))
    if not runs.load_records(c):  # a resumed campaign is past its preparation
        quiet_gate.wait_for_quiet(c, "preparation", _log)
    prepare_step(c, first_trace_only=interleave, first_noise_only=noise_interleave,
                 first_params_only=params_interleave)
    traces_before = prepare.interleaved_trace_slots(c) if interleave else {}
    noise_before = noise.interleaved_slots(c) if noise_interleave else {}
    params_before = prepare.interleaved_parameter_slots(c) if params_interleave else {}
    _log(f"{len(c.schedule)} runs: {len(c.deltas_ns)} ΔL values x {c.reps} shuffled rounds"
         + (f", traced runs 2..{c.trace_runs} among them" if interleave else "")
         + (f", noise recordings 2..{c.noise_runs} among them" if noise_interleave else "")
         + (f", parameter launches 2..{c.param_runs} among them" if params_interleave else ""))
    try:
        records = runs.load_records(c)
        gated = set()
        for s in c.schedule:
            # The quiet gate before every round that still has runs to make (rounds.gate_round).
            if s.round not in gated:
                gated.add(s.round)
                rounds.gate_round(c, [x for x in c.schedule if x.round == s.round], records, _log)
            for k in traces_before.get(s.slot, []):
                rounds.gate_traced_run(c, k, _log)
                prepare.trace_once(c, k, _log)
            for k in noise_before.get(s.slot, []):
                rounds.gate_recording(c, k, _log)
                noise.record_once(c, k, _log)
            for k in params_before.get(s.slot, []):
                quiet_gate.gate_launch(c, f"parameter launch {k}", _log, not prepare.parameter_launch_done(c, k))
                prepare.parameter_launch_once(c, k, _log)
            rounds.gate_slot(c, s, _log)
            runs.run_slot(c, s, _log)
        if compute_check.stage(c) != compute_check.QUICK:  # the slots it left without a run before it moved on
            for s in c.schedule:
                runs.run_slot(c, s, _log)
        rounds.run_until_floor(c, _log)
        if interleave:
            prepare.settle_traces(c, _log)
        if params_interleave:  # after the traces: the graph is made again from the kept one
            if c.no_prediction:
                prepare.measure_parameters(c, _log)
            else:
                prepare.settle_parameters(c, _log)
        if not c.no_prediction:
            noise.record_all(c, _log)
            noise.analyze(c, _log)
            ensemble.analyze(c, _log)
        # A recalibration of the core limits (cores.recalibrate) takes back what the old limits
        # accepted and the new ones reject, and --noisy-compute what computed too slowly against the
        # whole campaign's quick launches (compute_check.rejudge); launch it again, with what depends on it.
        for _ in range(REJUDGE_PASSES):
            if not rejudge.rejudge(c, _log) + compute_check.rejudge(c, _log):
                break
            prepare_step(c)
            for s in c.schedule:
                runs.run_slot(c, s, _log)
    except prepare.StepError as e:
        raise SystemExit(f"llamp-campaign: {e}")
    report.write(c, _log)
    return 0 if not [s for s in c.schedule if not runs.slot_done(runs.load_records(c), s.slot)] else 3


def main(argv):
    try:
        return _main(argv)
    except (prediction.PredictionError, RecordError, cores.ProbeError) as e:
        raise SystemExit(f"llamp-campaign: {e}")


def _main(argv):
    if argv and argv[0] in ("-h", "--help"):
        run_parser().print_help()
        return 0
    command = argv[0] if argv and argv[0] in ("resume", "report", "repredict", "prepare", "run-slot") else "run"
    if command == "run":
        c, args = new_campaign(argv)
        if args.mode == "slurm":
            slurm.submit(c, args.sbatch_arg, args.slurm_parallel, _log)
            return 0
        return run_local(c)

    p = argparse.ArgumentParser(prog=f"llamp-campaign {command}")
    p.add_argument("dir")
    if command == "run-slot":
        p.add_argument("slot", type=int)
    if command == "repredict":
        p.add_argument("--schedgen-arg", action="append", default=None,
                       help="replaces the campaign's llamp schedgen arguments (repeatable)")
        p.add_argument("--no-schedgen-args", action="store_true",
                       help="drops the campaign's llamp schedgen arguments (back to the defaults)")
        p.add_argument("--prediction-from", choices=("every-trace", "kept-trace"), default=None,
                       help="replaces the campaign's choice (every-trace: the mean of every traced run's prediction)")
        p.add_argument("--first-use", action=argparse.BooleanOptionalAction, default=None,
                       help="replaces the campaign's choice whether the graph charges the transport's first use")
    if command in ("repredict", "report"):
        p.add_argument("--trace-weights", choices=trace_weights.CHOICES, default=None,
                       help="replaces the campaign's choice how the mean prediction weighs the traced runs")
        p.add_argument("--noise-statistic", choices=report.NOISE_STATISTICS, default=None,
                       help="replaces the campaign's choice what the prediction with noise adds of the replay's "
                            "samples (mean or median)")
    if command == "resume":
        p.add_argument("--mode", choices=["local", "slurm"], default="local")
        p.add_argument("--sbatch-arg", action="append", default=[])
        p.add_argument("--slurm-parallel", type=int, default=1)
    args = p.parse_args(argv[1:])
    c = config.load(args.dir)
    if command == "prepare":
        prepare_step(c)
    elif command == "run-slot":
        if not 0 <= args.slot < len(c.schedule):
            raise SystemExit(f"llamp-campaign: slot {args.slot} is not in 0..{len(c.schedule) - 1}")
        record = runs.run_slot(c, c.schedule[args.slot], _log)
        return 0 if record["status"] == runs.OK else 3
    elif command == "report":
        if args.trace_weights is not None:
            c.trace_weights = args.trace_weights
        if args.noise_statistic is not None:
            c.noise_statistic = args.noise_statistic
        if args.trace_weights is not None or args.noise_statistic is not None:
            c.save()
        ensemble.reweigh(c, _log)  # the mean's weights follow the runs recorded since (trace_weights.py)
        report.write(c, _log)
    elif command == "repredict":
        if c.no_prediction:
            raise SystemExit("llamp-campaign: this campaign was run with --no-prediction")
        if args.no_schedgen_args and args.schedgen_arg is not None:
            raise SystemExit("llamp-campaign: --no-schedgen-args and --schedgen-arg exclude each other")
        if args.no_schedgen_args:
            c.schedgen_args = []
        elif args.schedgen_arg is not None:
            c.schedgen_args = args.schedgen_arg
        if args.prediction_from is not None:
            c.prediction_from = args.prediction_from
        if args.first_use is not None:
            c.first_use = args.first_use
        if args.trace_weights is not None:
            c.trace_weights = args.trace_weights
        if args.noise_statistic is not None:
            c.noise_statistic = args.noise_statistic
        c.save()
        try:
            prepare.repredict(c, _log)
            noise.analyze(c, _log)
            ensemble.analyze(c, _log)
        except prepare.StepError as e:
            raise SystemExit(f"llamp-campaign: {e}")
        report.write(c, _log)
    elif command == "resume":
        if args.mode == "slurm":
            if c.floor_target_pct > 0:
                raise SystemExit("llamp-campaign: this campaign adds rounds by --floor-target, which needs local "
                                 "mode; resume it without --mode slurm")
            slurm.submit(c, args.sbatch_arg, args.slurm_parallel, _log)
        else:
            return run_local(c)
    return 0
