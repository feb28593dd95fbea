#!/usr/bin/env bash
# Builds MPICH 4.0.2 (ch4:ucx) on UCX 1.13.1 from Debian's source packages with
# llamp's latency-injection patches (patches/) and injector (injector/).
#
# Usage: scripts/build-patched-mpich.sh [--jobs N] [--print-prefix]
#   Cache root: $LLAMP_CACHE_DIR (default /var/cache/llamp).  Layout:
#     <root>/downloads/           source packages (kept across patch changes)
#     <root>/mpich-ucx-llamp/build/{ucx-1.13.1,mpich-4.0.2}   kept build trees
#     <root>/mpich-ucx-llamp/prefix/                          the install
#     <root>/mpich-ucx-llamp/prefix/.llamp-key                hash it was built from
#   The key is a hash of patches/*.patch, injector/include, injector/src and
#   this script.  Same key: nothing is rebuilt.  New key: the patches are
#   re-applied in the kept build trees and only `make install` runs (fast).
#   No cache: full fetch + build (~15-20 min on 2 cores).
#
# Output contract (stdout, last two lines; everything else goes to stderr):
#   LLAMP_PATCHED_MPICH_PREFIX=<prefix>
#   LLAMP_PATCHED_MPICH_ENV=<prefix>/llamp-env.sh
# With --print-prefix only the prefix path is printed.
# Build logs: <root>/mpich-ucx-llamp/build/*.log
set -euo pipefail

jobs=$(nproc)
print_prefix_only=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --jobs) jobs="$2"; shift 2 ;;
    --print-prefix) print_prefix_only=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "build-patched-mpich.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=${LLAMP_CACHE_DIR:-/var/cache/llamp}
top=$root/mpich-ucx-llamp
build=$top/build
prefix=$top/prefix
downloads=$root/downloads
ucx_patch=$repo/patches/ucx-1.13.1-llamp-defer-am.patch
mpich_patch=$repo/patches/mpich-4.0.2-llamp-inject.patch

log() { echo "[build-patched-mpich] $*" >&2; }
die() { echo "[build-patched-mpich] error: $*" >&2; exit 1; }

key=$(cd "$repo" && cat patches/*.patch injector/include/*.h injector/src/*.[ch] \
        scripts/build-patched-mpich.sh | sha256sum | cut -c1-16)

finish() {
  if [[ $print_prefix_only == 1 ]]; then
    echo "$prefix"
  else
    echo "LLAMP_PATCHED_MPICH_PREFIX=$prefix"
    echo "LLAMP_PATCHED_MPICH_ENV=$prefix/llamp-env.sh"
  fi
}

mkdir -p "$root" "$build" "$downloads"
exec 9>"$root/.mpich-ucx-llamp.lock"
flock 9   # one build at a time; a second caller waits, then finds the cache

if [[ -f $prefix/.llamp-key && $(cat "$prefix/.llamp-key") == "$key" ]]; then
  log "cached build $key in $prefix"
  finish
  exit 0
fi

for tool in dpkg-source autoreconf libtoolize gfortran patch make; do
  command -v "$tool" >/dev/null || die "'$tool' is missing (apt-get install dpkg-dev autoconf automake libtool gfortran patch make)"
done

# --- 1. source packages (the archive is whatever the system's apt sources name)
fetch_sources() {
  local apt=$root/apt
  mkdir -p "$apt/parts" "$apt/lists/partial" "$apt/cache/archives/partial"
  local found=0 f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] || continue
    sed 's/^Types:.*/Types: deb deb-src/' "$f" >"$apt/parts/$(basename "$f")"
    found=1
  done
  [[ $found == 1 ]] || die "no /etc/apt/sources.list.d/*.sources to derive deb-src entries from"
  local o=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$apt/parts"
           -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache")
  apt-get "${o[@]}" -qq update >&2
  (cd "$downloads" && apt-get "${o[@]}" -qq source --download-only mpich=4.0.2-3 ucx=1.13.1-1 >&2)
}
if [[ ! -f $downloads/mpich_4.0.2.orig.tar.xz || ! -f $downloads/ucx_1.13.1-1.dsc ]]; then
  log "fetching Debian source packages mpich 4.0.2-3 and ucx 1.13.1-1"
  fetch_sources
fi

# Re-applies a patch in a kept tree: reverse the one applied before, if different.
apply_patch() {   # <tree> <patch>; returns 0 when the tree changed
  local tree=$1 patch=$2 applied=$1/.llamp-applied.patch
  if [[ -f $applied ]] && cmp -s "$applied" "$patch"; then
    return 1
  fi
  if [[ -f $applied ]]; then
    patch -d "$tree" -p1 -R -s --no-backup-if-mismatch <"$applied" || die "cannot revert old patch in $tree"
  fi
  patch -d "$tree" -p1 -s --no-backup-if-mismatch <"$patch" || die "$patch does not apply to $tree"
  cp "$patch" "$applied"
  return 0
}

run_logged() {   # <log> <cmd...>
  local logfile=$1; shift
  if ! "$@" >>"$logfile" 2>&1; then
    tail -n 40 "$logfile" >&2
    die "'$*' failed, see $logfile"
  fi
}

# --- 2. UCX
ucx=$build/ucx-1.13.1
if [[ ! -d $ucx ]]; then
  log "unpacking UCX"
  (cd "$build" && dpkg-source -x "$downloads/ucx_1.13.1-1.dsc" ucx-1.13.1 >&2)
fi
ucx_changed=0
apply_patch "$ucx" "$ucx_patch" && ucx_changed=1
if [[ ! -f $ucx/.llamp-configured ]]; then
  log "UCX: autogen + configure (~30 s)"
  (cd "$ucx" && run_logged "$build/ucx-configure.log" ./autogen.sh)
  (cd "$ucx" && run_logged "$build/ucx-configure.log" ./configure --prefix="$prefix" \
      --enable-mt --disable-logging --disable-debug --disable-assertions \
      --disable-params-check --enable-cma --disable-static --without-java --without-go \
      --without-cuda --without-rocm --without-verbs --without-rdmacm --without-knem \
      --without-xpmem --without-ugni --without-fuse3)
  touch "$ucx/.llamp-configured"
  ucx_changed=1
fi
if [[ $ucx_changed == 1 || ! -f $prefix/lib/libucp.so ]]; then
  log "UCX: make install (~90 s on 2 cores)"
  (cd "$ucx" && run_logged "$build/ucx-make.log" make -j"$jobs" install)
fi

# --- 3. the injector, a static PIC archive that libmpich absorbs
log "injector: building $prefix/lib/libllamp_inject.a"
inj_obj=$build/injector-obj
rm -rf "$inj_obj" && mkdir -p "$inj_obj" "$prefix/include" "$prefix/lib"
for src in "$repo"/injector/src/*.c; do
  cc -std=gnu11 -O2 -g -fPIC -Wall -Wextra -I"$repo/injector/include" -I"$repo/injector/src" \
     -I"$prefix/include" -c "$src" -o "$inj_obj/$(basename "${src%.c}").o"
done
rm -f "$prefix/lib/libllamp_inject.a"
ar rcs "$prefix/lib/libllamp_inject.a" "$inj_obj"/*.o
# -C: an unchanged header keeps its time, so MPICH (which includes it everywhere) is not recompiled
install -C -m 644 "$repo/injector/include/llamp_inject.h" "$prefix/include/"

# --- 4. MPICH
mpich=$build/mpich-4.0.2
if [[ ! -d $mpich ]]; then
  log "unpacking MPICH (tar keeps timestamps, so automake is not re-run)"
  tar -C "$build" -xf "$downloads/mpich_4.0.2.orig.tar.xz"
fi
apply_patch "$mpich" "$mpich_patch" || true
if [[ ! -f $mpich/.llamp-configured ]]; then
  log "MPICH: configure (~70 s)"
  # Only what llamp needs: C/C++, Fortran 77/90 (no f08), ch4:ucx, no ROMIO,
  # no static libs, dataloop instead of the (large) yaksa engine.  Hydra is
  # not rebuilt: Debian's mpiexec.mpich (same 4.0.2, same PMI) launches it.
  (cd "$mpich" && run_logged "$build/mpich-configure.log" ./configure --prefix="$prefix" \
      --with-device=ch4:ucx --with-ucx="$prefix" --with-pm=none --with-hwloc=/usr \
      --enable-fortran=all --disable-f08 --disable-romio --disable-static --enable-shared \
      --with-datatype-engine=dataloop --disable-doc --enable-fast=O2 \
      --disable-rpath --disable-wrapper-rpath \
      CPPFLAGS="-I$prefix/include" LIBS="$prefix/lib/libllamp_inject.a -lpthread" \
      FFLAGS="-O2 -fallow-argument-mismatch" FCFLAGS="-O2 -fallow-argument-mismatch")
  touch "$mpich/.llamp-configured"
fi
# libmpich does not depend on the archive in make's eyes: force the relink.
rm -f "$mpich"/lib/libmpi*.la "$mpich"/lib/.libs/libmpi*.so*
log "MPICH: make install (first build ~12-15 min on 2 cores, then ~1 min)"
(cd "$mpich" && run_logged "$build/mpich-make.log" make -j"$jobs" install)

# --- 5. how to use it
# Programs built against Debian's MPICH (our apps, the tracer, llamp-loggp) load the sonames
# libmpich.so.12 / libmpichfort.so.12 / libmpichcxx.so.12; the same ABI under those names lets
# LD_LIBRARY_PATH=<prefix>/lib switch them to this build without relinking.
ln -sf libmpi.so.12 "$prefix/lib/libmpich.so.12"
ln -sf libmpifort.so.12 "$prefix/lib/libmpichfort.so.12"
ln -sf libmpicxx.so.12 "$prefix/lib/libmpichcxx.so.12"
# Debian's Hydra finds hydra_pmi_proxy next to its own path: exec, not symlink.
rm -f "$prefix/bin/mpiexec"
printf '#!/bin/sh\n# Debian Hydra (MPICH 4.0.2) launches this MPICH build.\nexec /usr/bin/mpiexec.mpich "$@"\n' >"$prefix/bin/mpiexec"
chmod 755 "$prefix/bin/mpiexec"
cat >"$prefix/llamp-env.sh" <<EOF
# Source this to build and run against llamp's patched MPICH + UCX.
# Latency injection: export LLAMP_DELTA_L=10us (ns|us|ms|s; a plain number is us;
# 0 or unset = off).  While it is on, MPICH routes on-node messages through UCX
# itself (MPIR_CVAR_NOLOCAL=1 is implied), so they are delayed too.
export PATH="$prefix/bin:\$PATH"
export LD_LIBRARY_PATH="$prefix/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export LLAMP_PATCHED_MPICH_PREFIX="$prefix"
EOF
echo "$key" >"$prefix/.llamp-key"
log "done: source $prefix/llamp-env.sh, then mpicc / mpiexec -n 2 ... with LLAMP_DELTA_L=10us"
finish
