/* The user's own element form (fea_problem_desc.element_form): a callback
 * that writes the element matrix and load from the basis values the library
 * hands it. Written here to compute what the built-in form computes (with a
 * reaction term), it must give the same assembled system and the same
 * multifrontal solution as the built-in form, on a mapped patch with
 * Neumann and Robin sides (which still apply). Bad results from the
 * callback are refused naming the element. */
#include "api-common.h"
#include "ring-common.h"
#include "solve-common.h"

#include <feaccel/operator.h>

typedef struct form_data {
  double c; /* reaction */
  int mode; /* 0: the form; 1: asymmetric; 2: NaN load; 3: returns an error */
} form_data;

static double load(const double *x, void *user) {
  (void)user;
  return cos(x[0]) + x[1] * x[1];
}

static double g_bc(const double *x, void *user) {
  (void)user;
  return x[0] - 0.5 * x[1];
}

static double h_bc(const double *x, void *user) {
  (void)user;
  return sin(x[1]);
}

/* grad phi_i . grad phi_j + c phi_i phi_j, and f phi_i: the built-in form. */
static fea_status my_form(const fea_element_data *e, double *Ke, double *fe, void *user) {
  const form_data *fd = user;
  if (fd->mode == 3) return FEA_ERR_INVALID_ARG;
  for (int q = 0; q < e->nq; q++) {
    const double w = e->w[q], *phi = e->phi + (size_t)q * e->nb;
    const double *g = e->dphi + (size_t)q * e->nb * e->dim, f = load(e->x + q * e->dim, NULL);
    for (int i = 0; i < e->nb; i++) {
      fe[i] += w * f * phi[i];
      for (int j = 0; j < e->nb; j++) {
        double s = 0;
        for (int k = 0; k < e->dim; k++) s += g[i * e->dim + k] * g[j * e->dim + k];
        Ke[i * e->nb + j] += w * (s + fd->c * phi[i] * phi[j]);
      }
    }
  }
  if (fd->mode == 1) Ke[1] += 1.0;
  if (fd->mode == 2) fe[0] = NAN;
  return FEA_SUCCESS;
}

static fea_problem *problem(fea_space *s, const form_data *fd, int user) {
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.dirichlet = g_bc;
  pd.sides[FEA_SIDE_WEST].type = FEA_BC_NEUMANN;
  pd.sides[FEA_SIDE_WEST].flux = h_bc;
  pd.sides[FEA_SIDE_EAST].type = FEA_BC_ROBIN;
  pd.sides[FEA_SIDE_EAST].alpha = 2.0;
  pd.sides[FEA_SIDE_EAST].flux = h_bc;
  if (user) {
    pd.element_form = my_form;
    pd.element_form_user = (void *)fd;
  } else {
    pd.source = load;
    pd.reaction = fd->c;
  }
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(s, &pd, &pb));
  return pb;
}

static fea_space *annulus(fea_context *ctx, ring *q) {
  ring_init(q, 2, 1.0);
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.degree[0] = d.degree[1] = 3;
  d.n[0] = d.n[1] = 6;
  d.geometry = &q->g;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  return s;
}

Test(element_form, equals_the_built_in_form) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  ring q;
  fea_space *s = annulus(ctx, &q);
  const form_data fd = {0.75, 0};
  fea_problem *pb[2] = {problem(s, &fd, 0), problem(s, &fd, 1)};
  fea_index n = 0, nnz[2] = {0, 0};
  OK(fea_problem_get_num_free_dofs(pb[0], &n));
  double *b[2], *v[2], *u[2];
  fea_matrix *A[2];
  for (int k = 0; k < 2; k++) {
    b[k] = malloc((size_t)n * sizeof *b[k]);
    OK(fea_problem_assemble_reference(pb[k], b[k], &A[k]));
    OK(fea_matrix_get_size(A[k], NULL, NULL, &nnz[k]));
    fea_index *rp = malloc((size_t)(n + 1) * sizeof *rp), *ci = malloc((size_t)nnz[k] * 8);
    v[k] = malloc((size_t)nnz[k] * sizeof *v[k]);
    OK(fea_matrix_get_csr(A[k], rp, ci, v[k]));
    free(rp);
    free(ci);
    u[k] = solve_direct(ctx, s, pb[k]);
  }
  cr_assert_eq(nnz[0], nnz[1]);
  double dA = 0, sA = 0, db = 0, sb = 0, du = 0, su = 0;
  for (fea_index i = 0; i < nnz[0]; i++) {
    dA = fmax(dA, fabs(v[0][i] - v[1][i]));
    sA = fmax(sA, fabs(v[0][i]));
  }
  for (fea_index i = 0; i < n; i++) {
    db = fmax(db, fabs(b[0][i] - b[1][i]));
    sb = fmax(sb, fabs(b[0][i]));
  }
  for (int i = 0; i < 81; i++) {
    du = fmax(du, fabs(u[0][i] - u[1][i]));
    su = fmax(su, fabs(u[0][i]));
  }
  cr_assert(dA <= 1e-14 * sA, "matrices differ by %.3g (max %.3g)", dA, sA);
  cr_assert(db <= 1e-14 * sb, "loads differ by %.3g (max %.3g)", db, sb);
  cr_assert(du <= 1e-12 * su, "solutions differ by %.3g (max %.3g)", du, su);
  /* The sum-factorization kind falls back to element matrices. */
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_MATFREE_SUMFACT;
  fea_operator *op = NULL;
  OK(fea_operator_create(ctx, pb[1], &od, &op));
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  OK(fea_operator_get_info(op, &info));
  cr_assert_eq(info.kind_run, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, "%s", info.kernel);
  fea_operator_destroy(&op);
  for (int k = 0; k < 2; k++) {
    free(b[k]);
    free(v[k]);
    free(u[k]);
    fea_matrix_destroy(&A[k]);
    OK(fea_problem_destroy(&pb[k]));
  }
  OK(fea_space_destroy(&s));
  OK(fea_context_destroy(&ctx));
}

/* ---- A form with its own mass term and no Dirichlet or Robin side --------
 * The library cannot see inside a user's form, so the check "no Dirichlet
 * or Robin side and c = 0" must not read desc.reaction (which the form
 * replaces): grad u . grad v + u v with every side Neumann is well posed.
 * Oracle: the same problem posed with reaction = 1 and no form; both
 * reference systems solved by LAPACK's Cholesky (which fails on a singular
 * matrix) give the same coefficients. */

/* Every side of a dim-dimensional space Neumann (h = sin y); the form, or
 * the built-in -Laplace u + c u = load. */
static fea_problem *natural_problem(fea_space *s, int dim, const form_data *fd, int user) {
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  for (int side = 0; side < 2 * dim; side++) {
    pd.sides[side].type = FEA_BC_NEUMANN;
    pd.sides[side].flux = h_bc;
  }
  if (user) {
    pd.element_form = my_form;
    pd.element_form_user = (void *)fd;
  } else {
    pd.source = load;
    pd.reaction = fd->c;
  }
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(s, &pd, &pb));
  return pb;
}

/* Every coefficient of pb's solution: reference system, LAPACK, expansion. */
static double *reference_solution(fea_problem *pb, fea_index num_dofs) {
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  double *b = malloc((size_t)(nf + 1) * sizeof *b), *u = malloc((size_t)num_dofs * sizeof *u);
  fea_matrix *A = NULL;
  OK(fea_problem_assemble_reference(pb, b, &A));
  lapack_solve_csr(A, b);
  OK(fea_problem_expand_solution(pb, b, u));
  fea_matrix_destroy(&A);
  free(b);
  return u;
}

static void own_mass_term_matches_reaction(fea_space *s, int dim) {
  const form_data fd = {1.0, 0};
  fea_problem *pb[2] = {natural_problem(s, dim, &fd, 0), natural_problem(s, dim, &fd, 1)};
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb[1], &nf));
  cr_assert_eq(nf, info.num_dofs, "every DoF is free without a Dirichlet side");
  double *u[2] = {reference_solution(pb[0], info.num_dofs),
                  reference_solution(pb[1], info.num_dofs)};
  double du = 0, su = 0;
  for (fea_index i = 0; i < info.num_dofs; i++) {
    du = fmax(du, fabs(u[0][i] - u[1][i]));
    su = fmax(su, fabs(u[0][i]));
  }
  cr_assert(su > 0.1 && du <= 1e-12 * su, "form and reaction = 1 differ by %.3g (max %.3g)", du,
            su);
  for (int k = 0; k < 2; k++) {
    free(u[k]);
    OK(fea_problem_destroy(&pb[k]));
  }
}

Test(element_form, own_mass_term_without_anchoring_side) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  ring q;
  fea_space *s = annulus(ctx, &q); /* B-spline patch: its sides */
  own_mass_term_matches_reaction(s, 2);
  OK(fea_space_destroy(&s));
  /* A Lagrange space on a structured mesh: its sides, classified per facet. */
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.n[0] = 4, md.n[1] = 3;
  fea_mesh *m = NULL;
  OK(fea_mesh_create_structured(ctx, &md, &m));
  OK(fea_space_create_lagrange(m, 2, FEA_NODES_GAUSS_LOBATTO, &s));
  own_mass_term_matches_reaction(s, 2);
  OK(fea_space_destroy(&s));
  OK(fea_mesh_destroy(&m));
  OK(fea_context_destroy(&ctx));
}

/* ---- end of the block ---------------------------------------------------- */

Test(element_form_errors, bad_results_are_named) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  ring q;
  fea_space *s = annulus(ctx, &q);
  double Ke[256], fe[16];
  static const char *const want[4] = {
      "", "the user's element form gave an asymmetric Ke for element 3: Ke[1][0]",
      "the user's element form gave fe[0] = nan for element 3",
      "the user's element form returned FEA_ERR_INVALID_ARG for element 3"};
  for (int mode = 1; mode <= 3; mode++) {
    const form_data fd = {0.0, mode};
    fea_problem *pb = problem(s, &fd, 1);
    EXPECT_FAIL(fea_problem_element_system(pb, 3, Ke, fe), FEA_ERR_INVALID_ARG, ctx, want[mode]);
    OK(fea_problem_destroy(&pb));
  }
  OK(fea_space_destroy(&s));
  OK(fea_context_destroy(&ctx));
}

/* ---- statuses a form returns that are not fea_status errors ------------------ */

/* Returns the status its user data holds, having written nothing. */
static fea_status status_form(const fea_element_data *e, double *Ke, double *fe, void *user) {
  (void)e, (void)Ke, (void)fe;
  return *(const fea_status *)user;
}

/* A value outside the enum (-999) or a non-error (a warning) is converted at
 * the boundary into FEA_ERR_INVALID_ARG naming the value and the element;
 * the library's own error codes pass through as the form returned them.
 * Before, -999 came back as is: a status no caller can name
 * (fea_status_string: "unknown status"). */
Test(element_form_errors, out_of_enum_status_is_converted) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  ring q;
  fea_space *s = annulus(ctx, &q);
  double Ke[256], fe[16];
  static const struct {
    int returned;
    fea_status want;
    const char *needle;
  } cases[] = {
      {-999, FEA_ERR_INVALID_ARG, "the user's element form returned -999, not a fea_status"},
      {-12, FEA_ERR_INVALID_ARG, "returned -12, not a fea_status"},
      {1000, FEA_ERR_INVALID_ARG, "returned 1000, not a fea_status"},
      {FEA_WARN_NOT_CONVERGED, FEA_ERR_INVALID_ARG, "returned FEA_WARN_NOT_CONVERGED"},
      {FEA_ERR_IO, FEA_ERR_IO, "returned FEA_ERR_IO for element "},
      {FEA_ERR_SINGULAR, FEA_ERR_SINGULAR, "returned FEA_ERR_SINGULAR"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    fea_status returned = (fea_status)cases[i].returned;
    fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
    pd.element_form = status_form;
    pd.element_form_user = &returned;
    fea_problem *pb = NULL;
    OK(fea_problem_create_poisson(s, &pd, &pb));
    EXPECT_FAIL(fea_problem_element_system(pb, 3, Ke, fe), cases[i].want, ctx, cases[i].needle);
    /* The same through an assembly, whose elements run on the context's path. */
    fea_index nf = 0;
    OK(fea_problem_get_num_free_dofs(pb, &nf));
    double *b = calloc((size_t)nf + 1, sizeof *b);
    fea_matrix *A = NULL;
    EXPECT_FAIL(fea_problem_assemble_reference(pb, b, &A), cases[i].want, ctx, cases[i].needle);
    cr_assert_null(A);
    free(b);
    OK(fea_problem_destroy(&pb));
  }
  OK(fea_space_destroy(&s));
  OK(fea_context_destroy(&ctx));
}
