/* The solver object's life: allocation with the references a solver holds,
 * and its release through the kind's destroy. The kinds (src/multifrontal/,
 * src/multipatch/, ...) and the interface build on it; kept in base so that
 * a family composing other kinds (multipatch) allocates them without
 * calling up into the interface. */
#include <stdlib.h>

#include "internal/error.h"
#include "base/solver-object.h"

static void solver_free(void *object) {
  fea_solver *s = object;
  if (s->data && s->ops->destroy) s->ops->destroy(s);
  if (s->problem) fea_object_release(s->problem);
  if (s->space) fea_object_release(s->space);
  free(s);
}

fea_status fea_solver_alloc_bare(fea_context *ctx, fea_index num_free, fea_solver_kind kind,
                                 const fea_solver_ops *ops, fea_solver **out) {
  fea_solver *s;
  FEA_CALL(fea_object_alloc(ctx, sizeof *s, "solver", solver_free, (void **)&s));
  s->kind = kind;
  s->ops = ops;
  s->num_free = num_free;
  *out = s;
  return FEA_SUCCESS;
}

fea_status fea_solver_alloc(fea_context *ctx, fea_problem *problem, fea_space *space,
                            fea_index num_free, fea_solver_kind kind, const fea_solver_ops *ops,
                            fea_solver **out) {
  FEA_CALL(fea_solver_alloc_bare(ctx, num_free, kind, ops, out));
  fea_solver *s = *out;
  s->space = space;
  fea_object_retain(s->space);
  s->problem = problem;
  fea_object_retain(problem);
  return FEA_SUCCESS;
}

void fea_solver_free(fea_solver *s) { fea_object_release(s); }

fea_status fea_solver_check_kind(const fea_solver *s, fea_solver_kind kind, const char *what) {
  static const char *const names[] = {"multifrontal", "prehandled", "multigrid", "multipatch"};
  FEA_CHECK(s->kind == kind, s->ctx, FEA_ERR_INVALID_ARG,
            "%s needs a %s solver; this one is a %s solver", what, names[kind], s->ops->name);
  return FEA_SUCCESS;
}
