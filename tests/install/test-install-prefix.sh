#!/bin/sh
# Configure, build and install libfeaccel with a real --prefix, then use it the
# two ways a simulation code would: pkg-config (with and without
# --define-prefix) and CMake's find_package(feaccel). Then move the prefix
# elsewhere and check that both still give paths into the new place (the
# package files are relocatable). Three layouts: meson's default libdir
# (lib/x86_64-linux-gnu on Debian), -Dlibdir=lib, and a libdir outside the
# prefix (written absolute, so not moved).
# A separate build is made (library only, no tests, bench, CUDA or docs)
# because an install with --destdir keeps the build's own prefix and so would
# not show what a user's --prefix produces.
# usage: test-install-prefix.sh SOURCE_DIR CC
set -eu
src=$1 cc=$2
command -v cmake >/dev/null 2>&1 || {
  echo "SKIP: cmake is not installed (apt-get install cmake)"
  exit 77
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
# Runs a step quietly; on failure shows its output.
quiet() {
  "$@" >"$tmp/step.log" 2>&1 || {
    cat "$tmp/step.log"
    fail "$*"
  }
}
same_dir() { [ "$(cd "$1" 2>/dev/null && pwd -P)" = "$(cd "$2" && pwd -P)" ]; }
build_option() {
  meson introspect --buildoptions "$tmp/build" | python3 -c \
    'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == sys.argv[1]))' "$1"
}

# pkg_config_consumer PREFIX LIBDIR [--define-prefix]: build examples/hello.c
# with the flags of the feaccel.pc in LIBDIR, run it on LIBDIR's library.
pkg_config_consumer() {
  p=$1 l=$2
  shift 2
  flags=$(PKG_CONFIG_PATH=$l/pkgconfig pkg-config "$@" --cflags --libs feaccel)
  echo "pkg-config $* --cflags --libs feaccel: $flags"
  for flag in $flags; do
    case $flag in
    -I*) same_dir "${flag#-I}" "$p/include" || fail "$flag is not $p/include" ;;
    -L*) same_dir "${flag#-L}" "$l" || fail "$flag is not $l" ;;
    esac
  done
  "$cc" -std=c11 -Wall -Werror "$src/examples/hello.c" $flags -o "$tmp/hello-pc"
  LD_LIBRARY_PATH=$l "$tmp/hello-pc" /cpu/ref >/dev/null || fail "hello (pkg-config) did not run"
  LD_LIBRARY_PATH=$l ldd "$tmp/hello-pc" | grep -q "$l/libfeaccel.so.0" ||
    fail "hello (pkg-config) did not load $l/libfeaccel.so.0"
}

# cmake_configure WHERE DIR REQUEST: configure tests/install/cmake-consumer in
# DIR, asking for version REQUEST; WHERE is -DCMAKE_PREFIX_PATH=PREFIX, or
# -Dfeaccel_DIR=... for a libdir outside the prefix (which CMake does not
# search). The output is in DIR.log.
cmake_configure() {
  cmake -S "$src/tests/install/cmake-consumer" -B "$2" -DCMAKE_C_COMPILER="$cc" \
    "$1" -DFEACCEL_REQUEST="$3" >"$2.log" 2>&1
}

# cmake_consumer WHERE LIBDIR DIR: find_package(feaccel 0.1) (WHERE as for
# cmake_configure), build hello, run it without LD_LIBRARY_PATH (CMake's build
# RPATH must find LIBDIR).
cmake_consumer() {
  where=$1 l=$2 dir=$3
  cmake_configure "$where" "$dir" 0.1 || {
    cat "$dir.log"
    fail "find_package(feaccel 0.1) failed with $where"
  }
  grep -q "feaccel_VERSION=$version feaccel_HAVE_CUDA=OFF\$" "$dir.log" || {
    cat "$dir.log"
    fail "feaccel_VERSION/feaccel_HAVE_CUDA are not $version/OFF"
  }
  quiet cmake --build "$dir"
  env -u LD_LIBRARY_PATH "$dir/hello" /cpu/ref >/dev/null || fail "hello (CMake) did not run"
  env -u LD_LIBRARY_PATH ldd "$dir/hello" | grep -q "$l/libfeaccel.so.0" ||
    fail "hello (CMake) did not load $l/libfeaccel.so.0"
  echo "find_package(feaccel 0.1) with $where: built and ran hello"
}

# check_install PREFIX LIBDIR: what README.md says lands where, and both
# consumers. LIBDIR is absolute.
check_install() {
  p=$1 l=$2
  for f in "$p/include/feaccel.h" "$l/libfeaccel.so.0" "$l/libfeaccel.a" "$l/pkgconfig/feaccel.pc" \
    "$l/cmake/feaccel/feaccelConfig.cmake" "$l/cmake/feaccel/feaccelConfigVersion.cmake"; do
    [ -e "$f" ] || fail "$f was not installed"
  done
  # One library: no front and core (docs/backends.md).
  [ -z "$(find "$l" -name '*feaccel-core*')" ] || fail "a libfeaccel-core was installed in $l"
  # What the build was told: -Dcuda=disabled (the CMake side: cmake_consumer).
  cuda=$(PKG_CONFIG_PATH=$l/pkgconfig pkg-config --variable=cuda feaccel)
  [ "$cuda" = no ] || fail "feaccel.pc says cuda=$cuda for a -Dcuda=disabled build"
  # The build's default BLAS (-Dblas=auto: OpenBLAS, docs/backends.md).
  blas=$(PKG_CONFIG_PATH=$l/pkgconfig pkg-config --variable=blas feaccel)
  [ "$blas" = openblas ] || fail "feaccel.pc says blas=$blas for a -Dblas=auto build"
  pkg_config_consumer "$p" "$l"
  pkg_config_consumer "$p" "$l" --define-prefix
  case $l in
  "$p"/*) cmake_consumer "-DCMAKE_PREFIX_PATH=$p" "$l" "$tmp/cmake-$(basename "$p")" ;;
  *) cmake_consumer "-Dfeaccel_DIR=$l/cmake/feaccel" "$l" "$tmp/cmake-$(basename "$p")" ;;
  esac
}

# check_moved PREFIX LIBDIR_IN_PREFIX: move PREFIX away; nothing may still
# point into the old place, which is gone.
check_moved() {
  mv "$1" "$1-moved"
  check_install "$1-moved" "$1-moved/$2"
}

prefix=$tmp/prefix
CC=$cc quiet meson setup "$tmp/build" "$src" --prefix="$prefix" -Dbuildtype=plain \
  -Dtests=false -Dbench=false -Dcuda=disabled -Ddocs=disabled
quiet meson compile -C "$tmp/build"
quiet meson install -C "$tmp/build"
version=$(meson introspect --projectinfo "$tmp/build" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
libdir=$(build_option libdir)
echo "== $version installed with --prefix=$prefix, libdir $libdir"
check_install "$prefix" "$prefix/$libdir"

# 0.x: another minor may break the ABI, so only 0.1 requests are served.
for request in 0.2 1.0 0.1.99; do
  if cmake_configure "-DCMAKE_PREFIX_PATH=$prefix" "$tmp/cmake-$request" "$request"; then
    fail "find_package(feaccel $request) accepted version $version"
  fi
  grep -q 'compatible with requested version' "$tmp/cmake-$request.log" || {
    cat "$tmp/cmake-$request.log"
    fail "find_package(feaccel $request) failed for another reason"
  }
done
echo "find_package(feaccel 0.2 / 1.0 / 0.1.99) refused $version"

check_moved "$prefix" "$libdir"

# A package whose library was removed says so itself, naming the file.
rm "$prefix-moved/$libdir/libfeaccel.so.$version"
if cmake_configure "-DCMAKE_PREFIX_PATH=$prefix-moved" "$tmp/cmake-broken" 0.1; then
  fail "find_package(feaccel) accepted an installation without its library"
fi
grep -q "was found, but not" "$tmp/cmake-broken.log" || {
  cat "$tmp/cmake-broken.log"
  fail "find_package(feaccel) did not say that the library is missing"
}
echo "find_package(feaccel) named the missing library"

# The same build, installed again with other install paths (no recompilation).
echo "== -Dlibdir=lib"
quiet meson configure "$tmp/build" --prefix="$tmp/plain" -Dlibdir=lib
quiet meson install -C "$tmp/build"
check_install "$tmp/plain" "$tmp/plain/lib"
check_moved "$tmp/plain" lib

echo "== libdir outside the prefix"
quiet meson configure "$tmp/build" --prefix="$tmp/split" -Dlibdir="$tmp/split-lib"
quiet meson install -C "$tmp/build"
[ "$(build_option libdir)" = "$tmp/split-lib" ] || fail "meson made libdir $(build_option libdir)"
check_install "$tmp/split" "$tmp/split-lib"
echo "1 passed, 0 failed"
