/* Shared by the operator tests: the element families, a problem fixture on
 * a chosen backend with its reference system (fea_problem_assemble_reference),
 * and the relative difference the comparisons use. */
#ifndef FEA_TESTS_OPERATOR_COMMON_H
#define FEA_TESTS_OPERATOR_COMMON_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <feaccel.h>

typedef struct op_family {
  const char *name;
  int bspline, dim, order, simplices, n;
} op_family;

/* Every family the issue names: Q1..Q4 in 2D and 3D, Q5/Q6 in 2D, P1/P2, B-splines p = 1..5.
 * Tests pick some families by index: new ones go at the end. */
static const op_family op_families[] = {
    {"Q1 2D", 0, 2, 1, 0, 7},   {"Q2 2D", 0, 2, 2, 0, 5},   {"Q3 2D", 0, 2, 3, 0, 4},
    {"Q4 2D", 0, 2, 4, 0, 3},   {"Q1 3D", 0, 3, 1, 0, 4},   {"Q2 3D", 0, 3, 2, 0, 3},
    {"Q3 3D", 0, 3, 3, 0, 2},   {"Q4 3D", 0, 3, 4, 0, 2},   {"P1 2D", 0, 2, 1, 1, 6},
    {"P2 2D", 0, 2, 2, 1, 4},   {"P1 3D", 0, 3, 1, 1, 3},   {"P2 3D", 0, 3, 2, 1, 2},
    {"B p1 2D", 1, 2, 1, 0, 6}, {"B p2 2D", 1, 2, 2, 0, 6}, {"B p3 2D", 1, 2, 3, 0, 7},
    {"B p4 2D", 1, 2, 4, 0, 8}, {"B p5 2D", 1, 2, 5, 0, 9}, {"B p1 3D", 1, 3, 1, 0, 3},
    {"B p2 3D", 1, 3, 2, 0, 4}, {"B p3 3D", 1, 3, 3, 0, 5}, {"Q5 2D", 0, 2, 5, 0, 3},
    {"Q6 2D", 0, 2, 6, 0, 2},
};
#define OP_NFAM (sizeof op_families / sizeof op_families[0])

static double op_g(const double *x, void *u) {
  (void)u;
  return 1.0 + x[0] - 0.5 * x[1];
}
static double op_f(const double *x, void *u) {
  (void)u;
  return sin(3.0 * x[0]) + x[1] * x[1];
}
static double op_sigma(const double *x, void *u) {
  (void)u;
  return 1.0 + 0.5 * x[0] * x[1];
}

typedef struct op_fixture {
  fea_context *ctx;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_index nf;
  fea_matrix *ref;
  double *bref;
} op_fixture;

static void op_fixture_make(op_fixture *x, const char *resource, int threads, const op_family *f,
                            fea_scalar_fn sigma) {
  memset(x, 0, sizeof *x);
  cr_assert_eq(fea_context_create(resource, &x->ctx), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  if (threads > 0) cr_assert_eq(fea_context_set_num_threads(x->ctx, threads), FEA_SUCCESS);
  if (f->bspline) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = f->dim;
    for (int k = 0; k < 3; k++) d.degree[k] = f->order, d.n[k] = f->n + (k == 1);
    cr_assert_eq(fea_space_create_bspline(x->ctx, &d, &x->space), FEA_SUCCESS, "%s",
                 fea_context_last_error(x->ctx));
  } else {
    fea_mesh_desc md = FEA_MESH_DESC_INIT;
    md.dim = f->dim;
    for (int k = 0; k < 3; k++) md.n[k] = f->n + (k == 1);
    md.simplices = f->simplices;
    cr_assert_eq(fea_mesh_create_structured(x->ctx, &md, &x->mesh), FEA_SUCCESS, "%s",
                 fea_context_last_error(x->ctx));
    cr_assert_eq(fea_space_create_lagrange(x->mesh, f->order, FEA_NODES_EQUISPACED, &x->space),
                 FEA_SUCCESS, "%s", fea_context_last_error(x->ctx));
  }
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma_fn = sigma;
  pd.source = op_f;
  pd.dirichlet = op_g;
  cr_assert_eq(fea_problem_create_poisson(x->space, &pd, &x->pb), FEA_SUCCESS, "%s",
               fea_context_last_error(x->ctx));
  cr_assert_eq(fea_problem_get_num_free_dofs(x->pb, &x->nf), FEA_SUCCESS);
  x->bref = calloc((size_t)x->nf + 1, sizeof *x->bref);
  cr_assert_eq(fea_problem_assemble_reference(x->pb, x->bref, &x->ref), FEA_SUCCESS, "%s",
               fea_context_last_error(x->ctx));
}

static void op_fixture_free(op_fixture *x) {
  free(x->bref);
  fea_matrix_destroy(&x->ref);
  fea_problem_destroy(&x->pb);
  fea_space_destroy(&x->space);
  fea_mesh_destroy(&x->mesh);
  fea_context_destroy(&x->ctx);
}

/* max |a - b| / max |b| */
static double op_rel_diff(const double *a, const double *b, fea_index n) {
  double d = 0.0, m = 0.0;
  for (fea_index i = 0; i < n; i++) {
    if (isnan(a[i] - b[i])) return NAN; /* fmax would drop it, and "NaN <= tol" fails */
    d = fmax(d, fabs(a[i] - b[i]));
    m = fmax(m, fabs(b[i]));
  }
  return m > 0.0 ? d / m : d;
}

/* A vector of the fixture's context filled with values. */
static fea_vector *op_vector(const op_fixture *x, const double *values) {
  fea_vector *v = NULL;
  cr_assert_eq(fea_vector_create(x->ctx, x->nf, FEA_F64, &v), FEA_SUCCESS);
  if (values) cr_assert_eq(fea_vector_write(v, x->nf, FEA_F64, values), FEA_SUCCESS);
  return v;
}

/* Whether the sum-factorization kernel was built (the fallback says so). */
static int op_sumfact_built(const fea_operator_info *info) {
  return strstr(info->kernel, "not built") == NULL;
}

#endif
