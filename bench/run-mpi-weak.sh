#!/bin/sh
# Weak scaling of the distributed multipatch solver: runs feaccel-bench-mpi
# multipatch --weak (a fixed number of patches per rank) on 1, 2 and 4 ranks
# and prints one Markdown table of the rows (docs/benchmarks.md, "MPI
# benchmark"). Arguments go to the benchmark (table output: not --json), e.g.
#
#   bench/run-mpi-weak.sh --dim 3 --p 2 --n 8 --patches-per-rank 2 --reps 3
#
# Environment: BIN (default build/bench/feaccel-bench-mpi), RANKS (default
# "1 2 4"), MPIEXEC (default mpiexec). Ranks beyond the cores are
# oversubscribed (Open MPI); on a 2-core machine the table shows correctness,
# sizes and communication volume per rank count, not speed-up.
set -eu
BIN=${BIN:-build/bench/feaccel-bench-mpi}
RANKS=${RANKS:-"1 2 4"}
MPIEXEC=${MPIEXEC:-mpiexec}
# Open MPI: run as root in containers, more ranks than cores, one thread each.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe="${OMPI_MCA_rmaps_base_oversubscribe:-1}"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
first=1
status=0
for r in $RANKS; do
  if ! "$MPIEXEC" -n "$r" "$BIN" multipatch --weak "$@" >"$tmp"; then
    echo "run-mpi-weak.sh: $r ranks failed" >&2
    status=1
    continue
  fi
  if [ "$first" = 1 ]; then
    grep '^| ranks' "$tmp"
    grep '^| ---' "$tmp"
    first=0
  fi
  grep '^| [0-9]' "$tmp"
done
grep '^times:' "$tmp" || true
exit "$status"
