/* Elastic supports (FEA_ELASTIC_SPRING, sigma n + k u = h): a manufactured
 * displacement that does not vanish on the boundary, with springs of
 * constant stiffness on every side (nothing else removes the rigid-body
 * modes) and with a stiffness callback beside a clamped side, converging at
 * orders p + 1 (L2) and p (H1) by the multifrontal solver and CG; the
 * rigid-body check counting springs by their stiffness (k = 0 removes
 * nothing, a negative k(x) is refused naming the point); a spring on a
 * Gmsh part holding uniaxial tension exactly (Q2 and P2). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include <feaccel.h>
#include <feaccel/solver.h>

#include "api-common.h"
#include "elasticity-common.h"

/* u = (sin(a x + b y), cos(c x + d y)) with lambda = 2, mu = 1. */
#define LA 2.0
#define MU 1.0
static const double A_ = 1.3, B_ = 0.7, C_ = 0.9, D_ = -1.1;

static void exact_u(const double *x, double *u, void *user) {
  (void)user;
  u[0] = sin(A_ * x[0] + B_ * x[1]);
  u[1] = cos(C_ * x[0] + D_ * x[1]);
}

static void exact_grad(const double *x, double *g, void *user) {
  (void)user;
  const double c0 = cos(A_ * x[0] + B_ * x[1]), s1 = sin(C_ * x[0] + D_ * x[1]);
  g[0] = A_ * c0, g[1] = B_ * c0;
  g[2] = -C_ * s1, g[3] = -D_ * s1;
}

/* f = -(lambda + mu) grad div u - mu Laplace u. */
static void exact_f(const double *x, double *f, void *user) {
  (void)user;
  const double s0 = sin(A_ * x[0] + B_ * x[1]), c1 = cos(C_ * x[0] + D_ * x[1]);
  f[0] = (LA + MU) * (A_ * A_ * s0 + C_ * D_ * c1) + MU * (A_ * A_ + B_ * B_) * s0;
  f[1] = (LA + MU) * (A_ * B_ * s0 + D_ * D_ * c1) + MU * (C_ * C_ + D_ * D_) * c1;
}

/* The stiffness: a constant k, or with k < 0 the field 1 + x + y^2. */
typedef struct side_data {
  double normal[2], k;
} side_data;

static double stiffness(const double *x, void *user) {
  const side_data *s = user;
  return s->k >= 0 ? s->k : 1.0 + x[0] + x[1] * x[1];
}

/* h = sigma(u) n + k u on the side. */
static void spring_load(const double *x, double *h, void *user) {
  const side_data *s = user;
  double g[4], u[2];
  exact_grad(x, g, NULL);
  exact_u(x, u, NULL);
  const double div = g[0] + g[3], shear = MU * (g[1] + g[2]);
  const double sxx = LA * div + 2 * MU * g[0], syy = LA * div + 2 * MU * g[3];
  const double k = stiffness(x, user);
  h[0] = sxx * s->normal[0] + shear * s->normal[1] + k * u[0];
  h[1] = shear * s->normal[0] + syy * s->normal[1] + k * u[1];
}

static const double normals[4][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};

/* The unit square, degree p, n x n elements: springs on every side
 * (clamp_west = 0: constant k = 5) or u = exact on the west side and
 * springs k(x) on the others; L2 and H1 errors (together). */
static void spring_errors(fea_context *ctx, int p, fea_index n, int clamp_west, int cg, double *l2,
                          double *h1) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.degree[0] = bd.degree[1] = p;
  bd.n[0] = bd.n[1] = n;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_set_num_components(s, 2));
  side_data sd[4];
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.lambda = LA, d.mu = MU;
  d.body_force = exact_f;
  d.displacement = exact_u;
  for (int side = 0; side < 4; side++) {
    sd[side] = (side_data){{normals[side][0], normals[side][1]}, clamp_west ? -1.0 : 5.0};
    if (clamp_west && side == FEA_SIDE_WEST) continue;
    fea_elastic_condition *c = &d.sides[side];
    c->type = FEA_ELASTIC_SPRING;
    c->traction = spring_load;
    c->traction_user = &sd[side];
    if (clamp_west) {
      c->pressure_fn = stiffness;
      c->pressure_user = &sd[side];
    } else {
      c->pressure = 5.0;
    }
  }
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  double *u = solve_elastic(ctx, s, pb, cg);
  double e2[3], eh[3];
  OK(fea_problem_error_norms_vector(pb, u, exact_u, exact_grad, NULL, e2, eh));
  *l2 = e2[2], *h1 = eh[2];
  free(u);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

static void spring_orders(int clamp_west, int cg) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  for (int p = 2; p <= 3; p++) {
    double l2a, h1a, l2b, h1b;
    spring_errors(ctx, p, 8, clamp_west, cg, &l2a, &h1a);
    spring_errors(ctx, p, 16, clamp_west, cg, &l2b, &h1b);
    const double ol2 = log2(l2a / l2b), oh1 = log2(h1a / h1b);
    cr_log_info("springs (%s, %s) p = %d: L2 %.3e -> %.3e (%.3f), H1 %.3e -> %.3e (%.3f)",
                clamp_west ? "k(x), west clamped" : "k = 5 on every side",
                cg ? "cg" : "multifrontal", p, l2a, l2b, ol2, h1a, h1b, oh1);
    expect_orders(p, ol2, oh1);
  }
  fea_context_destroy(&ctx);
}

Test(elasticity_spring, every_side_orders_multifrontal, .timeout = 120) { spring_orders(0, 0); }
Test(elasticity_spring, stiffness_field_orders_cg, .timeout = 120) { spring_orders(1, 1); }

static double zero_k(const double *x, void *user) {
  (void)x, (void)user;
  return 0.0;
}

static double negative_k(const double *x, void *user) {
  (void)user;
  return x[1] > 0.75 ? -1.0 : 1.0;
}

/* One spring side with k > 0 removes every mode of the square (its
 * rotation moves the side's points along it by different amounts); k = 0
 * from a callback removes none, and a k(x) < 0 is refused where the check
 * evaluates it, naming the point. */
Test(elasticity_spring, rigid_modes_count_the_springs) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.degree[0] = bd.degree[1] = 2;
  bd.n[0] = bd.n[1] = 3;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_set_num_components(s, 2));
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  for (int side = 0; side < 4; side++) d.sides[side].type = FEA_ELASTIC_TRACTION;
  d.sides[FEA_SIDE_EAST].type = FEA_ELASTIC_SPRING;
  d.sides[FEA_SIDE_EAST].pressure = 0.5;
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  cr_expect_eq(nf, info.num_dofs, "a spring fixes no DoF");
  fea_problem_destroy(&pb);
  d.sides[FEA_SIDE_EAST].pressure_fn = zero_k;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx,
              "(translation in x, translation in y, rotation about z)");
  cr_expect(pb == NULL);
  d.sides[FEA_SIDE_EAST].pressure_fn = negative_k;
  EXPECT_FAIL(fea_problem_create_elasticity(s, &d, &pb), FEA_ERR_INVALID_ARG, ctx,
              "the spring stiffness k (finite, >= 0) is -1 at x = (1, ");
  /* A roller on the west side and a spring on the east in x only would
   * leave y free; the spring holds every component, so it is removed. */
  d.sides[FEA_SIDE_EAST].pressure_fn = NULL;
  d.sides[FEA_SIDE_WEST].type = FEA_ELASTIC_DISPLACEMENT;
  d.sides[FEA_SIDE_WEST].components = FEA_COMPONENT_X;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* Springs on a structured Q2 mesh's sides (Lagrange faces): the same
 * manufactured solution, order 3 in L2. */
Test(elasticity_spring, lagrange_sides_converge, .timeout = 120) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  double err[2];
  side_data sd[4];
  for (int i = 0; i < 2; i++) {
    fea_mesh_desc md = FEA_MESH_DESC_INIT;
    md.dim = 2;
    md.n[0] = md.n[1] = 4 << i;
    fea_mesh *mesh = NULL;
    OK(fea_mesh_create_structured(ctx, &md, &mesh));
    fea_space *s = NULL;
    OK(fea_space_create_lagrange(mesh, 2, FEA_NODES_EQUISPACED, &s));
    OK(fea_space_set_num_components(s, 2));
    fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
    d.lambda = LA, d.mu = MU;
    d.body_force = exact_f;
    for (int side = 0; side < 4; side++) {
      sd[side] = (side_data){{normals[side][0], normals[side][1]}, 2.0};
      d.sides[side].type = FEA_ELASTIC_SPRING;
      d.sides[side].pressure = 2.0;
      d.sides[side].traction = spring_load;
      d.sides[side].traction_user = &sd[side];
    }
    fea_problem *pb = NULL;
    OK(fea_problem_create_elasticity(s, &d, &pb));
    double *u = solve_cg_full(ctx, s, pb, 20000);
    double l2[3];
    OK(fea_problem_error_norms_vector(pb, u, exact_u, NULL, NULL, l2, NULL));
    err[i] = l2[2];
    free(u);
    fea_problem_destroy(&pb);
    fea_space_destroy(&s);
    fea_mesh_destroy(&mesh);
  }
  const double order = log2(err[0] / err[1]);
  cr_expect(order > 2.8 && order < 3.3, "Q2 springs: L2 order %.3f (%.3e, %.3e)", order, err[0],
            err[1]);
  fea_context_destroy(&ctx);
}

/* ---- a spring on a Gmsh part: uniaxial tension held by a spring ------------------------------ */

typedef struct spring_pull {
  tension t;
  double sigma, k;
} spring_pull;

/* On x = 1: sigma n + k u = (sigma + k s_x x, k s_y y). */
static void spring_pull_load(const double *x, double *h, void *user) {
  const spring_pull *sp = user;
  h[0] = sp->sigma + sp->k * sp->t.s[0] * x[0];
  h[1] = sp->k * sp->t.s[1] * x[1];
}

/* The unit square of square-sides-{quad,tri}.msh: rollers on west and
 * south, a spring of stiffness k on east carrying the load that makes the
 * pull sigma exact, north free; Q2 and P2 hold the linear solution exactly. */
static void gmsh_spring(const char *file) {
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
  const double E = 50.0, nu = 0.3;
  spring_pull sp = {tension_make(2, FEA_ELASTICITY_PLANE_STRAIN, E, nu, 2.0), 2.0, 30.0};
  fea_elastic_part parts[4] = {
      {0, "west", {FEA_ELASTIC_DISPLACEMENT, FEA_COMPONENT_X, NULL, NULL, 0.0, NULL, NULL}},
      {0, "south", {FEA_ELASTIC_DISPLACEMENT, FEA_COMPONENT_Y, NULL, NULL, 0.0, NULL, NULL}},
      {0, "east", {FEA_ELASTIC_SPRING, 0u, spring_pull_load, &sp, sp.k, NULL, NULL}},
      {0, "north", {FEA_ELASTIC_TRACTION, 0u, NULL, NULL, 0.0, NULL, NULL}}};
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = E, d.nu = nu;
  d.parts = parts, d.num_parts = 4;
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  double *u = solve_cg_full(ctx, s, pb, 20000);
  double l2[3], h1[3];
  OK(fea_problem_error_norms_vector(pb, u, tension_u, tension_grad, &sp.t, l2, h1));
  cr_expect(l2[2] <= 1e-10 * sp.sigma / E && h1[2] <= 1e-9 * sp.sigma / E,
            "%s: L2 error %.3e, H1 error %.3e", file, l2[2], h1[2]);
  free(u);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
  fea_context_destroy(&ctx);
}

Test(elasticity_spring, gmsh_part_quads) { gmsh_spring("square-sides-quad.msh"); }
Test(elasticity_spring, gmsh_part_triangles) { gmsh_spring("square-sides-tri.msh"); }
