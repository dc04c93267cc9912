/* Multipatch domains (src/multipatch/): the patches and their interfaces,
 * the global DoF numbering, the Poisson problem over all patches and the
 * direct solver that couples the patches' boundary Schur complements. */
#ifndef FEA_INTERNAL_MULTIPATCH_H
#define FEA_INTERNAL_MULTIPATCH_H

#include <feaccel/multipatch.h>

#include "internal/object.h"
#include "internal/private-export.h"
#include "disc/problem.h"
#include "disc/space.h"

/* One interface: side[0] of patch[0] is side[1] of patch[1]. Side DoFs are
 * numbered over the side's tangential directions (the patch's directions
 * other than side / 2, in order), the first fastest. */
typedef struct fea_multipatch_link {
  int patch[2];
  int side[2];
  int flip[2]; /* per tangential direction of side 0: runs against side 1's */
  int swap;    /* 3D: side 0's tangential direction 0 is side 1's direction 1 */
  fea_index num_dofs;
} fea_multipatch_link;

struct fea_multipatch {
  FEA_OBJECT_HEADER;
  int dim;
  int num_patches;
  fea_space **patches; /* each holds a reference */
  double tolerance;    /* absolute: the relative one times the domain's diameter */
  int num_links;
  fea_multipatch_link *links;
  int num_boundary_sides;
  int *boundary_sides; /* patch * 6 + side, ascending */
  int ncomp;           /* components of every patch's space (1: scalar) */
  /* DoFs count components: with ncomp > 1, patch DoF c + ncomp i (the
   * space's interleaved numbering) is global DoF c + ncomp G for the global
   * function G of its function i (numbering.c). Interfaces and side grids
   * (fea_side_grid, links) count functions. */
  fea_index num_dofs;
  fea_index *patch_off; /* num_patches + 1: patch p's DoFs at [patch_off[p], patch_off[p + 1]) */
  fea_index *global;    /* per patch DoF (at patch_off): its global DoF */
};

/* The domain of num_patches checked B-spline spaces of one dimension and
 * context (src/multipatch/domain.c); tolerance relative to its diameter. */
fea_status fea_multipatch_build(fea_context *ctx, int num_patches, fea_space *const *patches,
                                double tolerance, fea_multipatch **out);

/* A domain of the same topology as like (its interfaces, orientations and
 * boundary sides) on other spaces of the same patches, e.g. each coarsened
 * alike for multigrid: no geometry is compared (domain.c). A side whose DoF
 * count differs from its partner's is FEA_ERR_INVALID_ARG naming both. */
fea_status fea_multipatch_build_like(const fea_multipatch *like, fea_space *const *patches,
                                     fea_multipatch **out);

/* Side s of a patch as a grid of DoFs: the fixed direction, its index there
 * (0 or n - 1), and up to two tangential directions. */
typedef struct fea_side_grid {
  int fixed, at;
  int tdir[2];    /* tangential directions (-1 beyond dim - 1) */
  fea_index m[2]; /* DoFs along them (1 beyond dim - 1) */
  fea_index stride[3];
} fea_side_grid;

void fea_side_grid_of(const fea_space *s, int side, fea_side_grid *g);
/* The patch DoF at tangential position (i, j) of side grid g. */
static inline fea_index fea_side_grid_dof(const fea_side_grid *g, fea_index i, fea_index j) {
  fea_index d = g->at * g->stride[g->fixed];
  if (g->tdir[0] >= 0) d += i * g->stride[g->tdir[0]];
  if (g->tdir[1] >= 0) d += j * g->stride[g->tdir[1]];
  return d;
}

/* The anchors of B-spline DoFs: each DoF's Greville point, mapped by the
 * patch's geometry (or its box) to physical space. x: count x dim. */
fea_status fea_multipatch_dof_anchors(const fea_space *s, fea_index count, const fea_index *dofs,
                                      double *x);

/* The anchor of every global function of mp (num_dofs / ncomp of them; x:
 * that many x dim): the coordinates the PETSc library builds the
 * rigid-body near-null space from. */
FEA_PRIVATE_EXPORT fea_status fea_multipatch_function_anchors(const fea_multipatch *mp, double *x);

/* The physical point of patch s at relative parameter u (each in [0, 1]
 * across the patch's knot range). */
void fea_multipatch_patch_point(const fea_space *s, const double u[3], double *x);

/* FEA_ERR_INVALID_ARG naming the first two patches of mp that cover the
 * same region (mp->tolerance absolute): src/multipatch/overlap.c. */
fea_status fea_multipatch_check_overlap(const fea_multipatch *mp);

/* Find the interfaces and number the global DoFs of mp (patches, dim and
 * the relative tolerance in mp->tolerance set): src/multipatch/interfaces.c
 * and numbering.c. */
fea_status fea_multipatch_find_interfaces(fea_multipatch *mp);
fea_status fea_multipatch_number_dofs(fea_multipatch *mp);
/* Whether side s of patch p lies on an interface. */
int fea_multipatch_side_is_interface(const fea_multipatch *mp, int p, int s);

struct fea_multipatch_problem {
  FEA_OBJECT_HEADER;
  fea_multipatch *mp;     /* holds a reference */
  fea_problem **patch_pb; /* per patch: its problem, Dirichlet made consistent across patches */
  fea_index num_free;
  fea_index *free_index; /* per global DoF: its free row, or -1 (Dirichlet) */
  double *dirichlet;     /* per global DoF: the Dirichlet value (0 on free DoFs) */
  int elastic;           /* 1: linear elasticity (patch problems of fea_problem_build_elastic) */
};

/* The problem: desc complete and checked (coefficients), bcs checked
 * against mp's boundary sides (src/multipatch/multipatch-problem.c). */
fea_status fea_multipatch_problem_build(fea_multipatch *mp, const fea_problem_desc *desc,
                                        int num_bcs, const fea_multipatch_bc *bcs,
                                        fea_multipatch_problem **out);
/* The elasticity problem: desc complete and checked (its sides ignored),
 * materials NULL or num_patches complete descriptors whose material fields
 * replace desc's on their patch, bcs checked against mp's boundary sides. */
fea_status fea_multipatch_problem_build_elastic(fea_multipatch *mp, const fea_elasticity_desc *desc,
                                                const fea_elasticity_desc *materials, int num_bcs,
                                                const fea_multipatch_elastic_bc *bcs,
                                                fea_multipatch_problem **out);
/* FEA_ERR_INVALID_ARG naming the rigid-body modes that no fixed DoF of an
 * elasticity problem removes (src/multipatch/multipatch-rigid.c). */
fea_status fea_multipatch_check_rigid_modes(const fea_multipatch_problem *pb);
fea_status fea_multipatch_problem_reference(const fea_multipatch_problem *pb, double *b,
                                            fea_matrix **A);
void fea_multipatch_problem_expand(const fea_multipatch_problem *pb, const double *u_free,
                                   double *u_full);
fea_status fea_multipatch_problem_norms(const fea_multipatch_problem *pb, const double *u_full,
                                        fea_scalar_fn exact, fea_gradient_fn exact_grad, void *user,
                                        double *l2, double *h1_semi);
/* Per component and together (ncomp + 1 entries each). */
fea_status fea_multipatch_problem_norms_vector(const fea_multipatch_problem *pb,
                                               const double *u_full, fea_vector_fn exact,
                                               fea_vector_fn exact_grad, void *user, double *l2,
                                               double *h1_semi);

/* The multipatch solver kind (src/multipatch/multipatch-solver-kind.c): every patch,
 * the dense interface system, the solver ops. */
struct fea_solver;
fea_status fea_multipatch_solver_create(fea_context *ctx, fea_multipatch_problem *pb,
                                        const fea_solver_desc *d, struct fea_solver **out);
void fea_multipatch_solver_stats(const struct fea_solver *s, fea_multipatch_stats *full);

/* B-spline multigrid on the domain (src/multipatch/multipatch-mg.c): the
 * check (FEA_ERR_UNSUPPORTED for an elasticity problem, FEA_ERR_INVALID_ARG
 * without free DoFs), the hierarchy for d (complete and checked by
 * fea_mg_create_given), and the solver (kind multigrid) around it. */
struct fea_mg;
fea_status fea_multipatch_mg_check(const fea_multipatch_problem *pb);
fea_status fea_multipatch_mg_build(fea_multipatch_problem *pb, const fea_multigrid_desc *d,
                                   struct fea_mg **out);
fea_status fea_multipatch_mg_solver_create(fea_context *ctx, fea_multipatch_problem *pb,
                                           const fea_multigrid_desc *d, struct fea_solver **out);

/* Its phases, for a solver that owns only some patches (mine[p] != 0) and
 * keeps the interface system elsewhere (the PETSc library: one process's
 * patches, a distributed interface matrix). Such a solver is driven only
 * through these; its ops' setup and solve are not used.
 * - factor_patches: the owned patches' numeric setup.
 * - patch_schur: owned patch p's boundary Schur complement S (r x r, both
 *   triangles, r = patch_boundary_size) and each boundary DoF's interface
 *   row (-1 for a Dirichlet DoF).
 * - condense: add the owned patches' condensed right-hand sides (b over
 *   the free global DoFs, NULL for the problem's load with nrhs = 1) into
 *   rhs (interface_size x nrhs, ld interface_size); keeps per-patch state.
 * - expand: from the interface solution xi (same layout), back-substitute
 *   the owned patches and write their free DoFs into x; with owned_only
 *   only the DoFs whose first patch is owned (each DoF by one process). */
FEA_PRIVATE_EXPORT fea_status fea_multipatch_solver_create_part(fea_context *ctx,
                                                                fea_multipatch_problem *pb,
                                                                const fea_solver_desc *d,
                                                                const unsigned char *mine,
                                                                struct fea_solver **out);
FEA_PRIVATE_EXPORT fea_status fea_multipatch_factor_patches(struct fea_solver *s);
FEA_PRIVATE_EXPORT fea_index fea_multipatch_interface_size(const struct fea_solver *s);
/* The global DoF of each interface row (interface_size of them, ascending). */
FEA_PRIVATE_EXPORT void fea_multipatch_interface_dofs(const struct fea_solver *s, fea_index *dofs);
FEA_PRIVATE_EXPORT fea_index fea_multipatch_patch_boundary_size(const struct fea_solver *s, int p);
FEA_PRIVATE_EXPORT fea_status fea_multipatch_patch_schur(const struct fea_solver *s, int p,
                                                         fea_index *rows, double *S);
FEA_PRIVATE_EXPORT fea_status fea_multipatch_condense(struct fea_solver *s, fea_index nrhs,
                                                      const double *b, fea_index ldb, double *rhs);
FEA_PRIVATE_EXPORT fea_status fea_multipatch_expand(struct fea_solver *s, const double *xi,
                                                    double *x, fea_index ldx, int owned_only);

#endif
