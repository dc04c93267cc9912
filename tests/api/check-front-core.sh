#!/bin/sh
# Runs test-front-core.c against libfeaccel.so's front with no core beside
# it, with a foreign shared object as its core, and with the build's core:
# the front must answer what needs no core, refuse the rest with the reason,
# and work in full with its core.
#
# usage: check-front-core.sh LIBFEACCEL LIBFEACCEL_CORE FAKE_CORE TEST_PROGRAM
set -eu
lib=$1
core=$2
fake=$3
program=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/absent" "$dir/foreign" "$dir/present"
cp "$lib" "$dir/absent/libfeaccel.so.0"
cp "$lib" "$dir/foreign/libfeaccel.so.0"
cp "$fake" "$dir/foreign/libfeaccel-core.so.0"
cp "$lib" "$dir/present/libfeaccel.so.0"
cp "$core" "$dir/present/libfeaccel-core.so.0"
# LD_LIBRARY_PATH is searched before the program's RUNPATH, so the program
# loads the copy, which looks for its core beside itself, then by name (the
# inherited path, with the build tree's lib/, is dropped: the search by name
# would find the core there).
for mode in absent foreign present; do
  LD_LIBRARY_PATH="$dir/$mode" FEA_TEST_CORE=$mode "$program"
done
