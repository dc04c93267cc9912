/* feaccel-bench's use of the progress callback (bench/progress.c): a bar on
 * stderr when stderr is a terminal, and the longest silence between calls,
 * which the `progress` case reports for the "at least every second" claim. */
#ifndef FEA_BENCH_PROGRESS_H
#define FEA_BENCH_PROGRESS_H

#include <feaccel.h>

/* Draw a bar on stderr for the long work on ctx when stderr is a terminal
 * (redrawn at most every 0.1 s); nothing otherwise. */
void bench_progress_bar_attach(fea_context *ctx);

/* The silences of one timed call: begin before it, end after it. */
typedef struct bench_progress_watch {
  double start, last, longest; /* seconds; longest: the longest gap so far */
  long calls;
  int bar;                         /* also draw the bar */
  char phase[64];                  /* the phase of the latest call */
  char longest_after[64];          /* the phase whose call the longest gap followed ("start") */
  char longest_before[64];         /* the phase whose call ended it ("end") */
  double fraction;                 /* the fraction of the latest call */
  double cpu_last, longest_cpu;    /* the same gaps in the calling thread's CPU time */
  double longest_from, longest_to; /* the fractions around the longest gap */
} bench_progress_watch;

/* Install a callback on ctx that times every report (interval 0). */
void bench_progress_watch_begin(bench_progress_watch *w, fea_context *ctx);
/* Count the gap from the last call to now, and put the bar callback back. */
void bench_progress_watch_end(bench_progress_watch *w, fea_context *ctx);

#endif
