#!/usr/bin/env bash
# Configures and builds llamp (Release) into ${LLAMP_BUILD_DIR:-build}.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LLAMP_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release ${LLAMP_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
