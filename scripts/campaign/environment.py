"""The environment every process of the campaign runs in.

All runs (parameter measurement, trace, injected runs) use the same MPI stack and transport, so
the only thing that changes between them is LLAMP_DELTA_L's value:
  * LLAMP_DELTA_L itself in every step, 0 except in the injected runs: the patched MPICH parses it
    in MPI_Init, and a run that parses it must be the run the campaign traced and referenced (a
    parse in long double once made app_halo3d ~5 % slower at 0 than without the variable; the
    injector parses in integers since, docs/injector.md "x87 state");
  * the patched MPICH prefix's llamp-env.sh (PATH, LD_LIBRARY_PATH) when one is given;
  * the --mpi-env variables; by default MPIR_CVAR_NOLOCAL=1, because the injector routes on-node
    messages through UCX while ΔL > 0, and ΔL = 0 must take the same path;
  * one rank per core (--bind-to core, Hydra's -bind-to), so the scheduler does not move ranks;
    within this process's CPU affinity mask (taskset, a cpuset), which Hydra's -bind-to core ignores.
"""
import os
import re
import subprocess

from . import units


def injector_environment(prefix):
    """Variables llamp-env.sh of the patched MPICH prefix sets, as a dict (empty without prefix)."""
    if not prefix:
        return {}
    script = os.path.join(prefix, "llamp-env.sh")
    if not os.path.isfile(script):
        raise SystemExit(f"llamp-campaign: {script} not found; build the injector stack with "
                         f"scripts/build-patched-mpich.sh and pass its prefix")
    # Debian-built programs (the apps, llamp-loggp, the tracer and timer libraries) load the soname
    # libmpich.so.12; LD_LIBRARY_PATH only swaps in the patched MPICH if the prefix offers that
    # name. Without it every run would silently use the unpatched library and inject nothing.
    soname = os.path.join(prefix, "lib", "libmpich.so.12")
    if not os.path.exists(soname):
        raise SystemExit(f"llamp-campaign: {soname} is missing: programs built against Debian's MPICH would "
                         f"not load the patched library, so LLAMP_DELTA_L would have no effect. Add it "
                         f"(a link to libmpi.so.12 of the same prefix) or rebuild with scripts/build-patched-mpich.sh")
    out = subprocess.run(["bash", "-c", 'source "$1" && env -0', "bash", script],
                         check=True, capture_output=True).stdout
    after = dict(item.split("=", 1) for item in out.decode().split("\0") if "=" in item)
    return {k: v for k, v in after.items() if os.environ.get(k) != v and k not in ("_", "SHLVL", "PWD")}


def base_environment(campaign):
    env = dict(os.environ)
    env.update(injector_environment(campaign.injector_prefix))
    env.update({k: str(v) for k, v in campaign.mpi_env.items()})
    # Never inherit a latency or a preload from the caller: each step sets its own.
    env["LLAMP_DELTA_L"] = units.env_time(0)
    env.pop("LLAMP_TRACE_DIR", None)
    env.pop("LLAMP_RUNTIME_DIR", None)
    env.pop("LLAMP_INJECT_STATS", None)  # runs.py sets it in the runs at ΔL > 0
    return env


def with_preload(env, libs):
    libs = [lib for lib in libs if lib]
    if env.get("LD_PRELOAD"):
        libs.append(env["LD_PRELOAD"])
    env["LD_PRELOAD"] = ":".join(libs)
    return env


BIND_TO = re.compile(r"^(none|core|hwthread|socket|numa|board|l[123]cache)(:[1-9][0-9]*)?$")


def _online_cpus():
    try:
        with open("/sys/devices/system/cpu/online") as f:
            text = f.read().strip()
    except OSError:
        return set(range(os.cpu_count() or 1))
    cpus = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def allowed_cores():
    """This process's CPUs grouped by physical core, in CPU order: [[cpu, its siblings...], ...]."""
    cores = {}
    for cpu in sorted(os.sched_getaffinity(0)):
        topology = f"/sys/devices/system/cpu/cpu{cpu}/topology/"
        try:
            with open(topology + "physical_package_id") as p, open(topology + "core_id") as c:
                key = (p.read().strip(), c.read().strip())
        except OSError:
            key = ("cpu", str(cpu))
        cores.setdefault(key, []).append(cpu)
    return list(cores.values())


def _user_binding(unit, per_rank, ranks):
    """Hydra's -bind-to user:... that gives rank r the r-th group of the affinity mask's cores
    (unit core) or CPUs (hwthread), per_rank of them each."""
    groups = allowed_cores() if unit == "core" else [[cpu] for cpu in sorted(os.sched_getaffinity(0))]
    ranks_cpus = [[cpu for group in groups[r * per_rank:(r + 1) * per_rank] for cpu in group] for r in range(ranks)]
    return "user:" + ",".join("+".join(str(cpu) for cpu in cpus) for cpus in ranks_cpus)


def binding_args(launcher, bind_to, ranks, mode, log=print):
    """Launcher arguments that pin each rank to its own core(s) ([] for --bind-to none).

    Unpinned, app_persistent's runs on the 2-vCPU VM fell into two modes, 640-660 ms and 720-780
    ms, and traced runs landed in the slow one more often (untraced 640-724 ms, traced 641-783 ms
    in six pairs); pinned, six pairs gave 628-671 and 642-659 ms. Only Hydra (MPICH's mpiexec)
    takes -bind-to; another launcher is told by --mpiexec-arg. Locally, more ranks than cores
    cannot have a core each, so they are left to the scheduler.

    Hydra's -bind-to core places rank r on the machine's r-th core even when this process may only
    run on some of them (taskset -c 5-9: ranks on cores 0..; seen 2026-11-27), so two campaigns on
    disjoint cores would share cores 0.. and a cpuset's ranks would leave it. Locally, under a mask
    smaller than the machine, the ranks get the mask's cores by name (-bind-to user:5,6,...)."""
    if not BIND_TO.match(bind_to):
        raise SystemExit(f"llamp-campaign: --bind-to {bind_to}: expected core, core:N, hwthread, socket, numa, "
                         f"l1cache..l3cache (each with an optional :N) or none")
    if bind_to == "none":
        return []
    try:
        version = subprocess.run([launcher, "--version"], capture_output=True, timeout=30).stdout.decode(errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    if "HYDRA" not in version:
        log(f"llamp-campaign: note: {launcher} is not MPICH's Hydra: ranks are not pinned (pass the launcher's own "
            f"option with --mpiexec-arg)")
        return []
    unit, _, count = bind_to.partition(":")
    mask = os.sched_getaffinity(0)
    cores = len(allowed_cores()) if unit == "core" else len(mask)
    per_rank = int(count or 1) if unit in ("core", "hwthread") else 1
    if mode != "local":
        return ["-bind-to", bind_to]
    if ranks * per_rank > cores:
        log(f"llamp-campaign: note: {ranks} ranks x {per_rank} core(s) on {cores} cores: ranks are not pinned")
        return []
    if unit in ("core", "hwthread") and mask != _online_cpus():
        user = _user_binding(unit, per_rank, ranks)
        log(f"llamp-campaign: note: this process may run on CPUs {','.join(map(str, sorted(mask)))} only: "
            f"ranks pinned with -bind-to {user}")
        return ["-bind-to", user]
    return ["-bind-to", bind_to]
