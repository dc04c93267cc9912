#!/bin/sh
# Install into a temporary root and build the examples the way a user would:
# with nothing but `pkg-config --cflags --libs feaccel`.
# usage: test-install.sh BUILD_DIR SOURCE_DIR CC CXX
set -eu
build=$1 src=$2 cc=$3 cxx=$4
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
meson install -C "$build" --destdir "$root" --no-rebuild --quiet >/dev/null
pc=$(find "$root" -name feaccel.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: feaccel.pc was not installed"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$root
flags=$(pkg-config --cflags --libs feaccel)
echo "pkg-config --cflags --libs feaccel: $flags"
libdir=$(dirname "$(find "$root" -name 'libfeaccel.so.0' | head -n 1)")
# libfeaccel.so needs libc alone and its core beside it; no CUDA run path or
# library on the core; a CUDA build installs its /gpu/cuda module beside
# them (docs/backends.md).
[ -e "$libdir/libfeaccel-core.so.0" ] ||
  { echo "FAIL: libfeaccel-core.so.0 was not installed beside libfeaccel.so.0"; exit 1; }
module=$(find "$libdir" -name libfeaccel-cuda.so)
[ "$(pkg-config --variable=cuda feaccel)" = no ] || [ -n "$module" ] ||
  { echo "FAIL: libfeaccel-cuda.so was not installed beside libfeaccel.so.0"; exit 1; }
python3 "$src/tests/abi/check-library-links.py" --installed "$libdir/libfeaccel.so.0" \
  "$libdir/libfeaccel-core.so.0" 0 $module
"$cc" -std=c11 -Wall -Werror "$src/examples/hello.c" $flags -o "$root/hello"
LD_LIBRARY_PATH=$libdir "$root/hello" /cpu/ref
"$cxx" -std=c++11 -Wall -Werror "$src/examples/consumer.cpp" $flags -o "$root/consumer"
LD_LIBRARY_PATH=$libdir "$root/consumer" /cpu/ref
# The installed program must load the installed library, not the build tree's.
LD_LIBRARY_PATH=$libdir ldd "$root/hello" | grep -q "$libdir/libfeaccel.so.0" ||
  { echo "FAIL: hello did not resolve the installed libfeaccel.so.0"; exit 1; }
echo "1 passed, 0 failed"
