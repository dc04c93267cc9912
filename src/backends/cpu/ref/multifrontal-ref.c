/* /cpu/ref multifrontal ops: the per-node CPU work (shared with
 * /cpu/threads) and the serial level loops.
 *
 * A node's front is its panel [A11; A21] in the factor storage plus its
 * r x r Schur block (see multifrontal.h). Leaves integrate their elements
 * straight into it; other nodes add their children's Schur blocks through
 * the extend-add maps. Then, through the dense ops:
 *   potrf  A11 = L11 L11^T
 *   trsm   L21 = A21 L11^-T
 *   syrk   S   = A22 - L21 L21^T
 * Element and extend-add loops touch each entry once; all O(q^3, q r^2)
 * work is BLAS-3. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/context.h"
#include "backends/cpu/cpu.h"
#include "linalg/dense.h"
#include "internal/error.h"
#include "internal/etree.h"
#include "base/prefault.h"
#include "disc/problem.h"
#include "base/thread-budget.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Add v at front position (a, b) of a node with q eliminated rows and m = q + r,
 * into the lower triangle: the panel for columns < q, else the Schur block. */
static inline void front_add(double *P, double *S, fea_index q, fea_index m, fea_index a,
                             fea_index b, double v) {
  fea_index row = a > b ? a : b, col = a > b ? b : a;
  if (col < q)
    P[row + col * m] += v;
  else
    S[(row - q) + (col - q) * (m - q)] += v;
}

/* The work arrays of one leaf's element loop (both leaf paths). */
typedef struct leaf_scratch {
  fea_element_values ev;
  double *Ke, *fe;
  double *g; /* per element function: its Dirichlet value on a boundary DoF, else 0 */
  fea_index *edofs;
} leaf_scratch;

static void leaf_scratch_free(leaf_scratch *w) {
  free(w->Ke);
  free(w->fe);
  free(w->g);
  free(w->edofs);
  fea_element_values_free(&w->ev);
}

static fea_status leaf_scratch_alloc(fea_context *ctx, const fea_problem *pb, fea_index n,
                                     leaf_scratch *w) {
  const fea_space *s = pb->space;
  const size_t nb = (size_t)s->dofs_per_element;
  memset(w, 0, sizeof *w);
  FEA_CALL(fea_element_values_alloc(s, &pb->quad, &w->ev));
  w->ev.factors_only = fea_form_factors_suffice(pb);
  w->Ke = malloc(nb * nb * sizeof *w->Ke);
  w->fe = malloc(nb * sizeof *w->fe);
  w->g = malloc(nb * sizeof *w->g);
  w->edofs = malloc(nb * sizeof *w->edofs);
  if (!w->Ke || !w->fe || !w->g || !w->edofs) {
    leaf_scratch_free(w);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the element matrices of leaf %lld",
                     (long long)n);
  }
  return FEA_SUCCESS;
}

/* Element e's DoFs and Dirichlet values into w; 1 when it has any. The
 * boundary test once per function, not per pair: nb^2 lookups of
 * free_index were 0.03 s of the scatter's 0.19 s (2D p = 3, n = 512). */
static int leaf_element_dirichlet(const fea_problem *pb, fea_index e, leaf_scratch *w) {
  const fea_space *s = pb->space;
  const int nb = s->dofs_per_element;
  s->ops->element_dofs(s, e, w->edofs);
  int lifted = 0;
  for (int j = 0; j < nb; j++) {
    const int fixed = pb->free_index[w->edofs[j]] < 0;
    w->g[j] = fixed ? pb->dirichlet[w->edofs[j]] : 0.0;
    lifted |= fixed;
  }
  return lifted;
}

/* The element's load into the leaf's: the problem's free DoFs, lifted by
 * the Dirichlet values (row i of Ke times g; free functions have g = 0 and
 * leave the entry as it is) where the element has any. */
static void leaf_add_load(const fea_problem *pb, int nb, const int32_t *map, int lifted,
                          const leaf_scratch *w, double *load) {
  for (int i = 0; i < nb; i++) {
    const fea_index a = map[i];
    if (a < 0 || pb->free_index[w->edofs[i]] < 0) continue;
    double v = w->fe[i];
    if (lifted) {
      const double *row = w->Ke + (size_t)i * nb;
      for (int j = 0; j < nb; j++) v -= row[j] * w->g[j];
    }
    load[a] += v;
  }
}

fea_status fea_multifrontal_assemble_leaf(fea_context *ctx, const fea_multifrontal_factor *f,
                                          fea_index n, double *P, double *S, double *load,
                                          double *integrate_s) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[n];
  const fea_problem *pb = f->problem;
  const fea_space *s = pb->space;
  const int nb = s->dofs_per_element;
  const fea_index q = nd->q, m = nd->q + nd->r;
  *integrate_s = 0;
  leaf_scratch w;
  FEA_CALL(leaf_scratch_alloc(ctx, pb, n, &w));
  fea_status st = FEA_SUCCESS;
  const int32_t *map = t->leaf_map + nd->leaf_off;
  const fea_index ne0 = s->elements[0], ne1 = s->dim > 1 ? s->elements[1] : 1;
  double integ = 0;
  for (fea_index e2 = nd->lo[2]; e2 < nd->hi[2] && st == FEA_SUCCESS; e2++)
    for (fea_index e1 = nd->lo[1]; e1 < nd->hi[1] && st == FEA_SUCCESS; e1++)
      for (fea_index e0 = nd->lo[0]; e0 < nd->hi[0] && st == FEA_SUCCESS; e0++, map += nb) {
        fea_index e = e0 + ne0 * (e1 + ne1 * e2);
        double t0 = now_s();
        st = s->ops->element_values(s, e, &pb->quad, &w.ev);
        if (st == FEA_SUCCESS) st = fea_form_element_system(pb, e, &w.ev, w.Ke, w.fe);
        integ += now_s() - t0;
        if (st != FEA_SUCCESS) break;
        const int lifted = leaf_element_dirichlet(pb, e, &w);
        for (int i = 0; i < nb; i++) {
          fea_index a = map[i];
          if (a < 0) continue;
          const double *row = w.Ke + (size_t)i * nb;
          for (int j = 0; j < nb; j++)
            if (map[j] >= 0 && a >= map[j]) front_add(P, S, q, m, a, map[j], row[j]);
        }
        leaf_add_load(pb, nb, map, lifted, &w, load);
      }
  *integrate_s = integ;
  leaf_scratch_free(&w);
  return st;
}

int fea_multifrontal_leaf_shape_of(const fea_multifrontal_factor *f,
                                   fea_multifrontal_leaf_shape *shape) {
  const fea_problem *pb = f->problem;
  const fea_space *s = pb->space;
  const fea_quadrature *q = &pb->quad;
  if (s->kind != FEA_SPACE_BSPLINE || ((const fea_bspline_space *)s->impl)->geo) return 0;
  if (pb->desc.element_form || pb->desc.sigma_tensor || fea_problem_has_reaction(pb) ||
      fea_problem_has_robin(pb) || pb->lfaces || q->tensor[0] <= 0)
    return 0;
  fea_multifrontal_leaf_shape sh = {.n = {1, 1, 1}, .m = {1, 1, 1}};
  for (int k = 0; k < s->dim; k++) {
    sh.n[k] = s->degree[k] + 1;
    sh.m[k] = q->tensor[k];
    if (sh.m[k] < 1 || sh.m[k] > FEA_QUAD_MAX_1D) return 0;
  }
  sh.nb = sh.n[0] * sh.n[1] * sh.n[2];
  sh.nq = sh.m[0] * sh.m[1] * sh.m[2];
  if (sh.nq != q->npts || sh.nb != s->dofs_per_element) return 0;
  sh.rec_len = sh.nq;
  for (int k = 0; k < 3; k++) sh.rec_len += 2 * sh.m[k] * sh.n[k];
  *shape = sh;
  return 1;
}

fea_status fea_multifrontal_leaf_records(fea_context *ctx, const fea_multifrontal_factor *f,
                                         fea_index n, const fea_multifrontal_leaf_shape *sh,
                                         double *rec, double *load, double *integrate_s) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[n];
  const fea_problem *pb = f->problem;
  const fea_space *s = pb->space;
  const int nb = s->dofs_per_element, dim = s->dim;
  *integrate_s = 0;
  leaf_scratch w;
  FEA_CALL(leaf_scratch_alloc(ctx, pb, n, &w));
  fea_status st = FEA_SUCCESS;
  if (!w.ev.t1d)
    st = FEA_ERROR(ctx, FEA_ERR_BACKEND, "internal: leaf %lld has no 1D factors for its records",
                   (long long)n);
  const int32_t *map = t->leaf_map + nd->leaf_off;
  const fea_index ne0 = s->elements[0], ne1 = dim > 1 ? s->elements[1] : 1;
  double integ = 0;
  for (fea_index e2 = nd->lo[2]; e2 < nd->hi[2] && st == FEA_SUCCESS; e2++)
    for (fea_index e1 = nd->lo[1]; e1 < nd->hi[1] && st == FEA_SUCCESS; e1++)
      for (fea_index e0 = nd->lo[0]; e0 < nd->hi[0] && st == FEA_SUCCESS;
           e0++, map += nb, rec += sh->rec_len) {
        fea_index e = e0 + ne0 * (e1 + ne1 * e2);
        double t0 = now_s();
        st = s->ops->element_values(s, e, &pb->quad, &w.ev);
        if (st == FEA_SUCCESS && !w.ev.tensor_valid)
          st = FEA_ERROR(ctx, FEA_ERR_BACKEND,
                         "internal: element %lld of leaf %lld has no 1D factors for its record",
                         (long long)e, (long long)n);
        if (st == FEA_SUCCESS) st = fea_form_stiffness_weights(pb, &w.ev, rec);
        /* The element matrix only where Dirichlet values lift the load: the
         * device adds every element's stiffness itself. */
        const int lifted = leaf_element_dirichlet(pb, e, &w);
        if (st == FEA_SUCCESS)
          st = fea_form_element_system(pb, e, &w.ev, lifted ? w.Ke : NULL, w.fe);
        if (st != FEA_SUCCESS) break;
        double *r1 = rec + sh->nq;
        for (int k = 0; k < 3; k++)
          for (int a = 0; a < sh->m[k]; a++, r1 += 2 * sh->n[k]) {
            if (k >= dim) {
              r1[0] = 1.0, r1[1] = 0.0;
              continue;
            }
            const double *row = w.ev.t1d +
                                ((size_t)k * FEA_QUAD_MAX_1D + (size_t)a) * FEA_ELEMENT_T1D_LD;
            memcpy(r1, row, 2 * (size_t)sh->n[k] * sizeof *r1);
          }
        integ += now_s() - t0;
        leaf_add_load(pb, nb, map, lifted, &w, load);
      }
  *integrate_s = integ;
  leaf_scratch_free(&w);
  return st;
}

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
static void extend_add(fea_multifrontal_factor *f, fea_index n, double *P, double *S) {
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
                                       fea_index r) {
  const fea_index m = q + r;
  for (fea_index k = 0; k < q; k += BLOCKED_NB) {
    const fea_index w = q - k < BLOCKED_NB ? q - k : BLOCKED_NB;
    double *D = P + k + k * m; /* the diagonal block; the rows below it follow */
    fea_dmat Dk = {.data = D, .rows = w, .cols = w, .ld = m, .prec = FEA_F64};
    fea_status st = fea_dense_potrf(ctx, FEA_LOWER, &Dk);
    if (st < 0) {
      char why[FEA_ERROR_LEN];
      snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
      return FEA_ERROR(ctx, st, "pivot block of columns [%lld, %lld) of %lld: %s", (long long)k,
                       (long long)(k + w), (long long)q, why);
    }
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
  }
  return FEA_SUCCESS;
}

fea_status fea_multifrontal_cpu_factor_node(fea_context *ctx, fea_multifrontal_factor *f,
                                            fea_index n, double *flops, double *integrate_s) {
  double *S = NULL;
  if (f->tree->nodes[n].r > 0) {
    S = fea_multifrontal_schur_pool_block(f->schur_pool, n);
    FEA_CHECK(S, ctx, FEA_ERR_BACKEND,
              "internal: node %lld has no Schur block (its level was not started)", (long long)n);
  }
  return fea_multifrontal_cpu_factor_node_into(ctx, f, n, S, flops, integrate_s);
}

fea_status fea_multifrontal_cpu_factor_node_into(fea_context *ctx, fea_multifrontal_factor *f,
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
  if (q >= BLOCKED_MIN_Q) {
    FEA_CALL(factor_front_blocked(ctx, P, S, q, r));
    *flops += dq * dq * dq / 3.0 + dq * dq / 2.0 + dq / 6.0 + (double)r * dq * dq +
              (double)r * ((double)r + 1.0) * dq;
    return FEA_SUCCESS;
  }
  fea_dmat A11 = {.data = P, .rows = q, .cols = q, .ld = m, .prec = FEA_F64};
  FEA_CALL(fea_dense_potrf(ctx, FEA_LOWER, &A11));
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

fea_status fea_multifrontal_cpu_level_start(fea_context *ctx, fea_multifrontal_factor *f,
                                            int level) {
  return fea_multifrontal_schur_pool_level_start(ctx, f->schur_pool, level);
}

void fea_multifrontal_cpu_level_done(fea_multifrontal_factor *f, int level) {
  const fea_etree *t = f->tree;
  fea_multifrontal_schur_pool_level_done(f->schur_pool, level);
  for (fea_index k = t->level_start[level]; k < t->level_start[level + 1]; k++) {
    const fea_etree_node *nd = &t->nodes[t->level_nodes[k]];
    for (fea_index c = 0; c < nd->num_children; c++)
      f->schur[t->children[nd->first_child + c]] = NULL;
    if (level != 0) continue;
    fea_index n = t->level_nodes[k];
    const fea_index *dofs = t->front_dofs + nd->front_off;
    const double *load = f->leaf_load[n];
    if (load)
      for (fea_index a = 0; a < nd->q + nd->r; a++) f->load[dofs[a]] += load[a];
    free(f->leaf_load[n]);
    f->leaf_load[n] = NULL;
  }
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

fea_status fea_multifrontal_cpu_forward_node(fea_context *ctx, const fea_multifrontal_factor *f,
                                             fea_multifrontal_solve *sv, fea_index n) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[n];
  const fea_index q = nd->q, r = nd->r, m = q + r, nrhs = sv->nrhs, N = t->num_dofs;
  const fea_index *dofs = t->front_dofs + nd->front_off;
  double *W = calloc((size_t)(m * nrhs > 0 ? m * nrhs : 1), sizeof *W);
  FEA_CHECK(W, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the %lld x %lld block of node %lld",
            (long long)m, (long long)nrhs, (long long)n);
  /* Rows < q: this node's own; at the root, a kept boundary's r rows too
   * (their load b_B), which leave as the condensed right-hand side. */
  const fea_index own = nd->parent < 0 ? m : q;
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < own; i++) W[i + j * m] = sv->y[dofs[i] + j * N];
  for (fea_index k = 0; k < nd->num_children; k++) {
    fea_index c = t->children[nd->first_child + k];
    const fea_etree_node *cn = &t->nodes[c];
    const int32_t *mp = t->ext_map + cn->map_off;
    const fea_index mc = cn->q + cn->r;
    const double *U = sv->update[c];
    for (fea_index j = 0; j < nrhs && U; j++)
      for (fea_index i = 0; i < cn->r; i++) W[mp[i] + j * m] += U[cn->q + i + j * mc];
    free(sv->update[c]);
    sv->update[c] = NULL;
  }
  sv->update[n] = W;
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
  return FEA_SUCCESS;
}

fea_status fea_multifrontal_cpu_backward_node(fea_context *ctx, const fea_multifrontal_factor *f,
                                              fea_multifrontal_solve *sv, fea_index n) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[n];
  const fea_index q = nd->q, r = nd->r, m = q + r, nrhs = sv->nrhs, N = t->num_dofs;
  if (q == 0) return FEA_SUCCESS;
  const fea_index *dofs = t->front_dofs + nd->front_off;
  double *Z = malloc((size_t)(m * nrhs) * sizeof *Z);
  FEA_CHECK(Z, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the %lld x %lld block of node %lld",
            (long long)m, (long long)nrhs, (long long)n);
  /* Rows < q: y of this node; rows >= q: x of the ancestors (already solved). */
  for (fea_index j = 0; j < nrhs; j++)
    for (fea_index i = 0; i < m; i++) Z[i + j * m] = sv->y[dofs[i] + j * N];
  double *P = f->panels + nd->factor_off;
  fea_dmat L11 = {.data = P, .rows = q, .cols = q, .ld = m, .prec = FEA_F64};
  fea_dmat Zq = {.data = Z, .rows = q, .cols = nrhs, .ld = m, .prec = FEA_F64};
  fea_status st = FEA_SUCCESS;
  if (r > 0) {
    fea_dmat L21 = {.data = P + q, .rows = r, .cols = q, .ld = m, .prec = FEA_F64};
    fea_dmat Zr = {.data = Z + q, .rows = r, .cols = nrhs, .ld = m, .prec = FEA_F64};
    st = fea_dense_gemm(ctx, FEA_TRANS, FEA_NO_TRANS, -1.0, &L21, &Zr, 1.0, &Zq,
                        FEA_COMPUTE_DEFAULT);
  }
  if (st == FEA_SUCCESS)
    st = fea_dense_trsm(ctx, FEA_LEFT, FEA_LOWER, FEA_TRANS, FEA_NON_UNIT, 1.0, &L11, &Zq);
  if (st == FEA_SUCCESS)
    for (fea_index j = 0; j < nrhs; j++)
      for (fea_index i = 0; i < q; i++) sv->y[dofs[i] + j * N] = Z[i + j * m];
  free(Z);
  return st;
}

/* Serial ops. */

static fea_status ref_factor_alloc(fea_context *ctx, fea_multifrontal_factor *f) {
  const fea_etree *t = f->tree;
  size_t nn = (size_t)t->num_nodes;
  f->panels = malloc((size_t)(t->factor_entries ? t->factor_entries : 1) * sizeof *f->panels);
  f->schur = calloc(nn, sizeof *f->schur);
  f->leaf_load = calloc(nn, sizeof *f->leaf_load);
  f->load = calloc((size_t)(t->num_dofs ? t->num_dofs : 1), sizeof *f->load);
  fea_status st = FEA_SUCCESS;
  /* Every panel is written once by its front, most of them by the few large
   * fronts near the root, where page faults took half the root's time
   * (prefault.c). */
  if (f->panels)
    fea_memory_prefault(f->panels, (size_t)t->factor_entries * sizeof *f->panels,
                        fea_thread_budget(ctx));
  if (!f->panels || !f->schur || !f->leaf_load || !f->load)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld factor entries",
                   (long long)t->factor_entries);
  if (st == FEA_SUCCESS) st = fea_multifrontal_schur_pool_create(ctx, t, &f->schur_pool);
  if (st < 0) {
    free(f->panels);
    free(f->schur);
    free(f->leaf_load);
    free(f->load);
    f->panels = f->load = NULL;
    f->schur = f->leaf_load = NULL;
  }
  return st;
}

static void ref_factor_release(fea_context *ctx, fea_multifrontal_factor *f) {
  (void)ctx;
  if (!f->tree) return;
  for (fea_index n = 0; n < f->tree->num_nodes; n++)
    if (f->leaf_load) free(f->leaf_load[n]);
  fea_multifrontal_schur_pool_free(f->schur_pool);
  f->schur_pool = NULL;
  free(f->schur);
  free(f->leaf_load);
  free(f->panels);
  free(f->load);
  f->panels = f->load = NULL;
  f->schur = f->leaf_load = NULL;
}

static fea_status ref_factor_level(fea_context *ctx, fea_multifrontal_factor *f, int level) {
  const fea_etree *t = f->tree;
  FEA_CALL(fea_multifrontal_cpu_level_start(ctx, f, level));
  for (fea_index k = t->level_start[level]; k < t->level_start[level + 1]; k++) {
    fea_index n = t->level_nodes[k];
    double flops, integ;
    fea_status st = fea_multifrontal_cpu_factor_node(ctx, f, n, &flops, &integ);
    if (st < 0) {
      char why[FEA_ERROR_LEN];
      snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
      return fea_multifrontal_node_error(ctx, f, n, st, why);
    }
    f->flops += flops;
    f->integrate_s += integ;
  }
  fea_multifrontal_cpu_level_done(f, level);
  return FEA_SUCCESS;
}

/* One thread: the whole tree as one subtree walk (multifrontal-subtrees.c),
 * whose stack holds a path's Schur blocks instead of a level's; with BLAS
 * threads, level by level. */
static int ref_below_cut(const fea_context *ctx, const fea_etree *t, int *team) {
  *team = 1;
  return ctx->nthreads > 1 ? -1 : t->num_levels - 1;
}

static fea_status ref_factor_below(fea_context *ctx, fea_multifrontal_factor *f, int *cut,
                                   double *level_s) {
  int team;
  *cut = -1;
  const int c = ref_below_cut(ctx, f->tree, &team);
  if (c < 0) return FEA_SUCCESS;
  FEA_CALL(fea_multifrontal_cpu_factor_subtrees(ctx, f, c, team, level_s));
  *cut = c;
  return FEA_SUCCESS;
}

static fea_status ref_forward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                    fea_multifrontal_solve *sv, int level) {
  const fea_etree *t = f->tree;
  for (fea_index k = t->level_start[level]; k < t->level_start[level + 1]; k++)
    FEA_CALL(fea_multifrontal_cpu_forward_node(ctx, f, sv, t->level_nodes[k]));
  return FEA_SUCCESS;
}

static fea_status ref_backward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                     fea_multifrontal_solve *sv, int level) {
  const fea_etree *t = f->tree;
  for (fea_index k = t->level_start[level]; k < t->level_start[level + 1]; k++)
    FEA_CALL(fea_multifrontal_cpu_backward_node(ctx, f, sv, t->level_nodes[k]));
  return FEA_SUCCESS;
}

const struct fea_multifrontal_ops fea_cpu_ref_multifrontal_ops = {
    .factor_alloc = ref_factor_alloc,
    .factor_release = ref_factor_release,
    .factor_level = ref_factor_level,
    .factor_below = ref_factor_below,
    .below_cut = ref_below_cut,
    .forward_level = ref_forward_level,
    .backward_level = ref_backward_level,
};
