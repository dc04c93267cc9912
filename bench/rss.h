/* The memory of this process, for cases that report what a peer solver
 * holds: the resident set now (VmRSS) and at its peak (VmHWM), read from
 * /proc/self/status, and the bytes malloc has handed out and not taken back.
 * A peer's memory is the growth of the last over its run: the resident set
 * cannot say it once freed memory of an earlier run stays mapped and is
 * reused, and getrusage's ru_maxrss is a high-water mark that never goes
 * down. */
#ifndef FEA_BENCH_RSS_H
#define FEA_BENCH_RSS_H

/* Bytes now resident, or a negative number where /proc is not readable. */
double bench_rss_bytes(void);

/* The process's peak resident bytes so far, or a negative number. */
double bench_rss_peak_bytes(void);

/* Bytes in use from malloc (every arena and its mmapped blocks: glibc's
 * mallinfo2), or a negative number without glibc 2.33 or later. */
double bench_heap_bytes(void);

#endif
