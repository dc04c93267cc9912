/* The matrix-free element kernels against the element matrices of
 * fea_problem_element_system: for batches of arbitrary (non-consecutive,
 * mixed-shape) elements, y_e = K_e x_e and the diagonals, to 1e-13 relative;
 * and how the element-matrix kernel stores its matrices (one for a uniform
 * Cartesian mesh, a few shapes for B-splines, one per element for sigma(x)).
 * The sum-factorization kernel is checked the same way wherever it says it
 * supports the problem (and once it is built). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <feaccel.h>

#include "matfree/matfree-kernel.h"
#include "disc/problem.h"
#include "disc/space.h"

#pragma weak fea_matfree_kernel_sumfact

typedef struct kfam {
  const char *name;
  int bspline, dim, order, simplices, n;
} kfam;

static const kfam fams[] = {
    {"Q1 2D", 0, 2, 1, 0, 5},   {"Q3 2D", 0, 2, 3, 0, 3},   {"Q2 3D", 0, 3, 2, 0, 2},
    {"Q4 3D", 0, 3, 4, 0, 2},   {"P1 2D", 0, 2, 1, 1, 4},   {"P2 3D", 0, 3, 2, 1, 2},
    {"B p1 2D", 1, 2, 1, 0, 5}, {"B p4 2D", 1, 2, 4, 0, 9}, {"B p5 2D", 1, 2, 5, 0, 12},
    {"B p2 3D", 1, 3, 2, 0, 6},
};

static double sigma_var(const double *x, void *u) {
  (void)u;
  return 2.0 + x[0] - 0.5 * x[1];
}

typedef struct fx {
  fea_context *ctx;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
} fx;

static void fx_make(fx *x, const kfam *f, fea_scalar_fn sigma) {
  memset(x, 0, sizeof *x);
  cr_assert_eq(fea_context_create("/cpu/ref", &x->ctx), FEA_SUCCESS);
  if (f->bspline) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = f->dim;
    for (int k = 0; k < 3; k++) d.degree[k] = f->order, d.n[k] = f->n;
    cr_assert_eq(fea_space_create_bspline(x->ctx, &d, &x->space), FEA_SUCCESS);
  } else {
    fea_mesh_desc md = FEA_MESH_DESC_INIT;
    md.dim = f->dim;
    for (int k = 0; k < 3; k++) md.n[k] = f->n + (k == 0);
    md.simplices = f->simplices;
    cr_assert_eq(fea_mesh_create_structured(x->ctx, &md, &x->mesh), FEA_SUCCESS);
    cr_assert_eq(fea_space_create_lagrange(x->mesh, f->order, FEA_NODES_EQUISPACED, &x->space),
                 FEA_SUCCESS);
  }
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma = 1.5;
  pd.sigma_fn = sigma;
  cr_assert_eq(fea_problem_create_poisson(x->space, &pd, &x->pb), FEA_SUCCESS);
}

static void fx_free(fx *x) {
  fea_problem_destroy(&x->pb);
  fea_space_destroy(&x->space);
  fea_mesh_destroy(&x->mesh);
  fea_context_destroy(&x->ctx);
}

/* Apply the kernel to batches of elements in a scrambled order and compare
 * with K_e x_e from the problem's element matrices. */
static void check_kernel(const fea_matfree_kernel_ops *k, const fx *x, const char *name) {
  const fea_space *s = x->space;
  const int nb = s->dofs_per_element;
  const fea_index ne = s->num_elements;
  void *st = NULL;
  cr_assert_eq(k->create(x->pb, NULL, &st), FEA_SUCCESS, "%s %s: %s", k->name, name,
               fea_context_last_error(x->ctx));
  const int B = k->batch(st);
  cr_assert(B >= 1 && B <= 64, "batch %d", B);
  double *xf = malloc((size_t)s->num_dofs * sizeof *xf);
  for (fea_index i = 0; i < s->num_dofs; i++) xf[i] = cos(0.7 * (double)i) - 0.2;
  double *y = malloc((size_t)B * nb * sizeof *y), *d = malloc((size_t)B * nb * sizeof *d);
  double *sc = malloc(((size_t)k->scratch_doubles(st) + 1) * sizeof *sc);
  double *Ke = malloc((size_t)nb * nb * sizeof *Ke);
  fea_index *dofs = malloc((size_t)nb * sizeof *dofs), elems[64];
  double worst = 0.0, worst_d = 0.0;
  for (fea_index e0 = 0; e0 < ne; e0 += B) {
    int n = ne - e0 < B ? (int)(ne - e0) : B;
    for (int j = 0; j < n; j++) elems[j] = (e0 + (fea_index)j * 7) % ne; /* scrambled */
    k->apply(st, elems, n, xf, y, sc);
    k->diagonal(st, elems, n, d, sc);
    for (int j = 0; j < n; j++) {
      cr_assert_eq(fea_problem_element_system(x->pb, elems[j], Ke, NULL), FEA_SUCCESS);
      cr_assert_eq(fea_space_get_element_dofs(s, elems[j], dofs), FEA_SUCCESS);
      double m = 0.0, err = 0.0, md = 0.0, errd = 0.0;
      for (int i = 0; i < nb; i++) {
        double r = 0.0, a = 0.0;
        for (int c = 0; c < nb; c++) {
          r += Ke[i * nb + c] * xf[dofs[c]];
          a += fabs(Ke[i * nb + c] * xf[dofs[c]]);
        }
        m = fmax(m, a);
        err = fmax(err, fabs(y[j * nb + i] - r));
        md = fmax(md, fabs(Ke[i * nb + i]));
        errd = fmax(errd, fabs(d[j * nb + i] - Ke[i * nb + i]));
      }
      worst = fmax(worst, err / m);
      worst_d = fmax(worst_d, errd / md);
    }
  }
  cr_expect(worst <= 1e-13, "%s %s: y_e off by %.3g relative", k->name, name, worst);
  cr_expect(worst_d <= 1e-13, "%s %s: diagonal off by %.3g relative", k->name, name, worst_d);
  double fl = 0, by = 0;
  k->cost(st, &fl, &by);
  cr_expect(fl > 0 && by > 0 && k->memory(st) > 0 && k->describe(st)[0]);
  k->destroy(st);
  free(xf);
  free(y);
  free(d);
  free(sc);
  free(Ke);
  free(dofs);
}

Test(operator_kernels, element_matrix_equals_element_systems) {
  for (size_t i = 0; i < sizeof fams / sizeof *fams; i++) {
    fx x;
    fx_make(&x, &fams[i], NULL);
    check_kernel(&fea_matfree_kernel_element_matrix, &x, fams[i].name);
    fx_free(&x);
  }
}

Test(operator_kernels, element_matrix_with_variable_sigma) {
  for (size_t i = 0; i < sizeof fams / sizeof *fams; i += 3) {
    fx x;
    fx_make(&x, &fams[i], sigma_var);
    check_kernel(&fea_matfree_kernel_element_matrix, &x, fams[i].name);
    fx_free(&x);
  }
}

Test(operator_kernels, sumfact_equals_element_systems_where_supported) {
  if (!&fea_matfree_kernel_sumfact) cr_skip_test("sum factorization not built");
  int ran = 0;
  for (size_t i = 0; i < sizeof fams / sizeof *fams; i++) {
    fx x;
    fx_make(&x, &fams[i], NULL);
    char why[128] = "";
    if (fea_matfree_kernel_sumfact.supports(x.pb, why, sizeof why)) {
      check_kernel(&fea_matfree_kernel_sumfact, &x, fams[i].name);
      ran++;
    } else {
      cr_expect(fams[i].simplices, "%s: sum factorization refuses a tensor-product space: %s",
                fams[i].name, why);
      cr_expect(why[0], "%s: refusal without a reason", fams[i].name);
    }
    fx_free(&x);
  }
  cr_expect_gt(ran, 0);
}

/* The storage decision, read from the kernel's description. */
static void expect_describe(const kfam *f, fea_scalar_fn sigma, const char *needle) {
  fx x;
  fx_make(&x, f, sigma);
  void *st = NULL;
  cr_assert_eq(fea_matfree_kernel_element_matrix.create(x.pb, NULL, &st), FEA_SUCCESS);
  const char *d = fea_matfree_kernel_element_matrix.describe(st);
  cr_expect(strstr(d, needle) != NULL, "%s: '%s' lacks '%s'", f->name, d, needle);
  fea_matfree_kernel_element_matrix.destroy(st);
  fx_free(&x);
}

Test(operator_kernels, element_matrix_storage) {
  const kfam q2 = {"Q2 3D", 0, 3, 2, 0, 4}, b3 = {"B p3 2D", 1, 2, 3, 0, 12};
  const kfam p1 = {"P1 2D", 0, 2, 1, 1, 6};
  expect_describe(&q2, NULL, "one 27x27 matrix for all 80 elements");
  /* Open uniform knots: p - 1 distinct shapes at each end and one inside, per direction. */
  expect_describe(&b3, NULL, "25 shapes for 144 elements");
  /* Kuhn triangles of a square come in two shapes. */
  expect_describe(&p1, NULL, "2 shapes");
  expect_describe(&q2, sigma_var, "per-element matrices (sigma(x))");
}
