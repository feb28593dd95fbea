#!/usr/bin/env bash
# Accuracy of the latency injector: for each target delta L and message size,
# the added one-way latency (median and p99 over ping-pong messages) against a
# reference without injection on the same transport (MPIR_CVAR_NOLOCAL=1:
# UCX, as with injection on) measured in the same shuffled rounds.
# Eager sizes (<= 8 KiB here) should add delta L; rendezvous sizes 3 delta L
# (RTS + the get's round trip; the receive is posted first), see
# docs/injector.md.  A second reference per delta L waits as long as the
# injected run (rank 1 computes (terms + 1) delta L before each reply): on a
# machine whose CPUs come back slow from a long wait, the difference between
# the two references is that cost, the machine's and not the injector's
# (docs/injector.md, "Waiting CPUs come back cold").
#
# Usage: scripts/inject-accuracy.sh [--prefix DIR] [--rounds N] [--sizes "8 16384"]
#                                   [--deltas "1 10 100 1000"]   (us)
# --prefix defaults to what scripts/build-patched-mpich.sh --print-prefix says.
# Prints a Markdown table on stdout; raw per-run lines go to stderr.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=""
rounds=3
sizes="8 16384"
deltas="1 10 100 1000"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --sizes) sizes="$2"; shift 2 ;;
    --deltas) deltas="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "inject-accuracy.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=inject-probe-build.sh
source "$repo/scripts/inject-probe-build.sh"
prefix=$(build_inject_probe inject-accuracy.sh "$prefix" "$work/probe")

reps_for() {  # fewer repetitions where each one takes long
  local d=$1 bytes=$2
  if (( d >= 1000 )); then echo 60; elif (( d >= 100 )); then echo 300;
  elif (( bytes > 8192 )); then echo 1000; else echo 2000; fi
}

terms_for() { if (( $1 > 8192 )); then echo 3; else echo 1; fi; }

# samples: lines "<delta> <bytes> <kind> <median_us> <p99_us>", kind = injected, or the
# reference (ΔL = 0) replying at once (plain) or after waiting as long as at <delta> (waiting)
samples=$work/samples
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for ((r = 0; r < rounds; ++r)); do
  for bytes in $sizes; do
    for run in $(printf '%s\n' plain:0 $(printf 'injected:%s\n' $deltas) $(printf 'waiting:%s\n' $deltas) | shuf); do
      kind=${run%%:*} d=${run#*:}
      env_delta="MPIR_CVAR_NOLOCAL=1" reply_after=0
      [[ $kind == injected ]] && env_delta="LLAMP_DELTA_L=${d}us"
      [[ $kind == waiting ]] && reply_after=$(( ($(terms_for "$bytes") + 1) * d ))
      out=$(env LD_LIBRARY_PATH="$prefix/lib" $env_delta LLAMP_INJECT_STATS=1 \
              "$prefix/bin/mpiexec" -n 2 "$work/probe" pingpong "$bytes" "$(reps_for "$d" "$bytes")" "$reply_after" 2>&1)
      med=$(sed -n 's/^oneway_median_us=//p' <<<"$out")
      p99=$(sed -n 's/^oneway_p99_us=//p' <<<"$out")
      [[ -n $med && -n $p99 ]] || { echo "$out" >&2; exit 1; }
      echo "round=$r bytes=$bytes $kind delta_us=$d oneway_median_us=$med oneway_p99_us=$p99 load=$(cut -d' ' -f1 /proc/loadavg)" >&2
      grep '^llamp-inject:' <<<"$out" >&2 || true
      echo "$d $bytes $kind $med $p99" >>"$samples"
    done
  done
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "Measured $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) cores, $rounds shuffled rounds, 2 ranks;" \
     "load average before: $load_before, after: $load_after."
echo

# Medians over rounds; added = injected - plain reference of the same size; the last two columns
# take the waiting reference of the same ΔL instead.
awk -v sizes="$sizes" -v deltas="$deltas" '
  function median(arr, n,   i, j, t) {
    for (i = 1; i <= n; ++i) for (j = i + 1; j <= n; ++j)
      if (arr[j] < arr[i]) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
    return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
  }
  function median_of(k,   i) { for (i = 1; i <= n[k]; ++i) a[i] = med[k, i]; return median(a, n[k]) }
  { k = $1 " " $2 " " $3; n[k]++; med[k, n[k]] = $4; p99[k, n[k]] = $5 }
  END {
    print "| target ΔL | message size | protocol | expected added | added one-way median | added one-way p99 | per latency term | error of median | allowed | within | waiting reference | error against it |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|"
    ns = split(sizes, S, " "); nd = split(deltas, D, " ")
    for (s = 1; s <= ns; ++s) {
      base = median_of("0 " S[s] " plain")
      printf "| reference (NOLOCAL, ΔL = 0) | %d B | | | one-way median %.2f us | | | | | | | |\n", S[s], base
      for (d = 1; d <= nd; ++d) {
        k = D[d] " " S[s] " injected"
        for (i = 1; i <= n[k]; ++i) b[i] = p99[k, i]
        inj = median_of(k); m = inj - base; p = median(b, n[k]) - base
        waiting = median_of(D[d] " " S[s] " waiting")
        terms = (S[s] > 8192) ? 3 : 1
        want = terms * D[d]
        allowed = terms * ((D[d] * 0.01 > 0.5) ? D[d] * 0.01 : 0.5)
        proto = (terms == 3) ? "rendezvous" : "eager"
        verdict = ((m - want) <= allowed && (want - m) <= allowed) ? "yes" : "NO"
        printf "| %d us | %d B | %s | %d us | %.2f us | %.2f us | %.2f us | %+.2f us | %.2f us | %s | %.2f us | %+.2f us |\n", D[d], S[s], proto, want, m, p, m / terms, m - want, allowed, verdict, waiting, inj - waiting - want
      }
    }
  }' "$samples"
