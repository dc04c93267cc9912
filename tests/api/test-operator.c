/* Operators through the public API. Oracle: the reference system of
 * fea_problem_assemble_reference and fea_matrix_multiply (serial CSR).
 *
 * - every kind's apply equals the reference product to 1e-13 relative, for
 *   every family of the issue, on 1 and 4 threads; apply_add adds;
 * - every update strategy of the matrix-free scatter agrees with SERIAL;
 * - the diagonal equals the reference matrix's, the right-hand side its b;
 * - sum factorization runs where it is supported (once it is built) and
 *   falls back to element matrices, saying so, where it is not;
 * - bad input is refused with the offending value named. */
#include <stdio.h>

#include "api-common.h"
#include "operator-common.h"

static const fea_operator_kind kinds[] = {FEA_OPERATOR_CSR, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX,
                                          FEA_OPERATOR_MATFREE_SUMFACT};

static double *test_x(fea_index n) {
  double *x = malloc(((size_t)n + 1) * sizeof *x);
  for (fea_index i = 0; i < n; i++) x[i] = sin(0.37 * (double)i + 0.1) + 0.25;
  return x;
}

static fea_operator *make_op(const op_fixture *x, fea_operator_kind kind, fea_update_strategy s) {
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = kind;
  d.strategy = s;
  fea_operator *op = NULL;
  fea_status st = fea_operator_create(x->ctx, x->pb, &d, &op);
  cr_assert_eq(st, FEA_SUCCESS, "create kind %d strategy %d: %s", (int)kind, (int)s,
               fea_context_last_error(x->ctx));
  return op;
}

/* y = A x through the operator into a host array. y starts as NaN: apply
 * must overwrite every row, whatever it held before. */
static void apply_host(const op_fixture *x, fea_operator *op, const double *xin, double *y) {
  for (fea_index i = 0; i < x->nf; i++) y[i] = NAN;
  fea_vector *vx = op_vector(x, xin), *vy = op_vector(x, y);
  cr_assert_eq(fea_operator_apply(op, vx, vy), FEA_SUCCESS, "%s", fea_context_last_error(x->ctx));
  cr_assert_eq(fea_vector_read(vy, x->nf, FEA_F64, y), FEA_SUCCESS);
  fea_vector_destroy(&vx);
  fea_vector_destroy(&vy);
}

static void check_family(const op_family *f, int threads, fea_scalar_fn sigma) {
  op_fixture x;
  op_fixture_make(&x, threads > 1 ? "/cpu/threads" : "/cpu/ref", threads, f, sigma);
  double *xin = test_x(x.nf), *yref = calloc((size_t)x.nf + 1, sizeof *yref);
  double *y = calloc((size_t)x.nf + 1, sizeof *y);
  cr_assert_eq(fea_matrix_multiply(x.ref, xin, yref), FEA_SUCCESS);
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    fea_operator *op = make_op(&x, kinds[k], FEA_UPDATE_AUTO);
    fea_operator_info info = FEA_OPERATOR_INFO_INIT;
    cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
    cr_assert_eq(info.rows, x.nf);
    if (kinds[k] == FEA_OPERATOR_MATFREE_SUMFACT) {
      /* Supported: tensor-product cells (Lagrange boxes, B-splines). */
      int supported = !f->simplices && sigma == NULL;
      if (!op_sumfact_built(&info))
        cr_log_warn("%s: sum factorization not built; checked the fallback", f->name);
      else if (supported)
        cr_expect_eq(info.kind_run, FEA_OPERATOR_MATFREE_SUMFACT, "%s: sumfact fell back: %s",
                     f->name, info.kernel);
      if (info.kind_run != FEA_OPERATOR_MATFREE_SUMFACT)
        cr_expect(strstr(info.kernel, "fallback") != NULL, "%s: silent fallback: %s", f->name,
                  info.kernel);
    } else {
      cr_expect_eq(info.kind_run, kinds[k]);
    }
    apply_host(&x, op, xin, y);
    double rel = op_rel_diff(y, yref, x.nf);
    cr_expect(rel <= 1e-13, "%s, %d threads, kind %d (%s): |Ax - A_ref x| / |A_ref x| = %.3g",
              f->name, threads, (int)kinds[k], info.kernel, rel);
    fea_operator_destroy(&op);
  }
  free(xin);
  free(y);
  free(yref);
  op_fixture_free(&x);
}

Test(operator, every_kind_equals_reference_spmv_serial, .timeout = 300) {
  for (size_t i = 0; i < OP_NFAM; i++) check_family(&op_families[i], 1, NULL);
}

Test(operator, every_kind_equals_reference_spmv_threads, .timeout = 300) {
  for (size_t i = 0; i < OP_NFAM; i++) check_family(&op_families[i], 4, NULL);
}

Test(operator, variable_sigma_uses_per_element_matrices, .timeout = 120) {
  const op_family fams[] = {{"Q2 2D", 0, 2, 2, 0, 4},
                            {"P1 3D", 0, 3, 1, 1, 2},
                            {"B p3 2D", 1, 2, 3, 0, 5}};
  for (size_t i = 0; i < 3; i++) check_family(&fams[i], 2, op_sigma);
}

Test(operator, strategies_agree_with_serial, .timeout = 300) {
  const fea_update_strategy ss[] = {FEA_UPDATE_COLORING, FEA_UPDATE_ATOMIC_CAS, FEA_UPDATE_MUTEX,
                                    FEA_UPDATE_PRIVATE_BUFFERS, FEA_UPDATE_AUTO};
  const op_family fams[] = {{"Q2 2D", 0, 2, 2, 0, 9},
                            {"Q1 3D", 0, 3, 1, 0, 6},
                            {"P2 2D", 0, 2, 2, 1, 6},
                            {"B p3 3D", 1, 3, 3, 0, 4}};
  for (size_t i = 0; i < sizeof fams / sizeof *fams; i++)
    for (int mk = 1; mk <= 2; mk++) {
      op_fixture x;
      op_fixture_make(&x, "/cpu/threads", 4, &fams[i], NULL);
      double *xin = test_x(x.nf), *y0 = calloc((size_t)x.nf + 1, sizeof *y0);
      double *y = calloc((size_t)x.nf + 1, sizeof *y);
      fea_operator *op = make_op(&x, (fea_operator_kind)mk, FEA_UPDATE_SERIAL);
      apply_host(&x, op, xin, y0);
      fea_operator_destroy(&op);
      for (size_t k = 0; k < sizeof ss / sizeof *ss; k++) {
        op = make_op(&x, (fea_operator_kind)mk, ss[k]);
        fea_operator_info info = FEA_OPERATOR_INFO_INIT;
        cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
        if (ss[k] != FEA_UPDATE_AUTO)
          cr_expect_eq(info.strategy_run, ss[k]);
        else
          cr_expect_neq(info.strategy_run, FEA_UPDATE_AUTO);
        for (int rep = 0; rep < 2; rep++) { /* plans are reused across applications */
          apply_host(&x, op, xin, y);
          double rel = op_rel_diff(y, y0, x.nf);
          cr_expect(rel <= 1e-14, "%s kind %d strategy %s: %.3g from serial", fams[i].name, mk,
                    fea_update_strategy_name(info.strategy_run), rel);
          /* Not bit for bit even where the adds come in element order: an
           * element's y_e can round differently in another batch (GEMM
           * column blocking). */
        }
        fea_operator_destroy(&op);
      }
      free(xin);
      free(y0);
      free(y);
      op_fixture_free(&x);
    }
}

Test(operator, apply_add_adds) {
  op_fixture x;
  op_fixture_make(&x, "/cpu/threads", 2, &op_families[1], NULL);
  double *xin = test_x(x.nf), *yref = calloc((size_t)x.nf + 1, sizeof *yref);
  double *y = calloc((size_t)x.nf + 1, sizeof *y);
  cr_assert_eq(fea_matrix_multiply(x.ref, xin, yref), FEA_SUCCESS);
  for (size_t k = 0; k < 3; k++) {
    fea_operator *op = make_op(&x, kinds[k], FEA_UPDATE_AUTO);
    fea_vector *vx = op_vector(&x, xin), *vy = op_vector(&x, xin); /* y starts at x */
    cr_assert_eq(fea_operator_apply_add(op, vx, vy), FEA_SUCCESS);
    cr_assert_eq(fea_vector_read(vy, x.nf, FEA_F64, y), FEA_SUCCESS);
    for (fea_index i = 0; i < x.nf; i++) y[i] -= xin[i];
    cr_expect(op_rel_diff(y, yref, x.nf) <= 1e-13, "kind %d", (int)kinds[k]);
    fea_vector_destroy(&vx);
    fea_vector_destroy(&vy);
    fea_operator_destroy(&op);
  }
  free(xin);
  free(y);
  free(yref);
  op_fixture_free(&x);
}

Test(operator, diagonal_and_rhs_equal_reference, .timeout = 300) {
  for (size_t i = 0; i < OP_NFAM; i++) {
    op_fixture x;
    op_fixture_make(&x, "/cpu/ref", 1, &op_families[i], NULL);
    fea_index n = 0, nnz = 0;
    cr_assert_eq(fea_matrix_get_size(x.ref, &n, NULL, &nnz), FEA_SUCCESS);
    fea_index *rp = malloc((size_t)(n + 1) * sizeof *rp), *ci = malloc((size_t)nnz * sizeof *ci);
    double *v = malloc((size_t)nnz * sizeof *v), *dref = calloc((size_t)n + 1, sizeof *dref);
    double *d = calloc((size_t)n + 1, sizeof *d), *b = calloc((size_t)n + 1, sizeof *b);
    cr_assert_eq(fea_matrix_get_csr(x.ref, rp, ci, v), FEA_SUCCESS);
    for (fea_index r = 0; r < n; r++)
      for (fea_index k = rp[r]; k < rp[r + 1]; k++)
        if (ci[k] == r) dref[r] = v[k];
    for (size_t k = 0; k < 3; k++) {
      fea_operator *op = make_op(&x, kinds[k], FEA_UPDATE_AUTO);
      fea_vector *vd = op_vector(&x, NULL), *vb = op_vector(&x, NULL);
      cr_assert_eq(fea_operator_get_diagonal(op, vd), FEA_SUCCESS, "%s",
                   fea_context_last_error(x.ctx));
      cr_assert_eq(fea_operator_get_rhs(op, vb), FEA_SUCCESS);
      cr_assert_eq(fea_vector_read(vd, n, FEA_F64, d), FEA_SUCCESS);
      cr_assert_eq(fea_vector_read(vb, n, FEA_F64, b), FEA_SUCCESS);
      cr_expect(op_rel_diff(d, dref, n) <= 1e-13, "%s kind %d: diagonal off by %.3g",
                op_families[i].name, (int)kinds[k], op_rel_diff(d, dref, n));
      cr_expect(op_rel_diff(b, x.bref, n) <= 1e-13, "%s kind %d: rhs off by %.3g",
                op_families[i].name, (int)kinds[k], op_rel_diff(b, x.bref, n));
      fea_vector_destroy(&vd);
      fea_vector_destroy(&vb);
      fea_operator_destroy(&op);
    }
    free(rp);
    free(ci);
    free(v);
    free(dref);
    free(d);
    free(b);
    op_fixture_free(&x);
  }
}

Test(operator, uniform_cartesian_mesh_shares_one_element_matrix) {
  op_fixture x;
  op_fixture_make(&x, "/cpu/ref", 1, &op_families[5], NULL); /* Q2 3D */
  fea_operator *op = make_op(&x, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, FEA_UPDATE_SERIAL);
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
  cr_expect(strstr(info.kernel, "one 27x27 matrix") != NULL, "%s", info.kernel);
  cr_expect_gt(info.flops_per_apply, 0.0);
  cr_expect_gt(info.bytes_per_apply, 0.0);
  cr_expect_gt(info.memory_bytes, 0u);
  cr_expect_geq(info.setup_s, 0.0);
  fea_operator_destroy(&op);
  op_fixture_free(&x);
}

Test(operator, problem_may_be_destroyed_first) {
  op_fixture x;
  op_fixture_make(&x, "/cpu/ref", 1, &op_families[0], NULL);
  double *xin = test_x(x.nf), *yref = calloc((size_t)x.nf + 1, sizeof *yref);
  double *y = calloc((size_t)x.nf + 1, sizeof *y);
  cr_assert_eq(fea_matrix_multiply(x.ref, xin, yref), FEA_SUCCESS);
  fea_operator *op = make_op(&x, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, FEA_UPDATE_AUTO);
  fea_problem_destroy(&x.pb);
  fea_space_destroy(&x.space);
  fea_mesh_destroy(&x.mesh);
  apply_host(&x, op, xin, y);
  cr_expect(op_rel_diff(y, yref, x.nf) <= 1e-13);
  fea_operator_destroy(&op);
  cr_assert_eq(fea_operator_destroy(&op), FEA_SUCCESS); /* NULL accepted */
  cr_assert_eq(fea_operator_destroy(NULL), FEA_SUCCESS);
  free(xin);
  free(y);
  free(yref);
  op_fixture_free(&x);
}

#define EXPECT_ERR(expr, code, ctx, needle)                                                       \
  do {                                                                                            \
    fea_status st_ = (expr);                                                                      \
    cr_expect_eq(st_, code, "%s returned %d", #expr, (int)st_);                                   \
    cr_expect(strstr(fea_context_last_error(ctx), needle) != NULL, "%s: message '%s' lacks '%s'", \
              #expr, fea_context_last_error(ctx), needle);                                        \
  } while (0)

Test(operator, bad_input_is_refused) {
  op_fixture x;
  op_fixture_make(&x, "/cpu/ref", 1, &op_families[0], NULL);
  fea_operator *op = NULL;
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = (fea_operator_kind)7;
  EXPECT_ERR(fea_operator_create(x.ctx, x.pb, &d, &op), FEA_ERR_INVALID_ARG, x.ctx,
             "unknown operator kind 7");
  cr_expect_null(op);
  d.kind = FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
  d.strategy = (fea_update_strategy)42;
  EXPECT_ERR(fea_operator_create(x.ctx, x.pb, &d, &op), FEA_ERR_INVALID_ARG, x.ctx,
             "unknown update strategy 42");
  d.strategy = FEA_UPDATE_AUTO;
  d.size = 3;
  EXPECT_ERR(fea_operator_create(x.ctx, x.pb, &d, &op), FEA_ERR_INVALID_ARG, x.ctx,
             "desc.size is 3");
  EXPECT_ERR(fea_operator_create(x.ctx, NULL, NULL, &op), FEA_ERR_INVALID_ARG, x.ctx, "problem");
  cr_assert_eq(fea_operator_create(x.ctx, x.pb, NULL, &op), FEA_SUCCESS); /* NULL desc: defaults */

  fea_vector *good = op_vector(&x, NULL), *out = op_vector(&x, NULL), *shortv = NULL, *f32 = NULL,
             *other = NULL;
  cr_assert_eq(fea_vector_create(x.ctx, x.nf - 1, FEA_F64, &shortv), FEA_SUCCESS);
  cr_assert_eq(fea_vector_create(x.ctx, x.nf, FEA_F32, &f32), FEA_SUCCESS);
  fea_context *ctx2 = NULL;
  cr_assert_eq(fea_context_create("/cpu/ref", &ctx2), FEA_SUCCESS);
  cr_assert_eq(fea_vector_create(ctx2, x.nf, FEA_F64, &other), FEA_SUCCESS);
  char want[64];
  snprintf(want, sizeof want, "has %lld entries", (long long)(x.nf - 1));
  EXPECT_ERR(fea_operator_apply(op, shortv, out), FEA_ERR_DIMENSION, x.ctx, want);
  EXPECT_ERR(fea_operator_apply(op, good, shortv), FEA_ERR_DIMENSION, x.ctx, want);
  EXPECT_ERR(fea_operator_apply_add(op, f32, out), FEA_ERR_INVALID_ARG, x.ctx, "precision");
  EXPECT_ERR(fea_operator_apply(op, other, out), FEA_ERR_INVALID_ARG, x.ctx, "another context");
  EXPECT_ERR(fea_operator_apply(op, good, good), FEA_ERR_INVALID_ARG, x.ctx, "same vector");
  EXPECT_ERR(fea_operator_apply(op, NULL, out), FEA_ERR_INVALID_ARG, x.ctx, "'x' is NULL");
  EXPECT_ERR(fea_operator_get_diagonal(op, shortv), FEA_ERR_DIMENSION, x.ctx, want);
  EXPECT_ERR(fea_operator_get_rhs(op, f32), FEA_ERR_INVALID_ARG, x.ctx, "precision");
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  info.size = 1;
  EXPECT_ERR(fea_operator_get_info(op, &info), FEA_ERR_INVALID_ARG, x.ctx, "info.size");
  cr_expect_eq(fea_operator_apply(NULL, good, out), FEA_ERR_INVALID_ARG);

  fea_vector_destroy(&good);
  fea_vector_destroy(&out);
  fea_vector_destroy(&shortv);
  fea_vector_destroy(&f32);
  fea_vector_destroy(&other);
  fea_context_destroy(&ctx2);
  fea_operator_destroy(&op);
  op_fixture_free(&x);
}

Test(operator, tsx_refused_or_runs) {
  op_fixture x;
  op_fixture_make(&x, "/cpu/threads", 2, &op_families[1], NULL);
  int avail = 0;
  cr_assert_eq(fea_tsx_available(&avail, NULL, 0), FEA_SUCCESS);
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
  d.strategy = FEA_UPDATE_TSX;
  fea_operator *op = NULL;
  fea_status st = fea_operator_create(x.ctx, x.pb, &d, &op);
  if (avail) {
    cr_assert_eq(st, FEA_SUCCESS);
    double *xin = test_x(x.nf), *yref = calloc((size_t)x.nf + 1, sizeof *yref);
    double *y = calloc((size_t)x.nf + 1, sizeof *y);
    cr_assert_eq(fea_matrix_multiply(x.ref, xin, yref), FEA_SUCCESS);
    apply_host(&x, op, xin, y);
    cr_expect(op_rel_diff(y, yref, x.nf) <= 1e-13);
    free(xin);
    free(y);
    free(yref);
  } else {
    cr_expect_eq(st, FEA_ERR_UNSUPPORTED);
    cr_expect_null(op);
  }
  fea_operator_destroy(&op);
  op_fixture_free(&x);
}

/* Sum factorization's line batches (W consecutive elements along x,
 * src/matfree/sumfact/plan.c) need lines longer than a batch: every strategy
 * on 1, 2 and 4 threads against the reference matrix, twice each (plans and
 * batches reused), on meshes with 11 to 21 elements per line (odd ones too:
 * runs that end inside a batch), Dirichlet boundary included. */
Test(operator, sumfact_line_batches_every_strategy_and_thread_count, .timeout = 300) {
  const fea_update_strategy ss[] = {FEA_UPDATE_SERIAL,          FEA_UPDATE_COLORING,
                                    FEA_UPDATE_ATOMIC_CAS,      FEA_UPDATE_MUTEX,
                                    FEA_UPDATE_PRIVATE_BUFFERS, FEA_UPDATE_AUTO};
  const op_family fams[] = {{"Q1 3D", 0, 3, 1, 0, 13},   {"Q2 3D", 0, 3, 2, 0, 11},
                            {"Q1 2D", 0, 2, 1, 0, 19},   {"Q3 2D", 0, 2, 3, 0, 21},
                            {"B p2 3D", 1, 3, 2, 0, 11}, {"B p1 2D", 1, 2, 1, 0, 17}};
  const int threads[] = {1, 2, 4};
  for (size_t i = 0; i < sizeof fams / sizeof *fams; i++)
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
      op_fixture x;
      op_fixture_make(&x, "/cpu/threads", threads[t], &fams[i], NULL);
      double *xin = test_x(x.nf), *yref = calloc((size_t)x.nf + 1, sizeof *yref);
      double *y = calloc((size_t)x.nf + 1, sizeof *y);
      cr_assert_eq(fea_matrix_multiply(x.ref, xin, yref), FEA_SUCCESS);
      for (size_t k = 0; k < sizeof ss / sizeof *ss; k++) {
        fea_operator *op = make_op(&x, FEA_OPERATOR_MATFREE_SUMFACT, ss[k]);
        fea_operator_info info = FEA_OPERATOR_INFO_INIT;
        cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
        /* AUTO on a B-spline box runs the patch-level Kronecker operator (no lines) */
        if (op_sumfact_built(&info) && !strstr(info.kernel, "Kronecker"))
          cr_expect(strstr(info.kernel, "lines:") != NULL, "%s: no line batches: %s", fams[i].name,
                    info.kernel);
        for (int rep = 0; rep < 2; rep++) {
          apply_host(&x, op, xin, y);
          double rel = op_rel_diff(y, yref, x.nf);
          cr_expect(rel <= 1e-13, "%s, %d threads, %s (%s): %.3g from the reference", fams[i].name,
                    threads[t], fea_update_strategy_name(info.strategy_run), info.kernel, rel);
        }
        fea_operator_destroy(&op);
      }
      free(xin);
      free(y);
      free(yref);
      op_fixture_free(&x);
    }
}

/* The CSR operator checks its memory before it allocates: the DoF-element
 * incidence (exact from the element count) and, once the pattern is
 * counted, the matrix itself. A budget between the two refuses the matrix
 * naming its exact entry count, which the reference assembly's matrix has. */
Test(operator, csr_refused_against_the_memory_budget) {
  op_fixture x;
  op_fixture_make(&x, "/cpu/ref", 1, &op_families[1], NULL);
  fea_index n = 0, nnz = 0;
  cr_assert_eq(fea_matrix_get_size(x.ref, &n, NULL, &nnz), FEA_SUCCESS);
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = FEA_OPERATOR_CSR;
  fea_operator *op = (fea_operator *)&op;
  cr_assert_eq(fea_context_set_memory_limit(x.ctx, 1000), FEA_SUCCESS);
  EXPECT_FAIL(fea_operator_create(x.ctx, x.pb, &d, &op), FEA_ERR_OUT_OF_MEMORY, x.ctx,
              "the DoF-element incidence");
  cr_assert_null(op);
  /* Enough for the incidence, one entry short of the matrix's columns and values. */
  const uint64_t matrix = (uint64_t)nnz * (sizeof(double) + sizeof(fea_index));
  cr_assert_eq(fea_context_set_memory_limit(x.ctx, matrix - 1), FEA_SUCCESS);
  char needle[96];
  snprintf(needle, sizeof needle, "a CSR matrix of %lld rows and %lld entries", (long long)n,
           (long long)nnz);
  EXPECT_FAIL(fea_operator_create(x.ctx, x.pb, &d, &op), FEA_ERR_OUT_OF_MEMORY, x.ctx, needle);
  cr_assert_eq(fea_context_set_memory_limit(x.ctx, 0), FEA_SUCCESS);
  op = make_op(&x, FEA_OPERATOR_CSR, FEA_UPDATE_AUTO);
  fea_operator_destroy(&op);
  op_fixture_free(&x);
}

/* A 3D p = 8 B-spline CSR operator (20^3 elements, 17576 free rows) under
 * a 200 MB limit: its pattern pass alone would take minutes (each row
 * merges the 729 x 729 DoFs of up to 729 elements), but the matrix's size
 * is known before it. Interior B-splines i and j of degree p on uniform
 * open knots share an element when |i - j| <= p, so with every side
 * Dirichlet the matrix has exactly c^3 entries, c the number of such pairs
 * among the 1D interior functions 1 .. N - 2 (N = n + p); with a Neumann
 * side it has between c^3 and a^3, a counting the pairs among all N. The
 * refusal names those counts: it came before the pattern was built. */
static long long support_pairs(long long lo, long long hi, long long p) {
  long long c = 0;
  for (long long i = lo; i <= hi; i++)
    c += (i + p < hi ? i + p : hi) - (i - p > lo ? i - p : lo) + 1;
  return c;
}

Test(operator, csr_refused_from_its_size_bound_before_the_pattern_pass) {
  fea_context *ctx = NULL;
  cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS);
  const long long p = 8, n = 20, N = n + p, rows = (N - 2) * (N - 2) * (N - 2);
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 3;
  for (int k = 0; k < 3; k++) bd.degree[k] = (int)p, bd.n[k] = n;
  fea_space *s = NULL;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_problem *pb = NULL;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
  cr_assert_eq(fea_context_set_memory_limit(ctx, 200u << 20), FEA_SUCCESS);
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = FEA_OPERATOR_CSR;
  fea_operator *op = (fea_operator *)&op;
  const long long c = support_pairs(1, N - 2, p), a = support_pairs(0, N - 1, p);
  char needle[256];
  snprintf(needle, sizeof needle,
           "a CSR matrix of %lld rows and %lld entries (counted before its pattern is built", rows,
           c * c * c);
  EXPECT_FAIL(fea_operator_create(ctx, pb, &d, &op), FEA_ERR_OUT_OF_MEMORY, ctx, needle);
  cr_assert_null(op);
  EXPECT_FAIL(fea_operator_create(ctx, pb, &d, &op), FEA_ERR_OUT_OF_MEMORY, ctx,
              "a matrix-free operator kind");
  fea_problem_destroy(&pb);
  /* The west side Neumann: its DoFs are rows too, the count is bounded. */
  pd.sides[FEA_SIDE_WEST].type = FEA_BC_NEUMANN;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
  snprintf(needle, sizeof needle,
           "a CSR matrix of %lld rows and at least %lld entries (at most %lld; bounded before its "
           "pattern is built",
           rows + (N - 2) * (N - 2), c * c * c, a * a * a);
  EXPECT_FAIL(fea_operator_create(ctx, pb, &d, &op), FEA_ERR_OUT_OF_MEMORY, ctx, needle);
  cr_assert_null(op);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* The element-matrix kind on a 3D p = 8 B-spline box of 4^3 elements: no
 * two elements have the same shape (with 4 elements per direction every
 * element sees truncated B-splines of its own), so it needs 64 matrices of
 * 729 x 729 doubles, 272097792 bytes. Grouping elements by shape keeps a
 * signature per shape (the weights and gradients at 729 points, 12.8 MB):
 * under a 100 MB limit the grouping must stop once its signatures reach
 * the limit and the store be refused as one matrix per element, not after
 * every shape was compared (which held about 800 MB). With sigma(x) the
 * store is per element from the start and refused before any element is
 * evaluated. */
static double sigma_xy(const double *x, void *u) {
  (void)u;
  return 1.0 + x[0] * x[1];
}

Test(operator, element_matrix_store_refused_within_the_limit) {
  fea_context *ctx = NULL;
  cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS);
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 3;
  for (int k = 0; k < 3; k++) bd.degree[k] = 8, bd.n[k] = 4;
  fea_space *s = NULL;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS);
  cr_assert_eq(fea_context_set_memory_limit(ctx, 100u << 20), FEA_SUCCESS);
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
  static const char *const why[2] = {"their shapes do not repeat", "sigma(x)"};
  for (int variable = 0; variable < 2; variable++) {
    fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
    pd.sigma_fn = variable ? sigma_xy : NULL;
    fea_problem *pb = NULL;
    cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
    fea_operator *op = (fea_operator *)&op;
    char needle[160];
    snprintf(needle, sizeof needle,
             "the element matrices of 64 elements, 729 x 729 each (one per element: %s",
             why[variable]);
    EXPECT_FAIL(fea_operator_create(ctx, pb, &d, &op), FEA_ERR_OUT_OF_MEMORY, ctx, needle);
    EXPECT_FAIL(fea_operator_create(ctx, pb, &d, &op), FEA_ERR_OUT_OF_MEMORY, ctx,
                "needs 272097792 bytes but the memory limit is 104857600 bytes");
    cr_assert_null(op);
    fea_problem_destroy(&pb);
  }
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}
