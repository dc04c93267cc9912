/* Concurrent assembly through the public API: every update strategy gives the
 * reference assembly's system on every element family, for 1, 2 and 4
 * threads; bad input is refused with clear errors; a failed assembly leaves
 * the matrix and the right-hand side as they were; TSX is refused where the
 * CPU has no usable RTM and runs its fallback path in forced-abort mode.
 *
 * Oracle: fea_problem_assemble_reference (serial, element order). SERIAL and
 * PRIVATE_BUFFERS add each entry's contributions in element order, so they
 * must agree bit for bit; the others add in another order and agree within
 * 1e-14 relative to the largest entry of the row (b: of b). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <feaccel.h>

typedef struct family {
  const char *name;
  int bspline, dim, order, simplices, n;
} family;

static const family families[] = {
    {"P1 2D", 0, 2, 1, 1, 6},          {"P2 2D", 0, 2, 2, 1, 4},
    {"P1 3D", 0, 3, 1, 1, 3},          {"P2 3D", 0, 3, 2, 1, 2},
    {"Q1 2D", 0, 2, 1, 0, 7},          {"Q2 2D", 0, 2, 2, 0, 5},
    {"Q3 2D", 0, 2, 3, 0, 4},          {"Q4 2D", 0, 2, 4, 0, 3},
    {"Q1 3D", 0, 3, 1, 0, 4},          {"Q2 3D", 0, 3, 2, 0, 3},
    {"Q3 3D", 0, 3, 3, 0, 2},          {"Q4 3D", 0, 3, 4, 0, 2},
    {"B-spline p2 2D", 1, 2, 2, 0, 6}, {"B-spline p3 2D", 1, 2, 3, 0, 5},
    {"B-spline p2 3D", 1, 3, 2, 0, 3},
};
#define NFAM (sizeof families / sizeof families[0])

/* expr fails with want and the context's message contains needle. */
#define EXPECT_FAIL(expr, want, ctx, needle)                                                      \
  do {                                                                                            \
    fea_status fail_status_ = (expr);                                                             \
    cr_assert_eq(fail_status_, (want), "%s returned %s", #expr, fea_status_string(fail_status_)); \
    cr_assert(strstr(fea_context_last_error(ctx), (needle)) != NULL, "'%s' not in \"%s\"",        \
              (needle), fea_context_last_error(ctx));                                             \
  } while (0)

static double g_fn(const double *x, void *u) {
  (void)u;
  return 1.0 + x[0] - 0.5 * x[1];
}
static double f_fn(const double *x, void *u) {
  (void)u;
  return sin(3.0 * x[0]) + x[1] * x[1];
}
static double sigma_fn(const double *x, void *u) {
  (void)u;
  return 1.0 + 0.5 * x[0] * x[1];
}

typedef struct fixture {
  fea_context *ctx;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_index nf;
  fea_matrix *ref;
  double *bref;
} fixture;

static void make_space(fea_context *ctx, const family *f, fea_mesh **mesh, fea_space **space) {
  if (f->bspline) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = f->dim;
    for (int k = 0; k < 3; k++) d.degree[k] = f->order, d.n[k] = f->n + k;
    cr_assert_eq(fea_space_create_bspline(ctx, &d, space), FEA_SUCCESS, "%s",
                 fea_context_last_error(ctx));
    return;
  }
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = f->dim;
  for (int k = 0; k < 3; k++) md.n[k] = f->n + (k == 1);
  md.simplices = f->simplices;
  cr_assert_eq(fea_mesh_create_structured(ctx, &md, mesh), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  cr_assert_eq(fea_space_create_lagrange(*mesh, f->order, FEA_NODES_EQUISPACED, space), FEA_SUCCESS,
               "%s", fea_context_last_error(ctx));
}

double bad_sigma(const double *x, void *u);

static void fixture_make(fixture *x, const family *f, fea_scalar_fn sigma) {
  memset(x, 0, sizeof *x);
  cr_assert_eq(fea_context_create("/cpu/ref", &x->ctx), FEA_SUCCESS);
  make_space(x->ctx, f, &x->mesh, &x->space);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma_fn = sigma;
  pd.source = f_fn;
  pd.dirichlet = g_fn;
  cr_assert_eq(fea_problem_create_poisson(x->space, &pd, &x->pb), FEA_SUCCESS, "%s",
               fea_context_last_error(x->ctx));
  cr_assert_eq(fea_problem_get_num_free_dofs(x->pb, &x->nf), FEA_SUCCESS);
  x->bref = calloc((size_t)x->nf + 1, sizeof *x->bref);
  if (sigma == bad_sigma) return; /* the reference fails as well */
  cr_assert_eq(fea_problem_assemble_reference(x->pb, x->bref, &x->ref), FEA_SUCCESS, "%s",
               fea_context_last_error(x->ctx));
}

static void fixture_free(fixture *x) {
  free(x->bref);
  fea_matrix_destroy(&x->ref);
  fea_problem_destroy(&x->pb);
  fea_space_destroy(&x->space);
  fea_mesh_destroy(&x->mesh);
  fea_context_destroy(&x->ctx);
}

typedef struct csr {
  fea_index n, nnz, *rp, *ci;
  double *v;
} csr;

static csr csr_get(const fea_matrix *A) {
  csr c;
  cr_assert_eq(fea_matrix_get_size(A, &c.n, NULL, &c.nnz), FEA_SUCCESS);
  c.rp = malloc((size_t)(c.n + 1) * sizeof *c.rp);
  c.ci = malloc((size_t)(c.nnz + 1) * sizeof *c.ci);
  c.v = malloc((size_t)(c.nnz + 1) * sizeof *c.v);
  cr_assert_eq(fea_matrix_get_csr(A, c.rp, c.ci, c.v), FEA_SUCCESS);
  return c;
}

static void csr_free(csr *c) {
  free(c->rp);
  free(c->ci);
  free(c->v);
}

/* exact: bit for bit; else |a - r| <= 1e-14 max_row |r| (b: max |b|). */
static void compare(const fixture *x, const fea_matrix *A, const double *b, int exact,
                    const char *what) {
  csr r = csr_get(x->ref), a = csr_get(A);
  cr_assert_eq(a.nnz, r.nnz, "%s: nnz", what);
  for (fea_index i = 0; i < r.n; i++) {
    double rowmax = 0;
    for (fea_index k = r.rp[i]; k < r.rp[i + 1]; k++) rowmax = fmax(rowmax, fabs(r.v[k]));
    for (fea_index k = r.rp[i]; k < r.rp[i + 1]; k++) {
      cr_assert_eq(a.ci[k], r.ci[k], "%s: pattern differs at %lld", what, (long long)k);
      if (exact)
        cr_assert(memcmp(&a.v[k], &r.v[k], sizeof(double)) == 0,
                  "%s: A(%lld, %lld) = %.17g, reference %.17g", what, (long long)i,
                  (long long)r.ci[k], a.v[k], r.v[k]);
      else
        cr_assert(fabs(a.v[k] - r.v[k]) <= 1e-14 * rowmax,
                  "%s: A(%lld, %lld) = %.17g, reference %.17g", what, (long long)i,
                  (long long)r.ci[k], a.v[k], r.v[k]);
    }
  }
  double bmax = 0;
  for (fea_index i = 0; i < x->nf; i++) bmax = fmax(bmax, fabs(x->bref[i]));
  for (fea_index i = 0; i < x->nf; i++) {
    if (exact)
      cr_assert(memcmp(&b[i], &x->bref[i], sizeof(double)) == 0,
                "%s: b[%lld] = %.17g, reference %.17g", what, (long long)i, b[i], x->bref[i]);
    else
      cr_assert(fabs(b[i] - x->bref[i]) <= 1e-14 * bmax, "%s: b[%lld] = %.17g, reference %.17g",
                what, (long long)i, b[i], x->bref[i]);
  }
  csr_free(&r);
  csr_free(&a);
}

static const fea_update_strategy portable[] = {
    FEA_UPDATE_SERIAL,          FEA_UPDATE_COLORING,       FEA_UPDATE_ATOMIC_CAS, FEA_UPDATE_MUTEX,
    FEA_UPDATE_PRIVATE_BUFFERS, FEA_UPDATE_PRIVATE_COPIES, FEA_UPDATE_AUTO};

static int is_exact(fea_update_strategy s) {
  return s == FEA_UPDATE_SERIAL || s == FEA_UPDATE_PRIVATE_BUFFERS;
}

Test(assembly, every_strategy_matches_the_reference) {
  static const int threads[] = {1, 2, 4};
  for (size_t f = 0; f < NFAM; f++) {
    fixture x;
    fixture_make(&x, &families[f], sigma_fn);
    fea_matrix *A = NULL;
    cr_assert_eq(fea_matrix_create_pattern(x.pb, &A), FEA_SUCCESS, "%s",
                 fea_context_last_error(x.ctx));
    double *b = malloc((size_t)x.nf * sizeof *b + 1);
    for (size_t s = 0; s < sizeof portable / sizeof *portable; s++)
      for (size_t t = 0; t < 3; t++) {
        fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
        d.strategy = portable[s];
        d.threads = threads[t];
        fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
        char what[128];
        snprintf(what, sizeof what, "%s, %s, %d threads", families[f].name,
                 fea_update_strategy_name(portable[s]), threads[t]);
        cr_assert_eq(fea_problem_assemble(x.pb, A, b, &d, &st), FEA_SUCCESS, "%s: %s", what,
                     fea_context_last_error(x.ctx));
        fea_update_strategy ran = st.strategy_run;
        cr_assert(portable[s] == FEA_UPDATE_AUTO || ran == portable[s], "%s: ran %s", what,
                  fea_update_strategy_name(ran));
        cr_assert_neq(ran, FEA_UPDATE_TSX, "%s: AUTO picked TSX", what);
        cr_assert_neq(ran, FEA_UPDATE_AUTO, "%s: AUTO reported as what ran", what);
        cr_assert(st.threads >= 1 && st.threads <= threads[t], "%s: %d threads ran", what,
                  st.threads);
        cr_assert(st.updates > 0 && st.time_s >= 0, "%s: stats not filled", what);
        cr_assert(ran != FEA_UPDATE_COLORING || st.colors >= 2, "%s: %d colors", what, st.colors);
        compare(&x, A, b, is_exact(ran), what);
      }
    free(b);
    fea_matrix_destroy(&A);
    fixture_free(&x);
  }
}

Test(assembly, mutex_variants_and_cas_without_backoff) {
  fixture x;
  fixture_make(&x, &families[5], sigma_fn); /* Q2 2D */
  fea_matrix *A = NULL;
  cr_assert_eq(fea_matrix_create_pattern(x.pb, &A), FEA_SUCCESS);
  double *b = malloc((size_t)x.nf * sizeof *b);
  static const int stripes[] = {1, 3, 64};
  for (int spin = 0; spin < 2; spin++)
    for (int k = 0; k < 3; k++) {
      fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
      d.strategy = FEA_UPDATE_MUTEX;
      d.threads = 4;
      d.spin = spin;
      d.lock_stripe = stripes[k];
      cr_assert_eq(fea_problem_assemble(x.pb, A, b, &d, NULL), FEA_SUCCESS, "%s",
                   fea_context_last_error(x.ctx));
      compare(&x, A, b, 0, spin ? "spin locks" : "pthread mutexes");
    }
  fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
  d.strategy = FEA_UPDATE_ATOMIC_CAS;
  d.threads = 4;
  d.backoff = 0;
  cr_assert_eq(fea_problem_assemble(x.pb, A, b, &d, NULL), FEA_SUCCESS);
  compare(&x, A, b, 0, "CAS without backoff");
  free(b);
  fea_matrix_destroy(&A);
  fixture_free(&x);
}

Test(assembly, the_reference_matrix_is_a_valid_target) {
  fixture x;
  fixture_make(&x, &families[12], NULL); /* B-splines p2 2D, constant sigma */
  fea_matrix *A = NULL;
  double *b = calloc((size_t)x.nf, sizeof *b);
  cr_assert_eq(fea_problem_assemble_reference(x.pb, b, &A), FEA_SUCCESS);
  fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
  d.strategy = FEA_UPDATE_PRIVATE_BUFFERS;
  d.threads = 3;
  cr_assert_eq(fea_problem_assemble(x.pb, A, b, &d, NULL), FEA_SUCCESS);
  compare(&x, A, b, 1, "into the reference's own matrix");
  /* NULL desc: AUTO with the context's threads (1 on /cpu/ref): SERIAL */
  fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
  cr_assert_eq(fea_problem_assemble(x.pb, A, b, NULL, &st), FEA_SUCCESS);
  cr_expect_eq(st.strategy_run, FEA_UPDATE_SERIAL);
  cr_expect_eq(st.threads, 1);
  free(b);
  fea_matrix_destroy(&A);
  fixture_free(&x);
}

Test(assembly, dense_target_matches_the_reference) {
  fixture x;
  fixture_make(&x, &families[0], sigma_fn); /* P1 2D, the thesis's element */
  const fea_index ld = x.nf + 3;
  double *D = malloc((size_t)(x.nf * ld) * sizeof *D), *b = malloc((size_t)x.nf * sizeof *b);
  csr r = csr_get(x.ref);
  for (size_t s = 0; s < sizeof portable / sizeof *portable; s++) {
    fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
    d.strategy = portable[s];
    d.threads = 4;
    for (fea_index i = 0; i < x.nf * ld; i++) D[i] = NAN; /* padding must stay as it was */
    cr_assert_eq(fea_problem_assemble_dense(x.pb, D, ld, b, &d, NULL), FEA_SUCCESS, "%s",
                 fea_context_last_error(x.ctx));
    for (fea_index i = 0; i < x.nf; i++) {
      fea_index k = r.rp[i];
      double rowmax = 0;
      for (fea_index j = r.rp[i]; j < r.rp[i + 1]; j++) rowmax = fmax(rowmax, fabs(r.v[j]));
      for (fea_index c = 0; c < x.nf; c++) {
        double want = 0;
        if (k < r.rp[i + 1] && r.ci[k] == c) want = r.v[k++];
        cr_assert(fabs(D[i * ld + c] - want) <= 1e-14 * rowmax, "%s: D(%lld, %lld) = %g, want %g",
                  fea_update_strategy_name(portable[s]), (long long)i, (long long)c, D[i * ld + c],
                  want);
      }
      for (fea_index c = x.nf; c < ld; c++) cr_assert(isnan(D[i * ld + c]), "padding written");
      cr_assert(fabs(b[i] - x.bref[i]) <= 1e-13 * (1 + fabs(x.bref[i])));
    }
  }
  cr_expect_eq(fea_problem_assemble_dense(x.pb, D, x.nf - 1, b, NULL, NULL), FEA_ERR_DIMENSION);
  cr_expect(strstr(fea_context_last_error(x.ctx), "leading dimension") != NULL);
  csr_free(&r);
  free(D);
  free(b);
  fixture_free(&x);
}

Test(assembly, bad_input_is_refused_by_name) {
  fixture x;
  fixture_make(&x, &families[4], sigma_fn); /* Q1 2D */
  fea_matrix *A = NULL;
  cr_assert_eq(fea_matrix_create_pattern(x.pb, &A), FEA_SUCCESS);
  double *b = calloc((size_t)x.nf, sizeof *b);
  fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
  d.strategy = (fea_update_strategy)42;
  cr_expect_eq(fea_problem_assemble(x.pb, A, b, &d, NULL), FEA_ERR_INVALID_ARG);
  cr_expect(strstr(fea_context_last_error(x.ctx), "unknown update strategy 42") != NULL, "%s",
            fea_context_last_error(x.ctx));
  d = (fea_assembly_desc)FEA_ASSEMBLY_DESC_INIT;
  d.threads = -3;
  cr_expect_eq(fea_problem_assemble(x.pb, A, b, &d, NULL), FEA_ERR_INVALID_ARG);
  cr_expect(strstr(fea_context_last_error(x.ctx), "thread count -3") != NULL, "%s",
            fea_context_last_error(x.ctx));
  d = (fea_assembly_desc)FEA_ASSEMBLY_DESC_INIT;
  d.lock_stripe = 0;
  cr_expect_eq(fea_problem_assemble(x.pb, A, b, &d, NULL), FEA_ERR_INVALID_ARG);
  d = (fea_assembly_desc)FEA_ASSEMBLY_DESC_INIT;
  d.size = 4;
  cr_expect_eq(fea_problem_assemble(x.pb, A, b, &d, NULL), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_problem_assemble(NULL, A, b, NULL, NULL), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_problem_assemble(x.pb, NULL, b, NULL, NULL), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_problem_assemble(x.pb, A, NULL, NULL, NULL), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_matrix_create_pattern(x.pb, NULL), FEA_ERR_INVALID_ARG);
  cr_expect_null(fea_update_strategy_name((fea_update_strategy)-1));
  cr_expect_str_eq(fea_update_strategy_name(FEA_UPDATE_ATOMIC_CAS), "atomic-cas");

  /* A matrix of another problem: another size, or the same size but a
   * pattern without the Q1 couplings (P1 triangles on the same nodes). */
  fixture other;
  family bigger = families[4];
  bigger.n++;
  fixture_make(&other, &bigger, sigma_fn);
  cr_expect_eq(fea_problem_assemble(x.pb, other.ref, b, NULL, NULL), FEA_ERR_DIMENSION);
  cr_expect(strstr(fea_context_last_error(x.ctx), "free DoFs") != NULL);
  fixture tri;
  family p1 = families[4];
  p1.simplices = 1;
  fixture_make(&tri, &p1, sigma_fn);
  cr_assert_eq(tri.nf, x.nf);
  for (int s = FEA_UPDATE_SERIAL; s <= FEA_UPDATE_PRIVATE_BUFFERS; s++) {
    d = (fea_assembly_desc)FEA_ASSEMBLY_DESC_INIT;
    d.strategy = (fea_update_strategy)s;
    d.threads = 2;
    cr_expect_eq(fea_problem_assemble(x.pb, tri.ref, b, &d, NULL), FEA_ERR_INVALID_ARG, "%s",
                 fea_update_strategy_name(d.strategy));
    cr_expect(strstr(fea_context_last_error(x.ctx), "pattern lacks entry") != NULL, "%s",
              fea_context_last_error(x.ctx));
  }
  fixture_free(&tri);
  fixture_free(&other);
  free(b);
  fea_matrix_destroy(&A);
  fixture_free(&x);
}

/* sigma <= 0 in a corner: the assembly fails there, naming the element. */
double bad_sigma(const double *x, void *u) {
  (void)u;
  return x[0] > 0.8 && x[1] > 0.8 ? -1.0 : 1.0;
}

Test(assembly, failed_assembly_leaves_the_matrix_as_it_was) {
  fixture x;
  fixture_make(&x, &families[5], bad_sigma); /* Q2 2D */
  fea_matrix *A = NULL;
  cr_assert_eq(fea_matrix_create_pattern(x.pb, &A), FEA_SUCCESS);
  fea_index nnz = 0;
  cr_assert_eq(fea_matrix_get_size(A, NULL, NULL, &nnz), FEA_SUCCESS);
  double *b = malloc((size_t)x.nf * sizeof *b), *v = malloc((size_t)nnz * sizeof *v);
  for (int s = FEA_UPDATE_SERIAL; s <= FEA_UPDATE_PRIVATE_BUFFERS; s++) {
    for (fea_index i = 0; i < x.nf; i++) b[i] = 7.0;
    fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
    d.strategy = (fea_update_strategy)s;
    d.threads = 4;
    cr_expect_eq(fea_problem_assemble(x.pb, A, b, &d, NULL), FEA_ERR_INVALID_ARG);
    cr_expect(strstr(fea_context_last_error(x.ctx), "sigma is -1") != NULL, "%s",
              fea_context_last_error(x.ctx));
    cr_expect(strstr(fea_context_last_error(x.ctx), "element ") != NULL);
    cr_assert_eq(fea_matrix_get_csr(A, NULL, NULL, v), FEA_SUCCESS);
    for (fea_index k = 0; k < nnz; k++) cr_assert_eq(v[k], 0.0, "A changed by a failed assembly");
    for (fea_index i = 0; i < x.nf; i++) cr_assert_eq(b[i], 7.0, "b changed by a failed assembly");
  }
  free(v);
  free(b);
  fea_matrix_destroy(&A);
  fixture_free(&x);
}

Test(assembly, tsx_is_refused_without_rtm_and_forced_aborts_fall_back) {
  int avail = -1;
  char reason[256] = "";
  cr_assert_eq(fea_tsx_available(&avail, reason, sizeof reason), FEA_SUCCESS);
  cr_assert(avail == 0 || avail == 1);
  cr_assert(strlen(reason) > 10, "no reason given: '%s'", reason);
  fixture x;
  fixture_make(&x, &families[9], sigma_fn); /* Q2 3D */
  fea_matrix *A = NULL;
  cr_assert_eq(fea_matrix_create_pattern(x.pb, &A), FEA_SUCCESS);
  double *b = malloc((size_t)x.nf * sizeof *b);
  fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
  d.strategy = FEA_UPDATE_TSX;
  d.threads = 4;
  unsetenv("FEACCEL_TSX_FORCE_ABORT");
  fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
  fea_status s = fea_problem_assemble(x.pb, A, b, &d, &st);
  if (!avail) {
    cr_expect_eq(s, FEA_ERR_UNSUPPORTED);
    cr_expect(strstr(fea_context_last_error(x.ctx), reason) != NULL,
              "the error does not carry the reason: %s", fea_context_last_error(x.ctx));
  } else {
    cr_expect_eq(s, FEA_SUCCESS, "%s", fea_context_last_error(x.ctx));
    cr_expect_eq(st.tx_started, st.tx_committed + st.aborts_conflict + st.aborts_capacity +
                                    st.aborts_explicit + st.aborts_other);
    compare(&x, A, b, 0, "TSX");
  }
  /* Forced aborts: no XBEGIN; every batch retries, backs off, then takes the lock. */
  setenv("FEACCEL_TSX_FORCE_ABORT", "1", 1);
  d.tsx_batch = 5;
  d.tsx_retries = 3;
  st = (fea_assembly_stats)FEA_ASSEMBLY_STATS_INIT;
  cr_assert_eq(fea_problem_assemble(x.pb, A, b, &d, &st), FEA_SUCCESS, "%s",
               fea_context_last_error(x.ctx));
  unsetenv("FEACCEL_TSX_FORCE_ABORT");
  cr_expect_eq(st.strategy_run, FEA_UPDATE_TSX);
  cr_expect_eq(st.tx_committed, 0);
  cr_expect(st.tx_fallback > 0 && st.tx_fallback >= st.updates / 5, "fallbacks %llu",
            (unsigned long long)st.tx_fallback);
  cr_expect_eq(st.tx_started, 3 * st.tx_fallback);
  cr_expect_eq(st.aborts_conflict, st.tx_started);
  cr_expect_eq(st.retries, 2 * st.tx_fallback);
  compare(&x, A, b, 0, "TSX, forced aborts");
  free(b);
  fea_matrix_destroy(&A);
  fixture_free(&x);
}

Test(assembly, stats_are_read_up_to_the_callers_size) {
  fixture x;
  fixture_make(&x, &families[4], NULL);
  fea_matrix *A = NULL;
  cr_assert_eq(fea_matrix_create_pattern(x.pb, &A), FEA_SUCCESS);
  double *b = malloc((size_t)x.nf * sizeof *b);
  /* a struct that stops inside the first version is refused before any work */
  struct {
    fea_assembly_stats s;
    int canary;
  } old;
  memset(&old, 0, sizeof old);
  old.s.size = offsetof(fea_assembly_stats, time_s);
  old.s.updates = 12345;
  old.canary = 99;
  char want[48];
  snprintf(want, sizeof want, "stats.size is %zu", old.s.size);
  EXPECT_FAIL(fea_problem_assemble(x.pb, A, b, NULL, &old.s), FEA_ERR_INVALID_ARG, x.ctx, want);
  cr_expect_eq(old.s.updates, 12345, "written by a failed call");
  cr_expect_eq(old.s.threads, 0, "written by a failed call");
  cr_expect_eq(old.canary, 99);
  old.s.size = 0;
  EXPECT_FAIL(fea_problem_assemble(x.pb, A, b, NULL, &old.s), FEA_ERR_INVALID_ARG, x.ctx,
              "stats.size is 0; a fea_assembly_stats has");
  old.s.size = sizeof old;
  snprintf(want, sizeof want, "stats.size is %zu", sizeof old);
  EXPECT_FAIL(fea_problem_assemble(x.pb, A, b, NULL, &old.s), FEA_ERR_INVALID_ARG, x.ctx, want);
  old.s.size = sizeof old.s;
  cr_assert_eq(fea_problem_assemble(x.pb, A, b, NULL, &old.s), FEA_SUCCESS);
  cr_expect_eq(old.s.size, sizeof old.s);
  cr_expect_eq(old.s.threads, 1);
  cr_expect_eq(old.canary, 99, "written beyond the caller's size");
  free(b);
  fea_matrix_destroy(&A);
  fixture_free(&x);
}
