#!/usr/bin/env bash
# The README's test command: install what is missing, build (including the patched MPICH + UCX
# of the latency injector, cached outside the tree by patch hash), run every test.
#   scripts/test.sh [ctest arguments, e.g. -L unit]
# LLAMP_SKIP_INJECTOR=1 skips building the patched stack (its tests are then not registered).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LLAMP_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
if [ "${LLAMP_SKIP_INJECTOR:-0}" != 1 ]; then
  prefix_line="$("$root/scripts/build-patched-mpich.sh" --jobs "$(nproc)" | grep '^LLAMP_PATCHED_MPICH_PREFIX=')"
  export LLAMP_CMAKE_ARGS="${LLAMP_CMAKE_ARGS:-} -D${prefix_line}"
fi
"$root/scripts/build.sh"
cd "$build"
# MPI tests start several ranks each: run tests one at a time on small machines.
ctest --output-on-failure --timeout 900 "$@"
