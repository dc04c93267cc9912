/* The `contention` case: the operator apply and a small direct solve on a
 * machine where another process holds a core (issue #26, "Robust
 * threading"; docs/backends.md, "Threads on a shared machine").
 *
 * Three works: a 2D Q1 operator apply (the operator fea_operator_create
 * picks) on about 90k free DoFs and on a larger mesh, and the setup plus
 * solve of the multifrontal solver on a 2D B-spline problem of a few
 * thousand DoFs. Each is timed on one thread with the machine idle, and on
 * N threads (--threads, default 2) idle and with a busy-looping child
 * process pinned to the last CPU the bench may use, with the threads
 * following the load (adapt=load) and with every region on all N
 * (adapt=off, the behaviour before the thread budget). The
 * configurations alternate within each repetition, so that a slow spell of
 * the machine hits them alike; figures are medians over --reps. The ratio
 * busy_over_one (N threads busy / one thread idle) is the figure,
 * against its limit of 2.
 *
 * The child is killed on every path: after each busy phase, on SIGINT,
 * SIGTERM and SIGHUP (the handler kills it and re-raises), and by the
 * kernel should the bench die otherwise (PR_SET_PDEATHSIG). */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "discretization.h"
#include "report.h"
#include "base/thread-budget.h"
#include "timing.h"

#define CASE_NAME "contention"
#define LIMIT 2.0   /* the issue's: N threads busy at most 2x one thread idle */
#define WARM_S 0.25 /* before each sample: long enough for the budget to see the load */
#define MAX_REPS 1000

/* ------------------------------------------------------------------------ */
/* The busy child                                                            */

static volatile sig_atomic_t busy_pid; /* 0: none running */
static struct sigaction saved[3];
static const int caught[3] = {SIGINT, SIGTERM, SIGHUP};

static void busy_stop(void) {
  const pid_t pid = (pid_t)busy_pid;
  if (pid <= 0) return;
  busy_pid = 0;
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
}

static void on_signal(int sig) {
  const pid_t pid = (pid_t)busy_pid;
  if (pid > 0) kill(pid, SIGKILL); /* async-signal-safe; the kernel reaps it with us */
  signal(sig, SIG_DFL);
  raise(sig);
}

static void handlers_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int k = 0; k < 3; k++) sigaction(caught[k], &sa, &saved[k]);
}

static void handlers_restore(void) {
  for (int k = 0; k < 3; k++) sigaction(caught[k], &saved[k], NULL);
}

/* The highest CPU this process may run on, or -1. */
static int last_cpu(void) {
  cpu_set_t cs;
  CPU_ZERO(&cs);
  if (sched_getaffinity(0, sizeof cs, &cs) != 0) return -1;
  for (int c = CPU_SETSIZE - 1; c >= 0; c--)
    if (CPU_ISSET(c, &cs)) return c;
  return -1;
}

/* Fork a child that spins on `cpu` until killed. 0, or -1 with a message. */
static int busy_start(int cpu) {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    perror("feaccel-bench: " CASE_NAME ": fork");
    return -1;
  }
  if (pid == 0) {
    /* Only async-signal-safe calls here: the parent has OpenMP threads. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0); /* the parent died before the prctl */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
    volatile unsigned long spin = 0;
    for (;;) spin++;
  }
  busy_pid = pid;
  /* Let it get going before anything is timed. */
  const struct timespec settle = {0, 20 * 1000 * 1000};
  nanosleep(&settle, NULL);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The works                                                                 */

typedef struct case_params {
  long long n_apply, n_large, n_direct, p_direct;
  int threads, reps;
  double sample_s;
  int adapt_load, adapt_off; /* which policies to measure */
} case_params;

enum { W_APPLY, W_APPLY_LARGE, W_DIRECT, W_N };

/* One work on one context: what it runs, and its objects. */
typedef struct work {
  int kind;
  fea_context *ctx;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_operator *op;
  fea_vector *x, *y;
  fea_solver *solver;
  double *sol;
  fea_index nfree;
  char kernel[64];
} work;

static void work_free(work *w) {
  fea_solver_destroy(&w->solver);
  fea_vector_destroy(&w->x);
  fea_vector_destroy(&w->y);
  fea_operator_destroy(&w->op);
  fea_problem_destroy(&w->pb);
  fea_space_destroy(&w->space);
  fea_mesh_destroy(&w->mesh);
  free(w->sol);
  memset(w, 0, sizeof *w);
}

static fea_status work_make(fea_context *ctx, int kind, const case_params *cp, work *w) {
  memset(w, 0, sizeof *w);
  w->kind = kind;
  w->ctx = ctx;
  fea_status s;
  if (kind == W_DIRECT) {
    const bench_family fam = {"bspline", 2, (int)cp->p_direct};
    s = bench_make_space(ctx, &fam, (fea_index)cp->n_direct, &w->mesh, &w->space);
    if (s == FEA_SUCCESS) s = bench_make_sine_problem(w->space, 2, &w->pb);
    if (s == FEA_SUCCESS) s = fea_problem_get_num_free_dofs(w->pb, &w->nfree);
    if (s == FEA_SUCCESS)
      s = fea_solver_create_multifrontal(ctx, w->space, w->pb, NULL, &w->solver);
    if (s == FEA_SUCCESS) {
      w->sol = malloc((size_t)w->nfree * sizeof *w->sol + 1);
      if (!w->sol) s = FEA_ERR_OUT_OF_MEMORY;
    }
    snprintf(w->kernel, sizeof w->kernel, "multifrontal setup+solve, b-spline p=%lld",
             cp->p_direct);
    return s;
  }
  const bench_family fam = {"Q", 2, 1};
  const fea_index n = (fea_index)(kind == W_APPLY ? cp->n_apply : cp->n_large);
  s = bench_make_space(ctx, &fam, n, &w->mesh, &w->space);
  if (s == FEA_SUCCESS) s = bench_make_sine_problem(w->space, 2, &w->pb);
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  if (s == FEA_SUCCESS) s = fea_operator_create(ctx, w->pb, &d, &w->op);
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  if (s == FEA_SUCCESS) s = fea_operator_get_info(w->op, &info);
  w->nfree = info.rows;
  snprintf(w->kernel, sizeof w->kernel, "%s", info.kernel);
  if (s == FEA_SUCCESS) s = fea_vector_create(ctx, w->nfree, FEA_F64, &w->x);
  if (s == FEA_SUCCESS) s = fea_vector_create(ctx, w->nfree, FEA_F64, &w->y);
  if (s == FEA_SUCCESS) s = fea_vector_set_all(w->x, 1.0);
  return s;
}

/* One unit of the work: an apply, or a setup and a solve. */
static fea_status work_once(work *w) {
  if (w->kind == W_DIRECT) {
    fea_status s = fea_solver_setup(w->solver);
    if (s == FEA_SUCCESS) s = fea_solver_solve(w->solver, 1, NULL, 0, w->sol, w->nfree);
    return s;
  }
  return fea_operator_apply(w->op, w->x, w->y);
}

/* Run the work for WARM_S (the thread budget sees the load meanwhile), then
 * time units for about sample_s: the mean seconds per unit. */
static fea_status work_sample(work *w, double sample_s, double *per_unit) {
  fea_status s = FEA_SUCCESS;
  double t0 = bench_now();
  int units = 0;
  while (s == FEA_SUCCESS && (bench_now() - t0 < WARM_S || units < 1)) {
    s = work_once(w);
    units++;
  }
  const double each = (bench_now() - t0) / units;
  int k = (int)ceil(sample_s / each);
  k = k < 1 ? 1 : k > 100000 ? 100000 : k;
  t0 = bench_now();
  for (int j = 0; j < k && s == FEA_SUCCESS; j++) s = work_once(w);
  *per_unit = (bench_now() - t0) / k;
  return s;
}

/* Mean nanoseconds of a fea_thread_budget call over about 0.2 s of calls:
 * the load's samples (one per 25 ms at most) are in the mean. */
static double budget_call_ns(const fea_context *ctx) {
  long long calls = 0;
  int sink = 0;
  const double t0 = bench_now();
  double t = t0;
  while (t - t0 < 0.2) {
    for (int k = 0; k < 1000; k++) sink += fea_thread_budget(ctx);
    calls += 1000;
    t = bench_now();
  }
  return sink > 0 ? (t - t0) / (double)calls * 1e9 : 0.0;
}

/* ------------------------------------------------------------------------ */
/* The measurement                                                           */

/* Configurations, timed in this order within a repetition (the busy ones
 * with the child running, load and off swapped every other repetition). */
enum { C_ONE_IDLE, C_LOAD_IDLE, C_OFF_IDLE, C_LOAD_BUSY, C_OFF_BUSY, C_N };

typedef struct series {
  double t[C_N][MAX_REPS];
  int busy_threads[MAX_REPS]; /* the load context's budget at the end of its busy sample */
  double others[MAX_REPS];    /* the others' load it saw, in cores */
} series;

static int measure(bench_report *rep, fea_context *const ctxs[3], int kind, const case_params *cp,
                   int cpu) {
  work w[3]; /* one thread; N load; N off */
  memset(w, 0, sizeof w);
  series *sr = calloc(1, sizeof *sr);
  int rc = BENCH_OK;
  fea_status s = sr ? FEA_SUCCESS : FEA_ERR_OUT_OF_MEMORY;
  for (int c = 0; c < 3 && s == FEA_SUCCESS; c++)
    if (ctxs[c]) s = work_make(ctxs[c], kind, cp, &w[c]);
  if (s != FEA_SUCCESS) {
    rc = bench_fail("building the work", s);
    goto done;
  }
  for (int r = 0; r < cp->reps && s == FEA_SUCCESS; r++) {
    s = work_sample(&w[0], cp->sample_s, &sr->t[C_ONE_IDLE][r]);
    if (s == FEA_SUCCESS && ctxs[1]) s = work_sample(&w[1], cp->sample_s, &sr->t[C_LOAD_IDLE][r]);
    if (s == FEA_SUCCESS && ctxs[2]) s = work_sample(&w[2], cp->sample_s, &sr->t[C_OFF_IDLE][r]);
    if (s != FEA_SUCCESS) break;
    if (busy_start(cpu) < 0) {
      rc = BENCH_FAILED;
      goto done;
    }
    for (int q = 0; q < 2 && s == FEA_SUCCESS; q++) {
      const int load = (q == 0) == (r % 2 == 0); /* load first on even repetitions */
      if (load && ctxs[1]) {
        s = work_sample(&w[1], cp->sample_s, &sr->t[C_LOAD_BUSY][r]);
        sr->busy_threads[r] = fea_thread_budget(ctxs[1]);
        sr->others[r] = fea_thread_budget_others(NULL);
      } else if (!load && ctxs[2]) {
        s = work_sample(&w[2], cp->sample_s, &sr->t[C_OFF_BUSY][r]);
      }
    }
    busy_stop();
  }
  if (s != FEA_SUCCESS) {
    rc = bench_fail(kind == W_DIRECT ? "the direct solve" : "the apply", s);
    goto done;
  }
  const int R = cp->reps;
  const double one = bench_median(sr->t[C_ONE_IDLE], R);
  for (int pol = 0; pol < 2; pol++) {
    const int c = 1 + pol;
    if (!ctxs[c]) continue;
    const double idle = bench_median(sr->t[pol ? C_OFF_IDLE : C_LOAD_IDLE], R);
    const double busy = bench_median(sr->t[pol ? C_OFF_BUSY : C_LOAD_BUSY], R);
    bench_record rec;
    s = bench_record_init(&rec, CASE_NAME, ctxs[c]);
    if (s < 0) {
      rc = bench_fail("bench_record_init", s);
      goto done;
    }
    bench_param_str(&rec, "work",
                    kind == W_DIRECT  ? "direct"
                    : kind == W_APPLY ? "apply"
                                      : "apply-large");
    bench_param_str(&rec, "adapt", pol ? "off" : "load");
    bench_param_int(&rec, "dofs", w[c].nfree);
    bench_param_int(&rec, "reps", R);
    bench_param_int(&rec, "busy_cpu", cpu);
    bench_param_str(&rec, "kernel", w[c].kernel);
    bench_metric(&rec, "one_idle_s", one);
    bench_metric(&rec, "idle_s", idle);
    bench_metric(&rec, "busy_s", busy);
    bench_metric(&rec, "idle_speedup", one / idle);
    bench_metric(&rec, "busy_over_one", busy / one);
    bench_metric(&rec, "limit", LIMIT);
    if (!pol && kind == W_APPLY) bench_metric(&rec, "budget_call_ns", budget_call_ns(ctxs[c]));
    if (!pol) {
      double bt[MAX_REPS];
      for (int r = 0; r < R; r++) bt[r] = sr->busy_threads[r];
      bench_metric(&rec, "busy_threads", bench_median(bt, R));
      bench_metric(&rec, "others_cores", bench_median(sr->others, R));
    }
    bench_report_emit(rep, &rec);
  }
done:
  busy_stop();
  for (int c = 0; c < 3; c++) work_free(&w[c]);
  free(sr);
  return rc;
}

static int open_ctx(const char *base, const char *opts, fea_context **ctx) {
  char resource[256];
  snprintf(resource, sizeof resource, "%s%c%s", base, strchr(base, ':') ? ',' : ':', opts);
  const fea_status s = fea_context_create(resource, ctx);
  if (s == FEA_SUCCESS) return BENCH_OK;
  fprintf(stderr, "feaccel-bench: %s: context %s: %s\n", CASE_NAME, resource,
          fea_context_last_error(NULL));
  return s == FEA_ERR_INVALID_ARG ? BENCH_USAGE : BENCH_FAILED;
}

static int run(const bench_options *opts, int argc, char **argv) {
  case_params cp = {300, 1000, 60, 2, opts->threads ? opts->threads : 2, opts->reps, 0.05, 1, 1};
  long long v;
  for (int i = 0; i < argc; i++) {
    const char *val;
    int got;
    if ((got = bench_option_value(argc, argv, &i, "--n", &val)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--n", val, 2, 100000, &cp.n_apply) < 0)
        return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--n-large", &val)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--n-large", val, 0, 100000, &cp.n_large) < 0)
        return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--direct-n", &val)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--direct-n", val, 0, 10000, &cp.n_direct) < 0)
        return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--direct-p", &val)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--direct-p", val, 1, 8, &cp.p_direct) < 0)
        return BENCH_USAGE;
    } else if ((got = bench_option_value(argc, argv, &i, "--sample-ms", &val)) != 0) {
      if (got < 0 || bench_parse_ll(CASE_NAME, "--sample-ms", val, 1, 60000, &v) < 0)
        return BENCH_USAGE;
      cp.sample_s = (double)v * 1e-3;
    } else if ((got = bench_option_value(argc, argv, &i, "--adapt", &val)) != 0) {
      if (got < 0 || (strcmp(val, "load") && strcmp(val, "off") && strcmp(val, "both"))) {
        fprintf(stderr, "feaccel-bench: %s: --adapt must be load, off or both\n", CASE_NAME);
        return BENCH_USAGE;
      }
      cp.adapt_load = strcmp(val, "off") != 0;
      cp.adapt_off = strcmp(val, "load") != 0;
    } else {
      fprintf(stderr, "feaccel-bench: %s: unknown option '%s'\n", CASE_NAME, argv[i]);
      return BENCH_USAGE;
    }
  }
  if (cp.reps > MAX_REPS) {
    fprintf(stderr, "feaccel-bench: %s: at most %d --reps\n", CASE_NAME, MAX_REPS);
    return BENCH_USAGE;
  }
  const int cpu = last_cpu();
  if (cpu < 1) {
    fprintf(stderr, "feaccel-bench: %s: needs at least two CPUs (a busy one and a free one)\n",
            CASE_NAME);
    return BENCH_FAILED;
  }
  const char *base = opts->backend ? opts->backend : "/cpu/threads";
  fea_context *ctxs[3] = {NULL, NULL, NULL};
  char o[64];
  int rc = open_ctx(base, "threads=1", &ctxs[0]);
  snprintf(o, sizeof o, "threads=%d,adapt=load", cp.threads);
  if (rc == BENCH_OK && cp.adapt_load) rc = open_ctx(base, o, &ctxs[1]);
  snprintf(o, sizeof o, "threads=%d,adapt=off", cp.threads);
  if (rc == BENCH_OK && cp.adapt_off) rc = open_ctx(base, o, &ctxs[2]);
  bench_report rep;
  bench_report_init(&rep, opts);
  handlers_install();
  if (rc == BENCH_OK) rc = measure(&rep, ctxs, W_APPLY, &cp, cpu);
  if (rc == BENCH_OK && cp.n_large) rc = measure(&rep, ctxs, W_APPLY_LARGE, &cp, cpu);
  if (rc == BENCH_OK && cp.n_direct) rc = measure(&rep, ctxs, W_DIRECT, &cp, cpu);
  busy_stop();
  handlers_restore();
  if (rc == BENCH_OK) {
    bench_report_note(&rep,
                      "one_idle_s: one thread, machine idle; idle_s, busy_s: %d threads without "
                      "and with a child process spinning on CPU %d; medians of %d samples of "
                      "about %.0f ms each, after %.0f ms of warm-up per sample",
                      cp.threads, cpu, cp.reps, cp.sample_s * 1e3, WARM_S * 1e3);
    bench_report_note(&rep,
                      "adapt=load: regions use the threads the load leaves cores for "
                      "(busy_threads, others_cores: what the budget saw); adapt=off: every "
                      "region on all %d (the behaviour before); limit: busy_over_one <= %.0f; "
                      "budget_call_ns: mean cost of the thread-count decision per region",
                      cp.threads, LIMIT);
  }
  for (int c = 0; c < 3; c++) fea_context_destroy(&ctxs[c]);
  return rc;
}

const bench_case bench_case_contention = {
    .name = CASE_NAME,
    .description = "apply and small direct solve on N threads with a busy process on one core",
    .usage =
        "options (before them, --threads N sets the busy runs' threads, default 2;\n"
        "--backend a CPU resource without threads= or adapt=, default /cpu/threads):\n"
        "  --n N          Q1 cells per direction of the apply (default 300: 89k DoFs)\n"
        "  --n-large N    cells of the larger apply (default 1000; 0: leave it out)\n"
        "  --direct-n N   B-spline elements per direction of the direct solve\n"
        "                 (default 60; 0: leave it out)\n"
        "  --direct-p P   its degree (default 2)\n"
        "  --sample-ms M  time per sample (default 50)\n"
        "  --adapt A      load, off or both (default): the thread policies measured\n",
    .run = run,
};
