#!/bin/sh
# Runs the /gpu/cuda loading test (test-cuda-lazy.c) against copies of
# libfeaccel.so and its core that have no libfeaccel-cuda.so beside them, so
# that the module cannot be found: the library must then say why, and still
# run on the CPU.
#
# usage: check-module-missing.sh LIBFEACCEL LIBFEACCEL_CORE TEST_PROGRAM
set -eu
lib=$1
core=$2
program=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$lib" "$dir/libfeaccel.so.0"
cp "$core" "$dir/libfeaccel-core.so.0"
# LD_LIBRARY_PATH is searched before the program's RUNPATH, so the program
# loads the copy, which loads the core copy beside it; the module is then
# looked for beside the core and by name.
# The inherited path (meson's, with the build tree's lib/) is dropped: the
# search by name would find the module there.
LD_LIBRARY_PATH="$dir" FEA_TEST_CUDA_MODULE=absent "$program"
