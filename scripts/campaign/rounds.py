"""Adaptive repetitions: more shuffled rounds while the measured means are too noisy to judge a
prediction by (--floor-target, local mode).

The noise floor (stats.noise_floor) is the RRMSE an exact prediction would still show from the
run-to-run spread of the measured means; it falls with sqrt(runs per ΔL). A campaign whose floor
is above the target after its planned --reps rounds runs one more round of every ΔL (the next
round of the same seeded shuffle, so the schedule is what --reps N+1 would have been) and looks
again, up to --max-reps rounds. So does a campaign with a ΔL of fewer than two ok runs: the floor
leaves such a ΔL out (its spread is unknown), so it would judge a mean of one run, or a ΔL without
any, as well measured (2026-11-27, a VM whose host moved the vCPUs apart every few seconds:
app_pingpong had one accepted run of 20 and 21 attempts at two of its six ΔL, 4 rounds, floor 0.37 %).
Every round, and why it ran, is in the log and the report.

--trace-floor-target does the same for the prediction: the mean of K traced runs' predictions
carries their spread, worth the traces' floor (stats.prediction_floor), which falls with sqrt(K).
While it is above the target the campaign also adds rounds, and each added round brings traced
runs (each after its untraced reference run) spread among its runs, as many as the floor asks for
over the rounds left, up to --max-trace-runs. Traced runs are never added after the last round:
traced runs launched back to back after the measured runs sampled another state of the machine
than the runs they predict (2026-11-27, app_persistent: the last eleven of 25 traced runs came
after the eight rounds, two of them, and their reference runs, took 1.6-2.1 s where every measured
run at ΔL = 0 took 0.86 s on average; the mean prediction's T(0) came out 16 % high).

For the same reason an added round brings the llamp-noise recordings that keep their density what
--noise-runs over the planned rounds was (noise.count_for_rounds), in the middle of its runs: the
prediction with noise replays the machine of the whole campaign, not of its first rounds.
"""
import math

from . import ensemble, noise, prepare, quiet_gate, runs, schedule, stats


def rounds_in(slots):
    return 1 + max(s.round for s in slots) if slots else 0


def current_floor(campaign, records):
    """The noise floor of the ok runs so far, or None when no ΔL has two of them."""
    rows = [r for r in stats.per_delta(records, campaign.deltas_ns) if "mean_ns" in r]
    if not rows or not any(r["runs_ok"] >= 2 for r in rows):
        return None
    return stats.noise_floor(rows)


def thin_deltas(campaign, records):
    """The ΔL values with fewer than two ok runs, whose mean's noise is unknown."""
    return [r["delta_ns"] for r in stats.per_delta(records, campaign.deltas_ns) if r["runs_ok"] < 2]


def wants_another_round(campaign, records):
    """(True, floor) while the target is set, unmet, and fewer than max_reps rounds are scheduled.
    Unmet includes: no ΔL with two ok runs yet (the floor is unknown), and any ΔL with fewer than
    two (the floor leaves it out)."""
    if campaign.floor_target_pct <= 0:
        return False, None
    floor = current_floor(campaign, records)
    if rounds_in(campaign.schedule) >= campaign.max_reps:
        return False, floor
    unmet = floor is None or 100 * floor > campaign.floor_target_pct or bool(thin_deltas(campaign, records))
    return unmet, floor


def _why(campaign, records, floor):
    shown = "unknown" if floor is None else f"{100 * floor:.2f} %"
    if floor is not None and 100 * floor <= campaign.floor_target_pct:
        thin = ", ".join(f"{d / 1000:g}" for d in thin_deltas(campaign, records))
        return f"noise floor {shown}, but fewer than two ok runs at ΔL = {thin} µs"
    return f"noise floor {shown} > target {campaign.floor_target_pct:g} %"


def add_round(campaign):
    """Appends the next shuffled round to the schedule, saves the campaign, returns the new slots."""
    n = rounds_in(campaign.schedule)
    extended = schedule.make_schedule(campaign.deltas_ns, n + 1, campaign.seed)
    new = extended[len(campaign.schedule):]
    campaign.schedule = campaign.schedule + new
    campaign.save()
    return new


def wants_another_trace(campaign, traces_floor):
    """True while --trace-floor-target is set, the traces' floor is above it (or unknown: fewer than
    two traced runs) and fewer than max_trace_runs traced runs exist."""
    if campaign.trace_floor_target_pct <= 0 or prepare.traced_count(campaign) >= campaign.max_trace_runs:
        return False
    return traces_floor is None or 100 * traces_floor > campaign.trace_floor_target_pct


def keeps_traces_in_step(campaign):
    """With --trace-floor-target, a round added after the traces' floor met it still brings one traced
    run, while fewer than max_trace_runs exist. The traced runs are the prediction's draws of the
    machine and the measured means average over the campaign's whole time, so the draws must span it
    too: the host drifts over minutes, and traced runs that stopped in the first rounds predict the
    machine of those rounds (table O, fhalo: 13 of 15 traced runs in the campaign's first half,
    measured / predicted 0.999 there and 1.037 in the second half)."""
    return campaign.trace_floor_target_pct > 0 and prepare.traced_count(campaign) < campaign.max_trace_runs


def count_to_reach(count, floor, target_pct):
    """How many rounds (or traced runs) in all would bring a floor measured over `count` of them down
    to target_pct: the floor falls with sqrt(count), so count (floor / target)^2. Said when a
    campaign stops above its target, so that its user knows what the target costs on that machine."""
    return math.ceil(count * (100 * floor / target_pct) ** 2)


def traces_for_next_round(campaign, traces_floor):
    """How many traced runs the next added round brings: the traced runs the floor asks for in all
    (it falls with sqrt(K): K (floor / target)^2), at most what max_trace_runs leaves, spread over
    the rounds left up to max_reps; at least one."""
    k = prepare.traced_count(campaign)
    left = campaign.max_trace_runs - k
    rounds_left = max(1, campaign.max_reps - rounds_in(campaign.schedule))
    if traces_floor is None:
        needed = max(1, 2 - k)
    else:
        needed = count_to_reach(k, traces_floor, campaign.trace_floor_target_pct) - k
    return max(1, math.ceil(min(left, needed) / rounds_left))


def _traces_floor_text(floor):
    return "unknown" if floor is None else f"{100 * floor:.2f} %"


def gate_round(campaign, slots, records, log):
    """The quiet gate (quiet_gate.py) before a round whose slots are not all done."""
    if quiet_gate.gates_rounds(campaign) and not all(runs.slot_done(records, s.slot) for s in slots):
        quiet_gate.wait_for_quiet(campaign, f"round {slots[0].round + 1}", log)


def gate_slot(campaign, slot, log):
    """With --quiet-gate-every launch, the quiet gate before a measured run not yet made."""
    if quiet_gate.gates_launches(campaign):
        pending = not runs.slot_done(runs.load_records(campaign), slot.slot)
        quiet_gate.gate_launch(campaign, f"round {slot.round + 1} slot {slot.slot}", log, pending)


def gate_traced_run(campaign, k, log):
    """With --quiet-gate-every launch, the quiet gate before traced run k not yet made."""
    quiet_gate.gate_launch(campaign, f"traced run {k}", log, not prepare.trace_done(campaign, k))


def gate_recording(campaign, k, log):
    """With --quiet-gate-every launch, the quiet gate before noise recording k not yet made."""
    quiet_gate.gate_launch(campaign, f"noise recording {k}", log, not noise.recording_done(campaign, k))


def run_until_floor(campaign, log):
    """Local mode: rounds after the planned ones while the noise floor is above --floor-target or the
    traces' floor above --trace-floor-target (up to max_reps), each with the traced runs the
    traces' floor asks for spread among its runs (up to max_trace_runs)."""
    while True:
        records = runs.load_records(campaign)
        for_noise, floor = wants_another_round(campaign, records)
        traces_floor = ensemble.traces_floor(campaign, records, log) if campaign.trace_floor_target_pct > 0 else None
        for_traces = wants_another_trace(campaign, traces_floor)
        room = rounds_in(campaign.schedule) < campaign.max_reps
        if not room or not (for_noise or for_traces):
            if campaign.floor_target_pct > 0 and floor is not None and 100 * floor > campaign.floor_target_pct:
                n = rounds_in(campaign.schedule)
                log(f"noise floor {100 * floor:.2f} % still above the target {campaign.floor_target_pct:g} % "
                    f"after {n} rounds (--max-reps); about {count_to_reach(n, floor, campaign.floor_target_pct)} "
                    f"rounds would reach it")
            if campaign.trace_floor_target_pct > 0 and (traces_floor is None
                                                         or 100 * traces_floor > campaign.trace_floor_target_pct):
                k = prepare.traced_count(campaign)
                reach = ("" if traces_floor is None else
                         f"; about {count_to_reach(k, traces_floor, campaign.trace_floor_target_pct)} traced runs "
                         f"would reach it")
                log(f"traces' floor {_traces_floor_text(traces_floor)} still above the target "
                    f"{campaign.trace_floor_target_pct:g} % after {k} traced runs and "
                    f"{rounds_in(campaign.schedule)} rounds (--max-trace-runs, --max-reps){reach}")
            prepare.rechoose_trace(campaign, log)
            return
        why = [_why(campaign, records, floor)] if for_noise else []
        first = prepare.traced_count(campaign) + 1
        if for_traces:
            traces, reason = traces_for_next_round(campaign, traces_floor), "trace-floor-target"
        else:
            traces, reason = (1, "every-round") if keeps_traces_in_step(campaign) else (0, "")
        new = add_round(campaign)
        if for_traces:
            why.append(f"traces' floor {_traces_floor_text(traces_floor)} > target "
                       f"{campaign.trace_floor_target_pct:g} %, traced runs {first}..{first + traces - 1} of at most "
                       f"{campaign.max_trace_runs} among its runs")
        elif traces:
            why.append(f"traced run {first} of at most {campaign.max_trace_runs} among its runs (one in every added "
                       f"round)")
        recordings = noise.missing(campaign)
        if recordings:
            which = (f"noise recording {recordings[0]}" if len(recordings) == 1
                     else f"noise recordings {recordings[0]}..{recordings[-1]}")
            why.append(f"{which} among its runs (--noise-runs {campaign.noise_runs} per {campaign.reps} rounds)")
        log(f"{'; '.join(why)}: round {new[0].round + 1} of at most {campaign.max_reps}")
        gate_round(campaign, new, runs.load_records(campaign), log)
        before = {}
        for i in range(traces):  # evenly among the round's runs, the first before its first run
            before.setdefault(new[min(len(new) - 1, i * len(new) // traces)].slot, []).append(first + i)
        noise_before = {}
        for i, k in enumerate(recordings):  # evenly among the round's runs, centred
            noise_before.setdefault(new[(2 * i + 1) * len(new) // (2 * len(recordings))].slot, []).append(k)
        for s in new:
            for k in before.get(s.slot, []):
                gate_traced_run(campaign, k, log)
                prepare.trace_once(campaign, k, log, reason)
            for k in noise_before.get(s.slot, []):
                gate_recording(campaign, k, log)
                noise.record_once(campaign, k, log)
            gate_slot(campaign, s, log)
            runs.run_slot(campaign, s, log)
