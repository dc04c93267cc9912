/* fea_operator_estimate_eigenvalues against LAPACK's dense symmetric
 * eigen-solve of the assembled matrix (and of D^-1/2 A D^-1/2), for the CSR
 * and matrix-free kinds: with as many Lanczos steps as unknowns the extremes
 * are exact up to round-off; with fewer they approach from inside. */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <feaccel.h>
#include <feaccel/operator.h>

static void dense_extremes(const fea_matrix *A, int jacobi, double *lmin, double *lmax) {
  fea_index n = 0, nnz = 0;
  cr_assert_eq(fea_matrix_get_size(A, &n, NULL, &nnz), FEA_SUCCESS);
  cr_assert(n > 0 && n < 4096 && nnz > 0);
  fea_index *rp = malloc((size_t)(n + 1) * sizeof *rp), *ci = malloc((size_t)nnz * sizeof *ci);
  double *v = malloc((size_t)nnz * sizeof *v), *d = calloc((size_t)(n * n), sizeof *d);
  double *w = malloc((size_t)n * sizeof *w), *diag = malloc((size_t)n * sizeof *diag);
  cr_assert_eq(fea_matrix_get_csr(A, rp, ci, v), FEA_SUCCESS);
  for (fea_index i = 0; i < n; i++)
    for (fea_index k = rp[i]; k < rp[i + 1]; k++) {
      d[i + ci[k] * n] = v[k];
      if (ci[k] == i) diag[i] = v[k];
    }
  if (jacobi)
    for (fea_index j = 0; j < n; j++)
      for (fea_index i = 0; i < n; i++) d[i + j * n] /= sqrt(diag[i] * diag[j]);
  cr_assert_eq(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', (lapack_int)n, d, (lapack_int)n, w), 0);
  *lmin = w[0];
  *lmax = w[n - 1];
  free(rp), free(ci), free(v), free(d), free(w), free(diag);
}

static void check_kind(fea_operator_kind kind, int p1, int order) {
  fea_context *ctx = NULL;
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_operator *op = NULL;
  fea_matrix *A = NULL;
  cr_assert_eq(fea_context_create("/cpu/threads", &ctx), FEA_SUCCESS);
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = 9;
  md.n[1] = 7;
  md.upper[0] = 2.0;
  md.simplices = p1;
  cr_assert_eq(fea_mesh_create_structured(ctx, &md, &mesh), FEA_SUCCESS);
  cr_assert_eq(fea_space_create_lagrange(mesh, order, FEA_NODES_EQUISPACED, &space), FEA_SUCCESS);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  cr_assert_eq(fea_problem_create_poisson(space, &pd, &pb), FEA_SUCCESS);
  fea_index nf = 0;
  cr_assert_eq(fea_problem_get_num_free_dofs(pb, &nf), FEA_SUCCESS);
  double *b = malloc((size_t)nf * sizeof *b);
  cr_assert_eq(fea_problem_assemble_reference(pb, b, &A), FEA_SUCCESS);
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = kind;
  cr_assert_eq(fea_operator_create(ctx, pb, &od, &op), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  for (int jacobi = 0; jacobi <= 1; jacobi++) {
    double dmin, dmax, lmin, lmax;
    dense_extremes(A, jacobi, &dmin, &dmax);
    /* Full Krylov space: exact. */
    cr_assert_eq(fea_operator_estimate_eigenvalues(op, (int)(nf < 1000 ? nf : 1000), jacobi, &lmin,
                                                   &lmax),
                 FEA_SUCCESS, "%s", fea_context_last_error(ctx));
    cr_log_info("kind %d P%d order %d jacobi %d: [%.10g, %.10g] vs LAPACK [%.10g, %.10g]",
                (int)kind, p1, order, jacobi, lmin, lmax, dmin, dmax);
    cr_expect(fabs(lmin - dmin) <= 1e-9 * dmax && fabs(lmax - dmax) <= 1e-9 * dmax,
              "full Lanczos [%.12g, %.12g], LAPACK [%.12g, %.12g]", lmin, lmax, dmin, dmax);
    /* Few steps: inside the spectrum. */
    cr_assert_eq(fea_operator_estimate_eigenvalues(op, 8, jacobi, &lmin, &lmax), FEA_SUCCESS);
    cr_expect(lmin >= dmin * (1 - 1e-12) && lmax <= dmax * (1 + 1e-12) && lmin <= lmax,
              "8 steps give [%g, %g] outside [%g, %g]", lmin, lmax, dmin, dmax);
  }
  /* Bad input names the value and changes nothing. */
  double lmin = -7, lmax = -7;
  cr_expect_eq(fea_operator_estimate_eigenvalues(op, 1, 0, &lmin, &lmax), FEA_ERR_INVALID_ARG);
  cr_expect(strstr(fea_context_last_error(ctx), "steps = 1") != NULL);
  cr_expect_eq(fea_operator_estimate_eigenvalues(op, 10, 2, &lmin, &lmax), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_operator_estimate_eigenvalues(op, 10, 0, NULL, &lmax), FEA_ERR_INVALID_ARG);
  cr_expect(lmin == -7 && lmax == -7);
  free(b);
  fea_matrix_destroy(&A);
  fea_operator_destroy(&op);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
}

Test(eigenvalues, csr_q1) { check_kind(FEA_OPERATOR_CSR, 0, 1); }
Test(eigenvalues, sumfact_q2) { check_kind(FEA_OPERATOR_MATFREE_SUMFACT, 0, 2); }
Test(eigenvalues, element_matrix_p1) { check_kind(FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, 1, 1); }
