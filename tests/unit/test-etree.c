/* The symbolic phase of the multifrontal solver (src/multifrontal/etree.c) against
 * the exact counts of Wozniak et al. 2014 (Figure 2, §5; docs/multifrontal.md) and
 * structural invariants; the numeric phase's report of a front that is not
 * positive definite, forced through the backend ops; and the accuracy
 * report's pieces: the pivot reduction, the rule's thresholds, the per-node
 * ranges of a factor. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <feaccel.h>

#include "base/context.h"
#include "internal/etree.h"
#include "internal/multifrontal.h"
#include "multifrontal/multifrontal-solver.h"
#include "disc/problem.h"

#define OK(expr)                                                                        \
  do {                                                                                  \
    fea_status ok_ = (expr);                                                            \
    cr_assert_eq(ok_, FEA_SUCCESS, "%s returned %s: %s", #expr, fea_status_string(ok_), \
                 fea_context_last_error(NULL));                                         \
  } while (0)

typedef struct fixture {
  fea_context *ctx;
  fea_space *space;
  fea_problem *problem;
  fea_etree tree;
} fixture;

/* Open uniform knots of degree p[k] over n[k] elements, then count extra
 * copies of the knot at element boundary sep[k] (0: none). */
static void open_tree(fixture *fx, const char *resource, int dim, const int p[3],
                      const fea_index n[3], const fea_index sep[3], int extra,
                      fea_multifrontal_merge merge, int keep_boundary) {
  memset(fx, 0, sizeof *fx);
  OK(fea_context_create(resource, &fx->ctx));
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = dim;
  for (int k = 0; k < dim; k++) d.degree[k] = p[k], d.n[k] = n[k];
  OK(fea_space_create_bspline(fx->ctx, &d, &fx->space));
  for (int k = 0; k < dim && sep; k++) {
    if (!sep[k]) continue;
    double at[8];
    for (int j = 0; j < extra; j++) at[j] = (double)sep[k] / (double)n[k];
    fea_space *r = NULL;
    OK(fea_space_bspline_insert_knots(fx->space, k, extra, at, &r));
    OK(fea_space_destroy(&fx->space));
    fx->space = r;
  }
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  OK(fea_problem_create_poisson(fx->space, &pd, &fx->problem));
  fea_index *idx = fx->problem->free_index, *all = NULL;
  if (keep_boundary) {
    all = malloc((size_t)fx->space->num_dofs * sizeof *all);
    for (fea_index i = 0; i < fx->space->num_dofs; i++) all[i] = i;
    idx = all;
  }
  OK(fea_etree_build(fx->space, idx, merge, keep_boundary, &fx->tree));
  free(all);
}

static void close_tree(fixture *fx) {
  fea_etree_free(&fx->tree);
  OK(fea_problem_destroy(&fx->problem));
  OK(fea_space_destroy(&fx->space));
  OK(fea_context_destroy(&fx->ctx));
}

/* A node whose box keeps away from the domain boundary in every direction. */
static int interior(const fixture *fx, const fea_etree_node *nd) {
  for (int k = 0; k < fx->space->dim; k++)
    if (nd->lo[k] == 0 || nd->hi[k] == fx->space->elements[k]) return 0;
  return 1;
}

static fea_index level_count(const fea_etree *t, int L) {
  return t->level_start[L + 1] - t->level_start[L];
}

/* Every tree DoF is eliminated exactly once (or, with keep_boundary, the
 * boundary ones never and they are the root's r); the maps point at the
 * right DoFs; levels, parents and totals are consistent. */
static void check_invariants(const fixture *fx, int keep_boundary) {
  const fea_etree *t = &fx->tree;
  const fea_index N = t->num_dofs;
  int *seen = calloc((size_t)(N ? N : 1), sizeof *seen);
  double flops = 0;
  fea_index entries = 0;
  for (fea_index n = 0; n < t->num_nodes; n++) {
    const fea_etree_node *nd = &t->nodes[n];
    const fea_index *f = t->front_dofs + nd->front_off;
    for (fea_index i = 0; i < nd->q; i++) seen[f[i]]++;
    for (fea_index i = 1; i < nd->q; i++)
      cr_assert(f[i - 1] < f[i], "q of node %lld unsorted", (long long)n);
    for (fea_index i = nd->q + 1; i < nd->q + nd->r; i++) cr_assert(f[i - 1] < f[i]);
    if (nd->parent >= 0) {
      cr_assert(nd->parent > n, "post-order: parent %lld of %lld", (long long)nd->parent,
                (long long)n);
      cr_assert(t->nodes[nd->parent].level > nd->level);
      const fea_etree_node *pn = &t->nodes[nd->parent];
      for (fea_index i = 0; i < nd->r; i++) {
        int32_t pos = t->ext_map[nd->map_off + i];
        cr_assert(pos >= 0 && pos < pn->q + pn->r);
        cr_assert_eq(t->front_dofs[pn->front_off + pos], f[nd->q + i]);
      }
    } else {
      cr_assert_eq(n, t->num_nodes - 1, "the root is last");
    }
    if (nd->num_children == 0) cr_assert_eq(nd->level, 0);
    flops += fea_multifrontal_node_flops(nd->q, nd->r);
    entries += nd->q * nd->q + nd->q * nd->r;
  }
  fea_index eliminated = 0;
  for (fea_index i = 0; i < N; i++) {
    cr_assert(seen[i] <= 1, "DoF %lld eliminated %d times", (long long)i, seen[i]);
    eliminated += seen[i];
  }
  const fea_etree_node *root = &t->nodes[t->num_nodes - 1];
  if (keep_boundary) {
    cr_assert_eq(eliminated, N - fx->space->num_boundary_dofs);
    cr_assert_eq(root->r, fx->space->num_boundary_dofs);
    for (fea_index i = 0; i < root->r; i++)
      cr_assert_eq(t->front_dofs[root->front_off + root->q + i], fx->space->boundary_dofs[i]);
  } else {
    cr_assert_eq(eliminated, N, "%lld of %lld DoFs eliminated", (long long)eliminated,
                 (long long)N);
    cr_assert_eq(root->r, 0);
  }
  cr_assert_eq(t->num_eliminated, eliminated);
  cr_assert(fabs(flops - t->flops) <= 1e-12 * flops);
  cr_assert_eq(entries, t->factor_entries);
  /* Leaf maps: element-local DoF -> the leaf front row holding that DoF. */
  const fea_space *s = fx->space;
  fea_index *ed = malloc((size_t)s->dofs_per_element * sizeof *ed);
  for (fea_index n = 0; n < t->num_nodes; n++) {
    const fea_etree_node *nd = &t->nodes[n];
    if (nd->num_children) continue;
    const int32_t *m = t->leaf_map + nd->leaf_off;
    for (fea_index e2 = nd->lo[2]; e2 < nd->hi[2]; e2++)
      for (fea_index e1 = nd->lo[1]; e1 < nd->hi[1]; e1++)
        for (fea_index e0 = nd->lo[0]; e0 < nd->hi[0]; e0++) {
          fea_index e = e0 + s->elements[0] * (e1 + (s->dim > 1 ? s->elements[1] : 1) * e2);
          OK(fea_space_get_element_dofs(s, e, ed));
          for (int j = 0; j < s->dofs_per_element; j++, m++) {
            fea_index td = keep_boundary ? ed[j] : fx->problem->free_index[ed[j]];
            if (td < 0)
              cr_assert_eq(*m, -1);
            else
              cr_assert_eq(t->front_dofs[nd->front_off + *m], td);
          }
        }
  }
  free(ed);
  free(seen);
}

/* §2.3: 2D p = 2 on 24 x 24: 64 / 16 / 4 patches; interior patches
 * eliminate 1, 12, 36 (level 2 has interior patches on 48 x 48). */
Test(etree, paper_example_2d) {
  fixture fx;
  const int p[3] = {2, 2, 0};
  const fea_index n24[3] = {24, 24, 1}, n48[3] = {48, 48, 1};
  open_tree(&fx, "/cpu/ref", 2, p, n24, NULL, 0, FEA_MULTIFRONTAL_MERGE_TENSOR, 0);
  cr_assert_eq(fx.tree.num_levels, 4);
  cr_assert_eq(level_count(&fx.tree, 0), 64);
  cr_assert_eq(level_count(&fx.tree, 1), 16);
  cr_assert_eq(level_count(&fx.tree, 2), 4);
  cr_assert_eq(level_count(&fx.tree, 3), 1);
  check_invariants(&fx, 0);
  close_tree(&fx);
  open_tree(&fx, "/cpu/ref", 2, p, n48, NULL, 0, FEA_MULTIFRONTAL_MERGE_TENSOR, 0);
  const fea_index want[3] = {1, 12, 36};
  int found[3] = {0, 0, 0};
  for (fea_index n = 0; n < fx.tree.num_nodes; n++) {
    const fea_etree_node *nd = &fx.tree.nodes[n];
    if (nd->level > 2 || !interior(&fx, nd)) continue;
    cr_assert_eq(nd->q, want[nd->level], "interior node %lld at level %d eliminates %lld",
                 (long long)n, nd->level, (long long)nd->q);
    found[nd->level]++;
  }
  cr_assert(found[0] > 0 && found[1] > 0 && found[2] > 0);
  check_invariants(&fx, 0);
  close_tree(&fx);
}

/* §2.4, 1D: leaves 2p + 1 (q = 1, r = 2p), then 3p (q = p, r = 2p). */
Test(etree, fronts_1d) {
  for (int p = 1; p <= 5; p++) {
    fixture fx;
    const int pp[3] = {p, 0, 0};
    const fea_index n[3] = {(p + 1) * 16, 1, 1};
    open_tree(&fx, "/cpu/ref", 1, pp, n, NULL, 0, FEA_MULTIFRONTAL_MERGE_AUTO, 0);
    int leaves = 0, inner = 0;
    for (fea_index k = 0; k < fx.tree.num_nodes; k++) {
      const fea_etree_node *nd = &fx.tree.nodes[k];
      if (!interior(&fx, nd)) continue;
      if (nd->level == 0) {
        cr_assert(nd->q == 1 && nd->r == 2 * p, "p = %d leaf: q %lld r %lld", p, (long long)nd->q,
                  (long long)nd->r);
        leaves++;
      } else {
        cr_assert(nd->q == p && nd->r == 2 * p, "p = %d level %d: q %lld r %lld", p, nd->level,
                  (long long)nd->q, (long long)nd->r);
        inner++;
      }
    }
    cr_assert(leaves > 0 && inner > 0);
    check_invariants(&fx, 0);
    close_tree(&fx);
  }
}

/* §2.4, 2D with 4-way merges: interior nodes at level i >= 1 have
 * q = 4ap - 3p^2 and r = 8ap, a = (p + 1) 2^(i-1); leaves q = 1, r = 4p(p+1). */
Test(etree, fronts_2d) {
  for (int p = 1; p <= 4; p++) {
    fixture fx;
    const int pp[3] = {p, p, 0};
    const fea_index n[3] = {(p + 1) * 16, (p + 1) * 16, 1};
    open_tree(&fx, "/cpu/ref", 2, pp, n, NULL, 0, FEA_MULTIFRONTAL_MERGE_TENSOR, 0);
    int found[3] = {0, 0, 0};
    for (fea_index k = 0; k < fx.tree.num_nodes; k++) {
      const fea_etree_node *nd = &fx.tree.nodes[k];
      if (!interior(&fx, nd)) continue;
      fea_index q = 1, r = 4 * p * (p + 1);
      if (nd->level > 0) {
        fea_index a = (fea_index)(p + 1) << (nd->level - 1);
        q = 4 * a * p - 3 * p * p;
        r = 8 * a * p;
      }
      cr_assert(nd->q == q && nd->r == r, "p = %d level %d: q %lld r %lld, expected %lld %lld", p,
                nd->level, (long long)nd->q, (long long)nd->r, (long long)q, (long long)r);
      if (nd->level < 3) found[nd->level]++;
    }
    cr_assert(found[0] && found[1] && found[2]);
    check_invariants(&fx, 0);
    close_tree(&fx);
  }
}

/* §2.4, 3D with 8-way merges (docs/multifrontal.md, "Front sizes"):
 * interior nodes at level i >= 1 have q = 12a^2 p - 18ap^2 + 7p^3 and
 * r = 24a^2 p + 2p^3, a = (p + 1) 2^(i-1); leaves q = 1, r = (2p+1)^3 - 1. */
Test(etree, fronts_3d) {
  for (int p = 1; p <= 2; p++) {
    fixture fx;
    const int pp[3] = {p, p, p};
    const fea_index n[3] = {(p + 1) * 16, (p + 1) * 16, (p + 1) * 16};
    open_tree(&fx, "/cpu/ref", 3, pp, n, NULL, 0, FEA_MULTIFRONTAL_MERGE_TENSOR, 0);
    int found[3] = {0, 0, 0};
    for (fea_index k = 0; k < fx.tree.num_nodes; k++) {
      const fea_etree_node *nd = &fx.tree.nodes[k];
      if (!interior(&fx, nd)) continue;
      const fea_index side = 2 * p + 1;
      fea_index q = 1, r = side * side * side - 1;
      if (nd->level > 0) {
        const fea_index a = (fea_index)(p + 1) << (nd->level - 1);
        q = 12 * a * a * p - 18 * a * p * p + 7 * p * p * p;
        r = 24 * a * a * p + 2 * p * p * p;
      }
      cr_assert(nd->q == q && nd->r == r, "p = %d level %d: q %lld r %lld, expected %lld %lld", p,
                nd->level, (long long)nd->q, (long long)nd->r, (long long)q, (long long)r);
      if (nd->level < 3) found[nd->level]++;
    }
    cr_assert(found[0] && found[1] && found[2], "interior nodes per level: %d %d %d", found[0],
              found[1], found[2]);
    close_tree(&fx);
  }
}

/* Every n (also n < p + 1), every degree up to 8, 1D/2D/3D, both merges,
 * repeated knots and kept boundaries: each DoF eliminated exactly once. */
Test(etree, every_dof_once) {
  for (int p = 1; p <= 8; p++)
    for (fea_index n = 1; n <= 21; n += (n < 5 ? 1 : 4)) {
      fixture fx;
      const int pp[3] = {p, 0, 0};
      const fea_index nn[3] = {n, 1, 1};
      open_tree(&fx, "/cpu/ref", 1, pp, nn, NULL, 0, FEA_MULTIFRONTAL_MERGE_AUTO, 0);
      if (n < p + 1) cr_assert_eq(fx.tree.num_nodes, 1);
      check_invariants(&fx, 0);
      close_tree(&fx);
    }
  const struct {
    int dim, p[3];
    fea_index n[3], sep[3];
    int extra;
  } cases[] = {
      {2, {2, 3, 0}, {13, 17, 1}, {0, 0, 0}, 0}, {2, {3, 3, 0}, {20, 9, 1}, {7, 4, 0}, 2},
      {2, {1, 4, 0}, {3, 30, 1}, {0, 11, 0}, 3}, {3, {2, 2, 2}, {7, 6, 9}, {0, 0, 0}, 0},
      {3, {1, 2, 3}, {8, 5, 11}, {0, 2, 5}, 1},  {2, {5, 5, 0}, {4, 23, 1}, {0, 0, 0}, 0},
      {2, {2, 2, 0}, {1, 1, 1}, {0, 0, 0}, 0},   {3, {3, 3, 3}, {2, 3, 4}, {0, 0, 0}, 0},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int merge = FEA_MULTIFRONTAL_MERGE_TENSOR; merge <= FEA_MULTIFRONTAL_MERGE_PAIRWISE;
         merge++)
      for (int keep = 0; keep <= 1; keep++) {
        fixture fx;
        open_tree(&fx, "/cpu/ref", cases[c].dim, cases[c].p, cases[c].n, cases[c].sep,
                  cases[c].extra, (fea_multifrontal_merge)merge, keep);
        check_invariants(&fx, keep);
        cr_assert_eq(fx.tree.merge, (fea_multifrontal_merge)merge);
        close_tree(&fx);
      }
}

/* A C0 separator cuts the tree: with a p-fold knot in the middle, the root's
 * children meet at it and the root eliminates only the functions that
 * straddle it (one per line) instead of p per line. */
Test(etree, c0_separators) {
  fixture fx;
  /* 1D: p = 3, 24 elements, knot 0.5 of multiplicity 3: the root eliminates 1. */
  const int p1[3] = {3, 0, 0};
  const fea_index n1[3] = {24, 1, 1}, s1[3] = {12, 0, 0};
  open_tree(&fx, "/cpu/ref", 1, p1, n1, s1, 2, FEA_MULTIFRONTAL_MERGE_AUTO, 0);
  const fea_etree_node *root = &fx.tree.nodes[fx.tree.num_nodes - 1];
  cr_assert_eq(root->q, 1);
  cr_assert_eq(root->num_children, 2);
  for (int c = 0; c < 2; c++) {
    const fea_etree_node *ch = &fx.tree.nodes[fx.tree.children[root->first_child + c]];
    cr_assert(ch->hi[0] == 12 || ch->lo[0] == 12);
  }
  check_invariants(&fx, 0);
  close_tree(&fx);
  /* Off-centre: p = 2, 30 elements, a double knot at element 10; the root splits there. */
  const int p2[3] = {2, 0, 0};
  const fea_index n2[3] = {30, 1, 1}, s2[3] = {10, 0, 0};
  open_tree(&fx, "/cpu/ref", 1, p2, n2, s2, 1, FEA_MULTIFRONTAL_MERGE_AUTO, 0);
  root = &fx.tree.nodes[fx.tree.num_nodes - 1];
  const fea_etree_node *left = &fx.tree.nodes[fx.tree.children[root->first_child]];
  cr_assert_eq(left->hi[0], 10);
  cr_assert_eq(root->q, 1);
  close_tree(&fx);
  /* 2D, p = 3, 24 x 24, triple knots at 0.5 both ways: 4 children meeting
   * at (12, 12); the root eliminates 27 + 27 - 1 of the 27 x 27 free DoFs
   * (29 functions per direction), against 3 lines each way without them. */
  const int p3[3] = {3, 3, 0};
  const fea_index n3[3] = {24, 24, 1}, s3[3] = {12, 12, 0};
  open_tree(&fx, "/cpu/ref", 2, p3, n3, s3, 2, FEA_MULTIFRONTAL_MERGE_TENSOR, 0);
  root = &fx.tree.nodes[fx.tree.num_nodes - 1];
  cr_assert_eq(root->num_children, 4);
  for (int c = 0; c < 4; c++) {
    const fea_etree_node *ch = &fx.tree.nodes[fx.tree.children[root->first_child + c]];
    for (int k = 0; k < 2; k++) cr_assert(ch->hi[k] == 12 || ch->lo[k] == 12);
  }
  cr_assert_eq(root->q, 27 + 27 - 1);
  double cut_flops = fx.tree.flops;
  check_invariants(&fx, 0);
  close_tree(&fx);
  open_tree(&fx, "/cpu/ref", 2, p3, n3, NULL, 0, FEA_MULTIFRONTAL_MERGE_TENSOR, 0);
  root = &fx.tree.nodes[fx.tree.num_nodes - 1];
  cr_assert_eq(root->q, 3 * 25 + 3 * 25 - 9);
  cr_assert(cut_flops < fx.tree.flops, "C0 cuts: %g FLOPs, uniform %g", cut_flops, fx.tree.flops);
  close_tree(&fx);
  /* C0 everywhere (p = 2, every knot doubled): elements are leaves and each
   * eliminates its one interior function, as static condensation does. */
  fixture fz;
  const int p4[3] = {2, 2, 0};
  const fea_index n4[3] = {6, 6, 1};
  memset(&fz, 0, sizeof fz);
  OK(fea_context_create("/cpu/ref", &fz.ctx));
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.degree[0] = p4[0], d.degree[1] = p4[1], d.n[0] = n4[0], d.n[1] = n4[1];
  OK(fea_space_create_bspline(fz.ctx, &d, &fz.space));
  for (int k = 0; k < 2; k++) {
    double at[5] = {1 / 6.0, 2 / 6.0, 3 / 6.0, 4 / 6.0, 5 / 6.0};
    fea_space *r = NULL;
    OK(fea_space_bspline_insert_knots(fz.space, k, 5, at, &r));
    OK(fea_space_destroy(&fz.space));
    fz.space = r;
  }
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  OK(fea_problem_create_poisson(fz.space, &pd, &fz.problem));
  OK(fea_etree_build(fz.space, fz.problem->free_index, FEA_MULTIFRONTAL_MERGE_AUTO, 0, &fz.tree));
  cr_assert_eq(level_count(&fz.tree, 0), 36);
  for (fea_index k = 0; k < fz.tree.level_start[1]; k++)
    cr_assert_eq(fz.tree.nodes[fz.tree.level_nodes[k]].q, 1);
  check_invariants(&fz, 0);
  close_tree(&fz);
}

/* The FLOP convention, by hand: q = 3, r = 2:
 * potrf 9 + 4.5 + 0.5, trsm 2 * 9, syrk 3 * 2 * 3. */
Test(etree, flop_convention) {
  cr_assert(fabs(fea_multifrontal_node_flops(3, 2) - (14.0 + 18.0 + 18.0)) <= 1e-13);
  cr_assert(fabs(fea_multifrontal_node_flops(1, 0) - 1.0) <= 1e-15);
  cr_assert_eq(fea_multifrontal_node_flops(0, 7), 0.0);
}

/* A front that is not positive definite is reported with its node: the
 * leaves are factored, then their Schur complements are negated, so every
 * level-1 front is negative definite. On /cpu/threads with 2 threads the
 * level-1 nodes run concurrently. */
static void check_not_posdef(const char *resource) {
  fixture fx;
  const int p[3] = {2, 2, 0};
  const fea_index n[3] = {24, 24, 1};
  open_tree(&fx, resource, 2, p, n, NULL, 0, FEA_MULTIFRONTAL_MERGE_TENSOR, 0);
  fea_context *ctx = fx.ctx;
  fea_multifrontal_factor f;
  memset(&f, 0, sizeof f);
  f.tree = &fx.tree;
  f.problem = fx.problem;
  f.pivots = malloc((size_t)fx.tree.num_nodes * 2 * sizeof *f.pivots);
  OK(ctx->multifrontal.factor_alloc(ctx, &f));
  OK(ctx->multifrontal.factor_level(ctx, &f, 0));
  for (fea_index k = 0; k < fx.tree.level_start[1]; k++) {
    fea_index leaf = fx.tree.level_nodes[k];
    fea_index r = fx.tree.nodes[leaf].r;
    for (fea_index i = 0; i < r * r; i++) f.schur[leaf][i] = -f.schur[leaf][i];
  }
  fea_status st = ctx->multifrontal.factor_level(ctx, &f, 1);
  cr_assert_eq(st, FEA_ERR_NOT_POSDEF, "%s: %s", resource, fea_status_string(st));
  const char *msg = fea_context_last_error(ctx);
  fea_index first = fx.tree.level_nodes[fx.tree.level_start[1]];
  char want[64];
  snprintf(want, sizeof want, "tree node %lld (level 1, elements [", (long long)first);
  cr_assert(strstr(msg, want) != NULL, "%s: \"%s\" does not name %s", resource, msg, want);
  cr_assert(strstr(msg, "not positive definite") != NULL, "%s", msg);
  /* ... and the pivot that failed, by its value (negative: the fronts are negative definite). */
  cr_assert(strstr(msg, "pivot 0 of its ") != NULL && strstr(msg, " is -") != NULL, "%s", msg);
  ctx->multifrontal.factor_release(ctx, &f);
  free(f.pivots);
  close_tree(&fx);
}

Test(etree, not_posdef_ref) { check_not_posdef("/cpu/ref"); }
Test(etree, not_posdef_threads) { check_not_posdef("/cpu/threads:threads=2"); }

/* Whether space DoF i is interior in every direction (index 1 .. n_k - 2). */
static int interior_dof(const fixture *fx, fea_index i) {
  const fea_bspline_space *b = fx->space->impl;
  for (int k = 0; k < fx->space->dim; k++) {
    fea_index nf = fea_knots_num_functions(&b->knots[k]), ik = i % nf;
    i /= nf;
    if (ik == 0 || ik == nf - 1) return 0;
  }
  return 1;
}

/* The memory bound of etree-bound.c against the built tree: with
 * keep_boundary (tree numbering = space numbering) its sum equals the
 * tree's sum (q + r) q recounted over the interior DoFs of each front, and
 * its node count the tree's; without it, it stays at most the tree's factor
 * entries. A stop below the total ends the walk early and says so. */
static void check_bound(int dim, int p, fea_index n, const fea_index *sep, int extra,
                        fea_multifrontal_merge merge) {
  const int pp[3] = {p, p, p};
  const fea_index nn[3] = {n, n + 1, n + 2};
  fixture fx;
  for (int keep = 0; keep < 2; keep++) {
    open_tree(&fx, "/cpu/ref", dim, pp, nn, sep, extra, merge, keep);
    fea_etree_bound b;
    OK(fea_etree_bound_eval(fx.space, merge, 0, &b));
    cr_assert(b.complete);
    cr_assert_eq((fea_index)b.num_nodes, fx.tree.num_nodes,
                 "dim %d p %d n %lld: %g nodes, tree %lld", dim, p, (long long)n, b.num_nodes,
                 (long long)fx.tree.num_nodes);
    cr_assert_leq(b.factor_entries, (double)fx.tree.factor_entries);
    if (keep) {
      double recount = 0;
      for (fea_index k = 0; k < fx.tree.num_nodes; k++) {
        const fea_etree_node *nd = &fx.tree.nodes[k];
        const fea_index *f = fx.tree.front_dofs + nd->front_off;
        double q = 0, r = 0;
        for (fea_index i = 0; i < nd->q; i++) q += interior_dof(&fx, f[i]);
        for (fea_index i = nd->q; i < nd->q + nd->r; i++) r += interior_dof(&fx, f[i]);
        recount += (q + r) * q;
      }
      cr_assert_eq(b.factor_entries, recount, "dim %d p %d n %lld: bound %g, recount %g", dim, p,
                   (long long)n, b.factor_entries, recount);
      fea_etree_bound part;
      OK(fea_etree_bound_eval(fx.space, merge, recount / 2, &part));
      cr_assert(!part.complete && part.factor_entries > recount / 2 &&
                part.factor_entries <= recount);
    }
    close_tree(&fx);
  }
}

Test(etree, memory_bound) {
  for (int dim = 1; dim <= 3; dim++)
    for (int p = 1; p <= 3; p++) {
      const fea_index n = dim == 3 ? 9 : 3 * (p + 1) + 5;
      check_bound(dim, p, n, NULL, 0, FEA_MULTIFRONTAL_MERGE_PAIRWISE);
      check_bound(dim, p, n, NULL, 0, FEA_MULTIFRONTAL_MERGE_TENSOR);
    }
  const fea_index sep[3] = {6, 6, 6};
  check_bound(2, 3, 13, sep, 2, FEA_MULTIFRONTAL_MERGE_PAIRWISE);
  check_bound(3, 2, 12, sep, 1, FEA_MULTIFRONTAL_MERGE_TENSOR);
  /* Tightness where it matters, a large open uniform 2D space: the interior
   * DoFs are nearly all, so the bound is most of the factor. */
  fixture fx;
  const int p3[3] = {3, 3, 0};
  const fea_index n64[3] = {64, 64, 1};
  open_tree(&fx, "/cpu/ref", 2, p3, n64, NULL, 0, FEA_MULTIFRONTAL_MERGE_AUTO, 0);
  fea_etree_bound b;
  OK(fea_etree_bound_eval(fx.space, FEA_MULTIFRONTAL_MERGE_AUTO, 0, &b));
  cr_assert(b.factor_entries > 0.8 * (double)fx.tree.factor_entries, "bound %g, tree %lld",
            b.factor_entries, (long long)fx.tree.factor_entries);
  close_tree(&fx);
}

/* The leaves integrated as a batch on several threads (what /gpu/cuda runs
 * on the host) equal leaf-by-leaf integration bit for bit: panels, Schur
 * blocks and the load, which is summed in leaf order whatever the threads. */
static void check_leaf_batch(int dim, const int p[3], const fea_index n[3]) {
  fixture fx;
  open_tree(&fx, "/cpu/ref", dim, p, n, NULL, 0, FEA_MULTIFRONTAL_MERGE_AUTO, 0);
  const fea_etree *t = &fx.tree;
  const fea_index count = t->level_start[1];
  const fea_index *leaves = t->level_nodes;
  size_t *off = malloc((size_t)count * sizeof *off), total = 0, loads = 0;
  for (fea_index k = 0; k < count; k++) {
    const fea_etree_node *nd = &t->nodes[leaves[k]];
    off[k] = total;
    total += (size_t)((nd->q + nd->r) * nd->q + nd->r * nd->r);
    loads += (size_t)(nd->q + nd->r);
  }
  /* Reference: one leaf at a time, its load added right after it. */
  double *want = calloc(total, sizeof *want), *want_load = calloc((size_t)t->num_dofs, 8);
  double *scratch = malloc(loads * sizeof *scratch);
  fea_multifrontal_factor f;
  memset(&f, 0, sizeof f);
  f.tree = t;
  f.problem = fx.problem;
  for (fea_index k = 0; k < count; k++) {
    const fea_etree_node *nd = &t->nodes[leaves[k]];
    const fea_index m = nd->q + nd->r;
    double *P = want + off[k], it = 0;
    memset(scratch, 0, (size_t)m * sizeof *scratch);
    OK(fea_multifrontal_assemble_leaf(fx.ctx, &f, leaves[k], P, P + m * nd->q, scratch, &it));
    for (fea_index a = 0; a < m; a++) want_load[t->front_dofs[nd->front_off + a]] += scratch[a];
  }
  const int threads[] = {1, 3};
  for (int i = 0; i < 2; i++) {
    double *got = malloc(total * sizeof *got), *got_load = calloc((size_t)t->num_dofs, 8);
    for (size_t j = 0; j < total; j++) got[j] = NAN; /* the batch zeroes its fronts */
    f.load = got_load;
    f.integrate_s = 0;
    OK(fea_multifrontal_assemble_leaves(fx.ctx, &f, leaves, count, NULL, got, off, scratch,
                                        threads[i]));
    cr_assert(memcmp(got, want, total * sizeof *got) == 0, "%dD, %d threads: fronts differ", dim,
              threads[i]);
    cr_assert(memcmp(got_load, want_load, (size_t)t->num_dofs * 8) == 0,
              "%dD, %d threads: loads differ", dim, threads[i]);
    cr_assert(f.integrate_s > 0);
    free(got);
    free(got_load);
  }
  free(off);
  free(want);
  free(want_load);
  free(scratch);
  close_tree(&fx);
}

Test(etree, leaf_batch_2d) {
  const int p[3] = {3, 2, 0};
  const fea_index n[3] = {21, 13, 1};
  check_leaf_batch(2, p, n);
}

Test(etree, leaf_batch_3d) {
  const int p[3] = {2, 2, 1};
  const fea_index n[3] = {7, 6, 5};
  check_leaf_batch(3, p, n);
}

/* A B-spline space evaluates a tensor rule's 1D bases once per 1D point;
 * the values must equal the point-by-point evaluation (the same rule with
 * its tensor structure hidden) bit for bit, on every element, with a
 * repeated knot per direction in the space. */
static void check_tensor_rule(int dim, const int p[3], const fea_index n[3],
                              const fea_index sep[3]) {
  fixture fx;
  open_tree(&fx, "/cpu/ref", dim, p, n, sep, 1, FEA_MULTIFRONTAL_MERGE_AUTO, 0);
  const fea_space *s = fx.space;
  fea_quadrature tensor = fx.problem->quad, plain = tensor;
  cr_assert(tensor.tensor[0] > 0, "the problem's rule is a tensor rule");
  plain.tensor[0] = plain.tensor[1] = plain.tensor[2] = 0;
  fea_element_values a, b;
  OK(fea_element_values_alloc(s, &tensor, &a));
  OK(fea_element_values_alloc(s, &plain, &b));
  const size_t nq = (size_t)tensor.npts, nb = (size_t)s->dofs_per_element;
  for (fea_index e = 0; e < s->num_elements; e++) {
    OK(s->ops->element_values(s, e, &tensor, &a));
    OK(s->ops->element_values(s, e, &plain, &b));
    cr_assert(memcmp(a.phi, b.phi, nq * nb * sizeof(double)) == 0, "element %lld: phi",
              (long long)e);
    cr_assert(memcmp(a.dphi, b.dphi, nq * nb * (size_t)dim * sizeof(double)) == 0,
              "element %lld: dphi", (long long)e);
    cr_assert(memcmp(a.x, b.x, nq * (size_t)dim * sizeof(double)) == 0, "element %lld: x",
              (long long)e);
    cr_assert(memcmp(a.w, b.w, nq * sizeof(double)) == 0, "element %lld: w", (long long)e);
  }
  fea_element_values_free(&a);
  fea_element_values_free(&b);
  close_tree(&fx);
}

Test(etree, tensor_rule_values_2d) {
  const int p[3] = {3, 2, 0};
  const fea_index n[3] = {9, 6, 1}, sep[3] = {4, 3, 0};
  check_tensor_rule(2, p, n, sep);
}

Test(etree, tensor_rule_values_3d) {
  const int p[3] = {2, 1, 3};
  const fea_index n[3] = {4, 5, 3}, sep[3] = {2, 0, 1};
  check_tensor_rule(3, p, n, sep);
}

/* sigma varying in every direction, so the sum factorization's weights are
 * not a tensor product. */
static double sigma_wavy(const double *x, void *user) {
  const int dim = *(const int *)user;
  double s = 1.5;
  for (int k = 0; k < dim; k++) s += 0.5 * sin(2.0 * x[k] + k);
  return s;
}

static double source_wavy(const double *x, void *user) {
  (void)user;
  return cos(x[0]) + x[1];
}

/* The element system of a B-spline element by sum factorization (the
 * tensor rule's 1D factors, without the basis tables where the forms allow
 * it) equals the point-by-point sums (the same rule with its structure
 * hidden) to rounding: with a varying sigma (weights that are no tensor
 * product) or a constant one (the Kronecker path), a source f and, when
 * `reaction`, the reaction term c u v (which takes the tables). */
static void check_tensor_stiffness(int dim, const int p[3], const fea_index n[3],
                                   const fea_index sep[3], int wavy, int reaction) {
  fixture fx;
  open_tree(&fx, "/cpu/ref", dim, p, n, sep, 1, FEA_MULTIFRONTAL_MERGE_AUTO, 0);
  const fea_space *s = fx.space;
  int d = dim;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  if (wavy) {
    pd.sigma_fn = sigma_wavy;
    pd.sigma_user = &d;
  } else {
    pd.sigma = 2.5;
  }
  if (reaction) pd.reaction = 0.75;
  pd.source = source_wavy;
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(fx.space, &pd, &pb));
  fea_quadrature tensor = pb->quad, plain = tensor;
  plain.tensor[0] = plain.tensor[1] = plain.tensor[2] = 0;
  fea_element_values a, b;
  OK(fea_element_values_alloc(s, &tensor, &a));
  OK(fea_element_values_alloc(s, &plain, &b));
  cr_assert(a.t1d != NULL && b.t1d == NULL);
  a.factors_only = fea_form_factors_suffice(pb);
  cr_assert_eq(a.factors_only, !reaction, "the forms need the tables exactly with a reaction");
  const int nb = s->dofs_per_element;
  const size_t nq = (size_t)tensor.npts;
  /* Tables the fast path must not read. */
  for (size_t i = 0; i < nq * (size_t)nb; i++) a.phi[i] = NAN;
  for (size_t i = 0; i < nq * (size_t)nb * (size_t)dim; i++) a.dphi[i] = NAN;
  double *Ka = malloc((size_t)nb * nb * sizeof *Ka), *Kb = malloc((size_t)nb * nb * sizeof *Kb);
  double *fa = malloc((size_t)nb * sizeof *fa), *fb = malloc((size_t)nb * sizeof *fb);
  double worst = 0, worst_f = 0;
  for (fea_index e = 0; e < s->num_elements; e++) {
    OK(s->ops->element_values(s, e, &tensor, &a));
    OK(s->ops->element_values(s, e, &plain, &b));
    cr_assert(a.tensor_valid && a.w1d_valid && !b.tensor_valid);
    cr_assert_eq(fea_element_values_have_tables(&a), reaction);
    OK(fea_form_element_system(pb, e, &a, Ka, fa));
    OK(fea_form_element_system(pb, e, &b, Kb, fb));
    double scale = 0, diff = 0, fscale = 0, fdiff = 0;
    for (int i = 0; i < nb * nb; i++) {
      scale = fmax(scale, fabs(Kb[i]));
      diff = fmax(diff, fabs(Ka[i] - Kb[i]));
    }
    for (int i = 0; i < nb; i++) {
      fscale = fmax(fscale, fabs(fb[i]));
      fdiff = fmax(fdiff, fabs(fa[i] - fb[i]));
      for (int j = 0; j < i; j++)
        cr_assert(Ka[i * nb + j] == Ka[j * nb + i], "element %lld: not symmetric", (long long)e);
    }
    worst = fmax(worst, diff / scale);
    worst_f = fmax(worst_f, fdiff / fscale);
  }
  cr_assert(worst <= 1e-13, "%dD p = %d (sigma %s, reaction %d): Ke differs by %.3g relative", dim,
            p[0], wavy ? "wavy" : "constant", reaction, worst);
  cr_assert(worst_f <= 1e-13, "%dD p = %d (sigma %s, reaction %d): fe differs by %.3g relative",
            dim, p[0], wavy ? "wavy" : "constant", reaction, worst_f);
  free(Ka);
  free(Kb);
  free(fa);
  free(fb);
  fea_element_values_free(&a);
  fea_element_values_free(&b);
  OK(fea_problem_destroy(&pb));
  close_tree(&fx);
}

/* p = 1..4 in direction 0 (the others one and two lower, at least 1), with
 * a repeated knot where the degree allows, every sigma kind, with and without the reaction term. */
static void check_tensor_forms(int dim) {
  for (int p0 = 1; p0 <= 4; p0++)
    for (int wavy = 0; wavy <= 1; wavy++)
      for (int reaction = 0; reaction <= 1; reaction++) {
        const int p[3] = {p0, p0 > 1 ? p0 - 1 : 2, dim == 3 ? (p0 > 2 ? p0 - 2 : 1) : 0};
        /* The repeated knot where the degree allows one. */
        const fea_index n2[3] = {p0 + 3, 4, 1}, sep2[3] = {p[0] > 1 ? 2 : 0, p[1] > 1, 0};
        const fea_index n3[3] = {3, 2, 2}, sep3[3] = {p[0] > 1, 0, p[2] > 1};
        if (dim == 2)
          check_tensor_stiffness(2, p, n2, sep2, wavy, reaction);
        else
          check_tensor_stiffness(3, p, n3, sep3, wavy, reaction);
      }
}

Test(etree, tensor_stiffness_2d) { check_tensor_forms(2); }

Test(etree, tensor_stiffness_3d) { check_tensor_forms(3); }

static double source_any_dim(const double *x, void *user) {
  const int dim = *(const int *)user;
  return cos(x[0]) + x[dim - 1];
}

static double dirichlet_wavy(const double *x, void *user) {
  const int dim = *(const int *)user;
  return 1.0 + x[0] * x[0] - 0.5 * sin(x[dim - 1] + x[0]);
}

/* What the /gpu/cuda leaf kernel computes from element records
 * (cuda/kernels/multifrontal.cu, integrate_leaves_kernel), written out on
 * the host: K_ij from the record's weights and 1D factors, added at the
 * leaf's front positions, lower triangle, each pair once. */
static void fronts_from_records(const fea_multifrontal_leaf_shape *sh, const double *rec,
                                fea_index elems, const int32_t *map, fea_index q, fea_index r,
                                double *P, double *S) {
  const fea_index m = q + r;
  memset(P, 0, (size_t)(m * q) * sizeof *P);
  memset(S, 0, (size_t)(r * r) * sizeof *S);
  const int nb = sh->nb, *n = sh->n, *mm = sh->m;
  for (fea_index e = 0; e < elems; e++, rec += sh->rec_len, map += nb) {
    const double *T0 = rec + sh->nq, *T1 = T0 + 2 * mm[0] * n[0], *T2 = T1 + 2 * mm[1] * n[1];
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < nb; j++) {
        const fea_index a = map[i], b = map[j];
        if (a < 0 || b < 0 || a < b) continue;
        const int i0 = i % n[0], i1 = (i / n[0]) % n[1], i2 = i / (n[0] * n[1]);
        const int j0 = j % n[0], j1 = (j / n[0]) % n[1], j2 = j / (n[0] * n[1]);
        double v = 0;
        for (int c = 0; c < mm[2]; c++)
          for (int bb = 0; bb < mm[1]; bb++)
            for (int aa = 0; aa < mm[0]; aa++) {
              const double *r0 = T0 + 2 * n[0] * aa, *r1 = T1 + 2 * n[1] * bb,
                           *r2 = T2 + 2 * n[2] * c;
              const double w = rec[aa + mm[0] * (bb + mm[1] * c)];
              const double B0 = r0[i0] * r0[j0], D0 = r0[n[0] + i0] * r0[n[0] + j0];
              const double B1 = r1[i1] * r1[j1], D1 = r1[n[1] + i1] * r1[n[1] + j1];
              const double B2 = r2[i2] * r2[j2], D2 = r2[n[2] + i2] * r2[n[2] + j2];
              v += w * (D0 * B1 * B2 + B0 * D1 * B2 + B0 * B1 * D2);
            }
        if (b < q)
          P[a + b * m] += v;
        else
          S[(a - q) + (b - q) * r] += v;
      }
  }
}

/* Leaves from element records (what /gpu/cuda integrates on the device):
 * the records, put through the device kernel's formula, give the fronts
 * that host integration gives, to rounding; the loads, lifted by non-zero
 * Dirichlet values, are the same sums in the same order, bit for bit, on 1
 * and 3 threads. With sigma(x) and f(x) and repeated knots, and with or
 * without a Neumann side (its face loads). */
static double flux_wavy(const double *x, void *user) {
  (void)user;
  return 0.5 + x[0] * x[0];
}

static void check_leaf_records(int dim, const int p[3], const fea_index n[3],
                               const fea_index sep[3], int neumann) {
  fixture fx;
  open_tree(&fx, "/cpu/ref", dim, p, n, sep, 1, FEA_MULTIFRONTAL_MERGE_AUTO, 0);
  int d = dim;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma_fn = sigma_wavy;
  pd.sigma_user = &d;
  pd.source = source_any_dim;
  pd.source_user = &d;
  pd.dirichlet = dirichlet_wavy;
  pd.dirichlet_user = &d;
  if (neumann) { /* the east side Neumann: face loads, and a tree of its own free DoFs */
    pd.sides[FEA_SIDE_EAST].type = FEA_BC_NEUMANN;
    pd.sides[FEA_SIDE_EAST].flux = flux_wavy;
  }
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(fx.space, &pd, &pb));
  fea_etree tree;
  OK(fea_etree_build(fx.space, pb->free_index, FEA_MULTIFRONTAL_MERGE_AUTO, 0, &tree));
  const fea_etree *t = &tree;
  fea_multifrontal_factor f;
  memset(&f, 0, sizeof f);
  f.tree = t;
  f.problem = pb;
  fea_multifrontal_leaf_shape sh;
  cr_assert(fea_multifrontal_leaf_shape_of(&f, &sh), "%dD: a B-spline box takes records", dim);
  cr_assert_eq(sh.nb, fx.space->dofs_per_element);
  cr_assert_eq(sh.nq, pb->quad.npts);
  const fea_index count = t->level_start[1];
  const fea_index *leaves = t->level_nodes;
  size_t *off = malloc((size_t)count * sizeof *off), *roff = malloc((size_t)count * sizeof *roff);
  size_t total = 0, rtotal = 0, loads = 0;
  for (fea_index k = 0; k < count; k++) {
    const fea_etree_node *nd = &t->nodes[leaves[k]];
    off[k] = total;
    roff[k] = rtotal;
    total += (size_t)((nd->q + nd->r) * nd->q + nd->r * nd->r);
    rtotal += (size_t)((nd->hi[0] - nd->lo[0]) * (nd->hi[1] - nd->lo[1]) *
                       (nd->hi[2] - nd->lo[2])) *
              (size_t)sh.rec_len;
    loads += (size_t)(nd->q + nd->r);
  }
  double *want = calloc(total, sizeof *want), *want_load = calloc((size_t)t->num_dofs, 8);
  double *scratch = malloc(loads * sizeof *scratch);
  f.load = want_load;
  OK(fea_multifrontal_assemble_leaves(fx.ctx, &f, leaves, count, NULL, want, off, scratch, 1));
  double *got = malloc(total * sizeof *got), *rec = malloc(rtotal * sizeof *rec);
  const int threads[] = {1, 3};
  for (int i = 0; i < 2; i++) {
    double *got_load = calloc((size_t)t->num_dofs, 8);
    f.load = got_load;
    f.integrate_s = 0;
    OK(fea_multifrontal_assemble_leaves(fx.ctx, &f, leaves, count, &sh, rec, roff, scratch,
                                        threads[i]));
    cr_assert(memcmp(got_load, want_load, (size_t)t->num_dofs * 8) == 0,
              "%dD, %d threads: loads differ", dim, threads[i]);
    cr_assert(f.integrate_s > 0);
    free(got_load);
  }
  double worst = 0;
  for (fea_index k = 0; k < count; k++) {
    const fea_etree_node *nd = &t->nodes[leaves[k]];
    const fea_index q = nd->q, r = nd->r, m = q + r;
    const fea_index elems = (nd->hi[0] - nd->lo[0]) * (nd->hi[1] - nd->lo[1]) *
                            (nd->hi[2] - nd->lo[2]);
    double *P = got + off[k];
    fronts_from_records(&sh, rec + roff[k], elems, t->leaf_map + nd->leaf_off, q, r, P, P + m * q);
    const size_t len = (size_t)(m * q + r * r);
    double scale = 0, diff = 0;
    for (size_t j = 0; j < len; j++) {
      scale = fmax(scale, fabs(want[off[k] + j]));
      diff = fmax(diff, fabs(got[off[k] + j] - want[off[k] + j]));
    }
    cr_assert(scale > 0);
    worst = fmax(worst, diff / scale);
  }
  cr_assert(worst <= 1e-13, "%dD: fronts from records differ by %.3g relative", dim, worst);
  /* A reaction term needs the basis values themselves: no records. */
  pd.reaction = 1.0;
  fea_problem *with_c = NULL;
  OK(fea_problem_create_poisson(fx.space, &pd, &with_c));
  f.problem = with_c;
  cr_assert(!fea_multifrontal_leaf_shape_of(&f, &sh), "records with c u");
  OK(fea_problem_destroy(&with_c));
  free(off);
  free(roff);
  free(want);
  free(want_load);
  free(got);
  free(rec);
  free(scratch);
  fea_etree_free(&tree);
  OK(fea_problem_destroy(&pb));
  close_tree(&fx);
}

Test(etree, leaf_records_1d) {
  const int p[3] = {4, 0, 0};
  const fea_index n[3] = {23, 1, 1}, sep[3] = {9, 0, 0};
  check_leaf_records(1, p, n, sep, 0);
}

Test(etree, leaf_records_2d) {
  const int p[3] = {3, 2, 0};
  const fea_index n[3] = {21, 13, 1}, sep[3] = {8, 5, 0};
  check_leaf_records(2, p, n, sep, 0);
  check_leaf_records(2, p, n, sep, 1);
}

Test(etree, leaf_records_3d) {
  const int p[3] = {2, 3, 1};
  const fea_index n[3] = {7, 6, 5}, sep[3] = {3, 2, 0};
  check_leaf_records(3, p, n, sep, 0);
  check_leaf_records(3, p, n, sep, 1);
}

/* The pivot reduction every backend shares (internal/multifrontal.h): an
 * empty range is {+inf, -inf}, min and max do not depend on the order of
 * the merges, and a NaN pivot stays in lo (the report names it) but never
 * enters hi. */
Test(etree, pivot_merge) {
  double lo = INFINITY, hi = -INFINITY;
  fea_multifrontal_pivots_merge(&lo, &hi, INFINITY, -INFINITY); /* empty into empty */
  cr_assert(isinf(lo) && lo > 0 && isinf(hi) && hi < 0);
  const double d[5] = {3.0, 0.5, 7.0, 2.0, 0.25};
  double lo2 = INFINITY, hi2 = -INFINITY;
  for (int k = 0; k < 5; k++) {
    fea_multifrontal_pivots_merge(&lo, &hi, d[k], d[k]);
    fea_multifrontal_pivots_merge(&lo2, &hi2, d[4 - k], d[4 - k]);
  }
  cr_assert(lo == 0.25 && hi == 7.0 && lo2 == lo && hi2 == hi);
  /* Ranges merge as the tree reduction of the GPU kernel merges them. */
  double a_lo = 0.5, a_hi = 3.0;
  fea_multifrontal_pivots_merge(&a_lo, &a_hi, 0.25, 7.0);
  cr_assert(a_lo == 0.25 && a_hi == 7.0);
  fea_multifrontal_pivots_merge(&lo, &hi, NAN, NAN);
  cr_assert(isnan(lo) && hi == 7.0);
  fea_multifrontal_pivots_merge(&lo, &hi, 0.125, 9.0); /* NaN stays, hi grows */
  cr_assert(isnan(lo) && hi == 9.0);
  double n_lo = INFINITY, n_hi = -INFINITY;
  fea_multifrontal_pivots_merge(&n_lo, &n_hi, NAN, NAN);
  fea_multifrontal_pivots_merge(&n_lo, &n_hi, 1.0, 1.0);
  cr_assert(isnan(n_lo) && n_hi == 1.0);
}

/* The accuracy rule (src/multifrontal/multifrontal-accuracy.c) on
 * synthetic ranges: its thresholds DBL_EPSILON (refused) and
 * max(sqrt(DBL_EPSILON), n DBL_EPSILON) (warned), each side of them. */
static void count_warning(void *user, fea_log_level level, const char *msg) {
  /* Not the machine's once-per-process BLAS warning (api-common.h). */
  if (level == FEA_LOG_WARN && strncmp(msg, "the BLAS runs ", 14) != 0) ++*(int *)user;
}

Test(etree, accuracy_rule) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  int logged = 0, warned = -1;
  OK(fea_context_set_log_callback(ctx, FEA_LOG_WARN, count_warning, &logged));
  const double e = DBL_EPSILON, s = sqrt(DBL_EPSILON);
  OK(fea_multifrontal_pivot_rule(ctx, 0.5, 1.0, 100, "here", &warned));
  cr_assert(warned == 0 && logged == 0);
  OK(fea_multifrontal_pivot_rule(ctx, 2 * s, 1.0, 100, "here", &warned));
  cr_assert(warned == 0 && logged == 0);
  OK(fea_multifrontal_pivot_rule(ctx, 0.5 * s, 1.0, 100, "here", &warned));
  cr_assert(warned == 1 && logged == 1);
  /* Above sqrt(eps) but below n eps: n = 1e9 pivots. */
  cr_assert_eq(fea_multifrontal_warn_ratio(1e9), 1e9 * e);
  OK(fea_multifrontal_pivot_rule(ctx, 1e8 * e, 1.0, 1e9, "here", &warned));
  cr_assert(warned == 1 && logged == 2);
  OK(fea_multifrontal_pivot_rule(ctx, 2 * e, 1.0, 100, "here", &warned));
  cr_assert(warned == 1 && logged == 3);
  cr_assert_eq(fea_multifrontal_pivot_rule(ctx, 0.5 * e, 1.0, 100, "node 7", &warned),
               FEA_ERR_NOT_POSDEF);
  const char *msg = fea_context_last_error(ctx);
  cr_assert(strstr(msg, "singular to working precision") && strstr(msg, "node 7"), "%s", msg);
  cr_assert_eq(fea_multifrontal_pivot_rule(ctx, -1e-3, 1.0, 100, "node 8", &warned),
               FEA_ERR_NOT_POSDEF);
  cr_assert(strstr(fea_context_last_error(ctx), "is -0.001, at node 8"), "%s",
            fea_context_last_error(ctx));
  cr_assert_eq(fea_multifrontal_pivot_rule(ctx, NAN, 1.0, 100, "node 9", &warned),
               FEA_ERR_NOT_POSDEF);
  cr_assert(strstr(fea_context_last_error(ctx), "is nan, at node 9"), "%s",
            fea_context_last_error(ctx));
  OK(fea_multifrontal_pivot_rule(ctx, INFINITY, -INFINITY, 0, "nothing", &warned));
  cr_assert(warned == 0 && logged == 3);
  OK(fea_context_destroy(&ctx));
}

/* The range over a tree (the node holding the smallest pivot, the count of
 * pivots) and the backends' per-node ranges on a factored tree: between
 * the extreme diagonal entries' bounds and the same on both CPU backends. */
Test(etree, pivot_range_of_a_factor) {
  fixture fx;
  const int p[3] = {2, 2, 0};
  const fea_index n[3] = {12, 10, 1};
  double lo[2], hi[2];
  fea_index at[2];
  const char *res[2] = {"/cpu/ref", "/cpu/threads:threads=2"};
  for (int b = 0; b < 2; b++) {
    open_tree(&fx, res[b], 2, p, n, NULL, 0, FEA_MULTIFRONTAL_MERGE_AUTO, 0);
    fea_context *ctx = fx.ctx;
    fea_multifrontal_factor f;
    memset(&f, 0, sizeof f);
    f.tree = &fx.tree;
    f.problem = fx.problem;
    f.pivots = malloc((size_t)fx.tree.num_nodes * 2 * sizeof *f.pivots);
    OK(ctx->multifrontal.factor_alloc(ctx, &f));
    for (int L = 0; L < fx.tree.num_levels; L++) OK(ctx->multifrontal.factor_level(ctx, &f, L));
    fea_multifrontal_pivot_range r;
    fea_multifrontal_pivot_range_of(&fx.tree, f.pivots, &r);
    cr_assert_eq(r.count, fx.tree.num_dofs);
    cr_assert(r.min > 0 && r.min <= r.max && r.min_node >= 0);
    /* The node named holds the smallest pivot; every node's range is within. */
    cr_assert_eq(f.pivots[2 * r.min_node], r.min);
    for (fea_index k = 0; k < fx.tree.num_nodes; k++)
      if (fx.tree.nodes[k].q > 0)
        cr_assert(f.pivots[2 * k] >= r.min && f.pivots[2 * k + 1] <= r.max &&
                  f.pivots[2 * k] <= f.pivots[2 * k + 1]);
    lo[b] = r.min, hi[b] = r.max, at[b] = r.min_node;
    ctx->multifrontal.factor_release(ctx, &f);
    free(f.pivots);
    close_tree(&fx);
  }
  cr_assert(lo[0] == lo[1] && hi[0] == hi[1] && at[0] == at[1],
            "/cpu/ref [%.17g, %.17g] at %lld, /cpu/threads [%.17g, %.17g] at %lld", lo[0], hi[0],
            (long long)at[0], lo[1], hi[1], (long long)at[1]);
}
