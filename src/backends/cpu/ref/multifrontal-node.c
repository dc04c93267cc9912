/* One node's dense work in the CPU multifrontal code, shared by /cpu/ref
 * and /cpu/threads: factor its front, and its step of the forward and of
 * the backward substitution. Calls only the leaf element loop
 * (multifrontal-leaf.c) and the Schur pool; the walks call these.
 *
 * A node's front is its panel [A11; A21] in the factor storage plus its
 * r x r Schur block (see multifrontal.h). Leaves integrate their elements
 * straight into it; other nodes add their children's Schur blocks through
 * the extend-add maps. Then, through the dense ops:
 *   potrf  A11 = L11 L11^T
 *   trsm   L21 = A21 L11^-T
 *   syrk   S   = A22 - L21 L21^T
 * Element and extend-add loops touch each entry once; all O(q^3, q r^2)
 * work is BLAS-3. Right after each potrf the diagonal it produced, still in
 * cache, gives the node's pivot range (f->pivots, the accuracy report):
 * q loads per front, no pass over the factor. The solve steps work in a
 * block the caller owns (a thread's block of the sweep's work,
 * multifrontal-sweep-work.c) and allocate nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "base/progress.h"
#include "backends/cpu/cpu.h"
#include "linalg/dense.h"
#include "internal/error.h"
#include "internal/etree.h"

static fea_status assemble_leaf(fea_context *ctx, fea_multifrontal_factor *f, fea_index n,
                                double *P, double *S, double *integrate_s) {
  const fea_etree_node *nd = &f->tree->nodes[n];
  const fea_index m = nd->q + nd->r;
  *integrate_s = 0;
  double *load = calloc((size_t)(m ? m : 1), sizeof *load);
  FEA_CHECK(load, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the load of leaf %lld", (long long)n);
  fea_status st = fea_multifrontal_assemble_leaf(ctx, f, n, P, S, load, integrate_s);
  if (st == FEA_SUCCESS)
    f->leaf_load[n] = load;
  else
    free(load);
  return st;
}

/* Add the children's Schur complements into this node's front.
 *
 * Fronts list their eliminated DoFs first, then the ones passed up, each
 * group ascending (etree.c), and a child's r DoFs are ascending too. So for
 * child rows i >= j the parent positions satisfy mp[i] > mp[j] whenever both
 * go to the same group, and a row passed up always lands below a row
 * eliminated here. Which block an entry goes to then depends on column j and,
 * only for columns passed up, on row i: no per-entry min/max, and the writes
 * run down parent columns in order. */
static void extend_add(const fea_multifrontal_factor *f, fea_index n, double *P, double *S) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[n];
  const fea_index q = nd->q, m = nd->q + nd->r, r = nd->r;
  for (fea_index k = 0; k < nd->num_children; k++) {
    fea_index c = t->children[nd->first_child + k];
    const fea_etree_node *cn = &t->nodes[c];
    const double *Sc = f->schur[c];
    const int32_t *mp = t->ext_map + cn->map_off;
    const fea_index rc = cn->r;
    for (fea_index j = 0; j < rc; j++) {
      const double *col = Sc + j * rc;
      const fea_index cj = mp[j];
      if (cj < q) {
        double *dst = P + cj * m; /* panel column cj: every row i >= j lies below */
        for (fea_index i = j; i < rc; i++) dst[mp[i]] += col[i];
      } else {
        double *dst = S + (cj - q) * r - q;
        for (fea_index i = j; i < rc; i++) {
          fea_index ri = mp[i];
          if (ri >= q)
            dst[ri] += col[i];
          else
            P[cj + ri * m] += col[i]; /* (cj, ri) lies in panel column ri */
        }
      }
    }
  }
}

/* potrf of the w x w diagonal block D (ld ld) holding the front's columns
 * [k, k + w) of q, and its pivots L_jj^2 into the range {*lo, *hi}. A
 * failure names the pivot: LAPACK (and OpenBLAS) leave L_jj > 0 in the
 * columns before the failing one and the failing pivot's value in its
 * place, so the first diagonal entry that is not positive is it. */
static fea_status potrf_pivots(fea_context *ctx, double *D, fea_index w, fea_index ld, fea_index k,
                               fea_index q, double *lo, double *hi) {
  fea_dmat Dk = {.data = D, .rows = w, .cols = w, .ld = ld, .prec = FEA_F64};
  const fea_status st = fea_dense_potrf(ctx, FEA_LOWER, &Dk);
  if (st == FEA_ERR_NOT_POSDEF) {
    fea_index j = 0;
    while (j < w && D[j + j * ld] > 0) j++;
    if (j < w)
      return FEA_ERROR(ctx, st, "pivot %lld of its %lld is %.6g", (long long)(k + j), (long long)q,
                       D[j + j * ld]);
    return FEA_ERROR(ctx, st, "a pivot of columns [%lld, %lld) of %lld is not positive",
                     (long long)k, (long long)(k + w), (long long)q);
  }
  FEA_CALL(st);
  for (fea_index j = 0; j < w; j++) {
    const double d = D[j + j * ld] * D[j + j * ld];
    fea_multifrontal_pivots_merge(lo, hi, d, d);
  }
  return FEA_SUCCESS;
}

/* Fronts from this many eliminated DoFs on factor by blocked_front. */
#define BLOCKED_MIN_Q 256
#define BLOCKED_NB 128

/* The front's partial Cholesky factorization right-looking in column blocks
 * of BLOCKED_NB: per block, potrf of its diagonal block, trsm of the rows
 * below it (the rest of the panel and A21), syrk and gemm of the rest of
 * the panel, and syrk of S at rank BLOCKED_NB. The same flops as one potrf
 * of A11, one trsm of A21 and one syrk of S, which OpenBLAS runs slowly:
 * its trsm with a wide triangle and its potrf reached 0.50 and 0.39 of
 * DGEMM on one thread (q = 1539, r = 3075), where the blocked loop puts
 * most of the flops into rank-128 updates. Measured on one core of the
 * shared Xeon VM (OpenBLAS SkylakeX, in cache-warm memory), fraction of the
 * same-run DGEMM: q = 3075, r = 0 (the 2D p = 3 1.05M root) 0.70 -> 0.80;
 * q = 1539, r = 3075: 0.81 -> 0.84; q = 770, r = 1539: 0.69 -> 0.77; q =
 * 386, r = 770: 0.53 -> 0.65 (nb = 256 and 512 gained less). */
static fea_status factor_front_blocked(fea_context *ctx, double *P, double *S, fea_index q,
                                       fea_index r, double *lo, double *hi) {
  const fea_index m = q + r;
  for (fea_index k = 0; k < q; k += BLOCKED_NB) {
    const fea_index w = q - k < BLOCKED_NB ? q - k : BLOCKED_NB;
    double *D = P + k + k * m; /* the diagonal block; the rows below it follow */
    fea_dmat Dk = {.data = D, .rows = w, .cols = w, .ld = m, .prec = FEA_F64};
    FEA_CALL(potrf_pivots(ctx, D, w, m, k, q, lo, hi));
    const fea_index below = m - k - w, rest = q - k - w;
    if (below == 0) break;
    fea_dmat Lk = {.data = D + w, .rows = below, .cols = w, .ld = m, .prec = FEA_F64};
    FEA_CALL(fea_dense_trsm(ctx, FEA_RIGHT, FEA_LOWER, FEA_TRANS, FEA_NON_UNIT, 1.0, &Dk, &Lk));
    if (rest > 0) { /* the panel's remaining columns: rows k + w .. m */
      double *corner = P + (k + w) + (k + w) * m; /* the panel's trailing block */
      fea_dmat Lp = {.data = D + w, .rows = rest, .cols = w, .ld = m, .prec = FEA_F64};
      fea_dmat T = {.data = corner, .rows = rest, .cols = rest, .ld = m, .prec = FEA_F64};
      FEA_CALL(fea_dense_syrk(ctx, FEA_LOWER, FEA_NO_TRANS, -1.0, &Lp, 1.0, &T));
      if (r > 0) {
        fea_dmat Lr = {.data = D + w + rest, .rows = r, .cols = w, .ld = m, .prec = FEA_F64};
        fea_dmat B = {.data = corner + rest, .rows = r, .cols = rest, .ld = m, .prec = FEA_F64};
        FEA_CALL(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_TRANS, -1.0, &Lr, &Lp, 1.0, &B,
                                FEA_COMPUTE_DEFAULT));
      }
    }
    if (r > 0) {
      fea_dmat Lr = {.data = D + w + rest, .rows = r, .cols = w, .ld = m, .prec = FEA_F64};
      fea_dmat Sm = {.data = S, .rows = r, .cols = r, .ld = r, .prec = FEA_F64};
      FEA_CALL(fea_dense_syrk(ctx, FEA_LOWER, FEA_NO_TRANS, -1.0, &Lr, 1.0, &Sm));
    }
    FEA_CALL(fea_progress_tick(ctx)); /* a large front takes seconds: progress.h */
  }
  return FEA_SUCCESS;
}

fea_status fea_cpu_multifrontal_factor_node(fea_context *ctx, fea_multifrontal_factor *f,
                                            fea_index n, double *flops, double *integrate_s) {
  double *S = NULL;
  if (f->tree->nodes[n].r > 0) {
    S = fea_cpu_multifrontal_schur_pool_block(f->schur_pool, n);
    FEA_CHECK(S, ctx, FEA_ERR_BACKEND,
              "internal: node %lld has no Schur block (its level was not started)", (long long)n);
  }
  return fea_cpu_multifrontal_factor_node_into(ctx, f, n, S, flops, integrate_s);
}

fea_status fea_cpu_multifrontal_factor_node_into(fea_context *ctx, fea_multifrontal_factor *f,
                                                 fea_index n, double *S, double *flops,
                                                 double *integrate_s) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[n];
  const fea_index q = nd->q, r = nd->r, m = q + r;
  *flops = 0;
  *integrate_s = 0;
  double *P = f->panels + nd->factor_off;
  memset(P, 0, (size_t)(m * q) * sizeof *P);
  if (r > 0) {
    /* Only the lower triangle is ever written or read (syrk, extend-add, export). */
    for (fea_index j = 0; j < r; j++) memset(S + j * r + j, 0, (size_t)(r - j) * sizeof *S);
    f->schur[n] = S;
  }
  if (nd->num_children == 0)
    FEA_CALL(assemble_leaf(ctx, f, n, P, S, integrate_s));
  else
    extend_add(f, n, P, S);
  if (q == 0) return FEA_SUCCESS;
  const double dq = (double)q;
  double *range = f->pivots + 2 * n; /* this node's own slot: no race between threads */
  range[0] = INFINITY;
  range[1] = -INFINITY;
  if (q >= BLOCKED_MIN_Q) {
    FEA_CALL(factor_front_blocked(ctx, P, S, q, r, &range[0], &range[1]));
    *flops += dq * dq * dq / 3.0 + dq * dq / 2.0 + dq / 6.0 + (double)r * dq * dq +
              (double)r * ((double)r + 1.0) * dq;
    return FEA_SUCCESS;
  }
  fea_dmat A11 = {.data = P, .rows = q, .cols = q, .ld = m, .prec = FEA_F64};
  FEA_CALL(potrf_pivots(ctx, P, q, m, 0, q, &range[0], &range[1]));
  *flops += dq * dq * dq / 3.0 + dq * dq / 2.0 + dq / 6.0;
  if (r == 0) return FEA_SUCCESS;
  fea_dmat A21 = {.data = P + q, .rows = r, .cols = q, .ld = m, .prec = FEA_F64};
  FEA_CALL(fea_dense_trsm(ctx, FEA_RIGHT, FEA_LOWER, FEA_TRANS, FEA_NON_UNIT, 1.0, &A11, &A21));
  *flops += (double)A21.rows * (double)A21.cols * (double)A21.cols;
  fea_dmat Sm = {.data = S, .rows = r, .cols = r, .ld = r, .prec = FEA_F64};
  FEA_CALL(fea_dense_syrk(ctx, FEA_LOWER, FEA_NO_TRANS, -1.0, &A21, 1.0, &Sm));
  *flops += (double)Sm.rows * ((double)Sm.rows + 1.0) * (double)A21.cols;
  return FEA_SUCCESS;
}

fea_status fea_multifrontal_node_error(fea_context *ctx, const fea_multifrontal_factor *f,
                                       fea_index n, fea_status st, const char *why) {
  const fea_etree_node *nd = &f->tree->nodes[n];
  char box[192];
  size_t u = 0;
  for (int k = 0; k < f->tree->dim && u < sizeof box; k++)
    u += (size_t)snprintf(box + u, sizeof box - u, "%s[%lld, %lld)", k ? " x " : "",
                          (long long)nd->lo[k], (long long)nd->hi[k]);
  if (st == FEA_ERR_NOT_POSDEF)
    return FEA_ERROR(ctx, st,
                     "the front of tree node %lld (level %d, elements %s, q = %lld, r = %lld) is "
                     "not positive definite: %s",
                     (long long)n, nd->level, box, (long long)nd->q, (long long)nd->r, why);
  return FEA_ERROR(ctx, st, "tree node %lld (level %d, elements %s): %s", (long long)n, nd->level,
                   box, why);
}

fea_status fea_cpu_multifrontal_forward_node(fea_context *ctx, const fea_multifrontal_factor *f,
                                             fea_multifrontal_solve *sv, fea_index n, double *W,
                                             const fea_cpu_multifrontal_sweep_work *work) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[n];
  const fea_index q = nd->q, r = nd->r, m = q + r, nrhs = sv->nrhs, N = t->num_dofs;
  const fea_index *dofs = t->front_dofs + nd->front_off;
  /* Rows < q: this node's own; at the root, a kept boundary's r rows too
   * (their load b_B), which leave as the condensed right-hand side. The
   * other rows start at 0 and gather the children's updates. */
  const fea_index own = nd->parent < 0 ? m : q;
  for (fea_index j = 0; j < nrhs; j++) {
    for (fea_index i = 0; i < own; i++) W[i + j * m] = sv->y[dofs[i] + j * N];
    if (own < m) memset(W + own + j * m, 0, (size_t)(m - own) * sizeof *W);
  }
  for (fea_index k = 0; k < nd->num_children; k++) {
    const fea_index c = t->children[nd->first_child + k];
    const fea_etree_node *cn = &t->nodes[c];
    const int32_t *mp = t->ext_map + cn->map_off;
    const fea_index rc = cn->r;
    const double *U = fea_cpu_multifrontal_sweep_update(work, c);
    for (fea_index j = 0; j < nrhs; j++)
      for (fea_index i = 0; i < rc; i++) W[mp[i] + j * m] += U[i + j * rc];
  }
  double *P = f->panels + nd->factor_off;
  fea_dmat L11 = {.data = P, .rows = q, .cols = q, .ld = m, .prec = FEA_F64};
  fea_dmat Wq = {.data = W, .rows = q, .cols = nrhs, .ld = m, .prec = FEA_F64};
  if (q > 0)
    FEA_CALL(fea_dense_trsm(ctx, FEA_LEFT, FEA_LOWER, FEA_NO_TRANS, FEA_NON_UNIT, 1.0, &L11, &Wq));
  if (q > 0 && r > 0) {
    fea_dmat L21 = {.data = P + q, .rows = r, .cols = q, .ld = m, .prec = FEA_F64};
    fea_dmat Wr = {.data = W + q, .rows = r, .cols = nrhs, .ld = m, .prec = FEA_F64};
    FEA_CALL(fea_dense_gemm(ctx, FEA_NO_TRANS, FEA_NO_TRANS, -1.0, &L21, &Wq, 1.0, &Wr,
                            FEA_COMPUTE_DEFAULT));
  }
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < own; i++) sv->y[dofs[i] + j * N] = W[i + j * m];
  /* The rows passed up, for the parent's extend-add: over the children's
   * blocks, read above. */
  if (nd->parent >= 0 && r > 0) {
    double *U = fea_cpu_multifrontal_sweep_update(work, n);
    for (fea_index j = 0; j < nrhs; j++) memcpy(U + j * r, W + q + j * m, (size_t)r * sizeof *U);
  }
  return FEA_SUCCESS;
}

fea_status fea_cpu_multifrontal_backward_node(fea_context *ctx, const fea_multifrontal_factor *f,
                                              fea_multifrontal_solve *sv, fea_index n, double *Z) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[n];
  const fea_index q = nd->q, r = nd->r, m = q + r, nrhs = sv->nrhs, N = t->num_dofs;
  if (q == 0) return FEA_SUCCESS;
  const fea_index *dofs = t->front_dofs + nd->front_off;
  /* Rows < q: y of this node; rows >= q: x of the ancestors (already solved). */
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < m; i++) Z[i + j * m] = sv->y[dofs[i] + j * N];
  double *P = f->panels + nd->factor_off;
  fea_dmat L11 = {.data = P, .rows = q, .cols = q, .ld = m, .prec = FEA_F64};
  fea_dmat Zq = {.data = Z, .rows = q, .cols = nrhs, .ld = m, .prec = FEA_F64};
  if (r > 0) {
    fea_dmat L21 = {.data = P + q, .rows = r, .cols = q, .ld = m, .prec = FEA_F64};
    fea_dmat Zr = {.data = Z + q, .rows = r, .cols = nrhs, .ld = m, .prec = FEA_F64};
    FEA_CALL(fea_dense_gemm(ctx, FEA_TRANS, FEA_NO_TRANS, -1.0, &L21, &Zr, 1.0, &Zq,
                            FEA_COMPUTE_DEFAULT));
  }
  FEA_CALL(fea_dense_trsm(ctx, FEA_LEFT, FEA_LOWER, FEA_TRANS, FEA_NON_UNIT, 1.0, &L11, &Zq));
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < q; i++) sv->y[dofs[i] + j * N] = Z[i + j * m];
  return FEA_SUCCESS;
}
