"""The quiet gate (docs/campaign.md, 'The quiet gate'): before the preparation and before every
round, a short llamp-noise probe spins on the ranks' CPUs; while some rank loses more than
--quiet-gate % of it to detours, the campaign waits and probes again, up to --quiet-gate-wait
seconds, then runs the round anyway. Every probe is a row of quiet-gate.csv and the report says
how many rounds waited, how long, and how many ran without the machine coming quiet.

Why: a VM's host runs in spells. On the 2-vCPU AMD VM of stop 55, llamp-noise recordings lost
4.6-8.5 % of their spin to detours in quiet minutes and 10-35 % in noisy ones (14-74 stalls of
more than 1 ms a second per vCPU), and app_halo2d's rounds took 0.84-0.90 s in the quiet minutes
and up to 2.07 s in the noisy ones: a CV of 24-32 % per ΔL over 24 rounds, a noise floor of 5.8 %
that no prediction can get under. Waiting a noisy spell out controls the noise where it comes
from, as a benchmarker who checks a node before timing on it does; it gates rounds, not runs, and
whole rounds alike, so no ΔL is favoured and nothing measured is thrown away.
"""
import csv
import json
import os
import statistics
import time

from . import environment
from .prepare import _log_path
from .runs import OK, run_command

GATE_CSV = "quiet-gate.csv"
FIELDS = ["unix_time", "label", "probe", "lost_max_pct", "lost_per_rank_pct", "outcome", "waited_s"]
QUIET, NOISY, TIMED_OUT, FAILED = "quiet", "noisy", "timed-out", "probe-failed"


def enabled(campaign):
    return campaign.quiet_gate_pct > 0 and bool(campaign.tools.noise)


def lost_fractions(recording):
    """Each rank's share of the spin spent in detours, from a llamp-noise recording (a dict)."""
    duration = recording["duration_ns"]  # detours are [start, length] pairs (docs/FORMATS.md)
    return [sum(length for _, length in rank.get("detours", [])) / duration if duration > 0 else 0.0
            for rank in recording["ranks"]]


def probe(campaign):
    """One short llamp-noise launch like the application's; the ranks' lost fractions, or None when
    the probe failed (the gate then lets the round run: it must never stop a campaign)."""
    target = campaign.path("quiet-gate-probe.json.tmp")
    cmd = list(campaign.mpiexec) + ["-n", str(campaign.ranks), campaign.tools.noise, "-o", target,
                                    "--duration", campaign.quiet_gate_probe, "--throughput-duration", "0s",
                                    "--resume-reps", "0"]
    status, _, _ = run_command(cmd, environment.base_environment(campaign), _log_path(campaign, "quiet-gate"),
                               campaign.timeout_s)
    try:
        if status != OK:
            return None
        with open(target) as f:
            return lost_fractions(json.load(f))
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None
    finally:
        if os.path.exists(target):
            os.remove(target)


def _append(campaign, row):
    path = campaign.path(GATE_CSV)
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            w.writeheader()
        w.writerow(row)


def wait_for_quiet(campaign, label, log=print, probe_fn=None, sleep=time.sleep, clock=time.monotonic):
    """Probes until no rank loses more than quiet_gate_pct % of the probe's spin, waiting
    quiet_gate_pause_s between probes, for at most quiet_gate_wait_s; returns the last outcome
    (QUIET, TIMED_OUT or FAILED). Off (returns None) without --quiet-gate or llamp-noise."""
    if not enabled(campaign):
        return None
    probe_fn = probe_fn or (lambda k: probe(campaign))
    start = clock()
    k = 0
    while True:
        k += 1
        lost = probe_fn(k)
        waited = clock() - start
        if lost is None:
            outcome = FAILED
        elif 100 * max(lost) <= campaign.quiet_gate_pct:
            outcome = QUIET
        elif waited + campaign.quiet_gate_pause_s > campaign.quiet_gate_wait_s:
            outcome = TIMED_OUT
        else:
            outcome = NOISY
        _append(campaign, {"unix_time": f"{time.time():.3f}", "label": label, "probe": k,
                           "lost_max_pct": "" if lost is None else f"{100 * max(lost):.2f}",
                           "lost_per_rank_pct": "" if lost is None else ";".join(f"{100 * x:.2f}" for x in lost),
                           "outcome": outcome, "waited_s": f"{waited:.1f}"})
        if outcome == NOISY:
            if k == 1:
                log(f"quiet gate, {label}: the CPUs lost {100 * max(lost):.1f} % of a "
                    f"{campaign.quiet_gate_probe} spin (> {campaign.quiet_gate_pct:g} %); waiting up to "
                    f"{campaign.quiet_gate_wait_s:g} s for the host to come quiet")
            sleep(campaign.quiet_gate_pause_s)
            continue
        if outcome == TIMED_OUT:
            log(f"quiet gate, {label}: still {100 * max(lost):.1f} % after {waited:.0f} s; running it anyway "
                f"(--quiet-gate-wait)")
        elif outcome == FAILED:
            log(f"quiet gate, {label}: the probe failed (see {_log_path(campaign, 'quiet-gate')}); running it")
        elif k > 1:
            log(f"quiet gate, {label}: quiet after {waited:.0f} s ({100 * max(lost):.1f} %)")
        return outcome


def load(campaign):
    path = campaign.path(GATE_CSV)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def summary(campaign):
    """What the gate did, for report.json (None when it never probed)."""
    rows = load(campaign)
    if not rows:
        return None
    gates = {}  # label -> its probes, in order (a resumed campaign gates a round again: the last counts)
    for r in rows:
        if r["probe"] == "1":
            gates[r["label"]] = []
        gates.setdefault(r["label"], []).append(r)
    last = [probes[-1] for probes in gates.values()]
    passed = [float(r["lost_max_pct"]) for r in rows if r["outcome"] == QUIET]
    noisy = [float(r["lost_max_pct"]) for r in rows if r["outcome"] in (NOISY, TIMED_OUT)]
    return {
        "threshold_pct": campaign.quiet_gate_pct,
        "probe": campaign.quiet_gate_probe,
        "gates": len(gates),
        "probes": len(rows),
        "gates_that_waited": sum(1 for probes in gates.values() if len(probes) > 1),
        "waited_s": sum(float(r["waited_s"]) for r in last),
        "timed_out": sum(1 for r in last if r["outcome"] == TIMED_OUT),
        "probe_failed": sum(1 for r in last if r["outcome"] == FAILED),
        "quiet_lost_median_pct": statistics.median(passed) if passed else None,
        "noisy_lost_median_pct": statistics.median(noisy) if noisy else None,
    }


def paragraph(s):
    """report.md's lines on the gate."""
    if not s:
        return []
    text = (f"Quiet gate (`--quiet-gate {s['threshold_pct']:g}`; docs/campaign.md, 'The quiet gate'): "
            f"{s['gates']} gates (the preparation and every round) probed the CPUs {s['probes']} times with a "
            f"{s['probe']} llamp-noise spin; {s['gates_that_waited']} waited for the host to come quiet, "
            f"{s['waited_s']:.0f} s in all")
    if s["timed_out"]:
        text += f", and {s['timed_out']} ran without it coming quiet (--quiet-gate-wait)"
    if s["probe_failed"]:
        text += f"; {s['probe_failed']} ran after a failed probe"
    text += "."
    if s["quiet_lost_median_pct"] is not None:
        text += f" The passing probes lost {s['quiet_lost_median_pct']:.1f} % of their spin (median)"
        if s["noisy_lost_median_pct"] is not None:
            text += f", the ones waited on {s['noisy_lost_median_pct']:.1f} %"
        text += "."
    return [text, ""]
