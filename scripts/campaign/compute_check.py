"""The noisy-host check taken inside the run: the ranks' computation outside MPI.

The runtime timer writes, per rank, how long the rank spent outside MPI's communication calls
between MPI_Init and MPI_Finalize (runtime_records.read_compute). That is the application's own
work, which the injected latency does not change: 60 halo2d runs alternating ΔL = 0 and 100 µs
(stop 58) computed the same 821-843 ms on rank 0 when the host was quiet. When a rank computes more
slowly, the host took CPU from it during the run: a busy SMT sibling or a vCPU stolen for a moment,
spells short enough to fall between the quiet gate's probes before and after a launch
(quiet_gate.check_after), which table AG19 showed (5 accepted runs 5-16 % slow with quiet probes on
both sides). In 60 runs of halo2d on this host the slowest rank's computation and the runtime
correlated at 0.99 (docs/campaign.md, "Computation outside MPI").

With --noisy-compute PCT, a launch whose rank computed more than PCT % longer than the same rank's
quick computation among the campaign's launches of its kind (reference(): the 10th percentile) is
"noisy-host": recorded, never averaged in, launched again (runs.run_slot, prepare._probed_launch).
The kinds are the untraced launches at each ΔL (the measured runs at that ΔL; at ΔL = 0 also the
reference runs) and the traced runs: the tracer's own work touches the caches between the
application's calls, so a traced rank computes a little longer. Per ΔL, because an app that waits
by working can compute more the longer its messages take: app_completions' and app_master_worker's
polling loops work between polls (4 ranks on the lent Xeon, stop 62: 265 ms at ΔL = 0, 1.09 s at
50 us, 1.47 s at 75 us), and against the ΔL = 0 launches every run at 50 us was noisy-host. The
runtime timer now keeps a polling loop's waits out of the computation (poll_wait_ns), yet what is
left still grew 20-30 % from ΔL = 0 to 100 us at 2 ranks (31-39 ms against 42-47 ms over a runtime
of 0.25 s against 3.95 s: the host's and the injector's own work over a 16 times longer run).
Noise only ever adds time, so the quick launches show the quiet host's speed; the 10th percentile
rather than the fastest, because a lucky launch runs a few % faster still (table AG20: rank 1
computed 806-844 ms in quiet launches and once 781 ms, against which the next quiet ones looked
3-6 % slow). The first launches of a kind are compared with each other only, and rejudge() takes
a second look at the campaign's end.

The check rests on the quiet host computing the same from launch to launch. Where the ordinary
launch computes more than PCT % longer than the quick ones, it cannot tell a noisy host from the
machine's usual, and rejects nearly everything. On the lent 16-vCPU Xeon VM (stop 59, 4 ranks) the
ranks computed a median 20-50 % longer than in the quickest tenth of the launches, at every ΔL:
227 of 228 gradavg attempts were noisy-host, and a slot was launched 16 times. On the 2-vCPU VM
halo3d, whose 2 MiB per rank live in the L3 cache the host's other guests share, computed 6-9 %
longer in its ordinary launches than in its quickest tenth (stop 60, table AG25: 40 of 53 attempts
noisy-host). So the check has stages (stage()):

- QUICK: against the 10th percentile, as above.
- ORDINARY: once WIDEN_AFTER measured attempts were judged and more than WIDEN_SHARE of them were
  noisy-host by their computation, the check compares with the ordinary launch instead, the
  median of the kind's kept and noisy-host launches (WIDENED_FILE, logged and reported). A spell still stands out
  from that. The slots the quick stage left without a run get new attempts.
- OFF: where even that rejects more than WIDEN_SHARE of WIDEN_AFTER attempts judged since, the
  launches cannot tell a spell at all (the host's speed drifts), and the check switches off for
  the rest of the campaign (OFF_FILE).

On the 2-vCPU VM, where the premise holds for the other apps, spells made up to 59 % of the
first attempts noisy-host (table AG20), 33 % over whole campaigns (AG21).
"""
import glob
import json
import os
import statistics

from . import rejudge as rejudge_mod
from . import units
from .runtime_records import RecordError, read_compute

UNTRACED, TRACED = "untraced", "traced"
QUICK, ORDINARY, OFF = "quick", "ordinary", "off"
WIDEN_AFTER, WIDEN_SHARE = 20, 0.75
WIDENED_FILE, OFF_FILE = "compute-check-widened.json", "compute-check-off.json"


def enabled(campaign):
    return campaign.noisy_compute_pct > 0


def _record(folder):
    """A measured attempt's record.json; {} for the traced and reference runs (they have none)."""
    try:
        with open(os.path.join(folder, "record.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _status(folder):
    return _record(folder).get("status")


def _delta_ns(folder):
    """The ΔL a kept launch ran at: 0 for the traced and reference runs."""
    return float(_record(folder).get("delta_ns", 0.0))


def _folders(campaign, kind, statuses=("ok",)):
    """The launches of a kind the campaign kept: the traced runs and reference runs (a launch that
    was not kept was replaced in its folder), and the measured attempts whose status is in
    `statuses`. Not the slow-cores ones: with the ranks' vCPUs on two physical cores instead of
    one, a rank computes faster, and every run on one core would look slowed."""
    if kind == TRACED:
        return glob.glob(campaign.path("trace-*-runtime"))
    return ([d for d in glob.glob(campaign.path("runs", "slot-*-a*")) if _status(d) in statuses]
            + glob.glob(campaign.path("trace-*-reference")))


def _computation(folder):
    """read_compute, or {} when the folder holds no readable records (a failed launch)."""
    try:
        return read_compute(folder)
    except (RecordError, OSError):
        return {}


def reference(campaign, kind, current=None, delta_ns=0.0):
    """{rank: ns}: each rank's computation in the launches the stage compares with, over the
    campaign's launches of this kind (the untraced ones at delta_ns) and the current one (folders
    whose records lack it, from an older timer or a failed launch, are skipped). In the QUICK stage
    the 10th percentile (the shortest while there are fewer than ten) of the kept launches. Once
    ORDINARY the median (the upper one of an even count) of the kept and the noisy-host launches:
    the quick stage rejected the machine's ordinary launches, and a median of the kept ones only
    would stay among the quick."""
    now = stage(campaign)
    statuses = ("ok", "noisy-host") if now == ORDINARY else ("ok",)
    per_rank = {}
    launches = {f for f in _folders(campaign, kind, statuses) if kind == TRACED or _delta_ns(f) == delta_ns}
    for folder in launches | ({current} if current else set()):
        for rank, ns in _computation(folder).items():
            if ns > 0:
                per_rank.setdefault(rank, []).append(ns)
    q = 0.5 if now == ORDINARY else 0.1
    return {rank: sorted(values)[int(len(values) * q)] for rank, values in per_rank.items()}


def check(campaign, folder, kind=UNTRACED, log=print, delta_ns=0.0):
    """(why, slowed_pct) for the launch whose runtime records are in folder (an untraced one ran at
    delta_ns; its record is not written yet): why the host slowed it ("" when it computed within
    --noisy-compute % of the reference, or the check is off or switched off), and its slowest
    rank's computation against that rank's reference, in % (None when nothing was compared). A
    launch the QUICK stage rejects may move the check on (_next_stage_if_premise_fails), and is
    judged again in the stage it moved to."""
    if not enabled(campaign):
        return "", None
    computation = _computation(folder)
    why, slowed = _judge(campaign, computation, reference(campaign, kind, folder, delta_ns), kind, delta_ns)
    if why and _next_stage_if_premise_fails(campaign, log):
        if stage(campaign) == OFF:
            return "", slowed
        why, slowed = _judge(campaign, computation, reference(campaign, kind, folder, delta_ns), kind, delta_ns)
    return why, slowed


def _measured_tally(campaign, which):
    """(judged, noisy by their computation, the judged ones' slowed %) over the measured attempts
    judged in stage `which` (records of an older campaign have no stage: QUICK)."""
    judged, noisy, slowed = 0, 0, []
    for path in glob.glob(campaign.path("runs", "slot-*-a*", "record.json")):
        try:
            with open(path) as f:
                run = json.load(f)
        except (OSError, ValueError):
            continue
        if run.get("compute_slowed_pct") is None or run.get("compute_stage", QUICK) != which:
            continue
        judged += 1
        slowed.append(run["compute_slowed_pct"])
        noisy += noisy_by_computation(run)
    return judged, noisy, slowed


def noisy_by_computation(run):
    """Whether a measured attempt's record says the check rejected it."""
    return run.get("status") == "noisy-host" and run.get("reason", "").startswith("in the run")


def _read(campaign, name):
    try:
        with open(campaign.path(name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def widened(campaign):
    """What moved the check to the ORDINARY stage ({judged, noisy_host, slowed_median_pct}), or None."""
    return _read(campaign, WIDENED_FILE)


def switched_off(campaign):
    """What switched the check off in this campaign ({judged, noisy_host, slowed_median_pct}: those
    judged since it widened), or None."""
    return _read(campaign, OFF_FILE)


def stage(campaign):
    """QUICK, ORDINARY or OFF (the module's docstring)."""
    return OFF if switched_off(campaign) else ORDINARY if widened(campaign) else QUICK


def counts_against_retries(campaign, run):
    """Whether a slot's noisy-host attempt counts towards --noisy-retries (runs.run_slot): not once
    the check is off, nor when the computation was judged in a stage the check has since left
    (records of an older campaign have no stage: QUICK)."""
    if run.get("status") != "noisy-host":
        return False
    now = stage(campaign)
    if now == OFF:
        return False
    return not noisy_by_computation(run) or run.get("compute_stage", QUICK) == now


def _next_stage_if_premise_fails(campaign, log):
    """Whether the check has left the stage in which the current launch was judged: moves it on when
    more than WIDEN_SHARE of at least WIDEN_AFTER measured attempts judged in the current stage
    computed too slowly (the module's docstring). Already OFF: True."""
    now = stage(campaign)
    if now == OFF:
        return True
    judged, noisy, slowed = _measured_tally(campaign, now)
    if judged < WIDEN_AFTER or noisy <= WIDEN_SHARE * judged:
        return False
    moved = {"judged": judged, "noisy_host": noisy, "slowed_median_pct": statistics.median(slowed)}
    name = WIDENED_FILE if now == QUICK else OFF_FILE
    with open(campaign.path(name + ".tmp"), "w") as f:
        json.dump(moved, f, indent=2)
    os.replace(campaign.path(name + ".tmp"), campaign.path(name))
    said = (f"{noisy} of {judged} measured attempts computed more than {campaign.noisy_compute_pct:g} % longer than "
            f"the {now} launches (median {moved['slowed_median_pct']:.1f} %)")
    if now == QUICK:
        log(f"--noisy-compute: widened: {said}: on this machine the ordinary launch is that slow, so from now on a "
            f"launch is compared with the ordinary launches (the median), and the slots left without a run are "
            f"launched again")
    else:
        log(f"--noisy-compute: switched off: {said}, also since it widened: the host's speed drifts, so a launch's "
            f"computation cannot tell a noisy host; the launches from now on are kept")
    return True


def _judge(campaign, mine, best, kind, delta_ns=0.0):
    slowed = {r: 100.0 * (ns / best[r] - 1.0) for r, ns in mine.items() if best.get(r, 0) > 0}
    if not slowed:
        return "", None
    rank = max(slowed, key=slowed.get)
    worst = slowed[rank]
    if worst <= campaign.noisy_compute_pct:
        return "", worst
    at = f" at ΔL {units.fmt_us(delta_ns)}" if kind == UNTRACED and delta_ns > 0 else ""
    return (f"rank {rank} computed {worst:.1f} % longer outside MPI than in the {stage(campaign)} {kind} launches{at} "
            f"({mine[rank] / 1e6:.1f} ms against {best[rank] / 1e6:.1f} ms; limit {campaign.noisy_compute_pct:g} %)",
            worst)


def summary(campaign, records):
    """For report.json: the limit, how many measured attempts the check rejected, and how slowed the
    accepted runs' slowest ranks were (against the reference when each was judged); None when off."""
    if not enabled(campaign):
        return None
    accepted = sorted(r["compute_slowed_pct"] for r in records
                      if r["status"] == "ok" and r.get("compute_slowed_pct") is not None)
    return {
        "limit_pct": campaign.noisy_compute_pct,
        "noisy_host": sum(noisy_by_computation(r) for r in records),
        "judged": len(accepted),
        "accepted_slowed_median_pct": statistics.median(accepted) if accepted else None,
        "accepted_slowed_max_pct": accepted[-1] if accepted else None,
        "widened": widened(campaign),
        "switched_off": switched_off(campaign),
    }


def paragraph(s):
    """report.md's lines on the check."""
    if not s:
        return []
    text = (f"Computation outside MPI (`--noisy-compute {s['limit_pct']:g}`; docs/campaign.md, 'Computation outside "
            f"MPI'): {s['noisy_host']} measured attempt(s) had a rank compute more than {s['limit_pct']:g} % longer "
            f"than in the campaign's quick launches (10th percentile)"
            + (", or once it widened its ordinary launches (the median)," if s.get("widened") else "")
            + " and were launched again.")
    if s["judged"]:
        text += (f" The {s['judged']} accepted runs' slowest ranks computed {s['accepted_slowed_median_pct']:.1f} % "
                 f"(median) and at most {s['accepted_slowed_max_pct']:.1f} % longer than that.")
    wide = s.get("widened")
    if wide:
        text += (f" **The check widened** after {wide['noisy_host']} of {wide['judged']} measured attempts had been "
                 f"noisy-host by their computation (median {wide['slowed_median_pct']:.1f} % longer than the quick "
                 f"launches): on this machine the ordinary launch computes that much longer than the quick ones, so "
                 f"from then on a launch was compared with the median of the kept and noisy-host launches, from "
                 f"which a spell still stands out.")
    off = s.get("switched_off")
    if off:
        text += (f" **The check switched itself off** after {off['noisy_host']} of {off['judged']} measured attempts "
                 f"since it widened had been noisy-host by their computation (median {off['slowed_median_pct']:.1f} % "
                 f"longer than the ordinary launches): the host's speed drifted, so a launch's computation could not "
                 f"tell a noisy host. The runs after it were kept as they came, and their spread is in the noise floor.")
    return [text, ""]


def slowed_traced_runs(campaign):
    """{k: why} of the traced runs whose computation the check judges slowed by the host against the
    campaign's traced launches now (their reference over every traced run so far, as rejudge() takes
    it at the end): those prepare._probed_launch kept after every relaunch was noisy too, and any that
    passed against a slow start. Nothing when the check is off or switched off."""
    if not enabled(campaign) or switched_off(campaign):
        return {}
    best = reference(campaign, TRACED)
    slowed = {}
    for folder in _folders(campaign, TRACED):
        why = _judge(campaign, _computation(folder), best, TRACED)[0]
        if why:
            slowed[int(os.path.basename(folder).split("-")[1])] = why
    return slowed


def rejudge(campaign, log=print):
    """Once the campaign's launches are done: judges every kept launch again against each kind's
    reference over the whole campaign. A campaign that begins in a noisy spell has only slow launches
    to compare its first ones with (table AG20: the first reference run computed 1159 ms on rank 1,
    which later runs did in 814 ms, and a run 35 % slow passed against it). A measured run that
    fails now becomes noisy-host (its slot is launched again, run_local); a traced or reference run
    that fails is removed with its pair, so prepare launches both again. Returns how many were
    taken back."""
    if not enabled(campaign) or switched_off(campaign):
        return 0
    taken_back = []
    for kind in (UNTRACED, TRACED):
        references = {}  # by ΔL
        for folder in sorted(_folders(campaign, kind)):
            delta_ns = 0.0 if kind == TRACED else _delta_ns(folder)
            if delta_ns not in references:
                references[delta_ns] = reference(campaign, kind, delta_ns=delta_ns)
            why = _judge(campaign, _computation(folder), references[delta_ns], kind, delta_ns)[0]
            if not why:
                continue
            name = os.path.basename(folder)
            record_path = os.path.join(folder, "record.json")
            if os.path.exists(record_path):  # a measured attempt
                with open(record_path) as f:
                    run = json.load(f)
                run.update(status="noisy-host", reason=f"in the run {why} (judged again at the campaign's end)",
                           compute_stage=stage(campaign))
                with open(record_path + ".tmp", "w") as f:
                    json.dump(run, f, indent=2)
                os.replace(record_path + ".tmp", record_path)
            else:  # trace-K-runtime or trace-K-reference: the pair is launched again
                name = name.replace("-runtime", "")
                rejudge_mod.invalidate_launch(campaign, name.replace("-reference", ""))
            taken_back.append(name)
    if taken_back:
        log(f"--noisy-compute: {len(taken_back)} accepted launch(es) computed more than "
            f"{campaign.noisy_compute_pct:g} % longer than the campaign's {stage(campaign)} launches and are launched again "
            f"({', '.join(taken_back)})")
    return len(taken_back)
