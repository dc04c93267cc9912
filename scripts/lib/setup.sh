# Shared set-up of scripts/run-demo and scripts/run-tests: make sure the
# Debian packages libfeaccel builds and checks with are there, then
# configure and build.
# Sourced, not run; expects $root (the project root).

# cmake: the install-prefix test builds a find_package(feaccel) consumer with it.
packages="meson ninja-build pkg-config cmake gcc g++ python3 clang-format libcriterion-dev libhwloc-dev libopenblas-dev liblapacke-dev"
# Only the demo needs these: SuiteSparse CHOLMOD, the direct solver's peer in
# feaccel-bench, and hypre (with its MPI), the multigrid case's peer (both
# optional; the library and the tests never use them).
demo_packages="libsuitesparse-dev libhypre-dev"

# ensure_packages [EXTRA...]: $packages and the extra ones.
ensure_packages() {
  missing=""
  for p in $packages "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "libfeaccel needs these Debian packages:$missing" >&2
    echo "install them as root with:  apt-get update && apt-get install -y$missing" >&2
    exit 1
  fi
  echo "installing:$missing"
  # The package lists may be stale or absent on a fresh machine.
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
}

# nvcc is found through PATH; the CUDA toolkit's usual home is added when it exists.
find_cuda() {
  if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    PATH=$PATH:/usr/local/cuda/bin
    export PATH
  fi
}

# configure_and_build DIR [meson options...]
configure_and_build() {
  dir=$1
  shift
  if [ -f "$root/$dir/build.ninja" ]; then
    meson configure "$root/$dir" "$@" >/dev/null
  else
    meson setup "$root/$dir" "$root" "$@"
  fi
  meson compile -C "$root/$dir"
}
