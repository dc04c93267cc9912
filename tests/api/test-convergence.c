/* Convergence with the manufactured solution u = prod sin(pi x_i) on the unit
 * box: the L2 error must fall at order p + 1 and the H1 seminorm error at
 * order p. Each system comes from the reference assembly and is solved by an
 * independent LAPACK Cholesky; the fitted orders (from two meshes, h and h/2)
 * must be within 0.15 of the theory. The coarse meshes are chosen past the
 * pre-asymptotic range (3D B-splines of degree 2 and 3 at n = 4, and P1
 * tetrahedra at n = 4, still show orders 0.17-0.25 off). */
#include <stdio.h>

#include "solve-common.h"

typedef struct conv_case {
  char name[24];
  int bspline; /* 1: B-splines of degree p; 0: Lagrange of order p */
  int dim, p, simplices, gll;
  int n0; /* coarse mesh; the fine one has 2 n0 elements per direction */
} conv_case;

static fea_space *make_space(fea_context *ctx, const conv_case *c, int n, fea_mesh **mesh) {
  fea_space *s = NULL;
  *mesh = NULL;
  if (c->bspline) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = c->dim;
    for (int k = 0; k < 3; k++) {
      d.degree[k] = c->p;
      d.n[k] = n;
    }
    cr_assert_eq(fea_space_create_bspline(ctx, &d, &s), FEA_SUCCESS, "%s",
                 fea_context_last_error(NULL));
    return s;
  }
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = c->dim;
  md.n[0] = md.n[1] = md.n[2] = n;
  md.simplices = c->simplices;
  cr_assert_eq(fea_mesh_create_structured(ctx, &md, mesh), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  cr_assert_eq(fea_space_create_lagrange(*mesh, c->p,
                                         c->gll ? FEA_NODES_GAUSS_LOBATTO : FEA_NODES_EQUISPACED,
                                         &s),
               FEA_SUCCESS, "%s", fea_context_last_error(NULL));
  return s;
}

static void errors_on(fea_context *ctx, const conv_case *c, int n, double *l2, double *h1) {
  fea_mesh *mesh = NULL;
  fea_space *s = make_space(ctx, c, n, &mesh);
  manufactured m = {c->dim};
  fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
  d.source = sine_f;
  d.source_user = &m;
  fea_problem *pb = NULL;
  cr_assert_eq(fea_problem_create_poisson(s, &d, &pb), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  cr_assert_eq(fea_space_get_info(s, &info), FEA_SUCCESS);
  double *full = malloc((size_t)info.num_dofs * sizeof *full);
  solve_and_measure(pb, sine_u, sine_grad, &m, l2, h1, full);
  free(full);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&mesh);
}

ParameterizedTestParameters(convergence, orders) {
  static conv_case cases[] = {
      {"bspline-2d-p1", 1, 2, 1, 0, 0, 16}, {"bspline-2d-p2", 1, 2, 2, 0, 0, 8},
      {"bspline-2d-p3", 1, 2, 3, 0, 0, 8},  {"bspline-2d-p4", 1, 2, 4, 0, 0, 8},
      {"bspline-2d-p5", 1, 2, 5, 0, 0, 8},  {"bspline-3d-p1", 1, 3, 1, 0, 0, 8},
      {"bspline-3d-p2", 1, 3, 2, 0, 0, 8},  {"bspline-3d-p3", 1, 3, 3, 0, 0, 6},
      {"Q1-2d", 0, 2, 1, 0, 0, 16},         {"Q2-2d", 0, 2, 2, 0, 0, 8},
      {"Q3-2d", 0, 2, 3, 0, 0, 4},          {"Q4-2d", 0, 2, 4, 0, 0, 4},
      {"Q3-2d-gll", 0, 2, 3, 0, 1, 4},      {"Q4-2d-gll", 0, 2, 4, 0, 1, 4},
      {"Q5-2d", 0, 2, 5, 0, 0, 2},          {"Q6-2d", 0, 2, 6, 0, 0, 2},
      {"Q5-2d-gll", 0, 2, 5, 0, 1, 2},      {"Q6-2d-gll", 0, 2, 6, 0, 1, 2},
      {"Q1-3d", 0, 3, 1, 0, 0, 4},          {"Q2-3d", 0, 3, 2, 0, 0, 4},
      {"P1-2d", 0, 2, 1, 1, 0, 16},         {"P2-2d", 0, 2, 2, 1, 0, 8},
      {"P1-3d", 0, 3, 1, 1, 0, 8},          {"P2-3d", 0, 3, 2, 1, 0, 4},
  };
  return cr_make_param_array(conv_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest(conv_case *c, convergence, orders) {
  fea_context *ctx = NULL;
  cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS);
  double l2[2], h1[2];
  errors_on(ctx, c, c->n0, &l2[0], &h1[0]);
  errors_on(ctx, c, 2 * c->n0, &l2[1], &h1[1]);
  double order_l2 = log2(l2[0] / l2[1]), order_h1 = log2(h1[0] / h1[1]);
  cr_log_info("%s: L2 %.3e -> %.3e (order %.3f), H1 %.3e -> %.3e (order %.3f)", c->name, l2[0],
              l2[1], order_l2, h1[0], h1[1], order_h1);
  cr_expect(fabs(order_l2 - (c->p + 1)) <= 0.15, "%s: L2 order %.3f, theory %d (errors %.3e, %.3e)",
            c->name, order_l2, c->p + 1, l2[0], l2[1]);
  cr_expect(fabs(order_h1 - c->p) <= 0.15, "%s: H1 order %.3f, theory %d (errors %.3e, %.3e)",
            c->name, order_h1, c->p, h1[0], h1[1]);
  fea_context_destroy(&ctx);
}
