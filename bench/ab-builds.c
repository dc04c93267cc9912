/* feaccel-ab: two builds of libfeaccel.so compared inside one process.
 *
 * On a shared machine the rate of the same binary moves by 25 - 40 % between
 * runs, far more than most optimizations are worth; alternating whole
 * processes still leaves the two sides at different moments. This tool
 * loads both libraries (dlopen of two paths: two separate copies), builds
 * the same matrix-free operator with each, and alternates rounds of
 * applications, A then B, so that both see the same load within a few
 * milliseconds. It prints each side's median time per apply and the median
 * (and quartiles) of the per-round ratio A / B, and checks that both gave
 * the same y. Running it a second time with the libraries swapped and taking
 * the geometric mean of the two ratios cancels what the order costs.
 *
 *   feaccel-ab [--dim D] [--p P] [--n N] [--threads T] [--rounds R]
 *              [--reps K] [--backend RES] LIB_A LIB_B
 *
 * The second mode times the IGA multifrontal solver's numeric setup instead:
 * with each library a Poisson problem (f = 1 + x_0) on an n^d B-spline space of
 * degree p and a multifrontal solver; each round runs fea_solver_setup()
 * (element integration + factorization) with A, then with B. It prints the
 * medians and the per-round ratios of the factorization time the solver
 * reports (fea_solver_stats.factor_s: the tree's levels, integration fused
 * into the leaves) and of the whole setup call, then solves once with each
 * and checks that both solutions agree to 1e-10 (relative).
 *
 *   feaccel-ab --solver multifrontal [--dim D] [--p P] --n N [--threads T]
 *              [--rounds R] [--backend RES] LIB_A LIB_B
 *
 * Only the public API is used (symbols looked up by name), so any two builds
 * with this API compare, e.g. a commit and its parent. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel/context.h>
#include <feaccel/mesh.h>
#include <feaccel/operator.h>
#include <feaccel/problem.h>
#include <feaccel/solver.h>
#include <feaccel/space.h>
#include <feaccel/vector.h>

#include "timing.h"

#define AB_MAX_ROUNDS 1000

/* One library: the entry points used, by name, and what they built. The
 * operator mode looks up the mesh ... vector_read group, the solver mode the
 * get_info ... solver_destroy group; the rest both. */
typedef struct ab_lib {
  const char *path;
  void *handle;
  __typeof__(&fea_context_create) context_create;
  __typeof__(&fea_context_destroy) context_destroy;
  __typeof__(&fea_context_set_num_threads) set_threads;
  __typeof__(&fea_context_last_error) last_error;
  __typeof__(&fea_space_destroy) space_destroy;
  __typeof__(&fea_problem_create_poisson) problem_create;
  __typeof__(&fea_problem_destroy) problem_destroy;
  __typeof__(&fea_problem_get_num_free_dofs) num_free;
  __typeof__(&fea_mesh_create_structured) mesh_create;
  __typeof__(&fea_mesh_destroy) mesh_destroy;
  __typeof__(&fea_space_create_lagrange) space_create;
  __typeof__(&fea_operator_create) operator_create;
  __typeof__(&fea_operator_destroy) operator_destroy;
  __typeof__(&fea_operator_apply) apply;
  __typeof__(&fea_vector_create) vector_create;
  __typeof__(&fea_vector_destroy) vector_destroy;
  __typeof__(&fea_vector_write) vector_write;
  __typeof__(&fea_vector_read) vector_read;
  __typeof__(&fea_context_get_info) get_info;
  __typeof__(&fea_space_create_bspline) bspline_create;
  __typeof__(&fea_solver_create_multifrontal) solver_create;
  __typeof__(&fea_solver_setup) solver_setup;
  __typeof__(&fea_solver_solve) solver_solve;
  __typeof__(&fea_solver_get_stats) solver_stats;
  __typeof__(&fea_solver_destroy) solver_destroy;
  fea_context *ctx;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_operator *op;
  fea_vector *x, *y;
  fea_solver *solver;
  double *u; /* the solver's solution */
  fea_index nf;
} ab_lib;

typedef struct ab_opts {
  int dim, p, n, threads, rounds, reps;
  int solver;          /* 1: --solver multifrontal */
  const char *backend; /* fea_context_create's resource */
} ab_opts;

/* Per-round times of A and B and their ratio; static storage (main). */
typedef struct ab_series {
  double a[AB_MAX_ROUNDS], b[AB_MAX_ROUNDS], r[AB_MAX_ROUNDS];
} ab_series;

static int symbol(ab_lib *l, void *slot, const char *name) {
  void *f = dlsym(l->handle, name);
  if (!f) {
    fprintf(stderr, "feaccel-ab: %s has no symbol %s\n", l->path, name);
    return 0;
  }
  memcpy(slot, &f, sizeof f);
  return 1;
}

static int load(ab_lib *l, const char *path, int solver) {
  memset(l, 0, sizeof *l);
  l->path = path;
  /* A path with a slash: dlopen loads that file, not a search result. */
  l->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!l->handle) {
    fprintf(stderr, "feaccel-ab: cannot load %s: %s\n", path, dlerror());
    return 0;
  }
  if (!symbol(l, &l->context_create, "fea_context_create") ||
      !symbol(l, &l->context_destroy, "fea_context_destroy") ||
      !symbol(l, &l->set_threads, "fea_context_set_num_threads") ||
      !symbol(l, &l->last_error, "fea_context_last_error") ||
      !symbol(l, &l->space_destroy, "fea_space_destroy") ||
      !symbol(l, &l->problem_create, "fea_problem_create_poisson") ||
      !symbol(l, &l->problem_destroy, "fea_problem_destroy") ||
      !symbol(l, &l->num_free, "fea_problem_get_num_free_dofs"))
    return 0;
  if (solver)
    return symbol(l, &l->get_info, "fea_context_get_info") &&
           symbol(l, &l->bspline_create, "fea_space_create_bspline") &&
           symbol(l, &l->solver_create, "fea_solver_create_multifrontal") &&
           symbol(l, &l->solver_setup, "fea_solver_setup") &&
           symbol(l, &l->solver_solve, "fea_solver_solve") &&
           symbol(l, &l->solver_stats, "fea_solver_get_stats") &&
           symbol(l, &l->solver_destroy, "fea_solver_destroy");
  return symbol(l, &l->mesh_create, "fea_mesh_create_structured") &&
         symbol(l, &l->mesh_destroy, "fea_mesh_destroy") &&
         symbol(l, &l->space_create, "fea_space_create_lagrange") &&
         symbol(l, &l->operator_create, "fea_operator_create") &&
         symbol(l, &l->operator_destroy, "fea_operator_destroy") &&
         symbol(l, &l->apply, "fea_operator_apply") &&
         symbol(l, &l->vector_create, "fea_vector_create") &&
         symbol(l, &l->vector_destroy, "fea_vector_destroy") &&
         symbol(l, &l->vector_write, "fea_vector_write") &&
         symbol(l, &l->vector_read, "fea_vector_read");
}

static int check(ab_lib *l, fea_status st, const char *what) {
  if (st == FEA_SUCCESS) return 1;
  /* Without a context: the calling thread's last error (a failed create). */
  fprintf(stderr, "feaccel-ab: %s: %s: %s\n", l->path, what, l->last_error(l->ctx));
  return 0;
}

static int open_context(ab_lib *l, const ab_opts *o) {
  return check(l, l->context_create(o->backend, &l->ctx), "context") &&
         check(l, l->set_threads(l->ctx, o->threads), "threads");
}

/* The default operator (sum factorization where it applies) of the Poisson
 * problem on an n^d Q_p mesh, and x with a fixed pattern of values. */
static int build(ab_lib *l, const ab_opts *o) {
  if (!open_context(l, o)) return 0;
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = o->dim;
  for (int k = 0; k < o->dim; k++) md.n[k] = o->n;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  if (!check(l, l->mesh_create(l->ctx, &md, &l->mesh), "mesh") ||
      !check(l, l->space_create(l->mesh, o->p, FEA_NODES_EQUISPACED, &l->space), "space") ||
      !check(l, l->problem_create(l->space, &pd, &l->pb), "problem") ||
      !check(l, l->operator_create(l->ctx, l->pb, &od, &l->op), "operator") ||
      !check(l, l->num_free(l->pb, &l->nf), "free DoFs") ||
      !check(l, l->vector_create(l->ctx, l->nf, FEA_F64, &l->x), "x") ||
      !check(l, l->vector_create(l->ctx, l->nf, FEA_F64, &l->y), "y"))
    return 0;
  double *h = malloc(((size_t)l->nf + 1) * sizeof *h);
  if (!h) return 0;
  for (fea_index i = 0; i < l->nf; i++) h[i] = 1.0 / (double)(1 + i % 7);
  const int ok = check(l, l->vector_write(l->x, l->nf, FEA_F64, h), "write x");
  free(h);
  return ok;
}

/* The load of the solver mode: smooth, not symmetric in the directions. */
static double load_f(const double *x, void *user) {
  (void)user;
  return 1.0 + x[0];
}

/* The multifrontal solver of the Poisson problem (f = 1 + x_0, g = 0) on the
 * n^d B-spline space of degree p (open uniform knots, unit box); only the
 * symbolic phase runs here. */
static int build_solver(ab_lib *l, const ab_opts *o) {
  if (!open_context(l, o)) return 0;
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = o->dim;
  for (int k = 0; k < o->dim; k++) {
    bd.degree[k] = o->p;
    bd.n[k] = o->n;
  }
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = load_f;
  fea_solver_desc sd = FEA_SOLVER_DESC_INIT;
  if (!check(l, l->bspline_create(l->ctx, &bd, &l->space), "B-spline space") ||
      !check(l, l->problem_create(l->space, &pd, &l->pb), "problem") ||
      !check(l, l->num_free(l->pb, &l->nf), "free DoFs") ||
      !check(l, l->solver_create(l->ctx, l->space, l->pb, &sd, &l->solver), "multifrontal solver"))
    return 0;
  l->u = malloc(((size_t)l->nf + 1) * sizeof *l->u);
  return l->u != NULL;
}

static void release(ab_lib *l) {
  if (!l->handle) return;
  if (l->ctx) {
    if (l->solver) l->solver_destroy(&l->solver);
    if (l->x) l->vector_destroy(&l->x);
    if (l->y) l->vector_destroy(&l->y);
    if (l->op) l->operator_destroy(&l->op);
    l->problem_destroy(&l->pb);
    l->space_destroy(&l->space);
    if (l->mesh) l->mesh_destroy(&l->mesh);
    l->context_destroy(&l->ctx);
  }
  free(l->u);
  /* No dlclose: the OpenMP runtime that both builds share keeps its
   * threads, and unloading code they ran crashed at exit. */
}

/* Seconds per apply over reps applications. */
static double time_applies(ab_lib *l, int reps, int *ok) {
  const double t0 = bench_now();
  for (int i = 0; i < reps; i++) *ok &= check(l, l->apply(l->op, l->x, l->y), "apply");
  return (bench_now() - t0) / reps;
}

/* Seconds of one fea_solver_setup(); *factor_s: the factorization time the
 * solver reports for it. */
static double time_setup(ab_lib *l, double *factor_s, int *ok) {
  const double t0 = bench_now();
  *ok &= check(l, l->solver_setup(l->solver), "setup");
  const double t = bench_now() - t0;
  fea_solver_stats st = FEA_SOLVER_STATS_INIT;
  *ok &= check(l, l->solver_stats(l->solver, &st), "stats");
  *factor_s = st.factor_s;
  return t;
}

static double quantile(const double *sorted, int n, double q) { return sorted[(int)(q * (n - 1))]; }

/* Sorts the series and prints each side's median (ms per `per`) and the
 * median and quartiles of the ratio, `tail` appended. */
static void report(const char *const path[2], ab_series *s, int n, const char *per,
                   const char *ratio, const char *tail) {
  qsort(s->a, (size_t)n, sizeof *s->a, bench_cmp_double);
  qsort(s->b, (size_t)n, sizeof *s->b, bench_cmp_double);
  qsort(s->r, (size_t)n, sizeof *s->r, bench_cmp_double);
  printf("A %s: median %.3f ms per %s\n", path[0], quantile(s->a, n, 0.5) * 1e3, per);
  printf("B %s: median %.3f ms per %s\n", path[1], quantile(s->b, n, 0.5) * 1e3, per);
  printf("%s per round: median %.3f (quartiles %.3f, %.3f)%s\n", ratio, quantile(s->r, n, 0.5),
         quantile(s->r, n, 0.25), quantile(s->r, n, 0.75), tail);
}

/* max |a - b| / max |b| over n values; NaN when a difference is NaN. */
static double max_rel_diff(const double *a, const double *b, fea_index n) {
  double d = 0.0, m = 0.0;
  for (fea_index i = 0; i < n; i++) {
    const double e = fabs(a[i] - b[i]);
    if (!(e <= d)) d = e; /* NaN sticks */
    m = fmax(m, fabs(b[i]));
  }
  return m > 0.0 ? d / m : d;
}

/* The exit status's part of the result check. */
static int agree(double diff, double tol, const char *what) {
  if (diff <= tol) return 1;
  fprintf(stderr, "feaccel-ab: the two builds' %s differ by %.3g\n", what, diff);
  return 0;
}

/* max |yA - yB| / max |yB| */
static double result_diff(ab_lib *a, ab_lib *b) {
  double *ya = malloc(((size_t)a->nf + 1) * sizeof *ya);
  double *yb = malloc(((size_t)b->nf + 1) * sizeof *yb);
  double d = NAN;
  if (ya && yb && a->nf == b->nf && a->vector_read(a->y, a->nf, FEA_F64, ya) == FEA_SUCCESS &&
      b->vector_read(b->y, b->nf, FEA_F64, yb) == FEA_SUCCESS)
    d = max_rel_diff(ya, yb, a->nf);
  free(ya);
  free(yb);
  return d;
}

/* The operator mode: rounds of reps applies, A then B. */
static int run_apply(ab_lib lib[2], const ab_opts *o, const char *const path[2], ab_series *s) {
  int ok = build(&lib[0], o) && build(&lib[1], o);
  if (!ok) return 0;
  for (int w = 0; w < 3; w++) { /* warm-up: first touches, thread pools */
    time_applies(&lib[0], 1, &ok);
    time_applies(&lib[1], 1, &ok);
  }
  for (int q = 0; q < o->rounds && ok; q++) {
    s->a[q] = time_applies(&lib[0], o->reps, &ok);
    s->b[q] = time_applies(&lib[1], o->reps, &ok);
    s->r[q] = s->a[q] / s->b[q];
  }
  if (!ok) return 0;
  const double diff = result_diff(&lib[0], &lib[1]);
  char tail[64];
  snprintf(tail, sizeof tail, "; y differs by %.2g", diff);
  printf("case: %dD Q%d, n=%d, %lld DoFs, %d thread(s), %d rounds of %d applies each side\n",
         o->dim, o->p, o->n, (long long)lib[0].nf, o->threads, o->rounds, o->reps);
  report(path, s, o->rounds, "apply", "time A / time B", tail);
  return agree(diff, 1e-12, "y");
}

/* One line per side: what runs it, and the tree's size. */
static int describe(ab_lib *l, char side) {
  fea_context_info ci = FEA_CONTEXT_INFO_INIT;
  fea_solver_stats st = FEA_SOLVER_STATS_INIT;
  if (!check(l, l->get_info(l->ctx, &ci), "context info") ||
      !check(l, l->solver_stats(l->solver, &st), "stats"))
    return 0;
  printf(
      "%c: %s, %d thread(s), BLAS %s; %d levels, front <= %lld, %.3g GFLOP, factors %.1f MiB, "
      "peak %.1f MiB\n",
      side, ci.backend, ci.num_threads, ci.blas, st.num_levels, (long long)st.max_front,
      st.flops * 1e-9, (double)st.factor_bytes / 1048576.0, (double)st.peak_bytes / 1048576.0);
  return 1;
}

/* The solver mode: rounds of one setup, A then B; then one solve each. */
static int run_solver(ab_lib lib[2], const ab_opts *o, const char *const path[2], ab_series *s) {
  static ab_series setup;
  double fa, fb;
  int ok = build_solver(&lib[0], o) && build_solver(&lib[1], o);
  if (!ok) return 0;
  if (lib[0].nf != lib[1].nf) {
    fprintf(stderr, "feaccel-ab: %lld free DoFs with A, %lld with B\n", (long long)lib[0].nf,
            (long long)lib[1].nf);
    return 0;
  }
  time_setup(&lib[0], &fa, &ok); /* warm-up: first touches, thread pools */
  time_setup(&lib[1], &fb, &ok);
  for (int q = 0; q < o->rounds && ok; q++) {
    setup.a[q] = time_setup(&lib[0], &s->a[q], &ok);
    setup.b[q] = time_setup(&lib[1], &s->b[q], &ok);
    setup.r[q] = setup.a[q] / setup.b[q];
    s->r[q] = s->a[q] / s->b[q];
  }
  ok = ok &&
       check(&lib[0], lib[0].solver_solve(lib[0].solver, 1, NULL, 0, lib[0].u, lib[0].nf),
             "solve") &&
       check(&lib[1], lib[1].solver_solve(lib[1].solver, 1, NULL, 0, lib[1].u, lib[1].nf), "solve");
  if (!ok) return 0;
  const double diff = max_rel_diff(lib[0].u, lib[1].u, lib[0].nf);
  char tail[64];
  snprintf(tail, sizeof tail, "; u differs by %.2g", diff);
  printf(
      "case: %dD B-splines p=%d, n=%d, %lld free DoFs, multifrontal, %d thread(s), %d rounds "
      "of one setup each side\n",
      o->dim, o->p, o->n, (long long)lib[0].nf, o->threads, o->rounds);
  if (!describe(&lib[0], 'A') || !describe(&lib[1], 'B')) return 0;
  report(path, s, o->rounds, "factorization", "factorization time A / time B", "");
  report(path, &setup, o->rounds, "setup", "setup time A / time B", tail);
  return agree(diff, 1e-10, "solutions");
}

static void usage(void) {
  fprintf(stderr,
          "usage: feaccel-ab [--dim 2|3] [--p P] [--n N] [--threads T] [--rounds R (<= %d)] "
          "[--reps K] [--backend RES] LIB_A LIB_B\n"
          "       feaccel-ab --solver multifrontal [--dim 2|3] [--p P] --n N [--threads T] "
          "[--rounds R] [--backend RES] LIB_A LIB_B\n",
          AB_MAX_ROUNDS);
}

static int parse(int argc, char **argv, ab_opts *o, const char **lib) {
  *o = (ab_opts){.dim = 2, .p = 3, .n = 0, .threads = 1, .rounds = 21, .reps = 0};
  int nlib = 0;
  for (int i = 1; i < argc; i++) {
    int *v = !strcmp(argv[i], "--dim")       ? &o->dim
             : !strcmp(argv[i], "--p")       ? &o->p
             : !strcmp(argv[i], "--n")       ? &o->n
             : !strcmp(argv[i], "--threads") ? &o->threads
             : !strcmp(argv[i], "--rounds")  ? &o->rounds
             : !strcmp(argv[i], "--reps")    ? &o->reps
                                             : NULL;
    const int text = !strcmp(argv[i], "--solver") || !strcmp(argv[i], "--backend");
    if (text && i + 1 < argc) {
      if (argv[i][2] == 'b') {
        o->backend = argv[i + 1];
      } else if (!strcmp(argv[i + 1], "multifrontal")) {
        o->solver = 1;
      } else {
        fprintf(stderr, "feaccel-ab: --solver knows only 'multifrontal', got '%s'\n", argv[i + 1]);
        return 0;
      }
      i++;
    } else if (v) {
      char *end = NULL;
      const long x = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
      if (i + 1 >= argc || *end || x < 1 || x > 1000000) {
        fprintf(stderr, "feaccel-ab: %s needs an integer from 1 to 1000000, got '%s'\n", argv[i],
                i + 1 < argc ? argv[i + 1] : "");
        return 0;
      }
      *v = (int)x;
      i++;
    } else if (text) {
      fprintf(stderr, "feaccel-ab: %s needs a value\n", argv[i]);
      return 0;
    } else if (argv[i][0] == '-' || nlib == 2) {
      fprintf(stderr, "feaccel-ab: unexpected argument '%s'\n", argv[i]);
      return 0;
    } else {
      lib[nlib++] = argv[i];
    }
  }
  if (nlib != 2 || (o->dim != 2 && o->dim != 3) || o->rounds > AB_MAX_ROUNDS) {
    usage();
    return 0;
  }
  if (o->solver) { /* a setup costs seconds to hours: no default size */
    if (!o->n || o->reps) {
      fprintf(stderr, "feaccel-ab: --solver needs --n and takes no --reps (one setup a round)\n");
      usage();
      return 0;
    }
    if (!o->backend) o->backend = "/cpu/threads";
    return 1;
  }
  if (!o->reps) o->reps = 10;
  if (!o->n) /* about 1M DoFs in 2D, 0.5M in 3D, as feaccel-bench operator */
    o->n = o->dim == 2 ? (int)(1024.0 / o->p + 0.5) : (int)(80.0 / o->p + 0.5);
  return 1;
}

int main(int argc, char **argv) {
  ab_opts o;
  const char *path[2];
  if (!parse(argc, argv, &o, path)) return 2;
  static ab_lib lib[2]; /* zero: release() skips what load() did not reach */
  static ab_series s;
  int ok = load(&lib[0], path[0], o.solver) && load(&lib[1], path[1], o.solver);
  if (ok) ok = o.solver ? run_solver(lib, &o, path, &s) : run_apply(lib, &o, path, &s);
  fflush(stdout);
  release(&lib[0]);
  release(&lib[1]);
  return ok ? 0 : 1;
}
