/* CSR output of the reference assembly: Matrix Market files read back equal,
 * the product agrees with a dense product, and I/O errors name the path. */
#include <stdio.h>
#include <unistd.h>

#include "solve-common.h"

static fea_matrix *assemble(fea_context *ctx, fea_space **s, fea_problem **pb, double **b) {
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.degree[0] = d.degree[1] = 2;
  d.n[0] = 4;
  d.n[1] = 3;
  cr_assert_eq(fea_space_create_bspline(ctx, &d, s), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  cr_assert_eq(fea_problem_create_poisson(*s, &pd, pb), FEA_SUCCESS);
  fea_index nf = 0;
  cr_assert_eq(fea_problem_get_num_free_dofs(*pb, &nf), FEA_SUCCESS);
  cr_assert_eq(nf, 4 * 3, "free DoFs of (4+2) x (3+2) B-splines without the boundary ring");
  *b = calloc((size_t)nf, sizeof **b);
  fea_matrix *A = NULL;
  cr_assert_eq(fea_problem_assemble_reference(*pb, *b, &A), FEA_SUCCESS);
  return A;
}

Test(matrix, matrix_market_round_trip) {
  fea_context *ctx = NULL;
  cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS);
  fea_space *s = NULL;
  fea_problem *pb = NULL;
  double *b = NULL;
  fea_matrix *A = assemble(ctx, &s, &pb, &b);
  fea_index n = 0, nnz = 0;
  cr_assert_eq(fea_matrix_get_size(A, &n, NULL, &nnz), FEA_SUCCESS);
  fea_index rp[13], ci[200];
  double v[200];
  cr_assert(nnz <= 200);
  cr_assert_eq(fea_matrix_get_csr(A, rp, ci, v), FEA_SUCCESS);

  char path[] = "/tmp/fea-mtx-XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  cr_assert_eq(fea_matrix_write_mtx(A, path), FEA_SUCCESS);
  FILE *f = fopen(path, "r");
  char line[256];
  cr_assert(fgets(line, sizeof line, f));
  cr_expect_str_eq(line, "%%MatrixMarket matrix coordinate real general\n");
  do cr_assert(fgets(line, sizeof line, f));
  while (line[0] == '%');
  long long r, c, z;
  cr_assert_eq(sscanf(line, "%lld %lld %lld", &r, &c, &z), 3);
  cr_expect(r == n && c == n && z == nnz);
  for (fea_index i = 0; i < n; i++)
    for (fea_index k = rp[i]; k < rp[i + 1]; k++) {
      double val;
      cr_assert_eq(fscanf(f, "%lld %lld %lf", &r, &c, &val), 3);
      cr_expect(r == i + 1 && c == ci[k] + 1 && val == v[k], "entry %lld differs", (long long)k);
    }
  fclose(f);

  cr_assert_eq(fea_array_write_mtx(ctx, n, b, path), FEA_SUCCESS);
  f = fopen(path, "r");
  cr_assert(fgets(line, sizeof line, f));
  cr_expect_str_eq(line, "%%MatrixMarket matrix array real general\n");
  fclose(f);
  remove(path);

  /* y = A x against the dense product from the CSR arrays. */
  double x[12], y[12];
  for (int i = 0; i < 12; i++) x[i] = sin(i + 1.0);
  cr_assert_eq(fea_matrix_multiply(A, x, y), FEA_SUCCESS);
  for (fea_index i = 0; i < n; i++) {
    double want = 0;
    for (fea_index k = rp[i]; k < rp[i + 1]; k++) want += v[k] * x[ci[k]];
    cr_expect(fabs(y[i] - want) <= 1e-14 * (1 + fabs(want)));
    for (fea_index k = rp[i]; k + 1 < rp[i + 1]; k++)
      cr_expect(ci[k] < ci[k + 1], "columns not sorted");
  }
  cr_expect_eq(fea_matrix_multiply(A, x, x), FEA_ERR_INVALID_ARG);
  cr_expect_eq(fea_matrix_write_mtx(A, "/nonexistent-dir/A.mtx"), FEA_ERR_IO);
  cr_expect(strstr(fea_context_last_error(NULL), "/nonexistent-dir/A.mtx") != NULL);
  fea_matrix_destroy(&A);
  cr_expect_null(A);
  free(b);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}
