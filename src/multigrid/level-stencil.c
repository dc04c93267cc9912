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
 * the assembly's up to the order of the additions (tested).
 *
 * The finest level's right-hand side takes the same shortcut: the cells'
 * quadrature points are cell 0's translated and its basis values and weights
 * are every cell's, so a cell's load costs its evaluations of f and a few
 * multiply-adds, without the Jacobians, inverses and basis evaluations of the
 * general element pass. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/context.h"
#include "internal/error.h"
#include "base/memory-limit.h"
#include "disc/mesh.h"
#include "multigrid-impl.h"
#include "disc/space.h"

/* Where a stencil row builder needs to look: the grid, the element matrix
 * indexed by corner bits (bit k set: the cell's upper side in direction k). */
typedef struct stencil {
  int dim, corners;     /* corners = 2^dim */
  fea_index n[3];       /* cells per direction (1 beyond dim) */
  fea_index vstride[3]; /* vertex-number strides */
  double K[8][8];       /* K[a][b]: corners a, b of a cell */
  int T;                /* neighbour offsets: 3^dim */
  int off[27][3];       /* offset t in {-1, 0, 1}^dim (offset_of) */
  fea_index delta[27];  /* and its change of the vertex number */
  double interior[27];  /* a vertex with all 2^dim cells: its value per neighbour offset */
  const fea_index *free_index;
  double h[3];            /* cell size per direction */
  int nq;                 /* cell 0's quadrature rule: */
  double *qx, *qw, *qphi; /* points (nq x 3), weights, basis values by corner bits (nq x 8) */
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
      if (!inside) break; /* vb may be -1: no shift of it */
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
  const int nq = ev.nq;
  st->nq = nq;
  st->qx = calloc((size_t)nq * 3, sizeof *st->qx);
  st->qw = malloc((size_t)nq * sizeof *st->qw);
  st->qphi = calloc((size_t)nq * 8, sizeof *st->qphi);
  if (status == FEA_SUCCESS && (!st->qx || !st->qw || !st->qphi))
    status = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a rule of %d points", nq);
  if (status == FEA_SUCCESS)
    for (int q = 0; q < nq; q++) {
      st->qw[q] = ev.w[q];
      for (int k = 0; k < st->dim; k++) st->qx[q * 3 + k] = ev.x[q * st->dim + k];
      for (int i = 0; i < nb; i++) st->qphi[q * 8 + bits[i]] = ev.phi[q * nb + i];
    }
  fea_element_values_free(&ev);
  FEA_CALL(status);
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < nb; j++) st->K[bits[i]][bits[j]] = Ke[i * nb + j];
  return FEA_SUCCESS;
}

static void stencil_free(stencil *st) {
  free(st->qx);
  free(st->qw);
  free(st->qphi);
}

int fea_mg_stencil_applies(const fea_problem *pb) {
  const fea_space *s = pb->space;
  const fea_mesh *m = s->mesh;
  /* A mapped mesh's cells are not translates of cell 0 (the box's h says
   * nothing of their shape): its levels are assembled. */
  return m && m->structured && !m->mapped && !m->simplices && s->kind == FEA_SPACE_LAGRANGE &&
         s->degree[0] == 1 && s->dofs_per_element == 1 << m->dim && !pb->desc.sigma_fn &&
         !pb->desc.sigma_tensor && !pb->desc.element_form && s->num_dofs == m->num_nodes &&
         !fea_problem_has_faces(pb) &&    /* no face terms in the one element matrix, */
         !fea_problem_has_reaction(pb) && /* and no mass term; */
         s->ncomp == 1 && !pb->elastic;   /* the Laplacian's stencil, not a system's */
}

/* Row of the free vertex v at grid position pos: its columns and values in
 * cols/vals (NULL: count only); interior: all 2^dim cells around it exist. */
static fea_index row(const stencil *st, fea_index v, const fea_index pos[3], int interior,
                     fea_index *cols, double *vals) {
  fea_index count = 0;
  for (int t = 0; t < st->T; t++) {
    const int *d = st->off[t];
    int inside = 1;
    for (int k = 0; k < st->dim && !interior; k++) {
      const fea_index p = pos[k] + d[k];
      inside = inside && p >= 0 && p <= st->n[k];
    }
    if (!inside) continue;
    const fea_index c = st->free_index[v + st->delta[t]];
    if (c < 0) continue;
    if (cols) {
      cols[count] = c;
      vals[count] = interior ? st->interior[t] : entry(st, pos, d, 0);
    }
    count++;
  }
  return count;
}

/* Every row of a line of vertices along x (line: its number among them, the
 * position of the other directions): lengths into len (by row) when A is
 * NULL, else the entries into A. Lines go to threads whole, so there is no
 * division per vertex. */
static void line_rows(const stencil *st, fea_index line, fea_index *len, fea_matrix *A) {
  fea_index pos[3] = {0, line % (st->n[1] + 1), line / (st->n[1] + 1)};
  int across = 1; /* the line's own position is inside in the other directions */
  for (int k = 1; k < st->dim; k++) across = across && pos[k] > 0 && pos[k] < st->n[k];
  const fea_index v0 = line * (st->n[0] + 1);
  for (pos[0] = 0; pos[0] <= st->n[0]; pos[0]++) {
    const fea_index v = v0 + pos[0], r = st->free_index[v];
    if (r < 0) continue;
    const int interior = across && pos[0] > 0 && pos[0] < st->n[0];
    if (!A)
      len[r] = row(st, v, pos, interior, NULL, NULL);
    else
      (void)row(st, v, pos, interior, A->col_idx + A->row_ptr[r], A->values + A->row_ptr[r]);
  }
}

/* A non-finite load met by some thread: the first one's point. */
typedef struct load_fault {
  int bad;
  double f, x[3];
} load_fault;

/* Cell cp's load vector by corner bits; 0 (and the fault recorded) where f is
 * not finite. */
static int cell_load(const fea_problem *pb, const stencil *st, const fea_index cp[3], double fe[8],
                     load_fault *fault) {
  const fea_problem_desc *d = &pb->desc;
  for (int a = 0; a < st->corners; a++) fe[a] = 0.0;
  if (!d->source) return 1;
  for (int q = 0; q < st->nq; q++) {
    double x[3] = {0.0, 0.0, 0.0};
    for (int k = 0; k < st->dim; k++) x[k] = st->qx[q * 3 + k] + (double)cp[k] * st->h[k];
    const double f = d->source(x, d->source_user);
    if (!isfinite(f)) {
#pragma omp critical(fea_mg_stencil_fault)
      if (!fault->bad) *fault = (load_fault){1, f, {x[0], x[1], x[2]}};
      return 0;
    }
    const double wf = st->qw[q] * f;
    for (int a = 0; a < st->corners; a++) fe[a] += wf * st->qphi[q * 8 + a];
  }
  return 1;
}

/* b = load - K g (the lifting of the Dirichlet values), cell by cell: slabs
 * of cells across the last direction, the even ones on the threads first,
 * then the odd ones, so that no two threads add into one vertex's entry. */
static fea_status stencil_rhs(fea_context *ctx, const fea_problem *pb, const stencil *st,
                              double *b) {
  const int dim = st->dim, last = dim - 1;
  const int T = ctx->nthreads > 0 ? ctx->nthreads : 1;
  fea_index per_slab = 1;
  for (int k = 0; k < last; k++) per_slab *= st->n[k];
  for (fea_index r = 0; r < pb->num_free; r++) b[r] = 0.0;
  load_fault fault = {0, 0.0, {0.0, 0.0, 0.0}};
  for (int parity = 0; parity < 2; parity++) {
    const fea_index slabs = (st->n[last] - parity + 1) / 2;
#pragma omp parallel for schedule(dynamic, 4) \
    num_threads(T) if (slabs * per_slab >= FEA_MG_PARALLEL_MIN)
    for (fea_index j = 0; j < slabs; j++) {
      for (fea_index c = 0; c < per_slab; c++) {
        fea_index cp[3] = {0, 0, 0}, rest = c;
        for (int k = 0; k < last; k++) {
          cp[k] = rest % st->n[k];
          rest /= st->n[k];
        }
        cp[last] = 2 * j + parity;
        double fe[8];
        if (!cell_load(pb, st, cp, fe, &fault)) break;
        fea_index v0 = 0, vert[8];
        for (int k = 0; k < dim; k++) v0 += cp[k] * st->vstride[k];
        for (int a = 0; a < st->corners; a++) {
          vert[a] = v0;
          for (int k = 0; k < dim; k++) vert[a] += (a >> k & 1) * st->vstride[k];
        }
        for (int a = 0; a < st->corners; a++) {
          const fea_index r = st->free_index[vert[a]];
          if (r < 0) continue;
          double sum = fe[a];
          for (int e = 0; e < st->corners; e++)
            if (st->free_index[vert[e]] < 0) sum -= st->K[a][e] * pb->dirichlet[vert[e]];
          b[r] += sum;
        }
      }
    }
  }
  FEA_CHECK(!fault.bad, ctx, FEA_ERR_INVALID_ARG, "the source f is %g at x = (%g, %g, %g)", fault.f,
            fault.x[0], fault.x[1], fault.x[2]);
  return FEA_SUCCESS;
}

static fea_status stencil_matrix(fea_context *ctx, const fea_problem *pb, const stencil *st,
                                 fea_matrix **out) {
  const fea_index n = pb->num_free;
  const fea_index lines = (st->n[1] + 1) * (st->dim == 3 ? st->n[2] + 1 : 1);
  const double most = (double)n * st->T;
  char what[96];
  snprintf(what, sizeof what, "a level matrix of %lld rows", (long long)n);
  FEA_CALL(fea_memory_require(ctx, 0, fea_bytes(most, sizeof(double) + sizeof(fea_index)), what));
  fea_index *len = malloc(((size_t)n + 1) * sizeof *len);
  FEA_CHECK(len, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld row lengths", (long long)n);
  const int T = ctx->nthreads > 0 ? ctx->nthreads : 1;
  const int parallel = pb->space->mesh->num_nodes >= FEA_MG_PARALLEL_MIN;
#pragma omp parallel for schedule(static) num_threads(T) if (parallel)
  for (fea_index line = 0; line < lines; line++) line_rows(st, line, len, NULL);
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
#pragma omp parallel for schedule(static) num_threads(T) if (parallel)
  for (fea_index line = 0; line < lines; line++) line_rows(st, line, NULL, A);
  *out = A;
  return FEA_SUCCESS;
}

/* The stencil of pb's mesh and cell 0's element matrix; *usable 0 where the
 * element layout is not the one the stencil assumes (then nothing applies). */
static fea_status stencil_init(const fea_problem *pb, stencil *st, int *usable) {
  const fea_mesh *m = pb->space->mesh;
  st->dim = m->dim;
  st->corners = 1 << m->dim;
  st->free_index = pb->free_index;
  fea_index stride = 1;
  for (int k = 0; k < 3; k++) {
    st->n[k] = k < m->dim ? m->n[k] : 1;
    st->vstride[k] = stride;
    st->h[k] = k < m->dim ? (m->upper[k] - m->lower[k]) / (double)m->n[k] : 0.0;
    if (k < m->dim) stride *= m->n[k] + 1;
  }
  FEA_CALL(element_stencil(pb, st, usable));
  if (!*usable) return FEA_SUCCESS;
  const fea_index centre[3] = {1, 1, 1};
  st->T = m->dim == 2 ? 9 : 27;
  for (int t = 0; t < st->T; t++) {
    offset_of(m->dim, t, st->off[t]);
    st->delta[t] = 0;
    for (int k = 0; k < m->dim; k++) st->delta[t] += st->off[t][k] * st->vstride[k];
    st->interior[t] = entry(st, centre, st->off[t], 1);
  }
  return FEA_SUCCESS;
}

fea_status fea_mg_stencil_system(fea_context *ctx, const fea_problem *pb, fea_matrix **out,
                                 double *b) {
  *out = NULL;
  if (!fea_mg_stencil_applies(pb)) return FEA_SUCCESS;
  stencil st = {0};
  int usable = 0;
  fea_status status = stencil_init(pb, &st, &usable);
  if (status == FEA_SUCCESS && usable) {
    if (b) status = stencil_rhs(ctx, pb, &st, b);
    if (status == FEA_SUCCESS) status = stencil_matrix(ctx, pb, &st, out);
  }
  stencil_free(&st);
  return status;
}

fea_status fea_mg_stencil_weights(fea_context *ctx, const fea_problem *pb, double w[27], double *b,
                                  int *usable) {
  *usable = 0;
  if (!fea_mg_stencil_applies(pb)) return FEA_SUCCESS;
  /* Every free row a whole stencil: Dirichlet data on the whole boundary. */
  const fea_mesh *m = pb->space->mesh;
  fea_index inner = 1;
  for (int k = 0; k < m->dim; k++) inner *= m->n[k] - 1;
  if (pb->num_free != inner) return FEA_SUCCESS;
  stencil st = {0};
  fea_status status = stencil_init(pb, &st, usable);
  if (status == FEA_SUCCESS && *usable) {
    for (int t = 0; t < st.T; t++) w[t] = st.interior[t];
    if (b) status = stencil_rhs(ctx, pb, &st, b);
  }
  stencil_free(&st);
  return status;
}
