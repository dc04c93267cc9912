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
 *              [--reps K] LIB_A LIB_B
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
#include <feaccel/space.h>
#include <feaccel/vector.h>

#include "timing.h"

#define AB_MAX_ROUNDS 1000

/* One library: the entry points used, by name, and what they built. */
typedef struct ab_lib {
  const char *path;
  void *handle;
  __typeof__(&fea_context_create) context_create;
  __typeof__(&fea_context_destroy) context_destroy;
  __typeof__(&fea_context_set_num_threads) set_threads;
  __typeof__(&fea_context_last_error) last_error;
  __typeof__(&fea_mesh_create_structured) mesh_create;
  __typeof__(&fea_mesh_destroy) mesh_destroy;
  __typeof__(&fea_space_create_lagrange) space_create;
  __typeof__(&fea_space_destroy) space_destroy;
  __typeof__(&fea_problem_create_poisson) problem_create;
  __typeof__(&fea_problem_destroy) problem_destroy;
  __typeof__(&fea_problem_get_num_free_dofs) num_free;
  __typeof__(&fea_operator_create) operator_create;
  __typeof__(&fea_operator_destroy) operator_destroy;
  __typeof__(&fea_operator_apply) apply;
  __typeof__(&fea_vector_create) vector_create;
  __typeof__(&fea_vector_destroy) vector_destroy;
  __typeof__(&fea_vector_write) vector_write;
  __typeof__(&fea_vector_read) vector_read;
  fea_context *ctx;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_operator *op;
  fea_vector *x, *y;
  fea_index nf;
} ab_lib;

typedef struct ab_opts {
  int dim, p, n, threads, rounds, reps;
} ab_opts;

static int symbol(ab_lib *l, void *slot, const char *name) {
  void *f = dlsym(l->handle, name);
  if (!f) {
    fprintf(stderr, "feaccel-ab: %s has no symbol %s\n", l->path, name);
    return 0;
  }
  memcpy(slot, &f, sizeof f);
  return 1;
}

static int load(ab_lib *l, const char *path) {
  memset(l, 0, sizeof *l);
  l->path = path;
  /* A path with a slash: dlopen loads that file, not a search result. */
  l->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!l->handle) {
    fprintf(stderr, "feaccel-ab: cannot load %s: %s\n", path, dlerror());
    return 0;
  }
  return symbol(l, &l->context_create, "fea_context_create") &&
         symbol(l, &l->context_destroy, "fea_context_destroy") &&
         symbol(l, &l->set_threads, "fea_context_set_num_threads") &&
         symbol(l, &l->last_error, "fea_context_last_error") &&
         symbol(l, &l->mesh_create, "fea_mesh_create_structured") &&
         symbol(l, &l->mesh_destroy, "fea_mesh_destroy") &&
         symbol(l, &l->space_create, "fea_space_create_lagrange") &&
         symbol(l, &l->space_destroy, "fea_space_destroy") &&
         symbol(l, &l->problem_create, "fea_problem_create_poisson") &&
         symbol(l, &l->problem_destroy, "fea_problem_destroy") &&
         symbol(l, &l->num_free, "fea_problem_get_num_free_dofs") &&
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
  fprintf(stderr, "feaccel-ab: %s: %s: %s\n", l->path, what,
          l->ctx ? l->last_error(l->ctx) : "no context");
  return 0;
}

/* The default operator (sum factorization where it applies) of the Poisson
 * problem on an n^d Q_p mesh, and x with a fixed pattern of values. */
static int build(ab_lib *l, const ab_opts *o) {
  if (!check(l, l->context_create(NULL, &l->ctx), "context") ||
      !check(l, l->set_threads(l->ctx, o->threads), "threads"))
    return 0;
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

static void release(ab_lib *l) {
  if (!l->handle) return;
  if (l->ctx) {
    l->vector_destroy(&l->x);
    l->vector_destroy(&l->y);
    l->operator_destroy(&l->op);
    l->problem_destroy(&l->pb);
    l->space_destroy(&l->space);
    l->mesh_destroy(&l->mesh);
    l->context_destroy(&l->ctx);
  }
  /* No dlclose: the OpenMP runtime that both builds share keeps its
   * threads, and unloading code they ran crashed at exit. */
}

/* Seconds per apply over reps applications. */
static double time_applies(ab_lib *l, int reps, int *ok) {
  const double t0 = bench_now();
  for (int i = 0; i < reps; i++) *ok &= check(l, l->apply(l->op, l->x, l->y), "apply");
  return (bench_now() - t0) / reps;
}

static double quantile(const double *sorted, int n, double q) { return sorted[(int)(q * (n - 1))]; }

/* max |yA - yB| / max |yB| */
static double result_diff(ab_lib *a, ab_lib *b) {
  double *ya = malloc(((size_t)a->nf + 1) * sizeof *ya);
  double *yb = malloc(((size_t)b->nf + 1) * sizeof *yb);
  double d = NAN;
  if (ya && yb && a->nf == b->nf && a->vector_read(a->y, a->nf, FEA_F64, ya) == FEA_SUCCESS &&
      b->vector_read(b->y, b->nf, FEA_F64, yb) == FEA_SUCCESS) {
    double m = 0.0;
    d = 0.0;
    for (fea_index i = 0; i < a->nf; i++) {
      const double e = fabs(ya[i] - yb[i]);
      if (!(e <= d)) d = e; /* NaN sticks */
      m = fmax(m, fabs(yb[i]));
    }
    if (m > 0.0) d /= m;
  }
  free(ya);
  free(yb);
  return d;
}

static int parse(int argc, char **argv, ab_opts *o, const char **lib) {
  *o = (ab_opts){.dim = 2, .p = 3, .n = 0, .threads = 1, .rounds = 21, .reps = 10};
  int nlib = 0;
  for (int i = 1; i < argc; i++) {
    int *v = !strcmp(argv[i], "--dim")       ? &o->dim
             : !strcmp(argv[i], "--p")       ? &o->p
             : !strcmp(argv[i], "--n")       ? &o->n
             : !strcmp(argv[i], "--threads") ? &o->threads
             : !strcmp(argv[i], "--rounds")  ? &o->rounds
             : !strcmp(argv[i], "--reps")    ? &o->reps
                                             : NULL;
    if (v) {
      char *end = NULL;
      const long x = i + 1 < argc ? strtol(argv[i + 1], &end, 10) : 0;
      if (i + 1 >= argc || *end || x < 1 || x > 1000000) {
        fprintf(stderr, "feaccel-ab: %s needs an integer from 1 to 1000000, got '%s'\n", argv[i],
                i + 1 < argc ? argv[i + 1] : "");
        return 0;
      }
      *v = (int)x;
      i++;
    } else if (argv[i][0] == '-' || nlib == 2) {
      fprintf(stderr, "feaccel-ab: unexpected argument '%s'\n", argv[i]);
      return 0;
    } else {
      lib[nlib++] = argv[i];
    }
  }
  if (nlib != 2 || (o->dim != 2 && o->dim != 3) || o->rounds > AB_MAX_ROUNDS) {
    fprintf(stderr, "usage: feaccel-ab [--dim 2|3] [--p P] [--n N] [--threads T] [--rounds R "
                    "(<= %d)] [--reps K] LIB_A LIB_B\n", AB_MAX_ROUNDS);
    return 0;
  }
  if (!o->n) /* about 1M DoFs in 2D, 0.5M in 3D, as feaccel-bench operator */
    o->n = o->dim == 2 ? (int)(1024.0 / o->p + 0.5) : (int)(80.0 / o->p + 0.5);
  return 1;
}

int main(int argc, char **argv) {
  ab_opts o;
  const char *path[2];
  if (!parse(argc, argv, &o, path)) return 2;
  ab_lib lib[2];
  int ok = load(&lib[0], path[0]) && load(&lib[1], path[1]) && build(&lib[0], &o) &&
           build(&lib[1], &o);
  static double ta[AB_MAX_ROUNDS], tb[AB_MAX_ROUNDS], r[AB_MAX_ROUNDS];
  if (ok) {
    for (int w = 0; w < 3; w++) { /* warm-up: first touches, thread pools */
      time_applies(&lib[0], 1, &ok);
      time_applies(&lib[1], 1, &ok);
    }
    for (int q = 0; q < o.rounds && ok; q++) {
      ta[q] = time_applies(&lib[0], o.reps, &ok);
      tb[q] = time_applies(&lib[1], o.reps, &ok);
      r[q] = ta[q] / tb[q];
    }
  }
  if (ok) {
    const double diff = result_diff(&lib[0], &lib[1]);
    qsort(ta, (size_t)o.rounds, sizeof *ta, bench_cmp_double);
    qsort(tb, (size_t)o.rounds, sizeof *tb, bench_cmp_double);
    qsort(r, (size_t)o.rounds, sizeof *r, bench_cmp_double);
    printf("case: %dD Q%d, n=%d, %lld DoFs, %d thread(s), %d rounds of %d applies each side\n",
           o.dim, o.p, o.n, (long long)lib[0].nf, o.threads, o.rounds, o.reps);
    printf("A %s: median %.3f ms per apply\n", path[0], quantile(ta, o.rounds, 0.5) * 1e3);
    printf("B %s: median %.3f ms per apply\n", path[1], quantile(tb, o.rounds, 0.5) * 1e3);
    printf("time A / time B per round: median %.3f (quartiles %.3f, %.3f); y differs by %.2g\n",
           quantile(r, o.rounds, 0.5), quantile(r, o.rounds, 0.25), quantile(r, o.rounds, 0.75),
           diff);
    if (!(diff <= 1e-12)) {
      fprintf(stderr, "feaccel-ab: the two builds' y differ by %.3g\n", diff);
      ok = 0;
    }
  }
  fflush(stdout);
  release(&lib[0]);
  release(&lib[1]);
  return ok ? 0 : 1;
}
