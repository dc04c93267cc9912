/* The distributed multipatch solver on 1, 2 or 4 ranks (mpiexec), against
 * the single-process multipatch solver on every rank (itself checked
 * against the reference CSR system in tests/api/test-multipatch.c): the
 * problem's load and a caller right-hand side, MUMPS and an iterative
 * interface KSP; and the errors: more ranks than patches, a bad PETSc
 * option (a status and a message, never PETSc's abort). */
#include <string.h>

#include "mpi-common.h"

static double max_diff(const double *a, const double *b, fea_index n, double *scale) {
  double d = 0;
  *scale = 0;
  for (fea_index i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
    *scale = fmax(*scale, fabs(b[i]));
  }
  return d;
}

static void distributed_equals_single(fea_context *ctx, fea_multipatch_problem *pb, fea_index nf,
                                      const double *b) {
  fea_solver *single = NULL;
  OK(fea_solver_create_multipatch(ctx, pb, NULL, &single));
  OK(fea_solver_setup(single));
  double *ref = malloc((size_t)nf * sizeof *ref), *x = malloc((size_t)nf * sizeof *x);
  OK(fea_solver_solve(single, 1, b, nf, ref, nf));
  fea_solver_destroy(&single);

  fea_petsc_multipatch *s = NULL;
  OK(fea_petsc_multipatch_create(PETSC_COMM_WORLD, ctx, pb, NULL, &s));
  CHECK(fea_petsc_multipatch_solve(s, b, x) == FEA_ERR_STATE, "a solve before setup");
  OK(fea_petsc_multipatch_setup(s));
  OK(fea_petsc_multipatch_solve(s, b, x));
  double scale, d = max_diff(x, ref, nf, &scale);
  CHECK(d <= 1e-10 * scale, "distributed vs single process: %g (max %g)", d, scale);
  fea_petsc_multipatch_stats st = FEA_PETSC_MULTIPATCH_STATS_INIT;
  OK(fea_petsc_multipatch_get_stats(s, &st));
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  CHECK(st.ranks == size && st.local_patches >= 1 && st.interface_dofs > 0, "stats: %d %d %lld",
        st.ranks, st.local_patches, (long long)st.interface_dofs);
  int total = 0;
  MPI_Allreduce(&st.local_patches, &total, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD);
  CHECK(total == 6, "the ranks own %d patches in all, not 6", total);
  /* The 3 x 2 grid on 2 ranks: each rank's patches connected (a greedy
   * split by size would give 0, 2, 4 and 1, 3, 5). */
  int owner[6];
  for (int p = 0; p < 6; p++) OK(fea_petsc_multipatch_get_patch_rank(s, p, &owner[p]));
  if (size == 2)
    for (int p = 0; p < 6; p++) {
      const int i = p % 3, j = p / 3;
      int linked = 0; /* p has a neighbour on its rank, or is its rank's only patch */
      for (int q = 0; q < 6; q++)
        if (q != p && owner[q] == owner[p] && abs(q % 3 - i) + abs(q / 3 - j) == 1) linked = 1;
      CHECK(linked, "patch %d (rank %d) has no neighbour on its rank", p, owner[p]);
    }
  CHECK(fea_petsc_multipatch_get_patch_rank(s, 6, &owner[0]) == FEA_ERR_INVALID_ARG,
        "patch 6 of 6 was accepted");
  OK(fea_petsc_multipatch_destroy(&s));

  /* Iterative interface solves through the options database: CG with
   * Jacobi on the assembled matrix, and CG with BDDC on the unassembled one
   * (each rank's patches a subdomain). */
  static const char *const pcs[2] = {"jacobi", "bddc"};
  for (int k = 0; k < 2; k++) {
    CHECK(PetscOptionsSetValue(NULL, "-feaccel_ksp_type", "cg") == 0, "option");
    CHECK(PetscOptionsSetValue(NULL, "-feaccel_pc_type", pcs[k]) == 0, "option");
    CHECK(PetscOptionsSetValue(NULL, "-feaccel_ksp_rtol", "1e-13") == 0, "option");
    OK(fea_petsc_multipatch_create(PETSC_COMM_WORLD, ctx, pb, NULL, &s));
    OK(fea_petsc_multipatch_setup(s));
    OK(fea_petsc_multipatch_solve(s, b, x));
    OK(fea_petsc_multipatch_get_stats(s, &st));
    /* On one rank BDDC is the exact inverse: CG may stop before iterating. */
    CHECK(st.iterations >= (size > 1 || k == 0), "CG with %s took %d iterations", pcs[k],
          st.iterations);
    d = max_diff(x, ref, nf, &scale);
    CHECK(d <= 1e-9 * scale, "CG with %s on the interface vs single process: %g (max %g)", pcs[k],
          d, scale);
    if (mpi_test_rank == 0)
      printf("interface CG with %s: %d iterations on %d ranks\n", pcs[k], st.iterations, size);
    OK(fea_petsc_multipatch_destroy(&s));
    PetscOptionsClearValue(NULL, "-feaccel_ksp_type");
    PetscOptionsClearValue(NULL, "-feaccel_pc_type");
    PetscOptionsClearValue(NULL, "-feaccel_ksp_rtol");
  }
  free(ref);
  free(x);
}

static void errors(fea_context *ctx, fea_multipatch_problem *pb, fea_space *one) {
  int size;
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  fea_petsc_multipatch *s = NULL;
  /* A PETSc error becomes a status and a message. */
  PetscOptionsSetValue(NULL, "-feaccel_pc_type", "no_such_preconditioner");
  OK(fea_petsc_multipatch_create(PETSC_COMM_WORLD, ctx, pb, NULL, &s));
  fea_status st = fea_petsc_multipatch_setup(s);
  CHECK(st == FEA_ERR_BACKEND && strstr(fea_context_last_error(ctx), "PETSc error"),
        "a bad option gave %s: %s", fea_status_string(st), fea_context_last_error(ctx));
  OK(fea_petsc_multipatch_destroy(&s));
  PetscOptionsClearValue(NULL, "-feaccel_pc_type");
  if (size == 1) return;
  /* More ranks than patches. */
  fea_multipatch *mp1 = NULL;
  OK(fea_multipatch_create(ctx, 1, &one, NULL, &mp1));
  fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
  fea_multipatch_problem *pb1 = NULL;
  OK(fea_multipatch_problem_create_poisson(mp1, &d, 0, NULL, &pb1));
  st = fea_petsc_multipatch_create(PETSC_COMM_WORLD, ctx, pb1, NULL, &s);
  CHECK(st == FEA_ERR_INVALID_ARG && strstr(fea_context_last_error(ctx), "would own no patch") &&
            s == NULL,
        "%d ranks on 1 patch gave %s: %s", size, fea_status_string(st),
        fea_context_last_error(ctx));
  fea_multipatch_problem_destroy(&pb1);
  fea_multipatch_destroy(&mp1);
}

int main(int argc, char **argv) {
  if (PetscInitialize(&argc, &argv, NULL, NULL) != 0) return 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &mpi_test_rank);
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_space *patches[6];
  grid_patches(ctx, 3, 2, 2, 4, patches);
  fea_multipatch *mp = NULL;
  OK(fea_multipatch_create(ctx, 6, patches, NULL, &mp));
  fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
  d.source = grid_f, d.dirichlet = grid_u;
  /* The south sides Neumann: interface DoFs reach the boundary there. */
  fea_multipatch_bc bcs[3];
  for (int i = 0; i < 3; i++)
    bcs[i] = (fea_multipatch_bc){i, FEA_SIDE_SOUTH, {FEA_BC_NEUMANN, 0.0, grid_flux_south, NULL}};
  fea_multipatch_problem *pb = NULL;
  OK(fea_multipatch_problem_create_poisson(mp, &d, 3, bcs, &pb));
  fea_index nf = 0;
  OK(fea_multipatch_problem_get_num_free_dofs(pb, &nf));
  distributed_equals_single(ctx, pb, nf, NULL);
  double *b = malloc((size_t)nf * sizeof *b);
  for (fea_index i = 0; i < nf; i++) b[i] = cos(0.7 * (double)i); /* the same on every rank */
  distributed_equals_single(ctx, pb, nf, b);
  errors(ctx, pb, patches[0]);
  free(b);
  fea_multipatch_problem_destroy(&pb);
  fea_multipatch_destroy(&mp);
  for (int i = 0; i < 6; i++) fea_space_destroy(&patches[i]);
  fea_context_destroy(&ctx);
  if (mpi_test_rank == 0) printf("test-petsc-multipatch: passed\n");
  return PetscFinalize() != 0;
}
