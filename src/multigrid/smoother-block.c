/* Node-block Jacobi for the Chebyshev smoother on vector levels (ncomp > 1:
 * elasticity): D is the block diagonal of A whose blocks are the free
 * components of one node (ncomp x ncomp, smaller where a roller fixes some),
 * kept as the Cholesky factors L of D = L L^T. The smoother's polynomial is
 * then in D^-1 A, and its lambda_max is estimated on the similar L^-1 A L^-T
 * (smoother.c).
 *
 * Why blocks: in elasticity the components of one node are coupled as
 * strongly as the node to itself (the off-diagonal entries of its block are
 * of the size of its diagonal for nu = 0.3), and point Jacobi ignores that
 * coupling (docs/multigrid.md, "Elasticity", has the measurements). The
 * smoother applies the blocks' explicit inverses; L serves the estimate.
 *
 * Free rows are numbered in vector DoF order (c + ncomp i), so a node's free
 * rows are one contiguous run: a block is a range of rows. Its entries come
 * from the level's CSR matrix, or on matrix-free levels by probing: the
 * nodes are coloured so that no two of one colour share an element, and one
 * product per colour and component (A applied to the sum of the unit vectors
 * of that component at the colour's nodes) gives, at each such node's rows,
 * one column of its block, untouched by the others; the last component's
 * column follows from symmetry and the operator's diagonal. A structured Q_p
 * mesh takes (p + 1)^d colours, so (ncomp - 1) (p + 1)^d products and one
 * diagonal. */
#include <math.h>
#include <stdlib.h>

#include "base/context.h"
#include "internal/error.h"
#include "multigrid-impl.h"
#include "disc/space.h"

struct fea_mg_blocks {
  fea_index count;  /* blocks */
  fea_index *start; /* count + 1: each block's first row */
  int nc;           /* the space's components: L holds nc * nc slots per block */
  double *L;        /* lower Cholesky factor, row-major m x m in each block's slots */
  double *inv;      /* D^-1 the same way (the smoother's product: no divisions) */
  double *z;        /* n: the smoother's D^-1 r */
  int threads;
};

void fea_mg_blocks_free(fea_mg_blocks *b) {
  if (!b) return;
  free(b->start);
  free(b->L);
  free(b->inv);
  free(b->z);
  free(b);
}

uint64_t fea_mg_blocks_bytes(const fea_mg_blocks *b) {
  if (!b) return 0;
  return (uint64_t)b->count * (8 + 16 * (uint64_t)b->nc * (uint64_t)b->nc) + 8 +
         8 * (uint64_t)b->start[b->count];
}

double *fea_mg_blocks_scratch(const fea_mg_blocks *b) { return b->z; }

/* Blocks from the CSR matrix: the entries of each row inside its block. */
static void entries_from_csr(fea_mg_blocks *b, const fea_matrix *A) {
  const int nc = b->nc;
  for (fea_index k = 0; k < b->count; k++) {
    const fea_index s = b->start[k], e = b->start[k + 1];
    double *B = b->L + (size_t)k * nc * nc;
    for (fea_index r = s; r < e; r++)
      for (fea_index t = A->row_ptr[r]; t < A->row_ptr[r + 1]; t++) {
        const fea_index c = A->col_idx[t];
        if (c >= s && c < e) B[(r - s) * nc + (c - s)] = A->values[t];
      }
  }
}

/* Greedy colours of the space's nodes such that no two nodes of one colour
 * share an element; *num the colours. */
static fea_status colour_nodes(fea_context *ctx, const fea_space *s, int *colour, int *num) {
  const fea_index nn = s->num_dofs, ne = s->num_elements;
  const int nb = s->dofs_per_element;
  fea_index *ptr = calloc((size_t)nn + 2, sizeof *ptr);
  fea_index *edofs = malloc((size_t)ne * (size_t)nb * sizeof *edofs + 1);
  fea_index *elems = malloc((size_t)ne * (size_t)nb * sizeof *elems + 1);
  if (!ptr || !edofs || !elems) {
    free(ptr), free(edofs), free(elems);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the incidence of %lld elements",
                     (long long)ne);
  }
  for (fea_index e = 0; e < ne; e++) {
    s->ops->element_dofs(s, e, edofs + (size_t)e * nb);
    for (int j = 0; j < nb; j++) ptr[edofs[(size_t)e * nb + j] + 2]++;
  }
  fea_index most = 0; /* elements at one node */
  for (fea_index i = 0; i < nn; i++) {
    most = ptr[i + 2] > most ? ptr[i + 2] : most;
    ptr[i + 2] += ptr[i + 1];
  }
  for (fea_index e = 0; e < ne; e++)
    for (int j = 0; j < nb; j++) elems[ptr[edofs[(size_t)e * nb + j] + 1]++] = e;
  /* Now ptr[i] .. ptr[i + 1] are node i's elements. A node has at most
   * most * nb neighbours (itself included), so that many colours suffice. */
  const size_t bound = (size_t)most * (size_t)nb + 1;
  fea_index *stamp = malloc(bound * sizeof *stamp);
  fea_status st = stamp ? FEA_SUCCESS
                        : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %zu colours", bound);
  int used = 0;
  for (size_t c = 0; stamp && c < bound; c++) stamp[c] = -1;
  for (fea_index i = 0; i < nn && st == FEA_SUCCESS; i++) colour[i] = -1;
  for (fea_index i = 0; i < nn && st == FEA_SUCCESS; i++) {
    for (fea_index t = ptr[i]; t < ptr[i + 1]; t++) {
      const fea_index *d = edofs + (size_t)elems[t] * nb;
      for (int j = 0; j < nb; j++)
        if (colour[d[j]] >= 0) stamp[colour[d[j]]] = i;
    }
    int c = 0;
    while (stamp[c] == i) c++;
    colour[i] = c;
    used = c + 1 > used ? c + 1 : used;
  }
  free(ptr), free(edofs), free(elems), free(stamp);
  *num = used;
  return st;
}

/* Blocks by probing the level's operator (matrix-free levels). */
static fea_status entries_by_probing(const fea_mg *mg, int l, fea_mg_blocks *b,
                                     const fea_index *row_block) {
  const fea_mg_level *lv = &mg->levels[l];
  const fea_problem *pb = lv->problem;
  const fea_space *s = pb->space;
  const fea_index nn = s->num_dofs, n = lv->n;
  const int nc = b->nc;
  int *colour = malloc(((size_t)nn + 1) * sizeof *colour);
  double *x = calloc((size_t)n + 1, sizeof *x), *y = malloc(((size_t)n + 1) * sizeof *y);
  fea_status st = colour && x && y ? FEA_SUCCESS
                                   : FEA_ERROR(mg->ctx, FEA_ERR_OUT_OF_MEMORY,
                                               "no memory for probing %lld DoFs", (long long)n);
  int colours = 0;
  if (st == FEA_SUCCESS) st = colour_nodes(mg->ctx, s, colour, &colours);
  /* Components 0 .. nc - 2 probed; the last one's column is the mirror of
   * its row (symmetry), but for the diagonal entry, which the operator's
   * diagonal gives: a third fewer products in 3D, half in 2D. */
  for (int k = 0; k < colours && st == FEA_SUCCESS; k++)
    for (int c = 0; c + 1 < nc && st == FEA_SUCCESS; c++) {
      int any = 0;
      for (fea_index i = 0; i < nn; i++) {
        const fea_index r = colour[i] == k ? pb->free_index[c + nc * i] : -1;
        if (r < 0) continue;
        x[r] = 1.0;
        any = 1;
      }
      if (!any) continue;
      st = lv->op->impl->apply(lv->op, x, y, 0);
      for (fea_index i = 0; i < nn && st == FEA_SUCCESS; i++) {
        const fea_index rc = colour[i] == k ? pb->free_index[c + nc * i] : -1;
        if (rc < 0) continue;
        x[rc] = 0.0;
        const fea_index blk = row_block[rc], s0 = b->start[blk];
        double *B = b->L + (size_t)blk * nc * nc;
        for (fea_index r = s0; r < b->start[blk + 1]; r++) B[(r - s0) * nc + (rc - s0)] = y[r];
      }
    }
  if (st == FEA_SUCCESS) st = lv->op->impl->diagonal(lv->op, y);
  for (fea_index i = 0; i < nn && st == FEA_SUCCESS; i++) {
    const fea_index rl = pb->free_index[nc - 1 + nc * i];
    if (rl < 0) continue;
    const fea_index blk = row_block[rl], s0 = b->start[blk], j = rl - s0;
    double *B = b->L + (size_t)blk * nc * nc;
    for (fea_index r = s0; r < rl; r++) B[(r - s0) * nc + j] = B[j * nc + (r - s0)];
    B[j * nc + j] = y[rl];
  }
  free(colour), free(x), free(y);
  return st;
}

/* y = L^-1 x on one block (in place allowed). */
static inline void lower_solve(const double *L, int nc, int m, const double *x, double *y) {
  for (int i = 0; i < m; i++) {
    double v = x[i];
    for (int t = 0; t < i; t++) v -= L[i * nc + t] * y[t];
    y[i] = v / L[i * nc + i];
  }
}

/* y = L^-T x (in place allowed). */
static inline void upper_solve(const double *L, int nc, int m, const double *x, double *y) {
  for (int i = m - 1; i >= 0; i--) {
    double v = x[i];
    for (int t = i + 1; t < m; t++) v -= L[t * nc + i] * y[t];
    y[i] = v / L[i * nc + i];
  }
}

/* inv = (L L^T)^-1 per block, column by column. */
static fea_status invert(const fea_mg *mg, int l, fea_mg_blocks *b) {
  const int nc = b->nc;
  b->inv = calloc((size_t)b->count * nc * nc + 1, sizeof *b->inv);
  FEA_CHECK(b->inv, mg->ctx, FEA_ERR_OUT_OF_MEMORY, "level %d: no memory for %lld node blocks", l,
            (long long)b->count);
  for (fea_index k = 0; k < b->count; k++) {
    const int m = (int)(b->start[k + 1] - b->start[k]);
    const double *L = b->L + (size_t)k * nc * nc;
    double *V = b->inv + (size_t)k * nc * nc, e[FEA_MAX_COMPONENTS];
    for (int j = 0; j < m; j++) {
      for (int i = 0; i < m; i++) e[i] = i == j;
      lower_solve(L, nc, m, e, e);
      upper_solve(L, nc, m, e, e);
      for (int i = 0; i < m; i++) V[i * nc + j] = e[i];
    }
  }
  return FEA_SUCCESS;
}

/* Each block's lower Cholesky factor in place (m x m, stride nc). */
static fea_status factor(const fea_mg *mg, int l, fea_mg_blocks *b) {
  const int nc = b->nc;
  for (fea_index k = 0; k < b->count; k++) {
    const int m = (int)(b->start[k + 1] - b->start[k]);
    double *B = b->L + (size_t)k * nc * nc;
    for (int j = 0; j < m; j++) {
      double d = B[j * nc + j];
      for (int t = 0; t < j; t++) d -= B[j * nc + t] * B[j * nc + t];
      FEA_CHECK(d > 0.0, mg->ctx, FEA_ERR_NOT_POSDEF,
                "level %d: the %d x %d node block of free rows %lld..%lld is not positive "
                "definite (pivot %d is %g); the smoother needs positive definite blocks",
                l, m, m, (long long)b->start[k], (long long)b->start[k + 1] - 1, j, d);
      d = sqrt(d);
      B[j * nc + j] = d;
      for (int i = j + 1; i < m; i++) {
        double v = B[i * nc + j];
        for (int t = 0; t < j; t++) v -= B[i * nc + t] * B[j * nc + t];
        B[i * nc + j] = v / d;
      }
      for (int i = 0; i < j; i++) B[i * nc + j] = 0.0; /* the upper part unused */
    }
  }
  return FEA_SUCCESS;
}

fea_status fea_mg_blocks_setup(const fea_mg *mg, int l, fea_mg_blocks **out) {
  *out = NULL;
  const fea_mg_level *lv = &mg->levels[l];
  const fea_problem *pb = lv->problem;
  const int nc = pb->space->ncomp;
  const fea_index nv = fea_space_total_dofs(pb->space), n = lv->n;
  fea_mg_blocks *b = calloc(1, sizeof *b);
  fea_index *row_block = malloc(((size_t)n + 1) * sizeof *row_block);
  if (b) {
    b->nc = nc;
    b->threads = mg->ctx->nthreads > 0 ? mg->ctx->nthreads : 1;
    b->start = malloc(((size_t)n + 1) * sizeof *b->start);
    b->z = malloc(((size_t)n + 1) * sizeof *b->z);
  }
  if (!b || !row_block || !b->start || !b->z) {
    fea_mg_blocks_free(b);
    free(row_block);
    return FEA_ERROR(mg->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "level %d: no memory for the node blocks of "
                     "%lld DoFs",
                     l, (long long)n);
  }
  /* A block per node with a free component: its rows are consecutive. */
  fea_index count = 0;
  for (fea_index i = 0; i < nv / nc; i++) {
    int first = 1;
    for (int c = 0; c < nc; c++) {
      const fea_index r = pb->free_index[c + nc * i];
      if (r < 0) continue;
      if (first) b->start[count++] = r, first = 0;
      row_block[r] = count - 1;
    }
  }
  b->start[count] = n;
  b->count = count;
  b->L = calloc((size_t)count * nc * nc + 1, sizeof *b->L);
  fea_status st = b->L ? FEA_SUCCESS
                       : FEA_ERROR(mg->ctx, FEA_ERR_OUT_OF_MEMORY,
                                   "level %d: no memory for %lld node blocks", l, (long long)count);
  const fea_matrix *A = st == FEA_SUCCESS ? fea_operator_csr_matrix(lv->op) : NULL;
  if (st == FEA_SUCCESS && A)
    entries_from_csr(b, A);
  else if (st == FEA_SUCCESS)
    st = entries_by_probing(mg, l, b, row_block);
  free(row_block);
  if (st == FEA_SUCCESS) st = factor(mg, l, b);
  if (st == FEA_SUCCESS) st = invert(mg, l, b);
  if (st != FEA_SUCCESS) {
    fea_mg_blocks_free(b);
    return st;
  }
  *out = b;
  return FEA_SUCCESS;
}

void fea_mg_blocks_half(const fea_mg_blocks *b, int transpose, const double *x, double *y) {
  const int nc = b->nc;
#pragma omp parallel for schedule(static) \
    num_threads(b->threads) if (b->count >= FEA_MG_PARALLEL_MIN / 4)
  for (fea_index k = 0; k < b->count; k++) {
    const fea_index s = b->start[k];
    const int m = (int)(b->start[k + 1] - s);
    const double *L = b->L + (size_t)k * nc * nc;
    if (transpose)
      upper_solve(L, nc, m, x + s, y + s);
    else
      lower_solve(L, nc, m, x + s, y + s);
  }
}

void fea_mg_blocks_solve(const fea_mg_blocks *b, const double *r, double *z) {
  const int nc = b->nc;
#pragma omp parallel for schedule(static) \
    num_threads(b->threads) if (b->count >= FEA_MG_PARALLEL_MIN / 4)
  for (fea_index k = 0; k < b->count; k++) {
    const fea_index s = b->start[k];
    const int m = (int)(b->start[k + 1] - s);
    const double *V = b->inv + (size_t)k * nc * nc, *x = r + s;
    double *y = z + s;
    if (m == 3 && nc == 3) { /* 3D elasticity's whole blocks, unrolled */
      const double x0 = x[0], x1 = x[1], x2 = x[2];
      y[0] = V[0] * x0 + V[1] * x1 + V[2] * x2;
      y[1] = V[3] * x0 + V[4] * x1 + V[5] * x2;
      y[2] = V[6] * x0 + V[7] * x1 + V[8] * x2;
      continue;
    }
    if (m == 2 && nc == 2) { /* 2D's */
      const double x0 = x[0], x1 = x[1];
      y[0] = V[0] * x0 + V[1] * x1;
      y[1] = V[2] * x0 + V[3] * x1;
      continue;
    }
    for (int i = 0; i < m; i++) {
      double v = 0.0;
      for (int t = 0; t < m; t++) v += V[i * nc + t] * x[t];
      y[i] = v;
    }
  }
}
