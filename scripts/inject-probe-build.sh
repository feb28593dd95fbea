# Sourced by scripts/inject-*.sh: resolves the patched MPICH prefix (empty: ask
# build-patched-mpich.sh) and compiles tests/injector/inject_probe.c against it.
#   build_inject_probe <script name> <prefix or ""> <output binary>
# Prints the prefix it used.
build_inject_probe() {
  local name=$1 prefix=$2 out=$3
  local repo
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  [[ -n $prefix ]] || prefix=$("$repo/scripts/build-patched-mpich.sh" --print-prefix)
  [[ -x $prefix/bin/mpicc ]] || { echo "$name: no mpicc in $prefix" >&2; return 1; }
  "$prefix/bin/mpicc" -O2 -o "$out" "$repo/tests/injector/inject_probe.c" -Wl,-rpath,"$prefix/lib" >&2
  echo "$prefix"
}
