/* A STREAM-style triad (a = b + s c) on a given thread count: the memory
 * bandwidth the assembly figures are compared with, measured in the same run. */
#ifndef FEA_BENCH_STREAM_H
#define FEA_BENCH_STREAM_H

#include <feaccel.h>

/* Best of `reps` triads over arrays of n doubles on `threads` threads, in
 * GB/s counting 24 bytes per entry (two reads, one write); <= 0 when the
 * arrays could not be allocated. */
double bench_stream_triad(long long n, int threads, int reps);

/* The same yardstick in a device context's memory: best of `reps` rounds of
 * y = y + s x (fea_vector_axpy, 24 bytes per entry) over n doubles, the clock
 * read only after the device went idle; <= 0 when it could not run. */
double bench_device_axpy(fea_context *ctx, long long n, int reps);

#endif
