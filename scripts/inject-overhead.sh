#!/usr/bin/env bash
# Cost of the latency injector for computation: rank 0's time for a
# compute-only loop (inject_probe compute <iters>, 2 ranks, no messages
# during the loop) with and without LLAMP_DELTA_L, interleaved in shuffled
# rounds so that drift of a shared machine hits both variants alike.
#
# Usage: scripts/inject-overhead.sh [--prefix DIR] [--rounds N] [--iters N] [--delta 100us]
# Prints medians, the slowdown in % and the load average.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=""
rounds=10
iters=200000000
delta=100us
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --iters) iters="$2"; shift 2 ;;
    --delta) delta="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "inject-overhead.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=inject-probe-build.sh
source "$repo/scripts/inject-probe-build.sh"
prefix=$(build_inject_probe inject-overhead.sh "$prefix" "$work/probe")

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < rounds; ++r)); do
  for v in $(printf '%s\n' off on | shuf); do
    env_delta=""
    [[ $v == on ]] && env_delta="LLAMP_DELTA_L=$delta"
    out=$(env LD_LIBRARY_PATH="$prefix/lib" $env_delta \
            "$prefix/bin/mpiexec" -n 2 "$work/probe" compute "$iters" 2>&1)
    s=$(sed -n 's/^compute_s=//p' <<<"$out")
    [[ -n $s ]] || { echo "$out" >&2; exit 1; }
    echo "round=$r variant=$v compute_s=$s load=$(cut -d' ' -f1 /proc/loadavg)" >&2
    echo "$v $s" >>"$work/samples"
  done
done
awk -v lb="$load_before" -v la="$(cut -d' ' -f1-3 /proc/loadavg)" -v d="$delta" '
  function median(arr, n,   i, j, t) {
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j)
      if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
    return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
  }
  { if ($1 == "on") on[++non] = $2; else off[++noff] = $2 }
  END {
    mon = median(on, non); moff = median(off, noff)
    printf "compute loop, rank 0, median of %d runs: off %.4f s, LLAMP_DELTA_L=%s %.4f s, slowdown %+.2f %%\n", non, moff, d, mon, 100 * (mon / moff - 1)
    printf "min: off %.4f s, on %.4f s; load average before: %s, after: %s\n", off[1], on[1], lb, la
  }' "$work/samples"
