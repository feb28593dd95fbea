#!/usr/bin/env bash
# Runs bench_tracer with 2 ranks, after tracing the halo mini-app (default arguments, 4 ranks)
# for the bytes-per-event figure. Usage: tests/bench/run_bench_tracer.sh <build dir> [benchmark args]
set -euo pipefail
build=${1:?usage: run_bench_tracer.sh <build dir> [benchmark args]}
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lib="$build/lib/libllamptrace.so"
LD_PRELOAD="$lib" LLAMP_TRACE_DIR="$work/halo" mpiexec.mpich -n 4 "$build/apps/app_halo2d" > /dev/null
LLAMP_BENCH_HALO_TRACE="$work/halo" LLAMP_TRACE_DIR="$work/bench" \
  mpiexec.mpich -n 2 "$build/bench/bench_tracer" "$@"
