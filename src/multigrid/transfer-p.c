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

/* ---- the same transfer by grid sweeps -------------------------------------------------------- */

/* Where every free DoF of both levels is an interior node of the box's grid
 * (Dirichlet data on the whole boundary, one component), P is the tensor
 * product of the 1D rule: fine grid position p J + a (0 <= a < p) is the
 * coarse vertex J (a = 0) or 1 - x1d[a] of J and x1d[a] of J + 1, coarse
 * boundary vertices being Dirichlet (zero correction). The Q1 level's free
 * DoFs are its interior vertices in grid order (the vertex numbering of a
 * structured mesh), the Q_p level's are numbered vertices first, then
 * edges, faces and cells (space-lagrange.c): perm maps the fine grid to
 * them, from the cells' local nodes (lexicographic in the reference cell,
 * whose corner c is the Q1 element's vertex c). Each output line is formed
 * from at most 2^(d-1) (prolongation) or (2p - 1)^(d-1) (restriction) input
 * lines, like the Q1 sweeps of transfer-grid.c; no rows are built (at 3D Q2
 * n = 48 the CSR P and P^T were 14 % of the setup) and no entries are read
 * in a cycle. Mapped meshes too: the rule is the reference cell's. */

/* Grid position of vertex v of a structured mesh (n[k] + 1 vertices per
 * direction; 1 beyond dim, the one interior position of a direction that is not there). */
static void vertex_grid(const fea_mesh *m, fea_index v, fea_index pos[3]) {
  for (int k = 0; k < 3; k++) {
    pos[k] = k < m->dim ? v % (m->n[k] + 1) : 1;
    if (k < m->dim) v /= m->n[k] + 1;
  }
}

/* 1 when both levels are of the shape above (sizes only; the layout is
 * checked while perm is built). */
static int pgrid_shape(const fea_problem *fine, const fea_problem *coarse, fea_index N[3]) {
  const fea_space *fs = fine->space, *cs = coarse->space;
  const fea_mesh *m = fs->mesh;
  if (!m || !m->structured || m->simplices || cs->mesh != m || fs->kind != FEA_SPACE_LAGRANGE ||
      cs->kind != FEA_SPACE_LAGRANGE || fs->degree[0] < 2 ||
      fs->degree[0] > FEA_MG_PGRID_MAX_ORDER || cs->degree[0] != 1 || fs->ncomp != 1 ||
      cs->ncomp != 1 || fea_problem_has_faces(fine) || fea_problem_has_faces(coarse) ||
      cs->num_dofs != m->num_nodes ||
      (fs->cell != FEA_CELL_QUAD && fs->cell != FEA_CELL_HEXAHEDRON))
    return 0;
  const int p = fs->degree[0];
  fea_index nf = 1, nc = 1;
  for (int k = 0; k < 3; k++) {
    N[k] = k < m->dim ? m->n[k] : 1;
    if (k < m->dim) nf *= p * N[k] - 1, nc *= N[k] - 1;
  }
  return fine->num_free == nf && coarse->num_free == nc && nc > 0;
}

/* perm from the cells, each taking the nodes on its lower faces (the upper
 * ones are the next cell's; the box's upper boundary is Dirichlet), and
 * *count of them; 0 where a cell's layout is not the one above. Index
 * arithmetic only (one vertex position per cell: divisions were most of it). */
static int pgrid_fill(const fea_problem *fine, const fea_problem *coarse, const fea_mg_pgrid *g,
                      fea_index *fd, unsigned char *seen, fea_index *count) {
  const fea_space *fs = fine->space, *cs = coarse->space;
  const fea_mesh *m = fs->mesh;
  const int dim = m->dim, p = g->p, nb = fs->dofs_per_element;
  fea_index mf[3], mc[3], vs[3], fst[3], cst[3]; /* interior sizes; vertex, fine, coarse strides */
  for (int k = 0; k < 3; k++) {
    mf[k] = k < dim ? p * g->N[k] - 1 : 1;
    mc[k] = k < dim ? g->N[k] - 1 : 1;
    vs[k] = k == 0 ? 1 : vs[k - 1] * (k - 1 < dim ? m->n[k - 1] + 1 : 1);
    fst[k] = k == 0 ? 1 : fst[k - 1] * mf[k - 1];
    cst[k] = k == 0 ? 1 : cst[k - 1] * mc[k - 1];
  }
  /* The cell's own local nodes (offsets < p in every direction): their grid
   * offset from the cell's lowest node, and which directions they sit at 0
   * in (on the lower boundary when the cell is the first there). */
  int own[FEA_LAGRANGE_MAX_BASIS], zero[FEA_LAGRANGE_MAX_BASIS], nown = 0;
  fea_index off[FEA_LAGRANGE_MAX_BASIS];
  for (int a = 0; a < nb; a++) {
    int mine = 1, z = 0;
    fea_index o = 0;
    for (int k = 0, r = a; k < dim; k++, r /= p + 1) {
      mine = mine && r % (p + 1) < p;
      z |= (r % (p + 1) == 0) << k;
      o += (r % (p + 1)) * fst[k];
    }
    if (mine) own[nown] = a, zero[nown] = z, off[nown++] = o;
  }
  fea_index cd[8];
  for (fea_index e = 0; e < fs->num_elements; e++) {
    cs->ops->element_dofs(cs, e, cd);
    fea_index o[3], base = 0;
    int low = 0; /* directions where the cell is the first */
    vertex_grid(m, cd[0], o);
    for (int k = 0; k < dim; k++) {
      base += (p * o[k] - 1) * fst[k];
      low |= (o[k] == 0) << k;
    }
    for (int c = 0; c < 1 << dim; c++) { /* corner c at o + its bits; coarse numbering */
      fea_index v = cd[0], at = 0;
      int inner = 1;
      for (int k = 0; k < dim; k++) {
        const fea_index pos = o[k] + (c >> k & 1);
        v += (c >> k & 1) * vs[k];
        at += (pos - 1) * cst[k];
        inner = inner && pos > 0 && pos < g->N[k];
      }
      const fea_index r = coarse->free_index[cd[c]];
      if (cd[c] != v || (inner ? r != at : r >= 0)) return 0;
    }
    fs->ops->element_dofs(fs, e, fd);
    for (int i = 0; i < nown; i++) {
      const fea_index r = fine->free_index[fd[own[i]]];
      if (zero[i] & low) { /* on the lower boundary */
        if (r >= 0) return 0;
        continue;
      }
      const fea_index at = base + off[i];
      if (r < 0 || seen[r] || g->perm[at] >= 0) return 0; /* one DoF at two positions */
      seen[r] = 1;
      g->perm[at] = r;
      (*count)++;
    }
  }
  return 1;
}

fea_status fea_mg_pgrid_build(fea_context *ctx, const fea_problem *fine, const fea_problem *coarse,
                              fea_mg_pgrid **out) {
  *out = NULL;
  fea_index N[3];
  if (!pgrid_shape(fine, coarse, N)) return FEA_SUCCESS;
  const fea_index nf = fine->num_free;
  fea_mg_pgrid *g = calloc(1, sizeof *g);
  fea_index *fd = malloc((size_t)fine->space->dofs_per_element * sizeof *fd);
  unsigned char *seen = calloc((size_t)nf + 1, 1);
  if (g) g->perm = malloc(((size_t)nf + 1) * sizeof *g->perm);
  if (!g || !g->perm || !fd || !seen) {
    free(fd), free(seen), fea_mg_pgrid_free(g);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the grid of %lld DoFs",
                     (long long)nf);
  }
  const fea_lagrange_element *el = fea_space_lagrange_element(fine->space);
  g->dim = fine->space->dim;
  g->p = fine->space->degree[0];
  for (int k = 0; k < 3; k++) g->N[k] = N[k];
  for (int a = 0; a <= g->p; a++) g->x1d[a] = el->x1d[a];
  for (fea_index i = 0; i < nf; i++) g->perm[i] = -1;
  fea_index count = 0; /* every free DoF at one grid position */
  const int ok = pgrid_fill(fine, coarse, g, fd, seen, &count) && count == nf;
  free(fd), free(seen);
  if (!ok) { /* another layout: the caller builds the CSR rows */
    fea_mg_pgrid_free(g);
    return FEA_SUCCESS;
  }
  *out = g;
  return FEA_SUCCESS;
}

void fea_mg_pgrid_free(fea_mg_pgrid *g) {
  if (!g) return;
  free(g->perm);
  free(g);
}

/* The coarse interior indices and weights behind fine interior index i of
 * one direction (full position i + 1 = p J + a): 1 or 2 of them. */
static int p_sources(const fea_mg_pgrid *g, int k, fea_index i, fea_index j[2], double w[2]) {
  const fea_index P = i + 1, J = P / g->p;
  const int a = (int)(P % g->p);
  int n = 0;
  if (a == 0) {
    j[0] = J - 1, w[0] = 1.0;
    return 1;
  }
  if (J >= 1) j[n] = J - 1, w[n++] = 1.0 - g->x1d[a];
  if (J + 1 <= g->N[k] - 1) j[n] = J, w[n++] = g->x1d[a];
  return n;
}

void fea_mg_pgrid_prolong(const fea_mg_pgrid *g, int threads, const double *xc, double *xf) {
  const int p = g->p, dim = g->dim;
  const fea_index mf0 = p * g->N[0] - 1, mf1 = dim > 1 ? p * g->N[1] - 1 : 1,
                  mf2 = dim > 2 ? p * g->N[2] - 1 : 1;
  const fea_index mc0 = g->N[0] - 1, mc1 = dim > 1 ? g->N[1] - 1 : 1;
  const fea_index lines = mf1 * mf2;
#pragma omp parallel for schedule(static) \
    num_threads(threads) if (lines * mf0 >= FEA_MG_PARALLEL_MIN)
  for (fea_index line = 0; line < lines; line++) {
    const fea_index i1 = line % mf1, i2 = line / mf1;
    fea_index j1[2], j2[2] = {0, 0};
    double w1[2], w2[2] = {1.0, 1.0};
    const int n1 = p_sources(g, 1, i1, j1, w1), n2 = dim == 3 ? p_sources(g, 2, i2, j2, w2) : 1;
    const double *src[4];
    double wt[4];
    int ns = 0;
    for (int b = 0; b < n2; b++)
      for (int a = 0; a < n1; a++) {
        src[ns] = xc + (j2[b] * mc1 + j1[a]) * mc0;
        wt[ns++] = w1[a] * w2[b];
      }
    const fea_index *to = g->perm + line * mf0;
    /* Along x: coarse J - 1 and J (interior indices) around each fine node. */
    for (fea_index J = 0; J <= mc0; J++) {
      double lo = 0.0, hi = 0.0; /* the combined coarse line at J - 1 and J */
      for (int s = 0; s < ns; s++) {
        if (J > 0) lo += wt[s] * src[s][J - 1];
        if (J < mc0) hi += wt[s] * src[s][J];
      }
      const fea_index base = p *
                             J; /* fine interior index of full position p J + a is base + a - 1 */
      if (J > 0) xf[to[base - 1]] += lo;
      for (int a = 1; a < p; a++) xf[to[base + a - 1]] += (1.0 - g->x1d[a]) * lo + g->x1d[a] * hi;
    }
  }
}

void fea_mg_pgrid_restrict(const fea_mg_pgrid *g, int threads, const double *rf, double *bc) {
  const int p = g->p, dim = g->dim;
  const fea_index mf0 = p * g->N[0] - 1, mf1 = dim > 1 ? p * g->N[1] - 1 : 1;
  const fea_index mc0 = g->N[0] - 1, mc1 = dim > 1 ? g->N[1] - 1 : 1,
                  mc2 = dim > 2 ? g->N[2] - 1 : 1;
  /* phi[d + p - 1]: the weight of fine offset d in -(p - 1) .. p - 1 from a coarse vertex. */
  double phi[2 * FEA_MG_PGRID_MAX_ORDER - 1];
  for (int d = -(p - 1); d < p; d++) phi[d + p - 1] = d >= 0 ? 1.0 - g->x1d[d] : g->x1d[p + d];
  const fea_index lines = mc1 * mc2;
#pragma omp parallel for schedule(static) \
    num_threads(threads) if (lines * mc0 >= FEA_MG_PARALLEL_MIN)
  for (fea_index line = 0; line < lines; line++) {
    const fea_index j1 = line % mc1, j2 = line / mc1;
    double *y = bc + line * mc0;
    for (fea_index J = 0; J < mc0; J++) y[J] = 0.0;
    const int n2 = dim == 3 ? 2 * p - 1 : 1;
    for (int b = 0; b < n2; b++)
      for (int a = 0; a < 2 * p - 1; a++) {
        /* fine interior index of full position p (j + 1) + d is p (j + 1) + d - 1 */
        const fea_index i1 = p * (j1 + 1) + a - (p - 1) - 1;
        const fea_index i2 = dim == 3 ? p * (j2 + 1) + b - (p - 1) - 1 : 0;
        const double w = phi[a] * (dim == 3 ? phi[b] : 1.0);
        const fea_index *from = g->perm + (i2 * mf1 + i1) * mf0;
        for (fea_index J = 0; J < mc0; J++) {
          const fea_index c = p * (J + 1) - 1; /* the coarse vertex's own fine index */
          double s = 0.0;
          for (int d = -(p - 1); d < p; d++) s += phi[d + p - 1] * rf[from[c + d]];
          y[J] += w * s;
        }
      }
  }
}
