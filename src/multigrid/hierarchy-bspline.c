/* Multigrid hierarchy of a single-patch B-spline or NURBS space (issue #40):
 * the coarse spaces and the prolongations between them.
 *
 * Level l + 1 keeps every other breakpoint of level l's knot vectors
 * (the breakpoints 0, 2, 4, ... of each direction, each with its
 * multiplicity), so level l is the uniform h-refinement of level l + 1 and
 * the spaces are nested: every coarse function is a combination of fine ones.
 * The degrees, the parameter box and the geometry map stay; a NURBS basis
 * N_i / W divides by the same weight function W on every level, so its
 * coefficients transfer as the polynomial B-splines' do. A direction can
 * halve while its element count is even, the coarse count keeps
 * coarsest_cells, and the geometry's own breakpoints are among those kept
 * (the coarse space must still refine the map; otherwise it is not a space on
 * the same domain).
 *
 * Prolongation is knot insertion: per direction the n_fine x n_coarse matrix
 * T_k of fea_knots_transfer_matrix (exact, by collocation at the fine
 * Greville points), and P the Kronecker product T_2 (x) T_1 (x) T_0 restricted
 * to free rows and free columns (coarse Dirichlet DoFs carry no correction,
 * fine Dirichlet DoFs have no row). Row i of T_k has at most p + 2 nonzeros,
 * so P has at most (p + 2)^d per row. */
#include <stdlib.h>
#include <string.h>

#include "disc/geometry-map.h"
#include "internal/error.h"
#include "multigrid-impl.h"

int fea_mg_is_bspline(const fea_problem *pb) { return pb->space->kind == FEA_SPACE_BSPLINE; }

fea_status fea_mg_bspline_check(fea_context *ctx, const fea_problem *pb) {
  const fea_space *s = pb->space;
  FEA_CHECK(s->dim == 2 || s->dim == 3, ctx, FEA_ERR_UNSUPPORTED,
            "B-spline multigrid supports 2D and 3D patches; the problem's space is %dD", s->dim);
  FEA_CHECK(pb->elastic == NULL, ctx, FEA_ERR_UNSUPPORTED,
            "multigrid solves Poisson problems; the problem is an elasticity problem");
  FEA_CHECK(pb->num_free > 0, ctx, FEA_ERR_INVALID_ARG,
            "the problem has no free DoFs (every DoF of its %lld elements is on the Dirichlet "
            "boundary): nothing to solve",
            (long long)s->num_elements);
  return FEA_SUCCESS;
}

/* The distinct breakpoints of kn: b[0..nelem] (nelem + 1 values). */
static void breakpoints(const fea_knots *kn, double *b) {
  for (fea_index e = 0; e < kn->nelem; e++) b[e] = kn->t[kn->span[e]];
  b[kn->nelem] = kn->t[kn->span[kn->nelem - 1] + 1];
}

/* Whether direction k of s can halve once more: an even element count, at
 * least `coarsest` elements after, and every geometry breakpoint kept. */
static int can_halve(const fea_space *s, int k, fea_index coarsest) {
  const fea_bspline_space *b = s->impl;
  const fea_knots *kn = &b->knots[k];
  const fea_index E = kn->nelem;
  if (E % 2 != 0 || E / 2 < coarsest) return 0;
  if (!b->geo) return 1;
  const fea_knots *g = &b->geo->knots[k];
  double *bp = malloc(((size_t)E + 1) * sizeof *bp);
  if (!bp) return 0;
  breakpoints(kn, bp);
  int ok = 1;
  /* Each interior geometry knot must be an even breakpoint of the fine level. */
  for (fea_index i = g->p + 1; i + g->p + 1 < g->m && ok; i++) {
    const double x = g->t[i];
    const double tol = 1e-12 * (bp[E] - bp[0]);
    fea_index j = 0;
    while (j <= E && bp[j] < x - tol) j++;
    ok = j <= E && bp[j] <= x + tol && j % 2 == 0;
  }
  free(bp);
  return ok;
}

int fea_mg_bspline_can_halve(const fea_space *s, fea_index coarsest) {
  for (int k = 0; k < s->dim; k++)
    if (!can_halve(s, k, coarsest)) return 0;
  return 1;
}

/* The knot vector of kn with every other breakpoint dropped. */
static fea_status halve_knots(const fea_context *ctx, const fea_knots *kn, fea_knots *out) {
  double *t = malloc((size_t)kn->m * sizeof *t);
  FEA_CHECK(t, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld knots", (long long)kn->m);
  fea_index m = 0;
  /* Knots are kept by the breakpoint they equal: the first p + 1 (the
   * start), then runs of equal knots at even breakpoint index. */
  fea_index bp = 0; /* breakpoint index of the run starting at i */
  for (fea_index i = 0; i < kn->m;) {
    fea_index j = i;
    while (j < kn->m && kn->t[j] == kn->t[i]) j++;
    const int last = j == kn->m;
    if (bp % 2 == 0 || last)
      for (fea_index r = i; r < j; r++) t[m++] = kn->t[r];
    bp++;
    i = j;
  }
  fea_status st = fea_knots_create(ctx, kn->p, m, t, out);
  free(t);
  return st;
}

fea_status fea_mg_bspline_coarse_space(const fea_space *fine, fea_space **out) {
  const fea_bspline_space *b = fine->impl;
  fea_knots kn[3];
  memset(kn, 0, sizeof kn);
  fea_status st = FEA_SUCCESS;
  for (int k = 0; k < fine->dim && st == FEA_SUCCESS; k++)
    st = halve_knots(fine->ctx, &b->knots[k], &kn[k]);
  if (st == FEA_SUCCESS)
    st = fea_space_bspline_build(fine->ctx, fine->dim, kn, b->lower, b->upper, b->geo, out);
  for (int k = 0; k < 3; k++) fea_knots_free(&kn[k]);
  return st;
}

/* Row i of the 1D transfer: its nonzeros' first column and values. */
typedef struct transfer_1d {
  fea_index nf, nc;
  double *T; /* nf x nc, column-major */
  fea_index *first, *count;
} transfer_1d;

static void transfer_free(transfer_1d *t) {
  free(t->T);
  free(t->first);
  free(t->count);
}

static fea_status transfer_build(const fea_context *ctx, const fea_knots *coarse,
                                 const fea_knots *fine, transfer_1d *t) {
  memset(t, 0, sizeof *t);
  t->nf = fea_knots_num_functions(fine);
  t->nc = fea_knots_num_functions(coarse);
  t->T = malloc((size_t)t->nf * (size_t)t->nc * sizeof *t->T);
  t->first = malloc((size_t)t->nf * sizeof *t->first);
  t->count = malloc((size_t)t->nf * sizeof *t->count);
  FEA_CHECK(t->T && t->first && t->count, ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for a %lld x %lld knot-insertion matrix", (long long)t->nf,
            (long long)t->nc);
  FEA_CALL(fea_knots_transfer_matrix(ctx, coarse, fine, t->T));
  for (fea_index i = 0; i < t->nf; i++) {
    fea_index lo = -1, hi = -1;
    for (fea_index j = 0; j < t->nc; j++)
      if (t->T[i + j * t->nf] != 0.0) {
        if (lo < 0) lo = j;
        hi = j;
      }
    t->first[i] = lo < 0 ? 0 : lo;
    t->count[i] = lo < 0 ? 0 : hi - lo + 1;
  }
  return FEA_SUCCESS;
}

/* The entries of fine DoF (i0, i1, i2)'s row, in increasing column order
 * (direction 2 outermost, as the lexicographic numbering). */
static fea_index row_entries(const transfer_1d t[3], int dim, const fea_index idx[3],
                             const fea_index *cfree, fea_index *col, double *val) {
  fea_index c = 0;
  const fea_index nc0 = t[0].nc, nc1 = dim > 1 ? t[1].nc : 1;
  const fea_index f2 = dim > 2 ? t[2].first[idx[2]] : 0, n2 = dim > 2 ? t[2].count[idx[2]] : 1;
  for (fea_index a2 = f2; a2 < f2 + n2; a2++) {
    const double w2 = dim > 2 ? t[2].T[idx[2] + a2 * t[2].nf] : 1.0;
    for (fea_index a1 = t[1].first[idx[1]]; a1 < t[1].first[idx[1]] + t[1].count[idx[1]]; a1++) {
      const double w1 = w2 * t[1].T[idx[1] + a1 * t[1].nf];
      for (fea_index a0 = t[0].first[idx[0]]; a0 < t[0].first[idx[0]] + t[0].count[idx[0]]; a0++) {
        const double w = w1 * t[0].T[idx[0] + a0 * t[0].nf];
        const fea_index r = cfree[a0 + nc0 * (a1 + nc1 * a2)];
        if (w == 0.0 || r < 0) continue;
        if (col) col[c] = r, val[c] = w;
        c++;
      }
    }
  }
  return c;
}

fea_status fea_mg_bspline_prolongation(fea_context *ctx, const fea_problem *fine,
                                       const fea_problem *coarse, fea_matrix **P) {
  const fea_bspline_space *bf = fine->space->impl, *bc = coarse->space->impl;
  const int dim = fine->space->dim;
  transfer_1d t[3];
  memset(t, 0, sizeof t);
  fea_status st = FEA_SUCCESS;
  for (int k = 0; k < dim && st == FEA_SUCCESS; k++)
    st = transfer_build(ctx, &bc->knots[k], &bf->knots[k], &t[k]);
  fea_matrix *p = NULL;
  fea_index nnz = 0, idx[3] = {0, 0, 0};
  const fea_index n0 = t[0].nf, n1 = t[1].nf;
  for (fea_index i = 0; i < fine->space->num_dofs && st == FEA_SUCCESS; i++) {
    if (fine->free_index[i] < 0) continue;
    idx[0] = i % n0, idx[1] = (i / n0) % n1, idx[2] = dim > 2 ? i / (n0 * n1) : 0;
    nnz += row_entries(t, dim, idx, coarse->free_index, NULL, NULL);
  }
  if (st == FEA_SUCCESS) st = fea_matrix_alloc(ctx, fine->num_free, coarse->num_free, nnz, &p);
  fea_index at = 0;
  for (fea_index i = 0; i < fine->space->num_dofs && st == FEA_SUCCESS; i++) {
    const fea_index r = fine->free_index[i];
    if (r < 0) continue;
    idx[0] = i % n0, idx[1] = (i / n0) % n1, idx[2] = dim > 2 ? i / (n0 * n1) : 0;
    at += row_entries(t, dim, idx, coarse->free_index, p->col_idx + at, p->values + at);
    p->row_ptr[r + 1] = at; /* free DoFs are numbered in DoF order */
  }
  for (int k = 0; k < 3; k++) transfer_free(&t[k]);
  if (st != FEA_SUCCESS) {
    FEA_OBJECT_DROP(p);
    return st;
  }
  *P = p;
  return FEA_SUCCESS;
}
