#!/usr/bin/env bash
# Packs a built tree and the patched MPICH + UCX into one relocatable folder, so the campaign runs
# on an x86-64 Linux machine that has neither MPICH nor llamp's dependencies installed (a lent
# benchmark machine, a cluster node): build here, copy the folder there, run there.
#
# Usage: scripts/make-portable-bundle.sh OUT [--build DIR] [--prefix DIR]
#   OUT       folder to (re)create; it gets build/{apps,bin,lib}, prefix/ (the patched MPICH + UCX,
#             Hydra's mpiexec), libs/ (every other shared library they load, from this machine)
#             and run.sh
#   --build   llamp build folder (default $LLAMP_BUILD_DIR or <repo>/build)
#   --prefix  patched MPICH + UCX (default: scripts/build-patched-mpich.sh --print-prefix)
#
# On the other machine, from the repository's root (the campaign's Python and the scripts are not
# copied; a checkout of the same commit provides them):
#   OUT/run.sh scripts/llamp-accuracy-table -n 4 -- --mpiexec OUT/prefix/bin/mpiexec
#   OUT/run.sh scripts/llamp-campaign -n 2 --mpiexec OUT/prefix/bin/mpiexec -- OUT/build/apps/app_halo2d
# run.sh sets PATH, LD_LIBRARY_PATH, LLAMP_PATCHED_MPICH_PREFIX and LLAMP_BUILD_DIR to the bundle.
# The C library, libstdc++ and the MPI/UCX libraries themselves are not copied from this machine's
# system: the other machine's glibc must be at least as new as this one's (Debian 12: 2.36).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=
build=${LLAMP_BUILD_DIR:-$repo/build}
prefix=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    -*) echo "make-portable-bundle: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
[[ -n $out ]] || { echo "make-portable-bundle: name the output folder (see --help)" >&2; exit 2; }
prefix=${prefix:-$(bash "$repo/scripts/build-patched-mpich.sh" --print-prefix 2>/dev/null)}
for need in "$build/bin/llamp" "$build/lib/libllamptrace.so" "$prefix/lib/libmpi.so.12"; do
  [[ -e $need ]] || { echo "make-portable-bundle: $need is missing (build the tree and the patched stack first)" >&2; exit 1; }
done
hydra=$(command -v mpiexec.hydra || true)
proxy=$(command -v hydra_pmi_proxy || true)
[[ -n $hydra && -n $proxy ]] || { echo "make-portable-bundle: Hydra (mpiexec.hydra, hydra_pmi_proxy; package mpich) is missing" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/build" "$out/prefix" "$out/libs"
out=$(cd "$out" && pwd)
cp -a "$build/apps" "$build/bin" "$build/lib" "$out/build/"
cp -a "$prefix/bin" "$prefix/lib" "$out/prefix/"
find "$out/prefix/lib" \( -name '*.a' -o -name '*.la' \) -delete
cp "$hydra" "$proxy" "$out/prefix/bin/"
printf '#!/bin/sh\nexec "$(dirname "$0")/mpiexec.hydra" "$@"\n' >"$out/prefix/bin/mpiexec"
chmod +x "$out/prefix/bin/mpiexec"

# Every library the binaries load that is neither in the bundle nor part of the C/C++ runtime.
skip='^(libc|libm|libpthread|libdl|librt|ld-linux.*|libstdc\+\+|libgcc_s|libmpi|libmpich.*|libmpifort|libmpicxx|libucp|libucs|libuct|libucm)\.so'
while read -r lib; do
  name=$(basename "$lib")
  [[ $name =~ $skip || $lib == "$out"/* ]] && continue
  cp -L "$lib" "$out/libs/"
done < <(find "$out/build" "$out/prefix/bin" "$out/prefix/lib" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
  xargs -0 ldd 2>/dev/null | awk '/=> \// {print $3}' | sort -u)

# The prefix's llamp-env.sh (sourced by the campaign) names this machine's paths: make it relative.
cat >"$out/prefix/llamp-env.sh" <<'EOF'
# Source this to run against the bundled patched MPICH + UCX (scripts/make-portable-bundle.sh).
_llamp_prefix=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$_llamp_prefix/bin:$PATH"
export LD_LIBRARY_PATH="$_llamp_prefix/lib:$_llamp_prefix/../libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LLAMP_PATCHED_MPICH_PREFIX="$_llamp_prefix"
unset _llamp_prefix
EOF

cat >"$out/run.sh" <<'EOF'
#!/usr/bin/env bash
# Runs a command with this bundle's llamp, patched MPICH + UCX and libraries.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$here/prefix/bin:$here/build/bin:$PATH"
export LD_LIBRARY_PATH="$here/prefix/lib:$here/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LLAMP_PATCHED_MPICH_PREFIX="$here/prefix" LLAMP_BUILD_DIR="$here/build"
exec "$@"
EOF
chmod +x "$out/run.sh"
echo "bundle: $out ($(du -sh "$out" | cut -f1)); run commands through $out/run.sh"
