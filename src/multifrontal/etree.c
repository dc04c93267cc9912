/* Symbolic phase of the IGA multifrontal solver: the patch tree of a
 * tensor-product B-spline space, built from the knot vectors alone.
 *
 * Splitting. The root is the whole element box. Direction k of a box
 * [lo, hi) can be split
 *   - at a C0 separator strictly inside it (an interior knot of multiplicity
 *     >= p_k, for p_k >= 2): the one nearest the middle. Only one function per
 *     line straddles such a knot, so the two sides share an interface of 1
 *     instead of p_k (refined IGA): the tree is cut along separators first,
 *     whatever the box size;
 *   - else at the midpoint when hi - lo >= 2 (p_k + 1), so that leaves keep
 *     p_k + 1 .. 2 p_k + 1 elements ((p+1)^d leaves of (p+1)^d elements when
 *     n = (p+1) 2^s, the paper's tree). For p_k = 1 every knot is C0 and the
 *     midpoint is one, so the regular rule already cuts along separators.
 * TENSOR splits every splittable direction at once (2^d children);
 * PAIRWISE splits one (one with a separator if any, else the longest, the
 * lowest index on ties), which alternates the directions on square boxes.
 *
 * AUTO is PAIRWISE. Both trees reach the same boxes every d levels, but the
 * pairwise tree eliminates a cross-shaped separator in two steps (first the
 * half lines between pairs, with fronts of about half the size), so its
 * q^3 and q r^2 terms shrink. Exact counts: 2D p = 3, n = 512 (263k DoFs):
 * 6.6e10 FLOPs and 0.73 GB of factors against 1.03e11 and 1.01 GB (0.64x,
 * 0.73x); n = 1000: 5.1e11 against 8.0e11; 3D p = 2, n = 24: 0.43x. Measured
 * (/cpu/threads, 2 cores, EPYC): setup 7.5 s against 9.8 s at n = 512. On
 * small problems (66k DoFs) the more numerous small fronts make pairwise
 * about 15 % slower, which matters less than the large-problem gain.
 * 1D trees are identical.
 *
 * Systems. On a space with ncomp components every function's DoFs c + ncomp i
 * go where the function goes: the tree (boxes, levels) is the scalar one and
 * each front is ncomp times larger, so q and r, and the exact counts from
 * them, are the scalar ones times ncomp (p~ = p N_eq of the cost model).
 *
 * Elimination. A DoF is eliminated at the lowest node whose box contains its
 * whole support (per direction, the elements of the non-empty knot spans it
 * covers, so repeated knots are handled by the real span structure). Its
 * front is the set of DoFs whose support meets the box; the ones not
 * eliminated in the subtree are the r passed up. Dirichlet DoFs
 * (free_index -1) never enter a front; with keep_boundary the space's
 * boundary DoFs are never eliminated and end in the root's r.
 *
 * Peak memory of the numeric phase (in doubles), which the setup checks
 * against the memory limit before allocating: the factor panels
 * sum (q + r) q, the load vector (num_dofs), the Schur complements alive at
 * the end of the worst level (a node's r x r complement lives from its level
 * to the end of its parent's level: complements are freed level by level),
 * and at level 0 the leaves' load buffers sum (q + r). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "internal/etree.h"
#include "etree-split.h"
#include "base/sort.h"

typedef struct builder {
  const fea_space *s;
  const fea_index *free_index; /* per vector DoF c + ncomp i */
  int dim, keep_boundary;
  int ncomp; /* components per function: a DoF's box test uses its function i */
  fea_multifrontal_merge merge;
  fea_etree_dir dir[3];
  fea_index stride[3]; /* DoF index = sum i_k stride_k */
  fea_etree_node *nodes;
  fea_index num_nodes, cap_nodes;
  fea_index *children;
  fea_index num_children, cap_children;
  fea_index *front;
  fea_index num_front, cap_front;
  fea_index *scratch; /* a leaf's touching DoFs, or the union of children's r */
  fea_index cap_scratch;
  fea_status st;
} builder;

double fea_multifrontal_node_flops(fea_index q, fea_index r) {
  double dq = (double)q, dr = (double)r;
  return dq * dq * dq / 3.0 + dq * dq / 2.0 + dq / 6.0 + dr * dq * dq + dq * dr * (dr + 1.0);
}

fea_multifrontal_merge fea_etree_auto_merge(int dim) {
  (void)dim;
  return FEA_MULTIFRONTAL_MERGE_PAIRWISE;
}

static void *grow(void *ptr, fea_index *cap, fea_index need, size_t elem) {
  if (need < 1) need = 1; /* so that an empty array is still allocated */
  if (need <= *cap) return ptr;
  fea_index c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *p = realloc(ptr, (size_t)c * elem);
  if (p) *cap = c;
  return p;
}

#define GROW(b, arr, cap, need)                                                            \
  do {                                                                                     \
    void *g_ = grow((b)->arr, &(b)->cap, (need), sizeof *(b)->arr);                        \
    if (!g_) {                                                                             \
      (b)->st = FEA_ERROR((b)->s->ctx, FEA_ERR_OUT_OF_MEMORY,                              \
                          "no memory for the elimination tree (%lld entries of " #arr ")", \
                          (long long)(need));                                              \
      return -1;                                                                           \
    }                                                                                      \
    (b)->arr = g_;                                                                         \
  } while (0)

static int never_eliminated(const builder *b, fea_index dof) {
  if (!b->keep_boundary) return 0;
  dof /= b->ncomp;
  for (int k = 0; k < b->dim; k++) {
    fea_index i = dof / b->stride[k] % b->dir[k].nf;
    if (i == 0 || i == b->dir[k].nf - 1) return 1;
  }
  return 0;
}

/* The child (0 .. nch-1) of a split box containing DoF dof's support, or -1. */
static int child_of(const builder *b, fea_index dof, const fea_index cut[3]) {
  int c = 0, mul = 1;
  dof /= b->ncomp; /* every component of a function has the function's support */
  for (int k = 0; k < b->dim; k++) {
    if (cut[k] < 0) continue;
    fea_index i = dof / b->stride[k] % b->dir[k].nf;
    if (b->dir[k].sup_hi[i] < cut[k])
      c += 0;
    else if (b->dir[k].sup_lo[i] >= cut[k])
      c += mul;
    else
      return -1;
    mul *= 2;
  }
  return c;
}

/* Append the tree indices of the DoFs touching [lo, hi) to scratch; the count. */
static fea_index touching(builder *b, const fea_index lo[3], const fea_index hi[3]) {
  fea_index f0[3] = {0, 0, 0}, f1[3] = {0, 0, 0}, count = 1;
  for (int k = 0; k < b->dim; k++) {
    f0[k] = b->dir[k].fn_lo[lo[k]];
    f1[k] = b->dir[k].fn_hi[hi[k] - 1];
    count *= f1[k] - f0[k] + 1;
  }
  const int nc = b->ncomp;
  GROW(b, scratch, cap_scratch, count * nc);
  fea_index n = 0;
  for (fea_index i2 = f0[2]; i2 <= f1[2]; i2++)
    for (fea_index i1 = f0[1]; i1 <= f1[1]; i1++)
      for (fea_index i0 = f0[0]; i0 <= f1[0]; i0++) {
        const fea_index i = i0 * b->stride[0] + i1 * b->stride[1] + i2 * b->stride[2];
        for (int c = 0; c < nc; c++) {
          fea_index t = b->free_index[c + nc * i];
          if (t >= 0) b->scratch[n++] = t;
        }
      }
  return n;
}

/* Sorted list a minus sorted list q, in place; the new length. */
static fea_index subtract(fea_index *a, fea_index na, const fea_index *q, fea_index nq) {
  fea_index w = 0, j = 0;
  for (fea_index i = 0; i < na; i++) {
    while (j < nq && q[j] < a[i]) j++;
    if (j < nq && q[j] == a[i]) continue;
    a[w++] = a[i];
  }
  return w;
}

/* Build the subtree of box [lo, hi) whose eliminable DoFs (space numbering,
 * supports inside the box, not eliminated below an ancestor) are dofs[0..n).
 * Returns the node index, or -1 with b->st set. */
static fea_index build(builder *b, const fea_index lo[3], const fea_index hi[3], fea_index *dofs,
                       fea_index n) {
  fea_index cut[3];
  const int nsplit = fea_etree_choose_cuts(b->dir, b->dim, b->merge, lo, hi, cut);
  const int nch = 1 << nsplit;
  fea_index child_nodes[8];
  fea_index nq = n;
  int child_level = -1;
  if (nsplit > 0) {
    /* Partition: DoFs inside a child go down, the rest (the q here) stay in
     * front of dofs. Children lists are carved from one buffer. */
    fea_index counts[8] = {0};
    int *which = malloc((size_t)(n ? n : 1) * sizeof *which);
    fea_index *buf = malloc((size_t)(n ? n : 1) * sizeof *buf);
    if (!which || !buf) {
      free(which);
      free(buf);
      b->st = FEA_ERROR(b->s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to split %lld DoFs",
                        (long long)n);
      return -1;
    }
    nq = 0;
    for (fea_index i = 0; i < n; i++) {
      which[i] = child_of(b, dofs[i], cut);
      if (which[i] >= 0) counts[which[i]]++;
    }
    fea_index start[9] = {0};
    for (int c = 0; c < nch; c++) start[c + 1] = start[c] + counts[c];
    fea_index fill[8];
    memcpy(fill, start, sizeof fill);
    for (fea_index i = 0; i < n; i++) {
      if (which[i] >= 0)
        buf[fill[which[i]]++] = dofs[i];
      else
        dofs[nq++] = dofs[i];
    }
    free(which);
    for (int c = 0; c < nch; c++) {
      fea_index clo[3], chi[3];
      int bit = 0;
      for (int k = 0; k < 3; k++) {
        clo[k] = lo[k];
        chi[k] = hi[k];
        if (k < b->dim && cut[k] >= 0) {
          if (c >> bit & 1)
            clo[k] = cut[k];
          else
            chi[k] = cut[k];
          bit++;
        }
      }
      child_nodes[c] = build(b, clo, chi, buf + start[c], counts[c]);
      if (child_nodes[c] < 0) {
        free(buf);
        return -1;
      }
      if (b->nodes[child_nodes[c]].level > child_level)
        child_level = b->nodes[child_nodes[c]].level;
    }
    free(buf);
  }
  /* q: the remaining DoFs, in tree numbering, ascending. */
  for (fea_index i = 0; i < nq; i++) dofs[i] = b->free_index[dofs[i]];
  qsort(dofs, (size_t)nq, sizeof *dofs, fea_index_cmp);
  /* r: the DoFs touching the box (leaves) or the children's r (others), minus q. */
  fea_index nr = 0;
  if (nsplit == 0) {
    nr = touching(b, lo, hi);
    if (nr < 0 && b->st != FEA_SUCCESS) return -1;
  } else {
    fea_index total = 0;
    for (int c = 0; c < nch; c++) total += b->nodes[child_nodes[c]].r;
    GROW(b, scratch, cap_scratch, total);
    for (int c = 0; c < nch; c++) {
      const fea_etree_node *cn = &b->nodes[child_nodes[c]];
      memcpy(b->scratch + nr, b->front + cn->front_off + cn->q, (size_t)cn->r * sizeof *b->front);
      nr += cn->r;
    }
  }
  qsort(b->scratch, (size_t)nr, sizeof *b->scratch, fea_index_cmp);
  fea_index u = 0;
  for (fea_index i = 0; i < nr; i++)
    if (u == 0 || b->scratch[i] != b->scratch[u - 1]) b->scratch[u++] = b->scratch[i];
  nr = subtract(b->scratch, u, dofs, nq);

  GROW(b, nodes, cap_nodes, b->num_nodes + 1);
  GROW(b, children, cap_children, b->num_children + (nsplit ? nch : 0));
  GROW(b, front, cap_front, b->num_front + nq + nr);
  fea_index id = b->num_nodes++;
  fea_etree_node *nd = &b->nodes[id];
  memset(nd, 0, sizeof *nd);
  nd->level = child_level + 1;
  nd->parent = -1;
  nd->first_child = b->num_children;
  nd->num_children = nsplit ? nch : 0;
  for (int c = 0; c < (nsplit ? nch : 0); c++) {
    b->children[b->num_children++] = child_nodes[c];
    b->nodes[child_nodes[c]].parent = id;
  }
  for (int k = 0; k < 3; k++) nd->lo[k] = lo[k], nd->hi[k] = hi[k];
  nd->q = nq;
  nd->r = nr;
  nd->front_off = b->num_front;
  memcpy(b->front + b->num_front, dofs, (size_t)nq * sizeof *dofs);
  memcpy(b->front + b->num_front + nq, b->scratch, (size_t)nr * sizeof *b->scratch);
  b->num_front += nq + nr;
  nd->leaf_off = -1;
  return id;
}

fea_index fea_etree_front_position(const fea_etree *t, fea_index n, fea_index dof) {
  const fea_etree_node *nd = &t->nodes[n];
  const fea_index *f = t->front_dofs + nd->front_off;
  fea_index parts[2][2] = {{0, nd->q}, {nd->q, nd->q + nd->r}};
  for (int p = 0; p < 2; p++) {
    const fea_index lo = parts[p][0] +
                         fea_index_lower_bound(f + parts[p][0], parts[p][1] - parts[p][0], dof);
    if (lo < parts[p][1] && f[lo] == dof) return lo;
  }
  return -1;
}

/* Levels, maps, offsets and totals of a built tree. */
static fea_status finish(const fea_space *s, const fea_index *free_index, fea_etree *t) {
  fea_context *ctx = s->ctx;
  const fea_index nn = t->num_nodes;
  t->num_levels = t->nodes[nn - 1].level + 1;
  t->level_start = calloc((size_t)t->num_levels + 1, sizeof *t->level_start);
  t->level_nodes = malloc((size_t)nn * sizeof *t->level_nodes);
  double *level_max = calloc((size_t)t->num_levels, sizeof *level_max);
  /* live[L]: Schur entries alive at the end of level L (difference array). */
  double *live = calloc((size_t)t->num_levels + 1, sizeof *live);
  if (!t->level_start || !t->level_nodes || !level_max || !live) {
    free(level_max);
    free(live);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the levels of %lld nodes",
                     (long long)nn);
  }
  fea_index ext = 0, leaf = 0, factor = 0, leaf_loads = 0;
  for (fea_index n = 0; n < nn; n++) {
    fea_etree_node *nd = &t->nodes[n];
    t->level_start[nd->level + 1]++;
    nd->flops = fea_multifrontal_node_flops(nd->q, nd->r);
    t->flops += nd->flops;
    if (nd->flops > level_max[nd->level]) level_max[nd->level] = nd->flops;
    nd->factor_off = factor;
    factor += (nd->q + nd->r) * nd->q;
    t->num_eliminated += nd->q;
    if (nd->q + nd->r > t->max_front) t->max_front = nd->q + nd->r;
    nd->map_off = ext;
    if (nd->parent >= 0) ext += nd->r;
    if (nd->num_children == 0) {
      nd->leaf_off = leaf;
      fea_index ne = 1;
      for (int k = 0; k < s->dim; k++) ne *= nd->hi[k] - nd->lo[k];
      leaf += ne * fea_space_element_size(s);
      leaf_loads += nd->q + nd->r;
    }
    int last = nd->parent >= 0 ? t->nodes[nd->parent].level : nd->level;
    live[nd->level] += (double)nd->r * (double)nd->r;
    live[last + 1] -= (double)nd->r * (double)nd->r;
  }
  FEA_CHECK(t->max_front <= INT32_MAX, ctx, FEA_ERR_UNSUPPORTED,
            "a front of %lld DoFs is beyond the solver's 32-bit front positions",
            (long long)t->max_front);
  t->factor_entries = factor;
  double worst = 0, run = 0;
  for (int L = 0; L < t->num_levels; L++) {
    t->critical_path_flops += level_max[L];
    run += live[L];
    double here = run + (L == 0 ? (double)leaf_loads : 0.0);
    if (here > worst) worst = here;
  }
  free(level_max);
  free(live);
  t->peak_entries = factor + t->num_dofs + (fea_index)worst;
  for (int L = 0; L < t->num_levels; L++) t->level_start[L + 1] += t->level_start[L];
  fea_index *fill = malloc((size_t)t->num_levels * sizeof *fill);
  t->ext_map = malloc((size_t)(ext ? ext : 1) * sizeof *t->ext_map);
  t->leaf_map = malloc((size_t)(leaf ? leaf : 1) * sizeof *t->leaf_map);
  const int nbv = fea_space_element_size(s); /* vector DoFs per element */
  fea_index *edofs = malloc((size_t)nbv * sizeof *edofs);
  if (!fill || !t->ext_map || !t->leaf_map || !edofs) {
    free(fill);
    free(edofs);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the index maps (%lld extend-add, %lld leaf entries)",
                     (long long)ext, (long long)leaf);
  }
  memcpy(fill, t->level_start, (size_t)t->num_levels * sizeof *fill);
  for (fea_index n = 0; n < nn; n++) t->level_nodes[fill[t->nodes[n].level]++] = n;
  free(fill);
  for (fea_index n = 0; n < nn; n++) {
    const fea_etree_node *nd = &t->nodes[n];
    if (nd->parent >= 0)
      for (fea_index i = 0; i < nd->r; i++)
        t->ext_map[nd->map_off + i] = (int32_t)
            fea_etree_front_position(t, nd->parent, t->front_dofs[nd->front_off + nd->q + i]);
    if (nd->num_children > 0) continue;
    int32_t *m = t->leaf_map + nd->leaf_off;
    for (fea_index e2 = nd->lo[2]; e2 < nd->hi[2]; e2++)
      for (fea_index e1 = nd->lo[1]; e1 < nd->hi[1]; e1++)
        for (fea_index e0 = nd->lo[0]; e0 < nd->hi[0]; e0++) {
          fea_index e = e0 + s->elements[0] * (e1 + (s->dim > 1 ? s->elements[1] : 1) * e2);
          fea_space_element_vdofs(s, e, edofs);
          for (int j = 0; j < nbv; j++) {
            fea_index td = free_index[edofs[j]];
            *m++ = td < 0 ? -1 : (int32_t)fea_etree_front_position(t, n, td);
          }
        }
  }
  free(edofs);
  return FEA_SUCCESS;
}

void fea_etree_free(fea_etree *t) {
  if (!t) return;
  free(t->nodes);
  free(t->children);
  free(t->level_start);
  free(t->level_nodes);
  free(t->front_dofs);
  free(t->ext_map);
  free(t->leaf_map);
  memset(t, 0, sizeof *t);
}

fea_status fea_etree_build(const fea_space *s, const fea_index *free_index,
                           fea_multifrontal_merge merge, int keep_boundary, fea_etree *out) {
  memset(out, 0, sizeof *out);
  FEA_CHECK(s->kind == FEA_SPACE_BSPLINE, s->ctx, FEA_ERR_UNSUPPORTED,
            "the multifrontal tree needs a B-spline space, not a %s space",
            s->kind == FEA_SPACE_LAGRANGE ? "Lagrange" : "non-B-spline");
  FEA_CHECK(merge == FEA_MULTIFRONTAL_MERGE_AUTO || merge == FEA_MULTIFRONTAL_MERGE_TENSOR ||
                merge == FEA_MULTIFRONTAL_MERGE_PAIRWISE,
            s->ctx, FEA_ERR_INVALID_ARG, "unknown merge %d (AUTO, TENSOR or PAIRWISE)", (int)merge);
  builder b = {.s = s,
               .free_index = free_index,
               .dim = s->dim,
               .keep_boundary = keep_boundary,
               .ncomp = s->ncomp,
               .merge = merge == FEA_MULTIFRONTAL_MERGE_AUTO ? fea_etree_auto_merge(s->dim) : merge,
               .st = FEA_SUCCESS};
  fea_index st = 1;
  for (int k = 0; k < 3; k++) {
    if (k < s->dim) {
      b.st = fea_etree_dir_init(s->ctx, &((const fea_bspline_space *)s->impl)->knots[k], k,
                                &b.dir[k]);
      if (b.st != FEA_SUCCESS) goto fail;
    } else {
      b.dir[k].nf = 1; /* so that index arithmetic in unused directions is 0 */
    }
    b.stride[k] = st;
    st *= b.dir[k].nf;
  }
  const fea_index nv = fea_space_total_dofs(s);
  fea_index *dofs = malloc((size_t)(nv ? nv : 1) * sizeof *dofs);
  if (!dofs) {
    b.st = FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld DoFs", (long long)nv);
    goto fail;
  }
  /* The numbering's size: one past its largest index (a kept boundary
   * without its Dirichlet DoFs numbers by space DoF, with gaps). Vector
   * DoFs c + ncomp i: the same boxes, each function's components together. */
  fea_index n = 0, ntree = 0;
  for (fea_index d = 0; d < nv; d++) {
    if (free_index[d] < 0) continue;
    if (free_index[d] >= ntree) ntree = free_index[d] + 1;
    if (!never_eliminated(&b, d)) dofs[n++] = d;
  }
  fea_index lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  for (int k = 0; k < s->dim; k++) hi[k] = s->elements[k];
  fea_index root = build(&b, lo, hi, dofs, n);
  free(dofs);
  if (root < 0) goto fail;
  out->dim = s->dim;
  out->merge = b.merge;
  out->keep_boundary = keep_boundary;
  out->num_nodes = b.num_nodes;
  out->nodes = b.nodes;
  out->children = b.children;
  out->front_dofs = b.front;
  out->num_dofs = ntree;
  out->dofs_per_element = fea_space_element_size(s);
  b.nodes = NULL;
  b.children = NULL;
  b.front = NULL;
  b.st = finish(s, free_index, out);
  if (b.st != FEA_SUCCESS) fea_etree_free(out);
fail:
  for (int k = 0; k < s->dim; k++) fea_etree_dir_free(&b.dir[k]);
  free(b.nodes);
  free(b.children);
  free(b.front);
  free(b.scratch);
  return b.st;
}
