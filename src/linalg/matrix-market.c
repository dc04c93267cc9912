/* Matrix Market output: a CSR matrix as a coordinate file, an array as a
 * dense column, with 17 significant digits (the doubles round-trip). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal/error.h"
#include "matrix.h"

static fea_status open_for_writing(const fea_context *ctx, const char *path, FILE **f) {
  *f = fopen(path, "w");
  FEA_CHECK(*f, ctx, FEA_ERR_IO, "cannot open '%s' for writing: %s", path, strerror(errno));
  return FEA_SUCCESS;
}

static fea_status close_written(const fea_context *ctx, const char *path, FILE *f,
                                int write_failed) {
  int close_failed = fclose(f) != 0;
  FEA_CHECK(!write_failed && !close_failed, ctx, FEA_ERR_IO, "writing '%s' failed: %s", path,
            strerror(errno));
  return FEA_SUCCESS;
}

fea_status fea_matrix_market_write(const fea_matrix *A, const char *path) {
  FILE *f;
  FEA_CALL(open_for_writing(A->ctx, path, &f));
  int bad = fprintf(f,
                    "%%%%MatrixMarket matrix coordinate real general\n"
                    "%% written by libfeaccel; 1-based indices\n%lld %lld %lld\n",
                    (long long)A->rows, (long long)A->cols, (long long)A->nnz) < 0;
  for (fea_index i = 0; i < A->rows && !bad; i++)
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1] && !bad; k++)
      bad = fprintf(f, "%lld %lld %.17g\n", (long long)i + 1, (long long)A->col_idx[k] + 1,
                    A->values[k]) < 0;
  return close_written(A->ctx, path, f, bad);
}

fea_status fea_matrix_market_write_array(fea_context *ctx, fea_index n, const double *values,
                                         const char *path) {
  FILE *f;
  FEA_CALL(open_for_writing(ctx, path, &f));
  int bad = fprintf(f, "%%%%MatrixMarket matrix array real general\n%lld 1\n", (long long)n) < 0;
  for (fea_index i = 0; i < n && !bad; i++) bad = fprintf(f, "%.17g\n", values[i]) < 0;
  return close_written(ctx, path, f, bad);
}
