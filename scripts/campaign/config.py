"""The campaign's description, saved as <out>/campaign.json so every later step (a Slurm array
task, a resumed campaign, a report) works from the folder alone, from any directory."""
import json
import os
import shutil
from dataclasses import asdict, dataclass, field

from .schedule import Slot, slot_from_json, slot_to_json

CONFIG_NAME = "campaign.json"


@dataclass
class Tools:
    llamp: str = ""        # the llamp CLI (schedgen, analyze)
    loggp: str = ""        # llamp-loggp
    tracer_lib: str = ""   # libllamptrace.so
    timer_lib: str = ""    # libllamp_runtime_timer.so
    coreprobe: str = ""    # llamp-coreprobe ("" = none: the cores are not probed)
    noise: str = ""        # llamp-noise ("" = none: no prediction with the machine's noise)


@dataclass
class Campaign:
    out_dir: str
    app: list
    ranks: int
    deltas_ns: list
    reps: int = 5
    seed: int = 1
    timeout_s: float = 600.0
    max_attempts: int = 2             # a failed run is retried once
    mpiexec: list = field(default_factory=lambda: ["mpiexec.mpich"])
    mpi_env: dict = field(default_factory=dict)
    injector_prefix: str = ""         # patched MPICH+UCX prefix (its llamp-env.sh is sourced)
    tools: Tools = field(default_factory=Tools)
    schedgen_args: list = field(default_factory=list)
    first_use: bool = True            # schedgen --first-use bands from llamp-loggp's first-use probe
    analyze_args: list = field(default_factory=list)
    loggp_args: list = field(default_factory=list)
    o_size: str = ""                  # llamp-loggp --o-size: "", a size, or "auto" (from app.goal)
    max_size: str = ""                # llamp-loggp --max-size (G is fit up to it): "", a size, or "auto"
    tolerances_pct: list = field(default_factory=lambda: [1.0, 2.0, 5.0])
    given_params: str = ""            # use this parameter file instead of measuring
    given_trace: str = ""             # use this trace directory instead of tracing
    trace_runs: int = 3               # traced runs; prepare.representative_trace picks the one modelled
    trace_reference: bool = True      # an untraced reference run before each traced run
    trace_target_pct: float = 0.0     # trace again while no traced run is this close to the references; 0: off
    trace_floor_target_pct: float = 0.0  # rounds.py: trace again while the traces' floor is above it; 0: off
    max_trace_runs: int = 0           # ... up to this many traced runs in all (both targets)
    prediction_from: str = "every-trace"  # ensemble.py: mean of every traced run's prediction; "kept-trace": one
    trace_weights: str = "rounds"     # trace_weights.py: the mean weighted by round; "equal": each traced run alike
    param_runs: int = 5               # llamp-loggp launches; params.json holds their mean
    no_prediction: bool = False       # measure runtimes only (no trace, schedgen, analyze)
    core_limit: str = "auto"          # cores.py: slow-cores above this hand-off time ("auto", "off", "90ns")
    core_retries: int = 5             # launches again after slow-cores ones
    core_wait_s: float = 10.0         # how long a launch waits for the cores to be fast again
    noise_runs: int = 3               # llamp-noise recordings (noise.py); 0: none
    noise_duration: str = "2s"        # how long each recording spins
    noise_samples: int = 32           # phases `llamp analyze --noise` averages
    noise_statistic: str = "mean"     # report.py: the replay's samples' mean is added ("median": before stop 53)
    floor_target_pct: float = 0.0     # rounds.py: more rounds while the noise floor is above it; 0: off
    max_reps: int = 0                 # ... up to this many rounds in all
    quiet_gate_pct: float = 0.0       # quiet_gate.py: wait before a round while a CPU loses more; 0: off
    quiet_gate_wait_s: float = 300.0  # ... for at most this long, then run it anyway
    quiet_gate_pause_s: float = 10.0  # ... probing again this often
    quiet_gate_probe: str = "300ms"   # how long each probe spins
    quiet_gate_throughput: str = "200ms"  # ... then times throughput slices (0s: not)
    quiet_gate_slowdown_pct: float = 6.0  # ... and waits while a rank's slices are this much slower than its fastest
    quiet_gate_every: str = "round"   # "round" or "launch": what each gate comes before
    quiet_gate_after_pct: float = 0.0  # quiet_gate.check_after: a run this much slower after it is noisy-host; 0: off
    noisy_compute_pct: float = 0.0    # compute_check.py: a rank computing this much longer is noisy-host; 0: off
    noisy_retries: int = 5            # launches again after noisy-host ones
    inject_stats: bool = True         # LLAMP_INJECT_STATS in the runs at ΔL > 0 (inject_stats.py)
    schedule: list = field(default_factory=list)

    def path(self, *parts):
        return os.path.join(self.out_dir, *parts)

    def save(self):
        d = asdict(self)
        d["schedule"] = [slot_to_json(s) for s in self.schedule]
        tmp = self.path(CONFIG_NAME + ".tmp")
        with open(tmp, "w") as f:
            json.dump(d, f, indent=2)
        os.replace(tmp, self.path(CONFIG_NAME))


def load(out_dir):
    path = os.path.join(os.path.abspath(out_dir), CONFIG_NAME)
    try:
        with open(path) as f:
            d = json.load(f)
    except FileNotFoundError:
        raise SystemExit(f"llamp-campaign: {path} does not exist; is '{out_dir}' a campaign folder?")
    except json.JSONDecodeError as e:
        raise SystemExit(f"llamp-campaign: {path}: invalid JSON at line {e.lineno}: {e.msg}")
    d["tools"] = Tools(**d.get("tools", {}))
    d["schedule"] = [slot_from_json(s) for s in d.get("schedule", [])]
    d["out_dir"] = os.path.abspath(out_dir)  # the folder may have moved since
    return Campaign(**d)


def find_tools(build_dir, overrides):
    """Locates the tools in a build folder; explicit paths in `overrides` win."""
    guesses = {
        "llamp": os.path.join(build_dir, "bin", "llamp"),
        "loggp": os.path.join(build_dir, "bin", "llamp-loggp"),
        "tracer_lib": os.path.join(build_dir, "lib", "libllamptrace.so"),
        "timer_lib": os.path.join(build_dir, "lib", "libllamp_runtime_timer.so"),
        "coreprobe": os.path.join(build_dir, "bin", "llamp-coreprobe"),
        "noise": os.path.join(build_dir, "bin", "llamp-noise"),
    }
    chosen = {k: os.path.abspath(overrides.get(k) or v) for k, v in guesses.items()}
    if not overrides.get("coreprobe") and not os.path.isfile(chosen["coreprobe"]):
        chosen["coreprobe"] = ""  # an older build or bundle: the campaign runs without probing
    if not overrides.get("noise") and not os.path.isfile(chosen["noise"]):
        chosen["noise"] = ""  # likewise: no prediction with the machine's noise
    return Tools(**chosen)


def default_build_dir(script_dir):
    """$LLAMP_BUILD_DIR, else <repo>/build next to this script's repository."""
    env = os.environ.get("LLAMP_BUILD_DIR")
    if env:
        return os.path.abspath(env)
    return os.path.abspath(os.path.join(script_dir, "..", "build"))


def resolve_program(name):
    """An absolute path for a command name, so Slurm jobs do not depend on PATH."""
    if os.sep in name:
        return os.path.abspath(name)
    found = shutil.which(name)
    return found or name
