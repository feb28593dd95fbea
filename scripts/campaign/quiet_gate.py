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

The probe also times slices of llamp-noise's throughput kernel (--quiet-gate-throughput, default
200 ms) and compares each rank's median slice with the fastest median that rank had in any probe
of the campaign: a rank more than --quiet-gate-slowdown % slower (default 6) is a noisy spell too.
Why (stop 56, table AG17): app_halo2d's runs took 0.82-0.89 s in quiet minutes and 0.98-1.14 s in
spells of 5-20 launches, in which the noise recordings lost no more of their spin than in quiet
ones (5.9-6.8 %) but one rank's throughput slices took 11-19 % longer (78.8-85.4 against
69.9-72.0 us): a busy sibling on the host's core slows a vCPU without taking it away, which no
detour shows. Spells begin mid-round, so `--quiet-gate-every launch` gates every launch (runs,
traced runs with their reference runs, noise recordings, parameter launches among the runs)
instead of every round: launches are gated alike whatever their ΔL, so none is favoured.

A spell can also begin during a launch, after its gate passed. `--quiet-gate-after PCT` probes
once more after every measured run and every traced run (and its untraced reference run): a
launch after which a rank computes more than PCT % slower than its fastest probe, or loses more
than --quiet-gate % of the spin, ran into a spell. It is "noisy-host": recorded (runs.csv, the
report; quiet-gate.csv has the probe, `when` = after), never averaged in, and launched again once
the gate finds the host quiet, up to --noisy-retries more times, like a slow-cores launch. Why
(stop 56, table AG18, app_halo2d): 4 of 66 runs that passed their gate still took 12-36 % longer
than their ΔL's median, and each was followed by a probe with a rank 9.5-34 % slower; at 9 % the
probe after a run flagged those 4 and 5 of the other 62 (three 3.7-5.1 % above their ΔL's median,
two within 1 % of it). Traced runs are checked too: a prediction from traces taken in spells would
be biased against runs that exclude them. Noise recordings and parameter launches are not: a
recording says itself how noisy it was, and the parameters are medians over many round trips and
launches.
"""
import csv
import json
import os
import statistics
import time
from typing import NamedTuple, Optional

# A module import, not names: runs.py imports this module to check a run after it (check_after).
from . import environment, runs

GATE_CSV = "quiet-gate.csv"
FIELDS = ["unix_time", "label", "when", "probe", "lost_max_pct", "lost_per_rank_pct", "slice_median_per_rank_ns",
          "slowed_max_pct", "outcome", "waited_s"]
QUIET, NOISY, TIMED_OUT, FAILED = "quiet", "noisy", "timed-out", "probe-failed"
ROUND, LAUNCH = "round", "launch"  # --quiet-gate-every
BEFORE, AFTER = "before", "after"  # a gate before a launch, or the check after one (check_after)


class Probe(NamedTuple):
    lost: list                        # each rank's share of the spin lost to detours
    slice_ns: Optional[list] = None   # each rank's median throughput slice (None: not timed)


def enabled(campaign):
    return campaign.quiet_gate_pct > 0 and bool(campaign.tools.noise)


def gates_launches(campaign):
    """--quiet-gate-every launch: each launch among the rounds is gated, not each round."""
    return enabled(campaign) and campaign.quiet_gate_every == LAUNCH


def gates_rounds(campaign):
    return enabled(campaign) and campaign.quiet_gate_every != LAUNCH


def checks_after(campaign):
    """--quiet-gate-after: a probe after every measured and traced run (check_after)."""
    return enabled(campaign) and campaign.quiet_gate_after_pct > 0


def lost_fractions(recording):
    """Each rank's share of the spin spent in detours, from a llamp-noise recording (a dict)."""
    duration = recording["duration_ns"]  # detours are [start, length] pairs (docs/FORMATS.md)
    return [sum(length for _, length in rank.get("detours", [])) / duration if duration > 0 else 0.0
            for rank in recording["ranks"]]


def slice_medians(recording):
    """Each rank's median throughput slice (ns) from a llamp-noise recording, or None when the
    recording timed no slices."""
    medians = [rank.get("throughput", {}).get("median_ns") for rank in recording["ranks"]]
    return None if any(m is None for m in medians) else [float(m) for m in medians]


def probe(campaign):
    """One short llamp-noise launch like the application's: a Probe, or None when the probe failed
    (the gate then lets the round run: it must never stop a campaign)."""
    target = campaign.path("quiet-gate-probe.json.tmp")
    cmd = list(campaign.mpiexec) + ["-n", str(campaign.ranks), campaign.tools.noise, "-o", target,
                                    "--duration", campaign.quiet_gate_probe, "--throughput-duration",
                                    campaign.quiet_gate_throughput, "--resume-reps", "0"]
    status, _, _ = runs.run_command(cmd, environment.base_environment(campaign), runs.log_path(campaign, "quiet-gate"),
                                    campaign.timeout_s)
    try:
        if status != runs.OK:
            return None
        with open(target) as f:
            recording = json.load(f)
        return Probe(lost_fractions(recording), slice_medians(recording))
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None
    finally:
        if os.path.exists(target):
            os.remove(target)


def _append(campaign, row):
    path = campaign.path(GATE_CSV)
    if os.path.exists(path):
        with open(path, newline="") as f:
            header = next(csv.reader(f), [])
        if header != FIELDS:  # a campaign begun before the throughput or `when` columns: rewritten with them
            rows = load(campaign)
            with open(path, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=FIELDS, restval="")
                w.writeheader()
                w.writerows(rows)
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, restval="")
        if new:
            w.writeheader()
        w.writerow(row)


def fastest_slices(campaign):
    """Each rank's fastest median throughput slice over the campaign's probes so far (quiet-gate.csv),
    or None before any probe timed slices: what the gate compares a probe's slices with."""
    fastest = None
    for r in load(campaign):
        if not r.get("slice_median_per_rank_ns"):
            continue
        medians = [float(x) for x in r["slice_median_per_rank_ns"].split(";")]
        fastest = medians if fastest is None or len(fastest) != len(medians) else [
            min(a, b) for a, b in zip(fastest, medians)]
    return fastest


def slowed_pct(slice_ns, fastest):
    """How much slower (%) the slowest rank's median slice is than that rank's fastest so far; 0 for
    the first probe (it is its own reference) or a probe without slices."""
    if not slice_ns or not fastest or len(fastest) != len(slice_ns):
        return 0.0
    return max(0.0, max(100 * (s / f - 1) for s, f in zip(slice_ns, fastest) if f > 0))


def _noisy_because(campaign, result, slowed, slowdown_pct):
    """Why a probe says the host is in a noisy spell ("" when it does not); slowdown_pct is the
    slowdown allowed (--quiet-gate-slowdown before a launch, --quiet-gate-after after one)."""
    why = []
    if 100 * max(result.lost) > campaign.quiet_gate_pct:
        why.append(f"the CPUs lost {100 * max(result.lost):.1f} % of a {campaign.quiet_gate_probe} spin "
                   f"(> {campaign.quiet_gate_pct:g} %)")
    if slowdown_pct > 0 and slowed > slowdown_pct:
        why.append(f"a rank computed {slowed:.1f} % slower than its fastest probe (> {slowdown_pct:g} %)")
    return " and ".join(why)


def _probed(campaign, probe_fn, k, slowdown_pct):
    """Probe k: (its Probe or None, how much slower its slowest rank computed, why it is noisy)."""
    result = probe_fn(k)
    if result is None:
        return None, 0.0, ""
    slowed = slowed_pct(result.slice_ns, fastest_slices(campaign))
    return result, slowed, _noisy_because(campaign, result, slowed, slowdown_pct)


def _record(campaign, label, when, k, result, slowed, outcome, waited):
    """A probe's row of quiet-gate.csv."""
    row = {"unix_time": f"{time.time():.3f}", "label": label, "when": when, "probe": k, "outcome": outcome,
           "waited_s": f"{waited:.1f}"}
    if result is not None:
        row["lost_max_pct"] = f"{100 * max(result.lost):.2f}"
        row["lost_per_rank_pct"] = ";".join(f"{100 * x:.2f}" for x in result.lost)
    if result is not None and result.slice_ns:
        row["slice_median_per_rank_ns"] = ";".join(f"{x:.0f}" for x in result.slice_ns)
        row["slowed_max_pct"] = f"{slowed:.2f}"
    _append(campaign, row)


def wait_for_quiet(campaign, label, log=print, probe_fn=None, sleep=time.sleep, clock=time.monotonic):
    """Probes until no rank loses more than quiet_gate_pct % of the probe's spin and none computes
    more than quiet_gate_slowdown_pct % slower than its fastest probe so far, waiting
    quiet_gate_pause_s between probes, for at most quiet_gate_wait_s; returns the last outcome
    (QUIET, TIMED_OUT or FAILED). Off (returns None) without --quiet-gate or llamp-noise."""
    if not enabled(campaign):
        return None
    probe_fn = probe_fn or (lambda k: probe(campaign))
    start = clock()
    k = 0
    while True:
        k += 1
        result, slowed, why = _probed(campaign, probe_fn, k, campaign.quiet_gate_slowdown_pct)
        waited = clock() - start
        if result is None:
            outcome = FAILED
        elif not why:
            outcome = QUIET
        elif waited + campaign.quiet_gate_pause_s > campaign.quiet_gate_wait_s:
            outcome = TIMED_OUT
        else:
            outcome = NOISY
        _record(campaign, label, BEFORE, k, result, slowed, outcome, waited)
        if outcome == NOISY:
            if k == 1:
                log(f"quiet gate, {label}: {why}; waiting up to {campaign.quiet_gate_wait_s:g} s for the host "
                    f"to come quiet")
            sleep(campaign.quiet_gate_pause_s)
            continue
        if outcome == TIMED_OUT:
            log(f"quiet gate, {label}: still noisy after {waited:.0f} s ({why}); running it anyway "
                f"(--quiet-gate-wait)")
        elif outcome == FAILED:
            log(f"quiet gate, {label}: the probe failed (see {runs.log_path(campaign, 'quiet-gate')}); running it")
        elif k > 1:
            log(f"quiet gate, {label}: quiet after {waited:.0f} s ({100 * max(result.lost):.1f} % lost"
                + (f", {slowed:.1f} % slower" if result.slice_ns else "") + ")")
        return outcome


def check_after(campaign, label, probe_fn=None):
    """With --quiet-gate-after, one probe right after a launch: why the launch ran into a noisy spell
    ("" when the probe says quiet, failed, or the check is off). A probe that fails never rejects a
    launch."""
    if not checks_after(campaign):
        return ""
    probe_fn = probe_fn or (lambda k: probe(campaign))
    result, slowed, why = _probed(campaign, probe_fn, 1, campaign.quiet_gate_after_pct)
    outcome = FAILED if result is None else NOISY if why else QUIET
    _record(campaign, label, AFTER, 1, result, slowed, outcome, 0.0)
    return why


def load(campaign):
    path = campaign.path(GATE_CSV)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def summary(campaign):
    """What the gate did, for report.json (None when it never probed)."""
    every_row = load(campaign)
    if not every_row:
        return None
    rows = [r for r in every_row if r.get("when") != AFTER]  # the gates; older rows have no `when`
    after = [r for r in every_row if r.get("when") == AFTER]
    after_slowed = [float(r["slowed_max_pct"]) for r in after if r["outcome"] == NOISY and r.get("slowed_max_pct")]
    gates = {}  # label -> its probes, in order (a resumed campaign gates a round again: the last counts)
    for r in rows:
        if r["probe"] == "1":
            gates[r["label"]] = []
        gates.setdefault(r["label"], []).append(r)
    last = [probes[-1] for probes in gates.values()]
    passed = [float(r["lost_max_pct"]) for r in rows if r["outcome"] == QUIET]
    waited_on = [r for r in rows if r["outcome"] in (NOISY, TIMED_OUT)]
    noisy = [float(r["lost_max_pct"]) for r in waited_on]
    slowed = [float(r["slowed_max_pct"]) for r in waited_on if r.get("slowed_max_pct")]
    return {
        "threshold_pct": campaign.quiet_gate_pct,
        "slowdown_pct": campaign.quiet_gate_slowdown_pct,
        "probe": campaign.quiet_gate_probe,
        "throughput": campaign.quiet_gate_throughput,
        "every": campaign.quiet_gate_every,
        "gates": len(gates),
        "probes": len(rows),
        "gates_that_waited": sum(1 for probes in gates.values() if len(probes) > 1),
        "waited_s": sum(float(r["waited_s"]) for r in last),
        "timed_out": sum(1 for r in last if r["outcome"] == TIMED_OUT),
        "probe_failed": sum(1 for r in last if r["outcome"] == FAILED),
        "quiet_lost_median_pct": statistics.median(passed) if passed else None,
        "noisy_lost_median_pct": statistics.median(noisy) if noisy else None,
        "noisy_by_detours": sum(1 for x in noisy if x > campaign.quiet_gate_pct),
        "noisy_by_slowdown": sum(1 for x in slowed
                                 if campaign.quiet_gate_slowdown_pct > 0 and x > campaign.quiet_gate_slowdown_pct),
        "noisy_slowed_median_pct": statistics.median(slowed) if slowed else None,
        "fastest_slice_per_rank_ns": fastest_slices(campaign),
        "after_slowdown_pct": campaign.quiet_gate_after_pct,
        "after_checks": len(after),
        "after_noisy": sum(1 for r in after if r["outcome"] == NOISY),
        "after_probe_failed": sum(1 for r in after if r["outcome"] == FAILED),
        "after_noisy_slowed_median_pct": statistics.median(after_slowed) if after_slowed else None,
    }


def paragraph(s):
    """report.md's lines on the gate."""
    if not s:
        return []
    what = ("the preparation and every launch among the rounds" if s["every"] == LAUNCH
            else "the preparation and every round")
    text = (f"Quiet gate (`--quiet-gate {s['threshold_pct']:g}`; docs/campaign.md, 'The quiet gate'): "
            f"{s['gates']} gates ({what}) probed the CPUs {s['probes']} times with a "
            f"{s['probe']} llamp-noise spin")
    if s["fastest_slice_per_rank_ns"]:
        text += (f" and {s['throughput']} of throughput slices (a rank more than {s['slowdown_pct']:g} % slower than "
                 f"its fastest probe, " + ", ".join(f"{x / 1000:.1f} µs" for x in s["fastest_slice_per_rank_ns"])
                 + " per slice, is noisy too)")
    text += (f"; {s['gates_that_waited']} waited for the host to come quiet, "
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
    if s["noisy_lost_median_pct"] is not None:
        text += (f" Of the probes waited on, {s['noisy_by_detours']} lost too much of their spin and "
                 f"{s['noisy_by_slowdown']} computed too slowly")
        if s["noisy_slowed_median_pct"] is not None:
            text += f" (the waited-on probes' slowest rank: {s['noisy_slowed_median_pct']:.1f} % slower, median)"
        text += "."
    if s["after_checks"]:
        text += (f" After each measured and traced run (`--quiet-gate-after {s['after_slowdown_pct']:g}`) one more "
                 f"probe: {s['after_noisy']} of {s['after_checks']} said the launch ran into a noisy spell, which "
                 f"made it noisy-host, never averaged in and launched again once the host was quiet")
        if s["after_noisy_slowed_median_pct"] is not None:
            text += f" (their slowest rank: {s['after_noisy_slowed_median_pct']:.1f} % slower, median)"
        if s["after_probe_failed"]:
            text += f"; {s['after_probe_failed']} probe(s) after a launch failed, and their launches were kept"
        text += "."
    return [text, ""]


def gate_relaunch(campaign, label, log):
    """The gate before a launch is made again because the probe after it said noisy (check_after),
    whatever --quiet-gate-every says: the host was noisy a moment ago. Returns the gate's outcome
    (None when the gate is off)."""
    if enabled(campaign):
        return wait_for_quiet(campaign, f"{label} again", log)
    return None


def gate_launch(campaign, label, log, pending=True):
    """With --quiet-gate-every launch: the gate before one launch among the rounds (a measured run, a
    traced run with its reference run, a noise recording, a parameter launch); pending False (a
    resumed campaign already made it) gates nothing."""
    if pending and gates_launches(campaign):
        wait_for_quiet(campaign, label, log)
