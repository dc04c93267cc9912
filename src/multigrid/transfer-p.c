/* The transfer from Q1 to Q_p on the same mesh (p-multigrid's first step,
 * hierarchy.c): row r of P, for the free Q_p DoF at reference node
 * (x1d[a_0], x1d[a_1], x1d[a_2]) of a cell, holds the Q1 shape functions of
 * that cell at the node, prod_k (x_k or 1 - x_k) by the corner's bit k, on the
 * cell's free vertices. Q1 is a subspace of Q_p on every cell whatever the
 * cell's geometry (both are polynomials of the reference coordinates under
 * the same map), so P is exact interpolation and P^T A_p P is the Q1 matrix
 * of the same problem. A DoF shared by several cells takes its row from the
 * first cell that holds it: continuity makes the others' rows equal. Exact
 * zeros (nodes on a cell's faces) are left out. Vector spaces (ncomp > 1)
 * take the scalar row per component: fine DoF (i, c) on coarse DoFs (j, c). */
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "disc/lagrange.h"
#include "disc/mesh.h"
#include "multigrid-impl.h"
#include "disc/space.h"

/* The entries of one row: the cell's Q1 weights at local node i, on the free
 * coarse vertices, columns sorted; returns their count (at most 8). */
static int row_of(const fea_problem *coarse, const fea_lagrange_element *el, int dim, int i,
                  int comp, const fea_index *cdofs, fea_index col[8], double val[8]) {
  const int nc = coarse->space->ncomp;
  const int n = el->order + 1;
  double x[3] = {0, 0, 0};
  for (int k = 0, r = i; k < dim; k++, r /= n) x[k] = el->x1d[r % n];
  int count = 0;
  for (int c = 0; c < (1 << dim); c++) {
    double w = 1.0;
    for (int k = 0; k < dim; k++) w *= (c >> k & 1) ? x[k] : 1.0 - x[k];
    const fea_index j = coarse->free_index[comp + nc * cdofs[c]];
    if (w == 0.0 || j < 0) continue;
    count = fea_mg_row_insert(col, val, count, j, w);
  }
  return count;
}

fea_status fea_mg_p_prolongation(fea_context *ctx, const fea_problem *fine,
                                 const fea_problem *coarse, fea_matrix **P) {
  const fea_space *fs = fine->space, *cs = coarse->space;
  FEA_CHECK(fs->kind == FEA_SPACE_LAGRANGE && cs->kind == FEA_SPACE_LAGRANGE &&
                fs->mesh == cs->mesh && cs->degree[0] == 1 &&
                (fs->cell == FEA_CELL_QUAD || fs->cell == FEA_CELL_HEXAHEDRON),
            ctx, FEA_ERR_INVALID_ARG,
            "p-prolongation needs Q_p and Q1 on the same quadrilateral or hexahedral mesh");
  FEA_CHECK(fs->ncomp == cs->ncomp, ctx, FEA_ERR_INVALID_ARG,
            "p-prolongation between spaces of %d and %d components", fs->ncomp, cs->ncomp);
  const int nc = fs->ncomp;
  const fea_lagrange_element *el = fea_space_lagrange_element(fs);
  const int dim = fs->dim, nbf = fs->dofs_per_element, nbc = cs->dofs_per_element;
  const fea_index ne = fs->num_elements, nf = fine->num_free;
  /* The cell and local node that give each free fine DoF its row. */
  fea_index *owner = malloc(((size_t)nf + 1) * sizeof *owner);
  fea_index *fd = malloc((size_t)nbf * sizeof *fd), *cd = malloc((size_t)nbc * sizeof *cd);
  unsigned char *comp_of = malloc((size_t)nf + 1); /* each free row's component */
  if (!owner || !fd || !cd || !comp_of) {
    free(owner), free(fd), free(cd), free(comp_of);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the rows of %lld DoFs",
                     (long long)nf);
  }
  for (fea_index r = 0; r < nf; r++) owner[r] = -1;
  for (fea_index v = 0; v < fea_space_total_dofs(fs); v++)
    if (fine->free_index[v] >= 0) comp_of[fine->free_index[v]] = (unsigned char)(v % nc);
  for (fea_index e = 0; e < ne; e++) {
    fs->ops->element_dofs(fs, e, fd);
    for (int i = 0; i < nbf; i++)
      for (int c = 0; c < nc; c++) {
        const fea_index r = fine->free_index[c + nc * fd[i]];
        if (r >= 0 && owner[r] < 0) owner[r] = e * nbf + i;
      }
  }
  fea_index col[8], nnz = 0;
  double val[8];
  for (fea_index r = 0; r < nf; r++) {
    cs->ops->element_dofs(cs, owner[r] / nbf, cd);
    nnz += row_of(coarse, el, dim, (int)(owner[r] % nbf), comp_of[r], cd, col, val);
  }
  fea_matrix *p = NULL;
  fea_status st = fea_matrix_alloc(ctx, nf, coarse->num_free, nnz, &p);
  for (fea_index r = 0, at = 0; st == FEA_SUCCESS && r < nf; r++) {
    cs->ops->element_dofs(cs, owner[r] / nbf, cd);
    const int c = row_of(coarse, el, dim, (int)(owner[r] % nbf), comp_of[r], cd, col, val);
    memcpy(p->col_idx + at, col, (size_t)c * sizeof *col);
    memcpy(p->values + at, val, (size_t)c * sizeof *val);
    at += c;
    p->row_ptr[r + 1] = at;
  }
  free(owner), free(fd), free(cd), free(comp_of);
  FEA_CALL(st);
  *P = p;
  return FEA_SUCCESS;
}
