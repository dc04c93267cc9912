/* Shared by the elasticity tests (test-elasticity.c, -stress.c, -ring.c,
 * -plate.c): Jacobi-preconditioned CG on the CSR operator, Lame's
 * thick-walled cylinder on the exact NURBS quarter annulus (or the thick
 * quarter ring in 3D) with its exact displacement, gradient and stress, and
 * uniaxial tension of the box [0, 2] x [0, 1] (x [0, 1]) with its exact
 * linear displacement. One copy of each, so that the tests check the same
 * closed forms with the same setups. */
#ifndef FEA_TESTS_ELASTICITY_COMMON_H
#define FEA_TESTS_ELASTICITY_COMMON_H

#include <math.h>
#include <stdlib.h>

#include <criterion/criterion.h>
#include <feaccel.h>
#include <feaccel/solver.h>

#include "api-common.h"
#include "ring-common.h"

/* ---- solves ------------------------------------------------------------------------------------ */

/* The free solution of pb by Jacobi-preconditioned CG on the CSR operator
 * (relative tolerance 1e-13, at most max_iterations). */
static inline void solve_cg(fea_context *ctx, fea_problem *pb, fea_index max_iterations,
                            double *u_free) {
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_CSR;
  fea_operator *op = NULL;
  OK(fea_operator_create(ctx, pb, &od, &op));
  fea_vector *b = NULL, *x = NULL;
  OK(fea_vector_create(ctx, nf, FEA_F64, &b));
  OK(fea_vector_create(ctx, nf, FEA_F64, &x));
  OK(fea_operator_get_rhs(op, b));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-13;
  cd.max_iterations = max_iterations;
  cd.jacobi = 1;
  fea_cg_stats st = FEA_CG_STATS_INIT;
  OK(fea_cg_solve(op, b, x, &cd, &st));
  cr_assert(st.converged, "CG did not converge: %lld iterations", (long long)st.iterations);
  OK(fea_vector_read(x, nf, FEA_F64, u_free));
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
}

/* The same, expanded to every DoF of s; caller frees. */
static inline double *solve_cg_full(fea_context *ctx, fea_space *s, fea_problem *pb,
                                    fea_index max_iterations) {
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  double *uf = malloc((size_t)nf * sizeof *uf), *u = malloc((size_t)info.num_dofs * sizeof *u);
  cr_assert(uf && u);
  solve_cg(ctx, pb, max_iterations, uf);
  OK(fea_problem_expand_solution(pb, uf, u));
  free(uf);
  return u;
}

/* The full solution of pb by the multifrontal solver (cg = 0) or CG on the
 * CSR operator (cg = 1, at most 20000 iterations); caller frees. */
static inline double *solve_elastic(fea_context *ctx, fea_space *s, fea_problem *pb, int cg) {
  return cg ? solve_cg_full(ctx, s, pb, 20000) : solve_direct(ctx, s, pb);
}

/* The measured orders of a refinement pair: L2 p + 1 and H1 p, within 0.1. */
static inline void expect_orders(int p, double ol2, double oh1) {
  cr_expect(fabs(ol2 - (p + 1)) <= 0.1, "p = %d: L2 order %.3f, expected %d", p, ol2, p + 1);
  cr_expect(fabs(oh1 - p) <= 0.1, "p = %d: H1 order %.3f, expected %d", p, oh1, p);
}

/* ---- Lame's cylinder: u_r = A r + B / r, inner radius 1, outer 2, pressure P ---------------- */

/* Plane strain; in 3D (the thick ring with rollers on its bottom and top)
 * the same with u_z = 0. */
typedef struct lame {
  double E, nu, P, A, B;
  int dim;
} lame;

static inline lame lame_make(int dim, double E, double nu, double P) {
  const double a = 1, b = 2, k = P * a * a / (E * (b * b - a * a));
  lame l = {E, nu, P, (1 + nu) * (1 - 2 * nu) * k, (1 + nu) * b * b * k, dim};
  return l;
}

/* u_i = (A + B / r^2) x_i (and u_z = 0). */
static inline void lame_u(const double *x, double *u, void *user) {
  const lame *l = user;
  const double r2 = x[0] * x[0] + x[1] * x[1], s = l->A + l->B / r2;
  u[0] = s * x[0];
  u[1] = s * x[1];
  if (l->dim == 3) u[2] = 0.0;
}

/* d u_i / d x_j = (A + B / r^2) delta_ij - 2 B x_i x_j / r^4 in the plane, 0 out of it. */
static inline void lame_grad(const double *x, double *g, void *user) {
  const lame *l = user;
  const int dim = l->dim;
  const double r2 = x[0] * x[0] + x[1] * x[1], s = l->A + l->B / r2;
  for (int i = 0; i < dim; i++)
    for (int j = 0; j < dim; j++)
      g[i * dim + j] = i < 2 && j < 2 ? (i == j ? s : 0.0) - 2 * l->B * x[i] * x[j] / (r2 * r2)
                                      : 0.0;
}

/* The stress at x (xx, yy, zz, yz, xz, xy): sigma_rr = C1 - C2 / r^2,
 * sigma_tt = C1 + C2 / r^2 with sigma_rr(1) = -P and sigma_rr(2) = 0:
 * C1 = P / 3, C2 = 4 P / 3; sigma_zz = nu (rr + tt). */
static inline void lame_stress(const lame *l, const double *x, double want[6]) {
  const double C1 = l->P / 3, C2 = 4 * l->P / 3;
  const double r = hypot(x[0], x[1]), c = x[0] / r, sn = x[1] / r;
  const double srr = C1 - C2 / (r * r), stt = C1 + C2 / (r * r);
  want[0] = srr * c * c + stt * sn * sn;
  want[1] = srr * sn * sn + stt * c * c;
  want[2] = l->nu * (srr + stt);
  want[3] = want[4] = 0.0;
  want[5] = (srr - stt) * c * sn;
}

/* The quarter annulus's sides: west the inner arc (pressure), east the outer
 * arc (free), south y = 0 (u_y = 0), north x = 0 (u_x = 0); the thick ring's
 * front z = 0 and back z = depth take u_z = 0. */
static inline fea_elasticity_desc lame_desc(const lame *l) {
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = l->E;
  d.nu = l->nu;
  d.sides[FEA_SIDE_WEST].type = FEA_ELASTIC_PRESSURE;
  d.sides[FEA_SIDE_WEST].pressure = l->P;
  d.sides[FEA_SIDE_EAST].type = FEA_ELASTIC_TRACTION;
  d.sides[FEA_SIDE_SOUTH].components = FEA_COMPONENT_Y;
  d.sides[FEA_SIDE_NORTH].components = FEA_COMPONENT_X;
  if (l->dim == 3) {
    d.sides[FEA_SIDE_FRONT].components = FEA_COMPONENT_Z;
    d.sides[FEA_SIDE_BACK].components = FEA_COMPONENT_Z;
  }
  return d;
}

/* The vector space of degree p on the annulus (or ring) q: n x n elements
 * (x nz in 3D), dim components. */
static inline fea_space *annulus_space(fea_context *ctx, const ring *q, int dim, int p, fea_index n,
                                       fea_index nz) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = dim;
  bd.degree[0] = bd.degree[1] = p;
  bd.n[0] = bd.n[1] = n;
  if (dim == 3) bd.degree[2] = p, bd.n[2] = nz;
  bd.geometry = &q->g;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_set_num_components(s, dim));
  return s;
}

/* ---- uniaxial tension: exact linear solutions -------------------------------------------------- */

typedef struct tension {
  int dim;
  double s[3]; /* u_k = s_k x_k */
} tension;

/* The strains of a pull sigma along x: plane stress and 3D, sigma / E and
 * -nu sigma / E; plane strain (eps_zz = 0 makes sigma_zz = nu sigma),
 * sigma (1 - nu^2) / E and -sigma nu (1 + nu) / E. */
static inline tension tension_make(int dim, fea_elasticity_model model, double E, double nu,
                                   double sigma) {
  tension t = {dim, {0, 0, 0}};
  if (dim == 3 || model == FEA_ELASTICITY_PLANE_STRESS) {
    t.s[0] = sigma / E;
    t.s[1] = t.s[2] = -nu * sigma / E;
  } else {
    t.s[0] = sigma * (1 - nu * nu) / E;
    t.s[1] = -sigma * nu * (1 + nu) / E;
  }
  return t;
}

static inline void tension_u(const double *x, double *u, void *user) {
  const tension *t = user;
  for (int k = 0; k < t->dim; k++) u[k] = t->s[k] * x[k];
}

static inline void tension_grad(const double *x, double *g, void *user) {
  (void)x;
  const tension *t = user;
  for (int i = 0; i < t->dim; i++)
    for (int j = 0; j < t->dim; j++) g[i * t->dim + j] = i == j ? t->s[i] : 0.0;
}

/* The traction (sigma, 0, 0), sigma at user. */
static inline void traction_x(const double *x, double *h, void *user) {
  (void)x;
  h[0] = *(const double *)user;
  h[1] = h[2] = 0.0;
}

/* The box [0, 2] x [0, 1] (x [0, 1]) with n elements per direction: Q2 on a
 * structured mesh (lagrange, *mesh set) or degree-2 B-splines (*mesh left
 * NULL), dim components. */
static inline fea_space *tension_space(fea_context *ctx, int dim, int lagrange, fea_index n,
                                       fea_mesh **mesh) {
  fea_space *s = NULL;
  *mesh = NULL;
  if (lagrange) {
    fea_mesh_desc md = FEA_MESH_DESC_INIT;
    md.dim = dim;
    for (int k = 0; k < 3; k++) md.n[k] = n;
    md.upper[0] = 2.0;
    OK(fea_mesh_create_structured(ctx, &md, mesh));
    OK(fea_space_create_lagrange(*mesh, 2, FEA_NODES_EQUISPACED, &s));
  } else {
    fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
    bd.dim = dim;
    for (int k = 0; k < 3; k++) bd.degree[k] = 2, bd.n[k] = n;
    bd.upper[0] = 2.0;
    OK(fea_space_create_bspline(ctx, &bd, &s));
  }
  OK(fea_space_set_num_components(s, dim));
  return s;
}

/* The box pulled by *sigma on its east side (a traction, or with pressure a
 * pressure -*sigma), rollers on the west, south (and front) sides, the rest
 * free. sigma must outlive the problem (the traction reads it). */
static inline fea_elasticity_desc tension_desc(int dim, fea_elasticity_model model, double E,
                                               double nu, const double *sigma, int pressure) {
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = E, d.nu = nu, d.model = model;
  d.sides[FEA_SIDE_WEST].components = FEA_COMPONENT_X;
  d.sides[FEA_SIDE_SOUTH].components = FEA_COMPONENT_Y;
  if (pressure) {
    d.sides[FEA_SIDE_EAST].type = FEA_ELASTIC_PRESSURE;
    d.sides[FEA_SIDE_EAST].pressure = -*sigma;
  } else {
    d.sides[FEA_SIDE_EAST].type = FEA_ELASTIC_TRACTION;
    d.sides[FEA_SIDE_EAST].traction = traction_x;
    d.sides[FEA_SIDE_EAST].traction_user = (void *)sigma;
  }
  d.sides[FEA_SIDE_NORTH].type = FEA_ELASTIC_TRACTION;
  if (dim == 3) {
    d.sides[FEA_SIDE_FRONT].components = FEA_COMPONENT_Z;
    d.sides[FEA_SIDE_BACK].type = FEA_ELASTIC_TRACTION;
  }
  return d;
}

#endif
