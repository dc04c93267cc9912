#!/bin/sh
# Install into a temporary root and build the examples the way a user would:
# with nothing but `pkg-config --cflags --libs feaccel`; then a program
# linked to libfeaccel.a with `pkg-config --static`.
# usage: test-install.sh BUILD_DIR SOURCE_DIR CC CXX STATIC
#   STATIC: yes when the build installs libfeaccel.a (default_library both
#   or static), no for -Ddefault_library=shared
set -eu
build=$1 src=$2 cc=$3 cxx=$4 static=$5
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
meson install -C "$build" --destdir "$root" --no-rebuild --quiet >/dev/null
pc=$(find "$root" -name feaccel.pc | head -n 1)
[ -n "$pc" ] || fail "feaccel.pc was not installed"
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$root
flags=$(pkg-config --cflags --libs feaccel)
echo "pkg-config --cflags --libs feaccel: $flags"
libdir=$(dirname "$(find "$root" -name 'libfeaccel.so.0' | head -n 1)")
# One library (docs/backends.md): libfeaccel.so.0 and libfeaccel.a, the
# /gpu/cuda module beside them in CUDA builds, and nothing of the front and
# core the library was split into before 0.1.0.
cuda=$(pkg-config --variable=cuda feaccel)
[ -e "$libdir/libfeaccel.so.0" ] || fail "libfeaccel.so.0 was not installed"
if [ "$static" = yes ]; then
  [ -e "$libdir/libfeaccel.a" ] || fail "libfeaccel.a was not installed beside libfeaccel.so.0"
fi
module=$(find "$libdir" -name libfeaccel-cuda.so)
[ "$cuda" = no ] || [ -n "$module" ] || fail "libfeaccel-cuda.so was not installed beside libfeaccel.so.0"
leftover=$(find "$root" -name '*feaccel-core*' -o -name '*feaccel-front*')
[ -z "$leftover" ] || fail "installed: $leftover"
python3 "$src/tests/abi/check-library-links.py" --installed "$libdir/libfeaccel.so.0" 0 $module

"$cc" -std=c11 -Wall -Werror "$src/examples/hello.c" $flags -o "$root/hello"
LD_LIBRARY_PATH=$libdir "$root/hello" /cpu/ref
"$cxx" -std=c++11 -Wall -Werror "$src/examples/consumer.cpp" $flags -o "$root/consumer"
LD_LIBRARY_PATH=$libdir "$root/consumer" /cpu/ref
# The installed program must load the installed library, not the build tree's.
LD_LIBRARY_PATH=$libdir ldd "$root/hello" | grep -q "$libdir/libfeaccel.so.0" ||
  fail "hello did not resolve the installed libfeaccel.so.0"

if [ "$static" = yes ]; then
  # libfeaccel.a, found by the linker through -Bstatic (libfeaccel.so sits
  # beside it), then what feaccel.pc's Libs.private lists, dynamically.
  static_libs=$(pkg-config --static --libs feaccel)
  echo "pkg-config --static --libs feaccel: $static_libs"
  static_libs=$(echo " $static_libs " | sed 's/ -lfeaccel / -Wl,-Bstatic -lfeaccel -Wl,-Bdynamic /')
  "$cc" -std=c11 -Wall -Werror "$src/tests/install/static-consumer.c" \
    $(pkg-config --cflags feaccel) -static-libgcc $static_libs -lm -o "$root/static-consumer"
  if readelf -d "$root/static-consumer" | grep NEEDED | grep -q feaccel; then
    readelf -d "$root/static-consumer" | grep NEEDED
    fail "static-consumer needs a shared libfeaccel"
  fi
  # No LD_LIBRARY_PATH: there is no libfeaccel to find at run time.
  env -u LD_LIBRARY_PATH "$root/static-consumer" "$cuda"
fi
echo "1 passed, 0 failed"
