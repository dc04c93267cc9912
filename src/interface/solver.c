/* Multifrontal solver API: argument checks, the symbolic tree at creation,
 * the level walk of setup and solve through the context's multifrontal ops,
 * stats and the boundary Schur complement export.
 *
 * Numbering. The tree runs over "tree DoFs": the problem's free DoFs
 * (reduced numbering, identical to fea_problem_assemble_reference's), or,
 * with keep_boundary, every DoF of the space (space numbering) so that the
 * boundary DoFs can stay in the root. Right-hand sides and solutions of the
 * API are always in the problem's reduced numbering.
 *
 * Problems have no reference count, so the solver keeps its own copy (made
 * from the caller's complete descriptor): the caller may destroy theirs. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "error.h"
#include "etree.h"
#include "multifrontal.h"
#include "problem.h"

struct fea_solver {
  fea_context *ctx;           /* holds a reference */
  fea_space *space;           /* holds a reference */
  fea_problem *problem;       /* the solver's own copy of the caller's problem */
  fea_solver_desc desc;       /* complete */
  fea_index *tree_index;      /* per space DoF: its tree DoF, or -1 */
  fea_index *tree_of_free;    /* per problem free DoF: its tree DoF */
  fea_etree tree;
  fea_mf_factor factor;
  int factored;               /* setup completed on the current problem */
  double *level_s;            /* per level: factorization time of the last setup */
  double integrate_s, factor_s, root_s, forward_s, backward_s;
};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void release_factor(fea_solver *s) {
  if (s->factor.tree && s->ctx->mf.factor_release) s->ctx->mf.factor_release(s->ctx, &s->factor);
  s->factored = 0;
}

static void solver_free(fea_solver *s) {
  if (!s) return;
  release_factor(s);
  fea_etree_free(&s->tree);
  free(s->tree_index);
  free(s->tree_of_free);
  free(s->level_s);
  if (s->problem) (void)fea_problem_destroy(&s->problem);
  if (s->space) fea_space_release(s->space);
  if (s->ctx) fea_context_release(s->ctx);
  free(s);
}

/* The tree numbering and the map from the problem's free DoFs into it. */
static fea_status number_dofs(fea_solver *s) {
  const fea_index nd = s->space->num_dofs, nf = s->problem->num_free;
  s->tree_index = malloc((size_t)(nd ? nd : 1) * sizeof *s->tree_index);
  s->tree_of_free = malloc((size_t)(nf ? nf : 1) * sizeof *s->tree_of_free);
  FEA_CHECK(s->tree_index && s->tree_of_free, s->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the numbering of %lld DoFs", (long long)nd);
  for (fea_index d = 0; d < nd; d++) {
    fea_index f = s->problem->free_index[d];
    s->tree_index[d] = s->desc.keep_boundary ? d : f;
    if (f >= 0) s->tree_of_free[f] = s->tree_index[d];
  }
  return FEA_SUCCESS;
}

static fea_status check_problem(const fea_context *ctx, const fea_space *space,
                                const fea_problem *problem) {
  FEA_CHECK(problem->space == space, ctx, FEA_ERR_INVALID_ARG,
            "the problem is defined on another space (%lld DoFs) than the solver's (%lld DoFs)",
            (long long)problem->space->num_dofs, (long long)space->num_dofs);
  return FEA_SUCCESS;
}

fea_status fea_solver_create_multifrontal(fea_context *ctx, fea_space *space,
                                          fea_problem *problem, const fea_solver_desc *desc,
                                          fea_solver **out) {
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(space, ctx);
  FEA_CHECK_NULL(problem, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_solver_desc d = FEA_SOLVER_DESC_INIT;
  if (desc) {
    const size_t min_size = offsetof(fea_solver_desc, merge);
    FEA_CHECK(desc->size >= min_size, ctx, FEA_ERR_INVALID_ARG,
              "desc.size is %zu, smaller than any fea_solver_desc (%zu); initialize it with "
              "FEA_SOLVER_DESC_INIT", desc->size, min_size);
    memcpy(&d, desc, desc->size < sizeof d ? desc->size : sizeof d);
    d.size = sizeof d;
  }
  FEA_CHECK(space->ctx == ctx, ctx, FEA_ERR_INVALID_ARG,
            "the space was created on another context");
  FEA_CHECK(space->kind == FEA_SPACE_BSPLINE, ctx, FEA_ERR_UNSUPPORTED,
            "the multifrontal solver needs a B-spline space; this one is a %s space",
            space->kind == FEA_SPACE_LAGRANGE ? "Lagrange" : "non-B-spline");
  FEA_CALL(check_problem(ctx, space, problem));
  FEA_CHECK(d.merge == FEA_MF_MERGE_AUTO || d.merge == FEA_MF_MERGE_TENSOR ||
                d.merge == FEA_MF_MERGE_PAIRWISE,
            ctx, FEA_ERR_INVALID_ARG, "desc.merge = %d is not AUTO (0), TENSOR (1) or PAIRWISE (2)",
            (int)d.merge);
  FEA_CHECK(d.keep_boundary == 0 || d.keep_boundary == 1, ctx, FEA_ERR_INVALID_ARG,
            "desc.keep_boundary = %d is not 0 or 1", d.keep_boundary);
  FEA_CHECK(ctx->mf.factor_alloc && ctx->mf.factor_release && ctx->mf.factor_level &&
                ctx->mf.forward_level && ctx->mf.backward_level,
            ctx, FEA_ERR_UNSUPPORTED, "backend %s has no multifrontal ops", ctx->backend->prefix);

  fea_solver *s = calloc(1, sizeof *s);
  FEA_CHECK(s, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a solver");
  s->ctx = ctx;
  fea_context_retain(ctx);
  s->space = space;
  fea_space_retain(space);
  s->desc = d;
  fea_status st = fea_problem_create_poisson(space, &problem->desc, &s->problem);
  if (st == FEA_SUCCESS) st = number_dofs(s);
  if (st == FEA_SUCCESS) st = fea_etree_build(space, s->tree_index, d.merge, d.keep_boundary, &s->tree);
  if (st == FEA_SUCCESS) {
    s->level_s = calloc((size_t)s->tree.num_levels, sizeof *s->level_s);
    if (!s->level_s) st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for level times");
  }
  if (st != FEA_SUCCESS) {
    solver_free(s);
    return st;
  }
  *out = s;
  return FEA_SUCCESS;
}

fea_status fea_solver_set_problem(fea_solver *solver, fea_problem *problem) {
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(problem, solver->ctx);
  FEA_CALL(check_problem(solver->ctx, solver->space, problem));
  /* Same space, so the same free DoFs: the numbering and the tree stay. */
  fea_problem *copy = NULL;
  FEA_CALL(fea_problem_create_poisson(solver->space, &problem->desc, &copy));
  release_factor(solver);
  fea_problem_destroy(&solver->problem);
  solver->problem = copy;
  return FEA_SUCCESS;
}

/* Bytes the setup may use: the descriptor's limit, else the physical memory. */
static uint64_t memory_limit(const fea_solver *s) {
  if (s->desc.memory_limit_bytes) return s->desc.memory_limit_bytes;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return UINT64_MAX; /* unknown: let malloc decide */
  return (uint64_t)pages * (uint64_t)page;
}

fea_status fea_solver_setup(fea_solver *solver) {
  FEA_CHECK_NULL(solver, NULL);
  fea_context *ctx = solver->ctx;
  const fea_etree *t = &solver->tree;
  uint64_t need = (uint64_t)t->peak_entries * sizeof(double), limit = memory_limit(solver);
  FEA_CHECK(need <= limit, ctx, FEA_ERR_OUT_OF_MEMORY,
            "the factorization needs %llu bytes (%llu of factors, front of up to %lld DoFs) but "
            "the memory limit is %llu bytes", (unsigned long long)need,
            (unsigned long long)(t->factor_entries * (fea_index)sizeof(double)),
            (long long)t->max_front, (unsigned long long)limit);
  release_factor(solver);
  fea_mf_factor *f = &solver->factor;
  memset(f, 0, sizeof *f);
  f->tree = t;
  f->problem = solver->problem;
  FEA_CALL(ctx->mf.factor_alloc(ctx, f));
  double t0 = now_s();
  for (int L = 0; L < t->num_levels; L++) {
    double tl = now_s();
    fea_status st = ctx->mf.factor_level(ctx, f, L);
    solver->level_s[L] = now_s() - tl;
    if (st < 0) {
      release_factor(solver);
      return st;
    }
  }
  solver->factor_s = now_s() - t0;
  solver->root_s = solver->level_s[t->num_levels - 1];
  solver->integrate_s = f->integrate_s;
  solver->factored = 1;
  return FEA_SUCCESS;
}

fea_status fea_solver_solve(fea_solver *solver, fea_index nrhs, const double *b, fea_index ldb,
                            double *x, fea_index ldx) {
  FEA_CHECK_NULL(solver, NULL);
  fea_context *ctx = solver->ctx;
  const fea_index nf = solver->problem->num_free, need_ld = nf > 1 ? nf : 1;
  FEA_CHECK(solver->factored, ctx, FEA_ERR_STATE,
            "the solver is not set up: call fea_solver_setup() first (after creation or "
            "fea_solver_set_problem())");
  FEA_CHECK(nrhs >= 0, ctx, FEA_ERR_INVALID_ARG, "nrhs = %lld is negative", (long long)nrhs);
  FEA_CHECK(b || nrhs == 1, ctx, FEA_ERR_INVALID_ARG,
            "b is NULL (the problem's own load) with nrhs = %lld instead of 1", (long long)nrhs);
  FEA_CHECK(!b || ldb >= need_ld, ctx, FEA_ERR_DIMENSION,
            "ldb = %lld is smaller than the %lld free DoFs", (long long)ldb, (long long)need_ld);
  FEA_CHECK(ldx >= need_ld, ctx, FEA_ERR_DIMENSION, "ldx = %lld is smaller than the %lld free DoFs",
            (long long)ldx, (long long)need_ld);
  FEA_CHECK(x || nrhs == 0 || nf == 0, ctx, FEA_ERR_INVALID_ARG, "argument 'x' is NULL");
  if (nrhs == 0 || nf == 0) return FEA_SUCCESS;
  const fea_etree *t = &solver->tree;
  const fea_index N = t->num_dofs;
  fea_mf_solve sv = {.nrhs = nrhs};
  sv.y = calloc((size_t)(N * nrhs), sizeof *sv.y);
  sv.update = calloc((size_t)t->num_nodes, sizeof *sv.update);
  fea_status st = FEA_SUCCESS;
  if (!sv.y || !sv.update) {
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld right-hand sides of %lld DoFs",
                   (long long)nrhs, (long long)N);
    goto out;
  }
  /* Tree DoFs that are not free in the problem (the kept boundary) stay 0:
   * their Dirichlet values are in the load's lifting already. */
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < nf; i++)
      sv.y[solver->tree_of_free[i] + j * N] =
          b ? b[i + j * ldb] : solver->factor.load[solver->tree_of_free[i]];
  double t0 = now_s();
  for (int L = 0; L < t->num_levels && st == FEA_SUCCESS; L++)
    st = ctx->mf.forward_level(ctx, &solver->factor, &sv, L);
  double t1 = now_s();
  /* The root's r rows (the kept boundary) are never eliminated: x = 0 there. */
  if (st == FEA_SUCCESS && t->keep_boundary) {
    const fea_etree_node *root = &t->nodes[t->num_nodes - 1];
    for (fea_index j = 0; j < nrhs; j++)
      for (fea_index i = 0; i < root->r; i++)
        sv.y[t->front_dofs[root->front_off + root->q + i] + j * N] = 0;
  }
  for (int L = t->num_levels - 1; L >= 0 && st == FEA_SUCCESS; L--)
    st = ctx->mf.backward_level(ctx, &solver->factor, &sv, L);
  double t2 = now_s();
  if (st == FEA_SUCCESS) {
    solver->forward_s = t1 - t0;
    solver->backward_s = t2 - t1;
    for (fea_index j = 0; j < nrhs; j++)
      for (fea_index i = 0; i < nf; i++) x[i + j * ldx] = sv.y[solver->tree_of_free[i] + j * N];
  }
out:
  if (sv.update)
    for (fea_index n = 0; n < t->num_nodes; n++) free(sv.update[n]);
  free(sv.update);
  free(sv.y);
  return st;
}

fea_status fea_solver_get_boundary_schur(const fea_solver *solver, fea_index capacity,
                                         fea_index *dofs, double *S, fea_index *n) {
  FEA_CHECK_NULL(solver, NULL);
  fea_context *ctx = solver->ctx;
  FEA_CHECK_NULL(n, ctx);
  FEA_CHECK(solver->desc.keep_boundary, ctx, FEA_ERR_STATE,
            "the boundary Schur complement needs a solver created with keep_boundary = 1");
  FEA_CHECK(solver->factored, ctx, FEA_ERR_STATE,
            "the boundary Schur complement exists after fea_solver_setup() only");
  const fea_etree *t = &solver->tree;
  const fea_etree_node *root = &t->nodes[t->num_nodes - 1];
  const fea_index r = root->r;
  *n = r;
  if (!dofs && !S) return FEA_SUCCESS;
  FEA_CHECK(capacity >= r, ctx, FEA_ERR_DIMENSION,
            "capacity %lld is smaller than the %lld boundary DoFs", (long long)capacity,
            (long long)r);
  /* With keep_boundary the tree numbering is the space's. */
  if (dofs) memcpy(dofs, t->front_dofs + root->front_off + root->q, (size_t)r * sizeof *dofs);
  const double *R = solver->factor.schur[t->num_nodes - 1];
  if (S)
    for (fea_index j = 0; j < r; j++)
      for (fea_index i = j; i < r; i++) S[i + j * r] = S[j + i * r] = R[i + j * r];
  return FEA_SUCCESS;
}

fea_status fea_solver_get_stats(const fea_solver *solver, fea_solver_stats *stats) {
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(stats, solver->ctx);
  const size_t min_size = offsetof(fea_solver_stats, num_levels);
  FEA_CHECK(stats->size >= min_size, solver->ctx, FEA_ERR_INVALID_ARG,
            "stats.size is %zu, smaller than any fea_solver_stats (%zu); initialize it with "
            "FEA_SOLVER_STATS_INIT", stats->size, min_size);
  const fea_etree *t = &solver->tree;
  fea_solver_stats full = FEA_SOLVER_STATS_INIT;
  full.num_levels = t->num_levels;
  full.num_nodes = t->num_nodes;
  full.max_front = t->max_front;
  /* After a setup, the FLOPs its BLAS calls were counted at; before, the tree's. */
  full.flops = solver->factored ? solver->factor.flops : t->flops;
  full.critical_path_flops = t->critical_path_flops;
  full.factor_bytes = (uint64_t)t->factor_entries * sizeof(double);
  full.peak_bytes = (uint64_t)t->peak_entries * sizeof(double);
  full.integrate_s = solver->integrate_s;
  full.factor_s = solver->factor_s;
  full.root_s = solver->root_s;
  full.forward_s = solver->forward_s;
  full.backward_s = solver->backward_s;
  full.threads = solver->ctx->nthreads;
  size_t caller_size = stats->size;
  memcpy(stats, &full, caller_size < sizeof full ? caller_size : sizeof full);
  stats->size = caller_size;
  return FEA_SUCCESS;
}

fea_status fea_solver_get_level(const fea_solver *solver, int level, fea_solver_level *info) {
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(info, solver->ctx);
  const fea_etree *t = &solver->tree;
  FEA_CHECK(level >= 0 && level < t->num_levels, solver->ctx, FEA_ERR_INVALID_ARG,
            "level %d is outside [0, %d)", level, t->num_levels);
  const size_t min_size = offsetof(fea_solver_level, nodes);
  FEA_CHECK(info->size >= min_size, solver->ctx, FEA_ERR_INVALID_ARG,
            "info.size is %zu, smaller than any fea_solver_level (%zu)", info->size, min_size);
  fea_solver_level full = {sizeof full, 0, 0, 0, 0, 0, 0, 0};
  for (fea_index k = t->level_start[level]; k < t->level_start[level + 1]; k++) {
    const fea_etree_node *nd = &t->nodes[t->level_nodes[k]];
    if (full.nodes == 0 || nd->q < full.q_min) full.q_min = nd->q;
    if (full.nodes == 0 || nd->r < full.r_min) full.r_min = nd->r;
    if (nd->q > full.q_max) full.q_max = nd->q;
    if (nd->r > full.r_max) full.r_max = nd->r;
    full.flops += nd->flops;
    full.nodes++;
  }
  full.factor_s = solver->factored ? solver->level_s[level] : 0;
  size_t caller_size = info->size;
  memcpy(info, &full, caller_size < sizeof full ? caller_size : sizeof full);
  info->size = caller_size;
  return FEA_SUCCESS;
}

fea_status fea_solver_get_node(const fea_solver *solver, fea_index node, fea_solver_node *info) {
  FEA_CHECK_NULL(solver, NULL);
  FEA_CHECK_NULL(info, solver->ctx);
  const fea_etree *t = &solver->tree;
  FEA_CHECK(node >= 0 && node < t->num_nodes, solver->ctx, FEA_ERR_INVALID_ARG,
            "node %lld is outside [0, %lld)", (long long)node, (long long)t->num_nodes);
  const size_t min_size = offsetof(fea_solver_node, level);
  FEA_CHECK(info->size >= min_size, solver->ctx, FEA_ERR_INVALID_ARG,
            "info.size is %zu, smaller than any fea_solver_node (%zu)", info->size, min_size);
  const fea_etree_node *nd = &t->nodes[node];
  fea_solver_node full;
  memset(&full, 0, sizeof full);
  full.size = sizeof full;
  full.level = nd->level;
  full.parent = nd->parent;
  for (int k = 0; k < 3; k++) {
    full.box_lo[k] = k < t->dim ? nd->lo[k] : 0;
    full.box_hi[k] = k < t->dim ? nd->hi[k] : 1;
  }
  full.q = nd->q;
  full.r = nd->r;
  size_t caller_size = info->size;
  memcpy(info, &full, caller_size < sizeof full ? caller_size : sizeof full);
  info->size = caller_size;
  return FEA_SUCCESS;
}

fea_status fea_solver_destroy(fea_solver **solver) {
  if (!solver || !*solver) return FEA_SUCCESS;
  solver_free(*solver);
  *solver = NULL;
  return FEA_SUCCESS;
}
