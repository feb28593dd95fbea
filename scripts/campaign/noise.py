"""Machine noise (docs/campaign.md, 'Machine noise'): K llamp-noise launches (noise-k.json), spread
over the campaign like the traced runs, and a second analysis that replays their detours
(analysis-noise.json: `llamp analyze --noise noise-1.json ... --noise-at L0+ΔL,...`).

Why: on the 2-vCPU VM the injected latency's median is exact, but the host takes each spinning
vCPU away for 1.6-2.2 % of the time, among it a few stalls of 1-4 ms a second; a rank that waits
out ΔL notices its message late whenever one covers the moment it arrives. Every injected 100 µs
then cost 101.0-101.4 µs on average (8 B ping-pong, 10000 round trips), and the longer a run
waits, the more stalls it meets: the measured response to latency ran 0.5-2.3 % above the
model's. The recordings are taken with the ranks launched like the application's, spinning at
once, and the analysis moves each wait's end past the detour covering it if that detour began during
the wait, then adds the CPU's resume cost after a wait that long (llamp-noise times it since stop 35:
a block of MPI calls ran ~0.5 µs slower after a 100 µs spin than hot on a 2-vCPU Intel VM), and
since stop 36 slows the rank's computation up to its next receive by as much as the other MPI work
llamp-noise times after that block slowed (40-50 % after 100 µs there), on at most as much of it.
"""
import json
import math
import os

from . import environment
from .prepare import StepError, _run_analyze, _run_step, spread_over_slots
from .runs import log_path


def noise_path(campaign, k):
    return campaign.path(f"noise-{k}.json")


def count_for_rounds(campaign):
    """How many recordings the campaign's rounds ask for: --noise-runs over the planned --reps rounds,
    and as many again per round for every round --floor-target or --trace-floor-target added (rounded
    up), so that the recordings sample the machine over the campaign's whole time as its runs do. The
    host's noise drifts over minutes: two recordings minutes apart (2026-11-29, the 2-vCPU Intel VM)
    replayed 24 and 40 ms of delay into app_subcomm's 2.74 s at ΔL = 100 µs, and app_pingpong's table U
    campaign ran 13 rounds with its three recordings among the first four."""
    rounds = len({s.round for s in campaign.schedule})
    if campaign.reps <= 0 or rounds <= campaign.reps:
        return campaign.noise_runs
    return math.ceil(campaign.noise_runs * rounds / campaign.reps)


def recorded(campaign):
    """The noise recordings present, in order."""
    return [noise_path(campaign, k) for k in range(1, count_for_rounds(campaign) + 1)
            if os.path.exists(noise_path(campaign, k))]


def missing(campaign):
    """The recordings the rounds so far ask for that are not there (none when noise is off)."""
    if not enabled(campaign):
        return []
    return [k for k in range(1, count_for_rounds(campaign) + 1) if not os.path.exists(noise_path(campaign, k))]


def enabled(campaign):
    return campaign.noise_runs > 0 and bool(campaign.tools.noise) and not campaign.no_prediction


def recording_done(campaign, k):
    """Whether recording k is made (record_once skips it)."""
    return os.path.exists(noise_path(campaign, k))


def record_once(campaign, k, log=print):
    """Recording k: llamp-noise launched like the application (same launcher, binding, ranks and
    environment as a run at ΔL = 0); skipped when it exists."""
    target = noise_path(campaign, k)
    if recording_done(campaign, k) or not enabled(campaign):
        return
    cmd = list(campaign.mpiexec) + ["-n", str(campaign.ranks), campaign.tools.noise, "-o", target + ".tmp",
                                    "--duration", campaign.noise_duration]
    _run_step(campaign, f"noise-{k}", cmd, environment.base_environment(campaign))
    os.replace(target + ".tmp", target)
    try:
        with open(log_path(campaign, f"noise-{k}")) as f:
            summary = [line.split("llamp-noise: ", 1)[1].strip() for line in f if line.startswith("llamp-noise: rank")]
    except OSError:
        summary = []
    log(f"noise {k}/{count_for_rounds(campaign)}: {target}" + (f" ({'; '.join(summary)})" if summary else ""))


def record_all(campaign, log=print):
    """Every recording the rounds ask for that is missing (the planned ones in the Slurm prepare job;
    locally only those an interrupted campaign left out)."""
    for k in missing(campaign):
        record_once(campaign, k, log)


def interleaved_slots(campaign):
    """Local mode: before which schedule slot each recording after the first happens, {slot: [k]},
    evenly over the measured runs like the traced runs (the host's noise drifts over minutes)."""
    return spread_over_slots(campaign.noise_runs, len(campaign.schedule))


# The replay's terms one at a time (docs/campaign.md, "The replay's terms"): the prediction with
# the detours alone, then with the resume block after each wait too; analysis-noise.json charges all
# of them (with the following work's slowdown). The report gives each one's RRMSE and response.
TERM_STEPS = (("detours", "detours"), ("resume", "detours,resume"))


def term_path(campaign, name):
    return campaign.path(f"analysis-noise-{name}.json")


def _analysed_files(path):
    """The recordings an analysis with noise replayed (None without one)."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f).get("noise", {}).get("files")


def _have_resume(files):
    """Whether any recording timed the resume cost: without one, every term step is the detours."""
    for path in files:
        with open(path) as f:
            if any("resume" in rank for rank in json.load(f).get("ranks", [])):
                return True
    return False


def analyze(campaign, log=print):
    """analysis-noise.json from the recordings present, made again when they changed (a resumed
    campaign recorded more) or the graph did (build_graph removes it); with the term steps
    (TERM_STEPS), made again with it."""
    files = recorded(campaign)
    target = campaign.path("analysis-noise.json")
    if not files or not os.path.exists(campaign.path("app.goal")) or not os.path.exists(campaign.path("params.json")):
        return None
    fresh = _analysed_files(target) == files
    steps = TERM_STEPS if _have_resume(files) else ()
    if fresh and all(_analysed_files(term_path(campaign, name)) == files for name, _ in steps):
        return target
    with open(campaign.path("params.json")) as f:
        L0 = json.load(f)["L_ns"]
    at = ",".join(f"{L0 + d:.3f}ns" for d in campaign.deltas_ns)
    args = ["--no-path", "--noise-at", at, "--noise-samples", str(campaign.noise_samples)]
    for path in files:
        args += ["--noise", path]
    try:
        if not fresh:
            _run_analyze(campaign, target, args)
        for name, terms in steps:
            _run_analyze(campaign, term_path(campaign, name), args + ["--noise-terms", terms])
    except StepError as e:
        raise StepError(f"the analysis with noise: {e}")
    log(f"analysis with noise ({len(files)} recordings): {target}"
        + (f"; its terms one at a time: {', '.join(os.path.basename(term_path(campaign, n)) for n, _ in steps)}"
           if steps else ""))
    return target
