/* The sparsity pattern of the reduced system, shared by the reference
 * assembly and the concurrent one: the element-DoF table, the DoF -> element
 * incidence, and the CSR rows built from them. */
#ifndef FEA_INTERNAL_PATTERN_H
#define FEA_INTERNAL_PATTERN_H

#include "linalg/matrix.h"
#include "problem.h"
#include "base/sort.h"

/* All element DoFs (edofs, num_elements x dofs_per_element, row-major) and the
 * DoF -> element incidence in CSR (start: num_dofs + 1, elems: the elements
 * around each DoF in increasing order). */
typedef struct fea_incidence {
  fea_index *edofs, *start, *elems;
} fea_incidence;

/* The element-DoF table alone (what element loops need). */
fea_status fea_element_dof_table(const fea_space *s, fea_index **edofs);

fea_status fea_incidence_build(const fea_space *s, fea_incidence *in);
void fea_incidence_free(fea_incidence *in);

/* The reduced matrix's pattern: per free row, the sorted unique free columns
 * of the elements around it. Values are zero. FEA_ERR_OUT_OF_MEMORY before
 * the pattern pass when a lower bound of the matrix's size (pattern.c)
 * exceeds the budget, and after it when the exact count does. */
fea_status fea_pattern_build(const fea_problem *pb, const fea_incidence *in, fea_matrix **out);

/* Position of column c in row r of a CSR pattern (sorted columns), or -1. */
static inline fea_index fea_pattern_find(const fea_index *row_ptr, const fea_index *col_idx,
                                         fea_index r, fea_index c) {
  const fea_index lo = row_ptr[r] +
                       fea_index_lower_bound(col_idx + row_ptr[r], row_ptr[r + 1] - row_ptr[r], c);
  return lo < row_ptr[r + 1] && col_idx[lo] == c ? lo : -1;
}

/* The reduced system's pattern as a CSR matrix with zero values (what
 * fea_matrix_create_pattern returns). */
fea_status fea_pattern_matrix(const fea_problem *problem, fea_matrix **A);

#endif
