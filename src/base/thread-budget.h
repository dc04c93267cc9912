/* The thread budget: how many of a context's threads a parallel region
 * started now should use, on a machine whose cores other processes may be
 * using too (docs/backends.md, "Threads on a shared machine").
 *
 * A region's team waits for its slowest thread, and a thread that shares a
 * core with a busy process gets that core only every few milliseconds: two
 * threads with one core taken made a 0.24 ms apply take 1.14 ms. So the
 * regions whose result does not depend on their team size run on the cores
 * the other processes leave free. What the others use is read from the
 * kernel's per-CPU time (/proc/stat) less this process's own CPU time, over
 * windows of at least FEA_BUDGET_WINDOW_MS, sampled by whichever call finds
 * the last sample old: a call between samples costs one coarse clock read
 * and two atomic loads. The load is the machine's, so the sample is
 * process-wide; the count is each context's (its threads and its policy). */
#ifndef FEA_INTERNAL_THREAD_BUDGET_H
#define FEA_INTERNAL_THREAD_BUDGET_H

#include <feaccel/types.h>

#include "internal/backend.h"

/* Shortest window over which the others' load is measured (/proc/stat
 * counts in 10 ms ticks: 50 ms on two CPUs is a 0.1-core resolution). */
#define FEA_BUDGET_WINDOW_MS 50

/* A context's policy (option adapt=, else $FEACCEL_THREADS_ADAPT). */
typedef enum fea_thread_adapt {
  FEA_THREADS_ADAPT_LOAD = 0, /* regions follow the cores the load leaves free */
  FEA_THREADS_ADAPT_OFF = 1   /* every region uses all the context's threads */
} fea_thread_adapt;

struct fea_context;

/* The threads a region started now should use: in [1, ctx->nthreads]. Only
 * for regions whose result does not depend on their team size (elementwise
 * loops, work dealt in fixed blocks, nodes each computed by one thread);
 * reductions and threaded factorizations keep ctx->nthreads. */
int fea_thread_budget(const struct fea_context *ctx);

/* The decision itself, a pure function: with `others` cores' worth of CPU
 * time taken by other processes on `cpus` CPUs (others < 0: unknown), how
 * many of nthreads threads to use. A core counts as free while the others
 * take less than a quarter of it: a thread that has to share its core
 * holds up the whole team (never 0, never above nthreads). */
int fea_thread_budget_decide(int nthreads, int cpus, double others);

/* Parse a /proc/stat text: the jiffies of the per-CPU lines "cpuN ..." whose
 * N is in the set (set[N / 64] bit N % 64, for N < 64 * words): their sum
 * over all fields into *total, over idle and iowait into *idle, and how
 * many such lines into *cpus. Returns 0, or -1 when no CPU of the set has a
 * line (or the text is not a /proc/stat). */
int fea_thread_budget_parse_stat(const char *text, const unsigned long long *set, int words,
                                 unsigned long long *total, unsigned long long *idle, int *cpus);

/* The policy a context gets: the resource option adapt=load|off (opts may
 * be NULL), else $FEACCEL_THREADS_ADAPT (the same words), else load. A bad
 * value is FEA_ERR_INVALID_ARG naming where it came from. */
fea_status fea_thread_budget_option(const fea_resource_opts *opts, fea_thread_adapt *adapt);

/* Others' load of the last sample, in cores (-1: none yet or unreadable),
 * and the CPUs it covers: for benchmarks and logs. */
double fea_thread_budget_others(int *cpus);

/* Tests: cap the budget of adapt=load contexts at `cap` threads, as a load
 * would (0: no cap), to check that results do not follow the team. */
void fea_thread_budget_cap(int cap);

/* Record the CPUs this process may run on, before any context binds its
 * threads (called by context creation; idempotent). */
void fea_thread_budget_init(void);

#endif
