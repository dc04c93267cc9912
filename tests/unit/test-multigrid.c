/* Geometric multigrid (src/multigrid/) on the Poisson problem on the
 * unit square and cube with homogeneous Dirichlet data:
 * - the prolongation reproduces coarse functions at the fine vertices (the
 *   space's own evaluation is the oracle) and linear functions away from the
 *   boundary, for Q1/P1 in 2D/3D;
 * - P^T A_h P equals the rediscretized A_2h (Galerkin) to 1e-12;
 * - the level matrices and load built from the structured stencil equal the
 *   reference assembly (pattern exactly, values to 1e-14) on an unequal box
 *   with a constant sigma and Dirichlet data, a NaN load is refused, and the
 *   stencil declines a varying sigma and simplices;
 * - the paper's configuration (2D Q1, V-cycle, unscaled Richardson 0.3, 4+4,
 *   one-element coarsest mesh) converges in an h-independent number of
 *   cycles, to the discretization error (falling like h^2, equal to a CG
 *   solve's to 1e-13);
 * - h-independence for the W-cycle, Chebyshev with MG-PCG, P1, 3D Q1 and
 *   Kuhn P1, matrix-free level operators (same counts as CSR), and a
 *   coarsest level with free DoFs (dense Cholesky);
 * - p-multigrid (Q2, Q3 -> Q1 on the same mesh -> coarser meshes): the
 *   transfer's Galerkin identity P^T A_p P = A_1, its grid sweeps equal to P
 *   and P^T (Q2..Q4), h-independent counts, the direct solution; a Q2 box
 *   level's largest eigenvalue from its symbol equal to LAPACK's (A and
 *   D^-1 A, unequal boxes), its lattice search equal to the exhaustive one,
 *   its diagonal by node type equal to the assembly's;
 * - the device path (level operators of the context, CSR transfers, every
 *   host copy through the kernel table) played on the host: the host
 *   path's counts and solution;
 * - unstable omegas, bad options and unsupported spaces are refused.
 * Every configuration starts from the paper's preset, FEA_MULTIGRID_DESC_PAPER
 * (CSR, V-cycle iteration), and changes what it tests: the counts above are
 * the paper's setting's, not the defaults' (tests/api/test-multigrid.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <lapacke.h>
#include <feaccel.h>

#include "linalg/csr-product.h"
#include "linalg/matrix.h"
#include "disc/mesh.h"
#include "multigrid/multigrid-impl.h"
#include "linalg/vector.h"

#define OK(expr)                                                               \
  do {                                                                         \
    fea_status ok_status_ = (expr);                                            \
    cr_assert_eq(ok_status_, FEA_SUCCESS, "%s returned %s: %s", #expr,         \
                 fea_status_string(ok_status_), fea_context_last_error(NULL)); \
  } while (0)

#define PI 3.14159265358979323846

static fea_context *ctx;

static void setup(void) { OK(fea_context_create("/cpu/ref", &ctx)); }
static void teardown(void) { OK(fea_context_destroy(&ctx)); }

TestSuite(multigrid, .init = setup, .fini = teardown);

/* u = prod_k sin(pi x_k), -Laplace u = dim pi^2 u; user points at dim. */
static double exact_u(const double *x, void *user) {
  const int dim = *(const int *)user;
  double u = 1.0;
  for (int k = 0; k < dim; k++) u *= sin(PI * x[k]);
  return u;
}
static double exact_f(const double *x, void *user) {
  return *(const int *)user * PI * PI * exact_u(x, user);
}
static double linear(const double *x, void *user) {
  const int dim = *(const int *)user;
  return 1.0 + 2.0 * x[0] - 3.0 * x[1] + (dim == 3 ? x[2] : 0.0);
}

static int dims[4] = {0, 1, 2, 3}; /* user data for the functions: &dims[dim] */

typedef struct fixture {
  int dim;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_index nf;
} fixture;

/* The Lagrange order and node set fixture_make uses (tests of p-multigrid
 * set and reset them). */
static int fixture_order = 1;
static fea_lagrange_nodes fixture_nodes = FEA_NODES_EQUISPACED;

static void fixture_make(fixture *x, int dim, int simplices, fea_index n) {
  memset(x, 0, sizeof *x);
  x->dim = dim;
  fea_mesh_desc d = FEA_MESH_DESC_INIT;
  d.dim = dim;
  d.n[0] = d.n[1] = d.n[2] = n;
  d.simplices = simplices;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = exact_f;
  pd.source_user = &dims[dim];
  OK(fea_mesh_create_structured(ctx, &d, &x->mesh));
  OK(fea_space_create_lagrange(x->mesh, fixture_order, fixture_nodes, &x->space));
  OK(fea_problem_create_poisson(x->space, &pd, &x->pb));
  OK(fea_problem_get_num_free_dofs(x->pb, &x->nf));
}

static void fixture_free(fixture *x) {
  fea_problem_destroy(&x->pb);
  fea_space_destroy(&x->space);
  fea_mesh_destroy(&x->mesh);
}

static const char *el_name(int dim, int simplices) {
  static const char *names[2][2] = {{"Q1 2D", "P1 2D"}, {"Q1 3D", "P1 3D (Kuhn)"}};
  return names[dim - 2][simplices];
}

/* ---- prolongation ------------------------------------------------------------------------------ */

/* Free-DoF values of full coefficients. */
static void restrict_free(const fea_problem *pb, const double *full, double *free_vals) {
  for (fea_index i = 0; i < pb->space->num_dofs; i++)
    if (pb->free_index[i] >= 0) free_vals[pb->free_index[i]] = full[i];
}

static void check_prolongation(int dim, int simplices, fea_index n) {
  fixture f, c;
  fixture_make(&f, dim, simplices, n);
  fixture_make(&c, dim, simplices, n / 2);
  fea_matrix *P;
  OK(fea_mg_prolongation(ctx, f.pb, c.pb, &P));
  cr_assert_eq(P->rows, f.nf);
  cr_assert_eq(P->cols, c.nf);
  const fea_index nvf = f.mesh->num_nodes, nvc = c.mesh->num_nodes;
  double *cfull = calloc((size_t)nvc, sizeof *cfull), *cfree = malloc((size_t)c.nf * sizeof *cfree);
  double *coords = malloc((size_t)(nvf * dim) * sizeof *coords);
  double *vals = malloc((size_t)nvf * sizeof *vals), *pf = malloc((size_t)f.nf * sizeof *pf);
  double *ffull = malloc((size_t)nvf * sizeof *ffull),
         *ffree = malloc((size_t)f.nf * sizeof *ffree);
  cr_assert(cfull && cfree && coords && vals && pf && ffull && ffree);
  OK(fea_mesh_get_coordinates(f.mesh, nvf * dim, coords));

  /* A pseudo-random coarse function, zero on the boundary, against the
   * coarse space's own evaluation at the fine vertices. */
  unsigned s = 12345;
  for (fea_index i = 0; i < nvc; i++) {
    s = s * 1103515245u + 12345u;
    cfull[i] = c.pb->free_index[i] >= 0 ? (double)(s >> 8) / (double)(1u << 24) - 0.5 : 0.0;
  }
  restrict_free(c.pb, cfull, cfree);
  OK(fea_matrix_multiply(P, cfree, pf));
  OK(fea_space_evaluate(c.space, cfull, nvf, coords, vals, NULL));
  double err = 0;
  for (fea_index v = 0; v < nvf; v++) {
    const fea_index r = f.pb->free_index[v];
    if (r >= 0) err = fmax(err, fabs(pf[r] - vals[v]));
  }
  cr_assert(err <= 1e-13, "%s n=%lld: P c differs from the coarse function by %g",
            el_name(dim, simplices), (long long)n, err);

  /* A linear function (not zero on the boundary): exact on the rows whose
   * coarse support has no Dirichlet DoF (row sum 1). */
  int *user = &dims[dim];
  OK(fea_space_interpolate(c.space, linear, user, cfull));
  OK(fea_space_interpolate(f.space, linear, user, ffull));
  restrict_free(c.pb, cfull, cfree);
  restrict_free(f.pb, ffull, ffree);
  OK(fea_matrix_multiply(P, cfree, pf));
  fea_index full_rows = 0;
  err = 0;
  for (fea_index r = 0; r < f.nf; r++) {
    double sum = 0;
    for (fea_index k = P->row_ptr[r]; k < P->row_ptr[r + 1]; k++) sum += P->values[k];
    if (fabs(sum - 1.0) > 1e-15) continue;
    full_rows++;
    err = fmax(err, fabs(pf[r] - ffree[r]));
  }
  cr_assert(full_rows > f.nf / 4, "only %lld of %lld rows have full support", (long long)full_rows,
            (long long)f.nf);
  cr_assert(err <= 1e-13, "%s n=%lld: P misses the linear function by %g", el_name(dim, simplices),
            (long long)n, err);
  free(cfull), free(cfree), free(coords), free(vals), free(pf), free(ffull), free(ffree);
  fea_matrix_destroy(&P);
  fixture_free(&c);
  fixture_free(&f);
}

Test(multigrid, prolongation_reproduces_coarse_functions) {
  for (int simplices = 0; simplices < 2; simplices++) {
    check_prolongation(2, simplices, 8);
    check_prolongation(2, simplices, 16);
    check_prolongation(3, simplices, 8);
    check_prolongation(3, simplices, 16);
  }
}

/* The grid sweeps between two box levels equal the CSR prolongation and
 * its transpose. */
static void check_grid_transfer(int dim, fea_index n) {
  fixture f, c;
  fixture_make(&f, dim, 0, n);
  fixture_make(&c, dim, 0, n / 2);
  cr_assert(fea_mg_grid_transfer_applies(f.pb, c.pb));
  fea_matrix *P;
  OK(fea_mg_prolongation(ctx, f.pb, c.pb, &P));
  fea_mg_level lv[2] = {{.problem = f.pb, .n = f.nf}, {.problem = c.pb, .n = c.nf}};
  fea_mg m = {.ctx = ctx, .num_levels = 2, .levels = lv};
  double *xc = malloc((size_t)c.nf * sizeof *xc), *xf = malloc((size_t)f.nf * sizeof *xf);
  double *yf = malloc((size_t)f.nf * sizeof *yf), *yc = malloc((size_t)c.nf * sizeof *yc);
  double *zc = malloc((size_t)c.nf * sizeof *zc);
  cr_assert(xc && xf && yf && yc && zc);
  for (fea_index i = 0; i < c.nf; i++) xc[i] = cos(0.7 * (double)i);
  for (fea_index i = 0; i < f.nf; i++) xf[i] = sin(0.3 * (double)i), yf[i] = 0.0;
  OK(fea_matrix_multiply(P, xc, yf));
  for (fea_index i = 0; i < f.nf; i++) yf[i] += xf[i]; /* xf + P xc */
  fea_mg_grid_prolong(&m, 0, xc, xf);
  for (fea_index i = 0; i < f.nf; i++)
    cr_assert(fabs(xf[i] - yf[i]) <= 1e-14, "%dD n=%lld: prolongation row %lld: %g, not %g", dim,
              (long long)n, (long long)i, xf[i], yf[i]);
  for (fea_index j = 0; j < c.nf; j++) zc[j] = 0.0; /* P^T yf by the matrix, column by column */
  for (fea_index i = 0; i < f.nf; i++)
    for (fea_index k = P->row_ptr[i]; k < P->row_ptr[i + 1]; k++)
      zc[P->col_idx[k]] += P->values[k] * yf[i];
  fea_mg_grid_restrict(&m, 0, yf, yc);
  for (fea_index j = 0; j < c.nf; j++)
    cr_assert(fabs(yc[j] - zc[j]) <= 1e-13 * (1 + fabs(zc[j])),
              "%dD n=%lld: restriction row %lld: %g, not %g", dim, (long long)n, (long long)j,
              yc[j], zc[j]);
  free(xc), free(xf), free(yf), free(yc), free(zc);
  fea_matrix_destroy(&P);
  fixture_free(&c);
  fixture_free(&f);
}

Test(multigrid, grid_transfers_equal_csr) {
  check_grid_transfer(2, 8);
  check_grid_transfer(2, 32);
  check_grid_transfer(3, 8);
  check_grid_transfer(3, 16);
  /* Simplices interpolate along the Kuhn diagonals: not a tensor rule. */
  fixture f, c;
  fixture_make(&f, 2, 1, 8);
  fixture_make(&c, 2, 1, 4);
  cr_assert(!fea_mg_grid_transfer_applies(f.pb, c.pb));
  fixture_free(&c);
  fixture_free(&f);
}

/* max |P^T A_f P - A_c| / max |A_c| over the free DoFs, densely. */
static double galerkin_error(const fixture *f, const fixture *c, const fea_matrix *P) {
  fea_matrix *Af, *Ac, *PT, *AP, *G;
  double *b = malloc((size_t)(f->nf > c->nf ? f->nf : c->nf) * sizeof *b);
  cr_assert(b);
  OK(fea_problem_assemble_reference(f->pb, b, &Af));
  OK(fea_problem_assemble_reference(c->pb, b, &Ac));
  OK(fea_csr_transpose(ctx, P, &PT));
  OK(fea_csr_multiply(ctx, Af, P, &AP));
  OK(fea_csr_multiply(ctx, PT, AP, &G));
  const fea_index m = c->nf;
  double *dg = calloc((size_t)(m * m), sizeof *dg), *dc = calloc((size_t)(m * m), sizeof *dc);
  cr_assert(dg && dc);
  double scale = 0, err = 0;
  for (fea_index i = 0; i < m; i++) {
    for (fea_index k = G->row_ptr[i]; k < G->row_ptr[i + 1]; k++)
      dg[i * m + G->col_idx[k]] += G->values[k];
    for (fea_index k = Ac->row_ptr[i]; k < Ac->row_ptr[i + 1]; k++)
      dc[i * m + Ac->col_idx[k]] += Ac->values[k];
  }
  for (fea_index i = 0; i < m * m; i++) scale = fmax(scale, fabs(dc[i]));
  for (fea_index i = 0; i < m * m; i++) err = fmax(err, fabs(dg[i] - dc[i]));
  free(dg), free(dc), free(b);
  fea_matrix *all[] = {Af, Ac, PT, AP, G};
  for (int k = 0; k < 5; k++) fea_matrix_destroy(&all[k]);
  return err / scale;
}

/* P^T A_h P = A_2h: the rediscretized coarse operator is the Galerkin one. */
static void check_galerkin(int dim, int simplices, fea_index n) {
  fixture f, c;
  fixture_make(&f, dim, simplices, n);
  fixture_make(&c, dim, simplices, n / 2);
  fea_matrix *P;
  OK(fea_mg_prolongation(ctx, f.pb, c.pb, &P));
  const double e = galerkin_error(&f, &c, P);
  cr_log_info("%s n=%lld: |P^T A P - A_c| / |A_c| = %.2g", el_name(dim, simplices), (long long)n,
              e);
  cr_assert(e <= 1e-12, "%s n=%lld: P^T A P differs from A_c by %g", el_name(dim, simplices),
            (long long)n, e);
  fea_matrix_destroy(&P);
  fixture_free(&c);
  fixture_free(&f);
}

/* p-multigrid's first transfer: Q1 is a subspace of Q_p on the same mesh,
 * so P^T A_p P is the Q1 matrix (an identity that fails for any wrong
 * weight, row or column), and rows sum to at most 1. */
static void check_galerkin_p(int dim, int order, fea_lagrange_nodes nodes, fea_index n) {
  fixture f, c;
  fixture_order = order;
  fixture_nodes = nodes;
  fixture_make(&f, dim, 0, n);
  fixture_order = 1;
  fixture_nodes = FEA_NODES_EQUISPACED;
  /* Q1 on f's own mesh, as the hierarchy builds it. */
  memset(&c, 0, sizeof c);
  c.dim = dim;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = exact_f;
  pd.source_user = &dims[dim];
  OK(fea_space_create_lagrange(f.mesh, 1, FEA_NODES_EQUISPACED, &c.space));
  OK(fea_problem_create_poisson(c.space, &pd, &c.pb));
  OK(fea_problem_get_num_free_dofs(c.pb, &c.nf));
  fea_matrix *P;
  OK(fea_mg_p_prolongation(ctx, f.pb, c.pb, &P));
  cr_assert_eq(P->rows, f.nf);
  cr_assert_eq(P->cols, c.nf);
  for (fea_index i = 0; i < P->rows; i++) { /* Q1 reproduces constants: rows sum to 1 inside */
    double sum = 0;
    for (fea_index k = P->row_ptr[i]; k < P->row_ptr[i + 1]; k++) sum += P->values[k];
    cr_assert(sum <= 1.0 + 1e-15, "row %lld sums to %.17g", (long long)i, sum);
  }
  const double e = galerkin_error(&f, &c, P);
  cr_log_info("Q%d -> Q1 %dD n=%lld: |P^T A_p P - A_1| / |A_1| = %.2g", order, dim, (long long)n,
              e);
  cr_assert(e <= 1e-12, "Q%d %dD n=%lld: P^T A_p P differs from A_1 by %g", order, dim,
            (long long)n, e);
  fea_matrix_destroy(&P);
  fixture_free(&c);
  fixture_free(&f);
}

Test(multigrid, p_transfer_galerkin_consistency) {
  check_galerkin_p(2, 2, FEA_NODES_EQUISPACED, 8);
  check_galerkin_p(2, 3, FEA_NODES_GAUSS_LOBATTO, 6);
  check_galerkin_p(3, 2, FEA_NODES_EQUISPACED, 4);
  check_galerkin_p(3, 3, FEA_NODES_GAUSS_LOBATTO, 3);
}

/* A smooth map of the box (a shear and a bulge), for the mapped cases:
 * box_map set, box_problem's new meshes take it. */
static void bulge(const double *xi, double *x, void *user) {
  const int dim = *(const int *)user;
  x[0] = xi[0] + 0.1 * xi[1] * xi[1];
  x[1] = xi[1] * (1.0 + 0.1 * xi[0]);
  if (dim == 3) x[2] = xi[2] + 0.05 * xi[0] * xi[1];
}
static fea_point_map_fn box_map;

/* A Q_p (or Q1) Poisson problem with Dirichlet data on the whole boundary,
 * cells[k] per direction of the box [0, len_k]^dim; mesh NULL: a new mesh,
 * else a space on that one. */
static void box_problem(fixture *x, int dim, const fea_index cells[3], const double len[3],
                        int order, fea_lagrange_nodes nodes, fea_mesh *mesh, double sigma) {
  memset(x, 0, sizeof *x);
  x->dim = dim;
  if (mesh) {
    x->mesh = mesh;
    fea_object_retain(mesh);
  } else {
    fea_mesh_desc d = FEA_MESH_DESC_INIT;
    d.dim = dim;
    for (int k = 0; k < dim; k++) d.n[k] = cells[k], d.upper[k] = len[k];
    d.map = box_map;
    d.map_user = &dims[dim];
    OK(fea_mesh_create_structured(ctx, &d, &x->mesh));
  }
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = exact_f;
  pd.source_user = &dims[dim];
  pd.sigma = sigma;
  OK(fea_space_create_lagrange(x->mesh, order, nodes, &x->space));
  OK(fea_problem_create_poisson(x->space, &pd, &x->pb));
  OK(fea_problem_get_num_free_dofs(x->pb, &x->nf));
}

/* The p-transfer's grid sweeps equal the CSR P (xf += P xc) and P^T. */
static void check_pgrid(int dim, int order, fea_lagrange_nodes nodes, fea_index n0, fea_index n1,
                        fea_index n2, int threads) {
  const fea_index cells[3] = {n0, n1, n2};
  const double len[3] = {1.0, 2.0, 0.5};
  fixture f, c;
  box_problem(&f, dim, cells, len, order, nodes, NULL, 1.0);
  box_problem(&c, dim, cells, len, 1, FEA_NODES_EQUISPACED, f.mesh, 1.0);
  fea_matrix *P, *PT;
  fea_mg_pgrid *g = NULL;
  OK(fea_mg_p_prolongation(ctx, f.pb, c.pb, &P));
  OK(fea_csr_transpose(ctx, P, &PT));
  OK(fea_mg_pgrid_build(ctx, f.pb, c.pb, &g));
  cr_assert_not_null(g, "Q%d %dD: no grid sweeps", order, dim);
  double *xc = malloc((size_t)c.nf * sizeof *xc), *xf = malloc((size_t)f.nf * sizeof *xf);
  double *yf = malloc((size_t)f.nf * sizeof *yf), *yc = malloc((size_t)c.nf * sizeof *yc);
  double *zc = malloc((size_t)c.nf * sizeof *zc);
  cr_assert(xc && xf && yf && yc && zc);
  for (fea_index i = 0; i < c.nf; i++) xc[i] = cos(0.7 * (double)i);
  for (fea_index i = 0; i < f.nf; i++) xf[i] = sin(0.3 * (double)i), yf[i] = 0.0;
  OK(fea_matrix_multiply(P, xc, yf));
  for (fea_index i = 0; i < f.nf; i++) yf[i] += xf[i]; /* xf + P xc */
  fea_mg_pgrid_prolong(g, threads, xc, xf);
  for (fea_index i = 0; i < f.nf; i++)
    cr_assert(fabs(xf[i] - yf[i]) <= 1e-14, "Q%d %dD: prolongation row %lld: %.17g, not %.17g",
              order, dim, (long long)i, xf[i], yf[i]);
  OK(fea_matrix_multiply(PT, yf, zc));
  fea_mg_pgrid_restrict(g, threads, yf, yc);
  for (fea_index j = 0; j < c.nf; j++)
    cr_assert(fabs(yc[j] - zc[j]) <= 1e-13 * (1 + fabs(zc[j])),
              "Q%d %dD: restriction row %lld: %.17g, not %.17g", order, dim, (long long)j, yc[j],
              zc[j]);
  cr_log_info("Q%d %dD %lldx%lldx%lld: grid sweeps equal P and P^T (%lld x %lld)", order, dim,
              (long long)n0, (long long)n1, (long long)n2, (long long)f.nf, (long long)c.nf);
  free(xc), free(xf), free(yf), free(yc), free(zc);
  fea_mg_pgrid_free(g);
  fea_matrix_destroy(&P);
  fea_matrix_destroy(&PT);
  fixture_free(&c);
  fixture_free(&f);
}

Test(multigrid, p_grid_transfers_equal_csr) {
  check_pgrid(2, 2, FEA_NODES_EQUISPACED, 5, 7, 1, 1);
  check_pgrid(2, 3, FEA_NODES_GAUSS_LOBATTO, 6, 3, 1, 1);
  check_pgrid(3, 2, FEA_NODES_EQUISPACED, 3, 4, 5, 1);
  check_pgrid(3, 2, FEA_NODES_EQUISPACED, 12, 10, 14, 2); /* parallel lines */
  check_pgrid(3, 3, FEA_NODES_GAUSS_LOBATTO, 2, 3, 4, 1);
  check_pgrid(3, 4, FEA_NODES_EQUISPACED, 2, 2, 3, 1);
  box_map = bulge; /* the rule is the reference cell's: mapped meshes too */
  check_pgrid(2, 2, FEA_NODES_EQUISPACED, 6, 4, 1, 1);
  check_pgrid(3, 2, FEA_NODES_EQUISPACED, 3, 4, 3, 1);
  box_map = NULL;
  /* Not a grid of free nodes: P2 on triangles, a Neumann side; the CSR rows serve. */
  fixture f, c;
  fea_mg_pgrid *g = (fea_mg_pgrid *)(uintptr_t)1;
  fixture_make(&f, 2, 1, 4);
  fea_space_destroy(&f.space);
  fea_problem_destroy(&f.pb);
  OK(fea_space_create_lagrange(f.mesh, 2, FEA_NODES_EQUISPACED, &f.space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  OK(fea_problem_create_poisson(f.space, &pd, &f.pb));
  box_problem(&c, 2, (fea_index[3]){4, 4, 1}, (double[3]){1, 1, 1}, 1, FEA_NODES_EQUISPACED, f.mesh,
              1.0);
  OK(fea_mg_pgrid_build(ctx, f.pb, c.pb, &g));
  cr_assert_null(g);
  fixture_free(&c);
  fixture_free(&f);
}

/* The Q2 level's largest eigenvalue from its symbol against LAPACK's on
 * the assembled matrix (D^-1/2 A D^-1/2 and A), on unequal boxes and
 * cells; then the lattice search against every frequency. */
static void check_symbol(int dim, fea_index n0, fea_index n1, fea_index n2, double sigma) {
  const fea_index cells[3] = {n0, n1, n2};
  const double len[3] = {1.0, 2.0, 0.7};
  fixture f;
  box_problem(&f, dim, cells, len, 2, FEA_NODES_EQUISPACED, NULL, sigma);
  fea_matrix *A;
  double *b = malloc((size_t)f.nf * sizeof *b);
  cr_assert(b);
  OK(fea_problem_assemble_reference(f.pb, b, &A));
  const fea_index n = f.nf;
  double *M = calloc((size_t)(n * n), sizeof *M), *S = calloc((size_t)(n * n), sizeof *S);
  double *ev = malloc((size_t)n * sizeof *ev), *d = malloc((size_t)n * sizeof *d);
  cr_assert(M && S && ev && d);
  for (fea_index i = 0; i < n; i++)
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) {
      M[i * n + A->col_idx[k]] += A->values[k];
      if (A->col_idx[k] == i) d[i] = A->values[k];
    }
  for (fea_index i = 0; i < n; i++)
    for (fea_index j = 0; j < n; j++) S[i * n + j] = M[i * n + j] / sqrt(d[i] * d[j]);
  /* The diagonal by node type, placed through the p-transfer's grid (where
   * the Q1 level has free DoFs). */
  if (n0 > 1 && n1 > 1 && (dim == 2 || n2 > 1)) {
    fixture c;
    box_problem(&c, dim, cells, len, 1, FEA_NODES_EQUISPACED, f.mesh, sigma);
    fea_mg_pgrid *g = NULL;
    OK(fea_mg_pgrid_build(ctx, f.pb, c.pb, &g));
    cr_assert_not_null(g);
    double *t = malloc((size_t)n * sizeof *t);
    int typed = 0;
    cr_assert(t);
    OK(fea_mg_symbol_diagonal(f.pb, g, t, &typed));
    cr_assert(typed);
    for (fea_index i = 0; i < n; i++)
      cr_assert(fabs(t[i] - d[i]) <= 1e-14 * d[i], "diagonal %lld: %.17g, not %.17g", (long long)i,
                t[i], d[i]);
    free(t);
    fea_mg_pgrid_free(g);
    fixture_free(&c);
  }
  for (int scaled = 0; scaled < 2; scaled++) {
    cr_assert_eq(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', (int)n, scaled ? S : M, (int)n, ev), 0);
    double lmax = 0;
    int usable = 0;
    OK(fea_mg_symbol_lambda_max(f.pb, scaled, 1, &lmax, &usable));
    cr_assert(usable, "%dD Q2: the symbol does not apply", dim);
    cr_log_info("Q2 %dD %lldx%lldx%lld sigma %g %s: symbol %.15g, LAPACK %.15g", dim, (long long)n0,
                (long long)n1, (long long)n2, sigma, scaled ? "D^-1 A" : "A", lmax, ev[n - 1]);
    cr_assert(fabs(lmax - ev[n - 1]) <= 1e-12 * ev[n - 1], "%s: symbol %.15g, LAPACK %.15g",
              scaled ? "D^-1 A" : "A", lmax, ev[n - 1]);
  }
  free(M), free(S), free(ev), free(d), free(b);
  fea_matrix_destroy(&A);
  fixture_free(&f);
}

static void check_symbol_lattice(int dim, fea_index n0, fea_index n1, fea_index n2) {
  const fea_index cells[3] = {n0, n1, n2};
  const double len[3] = {1.0, 3.0, 0.5};
  fixture f;
  box_problem(&f, dim, cells, len, 2, FEA_NODES_EQUISPACED, NULL, 1.0);
  for (int scaled = 0; scaled < 2; scaled++) {
    double all = 0, lattice = 0;
    int u1 = 0, u2 = 0;
    OK(fea_mg_symbol_lambda_max(f.pb, scaled, 1, &all, &u1));
    OK(fea_mg_symbol_lambda_max(f.pb, scaled, 0, &lattice, &u2));
    cr_assert(u1 && u2);
    cr_assert(fabs(all - lattice) <= 1e-13 * all, "%dD %lldx%lldx%lld: lattice %.15g, all %.15g",
              dim, (long long)n0, (long long)n1, (long long)n2, lattice, all);
  }
  fixture_free(&f);
}

static double sigma_of_x(const double *x, void *user) {
  (void)user;
  return 1.0 + x[0];
}

Test(multigrid, symbol_lambda_max_equals_lapack) {
  check_symbol(2, 4, 6, 1, 1.0);
  check_symbol(2, 1, 3, 1, 2.5);
  check_symbol(3, 2, 3, 4, 1.0);
  check_symbol(3, 3, 3, 3, 0.3);
  check_symbol(3, 1, 2, 3, 1.0);
  /* Beyond 4096 frequencies: lattice and ascent, against all of them. */
  check_symbol_lattice(3, 16, 20, 24);
  check_symbol_lattice(3, 48, 9, 30);
  check_symbol_lattice(2, 90, 70, 1);
  /* A mapped mesh, a varying sigma, Q1, Q3: no symbol (Lanczos estimates those). */
  const fea_index cells[3] = {4, 4, 4};
  const double len[3] = {1, 1, 1};
  fixture f;
  box_map = bulge;
  box_problem(&f, 3, cells, len, 2, FEA_NODES_EQUISPACED, NULL, 1.0);
  box_map = NULL;
  {
    double l = -1;
    int usable = 1;
    OK(fea_mg_symbol_lambda_max(f.pb, 1, 0, &l, &usable));
    cr_assert(!usable, "a mapped mesh: the symbol applied");
    fixture_free(&f);
  }
  for (int order = 1; order <= 3; order += 2) {
    box_problem(&f, 3, cells, len, order, FEA_NODES_EQUISPACED, NULL, 1.0);
    double l = -1;
    int usable = 1;
    OK(fea_mg_symbol_lambda_max(f.pb, 1, 0, &l, &usable));
    cr_assert(!usable && l == -1, "Q%d: the symbol applied", order);
    fixture_free(&f);
  }
  box_problem(&f, 3, cells, len, 2, FEA_NODES_EQUISPACED, NULL, 1.0);
  fea_problem_destroy(&f.pb);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma_fn = sigma_of_x;
  OK(fea_problem_create_poisson(f.space, &pd, &f.pb));
  int usable = 1;
  double l = -1;
  OK(fea_mg_symbol_lambda_max(f.pb, 1, 0, &l, &usable));
  cr_assert(!usable, "a varying sigma: the symbol applied");
  fixture_free(&f);
}

Test(multigrid, galerkin_consistency) {
  for (int simplices = 0; simplices < 2; simplices++) {
    check_galerkin(2, simplices, 16);
    check_galerkin(3, simplices, 8);
  }
}

/* ---- level matrices from the structured stencil -------------------------------------------------- */

static double nan_beyond_half(const double *x, void *user) {
  (void)user;
  return x[0] > 1.5 ? NAN : 1.0;
}

static double sigma_varying(const double *x, void *user) {
  (void)user;
  return 1.0 + x[0] * x[0];
}

/* The matrix-free stencil operator against the matrix R of the same problem:
 * its apply (y = A x and y += A x), diagonal and right-hand side. */
static void check_stencil_operator(fea_context *c, fea_problem *pb, const fea_matrix *R,
                                   const double *bref) {
  double w[27];
  int usable = 0;
  const fea_index n = pb->num_free;
  double *b = malloc(((size_t)n + 1) * sizeof *b), *x = malloc(((size_t)n + 1) * sizeof *x);
  double *y = malloc(((size_t)n + 1) * sizeof *y), *z = malloc(((size_t)n + 1) * sizeof *z);
  cr_assert(b && x && y && z);
  OK(fea_mg_stencil_weights(c, pb, w, b, &usable));
  cr_assert(usable, "the stencil operator does not apply");
  fea_operator *op = NULL;
  OK(fea_mg_stencil_operator(c, pb, w, b, &op));
  for (fea_index i = 0; i < n; i++) x[i] = sin(0.37 * (double)i) + 0.25 * (double)(i % 7);
  OK(fea_matrix_multiply(R, x, z));
  OK(op->impl->apply(op, x, y, 0));
  double err = 0, scale = 0;
  for (fea_index i = 0; i < n; i++) {
    err = fmax(err, fabs(y[i] - z[i]));
    scale = fmax(scale, fabs(z[i]));
  }
  cr_assert(err <= 1e-13 * scale, "%lld rows: the stencil's A x differs by %g (scale %g)",
            (long long)n, err, scale);
  OK(op->impl->apply(op, x, y, 1)); /* y = 2 A x */
  for (fea_index i = 0; i < n; i++)
    cr_assert(fabs(y[i] - 2 * z[i]) <= 1e-13 * scale, "row %lld: y += A x gives %g, not %g",
              (long long)i, y[i], 2 * z[i]);
  OK(op->impl->diagonal(op, y));
  for (fea_index i = 0; i < n; i++) {
    double d = 0;
    for (fea_index k = R->row_ptr[i]; k < R->row_ptr[i + 1]; k++)
      if (R->col_idx[k] == i) d = R->values[k];
    cr_assert(fabs(y[i] - d) <= 1e-14 * scale, "row %lld: diagonal %g, not %g", (long long)i, y[i],
              d);
  }
  if (bref) {
    OK(fea_operator_rhs(op, y));
    for (fea_index i = 0; i < n; i++)
      cr_assert(fabs(y[i] - bref[i]) <= 1e-13 * (1 + fabs(bref[i])), "rhs row %lld: %g, not %g",
                (long long)i, y[i], bref[i]);
  }
  cr_assert_eq(op->info.kind_run, FEA_OPERATOR_MATFREE_SUMFACT);
  /* Its exact largest eigenvalue against LAPACK's on the dense matrix. */
  if (n <= 400) {
    double *M = calloc((size_t)n * (size_t)n, sizeof *M), *ev = malloc((size_t)n * sizeof *ev);
    cr_assert(M && ev);
    for (fea_index i = 0; i < n; i++)
      for (fea_index k = R->row_ptr[i]; k < R->row_ptr[i + 1]; k++)
        M[(size_t)i * n + R->col_idx[k]] = R->values[k];
    cr_assert_eq(LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', (int)n, M, (int)n, ev), 0);
    double lmax = 0, lscaled = 0;
    cr_assert(fea_mg_stencil_operator_lambda_max(op, 0, &lmax));
    cr_assert(fea_mg_stencil_operator_lambda_max(op, 1, &lscaled));
    OK(op->impl->diagonal(op, y));
    cr_assert(fabs(lmax - ev[n - 1]) <= 1e-12 * ev[n - 1], "lambda_max %.15g, LAPACK %.15g", lmax,
              ev[n - 1]);
    cr_assert(fabs(lscaled - ev[n - 1] / y[0]) <= 1e-12 * lscaled, "scaled %.15g, LAPACK %.15g",
              lscaled, ev[n - 1] / y[0]);
    free(M), free(ev);
  }
  fea_object_release(op);
  free(b), free(x), free(y), free(z);
}

/* Across the threads: a 3D box of 21 489 free rows, above the threshold of
 * the parallel sweep, against the stencil's own CSR matrix. */
Test(multigrid, stencil_operator_on_threads) {
  fea_context *tc = NULL;
  OK(fea_context_create("/cpu/threads", &tc));
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 3;
  md.n[0] = 40, md.n[1] = 30, md.n[2] = 20;
  md.upper[0] = 2.0;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = exact_f;
  pd.source_user = &dims[3];
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  OK(fea_mesh_create_structured(tc, &md, &mesh));
  OK(fea_space_create_lagrange(mesh, 1, FEA_NODES_EQUISPACED, &space));
  OK(fea_problem_create_poisson(space, &pd, &pb));
  fea_matrix *A = NULL;
  OK(fea_mg_stencil_system(tc, pb, &A, NULL));
  cr_assert(A);
  check_stencil_operator(tc, pb, A, NULL);
  fea_matrix_destroy(&A);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  OK(fea_context_destroy(&tc));
}

/* The stencil's matrix against the reference assembly of the same problem on a
 * box that is neither the unit box nor equally divided, with sigma = 2.5 and
 * Dirichlet data: the same pattern, values equal to rounding. */
static void check_stencil(int dim) {
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = dim;
  const fea_index n[3] = {6, 4, 3};
  const double lower[3] = {0.0, -1.0, 0.5}, upper[3] = {2.0, 0.5, 1.0};
  for (int k = 0; k < 3; k++) {
    md.n[k] = k < dim ? n[k] : 1;
    md.lower[k] = lower[k];
    md.upper[k] = upper[k];
  }
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma = 2.5;
  pd.source = exact_f;
  pd.source_user = &dims[dim];
  pd.dirichlet = linear;
  pd.dirichlet_user = &dims[dim];
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  OK(fea_mesh_create_structured(ctx, &md, &mesh));
  OK(fea_space_create_lagrange(mesh, 1, FEA_NODES_EQUISPACED, &space));
  OK(fea_problem_create_poisson(space, &pd, &pb));
  cr_assert(fea_mg_stencil_applies(pb));
  fea_matrix *A = NULL, *R = NULL;
  double *b = malloc(((size_t)pb->num_free + 1) * sizeof *b);
  double *bs = malloc(((size_t)pb->num_free + 1) * sizeof *bs);
  cr_assert(b && bs);
  OK(fea_mg_stencil_system(ctx, pb, &A, bs));
  cr_assert(A, "Q1 %dD: the stencil did not apply", dim);
  OK(fea_problem_assemble_reference(pb, b, &R));
  double bscale = 0, berr = 0;
  for (fea_index i = 0; i < pb->num_free; i++) {
    bscale = fmax(bscale, fabs(b[i]));
    berr = fmax(berr, fabs(bs[i] - b[i]));
  }
  cr_log_info("Q1 %dD stencil: |b - b_assembled| / |b| = %.2g", dim, berr / bscale);
  cr_assert(berr <= 1e-14 * bscale, "Q1 %dD: the stencil's load differs by %g (scale %g)", dim,
            berr, bscale);
  cr_assert_eq(A->rows, R->rows);
  cr_assert_eq(A->nnz, R->nnz, "Q1 %dD: %lld entries, the assembly has %lld", dim,
               (long long)A->nnz, (long long)R->nnz);
  double scale = 0, err = 0;
  for (fea_index k = 0; k < R->nnz; k++) scale = fmax(scale, fabs(R->values[k]));
  for (fea_index i = 0; i <= R->rows; i++) cr_assert_eq(A->row_ptr[i], R->row_ptr[i]);
  for (fea_index k = 0; k < R->nnz; k++) {
    cr_assert_eq(A->col_idx[k], R->col_idx[k], "Q1 %dD: entry %lld in column %lld, not %lld", dim,
                 (long long)k, (long long)A->col_idx[k], (long long)R->col_idx[k]);
    err = fmax(err, fabs(A->values[k] - R->values[k]));
  }
  cr_log_info("Q1 %dD stencil: |A - A_assembled| / |A| = %.2g over %lld entries", dim, err / scale,
              (long long)R->nnz);
  cr_assert(err <= 1e-14 * scale, "Q1 %dD: the stencil's values differ by %g (scale %g)", dim, err,
            scale);
  check_stencil_operator(ctx, pb, R, b);
  fea_matrix_destroy(&A);
  fea_matrix_destroy(&R);
  fea_problem_destroy(&pb);
  /* A load that is not finite somewhere is refused, naming the point. */
  pd.source = nan_beyond_half;
  OK(fea_problem_create_poisson(space, &pd, &pb));
  fea_status st = fea_mg_stencil_system(ctx, pb, &A, bs);
  cr_assert_eq(st, FEA_ERR_INVALID_ARG, "a NaN load gave %s", fea_status_string(st));
  cr_assert_null(A);
  cr_assert(strstr(fea_context_last_error(ctx), "the source f is nan at x = ("), "%s",
            fea_context_last_error(ctx));
  fea_problem_destroy(&pb);
  /* A varying sigma has no common element matrix: the caller assembles. */
  pd.source = exact_f;
  pd.sigma_fn = sigma_varying;
  OK(fea_problem_create_poisson(space, &pd, &pb));
  cr_assert(!fea_mg_stencil_applies(pb));
  OK(fea_mg_stencil_system(ctx, pb, &A, NULL));
  cr_assert_null(A);
  free(b);
  free(bs);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
}

Test(multigrid, stencil_matches_assembly) {
  check_stencil(2);
  check_stencil(3);
  /* Simplices: two kinds of cells, no stencil. */
  fixture x;
  fixture_make(&x, 2, 1, 4);
  fea_matrix *A = NULL;
  cr_assert(!fea_mg_stencil_applies(x.pb));
  OK(fea_mg_stencil_system(ctx, x.pb, &A, NULL));
  cr_assert_null(A);
  fixture_free(&x);
}

/* ---- solves ------------------------------------------------------------------------------------ */

typedef struct run_result {
  fea_index iterations;
  int converged, levels;
  fea_index coarse_dofs;
  double factor, l2, lambda_max;
  double *u; /* free-DoF solution when kept */
} run_result;

/* The kernel table run() hands fea_mg_create_with (NULL: fea_mg_create's). */
static const fea_mg_kernels *run_kernels;

/* Solve the manufactured problem from x = 0 with the problem's own load. */
static run_result run(int dim, int simplices, fea_index n, const fea_multigrid_desc *d, int keep,
                      int want_l2) {
  fixture x;
  fixture_make(&x, dim, simplices, n);
  fea_mg *mg;
  if (run_kernels)
    OK(fea_mg_create_with(ctx, x.pb, d, run_kernels, &mg));
  else
    OK(fea_mg_create(ctx, x.pb, d, &mg));
  double *b = malloc((size_t)x.nf * sizeof *b), *u = calloc((size_t)x.nf, sizeof *u);
  cr_assert(b && u);
  OK(fea_mg_get_rhs(mg, b));
  fea_status st = fea_mg_solve(mg, b, u);
  cr_assert(st == FEA_SUCCESS || st == FEA_WARN_NOT_CONVERGED, "solve: %s",
            fea_context_last_error(NULL));
  fea_multigrid_stats s;
  fea_mg_get_stats(mg, &s);
  cr_assert_eq(s.fine_dofs, x.nf);
  run_result r = {s.iterations,         s.converged, s.num_levels, s.coarse_dofs,
                  s.convergence_factor, 0.0,         s.lambda_max, NULL};
  if (want_l2) {
    double *full = malloc((size_t)x.space->num_dofs * sizeof *full);
    cr_assert(full);
    OK(fea_problem_expand_solution(x.pb, u, full));
    OK(fea_problem_error_norms(x.pb, full, exact_u, NULL, &dims[dim], &r.l2, NULL));
    free(full);
  }
  if (keep)
    r.u = u;
  else
    free(u);
  free(b);
  fea_mg_destroy(&mg);
  fixture_free(&x);
  return r;
}

static const char *kind_name(fea_operator_kind k) {
  return k == FEA_OPERATOR_CSR               ? "csr"
         : k == FEA_OPERATOR_MATFREE_SUMFACT ? "sumfact"
                                             : "element-matrix";
}

/* Iteration counts over the sizes: all converged, max - min <= spread. */
static void check_h_independent(const char *name, int dim, int simplices, const fea_index *ns,
                                int count, const fea_multigrid_desc *d, int spread,
                                fea_index *counts) {
  fea_index lo = INT64_MAX, hi = 0;
  for (int i = 0; i < count; i++) {
    run_result r = run(dim, simplices, ns[i], d, 0, 0);
    cr_log_info(
        "%s (%s): n=%lld levels=%d coarse_dofs=%lld iterations=%lld factor=%.3f "
        "lambda_max=%.4g",
        name, kind_name(d->operator_kind), (long long)ns[i], r.levels, (long long)r.coarse_dofs,
        (long long)r.iterations, r.factor, r.lambda_max);
    cr_assert(r.converged, "%s n=%lld: not converged in %lld iterations (factor %.3f)", name,
              (long long)ns[i], (long long)r.iterations, r.factor);
    if (counts) counts[i] = r.iterations;
    if (r.iterations < lo) lo = r.iterations;
    if (r.iterations > hi) hi = r.iterations;
  }
  cr_assert(hi - lo <= spread, "%s: iteration counts %lld..%lld grow with n", name, (long long)lo,
            (long long)hi);
}

static const fea_index sizes2d[] = {16, 32, 64, 128, 256};
/* 3D from n = 8: at n = 4 the hierarchy (27, 1, 0 free DoFs) is too small
 * to be asymptotic (counts there differ from n >= 8 by up to 3, either way). */
static const fea_index sizes3d[] = {8, 16, 32, 64};

/* CG with Jacobi to 1e-13 on the CSR operator: the discrete solution. */
static double *direct_solution(int dim, int simplices, fea_index n, double *l2) {
  fixture x;
  fixture_make(&x, dim, simplices, n);
  fea_operator *op;
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_CSR;
  OK(fea_operator_create(ctx, x.pb, &od, &op));
  fea_vector *b, *u;
  OK(fea_vector_create(ctx, x.nf, FEA_F64, &b));
  OK(fea_vector_create(ctx, x.nf, FEA_F64, &u));
  OK(fea_operator_get_rhs(op, b));
  OK(fea_vector_set_all(u, 0.0));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-13;
  OK(fea_cg_solve(op, b, u, &cd, NULL));
  double *sol = malloc((size_t)x.nf * sizeof *sol),
         *full = malloc((size_t)x.space->num_dofs * sizeof *full);
  cr_assert(sol && full);
  memcpy(sol, u->data, (size_t)x.nf * sizeof *sol);
  OK(fea_problem_expand_solution(x.pb, sol, full));
  OK(fea_problem_error_norms(x.pb, full, exact_u, NULL, &dims[dim], l2, NULL));
  free(full);
  fea_vector_destroy(&b);
  fea_vector_destroy(&u);
  fea_operator_destroy(&op);
  fixture_free(&x);
  return sol;
}

Test(multigrid, paper_configuration_h_independent_to_discretization_error, .timeout = 150) {
  const fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  const int N = 5;
  double l2[5], lx[5], ly[5];
  fea_index lo = INT64_MAX, hi = 0;
  for (int i = 0; i < N; i++) {
    run_result r = run(2, 0, sizes2d[i], &d, 1, 1);
    double l2_direct;
    double *ref = direct_solution(2, 0, sizes2d[i], &l2_direct);
    cr_log_info(
        "paper Q1 2D: n=%lld levels=%d iterations=%lld factor=%.3f lambda_max=%.4g "
        "l2=%.6e l2_direct=%.6e",
        (long long)sizes2d[i], r.levels, (long long)r.iterations, r.factor, r.lambda_max, r.l2,
        l2_direct);
    cr_assert(r.converged);
    cr_assert_eq(r.coarse_dofs, 0, "the one-element coarsest mesh has no free DoF");
    cr_assert(fabs(r.l2 - l2_direct) <= 1e-3 * l2_direct,
              "n=%lld: multigrid's L2 error %.6e is not the direct solve's %.6e",
              (long long)sizes2d[i], r.l2, l2_direct);
    free(ref);
    free(r.u);
    l2[i] = r.l2;
    lx[i] = log(1.0 / (double)sizes2d[i]);
    ly[i] = log(l2[i]);
    if (r.iterations < lo) lo = r.iterations;
    if (r.iterations > hi) hi = r.iterations;
  }
  cr_assert(hi - lo <= 2, "iteration counts %lld..%lld grow with n", (long long)lo, (long long)hi);
  /* Least-squares slope of log(error) against log(h). */
  double mx = 0, my = 0, sxy = 0, sxx = 0;
  for (int i = 0; i < N; i++) mx += lx[i] / N, my += ly[i] / N;
  for (int i = 0; i < N; i++)
    sxy += (lx[i] - mx) * (ly[i] - my), sxx += (lx[i] - mx) * (lx[i] - mx);
  const double order = sxy / sxx;
  cr_log_info("paper Q1 2D: fitted L2 order %.3f", order);
  cr_assert(fabs(order - 2.0) <= 0.15, "L2 order %.3f, not 2", order);
}

Test(multigrid, solution_equals_direct_solve) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  d.rtol = 1e-12;
  run_result r = run(2, 0, 64, &d, 1, 0);
  double l2;
  double *ref = direct_solution(2, 0, 64, &l2);
  fixture x;
  fixture_make(&x, 2, 0, 64);
  double e = 0, s = 0;
  for (fea_index i = 0; i < x.nf; i++)
    e += (r.u[i] - ref[i]) * (r.u[i] - ref[i]), s += ref[i] * ref[i];
  cr_assert(sqrt(e / s) <= 1e-9, "multigrid and CG differ by %g", sqrt(e / s));
  fixture_free(&x);
  free(ref);
  free(r.u);
}

Test(multigrid, w_cycle_h_independent, .timeout = 150) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  d.cycle = FEA_MG_CYCLE_W;
  check_h_independent("W Q1 2D", 2, 0, sizes2d, 5, &d, 2, NULL);
}

Test(multigrid, chebyshev_pcg_h_independent, .timeout = 150) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.pre_smooth = d.post_smooth = 3;
  d.krylov = 1;
  check_h_independent("Chebyshev(3) PCG Q1 2D", 2, 0, sizes2d, 5, &d, 2, NULL);
  d.krylov = 0;
  check_h_independent("Chebyshev(3) Q1 2D", 2, 0, sizes2d, 5, &d, 2, NULL);
  d.krylov = 1;
  check_h_independent("Chebyshev(3) PCG P1 2D", 2, 1, sizes2d, 5, &d, 2, NULL);
}

Test(multigrid, p1_2d_h_independent, .timeout = 150) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  d.omega = 0.2; /* lambda_max(A) = 8 for P1: 0.3 is unstable (tested below) */
  check_h_independent("Richardson 0.2 P1 2D", 2, 1, sizes2d, 5, &d, 2, NULL);
  d.jacobi = 1;
  d.omega = 0.6;
  check_h_independent("Jacobi-Richardson 0.6 P1 2D", 2, 1, sizes2d, 5, &d, 2, NULL);
}

Test(multigrid, q1_3d_h_independent, .timeout = 150) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.pre_smooth = d.post_smooth = 3;
  check_h_independent("Chebyshev(3) Q1 3D", 3, 0, sizes3d, 4, &d, 2, NULL);
  d.smoother = FEA_MG_SMOOTHER_RICHARDSON;
  d.pre_smooth = d.post_smooth = 4;
  d.jacobi = 1;
  d.omega = 0.6;
  check_h_independent("Jacobi-Richardson 0.6 Q1 3D", 3, 0, sizes3d, 3, &d, 2, NULL);
}

Test(multigrid, p1_3d_kuhn_h_independent, .timeout = 150) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.pre_smooth = d.post_smooth = 3;
  check_h_independent("Chebyshev(3) P1 3D", 3, 1, sizes3d, 4, &d, 2, NULL);
  d.krylov = 1;
  check_h_independent("Chebyshev(3) PCG P1 3D", 3, 1, sizes3d, 3, &d, 2, NULL);
}

/* Matrix-free level operators: the same products up to rounding, so the
 * same iteration counts (within one). */
static void check_same_counts(const char *name, int dim, int simplices, const fea_index *ns,
                              int count, fea_multigrid_desc d, fea_operator_kind kind) {
  fea_index csr[5], matfree[5];
  d.operator_kind = FEA_OPERATOR_CSR;
  check_h_independent(name, dim, simplices, ns, count, &d, 2, csr);
  d.operator_kind = kind;
  check_h_independent(name, dim, simplices, ns, count, &d, 2, matfree);
  for (int i = 0; i < count; i++)
    cr_assert(llabs((long long)(csr[i] - matfree[i])) <= 1,
              "%s n=%lld: %lld iterations with CSR, %lld matrix-free", name, (long long)ns[i],
              (long long)csr[i], (long long)matfree[i]);
}

Test(multigrid, matrix_free_levels_match_csr, .timeout = 150) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  check_same_counts("sumfact Q1 2D", 2, 0, sizes2d, 4, d, FEA_OPERATOR_MATFREE_SUMFACT);
  d.omega = 0.2;
  check_same_counts("element-matrix P1 2D", 2, 1, sizes2d, 4, d,
                    FEA_OPERATOR_MATFREE_ELEMENT_MATRIX);
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.pre_smooth = d.post_smooth = 3;
  check_same_counts("sumfact Q1 3D", 3, 0, sizes3d, 3, d, FEA_OPERATOR_MATFREE_SUMFACT);
}

Test(multigrid, dense_coarsest_level, .timeout = 150) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  d.coarsest_cells = 4;
  run_result r = run(2, 0, 64, &d, 0, 0);
  cr_assert_eq(r.coarse_dofs, 9, "coarsest 4 x 4 cells: 9 free DoFs, not %lld",
               (long long)r.coarse_dofs);
  cr_assert_eq(r.levels, 5);
  check_h_independent("coarsest 4 cells Q1 2D", 2, 0, sizes2d, 5, &d, 2, NULL);
  d.cycle = FEA_MG_CYCLE_W;
  check_h_independent("W coarsest 4 cells Q1 2D", 2, 0, sizes2d, 5, &d, 2, NULL);
  d.cycle = FEA_MG_CYCLE_V;
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.pre_smooth = d.post_smooth = 3;
  check_h_independent("coarsest 4 cells Q1 3D", 3, 0, (const fea_index[]){8, 16, 32}, 3, &d, 2,
                      NULL);
  /* Odd cell counts stop coarsening at once: one level, solved directly. */
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_PAPER;
  r = run(2, 1, 9, &d, 0, 0);
  cr_assert_eq(r.levels, 1);
  cr_assert_eq(r.coarse_dofs, 64);
  cr_assert(r.converged && r.iterations == 1, "a direct solve takes %lld iterations",
            (long long)r.iterations);
}

/* The way a device backend runs multigrid (its kernel table has host = 0):
 * level operators by fea_operator_create instead of the host's stencil
 * shortcuts, CSR transfers instead of grid sweeps, Lanczos estimates and
 * the diagonal, the coarse solve and the caller's b and x through upload
 * and download. Played here by the host loops with host = 0: the same
 * iteration counts (within one: Lanczos's lambda_max against the stencil's
 * exact one) and the same solution as the host's own path. */
static void check_device_path(const char *name, int dim, fea_index n, const fea_multigrid_desc *d) {
  static fea_mg_kernels emulated;
  emulated = fea_mg_host_kernels;
  emulated.host = 0;
  run_kernels = NULL;
  run_result h = run(dim, 0, n, d, 1, 0);
  run_kernels = &emulated;
  run_result e = run(dim, 0, n, d, 1, 0);
  run_kernels = NULL;
  cr_log_info("%s (%s) n=%lld: host path %lld iterations, device path %lld", name,
              kind_name(d->operator_kind), (long long)n, (long long)h.iterations,
              (long long)e.iterations);
  cr_assert(e.converged, "%s: the device path did not converge", name);
  cr_assert(llabs((long long)(h.iterations - e.iterations)) <= 1,
            "%s n=%lld: %lld iterations on the host path, %lld on the device path", name,
            (long long)n, (long long)h.iterations, (long long)e.iterations);
  fixture x;
  fixture_make(&x, dim, 0, n);
  double num = 0, den = 0;
  for (fea_index i = 0; i < x.nf; i++)
    num += (h.u[i] - e.u[i]) * (h.u[i] - e.u[i]), den += h.u[i] * h.u[i];
  cr_assert(sqrt(num / den) <= 1e-7, "%s: the two paths' solutions differ by %g", name,
            sqrt(num / den));
  fixture_free(&x);
  free(h.u), free(e.u);
}

Test(multigrid, device_path_matches_host_path, .timeout = 150) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER; /* the paper's: CSR, Richardson 0.3 */
  check_device_path("paper Q1 2D", 2, 64, &d);
  d.operator_kind = FEA_OPERATOR_MATFREE_SUMFACT;
  d.cycle = FEA_MG_CYCLE_W;
  check_device_path("W sumfact Q1 2D", 2, 64, &d);
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_PAPER;
  d.operator_kind = FEA_OPERATOR_MATFREE_SUMFACT;
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.pre_smooth = d.post_smooth = 3;
  d.krylov = 1;
  check_device_path("Chebyshev(3) PCG sumfact Q1 3D", 3, 16, &d);
  d.krylov = 0;
  d.coarsest_cells = 4;
  d.operator_kind = FEA_OPERATOR_CSR;
  check_device_path("Chebyshev(3) dense coarsest Q1 3D", 3, 16, &d);
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_PAPER;
  d.jacobi = 1;
  d.omega = 0.6;
  d.operator_kind = FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
  check_device_path("Jacobi-Richardson element-matrix Q1 2D", 2, 32, &d);
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_PAPER;
  d.operator_kind = FEA_OPERATOR_MATFREE_SUMFACT;
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.pre_smooth = d.post_smooth = 3;
  d.krylov = 1;
  fixture_order = 2;
  check_device_path("Chebyshev(3) PCG sumfact Q2 3D", 3, 8, &d);
  fixture_order = 1;
}

/* p-multigrid: Q_p on the finest level, Q1 on the same mesh next, then the
 * meshes; Chebyshev(3)-PCG, the usual high-order configuration. */
static void check_p_multigrid(int dim, int order, const fea_index *ns, int count,
                              fea_operator_kind kind) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.pre_smooth = d.post_smooth = 3;
  d.krylov = 1;
  d.operator_kind = kind;
  char name[64];
  snprintf(name, sizeof name, "p-multigrid Q%d %dD", order, dim);
  fixture_order = order;
  check_h_independent(name, dim, 0, ns, count, &d, 2, NULL);
  fixture_order = 1;
}

Test(multigrid, p_multigrid_h_independent, .timeout = 150) {
  check_p_multigrid(2, 2, sizes2d, 4, FEA_OPERATOR_CSR);
  check_p_multigrid(2, 3, sizes2d, 3, FEA_OPERATOR_MATFREE_SUMFACT);
  check_p_multigrid(3, 2, sizes3d, 3, FEA_OPERATOR_MATFREE_SUMFACT);
}

/* Q2 multigrid-PCG to 1e-12 reaches the discrete solution (CG to 1e-13),
 * with one level more than Q1 on the same mesh. */
Test(multigrid, p_multigrid_equals_direct_solve) {
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  d.smoother = FEA_MG_SMOOTHER_CHEBYSHEV;
  d.pre_smooth = d.post_smooth = 3;
  d.krylov = 1;
  d.rtol = 1e-12;
  fixture_order = 2;
  run_result r = run(2, 0, 32, &d, 1, 1);
  double l2;
  double *ref = direct_solution(2, 0, 32, &l2);
  fixture x;
  fixture_make(&x, 2, 0, 32);
  fixture_order = 1;
  double e = 0, s2 = 0;
  for (fea_index i = 0; i < x.nf; i++)
    e += (r.u[i] - ref[i]) * (r.u[i] - ref[i]), s2 += ref[i] * ref[i];
  cr_log_info("Q2 2D n=32: %d levels, %lld iterations, L2 error %.3e (CG: %.3e)", r.levels,
              (long long)r.iterations, r.l2, l2);
  cr_assert(sqrt(e / s2) <= 1e-9, "Q2 multigrid and CG differ by %g", sqrt(e / s2));
  cr_assert_eq(r.levels, 7, "Q2 on 32 x 32: Q2, then Q1 on 32 .. 1 cells");
  cr_assert(r.l2 < 1e-5, "Q2's L2 error %g", r.l2);
  fixture_free(&x);
  free(ref);
  free(r.u);
}

/* ---- refusals ---------------------------------------------------------------------------------- */

static void expect_refusal(const fea_problem *pb, const fea_multigrid_desc *d, fea_status code,
                           const char *w1, const char *w2) {
  fea_mg *mg = (fea_mg *)(uintptr_t)1;
  fea_status st = fea_mg_create(ctx, pb, d, &mg);
  const char *msg = fea_context_last_error(ctx);
  cr_assert_eq(st, code, "expected %s, got %s: %s", fea_status_string(code), fea_status_string(st),
               msg);
  cr_assert_null(mg);
  cr_assert(strstr(msg, w1), "message '%s' does not name '%s'", msg, w1);
  cr_assert(!w2 || strstr(msg, w2), "message '%s' does not name '%s'", msg, w2);
}

Test(multigrid, unstable_omega_refused) {
  fixture x;
  fixture_make(&x, 2, 1, 16);
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER; /* omega 0.3, lambda_max(A) = 8 */
  expect_refusal(x.pb, &d, FEA_ERR_INVALID_ARG, "omega = 0.3", "lambda_max");
  d.jacobi = 1;
  d.omega = 1.5; /* lambda_max(D^-1 A) ~ 2 */
  expect_refusal(x.pb, &d, FEA_ERR_INVALID_ARG, "omega = 1.5", "lambda_max");
  fixture_free(&x);
  /* 3D Q1: lambda_max(A) ~ h, so omega = 0.3 is stable on coarse levels only. */
  fixture_make(&x, 3, 0, 16);
  d = (fea_multigrid_desc)FEA_MULTIGRID_DESC_PAPER;
  d.omega = 20;
  expect_refusal(x.pb, &d, FEA_ERR_INVALID_ARG, "omega = 20", "lambda_max");
  fixture_free(&x);
}

Test(multigrid, bad_options_refused) {
  fixture x;
  fixture_make(&x, 2, 0, 8);
  const fea_multigrid_desc def = FEA_MULTIGRID_DESC_INIT; /* and the paper's below */
  fea_multigrid_desc d;
#define BAD(field, value, word)                                \
  do {                                                         \
    d = def;                                                   \
    d.field = value;                                           \
    expect_refusal(x.pb, &d, FEA_ERR_INVALID_ARG, word, NULL); \
  } while (0)
  BAD(cycle, (fea_mg_cycle)2, "cycle is 2");
  BAD(smoother, (fea_mg_smoother)-1, "smoother is -1");
  BAD(omega, 0.0, "omega is 0");
  BAD(omega, -0.3, "omega is -0.3");
  BAD(omega, NAN, "omega is nan");
  BAD(omega, INFINITY, "omega is inf");
  BAD(jacobi, 2, "jacobi is 2");
  BAD(pre_smooth, -1, "pre_smooth is -1");
  BAD(post_smooth, -2, "post_smooth -2");
  BAD(chebyshev_range, 1.0, "chebyshev_range is 1");
  BAD(chebyshev_range, NAN, "chebyshev_range is nan");
  BAD(operator_kind, (fea_operator_kind)3, "operator_kind is 3");
  BAD(strategy, (fea_update_strategy)99, "strategy is 99");
  BAD(krylov, 2, "krylov is 2");
  BAD(rtol, -1e-3, "rtol is -0.001");
  BAD(atol, -1.0, "atol is -1");
  BAD(atol, NAN, "atol is nan");
  BAD(max_iterations, -1, "max_iterations is -1");
  BAD(coarsest_cells, 0, "coarsest_cells is 0");
#undef BAD
  d = def;
  d.pre_smooth = d.post_smooth = 0;
  expect_refusal(x.pb, &d, FEA_ERR_INVALID_ARG, "pre_smooth is 0", "post_smooth 0");
  fixture_free(&x);
}

Test(multigrid, unsupported_spaces_refused) {
  const fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_problem *pb;
  /* B-splines in 1D (2D and 3D patches are served: tests/api/test-multigrid-bspline.c). */
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 1;
  bd.degree[0] = 2;
  bd.n[0] = 8;
  fea_space *s;
  OK(fea_space_create_bspline(ctx, &bd, &s));
  OK(fea_problem_create_poisson(s, &pd, &pb));
  expect_refusal(pb, &d, FEA_ERR_UNSUPPORTED, "2D and 3D patches", NULL);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  /* P2 on a structured triangle mesh (Q2 on quadrilaterals is served, but
   * not with the default unscaled Richardson). */
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.n[0] = md.n[1] = 8;
  md.simplices = 1;
  fea_mesh *m, *fine;
  OK(fea_mesh_create_structured(ctx, &md, &m));
  OK(fea_space_create_lagrange(m, 2, FEA_NODES_EQUISPACED, &s));
  OK(fea_problem_create_poisson(s, &pd, &pb));
  expect_refusal(pb, &d, FEA_ERR_UNSUPPORTED, "P2", "simplices");
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
  md.simplices = 0;
  OK(fea_mesh_create_structured(ctx, &md, &m));
  OK(fea_space_create_lagrange(m, 2, FEA_NODES_EQUISPACED, &s));
  OK(fea_problem_create_poisson(s, &pd, &pb));
  expect_refusal(pb, &d, FEA_ERR_INVALID_ARG, "omega = 0.3", "Chebyshev");
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  /* A refined (unstructured) mesh. */
  OK(fea_mesh_refine_uniform(m, &fine));
  OK(fea_space_create_lagrange(fine, 1, FEA_NODES_EQUISPACED, &s));
  OK(fea_problem_create_poisson(s, &pd, &pb));
  expect_refusal(pb, &d, FEA_ERR_UNSUPPORTED, "structured", "quad");
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&fine);
  fea_mesh_destroy(&m);
  /* 1D. */
  md.dim = 1;
  OK(fea_mesh_create_structured(ctx, &md, &m));
  OK(fea_space_create_lagrange(m, 1, FEA_NODES_EQUISPACED, &s));
  OK(fea_problem_create_poisson(s, &pd, &pb));
  expect_refusal(pb, &d, FEA_ERR_UNSUPPORTED, "1D", NULL);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
  /* No free DoF. */
  md.dim = 2;
  md.n[0] = md.n[1] = 1;
  OK(fea_mesh_create_structured(ctx, &md, &m));
  OK(fea_space_create_lagrange(m, 1, FEA_NODES_EQUISPACED, &s));
  OK(fea_problem_create_poisson(s, &pd, &pb));
  expect_refusal(pb, &d, FEA_ERR_INVALID_ARG, "no free DoFs", NULL);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
}

/* The caller's problem may go first; a second solve from the solution takes
 * no cycle; the threads backend gives the same counts (its own suite: a
 * process that ran /cpu/ref first makes OpenBLAS's and OpenMP's thread pools
 * spin against each other on a small machine, which only costs time). */
static fea_index solve_after_destroy(fea_context *c) {
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.n[0] = md.n[1] = 128;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = exact_f;
  pd.source_user = &dims[2];
  fea_mesh *m;
  fea_space *s;
  fea_problem *pb;
  OK(fea_mesh_create_structured(c, &md, &m));
  OK(fea_space_create_lagrange(m, 1, FEA_NODES_EQUISPACED, &s));
  OK(fea_problem_create_poisson(s, &pd, &pb));
  const fea_multigrid_desc d = FEA_MULTIGRID_DESC_PAPER;
  fea_mg *mg;
  OK(fea_mg_create(c, pb, &d, &mg));
  fea_index nf = pb->num_free;
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
  double *b = malloc((size_t)nf * sizeof *b), *u = calloc((size_t)nf, sizeof *u);
  cr_assert(b && u);
  OK(fea_mg_get_rhs(mg, b));
  OK(fea_mg_solve(mg, b, u));
  fea_multigrid_stats st;
  fea_mg_get_stats(mg, &st);
  const fea_index iterations = st.iterations;
  cr_assert(st.memory_bytes > 0 && st.setup_s >= 0 && st.solve_s >= 0);
  cr_assert(st.converged && st.final_residual <= 1e-10 * st.initial_residual * (1 + 1e-12));
  cr_assert(st.convergence_factor > 0 && st.convergence_factor < 0.1, "factor %g",
            st.convergence_factor);
  OK(fea_mg_solve(mg, b, u));
  fea_mg_get_stats(mg, &st);
  cr_assert_eq(st.iterations, 0, "restart from the solution took %lld iterations",
               (long long)st.iterations);
  free(b), free(u);
  fea_mg_destroy(&mg);
  return iterations;
}

static fea_index ref_iterations = 7; /* measured on /cpu/ref by problem_destroyed_first */

Test(multigrid, problem_destroyed_first) { cr_assert_eq(solve_after_destroy(ctx), ref_iterations); }

Test(multigrid_threads, same_counts_as_ref) {
  fea_context *tctx;
  OK(fea_context_create("/cpu/threads", &tctx));
  const fea_index it = solve_after_destroy(tctx);
  cr_assert(llabs((long long)(it - ref_iterations)) <= 1,
            "%lld iterations on /cpu/threads, %lld on /cpu/ref", (long long)it,
            (long long)ref_iterations);
  OK(fea_context_destroy(&tctx));
}
