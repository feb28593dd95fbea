"""What the injector says it delivered: the LLAMP_INJECT_STATS line of every rank of an injected run.

With LLAMP_INJECT_STATS=1 the patched MPICH prints, at MPI_Finalize (after the runtime timer's end),
one line per rank to stderr (docs/injector.md):
    llamp-inject: rank=R delta_l_ns=… delayed=N lateness_median_ns=… lateness_p99_ns=… …
The campaign sets it in every run at ΔL > 0 and keeps the parsed lines in the run's record.json, so
the report can say how late the injector released the messages it held, next to what the runs
measured and what the prediction's noise replay adds (report.py). A run at ΔL > 0 whose ranks print
no such line did not inject ΔL (the unpatched MPICH was loaded, or the injector was off): its
runtime does not measure ΔL, and runs.py records it as failed.
"""
import re
import statistics

from . import stats

# A line's fields end at its newline or where another rank's line begins inside it: Hydra forwards
# each rank's output as it comes, and a line written in two pieces can take another rank's whole
# line between them (stop 59, 4 ranks on glibc 2.39: rank 3's line inside rank 0's, and rank 3's
# counts were read as rank 0's).
LINE = re.compile(r"llamp-inject: rank=(\d+) ((?:(?!llamp-inject: )[^\n])*)")
# Fields of the line that are counts or nanoseconds; "by_type", "turns" and "watch" stay text.
INTEGER_FIELDS = ("delta_l_ns", "delayed", "lateness_median_ns", "lateness_p99_ns", "lateness_max_ns",
                  "lateness_mean_ns", "lateness_total_ns", "lateness_count", "dropped_at_finalize", "stamped",
                  "due_when_seen", "due_outside_mpi")


def parse(text):
    """{rank: {field: value}} of every llamp-inject line in a run's output (a rank's last line wins).
    Lines cut by another rank's output are skipped field by field: a field that is not a whole
    integer is left out."""
    ranks = {}
    for match in LINE.finditer(text):
        fields = {}
        for token in match.group(2).split():
            key, sep, value = token.partition("=")
            if not sep:
                continue
            if key in INTEGER_FIELDS:
                if re.fullmatch(r"-?\d+", value):
                    fields[key] = int(value)
            elif key in ("by_type", "turns", "watch"):
                fields[key] = value
        ranks[int(match.group(1))] = fields
    return ranks


def missing_ranks(parsed, ranks):
    """Ranks 0..ranks-1 without a line carrying the counts the report needs."""
    return [r for r in range(ranks) if not all(k in parsed.get(r, {}) for k in ("delayed", "lateness_total_ns"))]


def for_record(parsed):
    """The record.json form: a list of per-rank dicts, rank order."""
    return [dict(fields, rank=rank) for rank, fields in sorted(parsed.items())]


def per_delta(records, rows):
    """One summary per ΔL > 0 over its ok runs that carry the injector's lines, or [] when none do.

    held_per_rank: messages (and rendezvous get completions) held, mean over ranks and runs;
    lateness_median_ns / lateness_p99_ns: the median over ranks and runs of each rank's own;
    lateness_max_ns: the largest any rank saw; lateness_mean_ns: all late time over all releases that
    were timed (those not already due when first seen, and released in a pass of the same MPI call
    as the pass before, i.e. not after the application computed); late_per_rank_ns: a rank's late time in one
    run, mean over ranks and runs: an upper bound of what late releases add to a run (only releases
    on the critical path add their lateness); due_when_seen: the share of stamped messages already
    due when their receiver first polled them (ΔL hidden behind its computation).
    rows are stats.per_delta's (with the measured means), for the share of the measured increase."""
    base = next((r for r in rows if r["delta_ns"] == 0 and "mean_ns" in r), None)
    out = []
    for row in rows:
        if row["delta_ns"] <= 0:
            continue
        lines = [rank for r in records if r["delta_ns"] == row["delta_ns"] and r["status"] == "ok"
                 for rank in (r.get("inject_stats") or [])]
        runs = sum(1 for r in records if r["delta_ns"] == row["delta_ns"] and r["status"] == "ok" and r.get("inject_stats"))
        lines = [x for x in lines if "delayed" in x and "lateness_total_ns" in x]
        if not lines:
            continue
        # the releases the lateness was taken of (lines before lateness_count: those not due when seen)
        timed = sum(x["lateness_count"] if "lateness_count" in x else max(0, x["delayed"] - x.get("due_when_seen", 0))
                    for x in lines)
        stamped = sum(x.get("stamped", 0) for x in lines)
        summary = {
            "delta_ns": row["delta_ns"], "runs": runs, "rank_lines": len(lines),
            "held_per_rank": stats.mean([x["delayed"] for x in lines]),
            "lateness_median_ns": statistics.median([x.get("lateness_median_ns", 0) for x in lines]),
            "lateness_p99_ns": statistics.median([x.get("lateness_p99_ns", 0) for x in lines]),
            "lateness_max_ns": max(x.get("lateness_max_ns", 0) for x in lines),
            "lateness_mean_ns": sum(x["lateness_total_ns"] for x in lines) / timed if timed else 0.0,
            "late_per_rank_ns": stats.mean([x["lateness_total_ns"] for x in lines]),
            "due_when_seen": sum(x.get("due_when_seen", 0) for x in lines) / stamped if stamped else None,
            "dropped_at_finalize": sum(x.get("dropped_at_finalize", 0) for x in lines),
            # released in the first pass of an MPI call, so perhaps due while the application
            # computed: not timed (None: lines from before the injector told them apart)
            "due_outside_mpi": (sum(x["due_outside_mpi"] for x in lines) / sum(x["delayed"] for x in lines)
                                if all("due_outside_mpi" in x for x in lines) and sum(x["delayed"] for x in lines)
                                else None),
            "turns": sorted({x["turns"] for x in lines if "turns" in x}),
            "watch": sorted({x["watch"] for x in lines if "watch" in x}),
        }
        if base is not None and "mean_ns" in row:
            summary["measured_increase_ns"] = row["mean_ns"] - base["mean_ns"]
        if "predicted_ns" in row and "predicted_noise_ns" in row:
            summary["replay_adds_ns"] = row["predicted_noise_ns"] - row["predicted_ns"]
        if "predicted_ns" in row and "mean_ns" in row:
            summary["measured_minus_loggps_ns"] = row["mean_ns"] - row["predicted_ns"]
        out.append(summary)
    return out


def late_spread(records):
    """How the runs' spread at one ΔL follows their late releases: a least-squares line of each ok
    run's runtime over its late time (the sum of its ranks' lateness_total_ns), fitted to the
    deviations from each ΔL's own means, so that ΔL's effect on both is out of it.

    A slope near 1 says a run's late releases add their own lateness to it (each one on the critical
    path); a slope well above 1 says they mark the runs in which the host took the CPUs
    away more often, while they computed too: the spread between runs is then the host's, which a
    prediction can carry only on average. None where no two runs share a ΔL > 0 or their late times
    are all equal at every ΔL.

    runs, deltas: the ok runs with the injector's lines and the ΔL values with two or more of them;
    slope, slope_se: runtime over late time (ns per ns) and its standard error (n − deltas − 1
    degrees of freedom); correlation and explained (its square, the share of the runtimes' spread
    within ΔL that the line accounts for); late_sd_ns, runtime_sd_ns, residual_sd_ns: standard
    deviations within ΔL of the late time, the runtime and what the line leaves of it."""
    groups = {}
    for r in records:
        lines = [x for x in (r.get("inject_stats") or []) if "lateness_total_ns" in x]
        if r["status"] == "ok" and r["delta_ns"] > 0 and lines and r.get("runtime_ns") is not None:
            groups.setdefault(r["delta_ns"], []).append(
                (float(sum(x["lateness_total_ns"] for x in lines)), float(r["runtime_ns"])))
    pairs, deltas = [], 0
    for runs in groups.values():
        if len(runs) < 2:
            continue
        deltas += 1
        mean_late, mean_runtime = stats.mean([x for x, _ in runs]), stats.mean([y for _, y in runs])
        pairs += [(x - mean_late, y - mean_runtime) for x, y in runs]
    sxx = sum(x * x for x, _ in pairs)
    syy = sum(y * y for _, y in pairs)
    dof = len(pairs) - deltas - 1
    if sxx == 0 or dof < 1:
        return None
    sxy = sum(x * y for x, y in pairs)
    slope = sxy / sxx
    residual = max(0.0, syy - slope * sxy)
    within = len(pairs) - deltas  # degrees of freedom of the spread within ΔL
    return {
        "runs": len(pairs), "deltas": deltas, "slope": slope, "slope_se": (residual / dof / sxx) ** 0.5,
        "correlation": sxy / (sxx * syy) ** 0.5 if syy else 0.0,
        "explained": 1 - residual / syy if syy else 0.0,
        "late_sd_ns": (sxx / within) ** 0.5, "runtime_sd_ns": (syy / within) ** 0.5,
        "residual_sd_ns": (residual / dof) ** 0.5,
    }
