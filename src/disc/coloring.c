/* Element colorings (thesis Ch. 2.3.2): elements of one color share no DoF.
 *
 * Cartesian grids use the closed formula; other meshes a greedy coloring in
 * element order over the DoF -> elements incidence, which bounds the number
 * of colors by one more than the largest number of neighbours of an element.
 * The validator checks any coloring against the incidence. */
#include <stdint.h>
#include <stdlib.h>

#include "coloring.h"
#include "internal/error.h"
#include "mesh.h"
#include "pattern.h"
#include "space.h"
#include "base/sort.h"

void fea_coloring_cartesian(int dim, const fea_index n[3], int m, fea_index *colors, int *ncolors) {
  fea_index count = 1, mpow[3] = {1, 1, 1};
  for (int k = 0; k < dim; k++) count *= n[k];
  for (int k = 1; k < dim; k++) mpow[k] = mpow[k - 1] * m;
  for (fea_index e = 0; e < count; e++) {
    fea_index rest = e, color = 0;
    for (int k = 0; k < dim; k++) {
      color += (rest % n[k]) % m * mpow[k];
      rest /= n[k];
    }
    colors[e] = color;
  }
  *ncolors = (int)(mpow[dim - 1] * m);
}

/* The elements around each DoF, in increasing element order (CSR: the
 * elements of DoF d are elem[ptr[d] .. ptr[d+1])). Entries are checked here,
 * once, for both users. */
struct incidence {
  fea_index *ptr, *elem;
};

static void incidence_free(struct incidence *in) {
  free(in->ptr);
  free(in->elem);
}

static fea_status incidence_build(const fea_context *ctx, fea_index nelem, int per_elem,
                                  const fea_index *elem_dofs, fea_index ndofs,
                                  struct incidence *in) {
  in->ptr = in->elem = NULL;
  FEA_CHECK(nelem >= 0 && per_elem >= 0 && ndofs >= 0, ctx, FEA_ERR_INVALID_ARG,
            "negative size: %lld elements, %d DoFs per element, %lld DoFs", (long long)nelem,
            per_elem, (long long)ndofs);
  FEA_CHECK(per_elem == 0 || nelem <= INT64_MAX / per_elem, ctx, FEA_ERR_OUT_OF_MEMORY,
            "%lld elements of %d DoFs are too many", (long long)nelem, per_elem);
  const fea_index total = nelem * per_elem;
  for (fea_index i = 0; i < total; i++)
    FEA_CHECK(elem_dofs[i] >= 0 && elem_dofs[i] < ndofs, ctx, FEA_ERR_INVALID_ARG,
              "element %lld, local DoF %d is %lld, outside [0, %lld)", (long long)(i / per_elem),
              (int)(i % per_elem), (long long)elem_dofs[i], (long long)ndofs);
  in->ptr = calloc((size_t)ndofs + 1, sizeof *in->ptr);
  in->elem = malloc((size_t)(total > 0 ? total : 1) * sizeof *in->elem);
  if (!in->ptr || !in->elem) {
    incidence_free(in);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the incidence of %lld DoFs",
                     (long long)ndofs);
  }
  for (fea_index i = 0; i < total; i++) in->ptr[elem_dofs[i] + 1]++;
  for (fea_index d = 0; d < ndofs; d++) in->ptr[d + 1] += in->ptr[d];
  /* Filling in element order keeps each list sorted; ptr[d] serves as the
   * cursor and is shifted back afterwards. */
  for (fea_index i = 0; i < total; i++) in->elem[in->ptr[elem_dofs[i]]++] = i / per_elem;
  for (fea_index d = ndofs; d > 0; d--) in->ptr[d] = in->ptr[d - 1];
  in->ptr[0] = 0;
  return FEA_SUCCESS;
}

fea_status fea_coloring_greedy(const fea_context *ctx, fea_index nelem, int per_elem,
                               const fea_index *elem_dofs, fea_index ndofs, fea_index *colors,
                               int *ncolors) {
  struct incidence in;
  FEA_CALL(incidence_build(ctx, nelem, per_elem, elem_dofs, ndofs, &in));
  /* taken[c] == e: color c is used by a neighbour of element e. No element
   * needs a color above nelem - 1. */
  fea_index *taken = malloc((size_t)(nelem > 0 ? nelem : 1) * sizeof *taken);
  if (!taken) {
    incidence_free(&in);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to color %lld elements",
                     (long long)nelem);
  }
  for (fea_index c = 0; c < nelem; c++) taken[c] = -1;
  fea_index used = 0;
  for (fea_index e = 0; e < nelem; e++) {
    for (int j = 0; j < per_elem; j++) {
      const fea_index d = elem_dofs[e * per_elem + j];
      for (fea_index k = in.ptr[d]; k < in.ptr[d + 1] && in.elem[k] < e; k++)
        taken[colors[in.elem[k]]] = e;
    }
    fea_index c = 0;
    while (taken[c] == e) c++;
    colors[e] = c;
    if (c + 1 > used) used = c + 1;
  }
  free(taken);
  incidence_free(&in);
  *ncolors = (int)used;
  return FEA_SUCCESS;
}

fea_status fea_coloring_check(const fea_context *ctx, fea_index nelem, int per_elem,
                              const fea_index *elem_dofs, fea_index ndofs,
                              const fea_index *colors) {
  for (fea_index e = 0; e < nelem; e++)
    FEA_CHECK(colors[e] >= 0, ctx, FEA_ERR_INVALID_ARG, "element %lld has no color (%lld)",
              (long long)e, (long long)colors[e]);
  struct incidence in;
  FEA_CALL(incidence_build(ctx, nelem, per_elem, elem_dofs, ndofs, &in));
  /* Colors may be any non-negative labels: rank them densely (sorted distinct
   * labels, then a binary search per element) so that a table indexed by
   * rank can remember, per color, the last DoF and element it was seen at. */
  const size_t n = (size_t)(nelem > 0 ? nelem : 1);
  fea_index *labels = malloc(n * sizeof *labels), *rank = malloc(n * sizeof *rank);
  fea_index *seen_dof = malloc(n * sizeof *seen_dof), *seen_elem = malloc(n * sizeof *seen_elem);
  fea_status status = FEA_SUCCESS;
  if (!labels || !rank || !seen_dof || !seen_elem) {
    status = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to check %lld colors",
                       (long long)nelem);
    goto done;
  }
  for (fea_index e = 0; e < nelem; e++) labels[e] = colors[e];
  qsort(labels, (size_t)nelem, sizeof *labels, fea_index_cmp);
  size_t distinct = 0;
  for (fea_index e = 0; e < nelem; e++)
    if (distinct == 0 || labels[distinct - 1] != labels[e]) labels[distinct++] = labels[e];
  for (fea_index e = 0; e < nelem; e++) {
    const fea_index *hit = bsearch(&colors[e], labels, distinct, sizeof *labels, fea_index_cmp);
    rank[e] = hit - labels;
  }
  for (size_t r = 0; r < distinct; r++) seen_dof[r] = -1;
  for (fea_index d = 0; d < ndofs && status == FEA_SUCCESS; d++)
    for (fea_index k = in.ptr[d]; k < in.ptr[d + 1]; k++) {
      const fea_index e = in.elem[k], r = rank[e];
      if (seen_dof[r] == d && seen_elem[r] != e) { /* an element repeating a DoF is no conflict */
        status = FEA_ERROR(ctx, FEA_ERR_INVALID_ARG,
                           "elements %lld and %lld both have color %lld and share DoF %lld",
                           (long long)seen_elem[r], (long long)e, (long long)colors[e],
                           (long long)d);
        break;
      }
      seen_dof[r] = d;
      seen_elem[r] = e;
    }
done:
  free(labels);
  free(rank);
  free(seen_dof);
  free(seen_elem);
  incidence_free(&in);
  return status;
}

int fea_space_cartesian_stride(const fea_space *s) {
  if (s->kind == FEA_SPACE_BSPLINE) {
    int pmax = 0;
    for (int k = 0; k < s->dim; k++) pmax = s->degree[k] > pmax ? s->degree[k] : pmax;
    return pmax + 1;
  }
  if (s->mesh && s->mesh->structured && !s->mesh->simplices && s->elements[0] > 0) return 2;
  return 0;
}

fea_status fea_space_coloring(const fea_space *space, fea_coloring_method method, fea_index *colors,
                              int *num_colors) {
  int m = fea_space_cartesian_stride(space);
  if (method != FEA_COLORING_GREEDY && m > 0) {
    fea_coloring_cartesian(space->dim, space->elements, m, colors, num_colors);
    return FEA_SUCCESS;
  }
  fea_index *d = NULL;
  FEA_CALL(fea_element_dof_table(space, &d));
  fea_status st = fea_coloring_greedy(space->ctx, space->num_elements, space->dofs_per_element, d,
                                      space->num_dofs, colors, num_colors);
  free(d);
  return st;
}

fea_status fea_space_coloring_check(const fea_space *space, const fea_index *colors) {
  fea_index *d = NULL;
  FEA_CALL(fea_element_dof_table(space, &d));
  fea_status st = fea_coloring_check(space->ctx, space->num_elements, space->dofs_per_element, d,
                                     space->num_dofs, colors);
  free(d);
  return st;
}
