"""How much each traced run weighs in the mean prediction (docs/campaign.md, "Prediction from every
traced run", "Weights by round").

Each traced run is one draw of the host's speed at the time it ran, and the measured means average
the host over the times the measured runs ran. On a shared VM the host changes in spells of
minutes (table AG6, halo2d_rndv: runs of 2.4-2.7 s for 400 s, then 1.9-2.1 s for 200 s), so the
two samples must cover the same times in the same proportions. --trace-floor-target adds as many
traced runs to a round as the traces' floor asks for at that moment (rounds.traces_for_next_round):
1 per round in some stretches of a campaign, 4 in others. With equal weights the prediction leans
towards the stretches with more traced runs: in AG6's halo2d_rndv, 24 of 60 traced runs fell in
the fast spell's 6 of 24 rounds, and the prediction came out 5 % below the measured means.

Weights by round stratify the mean like the measured means: every round counts as many times as it
has ok measured runs, shared equally by the traced runs launched in it (a traced run belongs to
the round of the first measured run launched after it). A round without traced runs lends its
count to the nearest round with some (split between two at the same distance). Only the
measured runs' launch times and rounds are used, never their runtimes.
"""
import os

ROUNDS = "rounds"
EQUAL = "equal"
CHOICES = (ROUNDS, EQUAL)


def traced_run_times(campaign, ks, trace_dir_of):
    """{k: when traced run k finished}: its trace-k.done mark is written right after it (and anew
    when it is launched again), as ensemble._made_from relies on too."""
    return {k: os.path.getmtime(trace_dir_of(campaign, k) + ".done") for k in ks}


def round_of_each(ok_runs, times):
    """{k: the round traced run k belongs to}: that of the first ok measured run launched after it,
    the last run's round for traced runs after every measured run."""
    ordered = sorted(ok_runs, key=lambda r: r["started_unix"])
    rounds = {}
    for k, t in times.items():
        after = next((r for r in ordered if r["started_unix"] >= t), ordered[-1])
        rounds[k] = after["round"]
    return rounds


def by_round(records, times):
    """{k: weight} for the traced runs in `times` ({k: finish time}), summing to the number of ok
    measured runs in `records`; equal weights (1 each) when there is no ok measured run yet."""
    ok_runs = [r for r in records if r.get("status") == "ok" and r.get("started_unix") is not None]
    if not ok_runs or not times:
        return {k: 1.0 for k in times}
    of = round_of_each(ok_runs, times)
    with_traces = sorted(set(of.values()))
    runs_in = {}
    for r in ok_runs:
        runs_in[r["round"]] = runs_in.get(r["round"], 0) + 1
    weights = {k: 0.0 for k in times}
    for q, count in runs_in.items():
        distance = min(abs(q - s) for s in with_traces)
        lenders = [k for k in times if abs(of[k] - q) == distance]
        for k in lenders:
            weights[k] += count / len(lenders)
    return weights


def weights_for(mode, records, times):
    """The weights of `mode` (ROUNDS or EQUAL), in the order of sorted(times)."""
    if mode == EQUAL:
        return [1.0 for _ in sorted(times)]
    if mode != ROUNDS:
        raise ValueError(f"trace weights '{mode}': expected one of {', '.join(CHOICES)}")
    weights = by_round(records, times)
    return [weights[k] for k in sorted(times)]


def effective_count(weights):
    """(Σw)² / Σw²: how many equally weighted traced runs would give the mean the same spread."""
    total = sum(weights)
    squares = sum(w * w for w in weights)
    return total * total / squares if squares > 0 else 0.0
