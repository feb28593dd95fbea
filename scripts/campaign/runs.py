"""Running the application: one attempt, one slot (attempt + one retry), and the run records.

Every attempt leaves <out>/runs/slot-<NNNN>-a<A>/ with output.log, the timer's runtime files and
record.json; nothing is overwritten, so a failure stays on record next to its retry. A slot is
done once one of its attempts is "ok"; failed, timed-out, slow-cores (cores.py: the host had
placed the ranks' cores apart) and noisy-host attempts (compute_check.check: a rank computed too
slowly; quiet_gate.check_after: the host's noisy spell began during the run) never enter an average.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import time

from . import compute_check, cores, environment, inject_stats, quiet_gate, units
from .runtime_records import RecordError, read_core_probes, read_run

OK, FAILED, TIMEOUT, SLOW_CORES, NOISY_HOST = "ok", "failed", "timeout", cores.SLOW_CORES, "noisy-host"


def log_path(campaign, name):
    """<out>/logs/<name>.log, where a preparation step or a probe writes its output."""
    os.makedirs(campaign.path("logs"), exist_ok=True)
    return campaign.path("logs", name + ".log")


def attempt_dir(campaign, slot, attempt):
    return campaign.path("runs", f"slot-{slot:04d}-a{attempt}")


def run_command(cmd, env, log_path, timeout_s, cwd=None):
    """Runs cmd in its own process group; on timeout the whole group is ended (only the processes
    this call started). Returns (status, exit_code, wall_s)."""
    start = time.monotonic()
    with open(log_path, "ab") as log:
        log.write(("$ " + " ".join(cmd) + "\n").encode())
        log.flush()
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, cwd=cwd)
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
            log.write(f"\nllamp-campaign: killed after the {timeout_s:g} s timeout\n".encode())
            return TIMEOUT, None, time.monotonic() - start
    return (OK if code == 0 else FAILED), code, time.monotonic() - start


def app_command(campaign):
    return list(campaign.mpiexec) + ["-n", str(campaign.ranks)] + list(campaign.app)


def probed_cpus(campaign, ranks=None):
    """How many CPUs the ranks of a launch occupy: one each, at most the machine's."""
    cores_here = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(ranks or campaign.ranks, cores_here)


def attempt_label(slot, attempt):
    return f"round {slot.round + 1} slot {slot.slot} attempt {attempt}"


def run_attempt(campaign, slot, attempt, log=print):
    directory = attempt_dir(campaign, slot.slot, attempt)
    if os.path.exists(directory):
        shutil.rmtree(directory)  # an attempt that never wrote its record (killed job)
    os.makedirs(directory)
    env = environment.base_environment(campaign)
    env["LLAMP_DELTA_L"] = units.env_time(slot.delta_ns)
    env["LLAMP_RUNTIME_DIR"] = directory
    injected = slot.delta_ns > 0 and campaign.inject_stats
    if injected:
        env["LLAMP_INJECT_STATS"] = "1"  # printed in MPI_Finalize, after the timer's end (inject_stats.py)
    environment.with_preload(env, [campaign.tools.timer_lib])
    guard = cores.Guard(campaign, os.path.basename(directory), probed_cpus(campaign), log)
    guard.environment(env)
    guard.before()
    started = time.time()
    try:
        status, code, wall = run_command(app_command(campaign), env, os.path.join(directory, "output.log"),
                                         campaign.timeout_s)
    finally:
        guard.release()
    guard.after()
    record = {"slot": slot.slot, "round": slot.round, "delta_ns": slot.delta_ns, "attempt": attempt,
              "status": status, "exit_code": code, "runtime_ns": None, "rank_runtimes_ns": None,
              "wall_s": round(wall, 3), "started_unix": round(started, 3), "reason": "",
              "host": os.uname().nodename, "directory": os.path.relpath(directory, campaign.out_dir)}
    if status == OK:
        try:
            record["rank_runtimes_ns"], record["runtime_ns"] = read_run(directory, campaign.ranks)
            guard.in_run(read_core_probes(directory))
        except RecordError as e:
            record["status"], record["reason"] = FAILED, str(e)
        else:
            if cores.note_launch(campaign, guard, log):
                record["band_widened"] = True  # its slot gets another attempt (run_slot)
            if guard.slow:
                record["status"], record["reason"] = SLOW_CORES, guard.reason()
            elif injected:
                _check_injection(record, directory, campaign.ranks)
        if record["status"] == OK:
            slowed, record["compute_slowed_pct"] = compute_check.check(campaign, directory, log=log,
                                                                       delta_ns=slot.delta_ns)
            if record["compute_slowed_pct"] is not None:
                record["compute_stage"] = compute_check.stage(campaign)
            if slowed:
                record["status"], record["reason"] = NOISY_HOST, f"in the run {slowed}"
        if record["status"] == OK:
            spell = quiet_gate.check_after(campaign, attempt_label(slot, attempt))
            if spell:
                record["status"], record["reason"] = NOISY_HOST, f"after the run {spell}"
    elif status == TIMEOUT:
        record["reason"] = f"timed out after {campaign.timeout_s:g} s"
    else:
        record["reason"] = f"exit code {code}; see {record['directory']}/output.log"
    record.update(guard.fields())
    tmp = os.path.join(directory, "record.json.tmp")
    with open(tmp, "w") as f:
        json.dump(record, f, indent=2)
    os.replace(tmp, os.path.join(directory, "record.json"))
    return record


def _check_injection(record, directory, ranks):
    """Keeps the injector's per-rank lines in the record; a run at ΔL > 0 whose ranks printed none
    did not inject ΔL, so its runtime is no measurement of it: failed, and retried like any failure."""
    with open(os.path.join(directory, "output.log"), errors="replace") as f:
        parsed = inject_stats.parse(f.read())
    record["inject_stats"] = inject_stats.for_record(parsed)
    missing = inject_stats.missing_ranks(parsed, ranks)
    if missing:
        record["status"] = FAILED
        record["reason"] = (f"no llamp-inject statistics line from rank(s) {', '.join(map(str, missing))}: "
                            f"LLAMP_DELTA_L was not injected (is the patched MPICH loaded? see "
                            f"{record['directory']}/output.log)")


def load_records(campaign):
    records = []
    for path in sorted(glob.glob(campaign.path("runs", "slot-*-a*", "record.json"))):
        with open(path) as f:
            records.append(json.load(f))
    return records


def slot_done(records, slot_id):
    return any(r["slot"] == slot_id and r["status"] == OK for r in records)


def run_slot(campaign, slot, log=print):
    """Runs a slot unless it already succeeded: up to max_attempts attempts that fail or time out
    (a retry), plus up to core_retries more after slow-cores attempts, and more while a streak of
    launches outside the core-placement band that began within them can still widen it
    (cores.out_of_core_retries), plus up to noisy_retries more after noisy-host attempts, each
    after the quiet gate (none once that gate timed out). Attempts continue numbering
    after earlier ones, so resuming a campaign adds attempts instead of replacing them.
    The noisy-host bound holds over the whole campaign: the end's re-judge passes call this again,
    and with a bound per call one slot was launched 16 times (stop 59). Once --noisy-compute has
    widened or switched itself off (compute_check.stage) the slot's earlier noisy-host attempts by
    their computation no longer count: they are what the machine's ordinary launches look like
    (compute_check.counts_against_retries)."""
    existing = [r for r in load_records(campaign) if r["slot"] == slot.slot]
    if any(r["status"] == OK for r in existing):
        return next(r for r in existing if r["status"] == OK)
    attempt = max([r["attempt"] for r in existing], default=0)
    failures = slow = 0
    noisy = sum(compute_check.counts_against_retries(campaign, r) for r in existing)
    if noisy > campaign.noisy_retries:
        return max(existing, key=lambda r: r["attempt"])
    while True:
        attempt += 1
        record = run_attempt(campaign, slot, attempt, log)
        runtime = f"{record['runtime_ns'] / 1e9:.4f} s" if record["runtime_ns"] is not None else ""
        if record["status"] != OK:
            runtime = f"{runtime} {record['reason']}".strip()
        log(f"[slot {slot.slot:4d} round {slot.round} ΔL {units.fmt_us(slot.delta_ns)} attempt {attempt}] "
            f"{record['status']}: {runtime}")
        if record["status"] == OK:
            return record
        if record["status"] == SLOW_CORES:
            slow += 1
            if cores.out_of_core_retries(campaign, slow, record.get("band_widened", False)):
                return record
        elif record["status"] == NOISY_HOST:
            noisy += 1
            if noisy > campaign.noisy_retries:
                return record
            if quiet_gate.gate_relaunch(campaign, attempt_label(slot, attempt), log) == quiet_gate.TIMED_OUT:
                # A spell longer than --quiet-gate-wait: launching again now would measure it again
                # (table AG19: one slot's gate waited 290 s, its run was noisy-host, and so was the
                # host for the next 300 s). The slot stays open; the rounds --floor-target adds
                # measure its ΔL later.
                log(f"[slot {slot.slot:4d}] the host stayed noisy for --quiet-gate-wait after a noisy-host "
                    f"attempt; left open")
                return record
        else:
            failures += 1
            if failures >= campaign.max_attempts:
                return record
