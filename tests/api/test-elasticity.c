/* Linear elasticity and vector-valued spaces: Lame's thick-walled cylinder on
 * the exact NURBS quarter annulus (plane strain, rollers and an inner
 * pressure) converging at orders p + 1 (L2) and p (H1) with the multifrontal
 * solver and with CG on the CSR operator; uniaxial tension solved exactly
 * (plane strain, plane stress, 3D); the multifrontal solver against LAPACK
 * on the reference system and its fronts ncomp times the scalar ones; the
 * interleaved numbering; a user's vector element form against scalar solves;
 * and the refusals. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <feaccel.h>
#include <feaccel/solver.h>

#include "api-common.h"
#include "elasticity-common.h"
#include "ring-common.h"
#include "solve-common.h"

/* The free solution of pb by the multifrontal solver. */
static void solve_multifrontal(fea_context *ctx, fea_space *s, fea_problem *pb, double *u_free) {
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  fea_solver *sv = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, pb, NULL, &sv));
  OK(fea_solver_setup(sv));
  OK(fea_solver_solve(sv, 1, NULL, 0, u_free, nf));
  fea_solver_destroy(&sv);
}

/* ---- Lame's cylinder on the quarter annulus (elasticity-common.h) --------------------------- */

/* L2 and H1 errors (per component and together) of the cylinder at degree p
 * and n x n elements, by the multifrontal solver (cg = 0) or CG (cg = 1). */
static void lame_errors(fea_context *ctx, int p, fea_index n, int cg, double l2[3], double h1[3]) {
  ring q;
  ring_init(&q, 2, 0);
  lame l = lame_make(2, 1000.0, 0.3, 10.0);
  fea_space *s = annulus_space(ctx, &q, 2, p, n, 0);
  fea_elasticity_desc d = lame_desc(&l);
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  double *u = solve_elastic(ctx, s, pb, cg);
  OK(fea_problem_error_norms_vector(pb, u, lame_u, lame_grad, &l, l2, h1));
  free(u);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

static void lame_orders(int cg) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  for (int p = 2; p <= 4; p++) {
    /* The coarsest pair in the asymptotic range to 0.1 (the higher the
     * degree, the later: at n = 8 -> 16, p = 4 gives 4.72 and 3.73). */
    const fea_index n0 = p == 2 ? 8 : p == 3 ? 16 : 32;
    double l2a[3], h1a[3], l2b[3], h1b[3];
    lame_errors(ctx, p, n0, cg, l2a, h1a);
    lame_errors(ctx, p, 2 * n0, cg, l2b, h1b);
    const double ol2 = log2(l2a[2] / l2b[2]), oh1 = log2(h1a[2] / h1b[2]);
    cr_log_info("%s p = %d: L2 %.3e -> %.3e (order %.3f), H1 %.3e -> %.3e (order %.3f)",
                cg ? "cg" : "multifrontal", p, l2a[2], l2b[2], ol2, h1a[2], h1b[2], oh1);
    expect_orders(p, ol2, oh1);
    /* Together is the root of the sum of the squares of the components. */
    cr_expect(fabs(l2b[2] - hypot(l2b[0], l2b[1])) <= 1e-12 * l2b[2]);
    cr_expect(fabs(h1b[2] - hypot(h1b[0], h1b[1])) <= 1e-12 * h1b[2]);
    /* The problem is symmetric about the diagonal: both components err alike. */
    cr_expect(fabs(l2b[0] - l2b[1]) <= 1e-3 * l2b[2], "p = %d: %.6e vs %.6e", p, l2b[0], l2b[1]);
  }
  fea_context_destroy(&ctx);
}

Test(elasticity, lame_cylinder_orders_multifrontal, .timeout = 120) { lame_orders(0); }

Test(elasticity, lame_cylinder_orders_cg, .timeout = 120) { lame_orders(1); }

/* ---- uniaxial tension: exact linear solutions -------------------------------------------------- */

/* A box [0, 2] x [0, 1] (x [0, 1]) pulled by sigma on its east side, rollers
 * on the west, south (and front) sides: u_x = eps_x x, u_y = eps_y y, ... with
 * the strains of the model, which the space holds exactly. */
/* lagrange: a structured Q2 mesh instead of B-splines (which takes CG
 * only); pressure: the pull as a pressure -sigma on the east side. */
static void tension_case_on(int dim, fea_elasticity_model model, int cg, int lagrange,
                            int pressure) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_mesh *mesh = NULL;
  fea_space *s = tension_space(ctx, dim, lagrange, 3, &mesh);
  const double E = 200.0, nu = 0.25, sigma = 3.0;
  fea_elasticity_desc d = tension_desc(dim, model, E, nu, &sigma, pressure);
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  tension t = tension_make(dim, model, E, nu, sigma);
  double *u = solve_elastic(ctx, s, pb, cg);
  double l2[4], h1[4];
  OK(fea_problem_error_norms_vector(pb, u, tension_u, tension_grad, &t, l2, h1));
  cr_expect(l2[dim] <= 1e-10 * sigma / E && h1[dim] <= 1e-9 * sigma / E,
            "%dD model %d (%s%s): L2 error %.3e, H1 error %.3e", dim, (int)model,
            lagrange ? "Q2" : "B-splines", pressure ? ", pressure" : "", l2[dim], h1[dim]);
  free(u);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
}

static void tension_case(int dim, fea_elasticity_model model, int cg) {
  tension_case_on(dim, model, cg, 0, 0);
}

/* Rollers, traction and pressure on the sides of a structured Q2 mesh, and
 * pressure on a B-spline box's side: the same exact solutions. */
Test(elasticity, tension_lagrange_and_pressure_exact) {
  tension_case_on(2, FEA_ELASTICITY_PLANE_STRAIN, 1, 1, 0);
  tension_case_on(2, FEA_ELASTICITY_PLANE_STRESS, 1, 1, 1);
  tension_case_on(3, FEA_ELASTICITY_PLANE_STRAIN, 1, 1, 1);
  tension_case_on(2, FEA_ELASTICITY_PLANE_STRAIN, 0, 0, 1);
  tension_case_on(3, FEA_ELASTICITY_PLANE_STRAIN, 0, 0, 1);
}

Test(elasticity, tension_plane_strain_exact) { tension_case(2, FEA_ELASTICITY_PLANE_STRAIN, 0); }
Test(elasticity, tension_plane_stress_exact) { tension_case(2, FEA_ELASTICITY_PLANE_STRESS, 1); }
Test(elasticity, tension_3d_exact) {
  tension_case(3, FEA_ELASTICITY_PLANE_STRAIN, 0);
  tension_case(3, FEA_ELASTICITY_PLANE_STRAIN, 1);
}

/* ---- the multifrontal solver on systems ----------------------------------------------------- */

static void body_force(const double *x, double *f, void *user) {
  const int dim = *(const int *)user;
  f[0] = sin(3 * x[0]) + x[1];
  f[1] = cos(2 * x[1]) - x[0] * x[0];
  if (dim == 3) f[2] = x[0] * x[1] + x[2];
}

/* Every side clamped, a body force: the multifrontal solution equals
 * LAPACK's Cholesky solution of the reference system to 1e-10 relative, on
 * /cpu/ref and /cpu/threads; and with every side clamped each front holds
 * every component of the scalar front's functions, so the tree's q and r
 * are ncomp times the scalar tree's, node for node. */
static void multifrontal_vs_reference(const char *resource, int dim, int ncomp) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = dim;
  for (int k = 0; k < 3; k++) bd.degree[k] = 2, bd.n[k] = dim == 2 ? 9 : 4;
  fea_space *s = NULL, *scalar = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_create_bspline(ctx, &bd, &scalar));
  OK(fea_space_set_num_components(s, ncomp));
  fea_problem *pb = NULL, *spb = NULL;
  int dd = dim;
  manufactured m = {dim}; /* outlives the problem: sine_f reads it at assembly */
  if (ncomp == dim) {
    fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
    d.E = 7.0, d.nu = 0.35;
    d.body_force = body_force;
    d.body_force_user = &dd;
    OK(fea_problem_create_elasticity(s, &d, &pb));
  } else { /* a scalar Poisson problem (ncomp = 1) */
    fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
    d.source = sine_f;
    d.source_user = &m;
    OK(fea_problem_create_poisson(s, &d, &pb));
  }
  fea_problem_desc sd = FEA_PROBLEM_DESC_INIT;
  OK(fea_problem_create_poisson(scalar, &sd, &spb));
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  double *b = malloc((size_t)nf * sizeof *b), *u = malloc((size_t)nf * sizeof *u);
  cr_assert(b && u);
  fea_matrix *A = NULL;
  OK(fea_problem_assemble_reference(pb, b, &A));
  lapack_solve_csr(A, b);
  fea_solver *sv = NULL, *ssv = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, pb, NULL, &sv));
  OK(fea_solver_setup(sv));
  OK(fea_solver_solve(sv, 1, NULL, 0, u, nf));
  double err = 0, ref = 0;
  for (fea_index i = 0; i < nf; i++) {
    err = fmax(err, fabs(u[i] - b[i]));
    ref = fmax(ref, fabs(b[i]));
  }
  cr_expect(err <= 1e-10 * ref, "%s %dD ncomp %d: max difference %.3e of %.3e", resource, dim,
            ncomp, err, ref);
  OK(fea_solver_create_multifrontal(ctx, scalar, spb, NULL, &ssv));
  fea_solver_stats st = FEA_SOLVER_STATS_INIT, sst = FEA_SOLVER_STATS_INIT;
  OK(fea_solver_get_stats(sv, &st));
  OK(fea_solver_get_stats(ssv, &sst));
  cr_assert_eq(st.num_nodes, sst.num_nodes);
  cr_assert_eq(st.num_levels, sst.num_levels);
  for (fea_index k = 0; k < st.num_nodes; k++) {
    fea_solver_node a = FEA_SOLVER_NODE_INIT, c = FEA_SOLVER_NODE_INIT;
    OK(fea_solver_get_node(sv, k, &a));
    OK(fea_solver_get_node(ssv, k, &c));
    cr_expect(a.q == ncomp * c.q && a.r == ncomp * c.r,
              "node %lld: q %lld r %lld vs scalar %lld %lld", (long long)k, (long long)a.q,
              (long long)a.r, (long long)c.q, (long long)c.r);
  }
  /* keep_boundary keeps every component of the boundary functions in the
   * root: the space's vector boundary DoFs, in order. */
  fea_solver_desc kd = FEA_SOLVER_DESC_INIT;
  kd.keep_boundary = 1;
  fea_solver *kb = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, pb, &kd, &kb));
  OK(fea_solver_setup(kb));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  fea_index nbd = 0;
  OK(fea_solver_get_boundary_schur(kb, 0, NULL, NULL, &nbd));
  cr_expect_eq(nbd, info.num_boundary_dofs);
  fea_index *kdofs = malloc(2 * (size_t)nbd * sizeof *kdofs);
  cr_assert(kdofs);
  OK(fea_solver_get_boundary_schur(kb, nbd, kdofs, NULL, &nbd));
  OK(fea_space_get_boundary_dofs(s, nbd, kdofs + nbd));
  for (fea_index i = 0; i < nbd; i++) cr_expect_eq(kdofs[i], kdofs[nbd + i]);
  free(kdofs);
  fea_solver_destroy(&kb);
  fea_solver_destroy(&sv);
  fea_solver_destroy(&ssv);
  fea_matrix_destroy(&A);
  free(b);
  free(u);
  fea_problem_destroy(&pb);
  fea_problem_destroy(&spb);
  fea_space_destroy(&s);
  fea_space_destroy(&scalar);
  fea_context_destroy(&ctx);
}

Test(elasticity, multifrontal_equals_reference_ref) {
  multifrontal_vs_reference("/cpu/ref", 2, 1);
  multifrontal_vs_reference("/cpu/ref", 2, 2);
  multifrontal_vs_reference("/cpu/ref", 3, 1);
  multifrontal_vs_reference("/cpu/ref", 3, 3);
}

Test(elasticity, multifrontal_equals_reference_threads) {
  multifrontal_vs_reference("/cpu/threads", 2, 2);
  multifrontal_vs_reference("/cpu/threads", 3, 3);
}

/* ---- the interleaved numbering ----------------------------------------------------------------- */

Test(elasticity, interleaved_numbering) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.degree[0] = bd.degree[1] = 2;
  bd.n[0] = 3, bd.n[1] = 2;
  fea_space *s = NULL, *v = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_create_bspline(ctx, &bd, &v));
  OK(fea_space_set_num_components(v, 1));
  OK(fea_space_set_num_components(v, 3));
  fea_space_info si = FEA_SPACE_INFO_INIT, vi = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &si));
  OK(fea_space_get_info(v, &vi));
  cr_expect_eq(si.num_components, 1);
  cr_expect_eq(vi.num_components, 3);
  cr_expect_eq(vi.num_dofs, 3 * si.num_dofs);
  cr_expect_eq(vi.dofs_per_element, 3 * si.dofs_per_element);
  cr_expect_eq(vi.num_boundary_dofs, 3 * si.num_boundary_dofs);
  fea_index sd[64], vd[192];
  for (fea_index e = 0; e < si.num_elements; e++) {
    OK(fea_space_get_element_dofs(s, e, sd));
    OK(fea_space_get_element_dofs(v, e, vd));
    for (int j = 0; j < si.dofs_per_element; j++)
      for (int c = 0; c < 3; c++) cr_expect_eq(vd[c + 3 * j], c + 3 * sd[j]);
  }
  fea_index *sb = malloc((size_t)si.num_boundary_dofs * sizeof *sb),
            *vb = malloc((size_t)vi.num_boundary_dofs * sizeof *vb);
  OK(fea_space_get_boundary_dofs(s, si.num_boundary_dofs, sb));
  OK(fea_space_get_boundary_dofs(v, vi.num_boundary_dofs, vb));
  for (fea_index b = 0; b < si.num_boundary_dofs; b++)
    for (int c = 0; c < 3; c++) cr_expect_eq(vb[c + 3 * b], c + 3 * sb[b]);
  EXPECT_FAIL(fea_space_get_boundary_dofs(v, si.num_boundary_dofs, vb), FEA_ERR_DIMENSION, ctx,
              "capacity");
  /* Refinement keeps the components. */
  fea_space *r = NULL;
  const double k = 0.5;
  OK(fea_space_bspline_insert_knots(v, 0, 1, &k, &r));
  fea_space_info ri = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(r, &ri));
  cr_expect_eq(ri.num_components, 3);
  /* A caller built against the first fea_space_info sees the scalar fields only. */
  struct {
    size_t size;
    int dim, is_bspline, degree[3];
    fea_index num_dofs, num_elements;
    int dofs_per_element;
    fea_index num_boundary_dofs, elements[3];
  } old = {0};
  old.size = sizeof old;
  OK(fea_space_get_info(v, (fea_space_info *)(void *)&old));
  cr_expect_eq(old.num_dofs, vi.num_dofs);
  free(sb);
  free(vb);
  fea_space_destroy(&r);
  fea_space_destroy(&s);
  fea_space_destroy(&v);
  fea_context_destroy(&ctx);
}

/* ---- a user's form on a vector space: two decoupled Poisson problems ------------------------ */

static fea_status two_laplacians(const fea_element_data *e, double *Ke, double *fe, void *user) {
  const manufactured *m = user;
  const int nb = e->nb, nc = e->ncomp, n = nb * nc;
  cr_assert_eq(nc, 2);
  for (int q = 0; q < e->nq; q++) {
    const double f = sine_f(e->x + q * e->dim, (void *)m);
    for (int i = 0; i < nb; i++) {
      for (int c = 0; c < nc; c++) fe[c + nc * i] += e->w[q] * (c + 1) * f * e->phi[q * nb + i];
      for (int j = 0; j < nb; j++) {
        double g = 0;
        for (int k = 0; k < e->dim; k++)
          g += e->dphi[(q * nb + i) * e->dim + k] * e->dphi[(q * nb + j) * e->dim + k];
        for (int c = 0; c < nc; c++) Ke[(c + nc * i) * n + (c + nc * j)] += e->w[q] * g;
      }
    }
  }
  return FEA_SUCCESS;
}

Test(elasticity, vector_element_form_matches_scalar_solves) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.degree[0] = bd.degree[1] = 3;
  bd.n[0] = bd.n[1] = 6;
  fea_space *s = NULL, *v = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_create_bspline(ctx, &bd, &v));
  OK(fea_space_set_num_components(v, 2));
  manufactured m = {2};
  fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
  d.source = sine_f;
  d.source_user = &m;
  fea_problem *spb = NULL, *vpb = NULL;
  OK(fea_problem_create_poisson(s, &d, &spb));
  EXPECT_FAIL(fea_problem_create_poisson(v, &d, &vpb), FEA_ERR_INVALID_ARG, ctx, "element_form");
  d.element_form = two_laplacians;
  d.element_form_user = &m;
  OK(fea_problem_create_poisson(v, &d, &vpb));
  fea_index ns = 0, nv = 0;
  OK(fea_problem_get_num_free_dofs(spb, &ns));
  OK(fea_problem_get_num_free_dofs(vpb, &nv));
  cr_assert_eq(nv, 2 * ns);
  double *us = malloc((size_t)ns * sizeof *us), *uv = malloc((size_t)nv * sizeof *uv);
  solve_multifrontal(ctx, s, spb, us);
  solve_multifrontal(ctx, v, vpb, uv);
  /* Component c solves the scalar problem with (c + 1) f: interleaved free rows. */
  double err = 0, ref = 0;
  for (fea_index i = 0; i < ns; i++)
    for (int c = 0; c < 2; c++) {
      err = fmax(err, fabs(uv[c + 2 * i] - (c + 1) * us[i]));
      ref = fmax(ref, fabs(us[i]));
    }
  cr_expect(err <= 1e-11 * ref, "max difference %.3e of %.3e", err, ref);
  free(us);
  free(uv);
  fea_problem_destroy(&spb);
  fea_problem_destroy(&vpb);
  fea_space_destroy(&s);
  fea_space_destroy(&v);
  fea_context_destroy(&ctx);
}

/* ---- element matrices: the rigid-body modes are in their kernel -------------------------------- */

static double coord_x(const double *x, void *user) {
  (void)user;
  return x[0];
}

static double coord_y(const double *x, void *user) {
  (void)user;
  return x[1];
}

static double one(const double *x, void *user) {
  (void)x, (void)user;
  return 1.0;
}

/* Every element matrix of the mapped annulus maps the translations and the
 * rotation (u = (-y, x)) to zero, and is symmetric. Their coefficients are
 * the interpolants of 1 and of the coordinates, which the space holds (the
 * geometry is in it; the rational basis N_i / W does not sum to 1). */
Test(elasticity, element_matrices_annihilate_rigid_modes) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  ring q;
  ring_init(&q, 2, 0);
  fea_space *s = annulus_space(ctx, &q, 2, 3, 3, 0);
  lame l = lame_make(2, 5.0, 0.2, 1.0);
  fea_elasticity_desc d = lame_desc(&l);
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  const int n = info.dofs_per_element;
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 2, bd.degree[0] = bd.degree[1] = 3, bd.n[0] = bd.n[1] = 3, bd.geometry = &q.g;
  fea_space *sc = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &sc));
  const fea_index nd = info.num_dofs / 2;
  double *X = malloc(3 * (size_t)nd * sizeof *X), *Ke = malloc((size_t)n * n * sizeof *Ke);
  double *fe = malloc((size_t)n * sizeof *fe), *v = malloc((size_t)n * sizeof *v);
  fea_index *dofs = malloc((size_t)n * sizeof *dofs);
  cr_assert(X && Ke && fe && v && dofs);
  OK(fea_space_interpolate(sc, coord_x, NULL, X));
  OK(fea_space_interpolate(sc, coord_y, NULL, X + nd));
  OK(fea_space_interpolate(sc, one, NULL, X + 2 * nd));
  for (fea_index e = 0; e < info.num_elements; e++) {
    OK(fea_problem_element_system(pb, e, Ke, fe));
    OK(fea_space_get_element_dofs(s, e, dofs));
    double scale = 0;
    for (int i = 0; i < n * n; i++) scale = fmax(scale, fabs(Ke[i]));
    for (int i = 0; i < n; i++)
      for (int j = 0; j < i; j++) cr_expect(fabs(Ke[i * n + j] - Ke[j * n + i]) <= 1e-13 * scale);
    for (int mode = 0; mode < 3; mode++) {
      for (int j = 0; j < n; j++) {
        const int c = (int)(dofs[j] % 2);
        const fea_index i = dofs[j] / 2;
        v[j] = mode < 2 ? (c == mode) * X[2 * nd + i] : (c == 0 ? -X[nd + i] : X[i]);
      }
      double worst = 0;
      for (int i = 0; i < n; i++) {
        double r = 0;
        for (int j = 0; j < n; j++) r += Ke[i * n + j] * v[j];
        worst = fmax(worst, fabs(r));
      }
      cr_expect(worst <= 1e-10 * scale * 2, "element %lld, mode %d: |Ke v| = %.3e of %.3e",
                (long long)e, mode, worst, scale);
    }
  }
  free(X);
  free(Ke);
  free(fe);
  free(v);
  free(dofs);
  fea_space_destroy(&sc);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* ---- refusals ------------------------------------------------------------------------------------- */

static void nan_traction(const double *x, double *h, void *user) {
  (void)user;
  h[0] = x[1] > 0.5 ? NAN : 0.0;
  h[1] = 0.0;
}

static double bad_nu(const double *x, void *user) {
  (void)user;
  return x[0] > 0.5 ? 0.5 : 0.3;
}

Test(elasticity, refusals) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.degree[0] = bd.degree[1] = 2;
  bd.n[0] = bd.n[1] = 2;
  fea_space *s = NULL, *scalar = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_create_bspline(ctx, &bd, &scalar));
  EXPECT_FAIL(fea_space_set_num_components(s, 0), FEA_ERR_INVALID_ARG, ctx, "outside 1..8");
  EXPECT_FAIL(fea_space_set_num_components(s, 9), FEA_ERR_INVALID_ARG, ctx, "outside 1..8");
  fea_problem *pb = NULL;
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  EXPECT_FAIL(fea_problem_create_elasticity(scalar, &d, &pb), FEA_ERR_INVALID_ARG, ctx,
              "2 components");
  OK(fea_space_set_num_components(s, 2));
  d.nu = 0.5;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx, "nu = 0.5");
  d.nu = -1.0;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx, "nu = -1");
  d.nu = 0.3, d.E = 0.0;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx, "E = 0");
  d.E = 1.0, d.mu = -1.0;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx, "mu = -1");
  d.mu = 1.0, d.lambda = -1.5;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx, "lambda = -1.5");
  d.mu = 0.0, d.lambda = 0.0;
  d.model = (fea_elasticity_model)7;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx, "model = 7");
  d.model = FEA_ELASTICITY_PLANE_STRAIN;
  d.sides[FEA_SIDE_SOUTH].components = FEA_COMPONENT_Z;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx, "component 2");
  d.sides[FEA_SIDE_SOUTH].components = 0;
  d.sides[FEA_SIDE_FRONT].components = FEA_COMPONENT_X; /* a roller on a side 2D lacks */
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx,
              "sides[4] (front)");
  d.sides[FEA_SIDE_FRONT].components = 0;
  /* Pure traction: every rigid-body mode free. */
  for (int side = 0; side < 4; side++) d.sides[side].type = FEA_ELASTIC_TRACTION;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx,
              "translation in x, translation in y, rotation about z");
  /* Rollers on two parallel sides leave the translation along them free. */
  d.sides[FEA_SIDE_WEST].type = d.sides[FEA_SIDE_EAST].type = FEA_ELASTIC_DISPLACEMENT;
  d.sides[FEA_SIDE_WEST].components = d.sides[FEA_SIDE_EAST].components = FEA_COMPONENT_X;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx,
              "(translation in y)");
  /* One roller on x = 0 leaves y free and the rotation; with a roller
   * u_y = 0 on y = 0 as well, everything is fixed. */
  d.sides[FEA_SIDE_EAST].type = FEA_ELASTIC_TRACTION;
  d.sides[FEA_SIDE_SOUTH].type = FEA_ELASTIC_DISPLACEMENT;
  d.sides[FEA_SIDE_SOUTH].components = FEA_COMPONENT_Y;
  d.sides[FEA_SIDE_NORTH].traction = nan_traction;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  /* A NaN traction is refused where element systems are computed, naming the point. */
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  double *b = malloc((size_t)nf * sizeof *b);
  fea_matrix *A = NULL;
  EXPECT_FAIL(fea_problem_assemble_reference(pb, b, &A), FEA_ERR_INVALID_ARG, ctx,
              "traction h is nan at x = ");
  fea_problem_destroy(&pb);
  d.sides[FEA_SIDE_NORTH].traction = NULL;
  d.nu_fn = bad_nu;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  EXPECT_FAIL(fea_problem_assemble_reference(pb, b, &A), FEA_ERR_INVALID_ARG, ctx,
              "Poisson's ratio nu");
  /* A space with a problem on it keeps its components. */
  EXPECT_FAIL(fea_space_set_num_components(s, 3), FEA_ERR_STATE, ctx, "1 objects hold it");
  /* The matrix-free operators check the material at their points too. */
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_MATFREE_SUMFACT;
  fea_operator *op = NULL;
  EXPECT_FAIL(fea_operator_create(ctx, pb, &od, &op), FEA_ERR_INVALID_ARG, ctx,
              "Poisson's ratio nu");
  /* What takes scalar spaces only says so. */
  double l2 = 0, x0[2] = {0.5, 0.5}, val = 0;
  EXPECT_FAIL(fea_problem_error_norms(pb, b, coord_x, NULL, NULL, &l2, NULL), FEA_ERR_UNSUPPORTED,
              ctx, "fea_problem_error_norms_vector");
  EXPECT_FAIL(fea_space_evaluate(s, b, 1, x0, &val, NULL), FEA_ERR_UNSUPPORTED, ctx,
              "2 components");
  free(b);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_space_destroy(&scalar);
  fea_context_destroy(&ctx);
}

/* Lagrange spaces take components too: Q2 elasticity with every side clamped
 * and the body force of a manufactured displacement converges at order 3. */
static void mf_u(const double *x, double *u, void *user) {
  (void)user;
  u[0] = sin(M_PI * x[0]) * sin(M_PI * x[1]);
  u[1] = x[0] * (1 - x[0]) * x[1] * (1 - x[1]);
}

/* f = -div sigma(u) for lambda = mu = 1 (E = 2.5, nu = 0.25): -(lambda + mu) grad div u - mu
 * Laplace u. */
static void mf_f(const double *x, double *f, void *user) {
  (void)user;
  const double pi = M_PI, sx = sin(pi * x[0]), sy = sin(pi * x[1]), cx = cos(pi * x[0]),
               cy = cos(pi * x[1]);
  const double X = x[0], Y = x[1];
  /* div u = pi cx sy + X (1 - X) (1 - 2Y) */
  const double ddx = -pi * pi * sx * sy + (1 - 2 * X) * (1 - 2 * Y);
  const double ddy = pi * pi * cx * cy - 2 * X * (1 - X);
  const double lap0 = -2 * pi * pi * sx * sy;
  const double lap1 = -2 * Y * (1 - Y) - 2 * X * (1 - X);
  f[0] = -2 * ddx - lap0;
  f[1] = -2 * ddy - lap1;
}

Test(elasticity, lagrange_q2_clamped_converges) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  double err[2];
  for (int i = 0; i < 2; i++) {
    const fea_index n = 4 << i;
    fea_mesh_desc md = FEA_MESH_DESC_INIT;
    md.dim = 2;
    md.n[0] = md.n[1] = n;
    fea_mesh *mesh = NULL;
    OK(fea_mesh_create_structured(ctx, &md, &mesh));
    fea_space *s = NULL;
    OK(fea_space_create_lagrange(mesh, 2, FEA_NODES_EQUISPACED, &s));
    OK(fea_space_set_num_components(s, 2));
    fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
    d.lambda = 1.0, d.mu = 1.0;
    d.body_force = mf_f;
    fea_problem *pb = NULL;
    OK(fea_problem_create_elasticity(s, &d, &pb));
    double *u = solve_cg_full(ctx, s, pb, 20000);
    double l2[3];
    OK(fea_problem_error_norms_vector(pb, u, mf_u, NULL, NULL, l2, NULL));
    err[i] = l2[2];
    free(u);
    fea_problem_destroy(&pb);
    fea_space_destroy(&s);
    fea_mesh_destroy(&mesh);
  }
  const double order = log2(err[0] / err[1]);
  cr_expect(order > 2.7 && order < 3.4, "L2 order %.3f (errors %.3e, %.3e), expected 3", order,
            err[0], err[1]);
  fea_context_destroy(&ctx);
}

/* ---- the cost model counts systems ------------------------------------------------------------ */

/* The exact model of a query with num_components equals the solver's own
 * counts on an elasticity problem with every side clamped (the query's
 * default: every component Dirichlet on every side); the paper's model
 * scales its q and r by the components (FLOPs N_eq^3, memory N_eq^2). */
Test(elasticity, cost_model_counts_components) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  for (int dim = 2; dim <= 3; dim++) {
    const int p = 2;
    const fea_index n = dim == 2 ? 12 : 5;
    fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
    bd.dim = dim;
    for (int k = 0; k < 3; k++) bd.degree[k] = p, bd.n[k] = n;
    fea_space *s = NULL;
    OK(fea_space_create_bspline(ctx, &bd, &s));
    OK(fea_space_set_num_components(s, dim));
    fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
    fea_problem *pb = NULL;
    OK(fea_problem_create_elasticity(s, &d, &pb));
    fea_solver *sv = NULL;
    OK(fea_solver_create_multifrontal(ctx, s, pb, NULL, &sv));
    fea_solver_stats st = FEA_SOLVER_STATS_INIT;
    OK(fea_solver_get_stats(sv, &st));
    fea_cost_query q = FEA_COST_QUERY_INIT;
    q.dim = dim, q.p = p, q.n = n, q.num_components = dim;
    fea_cost c = FEA_COST_INIT, one = FEA_COST_INIT, pc = FEA_COST_INIT, p1 = FEA_COST_INIT;
    OK(fea_cost_model_exact(ctx, &q, &c));
    cr_expect_eq(c.flops, st.flops, "%dD: model %.17g, solver %.17g", dim, c.flops, st.flops);
    cr_expect_eq(c.num_levels, st.num_levels);
    OK(fea_cost_model_paper(&q, &pc));
    q.num_components = 1;
    OK(fea_cost_model_exact(ctx, &q, &one));
    OK(fea_cost_model_paper(&q, &p1));
    /* Every term of a node's count is q^a r^b with a + b in 1..3: times N_eq^1..3. */
    cr_expect(c.flops > (double)dim * dim * one.flops &&
                  c.flops <= (double)dim * dim * dim * one.flops,
              "%dD: %.6g vs scalar %.6g", dim, c.flops, one.flops);
    cr_expect_eq(c.memory_bytes, (double)dim * dim * one.memory_bytes);
    cr_expect_eq(c.root_front, dim * one.root_front);
    cr_expect(fabs(pc.flops - (double)dim * dim * dim * p1.flops) <= 1e-12 * pc.flops);
    cr_expect(fabs(pc.memory_bytes - (double)dim * dim * p1.memory_bytes) <=
              1e-12 * pc.memory_bytes);
    cr_expect_eq(pc.root_front, dim * p1.root_front);
    q.num_components = 9;
    EXPECT_FAIL(fea_cost_model_exact(ctx, &q, &c), FEA_ERR_INVALID_ARG, ctx, "num_components is 9");
    fea_solver_destroy(&sv);
    fea_problem_destroy(&pb);
    fea_space_destroy(&s);
  }
  fea_context_destroy(&ctx);
}

/* ---- Gmsh parts with component masks ---------------------------------------------------------- */

/* The unit square of square-sides-{quad,tri}.msh (groups west 1, east 2, south 3, north 4):
 * rollers on west (by name) and south (by tag), a pull as a pressure -sigma on east, north free;
 * Q2 and P2 hold the linear plane strain solution exactly. A pure traction setting of the
 * parts is refused naming the rigid-body modes. */
static void gmsh_tension(const char *file) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  const char *dir = getenv("FEA_TEST_DATA");
  cr_assert(dir, "FEA_TEST_DATA is not set");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  fea_mesh *m = NULL;
  OK(fea_mesh_read_gmsh(ctx, path, &m));
  fea_space *s = NULL;
  OK(fea_space_create_lagrange(m, 2, FEA_NODES_EQUISPACED, &s));
  OK(fea_space_set_num_components(s, 2));
  const double E = 50.0, nu = 0.3, sigma = 2.0;
  fea_elastic_part parts[4];
  for (int i = 0; i < 4; i++) {
    parts[i] = (fea_elastic_part){0, NULL, {FEA_ELASTIC_TRACTION, 0u, NULL, NULL, 0.0, NULL, NULL}};
  }
  parts[0].name = "west", parts[0].bc.type = FEA_ELASTIC_DISPLACEMENT;
  parts[0].bc.components = FEA_COMPONENT_X;
  parts[1].physical_tag = 3, parts[1].bc.type = FEA_ELASTIC_DISPLACEMENT;
  parts[1].bc.components = FEA_COMPONENT_Y;
  parts[2].name = "east", parts[2].bc.type = FEA_ELASTIC_PRESSURE, parts[2].bc.pressure = -sigma;
  parts[3].name = "north";
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = E, d.nu = nu;
  d.parts = parts, d.num_parts = 4;
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  double *u = solve_cg_full(ctx, s, pb, 20000);
  tension t = tension_make(2, FEA_ELASTICITY_PLANE_STRAIN, E, nu, sigma);
  double l2[3], h1[3];
  OK(fea_problem_error_norms_vector(pb, u, tension_u, tension_grad, &t, l2, h1));
  cr_expect(l2[2] <= 1e-10 * sigma / E && h1[2] <= 1e-9 * sigma / E,
            "%s: L2 error %.3e, H1 error %.3e", file, l2[2], h1[2]);
  fea_problem_destroy(&pb);
  /* The parts copied: the caller's array may change after creation. */
  parts[0].bc.type = FEA_ELASTIC_TRACTION;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx,
              "(translation in x)");
  parts[0].bc.type = FEA_ELASTIC_DISPLACEMENT;
  parts[1].physical_tag = 42;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts[1] names physical tag 42");
  parts[1].physical_tag = 3, parts[1].bc.components = FEA_COMPONENT_Z;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts[1] fixes component 2");
  free(u);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
  fea_context_destroy(&ctx);
}

Test(elasticity, gmsh_parts_quads) { gmsh_tension("square-sides-quad.msh"); }
Test(elasticity, gmsh_parts_triangles) { gmsh_tension("square-sides-tri.msh"); }
