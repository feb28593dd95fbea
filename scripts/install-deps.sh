#!/usr/bin/env bash
# Installs every Debian 12 package llamp needs to build, test and run its demo.
# Idempotent: does nothing (not even apt-get update) when all are present.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake pkg-config gfortran git
  # MPI: Debian's MPICH 4.0.2 (ch4:ucx); always called as mpicc.mpich / mpiexec.mpich
  mpich libmpich-dev
  # libraries
  libzstd-dev zstd libcli11-dev nlohmann-json3-dev libfmt-dev coinor-libclp-dev libpapi-dev papi-tools
  # tests and benchmarks (clang-format: the formatting check)
  googletest libgtest-dev libgmock-dev libbenchmark-dev clang-format
  # plots (matplotlib through /usr/bin/python3)
  python3 python3-matplotlib python3-numpy
  # the campaign's Slurm mode and its test (a private munged/slurmctld/slurmd)
  slurm-wlm munge
  # building the patched MPICH + UCX for the latency injector
  dpkg-dev autoconf automake libtool make patch file
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
