/* The solver object: one handle, one small ops table per kind (multifrontal,
 * prehandled, multigrid), in the PETSc create -> setup -> solve manner.
 * src/interface/api-solver.c checks the arguments common to every kind and
 * dispatches; each kind (its family's <family>-solver-kind.c) fills the ops. */
#ifndef FEA_INTERNAL_SOLVER_H
#define FEA_INTERNAL_SOLVER_H

#include <feaccel/solver.h>

#include "clock.h"
#include "memory-limit.h"
#include "internal/object.h"
#include <feaccel/problem.h>
#include <feaccel/space.h>

typedef enum fea_solver_kind {
  FEA_SOLVER_MULTIFRONTAL = 0,
  FEA_SOLVER_PREHANDLED = 1,
  FEA_SOLVER_MULTIGRID = 2,
  FEA_SOLVER_MULTIPATCH = 3
} fea_solver_kind;

typedef struct fea_solver_ops {
  const char *name; /* for messages: "multifrontal", ... */
  /* Checks that problem (already checked to be on the solver's space) suits
   * the kind; NULL: every problem on the space does. */
  fea_status (*check_problem)(const fea_solver *s, const fea_problem *problem);
  /* Forget the numeric setup (after the problem changed); clears s->ready. */
  void (*reset)(fea_solver *s);
  /* Checks first; then calls reset and builds. */
  fea_status (*setup)(fea_solver *s);
  /* nrhs >= 1 columns; b NULL (nrhs = 1): the problem's own load. Arguments
   * are checked and the solver is set up. */
  fea_status (*solve)(fea_solver *s, fea_index nrhs, const double *b, fea_index ldb, double *x,
                      fea_index ldx);
  void (*destroy)(fea_solver *s); /* frees s->data */
} fea_solver_ops;

struct fea_solver {
  FEA_OBJECT_HEADER;
  fea_space *space;     /* holds a reference; NULL for a multipatch solver */
  fea_problem *problem; /* holds a reference; NULL for a multipatch solver */
  fea_index num_free;   /* rows of the right-hand sides and solutions */
  fea_solver_kind kind;
  const fea_solver_ops *ops;
  void *data; /* the kind's state */
  int ready;  /* setup completed on the current problem */
};

/* A solver of the given kind with references on the context, problem and
 * the problem's space (num_free: the problem's free DoFs; the caller reads
 * both from the problem, which base does not look into); data NULL. The
 * caller fills data and frees with fea_solver_free on failure. */
fea_status fea_solver_alloc(fea_context *ctx, fea_problem *problem, fea_space *space,
                            fea_index num_free, fea_solver_kind kind, const fea_solver_ops *ops,
                            fea_solver **out);
/* A solver without a single-space problem (multipatch): num_free rows. */
fea_status fea_solver_alloc_bare(fea_context *ctx, fea_index num_free, fea_solver_kind kind,
                                 const fea_solver_ops *ops, fea_solver **out);
void fea_solver_free(fea_solver *s);

/* The tree options of a multifrontal or multipatch solver's descriptor
 * (merge) and the backend's multifrontal ops: the interface's check shared
 * by both creators (src/interface/api-solver-multifrontal.c). */
fea_status fea_solver_check_tree_options(fea_context *ctx, const fea_solver_desc *d);

/* FEA_ERR_INVALID_ARG unless s is of the kind (for kind-specific getters). */
fea_status fea_solver_check_kind(const fea_solver *s, fea_solver_kind kind, const char *what);

#endif
