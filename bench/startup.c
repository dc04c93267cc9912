/* feaccel-startup: what linking libfeaccel.so costs a program that does not
 * use it on a run, and what its first use costs. It runs a child linked to
 * the library that only asks for its version (bench/startup-child.c), the
 * same child without the library, and optionally one that also creates a
 * /cpu/ref context (the first use), each RUNS times by
 * fork+exec, and prints the median wall time from fork to the child's exit
 * and the median peak resident set (getrusage's ru_maxrss of the child),
 * and the ratios to the child without the library.
 *
 *   feaccel-startup [--runs N] LINKED_CHILD PLAIN_CHILD [FIRST_USE_CHILD]
 *
 * A measurement for docs/results/startup.md, with no target: exit status 0
 * when every child exited 0, 1 when one failed, 2 on a usage error. */
#define _DEFAULT_SOURCE /* wait4 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MAX_RUNS = 1000 };

typedef struct startup_figures {
  double seconds; /* median wall time of one fork+exec+exit */
  double rss_mib; /* median peak resident set of the child */
} startup_figures;

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *values, int n) {
  qsort(values, (size_t)n, sizeof *values, compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One fork+exec of program; its wall time and peak RSS. Returns 0, or -1
 * (message printed) when it could not be started or did not exit 0. */
static int run_once(const char *program, double *seconds, double *rss_mib) {
  double start = now_seconds();
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "feaccel-startup: fork: %s\n", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    execl(program, program, (char *)NULL);
    fprintf(stderr, "feaccel-startup: cannot run %s: %s\n", program, strerror(errno));
    _exit(127);
  }
  int status;
  struct rusage usage;
  if (wait4(pid, &status, 0, &usage) < 0) {
    fprintf(stderr, "feaccel-startup: wait4: %s\n", strerror(errno));
    return -1;
  }
  *seconds = now_seconds() - start;
  *rss_mib = (double)usage.ru_maxrss / 1024.0; /* Linux reports KiB */
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "feaccel-startup: %s did not exit 0 (status 0x%x)\n", program, status);
    return -1;
  }
  return 0;
}

/* Two children run in turn, round after round, so that a change of the
 * machine's load during the measurement reaches both alike (run in blocks,
 * the shared development VM moved a block's median by 10 - 20 %). The
 * first-use child is measured in a pass of its own against the plain one:
 * run in between, its 8 MiB of libraries and thread pools slowed the
 * linked child's next start by some 5 %. */
static int measure_pair(const char *a, const char *b, int runs, startup_figures out[2]) {
  static double seconds[2][MAX_RUNS], rss[2][MAX_RUNS];
  const char *programs[2] = {a, b};
  double ignored_s, ignored_rss;
  /* One untimed run each first, so that both children start from a warm page cache. */
  for (int p = 0; p < 2; p++)
    if (run_once(programs[p], &ignored_s, &ignored_rss) != 0) return -1;
  for (int i = 0; i < runs; i++)
    for (int p = 0; p < 2; p++)
      if (run_once(programs[p], &seconds[p][i], &rss[p][i]) != 0) return -1;
  for (int p = 0; p < 2; p++) {
    out[p].seconds = median(seconds[p], runs);
    out[p].rss_mib = median(rss[p], runs);
  }
  return 0;
}

int main(int argc, char **argv) {
  int runs = 200, arg = 1;
  if (arg + 1 < argc && strcmp(argv[arg], "--runs") == 0) {
    char *end;
    long n = strtol(argv[arg + 1], &end, 10);
    if (*end != '\0' || n < 1 || n > MAX_RUNS) {
      fprintf(stderr, "feaccel-startup: --runs '%s' is not a whole number in [1, %d]\n",
              argv[arg + 1], MAX_RUNS);
      return 2;
    }
    runs = (int)n;
    arg += 2;
  }
  if (argc - arg != 2 && argc - arg != 3) {
    fputs("usage: feaccel-startup [--runs N] LINKED_CHILD PLAIN_CHILD [FIRST_USE_CHILD]\n", stderr);
    return 2;
  }
  const int first_use = argc - arg == 3;
  startup_figures fig[2], fig_used[2];
  if (measure_pair(argv[arg], argv[arg + 1], runs, fig) != 0) return 1;
  if (first_use && measure_pair(argv[arg + 2], argv[arg + 1], runs, fig_used) != 0) return 1;
  const startup_figures linked = fig[0], plain = fig[1];
  printf("start-up, median of %d fork+exec runs, in turn     wall [ms]   peak RSS [MiB]\n", runs);
  printf("  linked to libfeaccel.so, version string only %10.3f   %14.2f\n", 1e3 * linked.seconds,
         linked.rss_mib);
  printf("  not linked                                   %10.3f   %14.2f\n", 1e3 * plain.seconds,
         plain.rss_mib);
  printf("  ratio linked / not linked                    %10.3f   %14.3f\n",
         linked.seconds / plain.seconds, linked.rss_mib / plain.rss_mib);
  if (first_use) {
    const startup_figures used = fig_used[0];
    printf("  first use: a /cpu/ref context                %10.3f   %14.2f\n", 1e3 * used.seconds,
           used.rss_mib);
    printf("  ratio first use / not linked (same pass)     %10.3f   %14.3f\n",
           used.seconds / fig_used[1].seconds, used.rss_mib / fig_used[1].rss_mib);
  }
  return 0;
}
