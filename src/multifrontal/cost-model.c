/* A-priori cost model of the multifrontal solver: the paper's closed forms
 * (Woźniak et al. 2014, eqs. 22-27), the level-synchronous critical path of
 * eq. (23) over any tree, and the exact counts from the solver's own symbolic
 * tree. See include/feaccel/cost.h for the definitions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cost-model.h"
#include "internal/error.h"
#include "internal/etree.h"
#include "base/memory-limit.h"
#include "disc/space.h"

/* ------------------------------------------------------------------------ */
/* The paper's model                                                         */

/* Depth s of the paper's tree: N_p = 2^s leaf patches of p + 1 elements per
 * direction, the smallest power of two that covers ceil(n / (p + 1)) (the
 * depth of pairwise merges when n is not (p + 1) 2^s). */
static int paper_depth(int p, fea_index n) {
  fea_index leaves = (n + p) / (p + 1);
  int s = 0;
  while (((fea_index)1 << s) < leaves) s++;
  return s;
}

/* max(a, b): eq. (20)'s O(q^3 + q r^2) with unit constants is its larger term,
 * which is how the printed closed forms read (e.g. a leaf costs r^2, not 1 + r^2). */
static double dmax(double a, double b) { return a > b ? a : b; }
static double dmin(double a, double b) { return a < b ? a : b; }

void fea_cost_paper_eval(int dim, int p, fea_index n, int ncomp, int nproc, fea_cost *c) {
  const int s = paper_depth(p, n);
  const double pd = pow(p, dim);
  const double P = nproc > 0 ? nproc : INFINITY;
  double flops = 0, crit = 0, entries = 0;
  for (int i = 0; i < s; i++) {
    const double np = ldexp(1.0, dim * (s - i)); /* N_p(i) patches at level i */
    /* Table 1, unit constants; a system's fronts hold ncomp DoFs per function. */
    const double q = ncomp * (i == 0 ? 1.0 : ldexp(pd, (dim - 1) * i));
    const double r = i == 0 ? ncomp * pd : q;
    const double nt = dmax(1.0, P / np); /* N~(i): processors per patch */
    flops += np * dmax(q * q * q, q * r * r);
    entries += np * dmax(q * q, q * r);
    crit += np / dmin(np, P) * dmax(q * q * q / dmin(nt, q), q * r * r / dmin(nt, r));
  }
  c->flops = flops;
  c->critical_path_flops = crit;
  c->memory_bytes = 8.0 * entries;
  c->num_levels = s + 1;
  c->root_front = (fea_index)ldexp(pd, (dim - 1) * s) * ncomp;
}

/* ------------------------------------------------------------------------ */
/* Critical path of eq. (23)                                                 */

typedef struct level_cost {
  int level;
  double cost; /* the node's cost when it has the whole machine: see node_cost */
  fea_index q, r;
} level_cost;

/* Level ascending, then costliest first: a round takes the next P nodes. */
static int cmp_level_cost(const void *a, const void *b) {
  const level_cost *x = a, *y = b;
  if (x->level != y->level) return (x->level > y->level) - (x->level < y->level);
  return (x->cost < y->cost) - (x->cost > y->cost);
}

/* A node's time on nt processors (eq. 23): the dense factorization of the
 * q x q block spread over its q rows, the triangular solve and the Schur
 * update over the r rows of the remaining block. */
static double node_cost(fea_cost_flops_fn flops, fea_index q, fea_index r, double nt) {
  if (q <= 0) return 0.0;
  const double fq = flops(q, 0), fr = flops(q, r) - fq;
  return fq / dmin(nt, (double)q) + (r > 0 ? fr / dmin(nt, (double)r) : 0.0);
}

fea_status fea_cost_critical_path(const fea_context *ctx, const fea_cost_node *nodes,
                                  fea_index count, fea_cost_flops_fn flops, int nproc,
                                  double *critical) {
  *critical = 0.0;
  if (count <= 0) return FEA_SUCCESS;
  level_cost *lc = malloc((size_t)count * sizeof *lc);
  FEA_CHECK(lc, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the costs of %lld tree nodes",
            (long long)count);
  for (fea_index k = 0; k < count; k++) {
    lc[k].level = nodes[k].level;
    lc[k].q = nodes[k].q;
    lc[k].r = nodes[k].r;
    lc[k].cost = flops(nodes[k].q, nodes[k].r); /* the order within a level only */
  }
  qsort(lc, (size_t)count, sizeof *lc, cmp_level_cost);
  double total = 0.0;
  for (fea_index lo = 0; lo < count;) {
    fea_index hi = lo;
    while (hi < count && lc[hi].level == lc[lo].level) hi++;
    const fea_index m = hi - lo; /* nodes of this level */
    /* Unlimited processors: one round, each node gets all it can use. */
    const double nt = nproc > 0 ? (double)(nproc >= m ? nproc / m : 1) : INFINITY;
    const fea_index per_round = nproc > 0 ? nproc : m;
    /* Rounds of per_round nodes, costliest first (grouping the big nodes
     * together is the best a level-synchronous schedule can do); a round
     * lasts as long as its slowest node, since the barrier waits for it. */
    for (fea_index k = lo; k < hi; k += per_round) {
      double round = 0.0;
      fea_index end = k + per_round < hi ? k + per_round : hi;
      for (fea_index j = k; j < end; j++)
        round = dmax(round, node_cost(flops, lc[j].q, lc[j].r, nt));
      total += round;
    }
    lo = hi;
  }
  free(lc);
  *critical = total;
  return FEA_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Exact counts from the symbolic tree                                       */

/* The open uniform space of the query and the solver's tree of its Poisson
 * problem with the whole boundary Dirichlet: the same tree
 * fea_solver_create_multifrontal builds with the default options, since the
 * tree depends only on the space and on which DoFs are free. */
static fea_status query_space(fea_context *ctx, int dim, int p, fea_index n, int ncomp,
                              fea_space **s) {
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = dim;
  for (int k = 0; k < 3; k++) {
    d.degree[k] = p;
    d.n[k] = n;
  }
  FEA_CALL(fea_space_bspline_from_desc(ctx, &d, s));
  (*s)->ncomp = ncomp;
  return FEA_SUCCESS;
}

/* What building the exact tree of s takes, from below (etree-bound.c): the
 * free-DoF map, the DoF list of the split, the front index lists and the
 * nodes. Checked against the budget before anything O(DoF) is allocated. */
static fea_status check_tree_fits(fea_context *ctx, const fea_space *s) {
  fea_etree_bound b;
  FEA_CALL(fea_etree_bound_eval(s, FEA_MULTIFRONTAL_MERGE_AUTO, 0, &b));
  /* The scalar walk's fronts, ncomp times longer for a system. */
  const double need = sizeof(fea_index) * s->ncomp * (2.0 * (double)s->num_dofs + b.front_entries) +
                      sizeof(fea_etree_node) * b.num_nodes;
  char what[128];
  snprintf(what, sizeof what, "the symbolic tree of %lld DoFs (%.0f nodes)", (long long)s->num_dofs,
           b.num_nodes);
  return fea_memory_require(ctx, 0, need, what);
}

/* Whether DoF i of s is eliminated: on a Dirichlet side (sides NULL: any). */
static int dirichlet_dof(const fea_space *s, const fea_bc_type *sides, fea_index i) {
  for (int side = 0; side < 2 * s->dim; side++)
    if ((!sides || sides[side] == FEA_BC_DIRICHLET) && fea_bspline_dof_on_side(s, i, side))
      return 1;
  return 0;
}

static fea_status build_tree(fea_context *ctx, int dim, int p, fea_index n, int ncomp,
                             const fea_bc_type *sides, fea_etree *t) {
  fea_space *s = NULL;
  FEA_CALL(query_space(ctx, dim, p, n, ncomp, &s));
  fea_status guard = check_tree_fits(ctx, s);
  if (guard != FEA_SUCCESS) {
    fea_object_release(s);
    return guard;
  }
  fea_index *free_index = malloc((size_t)fea_space_total_dofs(s) * sizeof *free_index);
  fea_status st = free_index ? FEA_SUCCESS
                             : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                                         "no memory for the free-DoF map of %lld DoFs",
                                         (long long)fea_space_total_dofs(s));
  if (st == FEA_SUCCESS) {
    /* Numbered as fea_problem_create_poisson numbers the free DoFs:
     * boundary_dofs is sorted, so one merge pass does it; with natural sides
     * a boundary DoF is eliminated only on a Dirichlet side. A system's
     * components follow their function (interleaved, c + ncomp i). */
    fea_index next = 0, b = 0;
    for (fea_index i = 0; i < s->num_dofs; i++) {
      int fixed = 0;
      if (b < s->num_boundary_dofs && s->boundary_dofs[b] == i) {
        fixed = !sides || dirichlet_dof(s, sides, i);
        b++;
      }
      for (int c = 0; c < ncomp; c++) free_index[c + ncomp * i] = fixed ? -1 : next++;
    }
    st = fea_etree_build(s, free_index, FEA_MULTIFRONTAL_MERGE_AUTO, 0, t);
  }
  free(free_index);
  fea_object_release(s);
  return st;
}

fea_status fea_cost_exact_eval(fea_context *ctx, int dim, int p, fea_index n, int ncomp,
                               const fea_bc_type *sides, int nproc, fea_cost *c,
                               double *peak_bytes) {
  fea_etree t;
  FEA_CALL(build_tree(ctx, dim, p, n, ncomp, sides, &t));
  fea_cost_node *nodes = malloc((size_t)t.num_nodes * sizeof *nodes);
  fea_status st = nodes ? FEA_SUCCESS
                        : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                                    "no memory for the sizes of %lld tree nodes",
                                    (long long)t.num_nodes);
  if (st == FEA_SUCCESS) {
    for (fea_index k = 0; k < t.num_nodes; k++) {
      nodes[k].level = t.nodes[k].level;
      nodes[k].q = t.nodes[k].q;
      nodes[k].r = t.nodes[k].r;
    }
    st = fea_cost_critical_path(ctx, nodes, t.num_nodes, fea_multifrontal_node_flops, nproc,
                                &c->critical_path_flops);
  }
  if (st == FEA_SUCCESS) {
    const fea_etree_node *root = &t.nodes[t.num_nodes - 1]; /* post-order: the root is last */
    c->flops = t.flops;
    c->memory_bytes = 8.0 * (double)t.factor_entries;
    c->num_levels = t.num_levels;
    c->root_front = root->q + root->r;
    if (peak_bytes) {
      /* The figure fea_solver_setup() checks on this context: the peak of
       * the walk its backend runs (fea_etree_walk_peak), the level walk's
       * where the backend walks no subtrees. */
      fea_index pk = t.peak_entries;
      st = fea_etree_context_peak(ctx, &t, &pk);
      *peak_bytes = 8.0 * (double)pk;
    }
  }
  free(nodes);
  fea_etree_free(&t);
  return st;
}

fea_status fea_cost_fits_eval(fea_context *ctx, int dim, int p, fea_index n, int ncomp,
                              const fea_bc_type *sides, uint64_t bytes, int *fits) {
  /* The peak holds at least the factors and the load vector, so a lower
   * bound above bytes answers "no" from the knot vectors alone (no space,
   * whose boundary list is O(n^(d-1))), after a walk that stops as soon as
   * it passes bytes. */
  fea_knots kn = {0};
  FEA_CALL(fea_knots_uniform(ctx, p, n, 0.0, 1.0, &kn));
  const fea_knots knots[3] = {kn, kn, kn}; /* shallow: one vector for every direction */
  /* The walk is the scalar tree's: a system's interior DoFs are ncomp
   * times as many and its factor entries ncomp^2 times (multifrontal-solver-kind.c). */
  const double nc = ncomp;
  fea_etree_bound b;
  fea_status st = fea_etree_bound_knots(ctx, dim, knots, FEA_MULTIFRONTAL_MERGE_AUTO,
                                        (double)bytes / sizeof(double) / (nc * nc), &b);
  fea_knots_free(&kn);
  FEA_CALL(st);
  b.factor_entries *= nc * nc;
  b.interior_dofs *= nc;
  if (!b.complete || sizeof(double) * (b.factor_entries + b.interior_dofs) > (double)bytes) {
    *fits = 0;
    return FEA_SUCCESS;
  }
  fea_cost c = FEA_COST_INIT;
  double peak = 0.0;
  /* The critical path is not needed: one processor makes it the flops. */
  FEA_CALL(fea_cost_exact_eval(ctx, dim, p, n, ncomp, sides, 1, &c, &peak));
  *fits = peak <= (double)bytes;
  return FEA_SUCCESS;
}
