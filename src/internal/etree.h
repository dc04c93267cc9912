/* The multifrontal elimination tree of a tensor-product B-spline space (the
 * symbolic phase of the IGA multifrontal solver, src/multifrontal/etree.c).
 *
 * The tree comes from the patch structure, not from a graph ordering: the
 * element box is split recursively (at C0 separators where the knot vectors
 * have them, else at the midpoint) until boxes have p+1..2p+1 elements per
 * direction. A DoF is eliminated at the lowest node whose box contains its
 * whole support. Everything the numeric phase needs (front DoF lists, the
 * extend-add maps, the leaf element maps, storage offsets and exact counts)
 * is computed here, on the host, without any numeric work. */
#ifndef FEA_INTERNAL_ETREE_H
#define FEA_INTERNAL_ETREE_H

#include <stddef.h>
#include <stdint.h>

#include <feaccel/solver.h>

#include "disc/space.h"

/* One node (patch). A front is the symmetric (q + r) x (q + r) matrix over
 * front_dofs[front_off .. front_off + q + r): the q DoFs eliminated here
 * first (ascending), then the r DoFs passed up to the parent (ascending),
 * all in the tree's numbering (the caller's free_index). */
typedef struct fea_etree_node {
  int level;              /* height: leaves 0, a parent is above all its children */
  fea_index parent;       /* -1 at the root */
  fea_index first_child;  /* offset into fea_etree.children */
  fea_index num_children; /* 0 for leaves */
  fea_index lo[3], hi[3]; /* element box [lo, hi) per direction (unused directions 0..1) */
  fea_index q, r;         /* eliminated and passed-up DoFs */
  fea_index front_off;    /* into front_dofs: q + r entries */
  fea_index map_off;      /* into ext_map: r entries, this node's r rows in the parent's front */
  fea_index leaf_off;     /* leaves: into leaf_map, elements x dofs_per_element entries; else -1 */
  fea_index factor_off;   /* into the factor storage: the (q + r) x q panel [L11; L21] */
  double flops;           /* fea_multifrontal_node_flops(q, r) */
} fea_etree_node;

typedef struct fea_etree {
  int dim;
  fea_multifrontal_merge merge; /* TENSOR or PAIRWISE: what was built (never AUTO) */
  int keep_boundary;
  fea_index num_nodes;
  fea_etree_node *nodes;    /* post-order: children before parents, the root last */
  fea_index *children;      /* children of node n: children[first_child .. + num_children) */
  int num_levels;           /* root level + 1 */
  fea_index *level_start;   /* num_levels + 1: level L's nodes are */
  fea_index *level_nodes;   /*   level_nodes[level_start[L] .. level_start[L + 1]) */
  fea_index num_dofs;       /* size of the tree's numbering: one past its largest index (the
                                count of entries of free_index >= 0 when they are 0, 1, ...) */
  fea_index num_eliminated; /* sum of q */
  fea_index *front_dofs;    /* sum of (q + r) */
  int32_t *ext_map;         /* sum of r over non-root nodes (the root's r rows stay) */
  int32_t *leaf_map;        /* per leaf, per element of its box (lexicographic), per
                                element-local DoF: the row in the leaf front, -1 when the
                                DoF is not in the tree (Dirichlet) */
  fea_index dofs_per_element;
  /* Exact totals (see fea_multifrontal_node_flops for the convention). */
  double flops;               /* sum over nodes */
  double critical_path_flops; /* sum over levels of the largest node's flops */
  fea_index factor_entries;   /* sum of q^2 + q r: the stored panels */
  fea_index max_front;        /* max of q + r */
  fea_index peak_entries;     /* doubles alive at the peak of the numeric setup (see etree.c) */
} fea_etree;

/* A lower bound of a tree's sizes from the knot vectors alone
 * (src/multifrontal/etree-bound.c), in entries, as doubles. */
typedef struct fea_etree_bound {
  double factor_entries; /* <= fea_etree.factor_entries of any problem on the space */
  double front_entries;  /* <= the tree's front index lists, sum q + r */
  double num_nodes;      /* the tree's node count (exact when complete) */
  double interior_dofs;  /* DoFs interior in every direction: free in every problem */
  int complete;          /* 0: the walk stopped once factor_entries passed stop */
} fea_etree_bound;

/* Walk the boxes fea_etree_build makes for space s with merge (AUTO allowed)
 * and bound its sizes from below; stop > 0 ends the walk once
 * factor_entries exceeds it (out->complete = 0). No O(DoF) memory.
 * Errors: FEA_ERR_UNSUPPORTED for a non-B-spline space, FEA_ERR_OUT_OF_MEMORY. */
fea_status fea_etree_bound_eval(const fea_space *s, fea_multifrontal_merge merge, double stop,
                                fea_etree_bound *out);
/* The same from the knot vectors of a space not built (dim directions). */
fea_status fea_etree_bound_knots(const fea_context *ctx, int dim, const fea_knots knots[3],
                                 fea_multifrontal_merge merge, double stop, fea_etree_bound *out);

/* Build the tree of B-spline space s. free_index has one entry per DoF: its
 * index in the tree's numbering, or -1 for a DoF that is not solved for
 * (Dirichlet). merge AUTO takes the default documented in etree.c. With
 * keep_boundary, the space's boundary DoFs are never eliminated: they stay
 * in the root's r (the root's front then ends with their Schur complement).
 * Errors: FEA_ERR_UNSUPPORTED for a non-B-spline space, FEA_ERR_OUT_OF_MEMORY. */
fea_status fea_etree_build(const fea_space *s, const fea_index *free_index,
                           fea_multifrontal_merge merge, int keep_boundary, fea_etree *out);
void fea_etree_free(fea_etree *t);

/* The merge AUTO resolves to (see etree.c for the measurements behind it). */
fea_multifrontal_merge fea_etree_auto_merge(int dim);

/* Floating-point operations of one node's partial Cholesky, the single
 * convention of the tree's totals and of the numeric phase's counts:
 *   potrf of the q x q block   q^3/3 + q^2/2 + q/6
 *   trsm of the r x q block    r q^2
 *   syrk of the r x r block    q r (r + 1)   (lower triangle, 2q per entry) */
double fea_multifrontal_node_flops(fea_index q, fea_index r);

/* Entries of the stack a post-order walk of the subtree [first, s] holds at
 * most, its root's block not counted: a node's block with its children's,
 * the blocks of a root-to-leaf path and their siblings'. Inline: the CPU
 * backends size their stacks with it, the memory guard its peak
 * (fea_etree_walk_peak), and backends call no function of this family. */
static inline size_t fea_etree_subtree_stack(const fea_etree *t, fea_index first, fea_index s) {
  size_t top = 0, peak = 0;
  for (fea_index n = first; n < s; n++) {
    const fea_etree_node *nd = &t->nodes[n];
    size_t below = 0;
    for (fea_index k = 0; k < nd->num_children; k++) {
      const fea_etree_node *c = &t->nodes[t->children[nd->first_child + k]];
      below += (size_t)(c->r * c->r);
    }
    const size_t own = (size_t)(nd->r * nd->r);
    if (top + own > peak) peak = top + own;
    top = top - below + own;
  }
  return peak;
}

/* Doubles alive at the peak of a factorization that walks the levels up to
 * `cut` as subtrees on at most `team` workers, each with a stack, and the
 * levels above level by level (the CPU backends); cut -1 is the level walk
 * alone, t->peak_entries. An upper bound of what that walk allocates.
 * Errors: FEA_ERR_OUT_OF_MEMORY for its O(nodes) scratch. */
fea_status fea_etree_walk_peak(const fea_context *ctx, const fea_etree *t, int cut, int team,
                               fea_index *peak);

/* The same for the walk ctx's backend runs: its below_cut, else the level
 * walk. The figure fea_solver_setup() checks, and fea_cost_model_fits. */
fea_status fea_etree_context_peak(const fea_context *ctx, const fea_etree *t, fea_index *peak);

/* The row of tree DoF t in node n's front, or -1 when it is not there. */
fea_index fea_etree_front_position(const fea_etree *t, fea_index n, fea_index dof);

#endif
