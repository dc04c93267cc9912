/* Level matrices of multigrid on structured box meshes of quadrilaterals or
 * hexahedra with a constant coefficient, built row by row from a stencil
 * instead of by element assembly.
 *
 * All cells of such a mesh are translates of one another, so they share one
 * element stiffness matrix K_e, computed once from cell 0 by the problem's
 * own forms. The reduced matrix's row of a free vertex v then couples it
 * with every free vertex w of the 3^dim around it (the pattern of an
 * assembly: every pair that shares a cell, zeros included), with the value
 * sum over the cells holding both of K_e[local(v), local(w)]. Rows are
 * independent: they are counted and filled on the context's threads, with
 * no element integration, sorting or pattern search (the general assembly
 * costs several times more, docs/multigrid.md "Setup cost"). Entries equal
 * the assembly's up to the order of the additions (tested). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "context.h"
#include "error.h"
#include "memory-limit.h"
#include "mesh.h"
#include "multigrid-impl.h"
#include "space.h"

/* Where a stencil row builder needs to look: the grid, the element matrix
 * indexed by corner bits (bit k set: the cell's upper side in direction k). */
typedef struct stencil {
  int dim, corners;     /* corners = 2^dim */
  fea_index n[3];       /* cells per direction (1 beyond dim) */
  fea_index vstride[3]; /* vertex-number strides */
  double K[8][8];       /* K[a][b]: corners a, b of a cell */
  double interior[27];  /* a vertex with all 2^dim cells: its value per neighbour offset */
  const fea_index *free_index;
} stencil;

/* Neighbour offset index t in 0..3^dim-1 -> offsets in {-1, 0, 1}, x fastest
 * (so that, z outermost, the neighbours' vertex numbers and free indices
 * increase with t: sorted columns). */
static void offset_of(int dim, int t, int d[3]) {
  for (int k = 0; k < 3; k++) {
    d[k] = k < dim ? t % 3 - 1 : 0;
    t /= 3;
  }
}

/* Value of the (v, v + d) entry at grid position pos: the cells around pos
 * that exist and hold both vertices. */
static double entry(const stencil *st, const fea_index pos[3], const int d[3], int all_cells) {
  double sum = 0.0;
  for (int o = 0; o < st->corners; o++) { /* bit k of o: the cell below pos in direction k */
    int a = 0, b = 0, inside = 1;
    for (int k = 0; k < st->dim && inside; k++) {
      const fea_index lo = pos[k] - (o >> k & 1); /* the cell's lower vertex coordinate */
      const int va = (int)(pos[k] - lo), vb = (int)(pos[k] + d[k] - lo);
      inside = (all_cells || (lo >= 0 && lo < st->n[k])) && vb >= 0 && vb <= 1;
      a |= va << k;
      b |= vb << k;
    }
    if (inside) sum += st->K[a][b];
  }
  return sum;
}

/* The corner bits of each local DoF of element e (its vertices relative to its
 * lowest one); 0 when they are not the 2^dim distinct corners of a cell. */
static int corner_bits(const fea_space *s, const stencil *st, fea_index e, int bits[8]) {
  fea_index ed[8], lo[3] = {0, 0, 0}, pos[8][3];
  s->ops->element_dofs(s, e, ed);
  for (int i = 0; i < st->corners; i++)
    for (int k = 0; k < st->dim; k++) {
      pos[i][k] = ed[i] / st->vstride[k] % (st->n[k] + 1);
      if (i == 0 || pos[i][k] < lo[k]) lo[k] = pos[i][k];
    }
  int seen = 0;
  for (int i = 0; i < st->corners; i++) {
    bits[i] = 0;
    for (int k = 0; k < st->dim; k++) {
      const fea_index off = pos[i][k] - lo[k];
      if (off != 0 && off != 1) return 0;
      bits[i] |= (int)off << k;
    }
    seen |= 1 << bits[i];
  }
  return seen == (1 << st->corners) - 1;
}

/* K by corner bits from cell 0's element matrix; 0 when the space's element
 * layout is not the one the stencil assumes (checked on the first and the
 * last cell). */
static fea_status element_stencil(const fea_problem *pb, stencil *st, int *usable) {
  const fea_space *s = pb->space;
  const int nb = st->corners;
  int bits[8], last[8];
  *usable = corner_bits(s, st, 0, bits) && corner_bits(s, st, s->num_elements - 1, last);
  for (int i = 0; i < nb && *usable; i++) *usable = bits[i] == last[i];
  if (!*usable) return FEA_SUCCESS;
  fea_element_values ev;
  double Ke[64], fe[8];
  FEA_CALL(fea_element_values_alloc(s, &pb->quad, &ev));
  fea_status status = s->ops->element_values(s, 0, &pb->quad, &ev);
  if (status == FEA_SUCCESS) status = fea_form_stiffness_load(pb, &ev, Ke, fe);
  fea_element_values_free(&ev);
  FEA_CALL(status);
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < nb; j++) st->K[bits[i]][bits[j]] = Ke[i * nb + j];
  return FEA_SUCCESS;
}

int fea_mg_stencil_applies(const fea_problem *pb) {
  const fea_space *s = pb->space;
  const fea_mesh *m = s->mesh;
  return m && m->structured && !m->simplices && s->kind == FEA_SPACE_LAGRANGE &&
         s->degree[0] == 1 && s->dofs_per_element == 1 << m->dim && !pb->desc.sigma_fn &&
         s->num_dofs == m->num_nodes;
}

/* Grid position of vertex v, and whether all 2^dim cells around it exist. */
static int position(const stencil *st, fea_index v, fea_index pos[3]) {
  int all = 1;
  for (int k = 0; k < 3; k++) {
    pos[k] = k < st->dim ? v / st->vstride[k] % (st->n[k] + 1) : 0;
    if (k < st->dim && (pos[k] == 0 || pos[k] == st->n[k])) all = 0;
  }
  return all;
}

/* Row of free vertex v: its columns and values in cols/vals (NULL: count only). */
static fea_index row(const stencil *st, fea_index v, fea_index *cols, double *vals) {
  fea_index pos[3];
  const int all = position(st, v, pos);
  const int T = st->dim == 2 ? 9 : 27;
  fea_index count = 0;
  for (int t = 0; t < T; t++) {
    int d[3];
    offset_of(st->dim, t, d);
    fea_index w = v;
    int inside = 1;
    for (int k = 0; k < st->dim; k++) {
      const fea_index p = pos[k] + d[k];
      inside = inside && p >= 0 && p <= st->n[k];
      w += d[k] * st->vstride[k];
    }
    if (!inside) continue;
    const fea_index c = st->free_index[w];
    if (c < 0) continue;
    if (cols) {
      cols[count] = c;
      vals[count] = all ? st->interior[t] : entry(st, pos, d, 0);
    }
    count++;
  }
  return count;
}

fea_status fea_mg_stencil_matrix(fea_context *ctx, const fea_problem *pb, fea_matrix **out) {
  *out = NULL;
  if (!fea_mg_stencil_applies(pb)) return FEA_SUCCESS;
  const fea_mesh *m = pb->space->mesh;
  stencil st = {0};
  st.dim = m->dim;
  st.corners = 1 << m->dim;
  st.free_index = pb->free_index;
  fea_index stride = 1;
  for (int k = 0; k < 3; k++) {
    st.n[k] = k < m->dim ? m->n[k] : 1;
    st.vstride[k] = stride;
    if (k < m->dim) stride *= m->n[k] + 1;
  }
  int usable = 0;
  FEA_CALL(element_stencil(pb, &st, &usable));
  if (!usable) return FEA_SUCCESS;
  const fea_index centre[3] = {1, 1, 1};
  for (int t = 0; t < (m->dim == 2 ? 9 : 27); t++) {
    int d[3];
    offset_of(m->dim, t, d);
    st.interior[t] = entry(&st, centre, d, 1);
  }
  const fea_index n = pb->num_free, nv = m->num_nodes;
  const double most = (double)n * (m->dim == 2 ? 9 : 27);
  char what[96];
  snprintf(what, sizeof what, "a level matrix of %lld rows", (long long)n);
  FEA_CALL(fea_memory_require(ctx, 0, fea_bytes(most, sizeof(double) + sizeof(fea_index)), what));
  fea_index *len = malloc(((size_t)n + 1) * sizeof *len);
  FEA_CHECK(len, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld row lengths", (long long)n);
  const int T = ctx->nthreads > 0 ? ctx->nthreads : 1;
#pragma omp parallel for schedule(static) num_threads(T) if (nv >= FEA_MG_PARALLEL_MIN)
  for (fea_index v = 0; v < nv; v++)
    if (st.free_index[v] >= 0) len[st.free_index[v]] = row(&st, v, NULL, NULL);
  fea_index nnz = 0;
  for (fea_index r = 0; r < n; r++) nnz += len[r];
  fea_matrix *A = NULL;
  fea_status status = fea_matrix_alloc(ctx, n, n, nnz, &A);
  if (status != FEA_SUCCESS) {
    free(len);
    return status;
  }
  A->row_ptr[0] = 0;
  for (fea_index r = 0; r < n; r++) A->row_ptr[r + 1] = A->row_ptr[r] + len[r];
  free(len);
#pragma omp parallel for schedule(static) num_threads(T) if (nv >= FEA_MG_PARALLEL_MIN)
  for (fea_index v = 0; v < nv; v++) {
    const fea_index r = st.free_index[v];
    if (r >= 0) (void)row(&st, v, A->col_idx + A->row_ptr[r], A->values + A->row_ptr[r]);
  }
  *out = A;
  return FEA_SUCCESS;
}
