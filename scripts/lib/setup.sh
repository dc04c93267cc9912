# Shared set-up of scripts/run-demo and scripts/run-tests: make sure the
# Debian packages libfeaccel builds and checks with are there, then
# configure and build.
# Sourced, not run; expects $root (the project root).

# cmake: the install-prefix test builds a find_package(feaccel) consumer with it.
packages="meson ninja-build pkg-config cmake gcc g++ python3 clang-format libcriterion-dev libhwloc-dev libopenblas-dev liblapacke-dev libxml2-dev python3-matplotlib"
# Only the demo needs these: SuiteSparse CHOLMOD, the direct solver's peer in
# feaccel-bench, and hypre (with its MPI), the multigrid case's peer (both
# optional; the library and the tests never use them).
demo_packages="libsuitesparse-dev libhypre-dev"
# The tests of the PETSc library (libfeaccel-petsc, tests/mpi/): PETSc with
# MUMPS, and Open MPI with it. The library builds without them.
petsc_packages="petsc-dev"
# The BLIS build of scripts/run-tests (-Dblas=blis, docs/backends.md): BLIS
# and reference LAPACK, which libopenblas-dev does not bring. Installing
# BLIS leaves the system's libblas.so.3 on OpenBLAS (priority 100 against 80).
blis_packages="libblis-dev liblapack-dev"
# Only the fuzz build (scripts/fuzz, the fuzz pass of scripts/run-tests) needs
# these: clang, its libFuzzer and sanitizer runtimes, and the OpenMP runtime
# clang's -fopenmp links (GCC's libgomp headers are not clang's).
fuzz_packages="clang libclang-rt-14-dev libomp-dev"

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

# The fuzz targets of docs/fuzzing.md are in build-fuzz: clang, the library
# with ASan, UBSan and libFuzzer's coverage instrumentation, no CUDA, bench or
# Criterion tests. Configured once, then rebuilt incrementally.
fuzz_targets="gmsh resource bspline gismo"
build_fuzz() {
  CC=clang configure_and_build build-fuzz -Dfuzz=true -Dpetsc=disabled -Db_sanitize=address,undefined \
    -Db_lundef=false -Dcuda=disabled -Dbench=false -Dtests=false
}

# What the fuzz targets run under: UBSan stops at its first report (by default
# it prints and goes on, and libFuzzer would keep no input), ASan looks for
# leaks at exit of each input (libFuzzer's -detect_leaks).
fuzz_env() {
  UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
  ASAN_OPTIONS=detect_leaks=1
  OMP_WAIT_POLICY=passive
  export UBSAN_OPTIONS ASAN_OPTIONS OMP_WAIT_POLICY
}

# fuzz_args TARGET: the options each target needs: its longest input (a Gmsh
# seed is a few kB; descriptors and resource strings are short), its dictionary.
fuzz_args() {
  case $1 in
  gmsh) echo "-max_len=8192 -dict=$root/tests/fuzz/gmsh.dict" ;;
  gismo) echo "-max_len=4096 -dict=$root/tests/fuzz/gismo.dict" ;;
  resource) echo "-max_len=256" ;;
  *) echo "-max_len=512" ;;
  esac
}
