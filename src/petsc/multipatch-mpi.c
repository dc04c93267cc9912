/* The multipatch direct solver over MPI ranks: each rank eliminates its own
 * patches' interiors (the multipatch solver kind driven phase by phase on
 * the rank's share), the interface system is one distributed PETSc matrix
 * assembled from the patches' boundary Schur complements through the COO
 * interface, solved by a KSP (MUMPS's LU by default), and each rank
 * back-substitutes its patches.
 *
 * Every rank describes the whole domain (the patches, interfaces and global
 * numbering are cheap next to a factorization) but factors only its
 * patches: connected groups of patches from PETSc's graph partitioner
 * (src/petsc/patch-partition.c).
 * Vectors over the free global DoFs are replicated: after the
 * back-substitution each free DoF is written by the one rank that owns its
 * first patch, and an MPI sum gives every rank the whole solution.
 *
 * Systems (elasticity, ncomp components per function): the PETSc matrix
 * has block size ncomp, its rows numbered by interface function, so that
 * each function's components form one block, and a component fixed on a
 * roller (no interface row) gets an identity row scaled to the mean
 * diagonal, which keeps the blocks whole and changes no other row. The
 * rigid-body modes built from the functions' anchors
 * (MatNullSpaceCreateRigidBody) are attached as the near-null space, so
 * that `-feaccel_pc_type gamg` aggregates with them out of the box;
 * `-feaccel_near_null_space false` leaves them off (GAMG then falls back to
 * the block size's translations). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel/context.h>
#include <feaccel/petsc.h>

#include "internal/error.h"
#include "multipatch/multipatch.h"
#include "petsc-bridge.h"
#include "base/struct-copy.h"

static const fea_struct_type stats_type = {
    "fea_petsc_multipatch_stats", "FEA_PETSC_MULTIPATCH_STATS_INIT",
    FEA_SIZE_THROUGH(fea_petsc_multipatch_stats, local_bytes), sizeof(fea_petsc_multipatch_stats)};

struct fea_petsc_multipatch {
  MPI_Comm comm;
  int rank, size;
  fea_context *ctx;           /* holds a reference */
  fea_multipatch_problem *pb; /* holds a reference */
  fea_solver *part;           /* this rank's patches (the multipatch kind's phases) */
  int local_patches;
  fea_index local_dofs;
  int *owner; /* per patch: its rank */
  PetscInt ni;
  /* The PETSc numbering: per interface row of the solver (ni) its PETSc row
   * (bs per interface function, bs = ncomp); N rows in all, nloc (whole
   * blocks) on this rank, npad of them (pad) without an interface row. */
  int bs;
  PetscInt N, nloc, npad;
  PetscInt *prow, *pad;
  double *coords; /* per block: its function's anchor (dim values); NULL for bs = 1 */
  int near_null;  /* rigid-body modes attached at the last setup */
  Mat A;
  KSP ksp;
  Vec b, x, x_all;
  VecScatter to_all;
  int ready;
  double local_s, interface_s, solve_s;
  int iterations;
};

/* This rank's patches (src/petsc/patch-partition.c decides). */
static fea_status mp_partition(fea_petsc_multipatch *s, unsigned char *mine) {
  const fea_multipatch *mp = s->pb->mp;
  const int np = mp->num_patches;
  s->owner = malloc((size_t)np * sizeof *s->owner);
  FEA_CHECK(s->owner, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to partition %d patches", np);
  FEA_CALL(fea_petsc_partition_patches(s->comm, s->ctx, mp, s->rank, s->size, s->owner));
  for (int p = 0; p < np; p++) {
    mine[p] = s->owner[p] == s->rank;
    if (mine[p]) {
      s->local_patches++;
      s->local_dofs += mp->patch_off[p + 1] - mp->patch_off[p];
    }
  }
  return FEA_SUCCESS;
}

static double wall_time(void) { return MPI_Wtime(); }

static fea_status mp_ksp_defaults(fea_petsc_multipatch *s) {
  FEA_PETSC_CALL(s->ctx, KSPCreate(s->comm, &s->ksp));
  FEA_PETSC_CALL(s->ctx, KSPSetOptionsPrefix(s->ksp, "feaccel_"));
  PC pc;
  FEA_PETSC_CALL(s->ctx, KSPGetPC(s->ksp, &pc));
#if defined(PETSC_HAVE_MUMPS)
  FEA_PETSC_CALL(s->ctx, KSPSetType(s->ksp, KSPPREONLY));
  FEA_PETSC_CALL(s->ctx, PCSetType(pc, PCLU));
  FEA_PETSC_CALL(s->ctx, PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
#else
  FEA_PETSC_CALL(s->ctx, KSPSetType(s->ksp, KSPCG));
  FEA_PETSC_CALL(s->ctx, PCSetType(pc, PCJACOBI));
  FEA_PETSC_CALL(s->ctx, KSPSetTolerances(s->ksp, 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
#endif
  return FEA_SUCCESS;
}

/* The PETSc numbering of the interface rows: the identity for scalar
 * problems; for systems bs rows per interface function (in the order of the
 * functions), the function's anchor per block, and the rows left without an
 * interface row. Blocks are split evenly among the ranks. */
static fea_status mp_blocks(fea_petsc_multipatch *s) {
  fea_context *ctx = s->ctx;
  const fea_multipatch *mp = s->pb->mp;
  const fea_index ni = fea_multipatch_interface_size(s->part);
  const int bs = mp->ncomp, dim = mp->dim;
  s->bs = bs;
  s->prow = malloc((size_t)(ni ? ni : 1) * sizeof *s->prow);
  fea_index *dofs = malloc((size_t)(ni ? ni : 1) * sizeof *dofs);
  fea_index *block_of = NULL; /* per global function: its block, or -1 */
  double *anchors = NULL;
  const fea_index nfun = mp->num_dofs / bs;
  fea_status st = s->prow && dofs ? FEA_SUCCESS
                                  : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                                              "no memory for %lld interface rows", (long long)ni);
  PetscInt nb = 0;
  if (st == FEA_SUCCESS && bs == 1) {
    for (fea_index i = 0; i < ni; i++) s->prow[i] = (PetscInt)i;
    nb = (PetscInt)ni;
  } else if (st == FEA_SUCCESS) {
    fea_multipatch_interface_dofs(s->part, dofs);
    block_of = malloc((size_t)(nfun ? nfun : 1) * sizeof *block_of);
    anchors = malloc((size_t)(nfun ? nfun : 1) * (size_t)dim * sizeof *anchors);
    if (!block_of || !anchors)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the blocks of %lld functions",
                     (long long)nfun);
    if (st == FEA_SUCCESS) st = fea_multipatch_function_anchors(mp, anchors);
    for (fea_index G = 0; st == FEA_SUCCESS && G < nfun; G++) block_of[G] = -1;
    /* The rows ascend by global DoF c + bs G: a function's rows are adjacent. */
    for (fea_index i = 0; st == FEA_SUCCESS && i < ni; i++) {
      const fea_index G = dofs[i] / bs;
      if (block_of[G] < 0) block_of[G] = nb++;
      s->prow[i] = (PetscInt)(bs * block_of[G] + dofs[i] % bs);
    }
    if (st == FEA_SUCCESS) {
      s->coords = malloc((size_t)(nb ? nb : 1) * (size_t)dim * sizeof *s->coords);
      s->pad = malloc((size_t)(nb ? nb * bs : 1) * sizeof *s->pad);
      unsigned char *used = calloc((size_t)(nb ? nb * bs : 1), 1);
      if (!s->coords || !s->pad || !used)
        st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld blocks", (long long)nb);
      for (fea_index G = 0; st == FEA_SUCCESS && G < nfun; G++)
        if (block_of[G] >= 0)
          for (int k = 0; k < dim; k++) s->coords[block_of[G] * dim + k] = anchors[G * dim + k];
      for (fea_index i = 0; st == FEA_SUCCESS && i < ni; i++) used[s->prow[i]] = 1;
      for (PetscInt r = 0; st == FEA_SUCCESS && r < nb * bs; r++)
        if (!used[r]) s->pad[s->npad++] = r;
      free(used);
    }
  }
  free(dofs);
  free(block_of);
  free(anchors);
  FEA_CALL(st);
  s->N = nb * bs;
  s->nloc = bs * (nb / s->size + (s->rank < nb % s->size));
  return FEA_SUCCESS;
}

static fea_status mp_create(fea_petsc_multipatch *s, const fea_solver_desc *d) {
  fea_context *ctx = s->ctx;
  const fea_multipatch *mp = s->pb->mp;
  FEA_CHECK(MPI_Comm_rank(s->comm, &s->rank) == MPI_SUCCESS &&
                MPI_Comm_size(s->comm, &s->size) == MPI_SUCCESS,
            ctx, FEA_ERR_BACKEND, "MPI_Comm_rank or MPI_Comm_size failed");
  FEA_CHECK(s->size <= mp->num_patches, ctx, FEA_ERR_INVALID_ARG,
            "rank %d of %d would own no patch: the domain has %d patches (use at most %d "
            "ranks)",
            mp->num_patches, s->size, mp->num_patches, mp->num_patches);
  FEA_CHECK(s->pb->num_free <= INT_MAX, ctx, FEA_ERR_DIMENSION,
            "%lld free DoFs exceed the MPI count of the replicated vectors (%d)",
            (long long)s->pb->num_free, INT_MAX);
  unsigned char *mine = calloc((size_t)mp->num_patches, 1);
  FEA_CHECK(mine, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d patch flags", mp->num_patches);
  fea_status st = mp_partition(s, mine);
  if (st == FEA_SUCCESS) st = fea_multipatch_solver_create_part(ctx, s->pb, d, mine, &s->part);
  free(mine);
  FEA_CALL(st);
  const fea_index ni = fea_multipatch_interface_size(s->part);
  FEA_CHECK(ni <= PETSC_MAX_INT, ctx, FEA_ERR_DIMENSION,
            "the interface's %lld DoFs exceed PetscInt's %lld", (long long)ni,
            (long long)PETSC_MAX_INT);
  s->ni = (PetscInt)ni;
  FEA_CALL(mp_blocks(s));
  return mp_ksp_defaults(s);
}

static void mp_release(fea_petsc_multipatch *s) {
  (void)KSPDestroy(&s->ksp);
  (void)MatDestroy(&s->A);
  (void)VecDestroy(&s->b);
  (void)VecDestroy(&s->x);
  (void)VecDestroy(&s->x_all);
  (void)VecScatterDestroy(&s->to_all);
  fea_solver_destroy(&s->part);
  free(s->owner);
  free(s->prow);
  free(s->pad);
  free(s->coords);
  if (s->pb) fea_object_release(s->pb);
  if (s->ctx) fea_object_release(s->ctx);
  free(s);
}

fea_status fea_petsc_multipatch_create(MPI_Comm comm, fea_context *ctx,
                                       fea_multipatch_problem *problem, const fea_solver_desc *desc,
                                       fea_petsc_multipatch **out) {
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK_NULL(out, ctx);
  *out = NULL;
  fea_solver_desc d = FEA_SOLVER_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(ctx, &d, desc, "desc", &fea_struct_solver_desc));
  FEA_CHECK(fea_petsc_ctx_of(problem) == ctx, ctx, FEA_ERR_INVALID_ARG,
            "the problem was created on another context");
  FEA_CHECK(d.keep_boundary == 0, ctx, FEA_ERR_INVALID_ARG,
            "desc.keep_boundary = %d: the multipatch solver keeps the patches' boundaries "
            "itself; leave it 0",
            d.keep_boundary);
  fea_petsc_multipatch *s = calloc(1, sizeof *s);
  FEA_CHECK(s, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a solver");
  s->comm = comm;
  s->ctx = ctx;
  fea_object_retain(ctx);
  s->pb = problem;
  fea_object_retain(problem);
  fea_petsc_quiet_push();
  const fea_status st = mp_create(s, &d);
  if (st == FEA_SUCCESS)
    *out = s;
  else
    mp_release(s);
  fea_petsc_quiet_pop();
  return st;
}

/* This rank's patches' Schur complements as triplets over the interface
 * rows (Dirichlet rows left out); the caller frees *ci, *cj, *v. */
static fea_status mp_triplets(fea_petsc_multipatch *s, PetscCount *count, PetscInt **ci,
                              PetscInt **cj, PetscScalar **v) {
  fea_context *ctx = s->ctx;
  const fea_multipatch *mp = s->pb->mp;
  PetscCount n = 0;
  for (int p = 0; p < mp->num_patches; p++) {
    const fea_index r = fea_multipatch_patch_boundary_size(s->part, p); /* 0: not ours */
    n += (PetscCount)(r * r);
  }
  n += s->npad; /* the identity rows of fixed components (rank 0 adds them) */
  *ci = malloc((size_t)(n ? n : 1) * sizeof **ci);
  *cj = malloc((size_t)(n ? n : 1) * sizeof **cj);
  *v = malloc((size_t)(n ? n : 1) * sizeof **v);
  fea_status st = *ci && *cj && *v
                      ? FEA_SUCCESS
                      : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                                  "no memory for %lld interface entries", (long long)n);
  PetscCount k = 0;
  for (int p = 0; p < mp->num_patches && st == FEA_SUCCESS; p++) {
    const fea_index r = fea_multipatch_patch_boundary_size(s->part, p);
    if (r <= 0) continue;
    fea_index *rows = malloc((size_t)r * sizeof *rows);
    double *S = malloc((size_t)(r * r) * sizeof *S);
    if (!rows || !S)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for patch %d's Schur complement", p);
    if (st == FEA_SUCCESS) st = fea_multipatch_patch_schur(s->part, p, rows, S);
    for (fea_index j = 0; j < r && st == FEA_SUCCESS; j++)
      for (fea_index i = 0; i < r; i++)
        if (rows[i] >= 0 && rows[j] >= 0) {
          (*ci)[k] = s->prow[rows[i]], (*cj)[k] = s->prow[rows[j]], (*v)[k] = S[i + j * r];
          k++;
        }
    free(rows);
    free(S);
  }
  /* The padded rows' diagonal: the mean of the assembled diagonal (the
   * patches' diagonal entries summed over every rank, over its rows), so
   * that they neither stiffen nor soften the system's scale. */
  double diag[2] = {0, (double)s->ni};
  for (PetscCount q = 0; q < k; q++)
    if ((*ci)[q] == (*cj)[q]) diag[0] += (*v)[q];
  if (st == FEA_SUCCESS && s->npad > 0 &&
      MPI_Allreduce(MPI_IN_PLACE, diag, 1, MPI_DOUBLE, MPI_SUM, s->comm) != MPI_SUCCESS)
    st = FEA_ERROR(ctx, FEA_ERR_BACKEND, "MPI_Allreduce of the interface diagonal failed");
  for (PetscInt q = 0; st == FEA_SUCCESS && s->rank == 0 && q < s->npad; q++, k++)
    (*ci)[k] = (*cj)[k] = s->pad[q], (*v)[k] = diag[1] > 0 ? diag[0] / diag[1] : 1.0;
  *count = k;
  return st;
}

/* The assembled interface matrix (MPIAIJ): triplets through the COO
 * interface, rows of other ranks sent and summed by PETSc. */
static fea_status mp_assembled(fea_petsc_multipatch *s, PetscCount n, const PetscInt *ci,
                               const PetscInt *cj, const PetscScalar *v) {
  fea_context *ctx = s->ctx;
  FEA_PETSC_CALL(ctx, MatCreate(s->comm, &s->A));
  FEA_PETSC_CALL(ctx, MatSetSizes(s->A, s->nloc, s->nloc, s->N, s->N));
  FEA_PETSC_CALL(ctx, MatSetType(s->A, MATAIJ));
  if (s->bs > 1) FEA_PETSC_CALL(ctx, MatSetBlockSize(s->A, s->bs));
  FEA_PETSC_CALL(ctx, MatSetPreallocationCOO(s->A, n, (PetscInt *)ci, (PetscInt *)cj));
  FEA_PETSC_CALL(ctx, MatSetValuesCOO(s->A, v, INSERT_VALUES));
  return FEA_SUCCESS;
}

static int by_value(const void *a, const void *b) {
  const PetscInt x = *(const PetscInt *)a, y = *(const PetscInt *)b;
  return (x > y) - (x < y);
}

/* The unassembled interface matrix (MATIS) that PCBDDC needs: this rank's
 * local matrix is the sum of its patches' Schur complements over the
 * interface rows they touch (a subdomain's Neumann matrix), mapped to the
 * global rows; PETSc never adds them up. */
static fea_status mp_unassembled(fea_petsc_multipatch *s, PetscCount n, const PetscInt *ci,
                                 const PetscInt *cj, const PetscScalar *v) {
  fea_context *ctx = s->ctx;
  PetscInt *rows = malloc((size_t)(n ? n : 1) * sizeof *rows), nloc = 0;
  FEA_CHECK(rows, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld local rows", (long long)n);
  for (PetscCount k = 0; k < n; k++)
    if (ci[k] == cj[k]) rows[nloc++] = ci[k];
  qsort(rows, (size_t)nloc, sizeof *rows, by_value);
  PetscInt u = 0;
  for (PetscInt i = 0; i < nloc; i++)
    if (i == 0 || rows[i] != rows[u - 1]) rows[u++] = rows[i];
  nloc = u;
  ISLocalToGlobalMapping l2g = NULL;
  Mat local = NULL;
  PetscErrorCode e = ISLocalToGlobalMappingCreate(s->comm, 1, nloc, rows, PETSC_COPY_VALUES, &l2g);
  if (!e) e = MatCreateIS(s->comm, 1, s->nloc, s->nloc, s->N, s->N, l2g, l2g, &s->A);
  if (!e) e = MatCreateSeqDense(PETSC_COMM_SELF, nloc, nloc, NULL, &local);
  for (PetscCount k = 0; k < n && !e; k++) {
    const PetscInt *a = bsearch(&ci[k], rows, (size_t)nloc, sizeof *rows, by_value);
    const PetscInt *b = bsearch(&cj[k], rows, (size_t)nloc, sizeof *rows, by_value);
    const PetscInt li = (PetscInt)(a - rows), lj = (PetscInt)(b - rows);
    e = MatSetValues(local, 1, &li, 1, &lj, &v[k], ADD_VALUES);
  }
  if (!e) e = MatAssemblyBegin(local, MAT_FINAL_ASSEMBLY);
  if (!e) e = MatAssemblyEnd(local, MAT_FINAL_ASSEMBLY);
  if (!e) e = MatConvert(local, MATSEQAIJ, MAT_INPLACE_MATRIX, &local);
  if (!e) e = MatISSetLocalMat(s->A, local);
  if (!e) e = MatAssemblyBegin(s->A, MAT_FINAL_ASSEMBLY);
  if (!e) e = MatAssemblyEnd(s->A, MAT_FINAL_ASSEMBLY);
  (void)MatDestroy(&local);
  (void)ISLocalToGlobalMappingDestroy(&l2g);
  free(rows);
  if (e)
    return fea_petsc_error(ctx, e, "the unassembled interface matrix", __FILE__, __LINE__,
                           __func__);
  return FEA_SUCCESS;
}

/* The rigid-body modes of a system as the matrix's near-null space (unless
 * -feaccel_near_null_space false): a coordinate vector laid out as the
 * matrix's rows, one anchor per block. */
static fea_status mp_near_null_space(fea_petsc_multipatch *s) {
  fea_context *ctx = s->ctx;
  const int dim = s->pb->mp->dim;
  PetscBool use = PETSC_TRUE;
  s->near_null = 0;
  FEA_PETSC_CALL(ctx, PetscOptionsGetBool(NULL, "feaccel_", "-near_null_space", &use, NULL));
  if (s->bs == 1 || !s->pb->elastic || s->bs != dim || !use) return FEA_SUCCESS;
  PetscInt r0 = 0, r1 = 0;
  FEA_PETSC_CALL(ctx, MatGetOwnershipRange(s->A, &r0, &r1));
  Vec x = NULL;
  MatNullSpace nsp = NULL;
  PetscScalar *a = NULL;
  PetscErrorCode e = VecCreateMPI(s->comm, (r1 - r0) / s->bs * dim, s->N / s->bs * dim, &x);
  if (!e) e = VecSetBlockSize(x, dim);
  if (!e) e = VecGetArray(x, &a);
  for (PetscInt b = r0 / s->bs; !e && b < r1 / s->bs; b++)
    for (int k = 0; k < dim; k++) a[(b - r0 / s->bs) * dim + k] = s->coords[b * dim + k];
  if (!e) e = VecRestoreArray(x, &a);
  if (!e) e = MatNullSpaceCreateRigidBody(x, &nsp);
  if (!e) e = MatSetNearNullSpace(s->A, nsp);
  (void)MatNullSpaceDestroy(&nsp);
  (void)VecDestroy(&x);
  if (e)
    return fea_petsc_error(ctx, e, "the rigid-body near-null space", __FILE__, __LINE__, __func__);
  s->near_null = dim == 2 ? 3 : 6;
  return FEA_SUCCESS;
}

/* The interface matrix in the form the KSP's preconditioner takes. */
static fea_status mp_interface_matrix(fea_petsc_multipatch *s, int unassembled) {
  PetscCount n = 0;
  PetscInt *ci = NULL, *cj = NULL;
  PetscScalar *v = NULL;
  (void)MatDestroy(&s->A);
  fea_status st = mp_triplets(s, &n, &ci, &cj, &v);
  if (st == FEA_SUCCESS)
    st = unassembled ? mp_unassembled(s, n, ci, cj, v) : mp_assembled(s, n, ci, cj, v);
  if (st == FEA_SUCCESS) {
    const PetscErrorCode e = MatSetOption(s->A, MAT_SPD, PETSC_TRUE);
    if (e) st = fea_petsc_error(s->ctx, e, "MatSetOption(MAT_SPD)", __FILE__, __LINE__, __func__);
  }
  if (st == FEA_SUCCESS) st = mp_near_null_space(s);
  free(ci);
  free(cj);
  free(v);
  return st;
}

static fea_status mp_setup(fea_petsc_multipatch *s) {
  fea_context *ctx = s->ctx;
  s->ready = 0;
  double t0 = wall_time();
  FEA_CALL(fea_multipatch_factor_patches(s->part));
  s->local_s = wall_time() - t0;
  t0 = wall_time();
  /* The options first: PCBDDC (-feaccel_pc_type bddc) takes the matrix
   * unassembled, every other preconditioner assembled. */
  FEA_PETSC_CALL(ctx, KSPSetFromOptions(s->ksp));
  PC pc;
  PetscBool bddc = PETSC_FALSE;
  FEA_PETSC_CALL(ctx, KSPGetPC(s->ksp, &pc));
  FEA_PETSC_CALL(ctx, PetscObjectTypeCompare((PetscObject)pc, PCBDDC, &bddc));
  FEA_CALL(mp_interface_matrix(s, bddc == PETSC_TRUE));
  if (!s->x) { /* both forms split the rows as PETSC_DECIDE does */
    FEA_PETSC_CALL(ctx, MatCreateVecs(s->A, &s->x, &s->b));
    FEA_PETSC_CALL(ctx, VecScatterCreateToAll(s->x, &s->to_all, &s->x_all));
  }
  FEA_PETSC_CALL(ctx, KSPSetOperators(s->ksp, s->A, s->A));
  FEA_PETSC_CALL(ctx, KSPSetUp(s->ksp));
  s->interface_s = wall_time() - t0;
  s->ready = 1;
  return FEA_SUCCESS;
}

fea_status fea_petsc_multipatch_setup(fea_petsc_multipatch *solver) {
  FEA_CHECK_NULL(solver, NULL);
  fea_petsc_quiet_push();
  const fea_status st = mp_setup(solver);
  fea_petsc_quiet_pop();
  return st;
}

static fea_status mp_solve(fea_petsc_multipatch *s, const double *b, double *x) {
  fea_context *ctx = s->ctx;
  const fea_index nf = s->pb->num_free;
  double *rhs = calloc((size_t)(s->ni ? s->ni : 1), sizeof *rhs);
  PetscInt *idx = malloc((size_t)(s->ni ? s->ni : 1) * sizeof *idx);
  if (!rhs || !idx) {
    free(rhs);
    free(idx);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld interface values",
                     (long long)s->ni);
  }
  fea_status st = fea_multipatch_condense(s->part, 1, b, nf > 0 ? nf : 1, rhs);
  PetscInt m = 0;
  for (PetscInt i = 0; i < s->ni; i++)
    if (rhs[i] != 0.0) idx[m] = s->prow[i], rhs[m++] = rhs[i];
  PetscErrorCode e = 0;
  if (st == FEA_SUCCESS) {
    e = VecSet(s->b, 0.0);
    if (!e) e = VecSetValues(s->b, m, idx, rhs, ADD_VALUES);
    if (!e) e = VecAssemblyBegin(s->b);
    if (!e) e = VecAssemblyEnd(s->b);
    if (!e) e = KSPSolve(s->ksp, s->b, s->x);
    if (!e) e = VecScatterBegin(s->to_all, s->x, s->x_all, INSERT_VALUES, SCATTER_FORWARD);
    if (!e) e = VecScatterEnd(s->to_all, s->x, s->x_all, INSERT_VALUES, SCATTER_FORWARD);
    if (e) st = fea_petsc_error(ctx, e, "the interface solve", __FILE__, __LINE__, __func__);
  }
  free(rhs);
  free(idx);
  KSPConvergedReason reason = KSP_CONVERGED_ITERATING;
  PetscInt its = 0;
  if (st == FEA_SUCCESS) {
    FEA_PETSC_CALL(ctx, KSPGetConvergedReason(s->ksp, &reason));
    FEA_PETSC_CALL(ctx, KSPGetIterationNumber(s->ksp, &its));
    s->iterations = (int)its;
    const PetscScalar *xa = NULL;
    double *xi = malloc((size_t)(s->ni ? s->ni : 1) * sizeof *xi);
    FEA_CHECK(xi, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld interface values",
              (long long)s->ni);
    const PetscErrorCode e2 = VecGetArrayRead(s->x_all, &xa);
    if (e2) free(xi);
    FEA_PETSC_CALL(ctx, e2);
    for (PetscInt i = 0; i < s->ni; i++) xi[i] = xa[s->prow[i]];
    FEA_PETSC_CALL(ctx, VecRestoreArrayRead(s->x_all, &xa));
    memset(x, 0, (size_t)nf * sizeof *x);
    st = fea_multipatch_expand(s->part, xi, x, nf > 0 ? nf : 1, 1);
    free(xi);
  }
  /* Every rank takes part in the sum, even after a local failure. */
  int ok = st == FEA_SUCCESS, all_ok = 0;
  FEA_CHECK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, s->comm) == MPI_SUCCESS, ctx,
            FEA_ERR_BACKEND, "MPI_Allreduce of the solve's status failed");
  if (!ok) return st;
  FEA_CHECK(all_ok, ctx, FEA_ERR_BACKEND, "the solve failed on another rank");
  FEA_CHECK(MPI_Allreduce(MPI_IN_PLACE, x, (int)nf, MPI_DOUBLE, MPI_SUM, s->comm) == MPI_SUCCESS,
            ctx, FEA_ERR_BACKEND, "MPI_Allreduce of the %lld solution values failed",
            (long long)nf);
  if (reason < 0)
    return FEA_ERROR(ctx, FEA_WARN_NOT_CONVERGED,
                     "the interface KSP stopped without converging (%s after %d iterations)",
                     KSPConvergedReasons[reason], s->iterations);
  return FEA_SUCCESS;
}

fea_status fea_petsc_multipatch_solve(fea_petsc_multipatch *solver, const double *b, double *x) {
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK(x || solver->pb->num_free == 0, solver->ctx, FEA_ERR_INVALID_ARG,
            "argument 'x' is NULL");
  FEA_CHECK(solver->ready, solver->ctx, FEA_ERR_STATE,
            "the solver is not set up: call fea_petsc_multipatch_setup() first");
  const double t0 = wall_time();
  fea_petsc_quiet_push();
  const fea_status st = mp_solve(solver, b, x);
  fea_petsc_quiet_pop();
  solver->solve_s = wall_time() - t0;
  return st;
}

fea_status fea_petsc_multipatch_get_stats(const fea_petsc_multipatch *solver,
                                          fea_petsc_multipatch_stats *stats) {
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(stats, solver->ctx);
  fea_multipatch_stats part = FEA_MULTIPATCH_STATS_INIT;
  FEA_CALL(fea_solver_get_multipatch_stats(solver->part, &part));
  fea_petsc_multipatch_stats full = FEA_PETSC_MULTIPATCH_STATS_INIT;
  full.ranks = solver->size;
  full.local_patches = solver->local_patches;
  full.local_dofs = solver->local_dofs;
  full.interface_dofs = solver->ni;
  full.local_s = solver->ready ? solver->local_s : 0;
  full.interface_s = solver->ready ? solver->interface_s : 0;
  full.solve_s = solver->solve_s;
  full.iterations = solver->iterations;
  full.local_bytes = part.patch_bytes;
  return fea_struct_copy_out(solver->ctx, stats, &full, "stats", &stats_type);
}

fea_status fea_petsc_multipatch_get_patch_rank(const fea_petsc_multipatch *solver, int patch,
                                               int *rank) {
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(rank, solver->ctx);
  const int np = solver->pb->mp->num_patches;
  FEA_CHECK(patch >= 0 && patch < np, solver->ctx, FEA_ERR_INVALID_ARG,
            "patch %d is outside [0, %d)", patch, np);
  *rank = solver->owner[patch];
  return FEA_SUCCESS;
}

fea_status fea_petsc_multipatch_destroy(fea_petsc_multipatch **solver) {
  if (!solver || !*solver) return FEA_SUCCESS;
  fea_petsc_quiet_push();
  mp_release(*solver);
  fea_petsc_quiet_pop();
  *solver = NULL;
  return FEA_SUCCESS;
}
