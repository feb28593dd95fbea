"""Judging again what was judged under an earlier calibration of the core limits.

`--core-limit auto` calibrates on the first launch (cores.py). A calibration taken while the host
kept the vCPUs apart makes that placement the reference; a later probe three times faster shows
the mistake, and cores.recalibrate moves the reference. Everything accepted before that (measured
runs, parameter launches, traced runs and their untraced reference runs) was judged by the old
limits and may have run in the placement the new ones reject. rejudge() looks at each once the
campaign's launches are done: what the new limits reject is taken back, the measured run's record
becoming slow-cores (kept on record, with the reason) and the launch's outputs removed, so that
the campaign launches it again (run_local) and the parameters, the graph and the analysis follow.
"""
import glob
import json
import math
import os
import re

from . import cores, runs

_TRACE_LAUNCH = re.compile(r"trace-(\d+)(-reference)?$")
_PARAMS_LAUNCH = re.compile(r"params-(\d+)$")
# What the parameters or the kept trace feed: made again from what is left.
_DERIVED = ("analysis.json", "analysis-cap.json", "analysis-noise.json", "analysis-mean.json")


def _remove(campaign, *names):
    for name in names:
        path = campaign.path(name)
        if os.path.exists(path):
            os.remove(path)


def invalidate_launch(campaign, name):
    """Removes what a parameter launch or traced run left, so prepare launches it again."""
    params = _PARAMS_LAUNCH.match(name)
    trace = _TRACE_LAUNCH.match(name)
    if params:
        _remove(campaign, f"params-{params.group(1)}.json", "params.json", *_DERIVED)
    elif trace:
        # trace_once redoes the reference run and the traced run together from fresh folders
        _remove(campaign, f"trace-{trace.group(1)}.done", "trace.done.json", "app.goal", "app.goal.json", *_DERIVED)


def _same(a, b):
    return (a is None and b is None) or (a is not None and b is not None and math.isclose(a, b))


def _judged_under_other_limits(fields, limit, floor):
    return fields.get("core_limit_ns") is not None and not (
        _same(fields["core_limit_ns"], limit) and _same(fields.get("core_floor_ns"), floor))


def _taken_back(fields, record):
    """Whether a launch accepted on the host of `record` (its calibration) is rejected now."""
    if not record or not record.get("recalibrations"):
        return False
    limit, floor = record["limit_ns"], record["floor_ns"]
    return _judged_under_other_limits(fields, limit, floor) and cores.outside_placement(fields, limit, floor)


def rejudge(campaign, log=print):
    """After a recalibration: takes back every launch accepted under other limits that its host's
    current ones reject. Returns how many were taken back (0: nothing to launch again)."""
    if campaign.core_limit != "auto":
        return 0
    hosts = cores.host_records(campaign)
    if not any(r.get("recalibrations") for r in hosts.values()):
        return 0
    here = os.uname().nodename
    taken_back = {}  # host -> launches

    def why(record):
        return (f"judged again after the core limits were calibrated again (limit {record['limit_ns']:.0f} ns, "
                f"floor {record['floor_ns']:.0f} ns)")

    for path in sorted(glob.glob(campaign.path("runs", "slot-*-a*", "record.json"))):
        with open(path) as f:
            run = json.load(f)
        record = hosts.get(run.get("host", here))
        if run["status"] != runs.OK or not _taken_back(run, record):
            continue
        run.update(status=cores.SLOW_CORES, reason=why(record), first_judged_limit_ns=run["core_limit_ns"],
                   first_judged_floor_ns=run.get("core_floor_ns"), core_limit_ns=record["limit_ns"],
                   core_floor_ns=record["floor_ns"])
        with open(path + ".tmp", "w") as f:
            json.dump(run, f, indent=2)
        os.replace(path + ".tmp", path)
        taken_back.setdefault(record["host"], []).append(os.path.basename(os.path.dirname(path)))
    ledger_path = campaign.path("prepare-cores.json")
    if os.path.exists(ledger_path):
        with open(ledger_path) as f:
            ledger = json.load(f)
        for name, fields in list(ledger.items()):
            record = hosts.get(fields.get("host", here))
            if fields.get("kept_slow") or not _taken_back(fields, record):
                continue
            invalidate_launch(campaign, name)
            del ledger[name]
            taken_back.setdefault(record["host"], []).append(name)
        with open(ledger_path + ".tmp", "w") as f:
            json.dump(ledger, f, indent=2)
        os.replace(ledger_path + ".tmp", ledger_path)
    for host, names in taken_back.items():
        record = hosts[host]
        record["recalibrations"][-1].setdefault("taken_back", []).extend(names)
        cores.save_host_record(campaign, record)
        log(f"cores on {host}: {why(record)}: {len(names)} accepted launch(es) ran outside them and are launched "
            f"again ({', '.join(names)})")
    return sum(len(n) for n in taken_back.values())
