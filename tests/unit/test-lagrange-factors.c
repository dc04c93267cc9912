/* The 1D-factor path of Lagrange element values (space-lagrange.c,
 * box_factors): on an axis-aligned box element, with factors_only set, the
 * element fills the 1D factors and no tables, and the forms sum-factorize.
 * Checked against the same element's basis tables under the same rule
 * (the point-by-point sums): stiffness and load to 1e-14 relative, Q1..Q4,
 * 2D and 3D, constant and varying sigma. A mapped (not axis-aligned) cell
 * falls back to the tables. And the matrix-free right-hand side, which now
 * takes the factors, against the reference assembly's b: 1e-14 relative in
 * norm, Lagrange and B-spline (there bit for bit), 2D and 3D, with a
 * non-zero Dirichlet lift.
 * Also the DoF points, which the space maps once per DoF: bit for bit those
 * of mapping every DoF from every cell in order (the last cell's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "disc/lagrange.h"
#include "disc/mesh.h"
#include "disc/problem.h"
#include "disc/space.h"
#include "matfree/operator.h"

#define OK(call) cr_assert_eq((call), FEA_SUCCESS, "%s", #call)

static double sigma_wavy(const double *x, void *user) {
  (void)user;
  return 1.5 + 0.5 * sin(2.0 * x[0] + 1.0) * cos(x[1] - 0.3);
}

static double source_wavy(const double *x, void *user) {
  const int dim = *(const int *)user;
  return cos(x[0]) + x[1] * x[1] + (dim == 3 ? exp(x[2]) : 0.0);
}

static double dirichlet_g(const double *x, void *user) {
  (void)user;
  return 1.0 + x[0] - 2.0 * x[1] + 0.25 * x[0] * x[1];
}

/* A gentle shear: the cells stay convex but are no longer boxes. */
static void shear(const double *xi, double *x, void *user) {
  const int dim = *(const int *)user;
  x[0] = xi[0] + 0.2 * xi[1];
  x[1] = xi[1];
  if (dim == 3) x[2] = xi[2] + 0.1 * xi[0];
}

typedef struct fixture {
  fea_context *ctx;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  int dim;
} fixture;

static void open_lagrange(fixture *fx, int dim, int order, int mapped, int wavy) {
  memset(fx, 0, sizeof *fx);
  fx->dim = dim;
  OK(fea_context_create("/cpu/ref", &fx->ctx));
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = dim;
  /* Anisotropic, off the origin: h differs per direction. */
  const fea_index n[3] = {3, 2, 2};
  const double lo[3] = {-0.5, 0.25, 1.0}, hi[3] = {1.0, 0.75, 1.7};
  for (int k = 0; k < 3; k++) md.n[k] = n[k], md.lower[k] = lo[k], md.upper[k] = hi[k];
  if (mapped) {
    md.map = shear;
    md.map_user = &fx->dim;
  }
  OK(fea_mesh_create_structured(fx->ctx, &md, &fx->mesh));
  OK(fea_space_create_lagrange(fx->mesh, order, FEA_NODES_GAUSS_LOBATTO, &fx->space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  if (wavy)
    pd.sigma_fn = sigma_wavy;
  else
    pd.sigma = 2.5;
  pd.source = source_wavy;
  pd.source_user = &fx->dim;
  pd.dirichlet = dirichlet_g;
  OK(fea_problem_create_poisson(fx->space, &pd, &fx->pb));
}

static void close_fixture(fixture *fx) {
  fea_problem_destroy(&fx->pb);
  fea_space_destroy(&fx->space);
  if (fx->mesh) fea_mesh_destroy(&fx->mesh);
  fea_context_destroy(&fx->ctx);
}

/* Largest |a - b| over largest |b|. */
static double rel_diff(const double *a, const double *b, size_t n) {
  double scale = 0, diff = 0;
  for (size_t i = 0; i < n; i++) {
    scale = fmax(scale, fabs(b[i]));
    diff = fmax(diff, fabs(a[i] - b[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

/* Every element's Ke and fe from the factors (a) and from the tables (b). */
static void check_elements(int dim, int order, int wavy) {
  fixture fx;
  open_lagrange(&fx, dim, order, 0, wavy);
  const fea_space *s = fx.space;
  const fea_quadrature *q = &fx.pb->quad;
  fea_element_values a, b;
  OK(fea_element_values_alloc(s, q, &a));
  OK(fea_element_values_alloc(s, q, &b));
  cr_assert(a.t1d != NULL, "a Lagrange box space gets room for the factors");
  a.factors_only = fea_form_factors_suffice(fx.pb);
  cr_assert(a.factors_only, "the built-in Poisson forms need no tables");
  const int nb = s->dofs_per_element;
  const size_t nq = (size_t)q->npts;
  /* Tables the factor path must not read. */
  for (size_t i = 0; i < nq * (size_t)nb; i++) a.phi[i] = NAN;
  for (size_t i = 0; i < nq * (size_t)nb * (size_t)dim; i++) a.dphi[i] = NAN;
  double *Ka = malloc((size_t)nb * nb * sizeof *Ka), *Kb = malloc((size_t)nb * nb * sizeof *Kb);
  double *fa = malloc((size_t)nb * sizeof *fa), *fb = malloc((size_t)nb * sizeof *fb);
  double worst = 0, worst_f = 0, worst_x = 0, worst_w = 0;
  for (fea_index e = 0; e < s->num_elements; e++) {
    OK(s->ops->element_values(s, e, q, &a));
    OK(s->ops->element_values(s, e, q, &b));
    cr_assert(a.tensor_valid && a.w1d_valid, "element %lld: the factors were filled", (long long)e);
    cr_assert(!b.tensor_valid, "element %lld: tables wanted, no factors", (long long)e);
    cr_assert(!fea_element_values_have_tables(&a));
    worst_x = fmax(worst_x, rel_diff(a.x, b.x, nq * (size_t)dim));
    worst_w = fmax(worst_w, rel_diff(a.w, b.w, nq));
    OK(fea_form_element_system(fx.pb, e, &a, Ka, fa));
    OK(fea_form_element_system(fx.pb, e, &b, Kb, fb));
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < i; j++)
        cr_assert(Ka[i * nb + j] == Ka[j * nb + i], "element %lld: not symmetric", (long long)e);
    worst = fmax(worst, rel_diff(Ka, Kb, (size_t)nb * nb));
    worst_f = fmax(worst_f, rel_diff(fa, fb, (size_t)nb));
  }
  cr_assert(worst_x <= 1e-15 && worst_w <= 1e-14, "%dD Q%d: x off by %.3g, w by %.3g", dim, order,
            worst_x, worst_w);
  cr_assert(worst <= 1e-14, "%dD Q%d (sigma %s): Ke differs by %.3g relative", dim, order,
            wavy ? "wavy" : "constant", worst);
  cr_assert(worst_f <= 1e-14, "%dD Q%d (sigma %s): fe differs by %.3g relative", dim, order,
            wavy ? "wavy" : "constant", worst_f);
  free(Ka);
  free(Kb);
  free(fa);
  free(fb);
  fea_element_values_free(&a);
  fea_element_values_free(&b);
  close_fixture(&fx);
}

Test(lagrange_factors, box_elements_2d) {
  for (int order = 1; order <= 4; order++)
    for (int wavy = 0; wavy <= 1; wavy++) check_elements(2, order, wavy);
}

Test(lagrange_factors, box_elements_3d) {
  for (int order = 1; order <= 4; order++)
    for (int wavy = 0; wavy <= 1; wavy++) check_elements(3, order, wavy);
}

/* A sheared cell is no box: factors_only is ignored, and the values are the
 * tables' bit for bit. */
Test(lagrange_factors, mapped_cells_take_the_tables) {
  for (int dim = 2; dim <= 3; dim++) {
    fixture fx;
    open_lagrange(&fx, dim, 2, 1, 0);
    const fea_space *s = fx.space;
    const fea_quadrature *q = &fx.pb->quad;
    fea_element_values a, b;
    OK(fea_element_values_alloc(s, q, &a));
    OK(fea_element_values_alloc(s, q, &b));
    a.factors_only = 1;
    const size_t nq = (size_t)q->npts, nb = (size_t)s->dofs_per_element;
    for (fea_index e = 0; e < s->num_elements; e++) {
      OK(s->ops->element_values(s, e, q, &a));
      OK(s->ops->element_values(s, e, q, &b));
      cr_assert(!a.tensor_valid && fea_element_values_have_tables(&a));
      cr_assert(memcmp(a.phi, b.phi, nq * nb * sizeof(double)) == 0);
      cr_assert(memcmp(a.dphi, b.dphi, nq * nb * (size_t)dim * sizeof(double)) == 0);
      cr_assert(memcmp(a.w, b.w, nq * sizeof(double)) == 0);
    }
    fea_element_values_free(&a);
    fea_element_values_free(&b);
    close_fixture(&fx);
  }
}

/* The matrix-free rhs against the reference assembly's b. */
static void check_rhs(fea_problem *pb, const char *what, int exact) {
  const fea_index n = pb->num_free;
  double *b = calloc((size_t)n + 1, sizeof *b), *bref = calloc((size_t)n + 1, sizeof *bref);
  fea_matrix *A = NULL;
  OK(fea_problem_assemble_reference(pb, bref, &A));
  OK(fea_operator_matfree_rhs(pb, b));
  double num = 0, den = 0;
  for (fea_index i = 0; i < n; i++) {
    num += (b[i] - bref[i]) * (b[i] - bref[i]);
    den += bref[i] * bref[i];
  }
  cr_assert(den > 0);
  cr_assert(sqrt(num / den) <= 1e-14, "%s: b differs from the reference by %.3g relative", what,
            sqrt(num / den));
  /* B-spline elements take the tensor sums in both (the reference's have
   * the tables as well, unused): the same b. */
  if (exact) cr_assert(memcmp(b, bref, (size_t)n * sizeof *b) == 0, "%s: b not bit for bit", what);
  fea_matrix_destroy(&A);
  free(b);
  free(bref);
}

Test(lagrange_factors, matfree_rhs_matches_reference) {
  for (int dim = 2; dim <= 3; dim++)
    for (int order = 1; order <= 3; order++) {
      fixture fx;
      open_lagrange(&fx, dim, order, 0, 0);
      cr_assert(fea_form_factors_suffice(fx.pb));
      check_rhs(fx.pb, dim == 2 ? "2D Lagrange" : "3D Lagrange", 0);
      close_fixture(&fx);
    }
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 2; p <= 3; p++) {
      fea_context *ctx = NULL;
      fea_space *s = NULL;
      fea_problem *pb = NULL;
      OK(fea_context_create("/cpu/ref", &ctx));
      fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
      d.dim = dim;
      for (int k = 0; k < dim; k++) d.degree[k] = p, d.n[k] = 3 + k, d.upper[k] = 1.0 + 0.5 * k;
      OK(fea_space_create_bspline(ctx, &d, &s));
      int ud = dim;
      fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
      pd.sigma = 1.5;
      pd.source = source_wavy;
      pd.source_user = &ud;
      pd.dirichlet = dirichlet_g;
      OK(fea_problem_create_poisson(s, &pd, &pb));
      check_rhs(pb, dim == 2 ? "2D B-spline" : "3D B-spline", 1);
      fea_problem_destroy(&pb);
      fea_space_destroy(&s);
      fea_context_destroy(&ctx);
    }
}

/* The DoF points against every cell's map of its nodes, the last cell's
 * kept: on a sheared (multilinear, non-affine in 3D) mesh, Q3. */
Test(lagrange_factors, dof_points_are_the_last_cells) {
  for (int dim = 2; dim <= 3; dim++) {
    fixture fx;
    open_lagrange(&fx, dim, 3, 1, 0);
    const fea_mesh *m = fx.mesh;
    const fea_space *s = fx.space;
    const fea_lagrange_element *el = fea_space_lagrange_element(s);
    const double *got = fea_space_lagrange_dof_coords(s);
    cr_assert(el && got);
    double *want = malloc((size_t)s->num_dofs * (size_t)dim * sizeof *want);
    memcpy(want, m->coords, (size_t)m->num_nodes * (size_t)dim * sizeof *want);
    fea_index *dofs = malloc((size_t)el->nb * sizeof *dofs);
    for (fea_index c = 0; c < m->num_cells; c++) {
      double verts[FEA_CELL_MAX_VERTICES * 3];
      for (int j = 0; j < m->nodes_per_cell; j++)
        for (int k = 0; k < dim; k++)
          verts[j * dim + k] = m->coords[m->cells[c * m->nodes_per_cell + j] * dim + k];
      s->ops->element_dofs(s, c, dofs);
      for (int i = 0; i < el->nb; i++)
        if (dofs[i] >= m->num_nodes)
          fea_cell_map(m->type, dim, verts, el->nodes + i * el->dim, want + dofs[i] * dim, NULL);
    }
    cr_assert(memcmp(want, got, (size_t)s->num_dofs * (size_t)dim * sizeof *want) == 0,
              "%dD: the DoF points differ from the last cell's maps", dim);
    free(want);
    free(dofs);
    close_fixture(&fx);
  }
}
