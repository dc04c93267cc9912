/* ThreadSanitizer driver for the concurrent assembly (scripts/run-tsan).
 *
 * Criterion cannot run under TSan (its inheritable arena maps memory where
 * TSan keeps its shadow and the runner crashes), so this plain program drives
 * the same scenarios as tests/unit/test-concurrency.c and
 * tests/api/test-assembly.c: every strategy, 4 threads, Lagrange and B-spline
 * spaces, CSR and dense targets, TSX in forced-abort mode, a failing
 * assembly; each result is checked against the reference. Exit 0: all agree
 * (TSan itself exits non-zero on a report, with halt_on_error=1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <feaccel.h>

static int failures;

static double g_fn(const double *x, void *u) {
  (void)u;
  return 1.0 + x[0];
}

static double bad_sigma(const double *x, void *u) {
  (void)u;
  return x[0] > 0.7 ? -1.0 : 1.0;
}

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "tsan-assembly: %s\n", what);
    failures++;
  }
}

static void run_space(fea_space *space, const char *name) {
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.dirichlet = g_fn;
  fea_problem *pb = NULL;
  fea_matrix *R = NULL, *A = NULL;
  fea_index nf = 0, nnz = 0;
  if (fea_problem_create_poisson(space, &pd, &pb) || fea_problem_get_num_free_dofs(pb, &nf) ||
      fea_matrix_create_pattern(pb, &A) || fea_matrix_get_size(A, NULL, NULL, &nnz)) {
    check(0, "setup");
    return;
  }
  double *bref = calloc((size_t)nf, sizeof *bref), *b = calloc((size_t)nf, sizeof *b);
  double *vr = malloc((size_t)nnz * sizeof *vr), *va = malloc((size_t)nnz * sizeof *va);
  double *D = malloc((size_t)(nf * nf) * sizeof *D);
  check(fea_problem_assemble_reference(pb, bref, &R) == FEA_SUCCESS, "reference");
  check(fea_matrix_get_csr(R, NULL, NULL, vr) == FEA_SUCCESS, "csr");
  double scale = 0;
  for (fea_index k = 0; k < nnz; k++) scale = fmax(scale, fabs(vr[k]));
  for (int s = FEA_UPDATE_SERIAL; s <= FEA_UPDATE_PRIVATE_COPIES; s++) {
    fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
    d.strategy = (fea_update_strategy)s;
    d.threads = 4;
    d.spin = s % 2;
    setenv("FEACCEL_TSX_FORCE_ABORT", "1", 1);
    fea_status st = fea_problem_assemble(pb, A, b, &d, NULL);
    char what[128];
    snprintf(what, sizeof what, "%s: %s: %s", name, fea_update_strategy_name(d.strategy),
             fea_context_last_error(NULL));
    check(st == FEA_SUCCESS, what);
    check(fea_matrix_get_csr(A, NULL, NULL, va) == FEA_SUCCESS, what);
    for (fea_index k = 0; k < nnz; k++)
      if (fabs(va[k] - vr[k]) > 1e-13 * scale) {
        check(0, what);
        break;
      }
    st = fea_problem_assemble_dense(pb, D, nf, b, &d, NULL);
    check(st == FEA_SUCCESS, what);
    unsetenv("FEACCEL_TSX_FORCE_ABORT");
  }
  free(bref);
  free(b);
  free(vr);
  free(va);
  free(D);
  fea_matrix_destroy(&R);
  fea_matrix_destroy(&A);
  fea_problem_destroy(&pb);
}

int main(void) {
  fea_context *ctx = NULL;
  if (fea_context_create("/cpu/ref", &ctx)) return 2;
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = 6;
  md.n[1] = 5;
  fea_mesh *mesh = NULL;
  fea_space *q2 = NULL, *bs = NULL;
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 3;
  bd.degree[0] = bd.degree[1] = bd.degree[2] = 2;
  bd.n[0] = bd.n[1] = bd.n[2] = 3;
  if (fea_mesh_create_structured(ctx, &md, &mesh) ||
      fea_space_create_lagrange(mesh, 2, FEA_NODES_EQUISPACED, &q2) ||
      fea_space_create_bspline(ctx, &bd, &bs))
    return 2;
  run_space(q2, "Q2 2D");
  run_space(bs, "B-spline p2 3D");
  /* a failing assembly: several threads fail at once */
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma_fn = bad_sigma;
  fea_problem *pb = NULL;
  fea_matrix *A = NULL;
  fea_index nf = 0;
  if (fea_problem_create_poisson(q2, &pd, &pb) || fea_problem_get_num_free_dofs(pb, &nf) ||
      fea_matrix_create_pattern(pb, &A))
    return 2;
  double *b = calloc((size_t)nf, sizeof *b);
  for (int s = FEA_UPDATE_SERIAL; s <= FEA_UPDATE_PRIVATE_BUFFERS; s++) {
    fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
    d.strategy = (fea_update_strategy)s;
    d.threads = 4;
    check(fea_problem_assemble(pb, A, b, &d, NULL) == FEA_ERR_INVALID_ARG, "failing sigma");
  }
  free(b);
  fea_matrix_destroy(&A);
  fea_problem_destroy(&pb);
  fea_space_destroy(&bs);
  fea_space_destroy(&q2);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
  printf("tsan-assembly: %s\n", failures ? "FAILED" : "all strategies agree with the reference");
  return failures ? 1 : 0;
}
