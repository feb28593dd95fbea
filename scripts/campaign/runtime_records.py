"""Reads what libllamp_runtime_timer.so wrote: one runtime-<rank>.txt per rank.

    llamp-runtime rank <r> size <p> runtime_ns <n> init_end_ns <a> finalize_start_ns <b>
                  [core_init_ns <x> core_finalize_ns <y>
                   [core_run_max_ns <m> core_run_probes <k> [core_run_min_ns <s>]]]
                  [compute_ns <c> mpi_calls <k> [poll_wait_ns <w>]]

The runtime of a run is the maximum over ranks of (MPI_Finalize start - MPI_Init end). The
optional pairs are the in-run core probes (LLAMP_CORE_PROBE_SHM; -1 when a peer did not answer)
and the probes during the run (LLAMP_CORE_PROBE_PERIOD_MS: the largest and the smallest of k; records
of stop 13 have no smallest), written by each node's first rank. compute_ns is the rank's time
outside MPI's communication calls and outside its polling loops' waits (every rank; -1 when other
threads than MPI_Init's called MPI; records before stop 58 have none), poll_wait_ns those waits:
the time from each poll that found nothing to the rank's next MPI call (records before stop 62
have none, and their compute_ns holds the waits).
"""
import glob
import os


class RecordError(Exception):
    pass


def parse_line(line, path):
    fields = line.split()
    if len(fields) < 11 or len(fields) % 2 == 0 or fields[0] != "llamp-runtime":
        raise RecordError(f"{path}:1: not a llamp-runtime record: '{line.strip()}'")
    try:
        values = {fields[i]: int(fields[i + 1]) for i in range(1, len(fields), 2)}
    except ValueError:
        raise RecordError(f"{path}:1: non-integer value in '{line.strip()}'")
    for key in ("rank", "size", "runtime_ns"):
        if key not in values:
            raise RecordError(f"{path}:1: missing '{key}'")
    return values


def read_run(directory, ranks):
    """Per-rank runtimes (ns, by rank) and their maximum; RecordError unless every rank wrote one."""
    per_rank = {}
    for path in sorted(glob.glob(os.path.join(directory, "runtime-*.txt"))):
        with open(path) as f:
            line = f.readline()
        rec = parse_line(line, path)
        if rec["size"] != ranks:
            raise RecordError(f"{path}: run had {rec['size']} ranks, the campaign asked for {ranks}")
        if rec["runtime_ns"] < 0:
            raise RecordError(f"{path}: negative runtime {rec['runtime_ns']} ns")
        per_rank[rec["rank"]] = rec["runtime_ns"]
    if len(per_rank) != ranks:
        raise RecordError(f"{directory}: runtime records from {len(per_rank)} of {ranks} ranks "
                          f"(did the app reach MPI_Finalize? is the timer library preloaded?)")
    return [per_rank[r] for r in sorted(per_rank)], max(per_rank.values())


def read_core_probes(directory):
    """The in-run core probes of a run: {"init": ns, "finalize": ns, "during": ns, "during_min": ns},
    the largest over the nodes' records ("during_min": the smallest; -1: a peer did not answer; keys
    absent when nothing was probed; "during" and "during_min" only when some probe during the run
    was answered)."""
    found = {}
    for path in sorted(glob.glob(os.path.join(directory, "runtime-*.txt"))):
        with open(path) as f:
            rec = parse_line(f.readline(), path)
        for key, name in (("core_init_ns", "init"), ("core_finalize_ns", "finalize")):
            if key in rec:
                found[name] = max(found.get(name, rec[key]), rec[key])
        if rec.get("core_run_probes", 0) > 0:
            found["during"] = max(found.get("during", rec["core_run_max_ns"]), rec["core_run_max_ns"])
            if rec.get("core_run_min_ns", -1) >= 0:
                found["during_min"] = min(found.get("during_min", rec["core_run_min_ns"]), rec["core_run_min_ns"])
    return found


def read_compute(directory):
    """{rank: ns}: each rank's computation outside MPI (ranks whose record has none, or -1 because
    other threads called MPI too, are left out)."""
    found = {}
    for path in sorted(glob.glob(os.path.join(directory, "runtime-*.txt"))):
        with open(path) as f:
            rec = parse_line(f.readline(), path)
        if rec.get("compute_ns", -1) >= 0:
            found[rec["rank"]] = rec["compute_ns"]
    return found
