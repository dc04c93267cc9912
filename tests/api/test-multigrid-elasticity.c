/* Multigrid on linear elasticity (issue #39): a box clamped on its west side
 * under a body force, nu = 0.3, Q2 (p-multigrid to Q1, then the meshes),
 * 3D and 2D plane strain. CG preconditioned by the V-cycle with node-block
 * Chebyshev smoothing reaches 1e-8 in iterations that grow at most 1.5x
 * over a 4x refinement (the defaults' sum-factorization levels, whose node
 * blocks come from probing), its solution equals Jacobi-CG's on the CSR
 * matrix of the reference assembly (an independent solve) to 1e-8, CSR
 * levels (blocks from the matrix) give the same iterations and solution,
 * and node-block smoothing takes no more iterations than
 * point Jacobi (both logged). Rollers (some components of a node fixed, on
 * every level) are solved the same way; a B-spline space with components and
 * a user's vector system (element_form) are refused naming them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <feaccel.h>
#include <feaccel/solver.h>

#include "api-common.h"

typedef struct box {
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_index nf;
} box;

/* Gravity along -y (2D) or -z (3D), and a sideways push so that every
 * component is loaded. */
static void body_force(const double *x, double *f, void *user) {
  const int dim = *(const int *)user;
  f[0] = 0.3 * x[1];
  f[1] = dim == 2 ? -1.0 : 0.2 * x[0];
  if (dim == 3) f[2] = -1.0;
}

static int dims[4] = {0, 0, 2, 3};

/* [0, 2] x [0, 1] with 2n x n cells (2D) or the unit cube with n^3 (3D), of
 * order p; clamped on
 * x = 0, free elsewhere, or with rollers (u_y = 0 on y = 0, u_z = 0 on
 * z = 0) that fix only some components of a node. */
static box box_create(fea_context *ctx, int dim, int p, fea_index n, int rollers) {
  box b = {0};
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = dim;
  md.n[0] = dim == 3 ? n : 2 * n, md.n[1] = n, md.n[2] = dim == 3 ? n : 1;
  md.upper[0] = dim == 3 ? 1.0 : 2.0;
  OK(fea_mesh_create_structured(ctx, &md, &b.mesh));
  OK(fea_space_create_lagrange(b.mesh, p, FEA_NODES_EQUISPACED, &b.space));
  OK(fea_space_set_num_components(b.space, dim));
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = 1000.0;
  d.nu = 0.3;
  d.model = FEA_ELASTICITY_PLANE_STRAIN;
  for (int s = 1; s < 2 * dim; s++) d.sides[s].type = FEA_ELASTIC_TRACTION;
  if (rollers) {
    d.sides[FEA_SIDE_SOUTH].type = FEA_ELASTIC_DISPLACEMENT;
    d.sides[FEA_SIDE_SOUTH].components = FEA_COMPONENT_Y;
  }
  d.body_force = body_force;
  d.body_force_user = &dims[dim];
  OK(fea_problem_create_elasticity(b.space, &d, &b.pb));
  OK(fea_problem_get_num_free_dofs(b.pb, &b.nf));
  return b;
}

static void box_destroy(box *b) {
  fea_problem_destroy(&b->pb);
  fea_space_destroy(&b->space);
  fea_mesh_destroy(&b->mesh);
}

static double last_lambda; /* lambda_max of the last solver's smoothed finest operator */

/* CG + multigrid to rtol; x the free solution; returns the iterations. */
static fea_index mg_solve(fea_context *ctx, box *b, fea_operator_kind kind, int point_jacobi,
                          double rtol, double *x) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  d.operator_kind = kind;
  d.jacobi = point_jacobi;
  d.rtol = rtol;
  d.max_iterations = 500;
  fea_solver *sv = NULL;
  cr_assert_eq(fea_solver_create_multigrid(ctx, b->pb, &d, &sv), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  OK(fea_solver_setup(sv));
  cr_assert_eq(fea_solver_solve(sv, 1, NULL, 0, x, b->nf), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_multigrid_stats st = FEA_MULTIGRID_STATS_INIT;
  OK(fea_solver_get_multigrid_stats(sv, &st));
  cr_expect(st.converged && st.fine_dofs == b->nf && st.num_levels >= 3,
            "converged %d, %lld DoFs, %d levels", st.converged, (long long)st.fine_dofs,
            st.num_levels);
  last_lambda = st.lambda_max;
  fea_solver_destroy(&sv);
  return st.iterations;
}

/* The free solution by Jacobi-preconditioned CG on the CSR operator of the
 * reference assembly to 1e-13 (the multifrontal solver takes B-spline
 * spaces only); caller frees. */
static double *reference(fea_context *ctx, box *b) {
  double *x = malloc((size_t)b->nf * sizeof *x);
  cr_assert(x);
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_CSR;
  fea_operator *op = NULL;
  OK(fea_operator_create(ctx, b->pb, &od, &op));
  fea_vector *vb = NULL, *vx = NULL;
  OK(fea_vector_create(ctx, b->nf, FEA_F64, &vb));
  OK(fea_vector_create(ctx, b->nf, FEA_F64, &vx));
  OK(fea_operator_get_rhs(op, vb));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-13;
  cd.max_iterations = 20000;
  cd.jacobi = 1;
  fea_cg_stats st = FEA_CG_STATS_INIT;
  OK(fea_cg_solve(op, vb, vx, &cd, &st));
  cr_assert(st.converged, "reference CG: %lld iterations", (long long)st.iterations);
  OK(fea_vector_read(vx, b->nf, FEA_F64, x));
  fea_vector_destroy(&vb);
  fea_vector_destroy(&vx);
  fea_operator_destroy(&op);
  return x;
}

static double rel_diff(fea_index n, const double *x, const double *y) {
  double num = 0, den = 0;
  for (fea_index i = 0; i < n; i++) num += (x[i] - y[i]) * (x[i] - y[i]), den += y[i] * y[i];
  return sqrt(num / den);
}

/* n = n0, 2 n0, 4 n0; the direct comparison on the middle size. */
static void growth(int dim, fea_index n0, int rollers) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  fea_index its[3] = {0}, point[3] = {0};
  for (int t = 0; t < 3; t++) {
    const fea_index n = n0 << t;
    box b = box_create(ctx, dim, 2, n, rollers);
    double *x = malloc((size_t)b.nf * sizeof *x), *xp = malloc((size_t)b.nf * sizeof *xp);
    cr_assert(x && xp);
    its[t] = mg_solve(ctx, &b, FEA_OPERATOR_MATFREE_SUMFACT, 0, 1e-8, x);
    const double lb = last_lambda;
    point[t] = mg_solve(ctx, &b, FEA_OPERATOR_MATFREE_SUMFACT, 1, 1e-8, xp);
    cr_log_info(
        "%dD Q2 elasticity%s n = %lld (%lld DoFs): CG+MG %lld iterations with node "
        "blocks (lambda_max of D^-1 A %.3f), %lld with point Jacobi (%.3f)",
        dim, rollers ? " (rollers)" : "", (long long)n, (long long)b.nf, (long long)its[t], lb,
        (long long)point[t], last_lambda);
    cr_expect(its[t] <= point[t], "n = %lld: node blocks took %lld iterations, point Jacobi %lld",
              (long long)n, (long long)its[t], (long long)point[t]);
    if (t == 1) {
      /* To 1e-12 so that the 1e-8 comparison measures the solution, not the
       * tolerance; CSR levels (blocks from the matrix) and sum-factorization
       * levels (blocks by probing): the same iterations and solution. */
      const fea_index csr = mg_solve(ctx, &b, FEA_OPERATOR_CSR, 0, 1e-12, x);
      const double lcsr = last_lambda;
      const fea_index sf = mg_solve(ctx, &b, FEA_OPERATOR_MATFREE_SUMFACT, 0, 1e-12, xp);
      /* The probed blocks are the matrix's: the same lambda_max of D^-1 A
       * (the same Lanczos start, operators equal to rounding). */
      cr_expect(fabs(last_lambda - lcsr) <= 1e-8 * lcsr,
                "lambda_max of D^-1 A: %.15g with probed blocks, %.15g with the CSR matrix's",
                last_lambda, lcsr);
      double *xr = reference(ctx, &b);
      const double e = rel_diff(b.nf, x, xr);
      cr_expect(e < 1e-8, "%dD n = %lld: multigrid differs from the CSR + CG solve by %.3g", dim,
                (long long)n, e);
      const double es = rel_diff(b.nf, xp, xr);
      cr_log_info(
          "%dD n = %lld: vs CSR + CG %.2g (CSR), %.2g (sum factorization); "
          "iterations to 1e-12 %lld (CSR), %lld (sum factorization)",
          dim, (long long)n, e, es, (long long)csr, (long long)sf);
      cr_expect(es < 1e-8, "sum-factorization levels differ from the CSR + CG solve by %.3g", es);
      cr_expect(llabs((long long)(sf - csr)) <= 1, "iterations: sum factorization %lld, CSR %lld",
                (long long)sf, (long long)csr);
      free(xr);
    }
    free(x), free(xp);
    box_destroy(&b);
  }
  cr_expect(its[2] <= 1.5 * its[0], "%dD: iterations grow from %lld to %lld (> 1.5x)", dim,
            (long long)its[0], (long long)its[2]);
  fea_context_destroy(&ctx);
}

Test(multigrid_elasticity, q2_3d_iterations_bounded_and_solution_exact, .timeout = 120) {
  growth(3, 4, 0);
}

Test(multigrid_elasticity, q2_2d_plane_strain_iterations_bounded_and_solution_exact,
     .timeout = 120) {
  growth(2, 4, 0);
}

Test(multigrid_elasticity, rollers_fix_some_components_of_a_node, .timeout = 120) {
  growth(2, 4, 1);
}

Test(multigrid_elasticity, bspline_vector_space_refused) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 2;
  for (int k = 0; k < 2; k++) bd.degree[k] = 2, bd.n[k] = 8;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_space_set_num_components(s, 2));
  fea_elasticity_desc d = FEA_ELASTICITY_DESC_INIT;
  d.E = 1000.0;
  d.nu = 0.3;
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  fea_solver *sv = NULL;
  EXPECT_FAIL(fea_solver_create_multigrid(ctx, pb, NULL, &sv), FEA_ERR_UNSUPPORTED, ctx,
              "2 components");
  cr_expect_null(sv);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* A vector Laplacian of the user's element form: each component's stiffness. */
static fea_status vector_laplacian(const fea_element_data *e, double *Ke, double *fe, void *user) {
  (void)user;
  const int nb = e->nb, nc = e->ncomp, n = nb * nc;
  memset(Ke, 0, (size_t)n * n * sizeof *Ke);
  for (int i = 0; i < n; i++) fe[i] = 0.0;
  for (int q = 0; q < e->nq; q++)
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < nb; j++) {
        double g = 0.0;
        for (int k = 0; k < e->dim; k++)
          g += e->dphi[(q * nb + i) * e->dim + k] * e->dphi[(q * nb + j) * e->dim + k];
        for (int c = 0; c < nc; c++) Ke[(c + nc * i) * n + c + nc * j] += e->w[q] * g;
      }
  return FEA_SUCCESS;
}

Test(multigrid_elasticity, user_vector_system_refused) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = md.n[1] = 8;
  fea_mesh *m = NULL;
  fea_space *s = NULL;
  fea_problem *pb = NULL;
  OK(fea_mesh_create_structured(ctx, &md, &m));
  OK(fea_space_create_lagrange(m, 1, FEA_NODES_EQUISPACED, &s));
  OK(fea_space_set_num_components(s, 2));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.element_form = vector_laplacian;
  OK(fea_problem_create_poisson(s, &pd, &pb));
  fea_solver *sv = NULL;
  EXPECT_FAIL(fea_solver_create_multigrid(ctx, pb, NULL, &sv), FEA_ERR_UNSUPPORTED, ctx,
              "2 components takes elasticity problems");
  cr_expect_null(sv);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
  fea_context_destroy(&ctx);
}
