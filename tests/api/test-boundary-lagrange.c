/* Neumann and Robin conditions on Lagrange spaces: on the sides of
 * structured box meshes (Q1, Q2, P1, Kuhn tetrahedra), judged by the
 * convergence orders of a manufactured solution whose fluxes come from its
 * exact gradient; on the physical groups of Gmsh meshes (a structured quad
 * file must give the structured mesh's answer, unstructured triangles and
 * tetrahedra the exact one to discretization accuracy, uniform refinements
 * of the files, their groups refined along, the orders); by the solution
 * paths agreeing (LAPACK on the reference assembly, CG on the CSR,
 * element-matrix and sum-factorization operators, multigrid); and by the
 * refusals of what is ill-posed or names what the mesh lacks. */
#include "api-common.h"
#include "ring-common.h"
#include "solve-common.h"

#include <stdio.h>
#include <stdlib.h>

#include <feaccel/operator.h>
#include <feaccel/solver.h>

/* u = e^(x/2) sin(0.7 y) + x y (times 1 + z in 3D), ring-common.h's;
 * -Laplace u + c u = f. */
typedef struct bvp {
  int dim;
  double c;     /* reaction */
  double alpha; /* Robin coefficient */
} bvp;

static double u_exact(const double *x, void *user) {
  return ring_u_dim(((const bvp *)user)->dim, x);
}

static void u_grad(const double *x, double *g, void *user) {
  ring_grad_dim(((const bvp *)user)->dim, x, g);
}

static double f_exact(const double *x, void *user) {
  const bvp *b = user;
  const double s = b->dim == 3 ? 1.0 + x[2] : 1.0;
  /* Laplace of e^(x/2) sin(0.7 y) is (0.25 - 0.49) of it; x y and z are harmonic */
  return 0.24 * s * exp(0.5 * x[0]) * sin(0.7 * x[1]) + b->c * u_exact(x, user);
}

/* h = grad u . n (Neumann), + alpha u (Robin), n the outward normal of the box side. */
typedef struct side_data {
  const bvp *b;
  int side, robin;
} side_data;

static double flux(const double *x, void *user) {
  const side_data *sd = user;
  double g[3];
  u_grad(x, g, (void *)sd->b);
  const double h = (sd->side % 2 ? 1.0 : -1.0) * g[sd->side / 2];
  return sd->robin ? h + sd->b->alpha * u_exact(x, (void *)sd->b) : h;
}

static void set_condition(fea_boundary_condition *bc, char kind, side_data *sd) {
  if (kind == 'D') return;
  bc->type = kind == 'R' ? FEA_BC_ROBIN : FEA_BC_NEUMANN;
  bc->alpha = sd->b->alpha;
  bc->flux = flux;
  bc->flux_user = sd;
}

static fea_problem_desc base_desc(const bvp *b) {
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = f_exact;
  pd.source_user = (void *)b;
  pd.dirichlet = u_exact;
  pd.dirichlet_user = (void *)b;
  pd.reaction = b->c;
  return pd;
}

/* Sides: one of 'D', 'N', 'R' per side (west, east, south, north, front, back). */
static fea_problem *sides_problem(fea_space *s, const bvp *b, const char *kinds, side_data sd[6]) {
  fea_problem_desc pd = base_desc(b);
  for (int side = 0; side < 2 * b->dim; side++) {
    sd[side] = (side_data){b, side, kinds[side] == 'R'};
    set_condition(&pd.sides[side], kinds[side], &sd[side]);
  }
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(s, &pd, &pb));
  return pb;
}

static fea_space *box_space(fea_context *ctx, int dim, int simplices, int p, fea_index n,
                            fea_mesh **m) {
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = dim;
  md.simplices = simplices;
  for (int k = 0; k < dim; k++) md.n[k] = n;
  OK(fea_mesh_create_structured(ctx, &md, m));
  fea_space *s = NULL;
  OK(fea_space_create_lagrange(*m, p, FEA_NODES_GAUSS_LOBATTO, &s));
  return s;
}

/* The reduced solution by LAPACK on the reference assembly, expanded. */
static double *solve_full(fea_space *s, fea_problem *pb) {
  fea_index nf = 0, n = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  n = info.num_dofs;
  double *b = malloc((size_t)(nf + 1) * sizeof *b), *u = malloc((size_t)n * sizeof *u);
  cr_assert(b && u);
  fea_matrix *A = NULL;
  OK(fea_problem_assemble_reference(pb, b, &A));
  lapack_solve_csr(A, b);
  fea_matrix_destroy(&A);
  OK(fea_problem_expand_solution(pb, b, u));
  free(b);
  return u;
}

static void errors(fea_space *s, fea_problem *pb, const bvp *b, double *l2, double *h1) {
  double *u = solve_full(s, pb);
  OK(fea_problem_error_norms(pb, u, u_exact, u_grad, (void *)b, l2, h1));
  free(u);
}

static void check_orders(const bvp *b, int simplices, const char *kinds, int p, fea_index n) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  double l2[2], h1[2];
  for (int i = 0; i < 2; i++) {
    fea_mesh *m = NULL;
    side_data sd[6];
    fea_space *s = box_space(ctx, b->dim, simplices, p, n << i, &m);
    fea_problem *pb = sides_problem(s, b, kinds, sd);
    errors(s, pb, b, &l2[i], &h1[i]);
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&s));
    fea_mesh_destroy(&m);
  }
  const double r2 = log2(l2[0] / l2[1]), r1 = log2(h1[0] / h1[1]);
  const char *cell = simplices ? (b->dim == 2 ? "P" : "P(tet)") : "Q";
  cr_log_info("%dD %s%d %s, n = %lld -> %lld: L2 %.3g %.3g (%.2f), H1 %.3g %.3g (%.2f)", b->dim,
              cell, p, kinds, (long long)n, (long long)(2 * n), l2[0], l2[1], r2, h1[0], h1[1], r1);
  cr_assert(fabs(r2 - (p + 1)) <= 0.1 && fabs(r1 - p) <= 0.1,
            "%dD %s%d sides %s: orders %.2f (L2, errors %.3g %.3g) and %.2f (H1)", b->dim, cell, p,
            kinds, r2, l2[0], l2[1], r1);
  OK(fea_context_destroy(&ctx));
}

Test(boundary_lagrange, q1_neumann_robin) {
  const bvp b = {2, 0.0, 2.0};
  check_orders(&b, 0, "NRDN", 1, 16);
}

Test(boundary_lagrange, q2_robin_neumann_reaction) {
  const bvp b = {2, 0.5, 1.5};
  check_orders(&b, 0, "RNND", 2, 8);
}

Test(boundary_lagrange, p1_triangles_neumann_robin) {
  const bvp b = {2, 0.0, 1.0};
  check_orders(&b, 1, "NRDN", 1, 16);
}

Test(boundary_lagrange, p2_triangles_all_robin) {
  const bvp b = {2, 0.0, 3.0};
  check_orders(&b, 1, "RRRR", 2, 8);
}

/* Pure Neumann is well posed with c > 0: every DoF is free. */
Test(boundary_lagrange, q2_pure_neumann_with_reaction) {
  const bvp b = {2, 2.0, 1.0};
  check_orders(&b, 0, "NNNN", 2, 8);
}

Test(boundary_lagrange, hex_q1_front_back_neumann, .timeout = 120) {
  const bvp b = {3, 0.0, 1.0};
  check_orders(&b, 0, "RDDDNN", 1, 8);
}

Test(boundary_lagrange, kuhn_tetrahedra_p2, .timeout = 120) {
  const bvp b = {3, 0.0, 2.0};
  check_orders(&b, 1, "DNRDDN", 2, 4);
}

/* ---------------------------------------------------------- solution paths */

static void cg_on(fea_context *ctx, fea_problem *pb, fea_operator_kind kind, double *x,
                  fea_index nf, fea_operator_kind *ran) {
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = kind;
  fea_operator *op = NULL;
  OK(fea_operator_create(ctx, pb, &od, &op));
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  OK(fea_operator_get_info(op, &info));
  *ran = info.kind_run;
  fea_vector *bv = NULL, *xv = NULL;
  OK(fea_vector_create(ctx, nf, FEA_F64, &bv));
  OK(fea_vector_create(ctx, nf, FEA_F64, &xv));
  OK(fea_operator_get_rhs(op, bv));
  OK(fea_vector_set_all(xv, 0.0));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-13;
  fea_cg_stats cs = FEA_CG_STATS_INIT;
  OK(fea_cg_solve(op, bv, xv, &cd, &cs));
  OK(fea_vector_read(xv, nf, FEA_F64, x));
  fea_vector_destroy(&bv);
  fea_vector_destroy(&xv);
  fea_operator_destroy(&op);
}

static double max_diff(fea_index n, const double *x, const double *y, double *norm) {
  double d = 0;
  *norm = 0;
  for (fea_index i = 0; i < n; i++) {
    d = fmax(d, fabs(x[i] - y[i]));
    *norm = fmax(*norm, fabs(y[i]));
  }
  return d;
}

/* LAPACK on the reference assembly, CG on the CSR, element-matrix and
 * sum-factorization operators agree; sum factorization runs with Neumann
 * sides (their terms are in the right-hand side) and with Robin sides (at
 * the quadrature points, the faces' matrices alongside). */
Test(boundary_lagrange, solution_paths_agree) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  const bvp b = {2, 0.0, 2.0};
  for (int robin = 0; robin <= 1; robin++) {
    fea_mesh *m = NULL;
    side_data sd[6];
    fea_space *s = box_space(ctx, 2, 0, 2, 6, &m);
    fea_problem *pb = sides_problem(s, &b, robin ? "NRDN" : "NDDN", sd);
    fea_index nf = 0;
    OK(fea_problem_get_num_free_dofs(pb, &nf));
    cr_assert_eq(nf, 13 * 13 - 13 - (robin ? 0 : 12), "free DoFs: %lld", (long long)nf);
    double *xr = malloc((size_t)nf * sizeof *xr), *xc = malloc((size_t)nf * sizeof *xc);
    fea_matrix *A = NULL;
    OK(fea_problem_assemble_reference(pb, xr, &A));
    lapack_solve_csr(A, xr);
    fea_matrix_destroy(&A);
    static const fea_operator_kind kinds[3] = {FEA_OPERATOR_CSR,
                                               FEA_OPERATOR_MATFREE_ELEMENT_MATRIX,
                                               FEA_OPERATOR_MATFREE_SUMFACT};
    for (int k = 0; k < 3; k++) {
      fea_operator_kind ran;
      cg_on(ctx, pb, kinds[k], xc, nf, &ran);
      double norm;
      const double d = max_diff(nf, xc, xr, &norm);
      cr_assert(d <= 1e-9 * norm, "operator %d (ran %d), robin %d: %.3g (max %.3g)", (int)kinds[k],
                (int)ran, robin, d, norm);
      /* Robin faces: sum factorization at the points with the face matrices. */
      if (kinds[k] == FEA_OPERATOR_MATFREE_SUMFACT) cr_assert_eq(ran, kinds[k]);
    }
    free(xr);
    free(xc);
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&s));
    fea_mesh_destroy(&m);
  }
  OK(fea_context_destroy(&ctx));
}

/* Multigrid rediscretizes its coarse levels with the same sides (and does
 * not take the constant-stencil shortcut, which has no face terms): it
 * converges to the direct solution, in 2D (Q1, P1) and 3D. */
Test(boundary_lagrange, multigrid_with_natural_sides, .timeout = 120) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  for (int c = 0; c < 3; c++) {
    const bvp b = {c == 2 ? 3 : 2, 0.0, 2.0};
    fea_mesh *m = NULL;
    side_data sd[6];
    fea_space *s = box_space(ctx, b.dim, c == 1, 1, c == 2 ? 8 : 32, &m);
    fea_problem *pb = sides_problem(s, &b, c == 2 ? "NRDDNN" : "NRDN", sd);
    fea_index nf = 0;
    OK(fea_problem_get_num_free_dofs(pb, &nf));
    double *xr = malloc((size_t)nf * sizeof *xr), *xm = malloc((size_t)nf * sizeof *xm);
    fea_matrix *A = NULL;
    OK(fea_problem_assemble_reference(pb, xr, &A));
    lapack_solve_csr(A, xr);
    fea_matrix_destroy(&A);
    fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
    d.krylov = 1;
    d.jacobi = 1; /* the Robin terms raise lambda_max past the paper's unscaled omega */
    d.rtol = 1e-12;
    fea_solver *sv = NULL;
    OK(fea_solver_create_multigrid(ctx, pb, &d, &sv));
    OK(fea_solver_setup(sv));
    OK(fea_solver_solve(sv, 1, NULL, 0, xm, nf));
    fea_multigrid_stats st = FEA_MULTIGRID_STATS_INIT;
    OK(fea_solver_get_multigrid_stats(sv, &st));
    double norm;
    const double diff = max_diff(nf, xm, xr, &norm);
    cr_log_info("multigrid case %d: %d levels, %lld iterations, difference %.3g", c, st.num_levels,
                (long long)st.iterations, diff / norm);
    cr_assert(st.converged && diff <= 1e-8 * norm, "case %d: converged %d, difference %.3g", c,
              st.converged, diff / norm);
    fea_solver_destroy(&sv);
    free(xr);
    free(xm);
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&s));
    fea_mesh_destroy(&m);
  }
  OK(fea_context_destroy(&ctx));
}

/* ------------------------------------------------------------------- Gmsh */

static fea_mesh *read_mesh(fea_context *ctx, const char *file) {
  const char *dir = getenv("FEA_TEST_DATA");
  cr_assert(dir, "FEA_TEST_DATA is not set");
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  fea_mesh *m = NULL;
  OK(fea_mesh_read_gmsh(ctx, path, &m));
  return m;
}

/* The groups of square-sides-*.msh: the four sides (tags 1..4 in
 * fea_patch_side order), "walls" (5) = south + north; the surface group is
 * not a boundary group. */
Test(boundary_lagrange, gmsh_groups_are_read) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_mesh *m = read_mesh(ctx, "square-sides-quad.msh");
  int count = -1, tags[8];
  fea_index facets[8];
  OK(fea_mesh_get_boundary_groups(m, 0, NULL, NULL, &count));
  cr_assert_eq(count, 5);
  EXPECT_FAIL(fea_mesh_get_boundary_groups(m, 4, tags, facets, &count), FEA_ERR_DIMENSION, ctx,
              "capacity = 4 is below the mesh's 5 boundary groups");
  OK(fea_mesh_get_boundary_groups(m, 8, tags, facets, &count));
  static const char *const names[5] = {"west", "east", "south", "north", "walls"};
  for (int g = 0; g < 5; g++) {
    cr_assert_eq(tags[g], g + 1);
    cr_assert_eq(facets[g], g == 4 ? 16 : 8, "group %d: %lld facets", g + 1, (long long)facets[g]);
    const char *name = NULL;
    OK(fea_mesh_get_boundary_group_name(m, tags[g], &name));
    cr_assert_str_eq(name, names[g]);
  }
  const char *name = NULL;
  EXPECT_FAIL(fea_mesh_get_boundary_group_name(m, 10, &name), FEA_ERR_INVALID_ARG, ctx,
              "physical tag 10 is not a group of the mesh's boundary");
  fea_mesh_destroy(&m);
  /* A file without boundary groups, and a structured mesh, have none. */
  m = read_mesh(ctx, "cube-tet.msh");
  OK(fea_mesh_get_boundary_groups(m, 0, NULL, NULL, &count));
  cr_assert_eq(count, 0);
  fea_mesh_destroy(&m);
  m = read_mesh(ctx, "cube-sides-tet.msh");
  OK(fea_mesh_get_boundary_groups(m, 8, tags, facets, &count));
  cr_assert_eq(count, 6);
  fea_index total = 0;
  for (int g = 0; g < 6; g++) total += facets[g];
  cr_assert_gt(facets[0], 0);
  cr_log_info("cube-sides-tet.msh: %lld boundary triangles", (long long)total);
  fea_mesh_destroy(&m);
  OK(fea_context_destroy(&ctx));
}

static fea_problem *parts_problem(fea_space *s, const bvp *b, int nparts,
                                  const fea_boundary_part *parts) {
  fea_problem_desc pd = base_desc(b);
  pd.parts = parts;
  pd.num_parts = nparts;
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(s, &pd, &pb));
  return pb;
}

/* The transfinite quad file has the nodes of the structured 8 x 8 mesh:
 * Neumann on "west" (by tag) and Robin on "east" (by name) give the
 * structured sides' answer, Q1 and Q2. */
Test(boundary_lagrange, gmsh_parts_equal_structured_sides) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  const bvp b = {2, 0.0, 2.0};
  fea_mesh *gm = read_mesh(ctx, "square-sides-quad.msh");
  for (int p = 1; p <= 2; p++) {
    fea_mesh *sm = NULL;
    side_data sd[6];
    fea_space *ss = box_space(ctx, 2, 0, p, 8, &sm);
    fea_problem *spb = sides_problem(ss, &b, "NRDD", sd);
    fea_space *gs = NULL;
    OK(fea_space_create_lagrange(gm, p, FEA_NODES_GAUSS_LOBATTO, &gs));
    fea_boundary_part parts[2] = {{1, NULL, {FEA_BC_DIRICHLET, 0, NULL, NULL}},
                                  {0, "east", {FEA_BC_DIRICHLET, 0, NULL, NULL}}};
    set_condition(&parts[0].bc, 'N', &sd[0]);
    set_condition(&parts[1].bc, 'R', &sd[1]);
    fea_problem *gpb = parts_problem(gs, &b, 2, parts);
    memset(parts, 0, sizeof parts); /* the problem keeps its own copy */
    fea_index nfs = 0, nfg = 0;
    OK(fea_problem_get_num_free_dofs(spb, &nfs));
    OK(fea_problem_get_num_free_dofs(gpb, &nfg));
    cr_assert_eq(nfs, nfg);
    double l2s, h1s, l2g, h1g;
    errors(ss, spb, &b, &l2s, &h1s);
    errors(gs, gpb, &b, &l2g, &h1g);
    cr_log_info("Q%d: structured L2 %.6g H1 %.6g, Gmsh L2 %.6g H1 %.6g", p, l2s, h1s, l2g, h1g);
    cr_assert(fabs(l2s - l2g) <= 1e-8 * l2s && fabs(h1s - h1g) <= 1e-8 * h1s,
              "Q%d: L2 %.17g vs %.17g, H1 %.17g vs %.17g", p, l2s, l2g, h1s, h1g);
    OK(fea_problem_destroy(&spb));
    OK(fea_problem_destroy(&gpb));
    OK(fea_space_destroy(&ss));
    OK(fea_space_destroy(&gs));
    fea_mesh_destroy(&sm);
  }
  fea_mesh_destroy(&gm);
  OK(fea_context_destroy(&ctx));
}

/* Unstructured triangles and tetrahedra: natural parts keep the error of
 * the all-Dirichlet solve's order of magnitude (P2: h^3 with h = 0.1 or
 * 0.25), and the error is that of a discretization, not of a wrong flux. */
static void gmsh_exact(const char *file, int dim, const char *kinds, double l2_max) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  const bvp b = {dim, 0.0, 1.5};
  fea_mesh *m = read_mesh(ctx, file);
  fea_space *s = NULL;
  OK(fea_space_create_lagrange(m, 2, FEA_NODES_EQUISPACED, &s));
  side_data sd[6];
  fea_boundary_part parts[6];
  int np = 0;
  for (int side = 0; side < 2 * dim; side++) {
    sd[side] = (side_data){&b, side, kinds[side] == 'R'};
    if (kinds[side] == 'D') continue;
    parts[np] = (fea_boundary_part){side + 1, NULL, {FEA_BC_DIRICHLET, 0, NULL, NULL}};
    set_condition(&parts[np++].bc, kinds[side], &sd[side]);
  }
  double l2[2], h1[2];
  for (int natural = 0; natural <= 1; natural++) {
    fea_problem *pb = parts_problem(s, &b, natural ? np : 0, parts);
    errors(s, pb, &b, &l2[natural], &h1[natural]);
    OK(fea_problem_destroy(&pb));
  }
  cr_log_info("%s P2 %s: L2 %.3g (all Dirichlet %.3g), H1 %.3g (%.3g)", file, kinds, l2[1], l2[0],
              h1[1], h1[0]);
  cr_assert(l2[1] <= l2_max && l2[1] <= 10 * l2[0] && h1[1] <= 3 * h1[0],
            "%s %s: L2 %.3g (all Dirichlet %.3g), H1 %.3g (%.3g)", file, kinds, l2[1], l2[0], h1[1],
            h1[0]);
  OK(fea_space_destroy(&s));
  fea_mesh_destroy(&m);
  OK(fea_context_destroy(&ctx));
}

Test(boundary_lagrange, gmsh_triangles_neumann_east) {
  gmsh_exact("square-sides-tri.msh", 2, "DNDD", 2e-5);
}

Test(boundary_lagrange, gmsh_triangles_neumann_robin) {
  gmsh_exact("square-sides-tri.msh", 2, "NRDN", 2e-5);
}

Test(boundary_lagrange, gmsh_tetrahedra_neumann_robin) {
  gmsh_exact("cube-sides-tet.msh", 3, "DRNDNN", 2e-3);
}

/* Refinement splits the boundary facets with the cells, in their groups: the
 * orders on refinements of the Gmsh files, with parts by tag. */
static void gmsh_orders(const char *file, int p, const char *kinds, int first) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  const bvp b = {2, 0.0, 2.0};
  fea_mesh *m = read_mesh(ctx, file);
  side_data sd[4];
  fea_boundary_part parts[4];
  int np = 0;
  for (int side = 0; side < 4; side++) {
    sd[side] = (side_data){&b, side, kinds[side] == 'R'};
    if (kinds[side] == 'D') continue;
    parts[np] = (fea_boundary_part){side + 1, NULL, {FEA_BC_DIRICHLET, 0, NULL, NULL}};
    set_condition(&parts[np++].bc, kinds[side], &sd[side]);
  }
  double l2[2], h1[2];
  for (int i = 0; i <= first + 1; i++) {
    fea_mesh *fine = NULL;
    OK(fea_mesh_refine_uniform(m, &fine));
    int count = 0, tags[8];
    fea_index facets[8], coarse_facets[8];
    OK(fea_mesh_get_boundary_groups(m, 8, tags, coarse_facets, &count));
    OK(fea_mesh_get_boundary_groups(fine, 8, tags, facets, &count));
    for (int g = 0; g < count; g++) cr_assert_eq(facets[g], 2 * coarse_facets[g]);
    fea_mesh_destroy(&m);
    m = fine;
    if (i < first) continue;
    fea_space *s = NULL;
    OK(fea_space_create_lagrange(m, p, FEA_NODES_GAUSS_LOBATTO, &s));
    fea_problem *pb = parts_problem(s, &b, np, parts);
    /* CG on the CSR operator: refined Gmsh numberings have no narrow band */
    fea_index nf = 0;
    OK(fea_problem_get_num_free_dofs(pb, &nf));
    fea_space_info info = FEA_SPACE_INFO_INIT;
    OK(fea_space_get_info(s, &info));
    double *x = malloc((size_t)nf * sizeof *x), *u = malloc((size_t)info.num_dofs * sizeof *u);
    fea_operator_kind ran;
    cg_on(ctx, pb, FEA_OPERATOR_CSR, x, nf, &ran);
    OK(fea_problem_expand_solution(pb, x, u));
    OK(fea_problem_error_norms(pb, u, u_exact, u_grad, (void *)&b, &l2[i - first], &h1[i - first]));
    free(x);
    free(u);
    OK(fea_problem_destroy(&pb));
    OK(fea_space_destroy(&s));
  }
  const double r2 = log2(l2[0] / l2[1]), r1 = log2(h1[0] / h1[1]);
  cr_log_info("%s refined %d and %d times, order %d, %s: L2 %.3g %.3g (%.2f), H1 %.3g %.3g (%.2f)",
              file, first, first + 1, p, kinds, l2[0], l2[1], r2, h1[0], h1[1], r1);
  cr_assert(fabs(r2 - (p + 1)) <= 0.1 && fabs(r1 - p) <= 0.1, "%s order %d: %.2f (L2), %.2f (H1)",
            file, p, r2, r1);
  fea_mesh_destroy(&m);
  OK(fea_context_destroy(&ctx));
}

Test(boundary_lagrange, gmsh_refined_triangles_p1) {
  gmsh_orders("square-sides-tri.msh", 1, "NRDN", 1);
}

Test(boundary_lagrange, gmsh_refined_quads_q2) {
  gmsh_orders("square-sides-quad.msh", 2, "RNND", 0);
}

/* ---------------------------------------------------------------- refusals */

Test(boundary_lagrange_errors, refusals_name_the_value) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  const bvp b = {2, 0.0, 1.0};
  side_data sd = {&b, 0, 0};
  fea_mesh *m = read_mesh(ctx, "square-sides-tri.msh");
  fea_space *s = NULL;
  OK(fea_space_create_lagrange(m, 1, FEA_NODES_EQUISPACED, &s));
  fea_problem_desc pd = base_desc(&b);
  fea_boundary_part parts[4] = {{2, NULL, {FEA_BC_NEUMANN, 0, flux, &sd}},
                                {3, NULL, {FEA_BC_NEUMANN, 0, flux, &sd}},
                                {0, NULL, {FEA_BC_NEUMANN, 0, flux, &sd}},
                                {0, NULL, {FEA_BC_NEUMANN, 0, flux, &sd}}};
  pd.parts = parts;
  pd.num_parts = 2;
  fea_problem *pb = (fea_problem *)&pb;
  parts[1].physical_tag = 42;
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts[1] names physical tag 42, which is not a group of the mesh's boundary (its "
              "groups: 1 \"west\", 2 \"east\"");
  cr_assert_null(pb);
  parts[1].name = "outlet";
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts[1] names physical group \"outlet\", which is not a group");
  parts[1].name = "south";
  parts[1].bc.type = FEA_BC_ROBIN;
  parts[1].bc.alpha = -1;
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts[1] is Robin with alpha = -1; it must be finite and > 0");
  parts[1].bc.alpha = INFINITY;
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts[1] is Robin with alpha = inf");
  parts[1].bc.type = (fea_bc_type)9;
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts[1] has type 9");
  parts[1].bc.type = FEA_BC_NEUMANN;
  /* Pure Neumann with c = 0: every facet in a Neumann part. */
  parts[0] = (fea_boundary_part){0, "west", {FEA_BC_NEUMANN, 0, flux, &sd}};
  parts[2] = (fea_boundary_part){0, "east", {FEA_BC_NEUMANN, 0, flux, &sd}};
  parts[3] = (fea_boundary_part){4, NULL, {FEA_BC_NEUMANN, 0, flux, &sd}};
  pd.num_parts = 4;
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "every boundary facet is Neumann and c = 0: u would be determined up to a "
              "constant only");
  cr_assert_null(pb);
  pd.reaction = 1.0; /* then it is well posed */
  OK(fea_problem_create_poisson(s, &pd, &pb));
  OK(fea_problem_destroy(&pb));
  pd.reaction = 0.0;
  /* A group listed twice, and overlapping groups. */
  parts[3] = (fea_boundary_part){0, "west", {FEA_BC_NEUMANN, 0, flux, &sd}};
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts[3] names physical group 1 again (as parts[0] (physical group 1 \"west\"))");
  parts[3] = (fea_boundary_part){0, "walls", {FEA_BC_ROBIN, 1.0, flux, &sd}};
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts[1] (physical group 3 \"south\") and parts[3] (physical group 5 \"walls\") "
              "share the boundary facet of nodes");
  pd.num_parts = -1;
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "num_parts = -1 is negative");
  pd.num_parts = 1;
  pd.parts = NULL;
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts is NULL but num_parts = 1");
  /* Sides need a structured mesh. */
  pd.num_parts = 0;
  pd.sides[FEA_SIDE_EAST].type = FEA_BC_NEUMANN;
  EXPECT_FAIL(fea_problem_create_poisson(s, &pd, &pb), FEA_ERR_UNSUPPORTED, ctx,
              "sides[1] (east) is Neumann, but the Lagrange space's mesh is not a structured box");
  cr_assert_null(pb);
  OK(fea_space_destroy(&s));
  fea_mesh_destroy(&m);

  /* A structured mesh: parts name groups it does not have; pure Neumann is refused. */
  fea_space *q = box_space(ctx, 2, 0, 1, 4, &m);
  fea_problem_desc qd = base_desc(&b);
  qd.parts = parts;
  qd.num_parts = 1;
  EXPECT_FAIL(fea_problem_create_poisson(q, &qd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "parts[0] names a physical group, but the mesh has none on its boundary");
  qd.num_parts = 0;
  for (int side = 0; side < 4; side++) qd.sides[side].type = FEA_BC_NEUMANN;
  EXPECT_FAIL(fea_problem_create_poisson(q, &qd, &pb), FEA_ERR_INVALID_ARG, ctx,
              "no side is Dirichlet or Robin and c = 0: u would be determined up to a constant");
  cr_assert_null(pb);
  /* The prehandled solver has no face terms: it refuses natural sides. */
  qd.sides[0].type = FEA_BC_DIRICHLET;
  OK(fea_problem_create_poisson(q, &qd, &pb));
  fea_solver *ph = NULL;
  EXPECT_FAIL(fea_solver_create_prehandled(ctx, pb, NULL, &ph), FEA_ERR_UNSUPPORTED, ctx,
              "Neumann or Robin");
  OK(fea_problem_destroy(&pb));
  OK(fea_space_destroy(&q));
  fea_mesh_destroy(&m);

  /* Parts on a B-spline space. */
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  fea_space *bs = NULL;
  OK(fea_space_create_bspline(ctx, &bd, &bs));
  qd = base_desc(&b);
  qd.parts = parts;
  qd.num_parts = 1;
  EXPECT_FAIL(fea_problem_create_poisson(bs, &qd, &pb), FEA_ERR_UNSUPPORTED, ctx,
              "parts name physical groups of a mesh read from Gmsh; this is a B-spline space");
  OK(fea_space_destroy(&bs));
  OK(fea_context_destroy(&ctx));
}
