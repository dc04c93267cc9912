/**
 * @file petsc.h
 * @brief libfeaccel inside PETSc (the optional library libfeaccel-petsc, docs/distributed.md):
 *        operators as shell matrices, solvers as shell preconditioners, and the multipatch
 *        direct solver over MPI ranks.
 *
 * This header and its library exist when libfeaccel was built with PETSc and MPI
 * (`-Dpetsc=auto` finds them; pkg-config `feaccel-petsc`). The core library, libfeaccel.so,
 * links neither. Link a program that includes this header with `feaccel-petsc`, and call
 * PetscInitialize() before any function here.
 *
 * PETSc errors inside these functions never reach PETSc's default handler: each function
 * returns FEA_ERR_BACKEND with PETSc's message as the context's last error. Errors raised by
 * libfeaccel inside a PETSc callback (MatMult of a shell matrix, PCApply of a shell
 * preconditioner) come back from PETSc as PETSC_ERR_LIB with libfeaccel's message.
 *
 * @par Errors common to this header
 * Every function returning fea_status returns FEA_ERR_INVALID_ARG for a NULL handle or output
 * pointer, FEA_ERR_OUT_OF_MEMORY when an allocation fails, and FEA_ERR_BACKEND when a PETSc
 * or MPI call fails (naming the call and PETSc's message).
 */
#ifndef FEACCEL_PETSC_H
#define FEACCEL_PETSC_H

#include <stddef.h>
#include <stdint.h>

#include <petscksp.h>

#include <feaccel/export.h>
#include <feaccel/multipatch.h>
#include <feaccel/operator.h>
#include <feaccel/solver.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/**
 * @brief A sequential PETSc shell matrix (PETSC_COMM_SELF) applying @p op: MatMult, MatMultAdd
 *        and MatGetDiagonal go to fea_operator_apply(), fea_operator_apply_add() and
 *        fea_operator_get_diagonal(). The matrix holds a reference on the operator.
 * @param[out] A the matrix (MatDestroy())
 * @retval FEA_ERR_DIMENSION for an operator with more rows than PetscInt holds
 * @since 0.1.0
 */
FEA_API fea_status fea_petsc_mat_create(fea_operator *op, Mat *A);

/**
 * @brief Make @p pc a shell preconditioner whose apply is fea_solver_solve() of @p solver
 *        (set up by the caller, before or after this call; a multigrid solver with
 *        max_iterations = 1 and krylov = 0 is one cycle). The preconditioner holds a reference
 *        on the solver.
 * @retval FEA_ERR_DIMENSION for a solver with more rows than PetscInt holds
 * @since 0.1.0
 */
FEA_API fea_status fea_petsc_pc_set_solver(PC pc, fea_solver *solver);

/** The multipatch direct solver over the ranks of an MPI communicator. @since 0.1.0 */
typedef struct fea_petsc_multipatch fea_petsc_multipatch;

/**
 * @brief Create the distributed multipatch solver of @p problem on @p comm.
 *
 * Every rank passes the same problem (each builds the domain; patches are cheap to describe).
 * The patches are shared among the ranks as connected groups (fea_petsc_multipatch_get_patch_rank());
 * a rank builds and factors only its own patches' multifrontal trees. The
 * interface system is a distributed PETSc matrix (MPIAIJ through the COO interface) solved by
 * a KSP with options prefix `feaccel_`: by default preonly with MUMPS's LU where PETSc has
 * MUMPS (`-feaccel_ksp_type cg -feaccel_pc_type jacobi`, and any other KSP options, override).
 * With `-feaccel_pc_type bddc` the matrix is unassembled (MATIS: each rank's patches form its
 * subdomain's Neumann matrix) for PCBDDC. On an elasticity problem
 * (fea_multipatch_problem_create_elasticity()) the matrix has block size ncomp (a function's
 * components one block; a component fixed by a roller an identity row scaled to the mean
 * diagonal) and the rigid-body modes as its near-null space (MatSetNearNullSpace, from the
 * functions' anchors), so `-feaccel_ksp_type cg -feaccel_pc_type gamg` works as it is;
 * `-feaccel_near_null_space false` leaves the modes off.
 * @param desc the patches' tree options (as fea_solver_create_multipatch()), or NULL
 * @retval FEA_ERR_INVALID_ARG for a problem of another context, a communicator with more ranks
 *         than the domain has patches (naming the rank without a patch), keep_boundary set, or
 *         a merge out of range
 * @retval FEA_ERR_UNSUPPORTED for a backend without multifrontal ops
 * @retval FEA_ERR_DIMENSION for an interface with more DoFs than PetscInt holds
 * @since 0.1.0
 */
FEA_API fea_status fea_petsc_multipatch_create(MPI_Comm comm, fea_context *ctx,
                                               fea_multipatch_problem *problem,
                                               const fea_solver_desc *desc,
                                               fea_petsc_multipatch **out);

/**
 * @brief Factor this rank's patches, assemble and factor the interface system (collective).
 * @retval FEA_ERR_NOT_POSDEF when a patch's front is not positive definite (naming the node)
 * @retval FEA_ERR_OUT_OF_MEMORY as fea_solver_setup() for a patch
 * @since 0.1.0
 */
FEA_API fea_status fea_petsc_multipatch_setup(fea_petsc_multipatch *solver);

/**
 * @brief Solve for one right-hand side (collective). @p b and @p x are the whole vectors over
 *        the problem's free global DoFs on every rank (replicated); @p b NULL takes the
 *        problem's own load. Every rank receives the whole solution.
 * @retval FEA_ERR_STATE before fea_petsc_multipatch_setup()
 * @retval FEA_WARN_NOT_CONVERGED when an iterative interface KSP stopped without converging
 *         (x holds its last iterate)
 * @since 0.1.0
 */
FEA_API fea_status fea_petsc_multipatch_solve(fea_petsc_multipatch *solver, const double *b,
                                              double *x);

/** Facts about one rank's part; initialize with FEA_PETSC_MULTIPATCH_STATS_INIT. @since 0.1.0 */
typedef struct fea_petsc_multipatch_stats {
  size_t size;              /**< sizeof(fea_petsc_multipatch_stats) as compiled by the caller */
  int ranks;                /**< ranks of the communicator */
  int local_patches;        /**< patches this rank owns */
  fea_index local_dofs;     /**< DoFs of this rank's patches */
  fea_index interface_dofs; /**< rows of the interface system */
  double local_s;           /**< this rank's patch factorizations (last setup) */
  double interface_s;       /**< interface assembly and factorization (last setup) */
  double solve_s;           /**< the last solve */
  int iterations;           /**< the interface KSP's iterations in the last solve */
  uint64_t local_bytes;     /**< this rank's patches' peak setup memory estimates */
} fea_petsc_multipatch_stats;

/** Initializer for fea_petsc_multipatch_stats. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_PETSC_MULTIPATCH_STATS_INIT                                                          \
  {                                                                                              \
    .size = sizeof(fea_petsc_multipatch_stats), .ranks = 0, .local_patches = 0, .local_dofs = 0, \
    .interface_dofs = 0, .local_s = 0.0, .interface_s = 0.0, .solve_s = 0.0, .iterations = 0,    \
    .local_bytes = 0                                                                             \
  }
#else
#define FEA_PETSC_MULTIPATCH_STATS_INIT \
  { sizeof(fea_petsc_multipatch_stats), 0, 0, 0, 0, 0.0, 0.0, 0.0, 0, 0 }
#endif

/**
 * @brief Fill @p stats (whose .size the caller set) with this rank's figures.
 * @retval FEA_ERR_INVALID_ARG for a .size outside the accepted sizes
 * @since 0.1.0
 */
FEA_API fea_status fea_petsc_multipatch_get_stats(const fea_petsc_multipatch *solver,
                                                  fea_petsc_multipatch_stats *stats);

/**
 * @brief The rank that owns patch @p patch (the same answer on every rank). Patches go to ranks
 *        by PETSc's graph partitioner on the patch graph (vertices weighted by DoFs, edges by
 *        interface DoFs; PT-Scotch where PETSc has it, `-feaccel_mat_partitioning_type` picks
 *        another), falling back to a greedy split by DoFs where it fails or leaves a rank empty.
 * @retval FEA_ERR_INVALID_ARG for @p patch outside [0, num_patches)
 * @since 0.1.0
 */
FEA_API fea_status fea_petsc_multipatch_get_patch_rank(const fea_petsc_multipatch *solver,
                                                       int patch, int *rank);

/** @brief Destroy the solver (collective; accepts NULL; sets `*solver = NULL`). @since 0.1.0 */
FEA_EXPORT fea_status fea_petsc_multipatch_destroy(fea_petsc_multipatch **solver);

FEA_END_DECLS

#endif /* FEACCEL_PETSC_H */
