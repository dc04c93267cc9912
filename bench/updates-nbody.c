/* The `updates --kind nbody` benchmark: Paper I's second application
 * (Table III, thesis Fig. 3.4), the all-pairs N-body force loop whose two
 * updates per pair (f_i += df, f_j -= df) race between threads.
 *
 * Paper I's setup: 1024 particles, 40 time steps of which the last 20 are
 * timed, the outer loop spread cyclically over the threads. Its methods,
 * written here as bare loops so that only the protection differs:
 *   serial         one thread, no protection (the speed-up's reference);
 *   locks-basic    one mutex per particle, two critical sections per pair;
 *   locks-blocked  one mutex per group of 4 particles: df is computed for a
 *                  group of j at once and the group's forces are updated
 *                  under one lock, f_i is summed privately over its row and
 *                  added once; rows handed out dynamically in chunks of 16;
 *   cas-basic      compare-and-swap per force component (6 per pair);
 *   cas-blocked    the blocked loop with CAS per component (f_i privately);
 *   tsx-basic      one transaction per pair (6 doubles), the library's TSX
 *                  path (conc-tsx.c): RTM where the CPU has it, else its
 *                  retry / backoff / fallback-lock path;
 *   tsx-blocked    one transaction per group of 4 (12 doubles);
 *   private-copies a force array per thread, summed in parallel at the end
 *                  of the step (the thesis's private buffers).
 * Every method's forces of the last step are compared with the serial run's:
 * the sums are reassociated, so they agree to rounding (about 1e-15 of the
 * largest force), while one lost update moves a force by about 1/n of it; a
 * method off by more than AGREE fails the case (exit status), so the bench
 * cannot report a fast wrong loop. Softened gravity and a small step keep
 * the 40 steps far from chaos, so the positions the forces see agree too. */
#include "updates-nbody.h"

#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assembly/conc.h"
#include "timing.h"

#define STEPS 40
#define TIMED 20 /* the last TIMED steps are timed, as in Paper I */
#define GROUP 4  /* particles per lock / transaction in the blocked loops */
#define CHUNK 16 /* rows handed out at a time in the blocked loops */
#define DT 1e-4
#define EPS2 1e-2   /* softening: no close encounter amplifies rounding */
#define AGREE 1e-11 /* relative to the largest force component */

enum nb_method {
  NB_SERIAL,
  NB_LOCKS_BASIC,
  NB_LOCKS_BLOCKED,
  NB_CAS_BASIC,
  NB_CAS_BLOCKED,
  NB_TSX_BASIC,
  NB_TSX_BLOCKED,
  NB_PRIVATE,
  NB_COUNT
};
static const char *const nb_names[] = {"serial",      "locks-basic",   "locks-blocked",
                                       "cas-basic",   "cas-blocked",   "tsx-basic",
                                       "tsx-blocked", "private-copies"};

typedef struct nbody {
  int n;
  double *x0, *v0, *m;  /* the initial state, shared by every run */
  double *x, *v, *f;    /* the run's state: 3 n doubles each */
  double *priv;         /* private-copies: threads x 3 n */
  pthread_mutex_t *mtx; /* one per particle (basic) or per group (blocked) */
  void *tsx_pair, *tsx_group;
  atomic_long next; /* the blocked loops' row counter */
} nbody;

static inline void pair_force(const nbody *s, int i, int j, double df[3]) {
  const double *xi = s->x + 3 * i, *xj = s->x + 3 * j;
  double d[3] = {xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]};
  double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + EPS2;
  double w = s->m[i] * s->m[j] / (r2 * sqrt(r2));
  df[0] = w * d[0], df[1] = w * d[1], df[2] = w * d[2];
}

static inline void cas3(double *t, const double v[3], double sign, uint64_t *rng,
                        fea_conc_counters *c) {
  for (int k = 0; k < 3; k++)
    fea_conc_cas_add((_Atomic uint64_t *)(void *)(t + k), sign * v[k], 1, rng, c);
}

static inline void locked3(pthread_mutex_t *mtx, double *t, const double v[3], double sign,
                           fea_conc_counters *c) {
  if (pthread_mutex_trylock(mtx)) {
    c->lock_contended++;
    pthread_mutex_lock(mtx);
  }
  t[0] += sign * v[0], t[1] += sign * v[1], t[2] += sign * v[2];
  pthread_mutex_unlock(mtx);
}

/* The basic loops: rows cyclically over the threads, each pair's two
 * updates protected one particle at a time. */
static void forces_basic(nbody *s, enum nb_method m, int tid, int nt, uint64_t *rng,
                         fea_conc_counters *c) {
  for (int i = tid; i < s->n; i += nt)
    for (int j = i + 1; j < s->n; j++) {
      double df[3];
      pair_force(s, i, j, df);
      if (m == NB_LOCKS_BASIC) {
        locked3(&s->mtx[i], s->f + 3 * i, df, 1.0, c);
        locked3(&s->mtx[j], s->f + 3 * j, df, -1.0, c);
      } else if (m == NB_CAS_BASIC) {
        cas3(s->f + 3 * i, df, 1.0, rng, c);
        cas3(s->f + 3 * j, df, -1.0, rng, c);
      } else { /* NB_TSX_BASIC: both particles in one transaction */
        fea_index idx[6];
        double v[6];
        for (int k = 0; k < 3; k++) {
          idx[k] = 3 * (fea_index)i + k, v[k] = df[k];
          idx[3 + k] = 3 * (fea_index)j + k, v[3 + k] = -df[k];
        }
        fea_conc_tsx_apply(s->tsx_pair, 6, idx, v, rng, c);
      }
    }
}

/* The blocked loops: rows in dynamic chunks, j in groups of GROUP whose
 * forces are updated under one lock / one transaction / per-component CAS,
 * f_i summed privately over the row. */
static void forces_blocked(nbody *s, enum nb_method m, uint64_t *rng, fea_conc_counters *c) {
  const int n = s->n;
  for (;;) {
    long i0 = atomic_fetch_add_explicit(&s->next, CHUNK, memory_order_relaxed);
    if (i0 >= n) break;
    for (int i = (int)i0; i < n && i < i0 + CHUNK; i++) {
      double fi[3] = {0, 0, 0};
      for (int g0 = i + 1; g0 < n;) {
        /* the group of j: up to the next multiple of GROUP (lock boundaries) */
        int g1 = (g0 / GROUP + 1) * GROUP;
        if (g1 > n) g1 = n;
        double dfs[3 * GROUP];
        fea_index idx[3 * GROUP];
        int cnt = 0;
        for (int j = g0; j < g1; j++, cnt++) {
          pair_force(s, i, j, dfs + 3 * cnt);
          for (int k = 0; k < 3; k++) {
            fi[k] += dfs[3 * cnt + k];
            dfs[3 * cnt + k] = -dfs[3 * cnt + k];
            idx[3 * cnt + k] = 3 * (fea_index)j + k;
          }
        }
        if (m == NB_LOCKS_BLOCKED) {
          pthread_mutex_t *mtx = &s->mtx[g0 / GROUP];
          if (pthread_mutex_trylock(mtx)) {
            c->lock_contended++;
            pthread_mutex_lock(mtx);
          }
          for (int k = 0; k < 3 * cnt; k++) s->f[idx[k]] += dfs[k];
          pthread_mutex_unlock(mtx);
        } else if (m == NB_CAS_BLOCKED) {
          for (int k = 0; k < 3 * cnt; k++)
            fea_conc_cas_add((_Atomic uint64_t *)(void *)(s->f + idx[k]), dfs[k], 1, rng, c);
        } else {
          fea_conc_tsx_apply(s->tsx_group, 3 * cnt, idx, dfs, rng, c);
        }
        g0 = g1;
      }
      if (m == NB_LOCKS_BLOCKED) {
        locked3(&s->mtx[i / GROUP], s->f + 3 * i, fi, 1.0, c);
      } else if (m == NB_CAS_BLOCKED) {
        cas3(s->f + 3 * i, fi, 1.0, rng, c);
      } else {
        fea_index idx[3] = {3 * (fea_index)i, 3 * (fea_index)i + 1, 3 * (fea_index)i + 2};
        fea_conc_tsx_apply(s->tsx_group, 3, idx, fi, rng, c);
      }
    }
  }
}

/* The thesis's private buffers: no protection, a reduction per step. */
static void forces_private(nbody *s, int tid, int nt) {
  double *p = s->priv + (size_t)tid * 3 * (size_t)s->n;
  memset(p, 0, 3 * (size_t)s->n * sizeof *p);
  for (int i = tid; i < s->n; i += nt)
    for (int j = i + 1; j < s->n; j++) {
      double df[3];
      pair_force(s, i, j, df);
      for (int k = 0; k < 3; k++) p[3 * i + k] += df[k], p[3 * j + k] -= df[k];
    }
#pragma omp barrier
#pragma omp for schedule(static)
  for (long q = 0; q < 3L * s->n; q++) {
    double sum = 0;
    for (int t = 0; t < nt; t++) sum += s->priv[(size_t)t * 3 * (size_t)s->n + (size_t)q];
    s->f[q] = sum;
  }
}

/* One run of STEPS steps from the initial state; the time of the last TIMED. */
static double run_steps(nbody *s, enum nb_method m, int threads, fea_conc_counters *ctr) {
  const size_t bytes = 3 * (size_t)s->n * sizeof(double);
  memcpy(s->x, s->x0, bytes);
  memcpy(s->v, s->v0, bytes);
  double t0 = 0;
  for (int step = 0; step < STEPS; step++) {
    if (step == STEPS - TIMED) t0 = bench_now();
    memset(s->f, 0, bytes);
    atomic_store(&s->next, 0);
#pragma omp parallel num_threads(threads)
    {
      const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
      uint64_t rng = 0x9e3779b97f4a7c15u * (uint64_t)(tid + 1);
      switch (m) {
      case NB_SERIAL:
        if (tid == 0) {
          for (int i = 0; i < s->n; i++)
            for (int j = i + 1; j < s->n; j++) {
              double df[3];
              pair_force(s, i, j, df);
              for (int k = 0; k < 3; k++) s->f[3 * i + k] += df[k], s->f[3 * j + k] -= df[k];
            }
        }
        break;
      case NB_LOCKS_BASIC:
      case NB_CAS_BASIC:
      case NB_TSX_BASIC: forces_basic(s, m, tid, nt, &rng, &ctr[tid]); break;
      case NB_LOCKS_BLOCKED:
      case NB_CAS_BLOCKED:
      case NB_TSX_BLOCKED: forces_blocked(s, m, &rng, &ctr[tid]); break;
      default: forces_private(s, tid, nt); break;
      }
#pragma omp barrier
#pragma omp for schedule(static)
      for (long q = 0; q < 3L * s->n; q++) {
        s->v[q] += DT * s->f[q] / s->m[q / 3];
        s->x[q] += DT * s->v[q];
      }
    }
  }
  return bench_now() - t0;
}

static void nbody_free(nbody *s) {
  if (s->mtx)
    for (int i = 0; i < s->n; i++) pthread_mutex_destroy(&s->mtx[i]);
  free(s->x0), free(s->v0), free(s->m), free(s->x), free(s->v), free(s->f), free(s->priv);
  free(s->mtx);
  fea_conc_tsx_state_destroy(s->tsx_pair);
  fea_conc_tsx_state_destroy(s->tsx_group);
}

static int nbody_make(nbody *s, int n, int threads, int forced) {
  memset(s, 0, sizeof *s);
  s->n = n;
  const size_t n3 = 3 * (size_t)n;
  s->x0 = malloc(n3 * sizeof *s->x0), s->v0 = malloc(n3 * sizeof *s->v0);
  s->x = malloc(n3 * sizeof *s->x), s->v = malloc(n3 * sizeof *s->v);
  s->f = malloc(n3 * sizeof *s->f), s->m = malloc((size_t)n * sizeof *s->m);
  s->priv = malloc((size_t)threads * n3 * sizeof *s->priv);
  s->mtx = malloc((size_t)n * sizeof *s->mtx);
  if (!s->x0 || !s->v0 || !s->x || !s->v || !s->f || !s->m || !s->priv || !s->mtx) {
    free(s->mtx);
    s->mtx = NULL;
    return -1;
  }
  for (int i = 0; i < n; i++) pthread_mutex_init(&s->mtx[i], NULL);
  uint64_t r = 88172645463325252u;
  for (size_t q = 0; q < n3; q++) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    s->x0[q] = (double)(r >> 11) * 0x1.0p-53;
    s->v0[q] = 0.0;
  }
  for (int i = 0; i < n; i++) s->m[i] = 1.0 / n;
  /* one transaction per pair (6 doubles) / per group (12) and the row's 3 */
  s->tsx_pair = fea_conc_tsx_state_create(s->f, 6, forced ? 1 : 8, 1, forced);
  s->tsx_group = fea_conc_tsx_state_create(s->f, 3 * GROUP, forced ? 1 : 8, 1, forced);
  return s->tsx_pair && s->tsx_group ? 0 : -1;
}

int updates_nbody(bench_report *rep, fea_context *ctx, int max_threads, int reps, int forced,
                  int particles) {
  nbody s;
  double *times = malloc((size_t)reps * sizeof *times);
  double *ref = malloc(3 * (size_t)particles * sizeof *ref);
  fea_conc_counters *ctr = aligned_alloc(64, (size_t)max_threads * sizeof *ctr);
  if (nbody_make(&s, particles, max_threads, forced) < 0 || !times || !ref || !ctr) {
    nbody_free(&s);
    free(times), free(ref), free(ctr);
    return bench_fail("allocating the N-body state", FEA_ERR_OUT_OF_MEMORY);
  }
  int rc = BENCH_OK;
  double serial_s = 0;
  for (int m = NB_SERIAL; m < NB_COUNT && rc == BENCH_OK; m++)
    for (int t = 1; t <= (m == NB_SERIAL ? 1 : max_threads); t++) {
      fea_conc_counters total;
      memset(&total, 0, sizeof total);
      for (int r = -1; r < reps; r++) {
        memset(ctr, 0, (size_t)max_threads * sizeof *ctr);
        double dt = run_steps(&s, (enum nb_method)m, t, ctr);
        if (r >= 0) times[r] = dt;
      }
      for (int q = 0; q < t; q++) {
        total.retries += ctr[q].retries;
        total.lock_contended += ctr[q].lock_contended;
        total.tx_started += ctr[q].tx_started;
        total.tx_committed += ctr[q].tx_committed;
        total.tx_fallback += ctr[q].tx_fallback;
        total.aborts_conflict += ctr[q].aborts_conflict;
        total.aborts_capacity += ctr[q].aborts_capacity;
        total.aborts_other += ctr[q].aborts_explicit + ctr[q].aborts_other;
      }
      double diff = 0, scale = 0;
      if (m == NB_SERIAL) {
        memcpy(ref, s.f, 3 * (size_t)particles * sizeof *ref);
      } else {
        for (size_t q = 0; q < 3 * (size_t)particles; q++) {
          diff = fmax(diff, fabs(s.f[q] - ref[q]));
          scale = fmax(scale, fabs(ref[q]));
        }
        diff /= scale;
      }
      double med = bench_median(times, reps);
      if (m == NB_SERIAL) serial_s = med;
      bench_record rec;
      (void)bench_record_init(&rec, "updates", ctx);
      rec.threads = t;
      bench_param_str(&rec, "kind", "nbody");
      bench_param_str(&rec, "method", nb_names[m]);
      if (m == NB_TSX_BASIC || m == NB_TSX_BLOCKED)
        bench_param_str(&rec, "tsx_mode", forced ? "forced-abort" : "rtm");
      bench_param_int(&rec, "particles", particles);
      bench_param_int(&rec, "timed_steps", TIMED);
      bench_metric(&rec, "time_s", med);
      bench_metric(&rec, "speedup", serial_s / med);
      bench_metric(&rec, "max_rel_diff", diff);
      bench_metric(&rec, "retries", (double)total.retries);
      bench_metric(&rec, "lock_contended", (double)total.lock_contended);
      bench_metric(&rec, "tx_aborts", (double)(total.tx_started - total.tx_committed));
      if (m == NB_TSX_BASIC || m == NB_TSX_BLOCKED)
        updates_tx_metrics(&rec, total.tx_started, total.tx_committed, total.tx_fallback,
                           total.aborts_conflict, total.aborts_capacity, total.aborts_other);
      bench_report_emit(rep, &rec);
      if (!(diff <= AGREE)) {
        fprintf(stderr,
                "feaccel-bench: updates: nbody %s on %d threads: forces differ from the "
                "serial run's by %.3g (relative), more than rounding (%g)\n",
                nb_names[m], t, diff, AGREE);
        rc = BENCH_FAILED;
        break;
      }
    }
  nbody_free(&s);
  free(times), free(ref), free(ctr);
  return rc;
}
