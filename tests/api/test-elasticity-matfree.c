/* The matrix-free operators on linear elasticity: the element-matrix kind
 * and sum factorization (the box way on axis-aligned boxes, the stored
 * point terms on NURBS patches and with E(x)) against the CSR operator of
 * the reference assembly, which is independent of both: apply, apply_add,
 * the diagonal and the right-hand side agree to 1e-12 relative on random
 * vectors in 2D and 3D (2 and 3 components), under every update strategy;
 * CG on either kind solves Lame's thick-walled cylinder with the orders of
 * the CSR path (L2 p + 1, H1 p within 0.1); a material that is bad at a
 * point is refused naming the point. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <feaccel.h>

#include "api-common.h"
#include "elasticity-common.h"
#include "ring-common.h"

/* ---- one problem, every operator ---------------------------------------------------------------- */

typedef struct el_case {
  fea_context *ctx;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_index nf;
  ring q;
  lame l;
  double sigma;
} el_case;

static double e_of_x(const double *x, void *user) {
  (void)user;
  return 800.0 + 300.0 * x[0] * x[0] + 100.0 * x[1];
}

static void body_force(const double *x, double *f, void *user) {
  (void)user;
  f[0] = sin(x[0]) + x[1];
  f[1] = cos(x[1]) - x[0];
  f[2] = 0.25 * x[0] * x[1];
}

/* More Gauss points than functions per direction (the kernels' generic
 * passes instead of the collocation ones), where a test sets it. */
static int extra_points;

/* kind: 0 Lagrange Q_p box, 1 B-spline box, 2 NURBS annulus (ring in 3D);
 * e_fn: E(x) in place of a constant E. */
static void case_make(el_case *c, int dim, int kind, int p, fea_index n, int e_fn) {
  memset(c, 0, sizeof *c);
  OK(fea_context_create("/cpu/threads", &c->ctx));
  OK(fea_context_set_num_threads(c->ctx, 2));
  c->sigma = 3.0;
  fea_elasticity_desc d;
  if (kind == 2) {
    ring_init(&c->q, dim, 0.5);
    c->l = lame_make(dim, 1000.0, 0.3, 10.0);
    c->space = annulus_space(c->ctx, &c->q, dim, p, n, dim == 3 ? 2 : 0);
    d = lame_desc(&c->l);
  } else {
    if (kind == 0) {
      fea_mesh_desc md = FEA_MESH_DESC_INIT;
      md.dim = dim;
      for (int k = 0; k < 3; k++) md.n[k] = n + (k == 1);
      md.upper[0] = 2.0;
      OK(fea_mesh_create_structured(c->ctx, &md, &c->mesh));
      OK(fea_space_create_lagrange(c->mesh, p, FEA_NODES_EQUISPACED, &c->space));
    } else {
      fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
      bd.dim = dim;
      for (int k = 0; k < 3; k++) bd.degree[k] = p, bd.n[k] = n + (k == 1);
      bd.upper[0] = 2.0;
      OK(fea_space_create_bspline(c->ctx, &bd, &c->space));
    }
    OK(fea_space_set_num_components(c->space, dim));
    d = tension_desc(dim, FEA_ELASTICITY_PLANE_STRAIN, 1000.0, 0.3, &c->sigma, 0);
  }
  d.body_force = body_force;
  if (e_fn) d.E_fn = e_of_x;
  if (extra_points) d.quad_points = p + 1 + extra_points;
  OK(fea_problem_create_elasticity(c->space, &d, &c->pb));
  OK(fea_problem_get_num_free_dofs(c->pb, &c->nf));
}

static void case_free(el_case *c) {
  fea_problem_destroy(&c->pb);
  fea_space_destroy(&c->space);
  fea_mesh_destroy(&c->mesh);
  fea_context_destroy(&c->ctx);
}

static fea_operator *make_op(el_case *c, fea_operator_kind kind, fea_update_strategy strategy,
                             fea_geometry_terms terms) {
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = kind;
  od.strategy = strategy;
  od.geometry_terms = terms;
  fea_operator *op = NULL;
  OK(fea_operator_create(c->ctx, c->pb, &od, &op));
  return op;
}

static double rel_diff(const double *a, const double *b, fea_index n) {
  double d = 0.0, s = 0.0;
  for (fea_index i = 0; i < n; i++) {
    d += (a[i] - b[i]) * (a[i] - b[i]);
    s += b[i] * b[i];
  }
  return sqrt(d / (s > 0 ? s : 1.0));
}

/* y = A x (or, add, y = y0 + A x) on the host arrays. */
static void host_apply(el_case *c, fea_operator *op, const double *x, const double *y0, double *y) {
  fea_vector *vx = NULL, *vy = NULL;
  OK(fea_vector_create(c->ctx, c->nf, FEA_F64, &vx));
  OK(fea_vector_create(c->ctx, c->nf, FEA_F64, &vy));
  OK(fea_vector_write(vx, c->nf, FEA_F64, x));
  if (y0) {
    OK(fea_vector_write(vy, c->nf, FEA_F64, y0));
    OK(fea_operator_apply_add(op, vx, vy));
  } else {
    OK(fea_operator_apply(op, vx, vy));
  }
  OK(fea_vector_read(vy, c->nf, FEA_F64, y));
  fea_vector_destroy(&vx);
  fea_vector_destroy(&vy);
}

static void host_vector(el_case *c, fea_operator *op, int diagonal, double *v) {
  fea_vector *vv = NULL;
  OK(fea_vector_create(c->ctx, c->nf, FEA_F64, &vv));
  if (diagonal)
    OK(fea_operator_get_diagonal(op, vv));
  else
    OK(fea_operator_get_rhs(op, vv));
  OK(fea_vector_read(vv, c->nf, FEA_F64, v));
  fea_vector_destroy(&vv);
}

/* The operator against CSR's: apply and apply_add on two random vectors,
 * the diagonal and the right-hand side. want: a piece of the kernel's name. */
static void check_against(el_case *c, fea_operator *ref, fea_operator *op, const char *what,
                          fea_operator_kind kind_run, const char *want) {
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  OK(fea_operator_get_info(op, &info));
  cr_expect_eq(info.kind_run, kind_run, "%s: kind run %d, expected %d (%s)", what,
               (int)info.kind_run, (int)kind_run, info.kernel);
  cr_expect(strstr(info.kernel, want), "%s: kernel '%s' lacks '%s'", what, info.kernel, want);
  const fea_index nf = c->nf;
  double *x = malloc((size_t)nf * sizeof *x), *y0 = malloc((size_t)nf * sizeof *y0);
  double *ya = malloc((size_t)nf * sizeof *ya), *yb = malloc((size_t)nf * sizeof *yb);
  cr_assert(x && y0 && ya && yb);
  unsigned r = 12345u;
  for (int t = 0; t < 2; t++) {
    for (fea_index i = 0; i < nf; i++) {
      r = r * 1103515245u + 12345u;
      x[i] = (double)(r >> 8) / (double)(1u << 24) - 0.5;
      y0[i] = 0.25 * x[i] - 0.1;
    }
    host_apply(c, ref, x, t ? y0 : NULL, ya);
    host_apply(c, op, x, t ? y0 : NULL, yb);
    const double e = rel_diff(yb, ya, nf);
    cr_expect(e <= 1e-12, "%s: %s differs from CSR by %.3e (relative)", what,
              t ? "apply_add" : "apply", e);
  }
  host_vector(c, ref, 1, ya);
  host_vector(c, op, 1, yb);
  double e = rel_diff(yb, ya, nf);
  cr_expect(e <= 1e-12, "%s: diagonal differs from CSR's by %.3e", what, e);
  host_vector(c, ref, 0, ya);
  host_vector(c, op, 0, yb);
  e = rel_diff(yb, ya, nf);
  cr_expect(e <= 1e-12, "%s: right-hand side differs from CSR's by %.3e", what, e);
  free(x);
  free(y0);
  free(ya);
  free(yb);
}

/* Every matrix-free operator of one case against CSR. sumfact_way: the
 * kernel AUTO picks ("box" or "stored"). */
static void compare_case(int dim, int kind, int p, fea_index n, int e_fn, const char *sumfact_way) {
  el_case c;
  case_make(&c, dim, kind, p, n, e_fn);
  char what[96];
  snprintf(what, sizeof what, "%dD %s p = %d%s", dim,
           kind == 0   ? "Lagrange"
           : kind == 1 ? "B-spline box"
                       : "NURBS",
           p, e_fn ? " E(x)" : "");
  fea_operator *ref = make_op(&c, FEA_OPERATOR_CSR, FEA_UPDATE_AUTO, FEA_GEOMETRY_TERMS_AUTO);
  fea_operator *em = make_op(&c, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, FEA_UPDATE_AUTO,
                             FEA_GEOMETRY_TERMS_AUTO);
  check_against(&c, ref, em, what, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, "element-matrix");
  fea_operator *sf = make_op(&c, FEA_OPERATOR_MATFREE_SUMFACT, FEA_UPDATE_AUTO,
                             FEA_GEOMETRY_TERMS_AUTO);
  check_against(&c, ref, sf, what, FEA_OPERATOR_MATFREE_SUMFACT, sumfact_way);
  /* STORED asked for: the point terms on any geometry, boxes included. */
  fea_operator *st = make_op(&c, FEA_OPERATOR_MATFREE_SUMFACT, FEA_UPDATE_AUTO,
                             FEA_GEOMETRY_TERMS_STORED);
  check_against(&c, ref, st, what, FEA_OPERATOR_MATFREE_SUMFACT, "elasticity p=");
  fea_operator_destroy(&st);
  fea_operator_destroy(&sf);
  fea_operator_destroy(&em);
  fea_operator_destroy(&ref);
  case_free(&c);
}

Test(elasticity_matfree, lagrange_q2_2d) { compare_case(2, 0, 2, 3, 0, "box"); }
Test(elasticity_matfree, lagrange_q3_2d) { compare_case(2, 0, 3, 2, 0, "box"); }
Test(elasticity_matfree, bspline_p2_2d) { compare_case(2, 1, 2, 4, 0, "box"); }
Test(elasticity_matfree, bspline_p3_2d_e_of_x) { compare_case(2, 1, 3, 4, 1, "stored"); }
Test(elasticity_matfree, lagrange_q2_3d) { compare_case(3, 0, 2, 2, 0, "box"); }
Test(elasticity_matfree, bspline_p2_3d) { compare_case(3, 1, 2, 3, 0, "box"); }
Test(elasticity_matfree, nurbs_annulus_p2) { compare_case(2, 2, 2, 4, 0, "stored nurbs"); }
Test(elasticity_matfree, nurbs_annulus_p3_e_of_x) { compare_case(2, 2, 3, 3, 1, "stored nurbs"); }
Test(elasticity_matfree, nurbs_ring_p2_3d) { compare_case(3, 2, 2, 2, 0, "stored nurbs"); }
Test(elasticity_matfree, more_points_than_functions) {
  extra_points = 1; /* the generic kernels: n_q = p + 2 */
  compare_case(2, 0, 2, 3, 0, "box");
  compare_case(3, 1, 2, 3, 0, "generic");
  compare_case(2, 2, 3, 3, 0, "stored nurbs");
  extra_points = 0;
}

/* Every update strategy scatters the same sums as CSR's (the threads
 * backend with two threads; TSX only where the CPU has it). */
Test(elasticity_matfree, every_strategy) {
  const fea_update_strategy strategies[] = {FEA_UPDATE_SERIAL,          FEA_UPDATE_COLORING,
                                            FEA_UPDATE_ATOMIC_CAS,      FEA_UPDATE_MUTEX,
                                            FEA_UPDATE_PRIVATE_BUFFERS, FEA_UPDATE_PRIVATE_COPIES};
  for (int dim = 2; dim <= 3; dim++) {
    el_case c;
    case_make(&c, dim, 1, 2, dim == 2 ? 5 : 3, 0);
    fea_operator *ref = make_op(&c, FEA_OPERATOR_CSR, FEA_UPDATE_AUTO, FEA_GEOMETRY_TERMS_AUTO);
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++)
      for (int k = 0; k < 2; k++) {
        const fea_operator_kind kind = k ? FEA_OPERATOR_MATFREE_SUMFACT
                                         : FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
        fea_operator *op = make_op(&c, kind, strategies[i], FEA_GEOMETRY_TERMS_AUTO);
        char what[96];
        snprintf(what, sizeof what, "%dD %s under %s", dim, k ? "sumfact" : "element-matrix",
                 fea_update_strategy_name(strategies[i]));
        check_against(&c, ref, op, what, kind, k ? "box" : "element-matrix");
        fea_operator_destroy(&op);
      }
    fea_operator_destroy(&ref);
    case_free(&c);
  }
}

/* RECOMPUTED geometry terms are the scalar kernel's: elasticity falls back
 * to element matrices and says why. */
Test(elasticity_matfree, recomputed_falls_back) {
  el_case c;
  case_make(&c, 2, 2, 2, 3, 0);
  fea_operator *ref = make_op(&c, FEA_OPERATOR_CSR, FEA_UPDATE_AUTO, FEA_GEOMETRY_TERMS_AUTO);
  fea_operator *op = make_op(&c, FEA_OPERATOR_MATFREE_SUMFACT, FEA_UPDATE_AUTO,
                             FEA_GEOMETRY_TERMS_RECOMPUTED);
  check_against(&c, ref, op, "RECOMPUTED", FEA_OPERATOR_MATFREE_ELEMENT_MATRIX,
                "fallback: RECOMPUTED");
  fea_operator_destroy(&op);
  fea_operator_destroy(&ref);
  case_free(&c);
}

/* ---- a user's form on a vector space: not elasticity, so element matrices ---------------------- */

/* A coupled pair: -Laplace u_c plus u_0 - u_1 coupling both (SPD), f = (1, x). */
static fea_status coupled_pair(const fea_element_data *e, double *Ke, double *fe, void *user) {
  (void)user;
  const int nb = e->nb, nc = e->ncomp, n = nb * nc;
  for (int q = 0; q < e->nq; q++) {
    const double *ph = e->phi + q * nb, w = e->w[q], x = e->x[q * e->dim];
    for (int i = 0; i < nb; i++) {
      fe[0 + nc * i] += w * ph[i];
      fe[1 + nc * i] += w * x * ph[i];
      for (int j = 0; j < nb; j++) {
        double g = 0;
        for (int k = 0; k < e->dim; k++)
          g += e->dphi[(q * nb + i) * e->dim + k] * e->dphi[(q * nb + j) * e->dim + k];
        const double m = w * ph[i] * ph[j];
        for (int c = 0; c < nc; c++) Ke[(c + nc * i) * n + (c + nc * j)] += w * g + m;
        Ke[(0 + nc * i) * n + (1 + nc * j)] -= m;
        Ke[(1 + nc * i) * n + (0 + nc * j)] -= m;
      }
    }
  }
  return FEA_SUCCESS;
}

Test(elasticity_matfree, vector_element_form_element_matrices) {
  el_case c;
  memset(&c, 0, sizeof c);
  OK(fea_context_create("/cpu/threads", &c.ctx));
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.degree[0] = bd.degree[1] = 2;
  bd.n[0] = 5, bd.n[1] = 4;
  OK(fea_space_create_bspline(c.ctx, &bd, &c.space));
  OK(fea_space_set_num_components(c.space, 2));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.element_form = coupled_pair; /* every side Dirichlet, g = 0 */
  OK(fea_problem_create_poisson(c.space, &pd, &c.pb));
  OK(fea_problem_get_num_free_dofs(c.pb, &c.nf));
  fea_operator *ref = make_op(&c, FEA_OPERATOR_CSR, FEA_UPDATE_AUTO, FEA_GEOMETRY_TERMS_AUTO);
  fea_operator *em = make_op(&c, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, FEA_UPDATE_AUTO,
                             FEA_GEOMETRY_TERMS_AUTO);
  check_against(&c, ref, em, "vector form", FEA_OPERATOR_MATFREE_ELEMENT_MATRIX,
                "per-element matrices (the user's element form)");
  /* Sum factorization serves elasticity only: element matrices, and why. */
  fea_operator *sf = make_op(&c, FEA_OPERATOR_MATFREE_SUMFACT, FEA_UPDATE_AUTO,
                             FEA_GEOMETRY_TERMS_AUTO);
  check_against(&c, ref, sf, "vector form, sumfact asked", FEA_OPERATOR_MATFREE_ELEMENT_MATRIX,
                "[fallback:");
  fea_operator_destroy(&sf);
  fea_operator_destroy(&em);
  fea_operator_destroy(&ref);
  case_free(&c);
}

/* ---- a material that is not admissible at a point -------------------------------------------- */

static double e_bad(const double *x, void *user) {
  (void)user;
  return x[0] > 1.5 ? -1.0 : 1000.0;
}

Test(elasticity_matfree, bad_material_refused_at_a_point) {
  for (int k = 0; k < 2; k++) {
    fea_context *ctx = NULL;
    OK(fea_context_create("/cpu/ref", &ctx));
    const double sigma = 1.0;
    fea_mesh *mesh = NULL;
    fea_space *s = tension_space(ctx, 2, 1, 3, &mesh);
    fea_elasticity_desc d = tension_desc(2, FEA_ELASTICITY_PLANE_STRAIN, 1000.0, 0.3, &sigma, 0);
    d.E_fn = e_bad;
    fea_problem *pb = NULL;
    OK(fea_problem_create_elasticity(s, &d, &pb));
    fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
    od.kind = k ? FEA_OPERATOR_MATFREE_SUMFACT : FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
    fea_operator *op = NULL;
    cr_expect_eq(fea_operator_create(ctx, pb, &od, &op), FEA_ERR_INVALID_ARG);
    cr_expect_null(op);
    const char *msg = fea_context_last_error(ctx);
    cr_expect(strstr(msg, "Young's modulus") && strstr(msg, "x = ("),
              "the message names E and the point: %s", msg);
    fea_problem_destroy(&pb);
    fea_space_destroy(&s);
    fea_mesh_destroy(&mesh);
    fea_context_destroy(&ctx);
  }
}

/* ---- Lame's cylinder by CG on the matrix-free kinds --------------------------------------------- */

/* The L2 and H1 errors (together) of Jacobi-CG on operator kind `kind`. */
static void lame_cg_errors(int dim, int p, fea_index n, fea_operator_kind kind, double *l2,
                           double *h1) {
  el_case c;
  memset(&c, 0, sizeof c);
  OK(fea_context_create("/cpu/threads", &c.ctx));
  OK(fea_context_set_num_threads(c.ctx, 2));
  ring_init(&c.q, dim, 0.5);
  c.l = lame_make(dim, 1000.0, 0.3, 10.0);
  c.space = annulus_space(c.ctx, &c.q, dim, p, n, 1);
  fea_elasticity_desc d = lame_desc(&c.l);
  OK(fea_problem_create_elasticity(c.space, &d, &c.pb));
  OK(fea_problem_get_num_free_dofs(c.pb, &c.nf));
  fea_operator *op = make_op(&c, kind, FEA_UPDATE_AUTO, FEA_GEOMETRY_TERMS_AUTO);
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  OK(fea_operator_get_info(op, &info));
  cr_expect_eq(info.kind_run, kind, "kind run %d: %s", (int)info.kind_run, info.kernel);
  fea_vector *b = NULL, *x = NULL;
  OK(fea_vector_create(c.ctx, c.nf, FEA_F64, &b));
  OK(fea_vector_create(c.ctx, c.nf, FEA_F64, &x));
  OK(fea_operator_get_rhs(op, b));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-13;
  cd.max_iterations = 50000;
  fea_cg_stats st = FEA_CG_STATS_INIT;
  OK(fea_cg_solve(op, b, x, &cd, &st));
  cr_assert(st.converged, "CG did not converge: %lld iterations", (long long)st.iterations);
  fea_space_info si = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(c.space, &si));
  double *uf = malloc((size_t)c.nf * sizeof *uf), *u = malloc((size_t)si.num_dofs * sizeof *u);
  cr_assert(uf && u);
  OK(fea_vector_read(x, c.nf, FEA_F64, uf));
  OK(fea_problem_expand_solution(c.pb, uf, u));
  double e0[4], e1[4];
  OK(fea_problem_error_norms_vector(c.pb, u, lame_u, lame_grad, &c.l, e0, e1));
  *l2 = e0[dim], *h1 = e1[dim];
  free(uf);
  free(u);
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
  case_free(&c);
}

static void lame_cg_orders(int dim, int p, fea_operator_kind kind) {
  /* The pairs test-elasticity.c measures the CSR path on (in the asymptotic range to 0.1). */
  const fea_index n0 = p == 2 ? 8 : p == 3 || dim == 3 ? 16 : 32;
  double l2a, h1a, l2b, h1b;
  lame_cg_errors(dim, p, n0, kind, &l2a, &h1a);
  lame_cg_errors(dim, p, 2 * n0, kind, &l2b, &h1b);
  const double ol2 = log2(l2a / l2b), oh1 = log2(h1a / h1b);
  cr_log_info("%dD p = %d %s: L2 %.3e -> %.3e (order %.3f), H1 %.3e -> %.3e (order %.3f)", dim, p,
              kind == FEA_OPERATOR_MATFREE_SUMFACT ? "sumfact" : "element-matrix", l2a, l2b, ol2,
              h1a, h1b, oh1);
  expect_orders(p, ol2, oh1);
}

Test(elasticity_matfree, lame_2d_p2_sumfact, .timeout = 60) {
  lame_cg_orders(2, 2, FEA_OPERATOR_MATFREE_SUMFACT);
}
Test(elasticity_matfree, lame_2d_p3_sumfact, .timeout = 60) {
  lame_cg_orders(2, 3, FEA_OPERATOR_MATFREE_SUMFACT);
}
Test(elasticity_matfree, lame_2d_p2_element_matrix, .timeout = 60) {
  lame_cg_orders(2, 2, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX);
}
Test(elasticity_matfree, lame_2d_p3_element_matrix, .timeout = 60) {
  lame_cg_orders(2, 3, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX);
}
Test(elasticity_matfree, lame_3d_p2_sumfact, .timeout = 120) {
  lame_cg_orders(3, 2, FEA_OPERATOR_MATFREE_SUMFACT);
}
Test(elasticity_matfree, lame_3d_p2_element_matrix, .timeout = 120) {
  lame_cg_orders(3, 2, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX);
}
/* The other degrees: 2D p = 4 and 3D p = 3, both kinds (on the
 * NURBS patches: sum factorization at points, stored; per-element
 * matrices). */
Test(elasticity_matfree, lame_2d_p4_sumfact, .timeout = 300) {
  lame_cg_orders(2, 4, FEA_OPERATOR_MATFREE_SUMFACT);
}
Test(elasticity_matfree, lame_3d_p3_sumfact, .timeout = 300) {
  lame_cg_orders(3, 3, FEA_OPERATOR_MATFREE_SUMFACT);
}
Test(elasticity_matfree, lame_2d_p4_element_matrix, .timeout = 300) {
  lame_cg_orders(2, 4, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX);
}
Test(elasticity_matfree, lame_3d_p3_element_matrix, .timeout = 300) {
  lame_cg_orders(3, 3, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX);
}
