"""Slurm mode: the campaign as three dependent jobs.

  prepare  (K traces, schedgen, parameters, analyze)      sbatch
  runs     (one array task per slot, throttled to %P)      sbatch --dependency=afterok:prepare
  report                                                   sbatch --dependency=afterany:runs

Every job calls back into this script with the campaign folder, so the scripts hold no path that
was not resolved at submission time, and they can be submitted from any directory. Resuming
submits the array again for the slots without a successful run only.
"""
import json
import math
import os
import shlex
import subprocess
import sys

from . import rejudge, runs


def _script(campaign, name, ntasks, time_s, body, extra):
    log_dir = campaign.path("slurm")
    lines = ["#!/bin/bash",
             f"#SBATCH --job-name=llamp-{name}",
             f"#SBATCH --output={log_dir}/{name}-%A_%a.out" if name == "runs" else
             f"#SBATCH --output={log_dir}/{name}-%j.out",
             "#SBATCH --nodes=1",
             f"#SBATCH --ntasks={ntasks}",
             f"#SBATCH --time={max(1, math.ceil(time_s / 60))}"]
    lines += [f"#SBATCH {a}" for a in extra]
    lines += ["set -euo pipefail", f"cd {shlex.quote(campaign.out_dir)}", body, ""]
    path = os.path.join(log_dir, f"{name}.sbatch")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


def _self_command(*args):
    script = os.path.abspath(sys.argv[0])
    return " ".join(shlex.quote(a) for a in [sys.executable, script, *args])


def _submit(args):
    out = subprocess.run(["sbatch", "--parsable", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"llamp-campaign: sbatch {' '.join(args)} failed: {out.stderr.strip()}")
    return out.stdout.strip().split(";")[0]


def submit(campaign, sbatch_args, parallel=1, log=print):
    """Submits prepare (unless done), the array over slots without success, and the report. What a
    recalibration of the core limits took back (rejudge.py) is among them on `resume`."""
    os.makedirs(campaign.path("slurm"), exist_ok=True)
    rejudge.rejudge(campaign, log)
    records = runs.load_records(campaign)
    pending = [s.slot for s in campaign.schedule if not runs.slot_done(records, s.slot)]
    jobs = {}
    dependency = []
    prepared = os.path.exists(campaign.path("params.json")) and (
        campaign.no_prediction or os.path.exists(campaign.path("analysis.json")))
    if not prepared:
        # Every traced run and parameter measurement may take two attempts of up to --timeout.
        traced_launches = max(campaign.trace_runs, campaign.max_trace_runs) * (2 if campaign.trace_reference else 1)
        prep_time = 2 * (traced_launches + campaign.param_runs) * campaign.timeout_s + 300
        prep = _script(campaign, "prepare", max(2, campaign.ranks), prep_time,
                       _self_command("prepare", campaign.out_dir), sbatch_args)
        jobs["prepare"] = _submit([prep])
        # A failed prepare must cancel the runs (and a failed array the report's wait) instead of
        # leaving them pending forever with DependencyNeverSatisfied.
        dependency = [f"--dependency=afterok:{jobs['prepare']}", "--kill-on-invalid-dep=yes"]
    if pending:
        per_task = campaign.max_attempts * (campaign.timeout_s + 15) + 60
        array = _script(campaign, "runs", campaign.ranks, per_task,
                        _self_command("run-slot", campaign.out_dir) + ' "${SLURM_ARRAY_TASK_ID}"', sbatch_args)
        indices = ",".join(str(i) for i in pending)
        jobs["runs"] = _submit([*dependency, f"--array={indices}%{parallel}", array])
        dependency = [f"--dependency=afterany:{jobs['runs']}", "--kill-on-invalid-dep=yes"]
    report = _script(campaign, "report", 1, 600, _self_command("report", campaign.out_dir), sbatch_args)
    jobs["report"] = _submit([*dependency, report])
    history_path = campaign.path("slurm", "jobs.json")
    history = []
    if os.path.exists(history_path):
        with open(history_path) as f:
            history = json.load(f)
    history.append({"jobs": jobs, "pending_slots": pending})
    with open(history_path, "w") as f:
        json.dump(history, f, indent=2)
    log(f"submitted: {', '.join(f'{k} {v}' for k, v in jobs.items())} ({len(pending)} runs); "
        f"the report will be in {campaign.path('report.md')}")
    return jobs
