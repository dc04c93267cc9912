/* Reference assembly of the reduced Poisson system into CSR: serial and
 * deliberately plain, because every fast path is checked against it.
 *
 * 1. Pattern: each free row's columns are the free DoFs of the elements
 *    around it (a DoF -> elements incidence, then sort and unique per row).
 * 2. Values: element by element; a column is found in its row by binary
 *    search. Boundary columns move to the right-hand side (lifting). */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "error.h"
#include "matrix.h"
#include "problem.h"

static int cmp_index(const void *a, const void *b) {
  fea_index x = *(const fea_index *)a, y = *(const fea_index *)b;
  return (x > y) - (x < y);
}

/* All element DoFs (ne x nb) and the DoF -> element incidence in CSR. */
typedef struct incidence {
  fea_index *edofs, *start, *elems;
} incidence;

static void incidence_free(incidence *in) {
  free(in->edofs);
  free(in->start);
  free(in->elems);
}

static fea_status build_incidence(const fea_space *s, incidence *in) {
  const fea_index ne = s->num_elements, nd = s->num_dofs;
  const int nb = s->dofs_per_element;
  in->edofs = malloc((size_t)ne * nb * sizeof *in->edofs);
  in->start = calloc((size_t)nd + 1, sizeof *in->start);
  in->elems = malloc((size_t)ne * nb * sizeof *in->elems);
  FEA_CHECK(in->edofs && in->start && in->elems, s->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the element-DoF incidence of %lld elements", (long long)ne);
  for (fea_index e = 0; e < ne; e++) s->ops->element_dofs(s, e, in->edofs + e * nb);
  for (fea_index k = 0; k < ne * nb; k++) in->start[in->edofs[k] + 1]++;
  for (fea_index d = 0; d < nd; d++) in->start[d + 1] += in->start[d];
  fea_index *fill = malloc((size_t)nd * sizeof *fill);
  FEA_CHECK(fill, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld counters", (long long)nd);
  memcpy(fill, in->start, (size_t)nd * sizeof *fill);
  for (fea_index e = 0; e < ne; e++)
    for (int b = 0; b < nb; b++) in->elems[fill[in->edofs[e * nb + b]]++] = e;
  free(fill);
  return FEA_SUCCESS;
}

/* Row pattern of the reduced matrix: sorted unique free columns per free row. */
static fea_status build_pattern(const fea_problem *pb, const incidence *in, fea_matrix **out) {
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
      qsort(cand, (size_t)nc, sizeof *cand, cmp_index);
      fea_index u = 0;
      for (fea_index i = 0; i < nc; i++)
        if (u == 0 || cand[i] != cand[u - 1]) cand[u++] = cand[i];
      if (pass == 0) rowlen[r + 1] = u;
      else memcpy(A->col_idx + A->row_ptr[r], cand, (size_t)u * sizeof *cand);
    }
    if (pass == 0) {
      for (fea_index r = 0; r < nf; r++) rowlen[r + 1] += rowlen[r];
      st = fea_matrix_alloc(pb->ctx, nf, nf, rowlen[nf], &A);
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

static fea_index find_col(const fea_matrix *A, fea_index r, fea_index c) {
  fea_index lo = A->row_ptr[r], hi = A->row_ptr[r + 1];
  while (lo < hi) {
    fea_index mid = lo + (hi - lo) / 2;
    if (A->col_idx[mid] < c) lo = mid + 1;
    else hi = mid;
  }
  return lo; /* the pattern holds every coupling, so the column is there */
}

static fea_status add_elements(const fea_problem *pb, const incidence *in, fea_matrix *A, double *b) {
  const fea_space *s = pb->space;
  const int nb = s->dofs_per_element;
  fea_element_values ev;
  FEA_CALL(fea_element_values_alloc(s, &pb->quad, &ev));
  double *Ke = malloc((size_t)nb * nb * sizeof *Ke), *fe = malloc((size_t)nb * sizeof *fe);
  fea_status st = Ke && fe ? FEA_SUCCESS
                           : FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for element matrices");
  for (fea_index e = 0; e < s->num_elements && st == FEA_SUCCESS; e++) {
    st = s->ops->element_values(s, e, &pb->quad, &ev);
    if (st == FEA_SUCCESS) st = fea_form_stiffness_load(pb, &ev, Ke, fe);
    if (st != FEA_SUCCESS) break;
    const fea_index *ed = in->edofs + e * nb;
    for (int i = 0; i < nb; i++) {
      fea_index r = pb->free_index[ed[i]];
      if (r < 0) continue;
      b[r] += fe[i];
      for (int j = 0; j < nb; j++) {
        fea_index c = pb->free_index[ed[j]];
        if (c >= 0) A->values[find_col(A, r, c)] += Ke[i * nb + j];
        else b[r] -= Ke[i * nb + j] * pb->dirichlet[ed[j]];
      }
    }
  }
  free(Ke);
  free(fe);
  fea_element_values_free(&ev);
  return st;
}

fea_status fea_problem_assemble_reference(const fea_problem *problem, fea_matrix **A, double *b) {
  if (A) *A = NULL;
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(A, problem->ctx);
  FEA_CHECK(b || problem->num_free == 0, problem->ctx, FEA_ERR_INVALID_ARG, "argument 'b' is NULL");
  incidence in = {0};
  fea_matrix *M = NULL;
  double *rhs = calloc((size_t)problem->num_free + 1, sizeof *rhs);
  fea_status st = rhs ? build_incidence(problem->space, &in)
                      : FEA_ERROR(problem->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the right-hand side");
  if (st == FEA_SUCCESS) st = build_pattern(problem, &in, &M);
  if (st == FEA_SUCCESS) st = add_elements(problem, &in, M, rhs);
  incidence_free(&in);
  if (st == FEA_SUCCESS) {
    memcpy(b, rhs, (size_t)problem->num_free * sizeof *rhs);
    *A = M;
  } else {
    fea_matrix_destroy(&M);
  }
  free(rhs);
  return st;
}
