/* Element colorings: elements of one color share no DoF, so they can be
 * processed concurrently without protection. Host algorithms, backend-neutral. */
#ifndef FEA_INTERNAL_COLORING_H
#define FEA_INTERNAL_COLORING_H

#include <feaccel/space.h>

/* Cartesian formula on a grid of n[0] x n[1] x n[2] elements (lexicographic,
 * direction 0 fastest): color = sum_k (i_k mod m) m^k, m^dim colors. Elements
 * closer than m in every direction get different colors: m = 2 for Lagrange
 * (neighbours share nodes), m = p + 1 for B-splines of degree p. */
void fea_coloring_cartesian(int dim, const fea_index n[3], int m, fea_index *colors, int *ncolors);

/* Greedy coloring in element order from the element-DoF incidence
 * (nelem x per_elem, row-major), each element taking the smallest color not
 * used by an element sharing a DoF. */
fea_status fea_coloring_greedy(const fea_context *ctx, fea_index nelem, int per_elem,
                               const fea_index *elem_dofs, fea_index ndofs, fea_index *colors,
                               int *ncolors);

/* FEA_ERR_INVALID_ARG naming two elements of one color that share a DoF. */
fea_status fea_coloring_check(const fea_context *ctx, fea_index nelem, int per_elem,
                              const fea_index *elem_dofs, fea_index ndofs, const fea_index *colors);

/* The stride of the Cartesian coloring of a space's elements (the degree
 * + 1 of B-splines, 2 on a structured box mesh), or 0 where there is none. */
int fea_space_cartesian_stride(const fea_space *s);
/* The elements of space colored by method (checked; CARTESIAN only where
 * the stride is not 0): what fea_space_color_elements returns. */
fea_status fea_space_coloring(const fea_space *space, fea_coloring_method method, fea_index *colors,
                              int *num_colors);

/* Whether colors is a valid coloring of space's elements (what
 * fea_space_check_coloring answers). */
fea_status fea_space_coloring_check(const fea_space *space, const fea_index *colors);

#endif
