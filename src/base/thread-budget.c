/* The thread budget (thread-budget.h): the others' load sampled from
 * /proc/stat at most every SAMPLE_MS, the policy option, and the decision.
 *
 * /proc/stat counts each CPU's idle time in 10 ms ticks, so one window of
 * 25 ms would resolve a core's load only to 0.4; the others' load is
 * therefore measured over the span of the last RING samples (about
 * FEA_BUDGET_WINDOW_MS and more), and a change of the load shows within
 * about that span. Busy is counted as the CPU time that was not idle
 * (iowait is idle; a hypervisor's steal is not): cpus x wall - idle, less
 * this process's own CPU time, whose threads spin or work on those CPUs as
 * well. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "environment.h"
#include "internal/error.h"
#include "resource.h"
#include "thread-budget.h"

#define SAMPLE_MS 25 /* at most one sample per this */
#define RING 4       /* samples kept: the window spans up to RING - 1 gaps */
#define SET_WORDS 16 /* CPUs 0 .. 1023 */
#define STAT_BYTES 65536

typedef struct sample {
  long long wall_ns, own_ns;
  unsigned long long idle; /* jiffies */
} sample;

static pthread_once_t set_once = PTHREAD_ONCE_INIT;
static unsigned long long cpu_set_bits[SET_WORDS];
static int set_words; /* 0: the affinity could not be read, every CPU counts */

static _Atomic long long next_sample_ns; /* coarse clock; 0: sample at the first call */
static atomic_int others_milli = -1;     /* the others' load in thousandths of a core */
static atomic_int sample_cpus;
static atomic_flag sampling = ATOMIC_FLAG_INIT;
static atomic_int test_cap; /* fea_thread_budget_cap; 0: none */
/* Only the thread that holds `sampling` touches these. */
static sample ring[RING];
static int ring_count, ring_next;
static char stat_text[STAT_BYTES];

static void read_affinity(void) {
  cpu_set_t cs;
  CPU_ZERO(&cs);
  if (sched_getaffinity(0, sizeof cs, &cs) != 0) return;
  for (int c = 0; c < CPU_SETSIZE && c < 64 * SET_WORDS; c++)
    if (CPU_ISSET(c, &cs)) cpu_set_bits[c / 64] |= 1ull << (c % 64);
  set_words = SET_WORDS;
}

void fea_thread_budget_init(void) { pthread_once(&set_once, read_affinity); }

static long long clock_ns(clockid_t id) {
  struct timespec ts;
  if (clock_gettime(id, &ts) != 0) return 0;
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int fea_thread_budget_parse_stat(const char *text, const unsigned long long *set, int words,
                                 unsigned long long *total, unsigned long long *idle, int *cpus) {
  *total = *idle = 0;
  *cpus = 0;
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    /* "cpuN v0 v1 ...": N a number (the "cpu " line sums them all) */
    if (strncmp(p, "cpu", 3) != 0 || p[3] < '0' || p[3] > '9') continue;
    char *end;
    const unsigned long n = strtoul(p + 3, &end, 10);
    if (*end != ' ') continue;
    if (words > 0 && (n >= 64ul * (unsigned long)words || !(set[n / 64] >> (n % 64) & 1))) continue;
    /* user nice system idle iowait irq softirq steal (guest time is in user) */
    unsigned long long v[8] = {0};
    const char *q = end;
    int k = 0;
    for (; k < 8; k++) {
      while (*q == ' ') q++;
      if (*q < '0' || *q > '9') break;
      v[k] = strtoull(q, &end, 10);
      q = end;
    }
    if (k < 4) continue; /* not a CPU line after all */
    for (int j = 0; j < k; j++) *total += v[j];
    *idle += v[3] + v[4];
    ++*cpus;
  }
  return *cpus > 0 ? 0 : -1;
}

/* The per-CPU lines of /proc/stat (the file goes on with interrupt counts:
 * reading stops once past the CPUs). Returns 0 or -1. */
static int read_stat(void) {
  const int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t used = 0;
  for (;;) {
    const ssize_t got = read(fd, stat_text + used, sizeof stat_text - 1 - used);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    used += (size_t)got;
    stat_text[used] = '\0';
    if (used == sizeof stat_text - 1 ||
        strstr(stat_text + (used > (size_t)got + 8 ? used - (size_t)got - 8 : 0), "\nintr"))
      break;
  }
  close(fd);
  stat_text[used] = '\0';
  return used > 0 ? 0 : -1;
}

/* Take a sample (one thread at a time; the others go on with the last
 * value) and publish the others' load over the ring's span. */
static void take_sample(long long now_coarse) {
  if (atomic_flag_test_and_set_explicit(&sampling, memory_order_acquire)) return;
  fea_thread_budget_init();
  unsigned long long total, idle;
  int cpus;
  long long next = now_coarse + SAMPLE_MS * 1000000LL;
  if (read_stat() == 0 &&
      fea_thread_budget_parse_stat(stat_text, cpu_set_bits, set_words, &total, &idle, &cpus) == 0) {
    const sample s = {clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_PROCESS_CPUTIME_ID), idle};
    const sample *old = ring_count ? &ring[(ring_next - ring_count + RING) % RING] : NULL;
    /* A window starts at the oldest kept sample; one much older than the
     * ring's span (the process did not ask for a while) still gives the
     * mean load since then, and the next samples the current one. */
    const long long wall = old ? s.wall_ns - old->wall_ns : 0;
    if (old && wall >= FEA_BUDGET_WINDOW_MS * 1000000LL && s.idle >= old->idle) {
      const double tick_ns = 1e9 / (double)sysconf(_SC_CLK_TCK);
      const double idle_cores = (double)(s.idle - old->idle) * tick_ns / (double)wall;
      const double own_cores = (double)(s.own_ns - old->own_ns) / (double)wall;
      double others = (double)cpus - idle_cores - own_cores;
      others = others < 0 ? 0 : others > cpus ? cpus : others;
      atomic_store_explicit(&others_milli, (int)(others * 1000.0 + 0.5), memory_order_relaxed);
      atomic_store_explicit(&sample_cpus, cpus, memory_order_relaxed);
    }
    ring[ring_next] = s;
    ring_next = (ring_next + 1) % RING;
    if (ring_count < RING) ring_count++;
    /* Wait for a window's worth before the first estimate. */
  } else {
    atomic_store_explicit(&others_milli, -1, memory_order_relaxed);
    next = now_coarse + 1000000000LL; /* no /proc here: ask again in a second */
  }
  atomic_store_explicit(&next_sample_ns, next, memory_order_relaxed);
  atomic_flag_clear_explicit(&sampling, memory_order_release);
}

int fea_thread_budget_decide(int nthreads, int cpus, double others) {
  if (nthreads < 1) return 1;
  if (others < 0 || cpus < 1) return nthreads;
  const int usable = (int)((double)cpus - others + 0.25);
  return usable < 1 ? 1 : usable < nthreads ? usable : nthreads;
}

int fea_thread_budget(const fea_context *ctx) {
  const int n = ctx->nthreads;
  if (n <= 1) return 1;
  if (ctx->adapt != FEA_THREADS_ADAPT_LOAD) return n;
  const long long now = clock_ns(CLOCK_MONOTONIC_COARSE);
  if (now >= atomic_load_explicit(&next_sample_ns, memory_order_relaxed)) take_sample(now);
  const int milli = atomic_load_explicit(&others_milli, memory_order_relaxed);
  const int t = fea_thread_budget_decide(n,
                                         atomic_load_explicit(&sample_cpus, memory_order_relaxed),
                                         milli < 0 ? -1.0 : milli / 1000.0);
  const int cap = atomic_load_explicit(&test_cap, memory_order_relaxed);
  return cap > 0 && t > cap ? cap : t;
}

void fea_thread_budget_cap(int cap) {
  atomic_store_explicit(&test_cap, cap > 0 ? cap : 0, memory_order_relaxed);
}

double fea_thread_budget_others(int *cpus) {
  if (cpus) *cpus = atomic_load_explicit(&sample_cpus, memory_order_relaxed);
  const int milli = atomic_load_explicit(&others_milli, memory_order_relaxed);
  return milli < 0 ? -1.0 : milli / 1000.0;
}

static int adapt_word(const char *s, fea_thread_adapt *adapt) {
  if (strcmp(s, "load") == 0)
    *adapt = FEA_THREADS_ADAPT_LOAD;
  else if (strcmp(s, "off") == 0)
    *adapt = FEA_THREADS_ADAPT_OFF;
  else
    return 0;
  return 1;
}

fea_status fea_thread_budget_option(const fea_resource_opts *opts, fea_thread_adapt *adapt) {
  *adapt = FEA_THREADS_ADAPT_LOAD;
  const char *opt = opts ? fea_resource_opt(opts, "adapt") : NULL;
  if (opt) {
    FEA_CHECK(adapt_word(opt, adapt), NULL, FEA_ERR_INVALID_ARG,
              "option adapt=%s is not 'load' or 'off'", opt);
    return FEA_SUCCESS;
  }
  int set;
  return fea_env_threads_adapt(&set, adapt);
}
