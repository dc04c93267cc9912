/* Elasticity's refusals and its nearly incompressible limit: bad input
 * (material, loads at a point, component masks, sides, parts) refused with
 * a message naming the item and the output left NULL; a multifrontal
 * solver refusing a new problem that fixes other DoFs (and keeping its
 * factorization), and taking one that fixes the same DoFs; and Lame's
 * cylinder at nu = 0.4999, solved, with the locking of pure displacement
 * elements measured against nu = 0.3 (and relieved by a higher degree). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <feaccel.h>
#include <feaccel/solver.h>

#include "api-common.h"
#include "elasticity-common.h"
#include "ring-common.h"

static void nan_body_force(const double *x, double *f, void *user) {
  (void)user;
  f[0] = 1.0;
  f[1] = x[0] > 0.5 && x[1] > 0.5 ? NAN : 0.0;
}

static double negative_E(const double *x, void *user) {
  (void)user;
  return x[1] > 0.5 ? -1.0 : 2.0;
}

/* A 2D B-spline box of degree 2, n x n elements, dim components. */
static fea_space *box_space(fea_context *ctx, int dim, fea_index n) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = dim;
  for (int k = 0; k < 3; k++) bd.degree[k] = 2, bd.n[k] = n;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_set_num_components(s, dim));
  return s;
}

/* Each refusal names its item and leaves *out NULL (a non-NULL sentinel
 * before the call). */
#define REFUSED(space, desc, needle)                                                            \
  do {                                                                                          \
    fea_problem *pb_ = (fea_problem *)(void *)&sentinel;                                        \
    EXPECT_FAIL(fea_problem_create_elasticity((space), (desc), &pb_), FEA_ERR_INVALID_ARG, ctx, \
                (needle));                                                                      \
    cr_expect(pb_ == NULL, "a refused create left its output set");                             \
  } while (0)

Test(elasticity_checks, refusals_name_the_item) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  int sentinel = 0;
  fea_space *s = box_space(ctx, 2, 2), *s3 = box_space(ctx, 3, 1);
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  /* The material. */
  d.E = -3.0;
  REFUSED(s, &d, "E = -3");
  d.E = NAN;
  REFUSED(s, &d, "E = nan");
  d.E = 1.0, d.nu = 0.7;
  REFUSED(s, &d, "nu = 0.7");
  d.nu = NAN;
  REFUSED(s, &d, "nu = nan");
  d.nu = 0.3;
  /* Conditions: their type, a mask beyond the space's components, a side a
   * 2D space lacks, a spring stiffness. */
  d.sides[FEA_SIDE_EAST].type = (fea_elastic_bc_type)9;
  REFUSED(s, &d, "sides[1] (east) has type 9");
  d.sides[FEA_SIDE_EAST].type = FEA_ELASTIC_SPRING;
  d.sides[FEA_SIDE_EAST].pressure = -2.0;
  REFUSED(s, &d, "sides[1] (east) has the spring stiffness k = -2");
  d.sides[FEA_SIDE_EAST].pressure = 1.0;
  d.sides[FEA_SIDE_BACK].type = FEA_ELASTIC_TRACTION;
  REFUSED(s, &d, "sides[5] (back) is set, but a 2D space has sides 0..3 only");
  d.sides[FEA_SIDE_BACK].type = FEA_ELASTIC_DISPLACEMENT;
  fea_elasticity_desc d3 = FEA_ELASTICITY_DESC_INIT;
  d3.sides[FEA_SIDE_FRONT].components = 8u;
  REFUSED(s3, &d3, "sides[4] (front) fixes component 3 (mask 0x8), which the 3-component space");
  /* Springs of stiffness 0 everywhere remove nothing. */
  fea_elasticity_desc f = FEA_ELASTICITY_DESC_INIT;
  for (int side = 0; side < 4; side++) f.sides[side].type = FEA_ELASTIC_SPRING;
  REFUSED(s, &f, "translation in x, translation in y, rotation about z");
  /* Material and loads from callbacks are checked where element systems
   * are computed, naming the point: by the reference assembly and by a
   * multifrontal setup alike. */
  fea_problem *pb = NULL;
  d.body_force = nan_body_force;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  double *b = malloc((size_t)nf * sizeof *b);
  cr_assert(b);
  fea_matrix *A = NULL;
  EXPECT_FAIL(fea_problem_assemble_reference(pb, b, &A), FEA_ERR_INVALID_ARG, ctx,
              "a component of the body force f is nan at x = (");
  cr_expect(A == NULL);
  fea_solver *sv = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, pb, NULL, &sv));
  EXPECT_FAIL(fea_solver_setup(sv), FEA_ERR_INVALID_ARG, ctx, "body force f is nan at x = (");
  fea_solver_destroy(&sv);
  fea_problem_destroy(&pb);
  d.body_force = NULL;
  d.E_fn = negative_E;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  EXPECT_FAIL(fea_problem_assemble_reference(pb, b, &A), FEA_ERR_INVALID_ARG, ctx,
              "Young's modulus E is -1 at x = (");
  fea_problem_destroy(&pb);
  free(b);
  fea_space_destroy(&s);
  fea_space_destroy(&s3);
  fea_context_destroy(&ctx);
}

/* A Gmsh part that is not a group of the mesh's boundary, by name or tag. */
Test(elasticity_checks, gmsh_part_that_does_not_exist) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  int sentinel = 0;
  const char *dir = getenv("FEA_TEST_DATA");
  cr_assert(dir, "FEA_TEST_DATA is not set");
  char path[1024];
  snprintf(path, sizeof path, "%s/square-sides-quad.msh", dir);
  fea_mesh *m = NULL;
  OK(fea_mesh_read_gmsh(ctx, path, &m));
  fea_space *s = NULL;
  OK(fea_space_create_lagrange(m, 2, FEA_NODES_EQUISPACED, &s));
  OK(fea_space_set_num_components(s, 2));
  fea_elastic_part parts[2] = {
      {0, "west", {FEA_ELASTIC_DISPLACEMENT, FEA_COMPONENT_X, NULL, NULL, 0.0, NULL, NULL}},
      {0, "nowhere", {FEA_ELASTIC_SPRING, 0u, NULL, NULL, 1.0, NULL, NULL}}};
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.parts = parts, d.num_parts = 2;
  REFUSED(s, &d, "nowhere");
  parts[1].name = NULL, parts[1].physical_tag = 77;
  REFUSED(s, &d, "parts[1] names physical tag 77");
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
  fea_context_destroy(&ctx);
}

/* ---- fea_solver_set_problem on systems -------------------------------------------------------- */

static void pull(const double *x, double *f, void *user) {
  (void)user;
  f[0] = 1.0 + x[1];
  f[1] = x[0] * x[0] - 0.5;
}

static double max_abs_diff(fea_index n, const double *a, const double *b, double scale) {
  double d = 0;
  for (fea_index i = 0; i < n; i++) d = fmax(d, fabs(a[i] - scale * b[i]));
  return d;
}

/* A problem on the solver's space that fixes other components (rollers in
 * place of clamps) is refused, naming the first DoF that differs, and the
 * solver keeps solving its own; one with the same fixed DoFs and E four
 * times larger is taken, and its solution is the first one / 4 (u is
 * linear in 1 / E with g = 0). */
Test(elasticity_checks, set_problem_refuses_other_fixed_dofs) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_space *s = box_space(ctx, 2, 4);
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = 3.0;
  d.body_force = pull;
  fea_problem *clamped = NULL, *rollers = NULL, *stiffer = NULL;
  OK(fea_problem_create_elasticity(s, &d, &clamped));
  d.E = 12.0;
  OK(fea_problem_create_elasticity(s, &d, &stiffer));
  d.sides[FEA_SIDE_WEST].components = FEA_COMPONENT_X;
  d.sides[FEA_SIDE_SOUTH].components = FEA_COMPONENT_Y;
  d.sides[FEA_SIDE_EAST].type = d.sides[FEA_SIDE_NORTH].type = FEA_ELASTIC_SPRING;
  d.sides[FEA_SIDE_EAST].pressure = d.sides[FEA_SIDE_NORTH].pressure = 1.0;
  OK(fea_problem_create_elasticity(s, &d, &rollers));
  fea_index nf = 0, nr = 0;
  OK(fea_problem_get_num_free_dofs(clamped, &nf));
  OK(fea_problem_get_num_free_dofs(rollers, &nr));
  cr_assert(nr > nf);
  double *u = malloc((size_t)nr * sizeof *u), *v = malloc((size_t)nr * sizeof *v);
  cr_assert(u && v);
  fea_solver *sv = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, clamped, NULL, &sv));
  OK(fea_solver_setup(sv));
  OK(fea_solver_solve(sv, 1, NULL, 0, u, nf));
  EXPECT_FAIL(fea_solver_set_problem(sv, rollers), FEA_ERR_INVALID_ARG, ctx,
              "fixes other DoFs than the solver's");
  OK(fea_solver_solve(sv, 1, NULL, 0, v, nf));
  cr_expect(max_abs_diff(nf, u, v, 1.0) == 0.0, "the refused problem changed the solver");
  OK(fea_solver_set_problem(sv, stiffer));
  OK(fea_solver_setup(sv));
  OK(fea_solver_solve(sv, 1, NULL, 0, v, nf));
  double ref = 0;
  for (fea_index i = 0; i < nf; i++) ref = fmax(ref, fabs(u[i]));
  cr_expect(max_abs_diff(nf, u, v, 4.0) <= 1e-12 * ref, "E x 4 did not give u / 4: %.3e of %.3e",
            max_abs_diff(nf, u, v, 4.0), ref);
  fea_solver_destroy(&sv);
  free(u);
  free(v);
  fea_problem_destroy(&clamped);
  fea_problem_destroy(&rollers);
  fea_problem_destroy(&stiffer);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* ---- nearly incompressible: nu = 0.4999 ------------------------------------------------------- */

/* The cylinder's L2 and H1 errors relative to the exact solution's norms,
 * degree p, n x n elements, multifrontal. */
static void lame_relative(fea_context *ctx, double nu, int p, fea_index n, double *l2, double *h1) {
  ring q;
  ring_init(&q, 2, 0);
  lame l = lame_make(2, 1000.0, nu, 10.0);
  fea_space *s = annulus_space(ctx, &q, 2, p, n, 0);
  fea_elasticity_desc d = lame_desc(&l);
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  double *u = solve_elastic(ctx, s, pb, 0);
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  double *zero = calloc((size_t)info.num_dofs, sizeof *zero);
  cr_assert(zero);
  double e2[3], eh[3], n2[3], nh[3];
  OK(fea_problem_error_norms_vector(pb, u, lame_u, lame_grad, &l, e2, eh));
  OK(fea_problem_error_norms_vector(pb, zero, lame_u, lame_grad, &l, n2, nh));
  *l2 = e2[2] / n2[2];
  *h1 = eh[2] / nh[2];
  free(zero);
  free(u);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

/* nu = 0.4999 solves (finite, a few percent at worst on the coarse mesh)
 * but locks: at p = 2 its relative errors exceed nu = 0.3's on the same
 * mesh by the factor below; p = 4 brings them back near nu = 0.3's. The
 * figures are docs/problems.md's ("Nearly incompressible"). */
Test(elasticity_checks, nearly_incompressible_locks, .timeout = 120) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  for (int p = 2; p <= 4; p += 2) {
    const fea_index n = 8;
    double l2a, h1a, l2b, h1b;
    lame_relative(ctx, 0.3, p, n, &l2a, &h1a);
    lame_relative(ctx, 0.4999, p, n, &l2b, &h1b);
    cr_log_info(
        "p = %d, n = %lld: relative L2 %.3e (nu 0.3) vs %.3e (nu 0.4999), H1 %.3e vs "
        "%.3e",
        p, (long long)n, l2a, l2b, h1a, h1b);
    cr_expect(isfinite(l2b) && l2b < 0.05, "p = %d: nu = 0.4999 relative L2 error %.3e", p, l2b);
    if (p == 2)
      cr_expect(l2b > 10 * l2a && h1b > 3 * h1a,
                "p = 2: no locking seen: L2 %.3e vs %.3e, H1 %.3e vs %.3e", l2b, l2a, h1b, h1a);
    else
      cr_expect(l2b < 10 * l2a, "p = 4: L2 %.3e vs %.3e", l2b, l2a);
  }
  fea_context_destroy(&ctx);
}
