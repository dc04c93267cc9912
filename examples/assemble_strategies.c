/* Assemble one Poisson matrix (3D Q2 on a 16^3 mesh) with every update
 * strategy and print what each did: the strategy that ran, threads, time,
 * updates per second and its conflict counters, and how far its matrix is
 * from the SERIAL one.
 *
 *   assemble_strategies [threads]      (default 2) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <feaccel.h>

static int fail(const char *what, fea_context *ctx) {
  fprintf(stderr, "%s failed: %s\n", what, fea_context_last_error(ctx));
  return 1;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  fea_context *ctx = NULL;
  if (fea_context_create("/cpu/ref", &ctx) != FEA_SUCCESS) return fail("fea_context_create", NULL);
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 3;
  md.n[0] = md.n[1] = md.n[2] = 16;
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  fea_matrix *A = NULL;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_index n = 0, nnz = 0;
  if (fea_mesh_create_structured(ctx, &md, &mesh) != FEA_SUCCESS ||
      fea_space_create_lagrange(mesh, 2, FEA_NODES_EQUISPACED, &space) != FEA_SUCCESS ||
      fea_problem_create_poisson(space, &pd, &pb) != FEA_SUCCESS ||
      fea_matrix_create_pattern(pb, &A) != FEA_SUCCESS ||
      fea_matrix_get_size(A, &n, NULL, &nnz) != FEA_SUCCESS)
    return fail("building the problem", ctx);
  double *b = malloc((size_t)n * sizeof *b), *vals = malloc((size_t)nnz * sizeof *vals),
         *ref = malloc((size_t)nnz * sizeof *ref);
  if (!b || !vals || !ref) return 1;
  printf("3D Q2, %lld free DoFs, %lld nonzeros, %d threads\n\n", (long long)n, (long long)nnz,
         threads);
  printf("%-16s %-16s %7s %9s %12s %9s %9s %9s  %s\n", "asked", "ran", "threads", "time [s]",
         "updates/s", "retries", "contended", "aborts", "max |A - A_serial|");
  for (int s = FEA_UPDATE_SERIAL; s <= FEA_UPDATE_AUTO; s++) {
    fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
    d.strategy = (fea_update_strategy)s;
    d.threads = s == FEA_UPDATE_SERIAL ? 1 : threads;
    fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
    fea_status rc = fea_problem_assemble(pb, A, b, &d, &st);
    if (rc == FEA_ERR_UNSUPPORTED) { /* TSX without RTM: the reason */
      printf("%-16s not run: %s\n", fea_update_strategy_name(d.strategy),
             fea_context_last_error(ctx));
      continue;
    }
    if (rc != FEA_SUCCESS) return fail("fea_problem_assemble", ctx);
    if (fea_matrix_get_csr(A, NULL, NULL, s == FEA_UPDATE_SERIAL ? ref : vals) != FEA_SUCCESS)
      return fail("fea_matrix_get_csr", ctx);
    double diff = 0;
    if (s != FEA_UPDATE_SERIAL)
      for (fea_index k = 0; k < nnz; k++) diff = fmax(diff, fabs(vals[k] - ref[k]));
    printf("%-16s %-16s %7d %9.4f %12.4g %9llu %9llu %9llu  %.3g\n",
           fea_update_strategy_name(d.strategy), fea_update_strategy_name(st.strategy_run),
           st.threads, st.time_s, st.updates_per_s, (unsigned long long)st.retries,
           (unsigned long long)st.lock_contended,
           (unsigned long long)(st.tx_started - st.tx_committed), diff);
  }
  free(b);
  free(vals);
  free(ref);
  fea_matrix_destroy(&A);
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
  return 0;
}
