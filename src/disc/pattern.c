/* Sparsity pattern of the reduced Poisson system (see pattern.h): each free
 * row's columns are the free DoFs of the elements around it, found through a
 * DoF -> elements incidence, then sorted and made unique per row. */
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

fea_status fea_pattern_build(const fea_problem *pb, const fea_incidence *in, fea_matrix **out) {
  const fea_space *s = pb->space;
  const int nb = s->dofs_per_element;
  const fea_index nf = pb->num_free;
  fea_index *rowlen = calloc((size_t)nf + 1, sizeof *rowlen);
  fea_index maxcand = 0;
  for (fea_index d = 0; d < s->num_dofs; d++)
    if (in->start[d + 1] - in->start[d] > maxcand) maxcand = in->start[d + 1] - in->start[d];
  fea_index *cand = malloc((size_t)(maxcand * nb + 1) * sizeof *cand);
  if (!rowlen || !cand) {
    free(rowlen);
    free(cand);
    return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the sparsity pattern");
  }
  /* Two passes over the rows: count, then fill (recomputing beats storing). */
  fea_matrix *A = NULL;
  fea_status st = FEA_SUCCESS;
  for (int pass = 0; pass < 2 && st == FEA_SUCCESS; pass++) {
    for (fea_index d = 0; d < s->num_dofs; d++) {
      fea_index r = pb->free_index[d];
      if (r < 0) continue;
      fea_index nc = 0;
      for (fea_index k = in->start[d]; k < in->start[d + 1]; k++) {
        const fea_index *ed = in->edofs + in->elems[k] * nb;
        for (int b = 0; b < nb; b++)
          if (pb->free_index[ed[b]] >= 0) cand[nc++] = pb->free_index[ed[b]];
      }
      qsort(cand, (size_t)nc, sizeof *cand, fea_index_cmp);
      fea_index u = 0;
      for (fea_index i = 0; i < nc; i++)
        if (u == 0 || cand[i] != cand[u - 1]) cand[u++] = cand[i];
      if (pass == 0)
        rowlen[r + 1] = u;
      else
        memcpy(A->col_idx + A->row_ptr[r], cand, (size_t)u * sizeof *cand);
    }
    if (pass == 0) {
      for (fea_index r = 0; r < nf; r++) rowlen[r + 1] += rowlen[r];
      /* The count is exact now: the matrix's columns and values, checked
       * before they are allocated. */
      char what[96];
      snprintf(what, sizeof what, "a CSR matrix of %lld rows and %lld entries", (long long)nf,
               (long long)rowlen[nf]);
      st = fea_memory_require(pb->ctx, 0,
                              fea_bytes((double)rowlen[nf], sizeof(double) + sizeof(fea_index)),
                              what);
      if (st == FEA_SUCCESS) st = fea_matrix_alloc(pb->ctx, nf, nf, rowlen[nf], &A);
      if (st == FEA_SUCCESS) memcpy(A->row_ptr, rowlen, (size_t)(nf + 1) * sizeof *rowlen);
    }
  }
  free(rowlen);
  free(cand);
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
