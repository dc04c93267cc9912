/* The multifrontal solver kind: the symbolic tree at creation, the level
 * walk of setup and solve through the context's multifrontal ops, its
 * stats and the boundary Schur complement.
 *
 * Numbering. The tree runs over "tree DoFs": the problem's free DoFs
 * (reduced numbering, identical to fea_problem_assemble_reference's), or,
 * with keep_boundary, every DoF of the space (space numbering) so that the
 * boundary DoFs can stay in the root; with the internal keep_boundary = 2
 * of a multipatch solver's patches, the free DoFs only, still by space DoF
 * (the Dirichlet ones lifted as in the reduced tree). Right-hand sides and solutions of the
 * API are always in the problem's reduced numbering. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/context.h"
#include "internal/error.h"
#include "internal/etree.h"
#include "internal/object.h"
#include "base/memory-limit.h"
#include "internal/multifrontal.h"
#include "linalg/matrix.h"
#include "multifrontal-solver.h"
#include "disc/problem.h"

typedef struct multifrontal_solver {
  fea_solver_desc desc;    /* complete */
  fea_index *tree_index;   /* per space DoF: its tree DoF, or -1 */
  fea_index *tree_of_free; /* per problem free DoF: its tree DoF */
  fea_etree tree;
  fea_multifrontal_factor factor;
  double *level_s; /* per level: factorization time of the last setup */
  double integrate_s, factor_s, root_s, forward_s, backward_s, transfer_s;
  uint64_t device_bytes; /* what the backend reserved on a device (last setup) */
  void *sweep_work;      /* the backend's sweep memory, kept between solves */
  size_t sweep_work_bytes;
  fea_index peak_entries; /* the peak of the walk the context's backend runs */
  /* The accuracy report (multifrontal-accuracy.c). */
  double *pivots;                     /* per node: the backends' {min, max} (2 num_nodes) */
  fea_multifrontal_pivot_range range; /* of the last setup (count 0: none yet) */
  int ill_conditioned;                /* the last setup warned */
  fea_matrix *A;    /* with check_residual or estimate_condition: the reference system */
  double norm_a;    /* ... and its ||A||_inf (= ||A||_1: A is symmetric) */
  double condition; /* with estimate_condition: cond_1(A) estimated by the last setup, else -1 */
  double relative_residual, backward_error; /* of the last solve, -1 when it measured none */
} multifrontal_solver;

static multifrontal_solver *multifrontal_of(const fea_solver *s) { return s->data; }

static void multifrontal_reset(fea_solver *s) {
  multifrontal_solver *m = multifrontal_of(s);
  if (m->factor.tree && s->ctx->multifrontal.factor_release)
    s->ctx->multifrontal.factor_release(s->ctx, &m->factor);
  free(m->sweep_work);
  m->sweep_work = NULL;
  m->sweep_work_bytes = 0;
  FEA_OBJECT_DROP(m->A);
  m->condition = -1;
  m->range = (fea_multifrontal_pivot_range){.min_node = -1};
  m->ill_conditioned = 0;
  s->ready = 0;
}

static void multifrontal_destroy(fea_solver *s) {
  multifrontal_solver *m = multifrontal_of(s);
  multifrontal_reset(s);
  fea_etree_free(&m->tree);
  free(m->tree_index);
  free(m->tree_of_free);
  free(m->level_s);
  free(m->pivots);
  free(m);
  s->data = NULL;
}

/* The tree numbering and the map from the problem's free DoFs into it. */
static fea_status number_dofs(fea_solver *s) {
  multifrontal_solver *m = multifrontal_of(s);
  const fea_index nd = fea_space_total_dofs(s->space), nf = s->problem->num_free;
  m->tree_index = malloc((size_t)(nd ? nd : 1) * sizeof *m->tree_index);
  m->tree_of_free = malloc((size_t)(nf ? nf : 1) * sizeof *m->tree_of_free);
  FEA_CHECK(m->tree_index && m->tree_of_free, s->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the numbering of %lld DoFs", (long long)nd);
  for (fea_index d = 0; d < nd; d++) {
    fea_index f = s->problem->free_index[d];
    /* keep_boundary 1: every DoF, by space DoF; 2 (multipatch patches): the
     * free ones, by space DoF; 0: the free ones, by free row. */
    m->tree_index[d] = m->desc.keep_boundary == 1   ? d
                       : m->desc.keep_boundary == 2 ? (f >= 0 ? d : -1)
                                                    : f;
    if (f >= 0) m->tree_of_free[f] = m->tree_index[d];
  }
  return FEA_SUCCESS;
}

/* The tree and its numbering were built on the creation problem's free
 * DoFs: a new problem must fix the same ones (a roller in place of a clamp,
 * another component mask, a spring in place of a displacement side differ). */
static fea_status multifrontal_check_problem(const fea_solver *s, const fea_problem *problem) {
  const fea_index nd = fea_space_total_dofs(s->space), nc = s->space->ncomp;
  for (fea_index d = 0; d < nd; d++) {
    const int was = s->problem->free_index[d] < 0, is = problem->free_index[d] < 0;
    FEA_CHECK(was == is, s->ctx, FEA_ERR_INVALID_ARG,
              "the problem fixes other DoFs than the solver's (DoF %lld, component %lld of "
              "function %lld, is %s in the solver's problem and %s in the new one): its tree "
              "was built on those; create another solver",
              (long long)d, (long long)(d % nc), (long long)(d / nc), was ? "fixed" : "free",
              is ? "fixed" : "free");
  }
  return FEA_SUCCESS;
}

static fea_status multifrontal_setup(fea_solver *s);
static fea_status multifrontal_solve(fea_solver *s, fea_index nrhs, const double *b, fea_index ldb,
                                     double *x, fea_index ldx);

const fea_solver_ops fea_multifrontal_solver_ops = {
    .name = "multifrontal",
    .check_problem = multifrontal_check_problem,
    .reset = multifrontal_reset,
    .setup = multifrontal_setup,
    .solve = multifrontal_solve,
    .destroy = multifrontal_destroy,
};

/* Doubles alive at the peak of the factorization this context will run: the
 * subtree walk's where the backend walks subtrees (fea_etree_walk_peak),
 * else the level walk's. The thread count may have changed since create. */
static fea_status plan_peak(fea_solver *s) {
  multifrontal_solver *m = multifrontal_of(s);
  return fea_etree_context_peak(s->ctx, &m->tree, &m->peak_entries);
}

static fea_status solve_once(fea_solver *s, fea_index nrhs, const double *b, fea_index ldb,
                             double *x, fea_index ldx);

static fea_status solve_in_place(void *data, double *x) {
  fea_solver *s = data;
  const fea_index nf = s->problem->num_free;
  return solve_once(s, 1, x, nf, x, nf);
}

/* cond_1(A) = ||A||_1 ||A^-1||_1, the second estimated from a few solves
 * with the new factor (multifrontal-accuracy.c); they are not the user's,
 * so the solve times stay as they were. */
static fea_status estimate_condition(fea_solver *s) {
  multifrontal_solver *m = multifrontal_of(s);
  const fea_index nf = s->problem->num_free;
  double *work = malloc((size_t)(2 * nf + 1) * sizeof *work);
  FEA_CHECK(work, s->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the condition estimate of %lld DoFs", (long long)nf);
  const double fw_s = m->forward_s, bw_s = m->backward_s, tr_s = m->transfer_s;
  double inv = 0;
  int solves = 0;
  fea_status st = fea_multifrontal_inverse_norm1(nf, solve_in_place, s, work, &inv, &solves);
  m->forward_s = fw_s, m->backward_s = bw_s, m->transfer_s = tr_s;
  free(work);
  FEA_CALL(st);
  m->condition = m->norm_a * inv;
  int warned = 0;
  fea_multifrontal_condition_rule(s->ctx, m->condition, &warned);
  if (warned) m->ill_conditioned = 1;
  return FEA_SUCCESS;
}

/* The factor's pivot range over the tree and, for a solver of its own (a
 * multipatch solver judges its patches' with its interface system), the
 * accuracy rule (multifrontal-accuracy.c). */
static fea_status check_pivots(fea_solver *s) {
  multifrontal_solver *m = multifrontal_of(s);
  fea_multifrontal_pivot_range_of(&m->tree, m->pivots, &m->range);
  if (m->desc.keep_boundary == 2 || m->range.count == 0) return FEA_SUCCESS;
  char where[256];
  fea_multifrontal_node_name(&m->tree, m->range.min_node, where, sizeof where);
  return fea_multifrontal_pivot_rule(s->ctx, m->range.min, m->range.max, (double)m->range.count,
                                     where, &m->ill_conditioned);
}

static fea_status multifrontal_setup(fea_solver *s) {
  fea_context *ctx = s->ctx;
  multifrontal_solver *m = multifrontal_of(s);
  const fea_etree *t = &m->tree;
  char what[200];
  snprintf(what, sizeof what,
           "the factorization (%llu bytes of factors, a front of up to %lld DoFs, and the live "
           "Schur complements)",
           (unsigned long long)(t->factor_entries * (fea_index)sizeof(double)),
           (long long)t->max_front);
  FEA_CALL(plan_peak(s));
  FEA_CALL(fea_memory_require(ctx, m->desc.memory_limit_bytes,
                              (double)m->peak_entries * sizeof(double), what));
  multifrontal_reset(s);
  fea_multifrontal_factor *f = &m->factor;
  memset(f, 0, sizeof *f);
  f->tree = t;
  f->problem = s->problem;
  f->pivots = m->pivots;
  FEA_CALL(ctx->multifrontal.factor_alloc(ctx, f));
  double t0 = fea_now();
  int cut = -1;
  if (ctx->multifrontal.factor_below) {
    fea_status st = ctx->multifrontal.factor_below(ctx, f, &cut, m->level_s);
    if (st < 0) {
      multifrontal_reset(s);
      return st;
    }
  }
  for (int L = cut + 1; L < t->num_levels; L++) {
    double tl = fea_now();
    fea_status st = ctx->multifrontal.factor_level(ctx, f, L);
    m->level_s[L] = fea_now() - tl;
    if (st < 0) {
      multifrontal_reset(s);
      return st;
    }
  }
  m->factor_s = fea_now() - t0;
  m->root_s = m->level_s[t->num_levels - 1];
  m->integrate_s = f->integrate_s;
  m->device_bytes = f->device_bytes;
  fea_status st = check_pivots(s);
  if (st == FEA_SUCCESS && (m->desc.check_residual || m->desc.estimate_condition) &&
      m->desc.keep_boundary != 2) {
    /* The independent check of the solves: the reference assembled system. */
    double *b = malloc((size_t)(s->problem->num_free + 1) * sizeof *b);
    st = b ? fea_problem_reference_system(s->problem, b, &m->A)
           : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the residual check's load");
    free(b);
    if (st == FEA_SUCCESS) m->norm_a = fea_multifrontal_norm_inf(m->A);
  }
  if (st == FEA_SUCCESS && m->desc.estimate_condition && m->desc.keep_boundary != 2)
    st = estimate_condition(s);
  if (st < 0) multifrontal_reset(s);
  return st;
}

/* The two sweeps over y (the tree's numbering, nrhs columns of num_dofs),
 * each leaving its time in m. The backend's sweep memory comes from the
 * solver and goes back to it whatever happened, to be reused by the next
 * sweep (a solve's fresh pages cost more than its node work at many
 * right-hand sides). */
static void sweeps_begin(fea_solver *s, fea_index nrhs, double *y, fea_multifrontal_solve *sv) {
  multifrontal_solver *m = multifrontal_of(s);
  *sv = (fea_multifrontal_solve){.nrhs = nrhs,
                                 .y = y,
                                 .work = m->sweep_work,
                                 .work_bytes = m->sweep_work_bytes};
}

static void sweeps_end(fea_solver *s, fea_multifrontal_solve *sv) {
  multifrontal_solver *m = multifrontal_of(s);
  m->sweep_work = sv->work;
  m->sweep_work_bytes = sv->work ? sv->work_bytes : 0;
}

static fea_status forward_sweep(fea_solver *s, fea_index nrhs, double *y) {
  multifrontal_solver *m = multifrontal_of(s);
  fea_multifrontal_solve sv;
  sweeps_begin(s, nrhs, y, &sv);
  const double t0 = fea_now();
  fea_status st = FEA_SUCCESS;
  for (int L = 0; L < m->tree.num_levels && st == FEA_SUCCESS; L++)
    st = s->ctx->multifrontal.forward_level(s->ctx, &m->factor, &sv, L);
  m->forward_s = fea_now() - t0;
  m->transfer_s = sv.transfer_s;
  sweeps_end(s, &sv);
  return st;
}

static fea_status backward_sweep(fea_solver *s, fea_index nrhs, double *y) {
  multifrontal_solver *m = multifrontal_of(s);
  fea_multifrontal_solve sv;
  sweeps_begin(s, nrhs, y, &sv);
  const double t0 = fea_now();
  fea_status st = FEA_SUCCESS;
  for (int L = m->tree.num_levels - 1; L >= 0 && st == FEA_SUCCESS; L--)
    st = s->ctx->multifrontal.backward_level(s->ctx, &m->factor, &sv, L);
  m->backward_s = fea_now() - t0;
  m->transfer_s += sv.transfer_s;
  sweeps_end(s, &sv);
  return st;
}

/* The root's r DoFs (a kept boundary) of every column of y, set to v
 * (r x nrhs, ld r) or to 0 when v is NULL. */
static void set_kept_rows(const fea_etree *t, fea_index nrhs, double *y, const double *v) {
  const fea_etree_node *root = &t->nodes[t->num_nodes - 1];
  const fea_index *dofs = t->front_dofs + root->front_off + root->q;
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < root->r; i++)
      y[dofs[i] + j * t->num_dofs] = v ? v[i + j * root->r] : 0.0;
}

static fea_status solve_once(fea_solver *s, fea_index nrhs, const double *b, fea_index ldb,
                             double *x, fea_index ldx) {
  multifrontal_solver *m = multifrontal_of(s);
  const fea_index nf = s->problem->num_free;
  const fea_etree *t = &m->tree;
  const fea_index N = t->num_dofs;
  double *y = calloc((size_t)(N * nrhs), sizeof *y);
  FEA_CHECK(y, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld right-hand sides of %lld DoFs",
            (long long)nrhs, (long long)N);
  /* Tree DoFs that are not free in the problem (the kept boundary) stay 0:
   * their Dirichlet values are in the load's lifting already. */
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < nf; i++)
      y[m->tree_of_free[i] + j * N] = b ? b[i + j * ldb] : m->factor.load[m->tree_of_free[i]];
  fea_status st = forward_sweep(s, nrhs, y);
  /* The root's r rows (the kept boundary) are never eliminated: x = 0 there. */
  if (st == FEA_SUCCESS && t->keep_boundary) set_kept_rows(t, nrhs, y, NULL);
  if (st == FEA_SUCCESS) st = backward_sweep(s, nrhs, y);
  if (st == FEA_SUCCESS)
    for (fea_index j = 0; j < nrhs; j++)
      for (fea_index i = 0; i < nf; i++) x[i + j * ldx] = y[m->tree_of_free[i] + j * N];
  free(y);
  return st;
}

/* A solve measured against the reference system (desc.check_residual): b
 * is copied first (x may be b), then R = b - A x; with check_residual = 2
 * x += A^-1 R once and R again. The sweeps' times add up. */
static fea_status checked_solve(fea_solver *s, fea_index nrhs, const double *b, fea_index ldb,
                                double *x, fea_index ldx) {
  multifrontal_solver *m = multifrontal_of(s);
  const fea_index nf = s->problem->num_free;
  const size_t len = (size_t)(nf * nrhs) + 1;
  double *bc = malloc(len * sizeof *bc), *R = malloc(len * sizeof *R);
  if (!bc || !R) {
    free(bc), free(R);
    return FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the residual check of %lld right-hand sides of %lld DoFs",
                     (long long)nrhs, (long long)nf);
  }
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < nf; i++)
      bc[i + j * nf] = b ? b[i + j * ldb] : m->factor.load[m->tree_of_free[i]];
  fea_status st = solve_once(s, nrhs, bc, nf, x, ldx);
  double rel = -1, bw = -1;
  if (st == FEA_SUCCESS)
    fea_multifrontal_residual(m->A, m->norm_a, nrhs, bc, nf, x, ldx, R, &rel, &bw);
  if (st == FEA_SUCCESS && m->desc.check_residual == 2) {
    const double fw_s = m->forward_s, bw_s = m->backward_s, tr_s = m->transfer_s;
    st = solve_once(s, nrhs, R, nf, R, nf); /* the correction, in place */
    m->forward_s += fw_s, m->backward_s += bw_s, m->transfer_s += tr_s;
    for (fea_index j = 0; j < nrhs && st == FEA_SUCCESS; j++)
      for (fea_index i = 0; i < nf; i++) x[i + j * ldx] += R[i + j * nf];
    if (st == FEA_SUCCESS)
      fea_multifrontal_residual(m->A, m->norm_a, nrhs, bc, nf, x, ldx, R, &rel, &bw);
  }
  free(bc), free(R);
  if (st == FEA_SUCCESS) {
    m->relative_residual = rel;
    m->backward_error = bw;
    fea_multifrontal_residual_rule(s->ctx, rel, bw, m->desc.check_residual == 2);
  }
  return st;
}

static fea_status multifrontal_solve(fea_solver *s, fea_index nrhs, const double *b, fea_index ldb,
                                     double *x, fea_index ldx) {
  multifrontal_solver *m = multifrontal_of(s);
  m->relative_residual = m->backward_error = -1;
  if (m->A) return checked_solve(s, nrhs, b, ldb, x, ldx);
  return solve_once(s, nrhs, b, ldb, x, ldx);
}

fea_status fea_multifrontal_kept_forward(fea_solver *s, fea_index nrhs, double *y, double *g) {
  const fea_etree *t = &multifrontal_of(s)->tree;
  FEA_CALL(forward_sweep(s, nrhs, y));
  const fea_etree_node *root = &t->nodes[t->num_nodes - 1];
  const fea_index *dofs = t->front_dofs + root->front_off + root->q;
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < root->r; i++) g[i + j * root->r] = y[dofs[i] + j * t->num_dofs];
  return FEA_SUCCESS;
}

fea_status fea_multifrontal_kept_backward(fea_solver *s, fea_index nrhs, double *y,
                                          const double *xb) {
  set_kept_rows(&multifrontal_of(s)->tree, nrhs, y, xb);
  return backward_sweep(s, nrhs, y);
}

const double *fea_multifrontal_load(const fea_solver *s) { return multifrontal_of(s)->factor.load; }

/* Refuse a space whose factorization cannot fit before the O(DoF) tree is
 * built: the bound of etree-bound.c (factors, load vector and the tree's
 * index lists, all from below) against the budget, walking only as far as
 * it takes to exceed it. */
static fea_status check_fits(fea_solver *s, const fea_solver_desc *d) {
  fea_memory_budget budget;
  fea_memory_budget_get(s->ctx, d->memory_limit_bytes, &budget);
  /* The bound walks the scalar tree; a system's fronts hold every component
   * of the interior functions (all free), so its q and r are ncomp times the
   * scalar ones and its factor entries ncomp^2 times. */
  const double nc = s->space->ncomp;
  const double stop = (double)budget.bytes / sizeof(double) / (nc * nc);
  fea_etree_bound b;
  FEA_CALL(fea_etree_bound_eval(s->space, d->merge, stop, &b));
  b.factor_entries *= nc * nc;
  b.interior_dofs *= nc;
  b.front_entries *= nc;
  const double need = sizeof(double) * (b.factor_entries + b.interior_dofs + b.front_entries) +
                      sizeof(fea_etree_node) * b.num_nodes;
  char what[200];
  snprintf(what, sizeof what,
           "the multifrontal factorization of %.0f interior DoFs (a lower bound from the patch "
           "tree: %.4g factor entries%s)",
           b.interior_dofs, b.factor_entries, b.complete ? "" : " in its top nodes alone");
  return fea_memory_require(s->ctx, d->memory_limit_bytes, need, what);
}

fea_status fea_multifrontal_attach(fea_solver *s, const fea_solver_desc *d) {
  fea_context *ctx = s->ctx;
  FEA_CALL(check_fits(s, d));
  multifrontal_solver *m = calloc(1, sizeof *m);
  FEA_CHECK(m, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a solver");
  s->data = m;
  m->desc = *d;
  FEA_CALL(number_dofs(s));
  FEA_CALL(fea_etree_build(s->space, m->tree_index, d->merge, d->keep_boundary, &m->tree));
  m->level_s = calloc((size_t)m->tree.num_levels, sizeof *m->level_s);
  m->pivots = malloc((size_t)m->tree.num_nodes * 2 * sizeof *m->pivots);
  FEA_CHECK(m->level_s && m->pivots, ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the level times and pivots of %lld nodes", (long long)m->tree.num_nodes);
  m->range.min_node = -1;
  m->relative_residual = m->backward_error = m->condition = -1;
  return plan_peak(s);
}

const fea_etree *fea_multifrontal_tree(const fea_solver *s) { return &multifrontal_of(s)->tree; }

int fea_multifrontal_keeps_boundary(const fea_solver *s) {
  return multifrontal_of(s)->desc.keep_boundary;
}

void fea_multifrontal_boundary_schur(const fea_solver *s, fea_index *dofs, double *S) {
  const multifrontal_solver *m = multifrontal_of(s);
  const fea_etree *t = &m->tree;
  const fea_etree_node *root = &t->nodes[t->num_nodes - 1];
  const fea_index r = root->r;
  /* With keep_boundary the tree numbering is the space's. The DoFs are
   * known from the symbolic tree; the complement only after setup. */
  if (dofs) memcpy(dofs, t->front_dofs + root->front_off + root->q, (size_t)r * sizeof *dofs);
  if (!S) return;
  const double *R = m->factor.schur[t->num_nodes - 1];
  for (fea_index j = 0; j < r; j++)
    for (fea_index i = j; i < r; i++) S[i + j * r] = S[j + i * r] = R[i + j * r];
}

void fea_multifrontal_get_stats(const fea_solver *s, fea_solver_stats *full) {
  const multifrontal_solver *m = multifrontal_of(s);
  const fea_etree *t = &m->tree;
  *full = (fea_solver_stats)FEA_SOLVER_STATS_INIT;
  full->num_levels = t->num_levels;
  full->num_nodes = t->num_nodes;
  full->max_front = t->max_front;
  /* After a setup, the FLOPs its BLAS calls were counted at; before, the tree's. */
  full->flops = s->ready ? m->factor.flops : t->flops;
  full->critical_path_flops = t->critical_path_flops;
  full->factor_bytes = (uint64_t)t->factor_entries * sizeof(double);
  full->peak_bytes = (uint64_t)m->peak_entries * sizeof(double);
  full->integrate_s = m->integrate_s;
  full->factor_s = m->factor_s;
  full->root_s = m->root_s;
  full->forward_s = m->forward_s;
  full->backward_s = m->backward_s;
  full->transfer_s = m->transfer_s;
  full->threads = s->ctx->nthreads;
  full->device_bytes = m->device_bytes;
  if (s->ready && m->range.count > 0) {
    full->pivot_min = m->range.min;
    full->pivot_max = m->range.max;
    full->pivot_ratio = m->range.min / m->range.max;
    full->pivot_min_node = m->range.min_node;
  }
  full->ill_conditioned = s->ready ? m->ill_conditioned : 0;
  full->relative_residual = m->relative_residual;
  full->backward_error = m->backward_error;
  full->condition_estimate = s->ready ? m->condition : -1;
}

void fea_multifrontal_get_pivot_range(const fea_solver *s, fea_multifrontal_pivot_range *r) {
  *r = multifrontal_of(s)->range;
}

void fea_multifrontal_get_level(const fea_solver *s, int level, fea_solver_level *full) {
  const multifrontal_solver *m = multifrontal_of(s);
  const fea_etree *t = &m->tree;
  *full = (fea_solver_level)FEA_SOLVER_LEVEL_INIT;
  for (fea_index k = t->level_start[level]; k < t->level_start[level + 1]; k++) {
    const fea_etree_node *nd = &t->nodes[t->level_nodes[k]];
    if (full->nodes == 0 || nd->q < full->q_min) full->q_min = nd->q;
    if (full->nodes == 0 || nd->r < full->r_min) full->r_min = nd->r;
    if (nd->q > full->q_max) full->q_max = nd->q;
    if (nd->r > full->r_max) full->r_max = nd->r;
    full->flops += nd->flops;
    full->nodes++;
  }
  full->factor_s = s->ready ? m->level_s[level] : 0;
}

void fea_multifrontal_get_node(const fea_solver *s, fea_index node, fea_solver_node *full) {
  const fea_etree *t = &multifrontal_of(s)->tree;
  const fea_etree_node *nd = &t->nodes[node];
  *full = (fea_solver_node)FEA_SOLVER_NODE_INIT;
  full->level = nd->level;
  full->parent = nd->parent;
  for (int k = 0; k < 3; k++) {
    full->box_lo[k] = k < t->dim ? nd->lo[k] : 0;
    full->box_hi[k] = k < t->dim ? nd->hi[k] : 1;
  }
  full->q = nd->q;
  full->r = nd->r;
}
