#!/usr/bin/env bash
# Runs bench_injector with 2 ranks on the patched MPICH, alternately without the injector and
# with it armed at 1 ns (every message held and released at once), and prints per launch the
# medians and, at the end, armed minus off per operation: the injector's own cost.
# Usage: tests/bench/run_bench_injector.sh <build dir> [rounds (3)] [extra LLAMP_DELTA_L values]
set -euo pipefail
build=${1:?usage: run_bench_injector.sh <build dir> [rounds] [delta L ...]}
rounds=${2:-3}
shift $(( $# >= 2 ? 2 : 1 ))
repo=$(cd "$(dirname "$0")/../.." && pwd)
prefix=${LLAMP_PATCHED_MPICH_PREFIX:-$(bash "$repo/scripts/build-patched-mpich.sh" --print-prefix)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
settings=(off 1ns "$@")
for ((r = 1; r <= rounds; ++r)); do
  for s in "${settings[@]}"; do
    delta=()
    [[ $s == off ]] || delta=(LLAMP_DELTA_L="$s")
    env "${delta[@]}" MPIR_CVAR_NOLOCAL=1 LD_LIBRARY_PATH="$prefix/lib" \
      mpiexec.mpich -bind-to core -n 2 "$build/bench/bench_injector" \
      --benchmark_format=json --benchmark_out="$work/$s-$r.json" >/dev/null
  done
done
/usr/bin/python3 - "$work" "$rounds" "${settings[@]}" <<'PY'
import json, statistics, sys
work, rounds, settings = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
keys = ["ns_per_round_trip", "excess_ns_per_message", "ns_per_allreduce", "ns_per_comm_rank",
        "ns_per_empty_iprobe"]
med = {}
for s in settings:
    vals = {k: [] for k in keys}
    for r in range(1, rounds + 1):
        for b in json.load(open(f"{work}/{s}-{r}.json"))["benchmarks"]:
            for k in keys:
                if k in b:
                    vals[k].append(b[k])
    med[s] = {k: statistics.median(v) for k, v in vals.items() if v}
    print(f"{s:>8}: " + "  ".join(f"{k}={med[s][k]:.1f}" for k in keys if k in med[s]) +
          f"   (median of {rounds} launches)")
print("injector's own cost (armed at 1 ns minus off): " + "  ".join(
    f"{k}={med['1ns'][k] - med['off'][k]:+.1f}" for k in keys if k != "excess_ns_per_message"))
PY
