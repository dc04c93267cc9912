/* A general elasticity tensor C(x) (fea_elasticity_desc.C_fn, Voigt):
 * the isotropic tensor given as C(x) gives the solution (and stresses) of E
 * and nu to 1e-12 (Lame's cylinder in 2D, a loaded 3D box); a 3D orthotropic
 * tensor with three different shear moduli reproduces an exact affine
 * displacement under the tractions of the same tensor (which checks the
 * Voigt order, yz xz xy); a 2D orthotropic tensor varying in x converges at
 * orders p + 1 and p on a manufactured solution; a tensor that is not
 * symmetric or not positive definite at a point is refused naming it; a
 * caller compiled before C_fn existed gets the isotropic material. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <feaccel.h>
#include <feaccel/solver.h>

#include "api-common.h"
#include "elasticity-common.h"
#include "ring-common.h"

/* ---- the isotropic tensor ---------------------------------------------------------------------- */

typedef struct iso {
  int dim;
  double E, nu;
} iso;

/* lambda 1 1^T + mu diag(2, 2, (2,) 1, 1, 1): sigma = C eps with engineering shears. */
static void iso_tensor(const double *x, double *C, void *user) {
  (void)x;
  const iso *m = user;
  const double l = m->E * m->nu / ((1 + m->nu) * (1 - 2 * m->nu)), mu = m->E / (2 * (1 + m->nu));
  const int nv = m->dim == 3 ? 6 : 3;
  for (int a = 0; a < nv; a++)
    for (int b = 0; b < nv; b++)
      C[a * nv + b] = a < m->dim && b < m->dim ? l + (a == b ? 2 * mu : 0.0) : (a == b ? mu : 0.0);
}

static double max_rel_diff(fea_index n, const double *a, const double *b) {
  double d = 0, r = 0;
  for (fea_index i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
    r = fmax(r, fabs(b[i]));
  }
  return d / r;
}

Test(elasticity_tensor, isotropic_tensor_equals_E_nu_2d) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  ring q;
  ring_init(&q, 2, 0);
  lame l = lame_make(2, 1000.0, 0.3, 10.0);
  fea_space *s = annulus_space(ctx, &q, 2, 3, 6, 0);
  fea_elasticity_desc d = lame_desc(&l);
  fea_problem *a = NULL, *b = NULL;
  OK(fea_problem_create_elasticity(s, &d, &a));
  iso m = {2, l.E, l.nu};
  d.E = -1.0; /* ignored: C_fn stands for the material */
  d.C_fn = iso_tensor;
  d.material_user = &m;
  OK(fea_problem_create_elasticity(s, &d, &b));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  double *ua = solve_direct(ctx, s, a), *ub = solve_direct(ctx, s, b);
  const double diff = max_rel_diff(info.num_dofs, ub, ua);
  cr_expect(diff <= 1e-12, "2D: C(x) vs E, nu: relative difference %.3e", diff);
  /* In-plane stresses alike (sigma_zz is not the in-plane tensor's). */
  const double t[2] = {0.3, 0.6};
  double sa[6], sb[6];
  OK(fea_problem_evaluate_stress(a, ua, 1, t, NULL, NULL, sa, NULL));
  OK(fea_problem_evaluate_stress(b, ub, 1, t, NULL, NULL, sb, NULL));
  for (int k = 0; k < 6; k++)
    if (k != 2)
      cr_expect(fabs(sa[k] - sb[k]) <= 1e-10 * l.P, "stress %d: %.15g vs %.15g", k, sa[k], sb[k]);
  cr_expect(sb[2] == 0.0);
  free(ua);
  free(ub);
  fea_problem_destroy(&a);
  fea_problem_destroy(&b);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

static void load3(const double *x, double *f, void *user) {
  (void)user;
  f[0] = sin(2 * x[1]) + x[2];
  f[1] = x[0] * x[2] - 0.3;
  f[2] = cos(x[0] + x[1]);
}

Test(elasticity_tensor, isotropic_tensor_equals_E_nu_3d) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 3;
  for (int k = 0; k < 3; k++) bd.degree[k] = 2, bd.n[k] = 3;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_set_num_components(s, 3));
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = 7.0, d.nu = 0.28;
  d.body_force = load3;
  d.sides[FEA_SIDE_EAST].type = FEA_ELASTIC_TRACTION;
  d.sides[FEA_SIDE_NORTH].type = FEA_ELASTIC_SPRING;
  d.sides[FEA_SIDE_NORTH].pressure = 3.0;
  fea_problem *a = NULL, *b = NULL;
  OK(fea_problem_create_elasticity(s, &d, &a));
  iso m = {3, d.E, d.nu};
  d.C_fn = iso_tensor;
  d.material_user = &m;
  OK(fea_problem_create_elasticity(s, &d, &b));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  double *ua = solve_direct(ctx, s, a), *ub = solve_direct(ctx, s, b);
  const double diff = max_rel_diff(info.num_dofs, ub, ua);
  cr_expect(diff <= 1e-12, "3D: C(x) vs E, nu: relative difference %.3e", diff);
  const double t[3] = {0.2, 0.7, 0.4};
  double sa[6], sb[6], va = 0, vb = 0;
  OK(fea_problem_evaluate_stress(a, ua, 1, t, NULL, NULL, sa, &va));
  OK(fea_problem_evaluate_stress(b, ub, 1, t, NULL, NULL, sb, &vb));
  for (int k = 0; k < 6; k++)
    cr_expect(fabs(sa[k] - sb[k]) <= 1e-10 * va, "stress %d: %.15g vs %.15g", k, sa[k], sb[k]);
  free(ua);
  free(ub);
  fea_problem_destroy(&a);
  fea_problem_destroy(&b);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* ---- 3D orthotropic: an exact affine displacement ----------------------------------------------- */

/* Orthotropic in Voigt form: normal block [[11, 2, 3], [2, 8, 1.5], [3, 1.5, 6]], shear moduli
 * G_yz = 1, G_xz = 2.5, G_xy = 4 (all different, so that a wrong shear order shows). */
static void ortho3(const double *x, double *C, void *user) {
  (void)x, (void)user;
  static const double N[3][3] = {{11, 2, 3}, {2, 8, 1.5}, {3, 1.5, 6}}, G[3] = {1.0, 2.5, 4.0};
  memset(C, 0, 36 * sizeof *C);
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) C[a * 6 + b] = N[a][b];
  for (int k = 0; k < 3; k++) C[(3 + k) * 6 + 3 + k] = G[k];
}

/* u = M x: every strain nonzero (exx 0.01, eyy -0.02, ezz 0.015; yz, xz, xy shears). */
static const double M3[3][3] = {{0.01, 0.004, -0.006},
                                {0.002, -0.02, 0.005},
                                {0.003, 0.001, 0.015}};

static void affine_u(const double *x, double *u, void *user) {
  (void)user;
  for (int i = 0; i < 3; i++) u[i] = M3[i][0] * x[0] + M3[i][1] * x[1] + M3[i][2] * x[2];
}

static void affine_grad(const double *x, double *g, void *user) {
  (void)x, (void)user;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) g[i * 3 + j] = M3[i][j];
}

/* sigma n for the side whose outward normal user points to. */
static void affine_traction(const double *x, double *h, void *user) {
  const double *n = user;
  double C[36], eps[6], s[6];
  ortho3(x, C, NULL);
  eps[0] = M3[0][0], eps[1] = M3[1][1], eps[2] = M3[2][2];
  eps[3] = M3[1][2] + M3[2][1], eps[4] = M3[0][2] + M3[2][0], eps[5] = M3[0][1] + M3[1][0];
  for (int k = 0; k < 6; k++) {
    s[k] = 0;
    for (int l = 0; l < 6; l++) s[k] += C[k * 6 + l] * eps[l];
  }
  const double S[3][3] = {{s[0], s[5], s[4]}, {s[5], s[1], s[3]}, {s[4], s[3], s[2]}};
  for (int i = 0; i < 3; i++) h[i] = S[i][0] * n[0] + S[i][1] * n[1] + S[i][2] * n[2];
}

Test(elasticity_tensor, orthotropic_3d_affine_exact) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 3;
  for (int k = 0; k < 3; k++) bd.degree[k] = 2, bd.n[k] = 2;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_set_num_components(s, 3));
  static const double n[6][3] = {{-1, 0, 0}, {1, 0, 0},  {0, -1, 0},
                                 {0, 1, 0},  {0, 0, -1}, {0, 0, 1}};
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.C_fn = ortho3;
  d.displacement = affine_u;
  for (int side = 1; side < 6; side++) { /* west clamped to u, the others loaded */
    d.sides[side].type = FEA_ELASTIC_TRACTION;
    d.sides[side].traction = affine_traction;
    d.sides[side].traction_user = (void *)n[side];
  }
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  double *u = solve_direct(ctx, s, pb);
  double l2[4], h1[4];
  OK(fea_problem_error_norms_vector(pb, u, affine_u, affine_grad, NULL, l2, h1));
  cr_expect(l2[3] <= 1e-12 && h1[3] <= 1e-11, "orthotropic affine: L2 %.3e, H1 %.3e", l2[3], h1[3]);
  free(u);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* ---- 2D orthotropic, varying in x: orders -------------------------------------------------------- */

static const double C0[3][3] = {{10.0, 1.5, 0.0}, {1.5, 3.0, 0.0}, {0.0, 0.0, 2.0}};
static const double A_ = 1.3, B_ = 0.7, C_ = 0.9, D_ = -1.1;

/* C(x) = (1 + x / 2) C0. */
static void ortho2(const double *x, double *C, void *user) {
  (void)user;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) C[a * 3 + b] = (1 + 0.5 * x[0]) * C0[a][b];
}

static void mu_(const double *x, double *u, void *user) {
  (void)user;
  u[0] = sin(A_ * x[0] + B_ * x[1]);
  u[1] = cos(C_ * x[0] + D_ * x[1]);
}

static void mgrad(const double *x, double *g, void *user) {
  (void)user;
  const double c0 = cos(A_ * x[0] + B_ * x[1]), s1 = sin(C_ * x[0] + D_ * x[1]);
  g[0] = A_ * c0, g[1] = B_ * c0;
  g[2] = -C_ * s1, g[3] = -D_ * s1;
}

/* f = -div(c S), S = C0 eps: f = -(c div S + S grad c), grad c = (1/2, 0). */
static void mforce(const double *x, double *f, void *user) {
  (void)user;
  const double s0 = sin(A_ * x[0] + B_ * x[1]), c0 = cos(A_ * x[0] + B_ * x[1]);
  const double s1 = sin(C_ * x[0] + D_ * x[1]), c1 = cos(C_ * x[0] + D_ * x[1]);
  const double e[3] = {A_ * c0, -D_ * s1, B_ * c0 - C_ * s1};
  const double ex[3] = {-A_ * A_ * s0, -C_ * D_ * c1, -A_ * B_ * s0 - C_ * C_ * c1};
  const double ey[3] = {-A_ * B_ * s0, -D_ * D_ * c1, -B_ * B_ * s0 - C_ * D_ * c1};
  double S[3] = {0}, Sx[3] = {0}, Sy[3] = {0};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      S[a] += C0[a][b] * e[b];
      Sx[a] += C0[a][b] * ex[b];
      Sy[a] += C0[a][b] * ey[b];
    }
  const double c = 1 + 0.5 * x[0];
  f[0] = -(c * (Sx[0] + Sy[2]) + 0.5 * S[0]);
  f[1] = -(c * (Sx[2] + Sy[1]) + 0.5 * S[2]);
}

Test(elasticity_tensor, orthotropic_2d_orders, .timeout = 120) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  for (int p = 2; p <= 3; p++) {
    double l2[2], h1[2];
    for (int i = 0; i < 2; i++) {
      fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
      bd.degree[0] = bd.degree[1] = p;
      bd.n[0] = bd.n[1] = 8 << i;
      fea_space *s = NULL;
      OK(fea_space_create_bspline(ctx, &bd, &s));
      OK(fea_space_set_num_components(s, 2));
      fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
      d.C_fn = ortho2;
      d.body_force = mforce;
      d.displacement = mu_;
      fea_problem *pb = NULL;
      OK(fea_problem_create_elasticity(s, &d, &pb));
      double *u = solve_direct(ctx, s, pb);
      double e2[3], eh[3];
      OK(fea_problem_error_norms_vector(pb, u, mu_, mgrad, NULL, e2, eh));
      l2[i] = e2[2], h1[i] = eh[2];
      free(u);
      fea_problem_destroy(&pb);
      fea_space_destroy(&s);
    }
    const double ol2 = log2(l2[0] / l2[1]), oh1 = log2(h1[0] / h1[1]);
    cr_log_info("orthotropic p = %d: L2 %.3e -> %.3e (%.3f), H1 %.3e -> %.3e (%.3f)", p, l2[0],
                l2[1], ol2, h1[0], h1[1], oh1);
    expect_orders(p, ol2, oh1);
  }
  fea_context_destroy(&ctx);
}

/* ---- refusals ---------------------------------------------------------------------------------- */

static void unsymmetric(const double *x, double *C, void *user) {
  ortho2(x, C, user);
  if (x[0] > 0.5) C[1] += 1.0; /* C[0][1] != C[1][0] */
}

static void indefinite(const double *x, double *C, void *user) {
  ortho2(x, C, user);
  if (x[1] > 0.5) C[8] = -1.0; /* a negative shear modulus */
}

Test(elasticity_tensor, refuses_a_tensor_that_is_not_spd_naming_the_point) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.degree[0] = bd.degree[1] = 2;
  bd.n[0] = bd.n[1] = 2;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_set_num_components(s, 2));
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.C_fn = unsymmetric;
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  double *b = malloc((size_t)nf * sizeof *b);
  cr_assert(b);
  fea_matrix *A = NULL;
  EXPECT_FAIL(fea_problem_assemble_reference(pb, b, &A), FEA_ERR_INVALID_ARG, ctx,
              "the elasticity tensor C_fn is not symmetric at x = (");
  fea_problem_destroy(&pb);
  d.C_fn = indefinite;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  EXPECT_FAIL(fea_problem_assemble_reference(pb, b, &A), FEA_ERR_INVALID_ARG, ctx,
              "the elasticity tensor C_fn is not positive definite at x = (");
  fea_solver *sv = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, pb, NULL, &sv));
  EXPECT_FAIL(fea_solver_setup(sv), FEA_ERR_INVALID_ARG, ctx, "not positive definite at x = (");
  fea_solver_destroy(&sv);
  fea_problem_destroy(&pb);
  free(b);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* ---- older callers ------------------------------------------------------------------------------ */

static void load2(const double *x, double *f, void *user) {
  (void)user;
  f[0] = sin(2 * x[1]) + 1.0;
  f[1] = x[0] * x[1] - 0.3;
}

static void never(const double *x, double *C, void *user) {
  (void)x, (void)C, (void)user;
  cr_assert_fail("C_fn beyond the caller's size was called");
}

/* A caller compiled before C_fn (its size ends at num_parts) gets the
 * isotropic material whatever lies past its struct; the same solution as
 * today's caller without C_fn. */
Test(elasticity_tensor, older_callers_get_the_isotropic_material) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.degree[0] = bd.degree[1] = 2;
  bd.n[0] = bd.n[1] = 3;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_set_num_components(s, 2));
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = 4.0, d.nu = 0.2;
  d.body_force = load2;
  fea_problem *a = NULL, *b = NULL;
  OK(fea_problem_create_elasticity(s, &d, &a));
  d.C_fn = never; /* past the older caller's size: not read */
  d.size = offsetof(fea_elasticity_desc, C_fn);
  OK(fea_problem_create_elasticity(s, &d, &b));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  double *ua = solve_direct(ctx, s, a), *ub = solve_direct(ctx, s, b);
  cr_expect(max_rel_diff(info.num_dofs, ub, ua) == 0.0);
  free(ua);
  free(ub);
  fea_problem_destroy(&a);
  fea_problem_destroy(&b);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}
