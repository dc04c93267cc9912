/* feaccel-bench's progress callbacks (progress.h): a bar on a terminal, and
 * the watch that measures the longest time between two progress calls. */
#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "timing.h"

/* The calling thread's CPU time: a gap without the time other processes
 * took the core (the shared machine). */
static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct bar_state {
  double drawn; /* when the bar was last drawn */
  char phase[64];
  int open; /* a bar line is on the screen */
} bar_state;

static bar_state bar;

static void bar_draw(const char *phase, double fraction) {
  const double now = bench_now();
  const int fresh = strcmp(bar.phase, phase) != 0;
  if (!fresh && fraction < 1.0 && now - bar.drawn < 0.1) return;
  bar.drawn = now;
  snprintf(bar.phase, sizeof bar.phase, "%s", phase);
  enum { WIDTH = 30 };
  const int fill = (int)(fraction * WIDTH + 0.5);
  char cells[WIDTH + 1];
  for (int k = 0; k < WIDTH; k++) cells[k] = k < fill ? '#' : '.';
  cells[WIDTH] = '\0';
  fprintf(stderr, "\r%-36.36s [%s] %3.0f%%", phase, cells, 100.0 * fraction);
  bar.open = fraction < 1.0;
  if (!bar.open) fputc('\n', stderr);
  fflush(stderr);
}

static int bar_callback(void *user, const char *phase, double fraction) {
  (void)user;
  bar_draw(phase, fraction);
  return 0;
}

void bench_progress_bar_attach(fea_context *ctx) {
  if (!ctx || !isatty(STDERR_FILENO)) return;
  /* Cannot fail for a context and an interval in range; a bar is optional anyway. */
  const fea_status st = fea_context_set_progress_callback(ctx, bar_callback, NULL, 0.1);
  (void)st;
}

static int watch_callback(void *user, const char *phase, double fraction) {
  bench_progress_watch *w = user;
  const double now = bench_now(), gap = now - w->last, cpu = thread_cpu_s();
  if (cpu - w->cpu_last > w->longest_cpu) w->longest_cpu = cpu - w->cpu_last;
  w->cpu_last = cpu;
  if (gap > w->longest) {
    w->longest = gap;
    snprintf(w->longest_after, sizeof w->longest_after, "%s", w->calls ? w->phase : "start");
    snprintf(w->longest_before, sizeof w->longest_before, "%s", phase);
    w->longest_from = w->fraction;
    w->longest_to = fraction;
  }
  w->last = now;
  w->fraction = fraction;
  w->calls++;
  snprintf(w->phase, sizeof w->phase, "%s", phase);
  if (w->bar) bar_draw(phase, fraction);
  return 0;
}

void bench_progress_watch_begin(bench_progress_watch *w, fea_context *ctx) {
  memset(w, 0, sizeof *w);
  w->bar = isatty(STDERR_FILENO);
  w->start = w->last = bench_now();
  w->cpu_last = thread_cpu_s();
  const fea_status st = fea_context_set_progress_callback(ctx, watch_callback, w, 0.0);
  (void)st;
}

void bench_progress_watch_end(bench_progress_watch *w, fea_context *ctx) {
  const double gap = bench_now() - w->last, cpu = thread_cpu_s() - w->cpu_last;
  if (cpu > w->longest_cpu) w->longest_cpu = cpu;
  if (gap > w->longest) {
    w->longest = gap;
    snprintf(w->longest_after, sizeof w->longest_after, "%s", w->calls ? w->phase : "start");
    snprintf(w->longest_before, sizeof w->longest_before, "end");
    w->longest_from = w->fraction;
    w->longest_to = 1.0;
  }
  const fea_status st = fea_context_set_progress_callback(ctx, NULL, NULL, 0.0);
  (void)st;
  bench_progress_bar_attach(ctx);
}
