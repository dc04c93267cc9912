#!/bin/sh
# Runs the /gpu/cuda loading test (test-cuda-lazy.c) against a copy of
# libfeaccel.so that has no libfeaccel-cuda.so beside it, so that the module
# cannot be found: the library must then say why, and still run on the CPU.
#
# usage: check-module-missing.sh LIBFEACCEL TEST_PROGRAM
set -eu
lib=$1
program=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$lib" "$dir/libfeaccel.so.0"
# LD_LIBRARY_PATH is searched before the program's RUNPATH, so the program
# loads the copy; the module is then looked for beside the copy and by name.
# The inherited path (meson's, with the build tree's lib/) is dropped: the
# search by name would find the module there.
LD_LIBRARY_PATH="$dir" FEA_TEST_CUDA_MODULE=absent "$program"
