"""Running the application: one attempt, one slot (attempt + one retry), and the run records.

Every attempt leaves <out>/runs/slot-<NNNN>-a<A>/ with output.log, the timer's runtime files and
record.json; nothing is overwritten, so a failure stays on record next to its retry. A slot is
done once one of its attempts is "ok"; failed and timed-out attempts never enter an average.
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import time

from . import environment, units
from .runtime_records import RecordError, read_run

OK, FAILED, TIMEOUT = "ok", "failed", "timeout"


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


def run_attempt(campaign, slot, attempt):
    directory = attempt_dir(campaign, slot.slot, attempt)
    if os.path.exists(directory):
        shutil.rmtree(directory)  # an attempt that never wrote its record (killed job)
    os.makedirs(directory)
    env = environment.base_environment(campaign)
    env["LLAMP_DELTA_L"] = units.env_time(slot.delta_ns)
    env["LLAMP_RUNTIME_DIR"] = directory
    environment.with_preload(env, [campaign.tools.timer_lib])
    started = time.time()
    status, code, wall = run_command(app_command(campaign), env, os.path.join(directory, "output.log"),
                                     campaign.timeout_s)
    record = {"slot": slot.slot, "round": slot.round, "delta_ns": slot.delta_ns, "attempt": attempt,
              "status": status, "exit_code": code, "runtime_ns": None, "rank_runtimes_ns": None,
              "wall_s": round(wall, 3), "started_unix": round(started, 3), "reason": "",
              "host": os.uname().nodename, "directory": os.path.relpath(directory, campaign.out_dir)}
    if status == OK:
        try:
            record["rank_runtimes_ns"], record["runtime_ns"] = read_run(directory, campaign.ranks)
        except RecordError as e:
            record["status"], record["reason"] = FAILED, str(e)
    elif status == TIMEOUT:
        record["reason"] = f"timed out after {campaign.timeout_s:g} s"
    else:
        record["reason"] = f"exit code {code}; see {record['directory']}/output.log"
    tmp = os.path.join(directory, "record.json.tmp")
    with open(tmp, "w") as f:
        json.dump(record, f, indent=2)
    os.replace(tmp, os.path.join(directory, "record.json"))
    return record


def load_records(campaign):
    records = []
    for path in sorted(glob.glob(campaign.path("runs", "slot-*-a*", "record.json"))):
        with open(path) as f:
            records.append(json.load(f))
    return records


def slot_done(records, slot_id):
    return any(r["slot"] == slot_id and r["status"] == OK for r in records)


def run_slot(campaign, slot, log=print):
    """Runs a slot unless it already succeeded: up to max_attempts attempts (a retry after a
    failure or timeout). Attempts continue numbering after earlier ones, so resuming a campaign
    adds attempts instead of replacing them."""
    existing = [r for r in load_records(campaign) if r["slot"] == slot.slot]
    if any(r["status"] == OK for r in existing):
        return next(r for r in existing if r["status"] == OK)
    first = max([r["attempt"] for r in existing], default=0) + 1
    record = None
    for attempt in range(first, first + campaign.max_attempts):
        record = run_attempt(campaign, slot, attempt)
        runtime = (f"{record['runtime_ns'] / 1e9:.4f} s" if record["runtime_ns"] is not None
                   else record["reason"])
        log(f"[slot {slot.slot:4d} round {slot.round} ΔL {units.fmt_us(slot.delta_ns)} attempt {attempt}] "
            f"{record['status']}: {runtime}")
        if record["status"] == OK:
            break
    return record
