/* The hierarchical-basis transform S = S_levels ... S_1 on the uniform unit
 * square grid (Ruda et al. 2022, §3): S_k is the identity plus, in the row of each node
 * new on level k, the weights of the level-(k-1) nodal functions there (1/2 of
 * the two ends of the coarse edge it halves, 1/4 of the four corners of the
 * Q1 cell whose centre it is). The sweeps only read level-(k-1) nodes while
 * writing level-k ones, so both S and S^T run in place in O(N). */
#include <stdlib.h>

#include "linalg/csr-product.h"
#include "base/progress.h"
#include "internal/error.h"
#include "macro-mesh.h"
#include "prehandle.h"

fea_status fea_ph_grid_init(fea_context *ctx, fea_ph_element element, fea_index n, fea_index n0,
                            fea_ph_grid *g) {
  FEA_CHECK_NULL(g, ctx);
  FEA_CHECK(element == FEA_PH_Q1 || element == FEA_PH_P1, ctx, FEA_ERR_INVALID_ARG,
            "element %d is neither Q1 (%d) nor P1 (%d)", (int)element, (int)FEA_PH_Q1,
            (int)FEA_PH_P1);
  FEA_CHECK(n0 >= 1, ctx, FEA_ERR_INVALID_ARG, "coarse grid of %lld cells per direction",
            (long long)n0);
  FEA_CHECK(n >= n0 && n % n0 == 0, ctx, FEA_ERR_INVALID_ARG,
            "fine grid of %lld cells is not a refinement of the coarse grid of %lld cells",
            (long long)n, (long long)n0);
  fea_index r = n / n0;
  int levels = 0;
  while (((fea_index)1 << levels) < r) levels++;
  FEA_CHECK(((fea_index)1 << levels) == r, ctx, FEA_ERR_INVALID_ARG,
            "h0/h = %lld / %lld = %lld is not a power of two", (long long)n, (long long)n0,
            (long long)r);
  FEA_CHECK(n >= 2, ctx, FEA_ERR_INVALID_ARG, "fine grid of %lld cells has no interior node",
            (long long)n);
  *g = (fea_ph_grid){element, n, n0, r, levels, (n - 1) * (n - 1), NULL};
  return FEA_SUCCESS;
}

static inline fea_index lex(const fea_ph_grid *g, fea_index i, fea_index j) {
  return (i - 1) + (j - 1) * (g->n - 1);
}

static inline int interior(const fea_ph_grid *g, fea_index i, fea_index j) {
  return i > 0 && i < g->n && j > 0 && j < g->n;
}

/* The level-(k-1) nodes whose functions are nonzero at node (i, j), new on
 * the level of grid step s, and their values there. Boundary parents are
 * included; callers drop them (homogeneous Dirichlet data). */
static int parents(const fea_ph_grid *g, fea_index i, fea_index j, fea_index s, fea_index pi[4],
                   fea_index pj[4], double w[4]) {
  const fea_index s2 = 2 * s;
  if (j % s2 == 0) { /* on a horizontal coarse edge */
    pi[0] = i - s, pj[0] = j, pi[1] = i + s, pj[1] = j;
    w[0] = w[1] = 0.5;
    return 2;
  }
  if (i % s2 == 0) { /* on a vertical coarse edge */
    pi[0] = i, pj[0] = j - s, pi[1] = i, pj[1] = j + s;
    w[0] = w[1] = 0.5;
    return 2;
  }
  if (g->element == FEA_PH_P1) { /* on the diagonal (0,0)-(1,1) of a coarse square */
    pi[0] = i - s, pj[0] = j - s, pi[1] = i + s, pj[1] = j + s;
    w[0] = w[1] = 0.5;
    return 2;
  }
  for (int c = 0; c < 4; c++) { /* Q1 cell centre */
    pi[c] = i + ((c & 1) ? s : -s);
    pj[c] = j + ((c & 2) ? s : -s);
    w[c] = 0.25;
  }
  return 4;
}

/* Visit the nodes new on level k (1 <= k <= levels). */
#define FOR_NEW_NODES(g, k, s, i, j)                           \
  for (fea_index s = (g)->r >> (k), j = s; j < (g)->n; j += s) \
    for (fea_index i = s; i < (g)->n; i += s)                  \
      if (!((i % (2 * s)) == 0 && (j % (2 * s)) == 0))

void fea_ph_apply_s(const fea_ph_grid *g, double *x) {
  if (g->macro) {
    fea_ph_macro_apply_s(g->macro, x);
    return;
  }
  for (int k = 1; k <= g->levels; k++) {
    FOR_NEW_NODES(g, k, s, i, j) {
      fea_index pi[4], pj[4];
      double w[4], add = 0;
      int np = parents(g, i, j, s, pi, pj, w);
      for (int c = 0; c < np; c++)
        if (interior(g, pi[c], pj[c])) add += w[c] * x[lex(g, pi[c], pj[c])];
      x[lex(g, i, j)] += add;
    }
  }
}

void fea_ph_apply_st(const fea_ph_grid *g, double *x) {
  if (g->macro) {
    fea_ph_macro_apply_st(g->macro, x);
    return;
  }
  for (int k = g->levels; k >= 1; k--) {
    FOR_NEW_NODES(g, k, s, i, j) {
      fea_index pi[4], pj[4];
      double w[4];
      int np = parents(g, i, j, s, pi, pj, w);
      const double v = x[lex(g, i, j)];
      for (int c = 0; c < np; c++)
        if (interior(g, pi[c], pj[c])) x[lex(g, pi[c], pj[c])] += w[c] * v;
    }
  }
}

static int cmp_entry(const void *a, const void *b) {
  const fea_index *x = a, *y = b;
  return (*x > *y) - (*x < *y);
}

/* S_k as CSR; k = 0 gives the identity (no node is new). */
static fea_status build_level(fea_context *ctx, const fea_ph_grid *g, int k, fea_matrix **out) {
  fea_matrix *m;
  FEA_CALL(fea_matrix_alloc(ctx, g->num, g->num, 5 * g->num, &m));
  /* Mark each row's parents, then fill row by row in node order. */
  fea_index p = 0;
  const fea_index s = k >= 1 ? g->r >> k : 0;
  for (fea_index j = 1; j < g->n; j++)
    for (fea_index i = 1; i < g->n; i++) {
      const fea_index row = lex(g, i, j);
      struct {
        fea_index col;
        double w;
      } e[5] = {{row, 1.0}};
      int ne = 1;
      if (s && i % s == 0 && j % s == 0 && !(i % (2 * s) == 0 && j % (2 * s) == 0)) {
        fea_index pi[4], pj[4];
        double w[4];
        int np = parents(g, i, j, s, pi, pj, w);
        for (int c = 0; c < np; c++)
          if (interior(g, pi[c], pj[c])) e[ne].col = lex(g, pi[c], pj[c]), e[ne++].w = w[c];
      }
      qsort(e, (size_t)ne, sizeof e[0], cmp_entry);
      for (int c = 0; c < ne; c++, p++) m->col_idx[p] = e[c].col, m->values[p] = e[c].w;
      m->row_ptr[row + 1] = p;
    }
  m->nnz = p;
  *out = m;
  return FEA_SUCCESS;
}

/* S_k of a mesh of macro cells: the identity plus 1/2 at the free ends of
 * the edge each node new on level k halves (macro-mesh.h's tables). */
static fea_status build_level_macro(fea_context *ctx, const fea_ph_macro *h, int k,
                                    fea_matrix **out) {
  fea_matrix *m;
  FEA_CALL(fea_matrix_alloc(ctx, h->num, h->num, 3 * h->num, &m));
  fea_index *slot = malloc((size_t)(h->num + 1) * sizeof *slot);
  if (!slot) {
    FEA_OBJECT_DROP(m);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld indices", (long long)h->num);
  }
  for (fea_index u = 0; u < h->num; u++) slot[u] = -1;
  if (k >= 1)
    for (fea_index t = h->level_start[k - 1]; t < h->level_start[k]; t++) slot[h->new_node[t]] = t;
  fea_index p = 0;
  for (fea_index row = 0; row < h->num; row++) {
    struct {
      fea_index col;
      double w;
    } e[3] = {{row, 1.0}};
    int ne = 1;
    const fea_index t = slot[row];
    for (int c = 0; t >= 0 && c < 2; c++)
      if (h->new_parent[2 * t + c] >= 0) e[ne].col = h->new_parent[2 * t + c], e[ne++].w = 0.5;
    qsort(e, (size_t)ne, sizeof e[0], cmp_entry);
    for (int c = 0; c < ne; c++, p++) m->col_idx[p] = e[c].col, m->values[p] = e[c].w;
    m->row_ptr[row + 1] = p;
  }
  free(slot);
  m->nnz = p;
  *out = m;
  return FEA_SUCCESS;
}

static fea_status build_level_any(fea_context *ctx, const fea_ph_grid *g, int k, fea_matrix **out) {
  return g->macro ? build_level_macro(ctx, g->macro, k, out) : build_level(ctx, g, k, out);
}

fea_status fea_ph_build_s(fea_context *ctx, const fea_ph_grid *g, fea_matrix **S) {
  FEA_CHECK_NULL(g, ctx);
  FEA_CHECK_NULL(S, ctx);
  fea_matrix *acc;
  FEA_CALL(build_level_any(ctx, g, g->levels >= 1 ? 1 : 0, &acc));
  for (int k = 2; k <= g->levels; k++) {
    fea_matrix *sk, *prod;
    fea_status st = build_level_any(ctx, g, k, &sk);
    if (st >= 0) st = fea_csr_multiply(ctx, sk, acc, &prod);
    FEA_OBJECT_DROP(sk);
    FEA_OBJECT_DROP(acc);
    if (st < 0) return st;
    acc = prod;
  }
  *S = acc;
  return FEA_SUCCESS;
}

fea_status fea_ph_transform_matrix(fea_context *ctx, const fea_matrix *A, const fea_matrix *S,
                                   fea_matrix **At) {
  FEA_CHECK_NULL(A, ctx);
  FEA_CHECK_NULL(S, ctx);
  FEA_CHECK_NULL(At, ctx);
  FEA_CHECK(A->rows == A->cols && S->rows == A->rows && S->cols == A->rows, ctx,
            FEA_ERR_INVALID_ARG, "S^T A S with A %lld x %lld and S %lld x %lld", (long long)A->rows,
            (long long)A->cols, (long long)S->rows, (long long)S->cols);
  /* A tick between the three products: at h = 1/512 the whole took 0.6 s of
   * CPU (1.6 s of wall time on a loaded machine) without a progress call. */
  fea_matrix *as = NULL, *st = NULL;
  fea_status s = fea_csr_multiply(ctx, A, S, &as);
  if (s >= 0) s = fea_progress_tick(ctx);
  if (s >= 0) s = fea_csr_transpose(ctx, S, &st);
  if (s >= 0) s = fea_progress_tick(ctx);
  if (s >= 0) s = fea_csr_multiply(ctx, st, as, At);
  FEA_OBJECT_DROP(as);
  FEA_OBJECT_DROP(st);
  return s;
}
