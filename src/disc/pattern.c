/* Sparsity pattern of the reduced Poisson system (see pattern.h): each free
 * row's columns are the free DoFs of the elements around it, found through a
 * DoF -> elements incidence, then sorted and made unique per row; the
 * matrix's size is bounded against the memory budget before that pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "base/memory-limit.h"
#include "pattern.h"
#include "base/sort.h"

fea_status fea_element_dof_table(const fea_space *s, fea_index **edofs) {
  const fea_index ne = s->num_elements;
  const int nb = s->dofs_per_element;
  /* Every operator kind needs this table (the matrix-free ones also build
   * their plans, smaller, from it): checked before it is allocated. */
  char what[96];
  snprintf(what, sizeof what, "the element-DoF table of %lld elements of %d DoFs", (long long)ne,
           nb);
  FEA_CALL(fea_memory_require(s->ctx, 0, fea_bytes((double)ne * nb, sizeof(fea_index)), what));
  fea_index *d = malloc(((size_t)ne * nb + 1) * sizeof *d);
  FEA_CHECK(d, s->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the element-DoF table of %lld elements", (long long)ne);
  for (fea_index e = 0; e < ne; e++) s->ops->element_dofs(s, e, d + e * nb);
  *edofs = d;
  return FEA_SUCCESS;
}

void fea_incidence_free(fea_incidence *in) {
  free(in->edofs);
  free(in->start);
  free(in->elems);
  in->edofs = in->start = in->elems = NULL;
}

fea_status fea_incidence_build(const fea_space *s, fea_incidence *in) {
  const fea_index ne = s->num_elements, nd = s->num_dofs;
  const int nb = s->dofs_per_element;
  in->edofs = in->start = in->elems = NULL;
  /* The element-DoF table and its transpose, exactly, before either exists. */
  char what[128];
  snprintf(what, sizeof what, "the DoF-element incidence of %lld elements of %d DoFs",
           (long long)ne, nb);
  FEA_CALL(fea_memory_require(
      s->ctx, 0, fea_bytes(2.0 * (double)ne * nb + 2.0 * (double)nd, sizeof(fea_index)), what));
  FEA_CALL(fea_element_dof_table(s, &in->edofs));
  in->start = calloc((size_t)nd + 1, sizeof *in->start);
  in->elems = malloc(((size_t)ne * nb + 1) * sizeof *in->elems);
  fea_index *fill = malloc(((size_t)nd + 1) * sizeof *fill);
  if (!in->start || !in->elems || !fill) {
    free(fill);
    fea_incidence_free(in);
    return FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the DoF-element incidence of %lld elements", (long long)ne);
  }
  for (fea_index k = 0; k < ne * nb; k++) in->start[in->edofs[k] + 1]++;
  for (fea_index d = 0; d < nd; d++) in->start[d + 1] += in->start[d];
  memcpy(fill, in->start, (size_t)nd * sizeof *fill);
  for (fea_index e = 0; e < ne; e++)
    for (int b = 0; b < nb; b++) in->elems[fill[in->edofs[e * nb + b]]++] = e;
  free(fill);
  return FEA_SUCCESS;
}

/* ---- the matrix's size before its pattern is built -------------------------------------------
 *
 * The pattern pass merges, per row, the DoFs of every element around it:
 * for a 3D p = 8 B-spline space that is 729 elements of 729 DoFs a row,
 * minutes on 20^3 elements, only to find then that the matrix cannot fit.
 * Its size is bounded before: a lower bound L (rows and columns that are
 * free whatever the conditions) and an upper bound U (every DoF free). A
 * matrix whose L exceeds the budget is refused at once; otherwise the pass
 * runs and its exact count is checked, as U may exceed the budget while
 * the exact size fits (refusing on U would refuse such problems: on the
 * tests' meshes U is up to 3x the exact count, since DoFs on shared facets
 * are counted once per element around them). Where the free DoFs are
 * exactly L's or U's set, that bound is the exact count. */

typedef struct pattern_bound {
  double lower, upper;
  int exact; /* lower is the exact count */
  const char *from;
} pattern_bound;

/* B-spline spaces: a DoF's columns in direction k are the 1D functions
 * sharing an element with it, a contiguous range [lo, hi] (the elements
 * holding function i are those whose span s has s - p <= i <= s, and each
 * holds s - p .. s). Pairs of DoFs share an element exactly when they do
 * in every direction, so the counts multiply: U over all functions, L
 * over the interior ones (indices 1 .. n - 2 in every direction), which no
 * side condition fixes. Cost: O(elements + functions) per direction. */
static fea_status bspline_bound(const fea_problem *pb, pattern_bound *b) {
  const fea_space *s = pb->space;
  const fea_bspline_space *bs = s->impl;
  double lower = 1.0, upper = 1.0, interior = 1.0;
  for (int k = 0; k < s->dim; k++) {
    const fea_knots *kn = &bs->knots[k];
    const fea_index n = fea_knots_num_functions(kn);
    fea_index *lo = malloc(2 * ((size_t)n + 1) * sizeof *lo), *hi = lo + n + 1;
    FEA_CHECK(lo, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the supports of %lld B-splines",
              (long long)n);
    for (fea_index i = 0; i < n; i++) lo[i] = n, hi[i] = -1;
    for (fea_index e = 0; e < kn->nelem; e++) {
      const fea_index sp = kn->span[e];
      for (fea_index i = sp - kn->p; i <= sp; i++) {
        if (sp - kn->p < lo[i]) lo[i] = sp - kn->p;
        if (sp > hi[i]) hi[i] = sp;
      }
    }
    double all = 0.0, inner = 0.0;
    for (fea_index i = 0; i < n; i++) {
      all += (double)(hi[i] - lo[i] + 1);
      if (i < 1 || i > n - 2) continue;
      const fea_index a = lo[i] > 1 ? lo[i] : 1, z = hi[i] < n - 2 ? hi[i] : n - 2;
      inner += (double)(z - a + 1);
    }
    free(lo);
    upper *= all;
    lower *= inner;
    interior *= n > 2 ? (double)(n - 2) : 0.0;
  }
  b->lower = lower;
  b->upper = upper;
  b->exact = (double)pb->num_free == interior || pb->num_free == s->num_dofs;
  if (pb->num_free == s->num_dofs) b->lower = upper;
  b->from = "the knots";
  return FEA_SUCCESS;
}

/* Spaces with an element-DoF table (Lagrange): with m_e the free DoFs of
 * element e, free row d has at least max m_e and at most sum m_e (capped
 * at the free count) entries over the elements e around it. Cost: one
 * pass over the table. */
static fea_status table_bound(const fea_problem *pb, pattern_bound *b) {
  const fea_space *s = pb->space;
  const fea_index ne = s->num_elements, nd = s->num_dofs, *t = s->element_dof_table;
  const int nb = s->dofs_per_element;
  const fea_index *fi = pb->free_index;
  fea_index *most = calloc(2 * ((size_t)nd + 1), sizeof *most), *least = most + nd + 1;
  FEA_CHECK(most, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to bound the pattern of %lld DoFs",
            (long long)nd);
  for (fea_index e = 0; e < ne; e++) {
    fea_index m = 0;
    for (int i = 0; i < nb; i++) m += fi[t[e * nb + i]] >= 0;
    for (int i = 0; i < nb; i++) {
      const fea_index d = t[e * nb + i];
      most[d] += m;
      if (m > least[d]) least[d] = m;
    }
  }
  double lower = 0.0, upper = 0.0;
  for (fea_index d = 0; d < nd; d++)
    if (fi[d] >= 0) {
      lower += (double)least[d];
      upper += (double)(most[d] < pb->num_free ? most[d] : pb->num_free);
    }
  free(most);
  b->lower = lower;
  b->upper = upper;
  b->exact = lower == upper;
  b->from = "the element-DoF table";
  return FEA_SUCCESS;
}

/* What to do when the matrix does not fit, for the memory checks. */
static const char *const csr_remedy =
    "a smaller problem, or a matrix-free operator kind, which stores no matrix, takes less";

static fea_status pattern_require(const fea_problem *pb) {
  const fea_space *s = pb->space;
  pattern_bound b = {0};
  if (s->kind == FEA_SPACE_BSPLINE)
    FEA_CALL(bspline_bound(pb, &b));
  else if (s->element_dof_table)
    FEA_CALL(table_bound(pb, &b));
  else
    return FEA_SUCCESS; /* no cheap bound: the exact count decides */
  const double nf = (double)pb->num_free;
  if (b.upper > nf * nf) b.upper = nf * nf;
  char what[320];
  if (b.exact)
    snprintf(what, sizeof what,
             "a CSR matrix of %lld rows and %.0f entries (counted before its pattern is built, "
             "from %s: %s)",
             (long long)pb->num_free, b.lower, b.from, csr_remedy);
  else
    snprintf(what, sizeof what,
             "a CSR matrix of %lld rows and at least %.0f entries (at most %.0f; bounded before "
             "its pattern is built, from %s: %s)",
             (long long)pb->num_free, b.lower, b.upper, b.from, csr_remedy);
  return fea_memory_require(pb->ctx, 0, fea_bytes(b.lower, sizeof(double) + sizeof(fea_index)),
                            what);
}

/* The reduced pattern of a space with ncomp components: the incidence is
 * the scalar space's, and the rows of DoF d's components share its columns
 * (every component of every function of the elements around d). With
 * ncomp = 1 this is the scalar pattern. */
fea_status fea_pattern_build(const fea_problem *pb, const fea_incidence *in, fea_matrix **out) {
  FEA_CALL(pattern_require(pb));
  const fea_space *s = pb->space;
  const int nb = s->dofs_per_element, ncomp = s->ncomp;
  const fea_index nf = pb->num_free;
  fea_index *rowlen = calloc((size_t)nf + 1, sizeof *rowlen);
  fea_index maxcand = 0;
  for (fea_index d = 0; d < s->num_dofs; d++)
    if (in->start[d + 1] - in->start[d] > maxcand) maxcand = in->start[d + 1] - in->start[d];
  fea_index *cand = malloc((size_t)(maxcand * nb * ncomp + 1) * sizeof *cand);
  /* mark[f]: the last (pass, DoF) that listed column f, so that each row
   * sorts its distinct columns only: a B-spline row meets every column in up
   * to (p + 1)^d elements (2D p = 5: 1296 candidates, 121 columns), and
   * sorting the candidates took half of a multipatch multigrid setup. */
  fea_index *mark = malloc(((size_t)nf + 1) * sizeof *mark);
  if (!rowlen || !cand || !mark) {
    free(rowlen);
    free(cand);
    free(mark);
    return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the sparsity pattern");
  }
  for (fea_index f = 0; f < nf; f++) mark[f] = -1;
  /* Two passes over the rows: count, then fill (recomputing beats storing). */
  fea_matrix *A = NULL;
  fea_status st = FEA_SUCCESS;
  for (int pass = 0; pass < 2 && st == FEA_SUCCESS; pass++) {
    for (fea_index d = 0; d < s->num_dofs; d++) {
      int any = 0;
      for (int c = 0; c < ncomp; c++) any |= pb->free_index[c + ncomp * d] >= 0;
      if (!any) continue;
      fea_index u = 0;
      const fea_index stamp = pass * s->num_dofs + d;
      for (fea_index k = in->start[d]; k < in->start[d + 1]; k++) {
        const fea_index *ed = in->edofs + in->elems[k] * nb;
        for (int b = 0; b < nb; b++)
          for (int c = 0; c < ncomp; c++) {
            const fea_index f = pb->free_index[c + ncomp * ed[b]];
            if (f >= 0 && mark[f] != stamp) mark[f] = stamp, cand[u++] = f;
          }
      }
      qsort(cand, (size_t)u, sizeof *cand, fea_index_cmp);
      for (int c = 0; c < ncomp; c++) {
        const fea_index r = pb->free_index[c + ncomp * d];
        if (r < 0) continue;
        if (pass == 0)
          rowlen[r + 1] = u;
        else
          memcpy(A->col_idx + A->row_ptr[r], cand, (size_t)u * sizeof *cand);
      }
    }
    if (pass == 0) {
      for (fea_index r = 0; r < nf; r++) rowlen[r + 1] += rowlen[r];
      /* The count is exact now: the matrix's columns and values, checked
       * before they are allocated. */
      char what[192];
      snprintf(what, sizeof what, "a CSR matrix of %lld rows and %lld entries (%s)", (long long)nf,
               (long long)rowlen[nf], csr_remedy);
      st = fea_memory_require(pb->ctx, 0,
                              fea_bytes((double)rowlen[nf], sizeof(double) + sizeof(fea_index)),
                              what);
      if (st == FEA_SUCCESS) st = fea_matrix_alloc(pb->ctx, nf, nf, rowlen[nf], &A);
      if (st == FEA_SUCCESS) memcpy(A->row_ptr, rowlen, (size_t)(nf + 1) * sizeof *rowlen);
    }
  }
  free(rowlen);
  free(cand);
  free(mark);
  if (st == FEA_SUCCESS) {
    memset(A->values, 0, (size_t)A->nnz * sizeof *A->values);
    *out = A;
  }
  return st;
}

fea_status fea_pattern_matrix(const fea_problem *problem, fea_matrix **A) {
  fea_incidence in = {0};
  FEA_CALL(fea_incidence_build(problem->space, &in));
  fea_status st = fea_pattern_build(problem, &in, A);
  fea_incidence_free(&in);
  return st;
}
