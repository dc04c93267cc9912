/* B-spline multigrid on a multipatch domain (issue #40): the levels of a
 * multipatch Poisson problem, handed to the multigrid of given levels
 * (src/multigrid/hierarchy-given.c), and its solver
 * (fea_solver_create_multipatch_multigrid).
 *
 * Levels: every patch coarsened the same way as single-patch B-spline
 * multigrid coarsens one (every other breakpoint dropped,
 * hierarchy-bspline.c), all patches at once and only while every patch can
 * halve in every direction. A conforming interface stays conforming: its two
 * sides carry the same knots (possibly reversed), and an even element count
 * halved from either end keeps the same breakpoints. The coarse domain has
 * the fine one's topology (fea_multipatch_build_like: the same interfaces,
 * orientations and boundary sides, no geometry compared) and its own global
 * numbering; the coarse problem is the fine one's equation and boundary
 * conditions on it (fea_multipatch_problem_build), so its Dirichlet DoFs are
 * made consistent across patches as the fine ones were.
 *
 * Level matrices are rediscretized (every patch's reduced CSR system, as
 * the CSR operator assembles it, summed into the global free rows), not
 * Galerkin products P^T A P. The patch spaces are nested and share the
 * geometry, so the two differ only by quadrature (the rule of each level is
 * exact for the polynomial B-spline products of an affine map, and close
 * elsewhere), while the rediscretized matrix has the coarse space's own
 * sparsity ((2p + 1)^d per row) where the triple product would first build
 * P^T A with the fine rows' wider pattern; rediscretization is also what the
 * single-patch hierarchy does, so both converge alike.
 *
 * Prolongation: per patch the knot-insertion matrix of its free DoFs
 * (fea_mg_bspline_prolongation), rows and columns mapped through the two
 * levels' global free numberings. A fine DoF on an interface is a row of
 * every patch that holds it; those rows are the same (the coarse function
 * restricted to the shared side is the side's own 1D/2D B-spline
 * combination, whose knot insertion depends on the side's knots only), so
 * the first patch's row is taken.
 *
 * Schwarz blocks: the single-patch boxes ((p + 1)^d coefficients every
 * fea_mg_schwarz_stride(p)) in every patch, mapped to global free rows: a box
 * on an interface is cut there, and the interface DoFs are in the boxes of
 * both sides (docs/multigrid.md, "Multipatch domains", measures this against
 * boxes that straddle the interface). The blocks are colored on the global
 * rows (fea_mg_schwarz_setup_lists). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "base/solver-object.h"
#include "internal/backend.h"
#include "internal/error.h"
#include "linalg/matrix.h"
#include "matfree/operator.h"
#include "multigrid/multigrid.h"
#include "multigrid/multigrid-solver.h"
#include "multipatch.h"

#define MPMG_MAX_LEVELS 32

/* The levels while they are built: problems (level 0 the caller's), their
 * matrices, the prolongations into each from the next, the Schwarz blocks. */
typedef struct mp_levels {
  int L;
  fea_multipatch_problem *pb[MPMG_MAX_LEVELS];
  fea_mg_given_level g[MPMG_MAX_LEVELS];
  fea_index *bptr[MPMG_MAX_LEVELS], *bdofs[MPMG_MAX_LEVELS];
  double *rhs;
} mp_levels;

static void levels_free(mp_levels *v) {
  for (int l = 0; l < v->L; l++) {
    FEA_OBJECT_DROP(v->pb[l]);
    FEA_OBJECT_DROP(v->g[l].A);
    FEA_OBJECT_DROP(v->g[l].P);
    free(v->bptr[l]);
    free(v->bdofs[l]);
  }
  free(v->rhs);
}

fea_status fea_multipatch_mg_check(const fea_multipatch_problem *pb) {
  FEA_CHECK(!pb->ctx->backend->op && !pb->ctx->backend->mg, pb->ctx, FEA_ERR_UNSUPPORTED,
            "multipatch multigrid runs on host backends (CSR levels); '%s' keeps its vectors "
            "on a device",
            pb->ctx->resource);
  FEA_CHECK(!pb->elastic && pb->mp->ncomp == 1, pb->ctx, FEA_ERR_UNSUPPORTED,
            "multipatch multigrid solves scalar Poisson problems; the problem is linear "
            "elasticity on patches of %d components (use fea_solver_create_multipatch())",
            pb->mp->ncomp);
  FEA_CHECK(pb->num_free > 0, pb->ctx, FEA_ERR_INVALID_ARG,
            "the problem has no free DoFs (all %lld global DoFs are on Dirichlet sides): "
            "nothing to solve",
            (long long)pb->mp->num_dofs);
  return FEA_SUCCESS;
}

/* Patch p's local free rows -> the problem's global free rows. */
static fea_status local_to_global(const fea_multipatch_problem *pb, int p, fea_index **out) {
  const fea_problem *q = pb->patch_pb[p];
  const fea_index nd = fea_space_total_dofs(pb->mp->patches[p]);
  const fea_index *g = pb->mp->global + pb->mp->patch_off[p];
  fea_index *to = malloc(((size_t)q->num_free + 1) * sizeof *to);
  FEA_CHECK(to, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for patch %d's free DoFs", p);
  for (fea_index d = 0; d < nd; d++)
    if (q->free_index[d] >= 0) to[q->free_index[d]] = pb->free_index[g[d]];
  *out = to;
  return FEA_SUCCESS;
}

/* ---- level matrices ---- */

typedef struct entry {
  fea_index col;
  double val;
} entry;

static int by_col(const void *a, const void *b) {
  const fea_index x = ((const entry *)a)->col, y = ((const entry *)b)->col;
  return (x > y) - (x < y);
}

/* The reduced system of pb over its free global DoFs (b: its load, or
 * NULL): each patch's CSR matrix by the threaded assembly of the CSR
 * operator (fea_operator_build), rows and columns mapped to the global free
 * rows and summed. The sums are those of fea_multipatch_problem_reference;
 * its triplet sort (and each patch reference assembly's) took most of a 3D
 * setup (p = 3, 21k DoFs: 8.7 s on one thread, 40 % of it in qsort). A
 * global row collects its patches' rows, then is sorted by column only
 * where the mapping broke the patch's order (rows near an interface). */
static fea_status assemble(const fea_multipatch_problem *pb, double *b, fea_matrix **out) {
  fea_context *ctx = pb->ctx;
  const int np = pb->mp->num_patches;
  const fea_index n = pb->num_free;
  fea_operator **op = calloc((size_t)np, sizeof *op);
  fea_index **to = calloc((size_t)np, sizeof *to);
  fea_index *ptr = calloc((size_t)n + 2, sizeof *ptr), *fill = NULL;
  entry *e = NULL;
  double *bp = NULL;
  fea_matrix *A = NULL;
  fea_status st = op && to && ptr
                      ? FEA_SUCCESS
                      : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                                  "no memory for the level matrix of %lld rows", (long long)n);
  fea_operator_desc od = FEA_OPERATOR_DESC_INIT;
  od.kind = FEA_OPERATOR_CSR;
  if (b) memset(b, 0, (size_t)n * sizeof *b);
  for (int p = 0; p < np && st == FEA_SUCCESS; p++) {
    st = fea_operator_build(ctx, pb->patch_pb[p], &od, &op[p]);
    if (st == FEA_SUCCESS) st = local_to_global(pb, p, &to[p]);
    const fea_matrix *Ap = st == FEA_SUCCESS ? fea_operator_csr_matrix(op[p]) : NULL;
    if (st == FEA_SUCCESS && !Ap)
      st = FEA_ERROR(ctx, FEA_ERR_STATE, "patch %d's operator has no CSR matrix", p);
    for (fea_index r = 0; st == FEA_SUCCESS && r < Ap->rows; r++)
      ptr[to[p][r] + 2] += Ap->row_ptr[r + 1] - Ap->row_ptr[r];
    if (st == FEA_SUCCESS && b) {
      free(bp);
      bp = malloc(((size_t)Ap->rows + 1) * sizeof *bp);
      st = bp ? fea_operator_rhs(op[p], bp)
              : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for patch %d's load", p);
      for (fea_index r = 0; st == FEA_SUCCESS && r < Ap->rows; r++) b[to[p][r]] += bp[r];
    }
  }
  /* ptr[G + 1]: where row G's entries start (the counts shifted once more:
   * filling advances ptr[G + 1] to row G's end). */
  for (fea_index G = 0; st == FEA_SUCCESS && G < n; G++) ptr[G + 2] += ptr[G + 1];
  if (st == FEA_SUCCESS) {
    e = malloc(((size_t)ptr[n + 1] + 1) * sizeof *e);
    fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (!e || !fill)
      st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld matrix entries",
                     (long long)ptr[n + 1]);
  }
  for (int p = 0; p < np && st == FEA_SUCCESS; p++) {
    const fea_matrix *Ap = fea_operator_csr_matrix(op[p]);
    for (fea_index r = 0; r < Ap->rows; r++) {
      entry *row = e + ptr[to[p][r] + 1];
      for (fea_index k = Ap->row_ptr[r]; k < Ap->row_ptr[r + 1]; k++, row++)
        row->col = to[p][Ap->col_idx[k]], row->val = Ap->values[k];
      ptr[to[p][r] + 1] += Ap->row_ptr[r + 1] - Ap->row_ptr[r];
    }
  }
  /* Now row G is e[ptr[G] .. ptr[G + 1]): sort where needed, merge equal columns. */
  fea_index nnz = 0;
  for (fea_index G = 0; G < n && st == FEA_SUCCESS; G++) {
    entry *row = e + ptr[G];
    const fea_index m = ptr[G + 1] - ptr[G];
    int sorted = 1;
    for (fea_index k = 1; k < m && sorted; k++) sorted = row[k - 1].col < row[k].col;
    if (!sorted) qsort(row, (size_t)m, sizeof *row, by_col);
    fea_index c = 0;
    for (fea_index k = 0; k < m; k++) {
      if (c > 0 && row[c - 1].col == row[k].col)
        row[c - 1].val += row[k].val;
      else
        row[c++] = row[k];
    }
    fill[G] = c;
    nnz += c;
  }
  if (st == FEA_SUCCESS) st = fea_matrix_alloc(ctx, n, n, nnz, &A);
  if (st == FEA_SUCCESS) {
    fea_index at = 0;
    A->row_ptr[0] = 0;
    for (fea_index G = 0; G < n; G++) {
      for (fea_index k = 0; k < fill[G]; k++, at++)
        A->col_idx[at] = e[ptr[G] + k].col, A->values[at] = e[ptr[G] + k].val;
      A->row_ptr[G + 1] = at;
    }
  }
  for (int p = 0; p < np && op && to; p++) {
    FEA_OBJECT_DROP(op[p]);
    free(to[p]);
  }
  free(op);
  free(to);
  free(ptr);
  free(fill);
  free(e);
  free(bp);
  if (st != FEA_SUCCESS) {
    FEA_OBJECT_DROP(A);
    return st;
  }
  *out = A;
  return FEA_SUCCESS;
}

/* The global prolongation fine <- coarse from the patches' knot insertions;
 * each global row from the first patch that holds it, the others' rows of
 * that DoF checked against it (FEA_ERR_STATE naming the DoF otherwise). */
static fea_status prolongation(const fea_multipatch_problem *fine,
                               const fea_multipatch_problem *coarse, fea_matrix **out) {
  fea_context *ctx = fine->ctx;
  const int np = fine->mp->num_patches;
  const fea_index nf = fine->num_free;
  fea_matrix **Pp = calloc((size_t)np, sizeof *Pp);
  fea_index **tof = calloc((size_t)np, sizeof *tof), **toc = calloc((size_t)np, sizeof *toc);
  fea_index *src_patch = malloc(((size_t)nf + 1) * sizeof *src_patch);
  fea_index *src_row = malloc(((size_t)nf + 1) * sizeof *src_row);
  fea_matrix *P = NULL;
  fea_status st = Pp && tof && toc && src_patch && src_row
                      ? FEA_SUCCESS
                      : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a prolongation");
  for (fea_index r = 0; st == FEA_SUCCESS && r < nf; r++) src_patch[r] = -1;
  for (int p = 0; p < np && st == FEA_SUCCESS; p++) {
    st = fea_mg_bspline_prolongation(ctx, fine->patch_pb[p], coarse->patch_pb[p], &Pp[p]);
    if (st == FEA_SUCCESS) st = local_to_global(fine, p, &tof[p]);
    if (st == FEA_SUCCESS) st = local_to_global(coarse, p, &toc[p]);
    for (fea_index r = 0; st == FEA_SUCCESS && r < Pp[p]->rows; r++)
      if (src_patch[tof[p][r]] < 0) src_patch[tof[p][r]] = p, src_row[tof[p][r]] = r;
  }
  fea_index nnz = 0;
  for (fea_index r = 0; st == FEA_SUCCESS && r < nf; r++) {
    if (src_patch[r] < 0) {
      st = FEA_ERROR(ctx, FEA_ERR_STATE, "free DoF %lld is in no patch", (long long)r);
      break;
    }
    const fea_matrix *A = Pp[src_patch[r]];
    nnz += A->row_ptr[src_row[r] + 1] - A->row_ptr[src_row[r]];
  }
  if (st == FEA_SUCCESS) st = fea_matrix_alloc(ctx, nf, coarse->num_free, nnz, &P);
  fea_index at = 0;
  for (fea_index r = 0; st == FEA_SUCCESS && r < nf; r++) {
    const fea_matrix *A = Pp[src_patch[r]];
    const fea_index *to = toc[src_patch[r]];
    P->row_ptr[r] = at;
    for (fea_index k = A->row_ptr[src_row[r]]; k < A->row_ptr[src_row[r] + 1]; k++) {
      /* Insertion by column: the global numbering need not keep the patch's order. */
      fea_index j = at++;
      const fea_index c = to[A->col_idx[k]];
      while (j > P->row_ptr[r] && P->col_idx[j - 1] > c) {
        P->col_idx[j] = P->col_idx[j - 1];
        P->values[j] = P->values[j - 1];
        j--;
      }
      P->col_idx[j] = c;
      P->values[j] = A->values[k];
    }
    P->row_ptr[r + 1] = at;
  }
  /* Every other patch's row of an interface DoF must be the one taken: a
   * check of conformity that costs a pass over those rows only. */
  for (int p = 0; p < np && st == FEA_SUCCESS; p++)
    for (fea_index r = 0; r < Pp[p]->rows && st == FEA_SUCCESS; r++) {
      const fea_index G = tof[p][r];
      if (src_patch[G] == p) continue;
      const fea_index lo = P->row_ptr[G], hi = P->row_ptr[G + 1];
      double diff = 0.0, scale = 0.0, matched = 0.0, all = 0.0;
      for (fea_index k = lo; k < hi; k++) all += fabs(P->values[k]);
      for (fea_index k = Pp[p]->row_ptr[r]; k < Pp[p]->row_ptr[r + 1]; k++) {
        const fea_index c = toc[p][Pp[p]->col_idx[k]];
        const double v = Pp[p]->values[k];
        fea_index a = lo, b = hi; /* P's row is sorted: binary search for c */
        while (a < b) {
          const fea_index m = a + (b - a) / 2;
          if (P->col_idx[m] < c)
            a = m + 1;
          else
            b = m;
        }
        const int found = a < hi && P->col_idx[a] == c;
        diff += fabs(v - (found ? P->values[a] : 0.0));
        if (found) matched += fabs(P->values[a]);
        scale = fmax(scale, fabs(v));
      }
      diff += all - matched;
      if (diff > 1e-10 * fmax(scale, 1.0))
        st = FEA_ERROR(ctx, FEA_ERR_STATE,
                       "the knot insertions of patches %d and %d differ by %g on their shared "
                       "free DoF %lld: the interface did not stay conforming",
                       (int)src_patch[G], p, diff, (long long)G);
    }
  for (int p = 0; p < np && Pp && tof && toc; p++) {
    FEA_OBJECT_DROP(Pp[p]);
    free(tof[p]);
    free(toc[p]);
  }
  free(Pp);
  free(tof);
  free(toc);
  free(src_patch);
  free(src_row);
  if (st != FEA_SUCCESS) {
    FEA_OBJECT_DROP(P);
    return st;
  }
  *out = P;
  return FEA_SUCCESS;
}

static int by_index(const void *a, const void *b) {
  const fea_index x = *(const fea_index *)a, y = *(const fea_index *)b;
  return (x > y) - (x < y);
}

/* The Schwarz boxes of every patch on the global free rows of pb (sorted,
 * boxes without a free DoF dropped). */
static fea_status schwarz_blocks(const fea_multipatch_problem *pb, fea_index *nblocks,
                                 fea_index **ptr_out, fea_index **dofs_out) {
  fea_context *ctx = pb->ctx;
  const fea_multipatch *mp = pb->mp;
  const int dim = mp->dim;
  fea_index nb = 0, cap = 0;
  for (int p = 0; p < mp->num_patches; p++) {
    const fea_space *s = mp->patches[p];
    const fea_bspline_space *bs = s->impl;
    fea_index count = 1, size = 1;
    for (int k = 0; k < dim; k++) {
      const fea_index n = fea_knots_num_functions(&bs->knots[k]);
      count *= fea_mg_schwarz_boxes_1d(n, s->degree[k], NULL);
      size *= s->degree[k] + 1 < n ? s->degree[k] + 1 : n;
    }
    nb += count;
    cap += count * size;
  }
  fea_index *ptr = malloc(((size_t)nb + 1) * sizeof *ptr);
  fea_index *dofs = malloc(((size_t)cap + 1) * sizeof *dofs);
  fea_index *starts[3] = {NULL, NULL, NULL};
  fea_status st = ptr && dofs ? FEA_SUCCESS
                              : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                                          "no memory for %lld Schwarz blocks", (long long)nb);
  fea_index blk = 0, at = 0;
  for (int p = 0; p < mp->num_patches && st == FEA_SUCCESS; p++) {
    const fea_space *s = mp->patches[p];
    const fea_bspline_space *bs = s->impl;
    const fea_index *g = mp->global + mp->patch_off[p];
    fea_index n[3] = {1, 1, 1}, ns[3] = {1, 1, 1};
    int b[3] = {1, 1, 1};
    for (int k = 0; k < 3 && st == FEA_SUCCESS; k++) {
      free(starts[k]);
      const fea_index nk = k < dim ? fea_knots_num_functions(&bs->knots[k]) : 1;
      starts[k] = calloc((size_t)(nk > 1 ? nk : 1), sizeof *starts[k]);
      if (!starts[k]) {
        st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for block starts");
        break;
      }
      starts[k][0] = 0;
      if (k >= dim) continue;
      n[k] = fea_knots_num_functions(&bs->knots[k]);
      ns[k] = fea_mg_schwarz_boxes_1d(n[k], s->degree[k], starts[k]);
      b[k] = s->degree[k] + 1 < n[k] ? s->degree[k] + 1 : (int)n[k];
    }
    for (fea_index j2 = 0; j2 < ns[2] && st == FEA_SUCCESS; j2++)
      for (fea_index j1 = 0; j1 < ns[1]; j1++)
        for (fea_index j0 = 0; j0 < ns[0]; j0++) {
          const fea_index first = at;
          for (int c = 0; c < b[2]; c++)
            for (int bb = 0; bb < b[1]; bb++)
              for (int a = 0; a < b[0]; a++) {
                const fea_index d = (starts[0][j0] + a) +
                                    n[0] * ((starts[1][j1] + bb) + n[1] * (starts[2][j2] + c));
                const fea_index r = pb->free_index[g[d]];
                if (r >= 0) dofs[at++] = r;
              }
          if (at == first) continue;
          qsort(dofs + first, (size_t)(at - first), sizeof *dofs, by_index);
          ptr[blk++] = first;
        }
  }
  for (int k = 0; k < 3; k++) free(starts[k]);
  if (st != FEA_SUCCESS) {
    free(ptr);
    free(dofs);
    return st;
  }
  ptr[blk] = at;
  *nblocks = blk;
  *ptr_out = ptr;
  *dofs_out = dofs;
  return FEA_SUCCESS;
}

/* Whether every patch of mp can halve in every direction. */
static int can_halve(fea_space *const *patches, int np, fea_index coarsest) {
  for (int p = 0; p < np; p++)
    if (!fea_mg_bspline_can_halve(patches[p], coarsest)) return 0;
  return 1;
}

/* Level l + 1's problem from level l's: the spaces halved, the topology
 * kept, the equation and boundary conditions of the finest level. *out
 * NULL (FEA_SUCCESS) when some patch cannot halve. */
static fea_status coarse_problem(const fea_multipatch_problem *top,
                                 const fea_multipatch_problem *fine, fea_index coarsest,
                                 fea_multipatch_problem **out) {
  fea_context *ctx = fine->ctx;
  const fea_multipatch *mp = fine->mp;
  const int np = mp->num_patches;
  *out = NULL;
  if (!can_halve(mp->patches, np, coarsest)) return FEA_SUCCESS;
  fea_space **sp = calloc((size_t)(np > 0 ? np : 1), sizeof *sp);
  fea_multipatch_bc *bcs = malloc(
      ((size_t)(mp->num_boundary_sides > 0 ? mp->num_boundary_sides : 0) + 1) * sizeof *bcs);
  fea_status st = sp && bcs ? FEA_SUCCESS
                            : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d patches", np);
  for (int p = 0; p < np && st == FEA_SUCCESS; p++)
    st = fea_mg_bspline_coarse_space(mp->patches[p], &sp[p]);
  fea_multipatch *cm = NULL;
  if (st == FEA_SUCCESS) st = fea_multipatch_build_like(mp, sp, &cm);
  for (int i = 0; st == FEA_SUCCESS && i < mp->num_boundary_sides; i++) {
    const int p = mp->boundary_sides[i] / 6, s = mp->boundary_sides[i] % 6;
    bcs[i].patch = p;
    bcs[i].side = (fea_patch_side)s;
    bcs[i].bc = top->patch_pb[p]->desc.sides[s];
  }
  if (st == FEA_SUCCESS)
    st = fea_multipatch_problem_build(cm, &top->patch_pb[0]->desc, mp->num_boundary_sides, bcs,
                                      out);
  FEA_OBJECT_DROP(cm); /* the problem holds its own reference */
  for (int p = 0; sp && p < np; p++) FEA_OBJECT_DROP(sp[p]);
  free(sp);
  free(bcs);
  return st;
}

fea_status fea_multipatch_mg_build(fea_multipatch_problem *pb, const fea_multigrid_desc *desc,
                                   fea_mg **out) {
  fea_context *ctx = pb->ctx;
  *out = NULL;
  FEA_CALL(fea_multipatch_mg_check(pb));
  mp_levels v;
  memset(&v, 0, sizeof v);
  fea_object_retain(pb);
  v.pb[0] = pb;
  v.L = 1;
  fea_status st = FEA_SUCCESS;
  while (v.L < MPMG_MAX_LEVELS && st == FEA_SUCCESS) {
    fea_multipatch_problem *c = NULL;
    st = coarse_problem(pb, v.pb[v.L - 1], desc->coarsest_cells, &c);
    if (!c) break;
    if (c->num_free == 0) { /* nothing to correct there: the level above is the last */
      FEA_OBJECT_DROP(c);
      break;
    }
    v.pb[v.L++] = c;
  }
  v.rhs = malloc(((size_t)pb->num_free + 1) * sizeof *v.rhs);
  if (st == FEA_SUCCESS && !v.rhs)
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld loads", (long long)pb->num_free);
  for (int l = 0; l < v.L && st == FEA_SUCCESS; l++) {
    fea_mg_given_level *g = &v.g[l];
    const fea_space *s0 = v.pb[l]->mp->patches[0];
    for (int k = 0; k < 3; k++) g->cells[k] = k < s0->dim ? s0->elements[k] : 1;
    st = assemble(v.pb[l], l == 0 ? v.rhs : NULL, &g->A);
    if (st == FEA_SUCCESS && l + 1 < v.L) st = prolongation(v.pb[l], v.pb[l + 1], &g->P);
    if (st == FEA_SUCCESS && l + 1 < v.L && desc->smoother == FEA_MG_SMOOTHER_SCHWARZ) {
      st = schwarz_blocks(v.pb[l], &g->nblocks, &v.bptr[l], &v.bdofs[l]);
      g->block_ptr = v.bptr[l];
      g->block_dofs = v.bdofs[l];
    }
  }
  if (st == FEA_SUCCESS) st = fea_mg_create_given(ctx, desc, v.L, v.g, v.rhs, out);
  levels_free(&v);
  return st;
}

/* ---- the solver ------------------------------------------------------------------------------ */

/* What a later setup rebuilds from. */
typedef struct mpmg_source {
  fea_multipatch_problem *pb; /* holds a reference */
  fea_multigrid_desc desc;
} mpmg_source;

static fea_status rebuild(void *user, fea_mg **out) {
  mpmg_source *src = user;
  return fea_multipatch_mg_build(src->pb, &src->desc, out);
}

static void release(void *user) {
  mpmg_source *src = user;
  if (!src) return;
  FEA_OBJECT_DROP(src->pb);
  free(src);
}

fea_status fea_multipatch_mg_solver_create(fea_context *ctx, fea_multipatch_problem *pb,
                                           const fea_multigrid_desc *d, struct fea_solver **out) {
  fea_mg *mg = NULL;
  FEA_CALL(fea_multipatch_mg_build(pb, d, &mg));
  mpmg_source *src = calloc(1, sizeof *src);
  fea_solver *s = NULL;
  fea_status st = src ? fea_solver_alloc_bare(ctx, pb->num_free, FEA_SOLVER_MULTIGRID,
                                              &fea_mg_solver_ops, &s)
                      : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a solver");
  if (st == FEA_SUCCESS) {
    src->pb = pb;
    fea_object_retain(pb);
    src->desc = *d;
    st = fea_mg_solver_attach_given(s, d, mg, rebuild, release, src);
  }
  if (st != FEA_SUCCESS) {
    release(src);
    fea_mg_destroy(&mg);
    fea_solver_free(s);
    return st;
  }
  *out = s;
  return FEA_SUCCESS;
}
