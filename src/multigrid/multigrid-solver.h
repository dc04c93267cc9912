/* The multigrid solver kind behind fea_solver_create_multigrid
 * (src/multigrid/multigrid-solver-kind.c). */
#ifndef FEA_INTERNAL_MULTIGRID_SOLVER_H
#define FEA_INTERNAL_MULTIGRID_SOLVER_H

#include "multigrid.h"
#include "base/solver-object.h"

extern const fea_solver_ops fea_mg_solver_ops;

/* Attach the kind's state to s (made by fea_solver_alloc with
 * fea_mg_solver_ops): d complete and checked, mg the hierarchy built
 * for s's problem, which the first setup takes over (the caller still owns
 * mg when this fails). */
fea_status fea_mg_solver_attach(fea_solver *s, const fea_multigrid_desc *d, fea_mg *mg);

/* The same for levels built elsewhere (fea_mg_create_given): a later setup
 * calls rebuild(user) for a new hierarchy, and the solver's destruction
 * release(user); when this fails the caller still owns mg and user. */
fea_status fea_mg_solver_attach_given(fea_solver *s, const fea_multigrid_desc *d, fea_mg *mg,
                                      fea_status (*rebuild)(void *user, fea_mg **out),
                                      void (*release)(void *user), void *user);

/* Complete stats of s (zero before a setup). */
void fea_mg_solver_get_stats(const fea_solver *s, fea_multigrid_stats *full);

#endif
