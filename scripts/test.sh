#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test.
#   scripts/test.sh [ctest arguments, e.g. -L unit]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LLAMP_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "$build"
# MPI tests start several ranks each: run tests one at a time on small machines.
ctest --output-on-failure --timeout 600 "$@"
