/* A STREAM-style triad (a = b + s c) on a given thread count: the memory
 * bandwidth the assembly figures are compared with, measured in the same run. */
#ifndef FEA_BENCH_STREAM_H
#define FEA_BENCH_STREAM_H

/* Best of `reps` triads over arrays of n doubles on `threads` threads, in
 * GB/s counting 24 bytes per entry (two reads, one write); <= 0 when the
 * arrays could not be allocated. */
double bench_stream_triad(long long n, int threads, int reps);

#endif
