/* The `updates` case: the thesis's microbenchmarks of protected updates
 * (Paper I; docs/assembly.md).
 *
 *   overhead    one thread adds to an array of 1..8 doubles 10^6 times, each
 *               addition of the whole array protected as one update: nothing
 *               (volatile stores), CAS per double, pthread mutex, spin lock,
 *               TSX (RTM where the CPU has it, else its forced-abort fallback
 *               path); ns per update.
 *   contention  every thread adds to its own item (one cache line each);
 *               threads 2..N write item 1 instead with probability q; ns per
 *               update and the conflicts seen (CAS retries, locks found held,
 *               transaction aborts) per potential conflict.
 *   fem         P1 assembly with one element matrix for all elements (the
 *               uniform-mesh trick) plus 1, 100 or 1000 artificial flops per
 *               element, for every strategy and thread count; speed-up over
 *               SERIAL at the same workload. --n sets its mesh (n x n squares,
 *               2 n^2 triangles; n = 46 is about Paper I's 4146 triangles).
 *   nbody       Paper I's all-pairs N-body loop (Table III): basic and blocked
 *               locks, CAS and transactions, and per-thread private copies
 *               (bench/updates-nbody.c); --particles sets its size (1024).
 * CAS, locks and TSX here are the library's techniques written as bare loops
 * (the TSX one is the library's own path, conc-tsx.c), so that one protected
 * update is timed without an element loop around it. */
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assembly/conc.h"
#include "discretization.h"
#include "disc/problem.h"
#include "report.h"
#include "timing.h"
#include "updates-nbody.h"

#define CASE_NAME "updates"

enum method { M_NOTHING, M_CAS, M_MUTEX, M_SPIN, M_TSX, M_COUNT };
static const char *const method_names[] = {"nothing", "atomic-cas", "mutex", "spin", "tsx"};

/* One item per cache line. */
typedef struct item {
  _Alignas(64) double v[8];
} item;

typedef struct lane {
  item *items;
  pthread_mutex_t *mutexes;
  atomic_flag *flags;
  void *tsx;
  fea_conc_counters *ctr;
} lane;

/* One protected update of k doubles of item i. */
static inline void update(enum method m, lane *L, int i, int k, uint64_t *rng,
                          fea_conc_counters *c) {
  double *v = L->items[i].v;
  switch (m) {
  case M_NOTHING:
    for (int j = 0; j < k; j++) ((volatile double *)v)[j] += 1.0;
    break;
  case M_CAS:
    for (int j = 0; j < k; j++)
      fea_conc_cas_add((_Atomic uint64_t *)(void *)(v + j), 1.0, 1, rng, c);
    break;
  case M_MUTEX:
    if (pthread_mutex_trylock(&L->mutexes[i])) {
      c->lock_contended++;
      pthread_mutex_lock(&L->mutexes[i]);
    }
    for (int j = 0; j < k; j++) v[j] += 1.0;
    pthread_mutex_unlock(&L->mutexes[i]);
    break;
  case M_SPIN:
    if (atomic_flag_test_and_set_explicit(&L->flags[i], memory_order_acquire)) {
      c->lock_contended++;
      while (atomic_flag_test_and_set_explicit(&L->flags[i], memory_order_acquire))
        fea_conc_pause();
    }
    for (int j = 0; j < k; j++) v[j] += 1.0;
    atomic_flag_clear_explicit(&L->flags[i], memory_order_release);
    break;
  case M_TSX: {
    static const double ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    fea_index idx[8];
    for (int j = 0; j < k; j++) idx[j] = (fea_index)i * 8 + j;
    fea_conc_tsx_apply(L->tsx, k, idx, ones, rng, c);
    break;
  }
  default: break;
  }
}

static int lane_make(lane *L, int nitems, int forced) {
  memset(L, 0, sizeof *L);
  L->items = aligned_alloc(64, (size_t)nitems * sizeof *L->items);
  L->mutexes = malloc((size_t)nitems * sizeof *L->mutexes);
  L->flags = malloc((size_t)nitems * sizeof *L->flags);
  if (!L->items || !L->mutexes || !L->flags) return -1;
  memset(L->items, 0, (size_t)nitems * sizeof *L->items);
  for (int i = 0; i < nitems; i++) {
    pthread_mutex_init(&L->mutexes[i], NULL);
    atomic_flag_clear(&L->flags[i]);
  }
  /* The TSX path addresses item i's doubles as target[8 i + j]. Forced, one
   * attempt: the figure is the fallback path's own cost, not 8 backoffs. */
  L->tsx = fea_conc_tsx_state_create(&L->items[0].v[0], 8, forced ? 1 : 8, 1, forced);
  return L->tsx ? 0 : -1;
}

static void lane_free(lane *L, int nitems) {
  if (L->mutexes)
    for (int i = 0; i < nitems; i++) pthread_mutex_destroy(&L->mutexes[i]);
  free(L->items);
  free(L->mutexes);
  free(L->flags);
  fea_conc_tsx_state_destroy(L->tsx);
}

static void sum_into(fea_conc_counters *s, const fea_conc_counters *c) {
  s->retries += c->retries;
  s->lock_contended += c->lock_contended;
  s->aborts_conflict += c->aborts_conflict;
  s->aborts_capacity += c->aborts_capacity;
  s->aborts_explicit += c->aborts_explicit;
  s->aborts_other += c->aborts_other;
  s->tx_started += c->tx_started;
  s->tx_committed += c->tx_committed;
  s->tx_fallback += c->tx_fallback;
}

/* Thesis Table 3.3's counters of a TSX record (scripts/figures draws them
 * where RTM runs): transactions started and committed, batches that took
 * the fallback lock, and the aborts by cause. */
void updates_tx_metrics(bench_record *r, uint64_t started, uint64_t committed, uint64_t fallback,
                        uint64_t conflict, uint64_t capacity, uint64_t other) {
  bench_metric(r, "tx_started", (double)started);
  bench_metric(r, "tx_committed", (double)committed);
  bench_metric(r, "tx_fallback", (double)fallback);
  bench_metric(r, "tx_aborts_conflict", (double)conflict);
  bench_metric(r, "tx_aborts_capacity", (double)capacity);
  bench_metric(r, "tx_aborts_other", (double)other);
}

static void start_record(bench_record *r, fea_context *ctx, const char *kind, const char *method,
                         int threads, int forced) {
  (void)bench_record_init(r, CASE_NAME, ctx);
  r->threads = threads;
  bench_param_str(r, "kind", kind);
  bench_param_str(r, "method", method);
  if (strcmp(method, "tsx") == 0) bench_param_str(r, "tsx_mode", forced ? "forced-abort" : "rtm");
}

static int overhead(bench_report *rep, fea_context *ctx, int reps, int forced) {
  const long long N = 1000000;
  double *times = malloc((size_t)reps * sizeof *times);
  if (!times) return bench_fail("allocating", FEA_ERR_OUT_OF_MEMORY);
  for (int m = 0; m < M_COUNT; m++)
    for (int k = 1; k <= 8; k *= 2) {
      lane L;
      if (lane_make(&L, 1, forced) < 0) {
        lane_free(&L, 1);
        free(times);
        return bench_fail("allocating", FEA_ERR_OUT_OF_MEMORY);
      }
      fea_conc_counters c;
      memset(&c, 0, sizeof c);
      uint64_t rng = 88172645463325252u;
      for (int r = -1; r < reps; r++) {
        double t0 = bench_now();
        for (long long u = 0; u < N; u++) update((enum method)m, &L, 0, k, &rng, &c);
        if (r >= 0) times[r] = bench_now() - t0;
      }
      double med = bench_median(times, reps);
      bench_record rec;
      start_record(&rec, ctx, "overhead", method_names[m], 1, forced);
      bench_param_int(&rec, "doubles_per_update", k);
      bench_param_int(&rec, "updates", N);
      bench_metric(&rec, "ns_per_update", med / (double)N * 1e9);
      if (m == M_TSX)
        updates_tx_metrics(&rec, c.tx_started, c.tx_committed, c.tx_fallback, c.aborts_conflict,
                           c.aborts_capacity, c.aborts_explicit + c.aborts_other);
      bench_report_emit(rep, &rec);
      lane_free(&L, 1);
    }
  free(times);
  return BENCH_OK;
}

static int contention(bench_report *rep, fea_context *ctx, int threads, int reps, int forced) {
  static const double qs[] = {0.0, 0.001, 0.01, 0.1, 0.25, 1.0};
  const long long N = 200000;
  double *times = malloc((size_t)reps * sizeof *times);
  if (!times) return bench_fail("allocating", FEA_ERR_OUT_OF_MEMORY);
  for (int m = M_CAS; m < M_COUNT; m++)
    for (size_t qi = 0; qi < sizeof qs / sizeof *qs; qi++) {
      lane L;
      fea_conc_counters *ctr = aligned_alloc(64, (size_t)threads * sizeof *ctr);
      if (!ctr || lane_make(&L, threads, forced) < 0) {
        free(ctr);
        free(times);
        return bench_fail("allocating", FEA_ERR_OUT_OF_MEMORY);
      }
      fea_conc_counters total;
      memset(&total, 0, sizeof total);
      /* shared item 0 is hit with probability q: threshold on 32 random bits */
      const uint64_t hit = (uint64_t)(qs[qi] * 4294967296.0);
      for (int r = -1; r < reps; r++) {
        memset(ctr, 0, (size_t)threads * sizeof *ctr);
        double t0 = bench_now();
#pragma omp parallel num_threads(threads)
        {
          const int tid = omp_get_thread_num();
          uint64_t rng = 0x9e3779b97f4a7c15u * (uint64_t)(tid + 1),
                   pick = rng ^ 0x5851f42d4c957f2du;
          for (long long u = 0; u < N; u++) {
            pick ^= pick << 13, pick ^= pick >> 7, pick ^= pick << 17;
            int target = tid > 0 && (pick & 0xffffffffu) < hit ? 0 : tid;
            update((enum method)m, &L, target, 1, &rng, &ctr[tid]);
          }
        }
        if (r >= 0) times[r] = bench_now() - t0;
        if (r == reps - 1)
          for (int t = 0; t < threads; t++) sum_into(&total, &ctr[t]);
      }
      double med = bench_median(times, reps);
      double potential = qs[qi] * (double)N * (threads - 1);
      uint64_t seen = m == M_CAS   ? total.retries
                      : m == M_TSX ? total.aborts_conflict + total.aborts_capacity +
                                         total.aborts_explicit + total.aborts_other
                                   : total.lock_contended;
      bench_record rec;
      start_record(&rec, ctx, "contention", method_names[m], threads, forced);
      bench_param_str(&rec, "q",
                      qi == 0   ? "0"
                      : qi == 1 ? "0.001"
                      : qi == 2 ? "0.01"
                      : qi == 3 ? "0.1"
                      : qi == 4 ? "0.25"
                                : "1");
      bench_param_int(&rec, "updates_per_thread", N);
      bench_metric(&rec, "ns_per_update", med / (double)N * 1e9);
      bench_metric(&rec, "conflicts", (double)seen);
      bench_metric(&rec, "conflicts_per_potential", potential > 0 ? seen / potential : 0.0);
      if (m == M_TSX)
        updates_tx_metrics(&rec, total.tx_started, total.tx_committed, total.tx_fallback,
                           total.aborts_conflict, total.aborts_capacity,
                           total.aborts_explicit + total.aborts_other);
      bench_report_emit(rep, &rec);
      lane_free(&L, threads);
      free(ctr);
    }
  free(times);
  return BENCH_OK;
}

static int fem(bench_report *rep, fea_context *ctx, int max_threads, int reps, int forced,
               long long n) {
  static const int work[] = {1, 100, 1000};
  const bench_family fam = {"P", 2, 1};
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_matrix *A = NULL;
  double Ke[9], fe[3];
  fea_status st = bench_make_space(ctx, &fam, (fea_index)n, &mesh, &space);
  if (st == FEA_SUCCESS) st = bench_make_sine_problem(space, 2, &pb);
  if (st == FEA_SUCCESS) st = fea_matrix_create_pattern(pb, &A);
  if (st == FEA_SUCCESS) st = fea_problem_element_system(pb, 0, Ke, fe);
  double *b = st == FEA_SUCCESS ? malloc((size_t)pb->num_free * sizeof *b + 1) : NULL;
  double *times = malloc((size_t)reps * sizeof *times);
  int rc = st == FEA_SUCCESS && b && times ? BENCH_OK : bench_fail("building the P1 problem", st);
  for (size_t w = 0; w < 3 && rc == BENCH_OK; w++) {
    double serial_s = 0;
    for (int s = FEA_UPDATE_SERIAL; s <= FEA_UPDATE_PRIVATE_COPIES && rc == BENCH_OK;
         s += s + 1 == FEA_UPDATE_AUTO ? 2 : 1)
      for (int t = 1; t <= (s == FEA_UPDATE_SERIAL ? 1 : max_threads) && rc == BENCH_OK; t++) {
        fea_conc_config cfg = {.threads = t,
                               .lock_stripe = 1,
                               .tsx_batch = 1,
                               .tsx_retries = forced ? 1 : 8,
                               .backoff = 1,
                               .tsx_force_abort = forced,
                               .work_flops = work[w],
                               .const_Ke = Ke,
                               .const_fe = fe};
        fea_assembly_stats stats = FEA_ASSEMBLY_STATS_INIT;
        for (int r = -1; r < reps && st == FEA_SUCCESS; r++) {
          double t0 = bench_now();
          st = fea_conc_assemble_csr(pb, A, b, (fea_update_strategy)s, &cfg, &stats);
          if (r >= 0) times[r] = bench_now() - t0;
        }
        if (st == FEA_ERR_UNSUPPORTED) { /* TSX without RTM and without --tsx-forced */
          st = FEA_SUCCESS;
          break;
        }
        if (st != FEA_SUCCESS) {
          rc = bench_fail("fea_conc_assemble_csr", st);
          break;
        }
        double med = bench_median(times, reps);
        if (s == FEA_UPDATE_SERIAL) serial_s = med;
        bench_record rec;
        start_record(&rec, ctx, "fem", fea_update_strategy_name((fea_update_strategy)s), t, forced);
        bench_param_int(&rec, "work_flops", work[w]);
        bench_param_int(&rec, "elements", space->num_elements);
        bench_metric(&rec, "time_s", med);
        bench_metric(&rec, "speedup", serial_s / med);
        bench_metric(&rec, "retries", (double)stats.retries);
        bench_metric(&rec, "lock_contended", (double)stats.lock_contended);
        bench_metric(&rec, "tx_aborts", (double)(stats.tx_started - stats.tx_committed));
        if (s == FEA_UPDATE_TSX)
          updates_tx_metrics(&rec, stats.tx_started, stats.tx_committed, stats.tx_fallback,
                             stats.aborts_conflict, stats.aborts_capacity,
                             stats.aborts_explicit + stats.aborts_other);
        bench_report_emit(rep, &rec);
      }
  }
  free(times);
  free(b);
  fea_matrix_destroy(&A);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  return rc;
}

static int run(const bench_options *opts, int argc, char **argv) {
  const char *kind = "all";
  int forced = 0;
  long long fem_n = 200, particles = 1024;
  for (int i = 0; i < argc; i++) {
    const char *v;
    int got = bench_option_value(argc, argv, &i, "--n", &v);
    if (got < 0) return BENCH_USAGE;
    if (got > 0) {
      if (bench_parse_ll(CASE_NAME, "--n", v, 2, 4096, &fem_n) < 0) return BENCH_USAGE;
      continue;
    }
    got = bench_option_value(argc, argv, &i, "--particles", &v);
    if (got < 0) return BENCH_USAGE;
    if (got > 0) {
      if (bench_parse_ll(CASE_NAME, "--particles", v, 2, 65536, &particles) < 0) return BENCH_USAGE;
      continue;
    }
    got = bench_option_value(argc, argv, &i, "--kind", &v);
    if (got < 0) return BENCH_USAGE;
    if (got > 0) {
      if (strcmp(v, "all") && strcmp(v, "overhead") && strcmp(v, "contention") &&
          strcmp(v, "fem") && strcmp(v, "nbody")) {
        fprintf(stderr,
                "feaccel-bench: %s: --kind is all, overhead, contention, fem or nbody, not '%s'\n",
                CASE_NAME, v);
        return BENCH_USAGE;
      }
      kind = v;
    } else if (strcmp(argv[i], "--tsx-forced") == 0) {
      forced = 1;
    } else {
      fprintf(stderr, "feaccel-bench: %s: unknown option '%s'\n", CASE_NAME, argv[i]);
      return BENCH_USAGE;
    }
  }
  /* Without RTM the TSX figures are those of its fallback path. */
  if (!fea_tsx_cpu_usable(NULL, 0)) forced = 1;
  int max_threads = opts->threads > 0 ? opts->threads : omp_get_num_procs();
  fea_context *ctx = NULL;
  fea_status st = fea_context_create("/cpu/ref", &ctx);
  if (st != FEA_SUCCESS) return bench_fail("fea_context_create", st);
  bench_report rep;
  bench_report_init(&rep, opts);
  int rc = BENCH_OK, all = strcmp(kind, "all") == 0;
  if (all || strcmp(kind, "overhead") == 0) rc = overhead(&rep, ctx, opts->reps, forced);
  if (rc == BENCH_OK && (all || strcmp(kind, "contention") == 0))
    rc = contention(&rep, ctx, max_threads, opts->reps, forced);
  if (rc == BENCH_OK && (all || strcmp(kind, "fem") == 0))
    rc = fem(&rep, ctx, max_threads, opts->reps, forced, fem_n);
  if (rc == BENCH_OK && (all || strcmp(kind, "nbody") == 0))
    rc = updates_nbody(&rep, ctx, max_threads, opts->reps, forced, (int)particles);
  bench_report_note(&rep,
                    "\nmedians of %d runs; tsx_mode forced-abort: no RTM here, TSX figures "
                    "are its retry/backoff/fallback-lock path.",
                    opts->reps);
  fea_context_destroy(&ctx);
  return rc;
}

const bench_case bench_case_updates = {
    .name = CASE_NAME,
    .description =
        "protected-update microbenchmarks: overhead, contention, FE assembly with artificial "
        "work, N-body",
    .usage =
        "options:\n"
        "  --kind K       all (default), overhead, contention, fem or nbody\n"
        "  --tsx-forced   TSX through its forced-abort fallback even where RTM works\n"
        "  --n N          fem: N x N squares, 2 N^2 P1 triangles (default 200; 46: about\n"
        "                 Paper I's 4146 triangles)\n"
        "  --particles P  nbody: P particles (default 1024, Paper I's)\n",
    .run = run,
};
