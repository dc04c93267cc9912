/* Reference assembly of the reduced system (Poisson, elasticity: vector
 * DoFs c + ncomp j) into CSR: serial and deliberately plain, because every
 * fast path is checked against it.
 *
 * 1. Pattern: shared with the concurrent assembly (pattern.c).
 * 2. Values: element by element; a column is found in its row by binary
 *    search. Boundary columns move to the right-hand side (lifting). */
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "linalg/matrix.h"
#include "pattern.h"
#include "problem.h"

static fea_status add_elements(const fea_problem *pb, const fea_incidence *in, fea_matrix *A,
                               double *b) {
  const fea_space *s = pb->space;
  /* nb: the element's vector DoFs (c + ncomp j), which ed lists. */
  const int nc = s->ncomp, ns = s->dofs_per_element, nb = ns * nc;
  fea_element_values ev;
  FEA_CALL(fea_element_values_alloc(s, &pb->quad, &ev));
  double *Ke = malloc((size_t)nb * nb * sizeof *Ke), *fe = malloc((size_t)nb * sizeof *fe);
  fea_index *ved = malloc((size_t)nb * sizeof *ved);
  fea_status st = Ke && fe && ved
                      ? FEA_SUCCESS
                      : FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for element matrices");
  for (fea_index e = 0; e < s->num_elements && st == FEA_SUCCESS; e++) {
    st = s->ops->element_values(s, e, &pb->quad, &ev);
    if (st == FEA_SUCCESS) st = fea_form_element_system(pb, e, &ev, Ke, fe);
    if (st != FEA_SUCCESS) break;
    for (int j = 0; j < ns; j++)
      for (int c = 0; c < nc; c++) ved[c + nc * j] = c + nc * in->edofs[e * ns + j];
    const fea_index *ed = ved;
    for (int i = 0; i < nb; i++) {
      fea_index r = pb->free_index[ed[i]];
      if (r < 0) continue;
      b[r] += fe[i];
      for (int j = 0; j < nb; j++) {
        fea_index c = pb->free_index[ed[j]];
        if (c >= 0)
          A->values[fea_pattern_find(A->row_ptr, A->col_idx, r, c)] += Ke[i * nb + j];
        else
          b[r] -= Ke[i * nb + j] * pb->dirichlet[ed[j]];
      }
    }
  }
  free(Ke);
  free(fe);
  free(ved);
  fea_element_values_free(&ev);
  return st;
}

fea_status fea_problem_assemble_reference(const fea_problem *problem, double *b, fea_matrix **A) {
  FEA_ENTRY();
  if (A) *A = NULL;
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(A, problem->ctx);
  FEA_CHECK(b || problem->num_free == 0, problem->ctx, FEA_ERR_INVALID_ARG, "argument 'b' is NULL");
  return fea_problem_reference_system(problem, b, A);
}

fea_status fea_problem_reference_system(const fea_problem *problem, double *b, fea_matrix **A) {
  fea_incidence in = {0};
  fea_matrix *M = NULL;
  double *rhs = calloc((size_t)problem->num_free + 1, sizeof *rhs);
  fea_status st = rhs ? fea_incidence_build(problem->space, &in)
                      : FEA_ERROR(problem->ctx, FEA_ERR_OUT_OF_MEMORY,
                                  "no memory for the right-hand side");
  if (st == FEA_SUCCESS) st = fea_pattern_build(problem, &in, &M);
  if (st == FEA_SUCCESS) st = add_elements(problem, &in, M, rhs);
  fea_incidence_free(&in);
  if (st == FEA_SUCCESS) {
    memcpy(b, rhs, (size_t)problem->num_free * sizeof *rhs);
    *A = M;
  } else {
    FEA_OBJECT_DROP(M);
  }
  free(rhs);
  return st;
}
