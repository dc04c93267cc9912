/* The Poisson and linear elasticity problems on a multipatch domain: one
 * problem per patch (the same equation, an elasticity material per patch
 * allowed; interface sides natural, so that the patches' forms add up to
 * the coupled system; boundary sides as the caller set them), Dirichlet
 * DoFs made consistent across patches, and the global free numbering. On
 * vector-valued patches every loop runs over vector DoFs (c + ncomp i), and
 * a component fixed by one patch (a roller's end on an interface) is fixed
 * in every patch holding it.
 *
 * A DoF is fixed when any patch holding it has it on a Dirichlet side: a
 * corner or edge of an interface can lie on one patch's Dirichlet side and
 * on a neighbour's natural one, and the neighbour must lift it too. The
 * values agree between patches, as a conforming side's interpolant of g is
 * the same from both (tensor interpolation at Greville points restricts to
 * the side's own). Everything global is a sum of per-patch pieces: the
 * reference system, the error norms, the loads of the direct solver. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "linalg/matrix.h"
#include "multipatch.h"

static void multipatch_problem_free(void *object) {
  fea_multipatch_problem *pb = object;
  for (int p = 0; pb->patch_pb && p < pb->mp->num_patches; p++)
    if (pb->patch_pb[p]) fea_object_release(pb->patch_pb[p]);
  free(pb->patch_pb);
  free(pb->free_index);
  free(pb->dirichlet);
  fea_object_release(pb->mp);
  free(pb);
}

/* Patch p's descriptor: desc with interface sides natural (h = 0) and the
 * boundary sides from bcs (Dirichlet where bcs says nothing). */
static void patch_desc(const fea_multipatch *mp, int p, const fea_problem_desc *desc, int num_bcs,
                       const fea_multipatch_bc *bcs, fea_problem_desc *d) {
  *d = *desc;
  for (int s = 0; s < 2 * mp->dim; s++) {
    const fea_boundary_condition natural = {FEA_BC_NEUMANN, 0.0, NULL, NULL};
    const fea_boundary_condition dirichlet = {FEA_BC_DIRICHLET, 0.0, NULL, NULL};
    d->sides[s] = fea_multipatch_side_is_interface(mp, p, s) ? natural : dirichlet;
    for (int i = 0; i < num_bcs; i++)
      if (bcs[i].patch == p && (int)bcs[i].side == s) d->sides[s] = bcs[i].bc;
  }
}

/* Fix, in every patch, the DoFs some patch fixes; number the free ones. */
static fea_status make_consistent(fea_multipatch_problem *pb) {
  const fea_multipatch *mp = pb->mp;
  const fea_index N = mp->num_dofs;
  fea_index max_nd = 1;
  for (int p = 0; p < mp->num_patches; p++)
    if (fea_space_total_dofs(mp->patches[p]) > max_nd)
      max_nd = fea_space_total_dofs(mp->patches[p]);
  unsigned char *fixed = calloc((size_t)(N ? N : 1), 1), *local = malloc((size_t)max_nd);
  double *values = malloc((size_t)max_nd * sizeof *values);
  pb->free_index = malloc((size_t)(N ? N : 1) * sizeof *pb->free_index);
  pb->dirichlet = calloc((size_t)(N ? N : 1), sizeof *pb->dirichlet);
  fea_status st = FEA_SUCCESS;
  if (!fixed || !local || !values || !pb->free_index || !pb->dirichlet) {
    st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the maps of %lld DoFs",
                   (long long)N);
    goto out;
  }
  for (int p = 0; p < mp->num_patches; p++) {
    const fea_problem *q = pb->patch_pb[p];
    const fea_index *g = mp->global + mp->patch_off[p];
    for (fea_index d = 0; d < fea_space_total_dofs(mp->patches[p]); d++)
      if (q->free_index[d] < 0) {
        fixed[g[d]] = 1;
        pb->dirichlet[g[d]] = q->dirichlet[d];
      }
  }
  for (int p = 0; p < mp->num_patches; p++) {
    fea_problem *q = pb->patch_pb[p];
    const fea_index *g = mp->global + mp->patch_off[p];
    int any = 0;
    for (fea_index d = 0; d < fea_space_total_dofs(mp->patches[p]); d++) {
      local[d] = fixed[g[d]] && q->free_index[d] >= 0;
      values[d] = pb->dirichlet[g[d]];
      any |= local[d];
    }
    if (any) fea_problem_fix_dofs(q, local, values);
  }
  pb->num_free = 0;
  for (fea_index G = 0; G < N; G++) pb->free_index[G] = fixed[G] ? -1 : pb->num_free++;
out:
  free(fixed);
  free(local);
  free(values);
  return st;
}

/* The problem object of mp, without its patch problems yet. */
static fea_status problem_alloc(fea_multipatch *mp, fea_multipatch_problem **out) {
  fea_multipatch_problem *pb;
  FEA_CALL(fea_object_alloc(mp->ctx, sizeof *pb, "multipatch problem", multipatch_problem_free,
                            (void **)&pb));
  pb->mp = mp;
  fea_object_retain(mp);
  pb->patch_pb = calloc((size_t)mp->num_patches, sizeof *pb->patch_pb);
  if (!pb->patch_pb) {
    fea_object_release(pb);
    return FEA_ERROR(mp->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d patch problems",
                     mp->num_patches);
  }
  *out = pb;
  return FEA_SUCCESS;
}

/* The patch problems built (st), the Dirichlet DoFs made consistent. */
static fea_status problem_finish(fea_multipatch_problem *pb, fea_status st,
                                 fea_multipatch_problem **out) {
  if (st == FEA_SUCCESS) st = make_consistent(pb);
  if (st == FEA_SUCCESS && pb->elastic) st = fea_multipatch_check_rigid_modes(pb);
  if (st != FEA_SUCCESS) {
    fea_object_release(pb);
    return st;
  }
  *out = pb;
  return FEA_SUCCESS;
}

fea_status fea_multipatch_problem_build(fea_multipatch *mp, const fea_problem_desc *desc,
                                        int num_bcs, const fea_multipatch_bc *bcs,
                                        fea_multipatch_problem **out) {
  fea_multipatch_problem *pb;
  FEA_CALL(problem_alloc(mp, &pb));
  fea_status st = FEA_SUCCESS;
  for (int p = 0; p < mp->num_patches && st == FEA_SUCCESS; p++) {
    fea_problem_desc d;
    patch_desc(mp, p, desc, num_bcs, bcs, &d);
    st = fea_problem_build(mp->patches[p], &d, &pb->patch_pb[p]);
  }
  return problem_finish(pb, st, out);
}

/* The scalar condition that stands for an elasticity side in the patch
 * problem's Poisson descriptor, as fea_problem_create_elasticity() marks
 * them: Robin for a spring (a face term in the matrix; alpha a placeholder
 * the elastic forms ignore), Neumann for a load (a traction given, or a
 * pressure), else Dirichlet (no face terms). */
static fea_bc_type shadow(const fea_elastic_condition *bc) {
  if (bc->type == FEA_ELASTIC_SPRING) return FEA_BC_ROBIN;
  return bc->type == FEA_ELASTIC_PRESSURE ||
                 (bc->type == FEA_ELASTIC_TRACTION && bc->traction != NULL)
             ? FEA_BC_NEUMANN
             : FEA_BC_DIRICHLET;
}

fea_status fea_multipatch_problem_build_elastic(fea_multipatch *mp, const fea_elasticity_desc *desc,
                                                const fea_elasticity_desc *materials, int num_bcs,
                                                const fea_multipatch_elastic_bc *bcs,
                                                fea_multipatch_problem **out) {
  fea_multipatch_problem *pb;
  FEA_CALL(problem_alloc(mp, &pb));
  pb->elastic = 1;
  fea_status st = FEA_SUCCESS;
  for (int p = 0; p < mp->num_patches && st == FEA_SUCCESS; p++) {
    /* desc with the patch's material; interface sides traction-free (the
     * patches' forms add up to the coupled system), boundary sides from
     * bcs, clamped where bcs says nothing. */
    fea_elasticity_desc e = *desc;
    if (materials) {
      const fea_elasticity_desc *m = &materials[p];
      e.E = m->E, e.nu = m->nu, e.E_fn = m->E_fn, e.nu_fn = m->nu_fn;
      e.material_user = m->material_user, e.lambda = m->lambda, e.mu = m->mu;
    }
    fea_problem_desc d = FEA_PROBLEM_DESC_INIT;
    d.quad_points = e.quad_points;
    for (int s = 0; s < 2 * mp->dim; s++) {
      const fea_elastic_condition natural = {FEA_ELASTIC_TRACTION, 0u, NULL, NULL, 0.0, NULL, NULL};
      const fea_elastic_condition clamped = {
          FEA_ELASTIC_DISPLACEMENT, 0u, NULL, NULL, 0.0, NULL, NULL};
      e.sides[s] = fea_multipatch_side_is_interface(mp, p, s) ? natural : clamped;
      for (int i = 0; i < num_bcs; i++)
        if (bcs[i].patch == p && (int)bcs[i].side == s) e.sides[s] = bcs[i].bc;
      d.sides[s].type = shadow(&e.sides[s]);
      d.sides[s].alpha = d.sides[s].type == FEA_BC_ROBIN ? 1.0 : 0.0;
    }
    st = fea_problem_build_elastic(mp->patches[p], &d, &e, &pb->patch_pb[p]);
  }
  return problem_finish(pb, st, out);
}

void fea_multipatch_problem_expand(const fea_multipatch_problem *pb, const double *u_free,
                                   double *u_full) {
  for (fea_index G = 0; G < pb->mp->num_dofs; G++)
    u_full[G] = pb->free_index[G] >= 0 ? u_free[pb->free_index[G]] : pb->dirichlet[G];
}

/* Per patch: its full coefficients gathered from u_full into u. */
static void patch_coefficients(const fea_multipatch *mp, int p, const double *u_full, double *u) {
  const fea_index nd = fea_space_total_dofs(mp->patches[p]), *g = mp->global + mp->patch_off[p];
  for (fea_index d = 0; d < nd; d++) u[d] = u_full[g[d]];
}

fea_status fea_multipatch_problem_norms(const fea_multipatch_problem *pb, const double *u_full,
                                        fea_scalar_fn exact, fea_gradient_fn exact_grad, void *user,
                                        double *l2, double *h1_semi) {
  const fea_multipatch *mp = pb->mp;
  double sl2 = 0, sh1 = 0;
  fea_status st = FEA_SUCCESS;
  for (int p = 0; p < mp->num_patches && st == FEA_SUCCESS; p++) {
    const fea_index nd = fea_space_total_dofs(mp->patches[p]);
    double *u = malloc((size_t)(nd ? nd : 1) * sizeof *u), el2 = 0, eh1 = 0;
    if (!u)
      return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld coefficients",
                       (long long)nd);
    patch_coefficients(mp, p, u_full, u);
    st = fea_problem_norms(pb->patch_pb[p], u, exact, exact_grad, user, &el2,
                           h1_semi ? &eh1 : NULL);
    sl2 += el2 * el2;
    sh1 += eh1 * eh1;
    free(u);
  }
  if (st != FEA_SUCCESS) return st;
  *l2 = sqrt(sl2);
  if (h1_semi) *h1_semi = sqrt(sh1);
  return FEA_SUCCESS;
}

fea_status fea_multipatch_problem_norms_vector(const fea_multipatch_problem *pb,
                                               const double *u_full, fea_vector_fn exact,
                                               fea_vector_fn exact_grad, void *user, double *l2,
                                               double *h1_semi) {
  const fea_multipatch *mp = pb->mp;
  const int nc = mp->ncomp;
  double sl2[FEA_MAX_COMPONENTS + 1] = {0}, sh1[FEA_MAX_COMPONENTS + 1] = {0};
  fea_status st = FEA_SUCCESS;
  for (int p = 0; p < mp->num_patches && st == FEA_SUCCESS; p++) {
    const fea_index nd = fea_space_total_dofs(mp->patches[p]);
    double *u = malloc((size_t)(nd ? nd : 1) * sizeof *u);
    double el2[FEA_MAX_COMPONENTS + 1] = {0}, eh1[FEA_MAX_COMPONENTS + 1] = {0};
    if (!u)
      return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld coefficients",
                       (long long)nd);
    patch_coefficients(mp, p, u_full, u);
    st = fea_problem_norms_vector(pb->patch_pb[p], u, exact, exact_grad, user, el2,
                                  h1_semi ? eh1 : NULL);
    /* The last entry is the root of the components' sum: the sum of squares
     * of the per-component entries is its square too. */
    for (int c = 0; c <= nc; c++) sl2[c] += el2[c] * el2[c], sh1[c] += eh1[c] * eh1[c];
    free(u);
  }
  if (st != FEA_SUCCESS) return st;
  for (int c = 0; c <= nc; c++) {
    l2[c] = sqrt(sl2[c]);
    if (h1_semi) h1_semi[c] = sqrt(sh1[c]);
  }
  return FEA_SUCCESS;
}

/* One patch's reduced system added into the global triplets. */
typedef struct triplets {
  fea_index n, cap;
  fea_index *row, *col;
  double *val;
} triplets;

static fea_status add_patch(const fea_multipatch_problem *pb, int p, triplets *t, double *b) {
  const fea_multipatch *mp = pb->mp;
  const fea_problem *q = pb->patch_pb[p];
  const fea_index nd = fea_space_total_dofs(mp->patches[p]), *g = mp->global + mp->patch_off[p];
  fea_matrix *A = NULL;
  double *bp = malloc((size_t)(q->num_free + 1) * sizeof *bp);
  fea_index *to = malloc((size_t)(q->num_free + 1) * sizeof *to);
  fea_status st = bp && to ? fea_problem_reference_system(q, bp, &A)
                           : FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                                       "no memory for patch %d's system", p);
  if (st == FEA_SUCCESS) {
    /* The patch's free DoFs are exactly its DoFs free globally. */
    for (fea_index d = 0; d < nd; d++)
      if (q->free_index[d] >= 0) to[q->free_index[d]] = pb->free_index[g[d]];
    for (fea_index r = 0; b && r < q->num_free; r++) b[to[r]] += bp[r];
    if (t->n + A->nnz > t->cap) {
      const fea_index cap = 2 * (t->n + A->nnz);
      fea_index *row = realloc(t->row, (size_t)cap * sizeof *row);
      if (row) t->row = row;
      fea_index *col = realloc(t->col, (size_t)cap * sizeof *col);
      if (col) t->col = col;
      double *val = realloc(t->val, (size_t)cap * sizeof *val);
      if (val) t->val = val;
      if (row && col && val)
        t->cap = cap;
      else
        st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld matrix entries",
                       (long long)cap);
    }
    for (fea_index r = 0; st == FEA_SUCCESS && r < A->rows; r++)
      for (fea_index k = A->row_ptr[r]; k < A->row_ptr[r + 1]; k++, t->n++) {
        t->row[t->n] = to[r];
        t->col[t->n] = to[A->col_idx[k]];
        t->val[t->n] = A->values[k];
      }
  }
  FEA_OBJECT_DROP(A);
  free(bp);
  free(to);
  return st;
}

static int by_column(const void *a, const void *b) {
  const fea_index x = *(const fea_index *)a, y = *(const fea_index *)b;
  return (x > y) - (x < y);
}

/* The triplets (duplicates summed) as a CSR matrix of n rows. */
static fea_status to_csr(fea_context *ctx, fea_index n, const triplets *t, fea_matrix **out) {
  fea_index *count = calloc((size_t)n + 1, sizeof *count);
  fea_index *order = malloc((size_t)(t->n ? t->n : 1) * 2 * sizeof *order);
  FEA_CHECK(count && order, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to sort %lld entries",
            (long long)t->n);
  for (fea_index k = 0; k < t->n; k++) count[t->row[k] + 1]++;
  for (fea_index r = 0; r < n; r++) count[r + 1] += count[r];
  /* (column, triplet) pairs per row, sorted by column. */
  fea_index *fill = malloc((size_t)(n + 1) * sizeof *fill);
  if (!fill) {
    free(count);
    free(order);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory to sort %lld entries", (long long)t->n);
  }
  memcpy(fill, count, (size_t)(n + 1) * sizeof *fill);
  for (fea_index k = 0; k < t->n; k++) {
    const fea_index at = fill[t->row[k]]++;
    order[2 * at] = t->col[k];
    order[2 * at + 1] = k;
  }
  fea_index nnz = 0;
  for (fea_index r = 0; r < n; r++) {
    qsort(order + 2 * count[r], (size_t)(count[r + 1] - count[r]), 2 * sizeof *order, by_column);
    for (fea_index k = count[r]; k < count[r + 1]; k++)
      if (k == count[r] || order[2 * k] != order[2 * (k - 1)]) nnz++;
  }
  fea_matrix *A = NULL;
  fea_status st = fea_matrix_alloc(ctx, n, n, nnz, &A);
  if (st == FEA_SUCCESS) {
    fea_index e = -1;
    A->row_ptr[0] = 0;
    for (fea_index r = 0; r < n; r++) {
      for (fea_index k = count[r]; k < count[r + 1]; k++) {
        if (k == count[r] || order[2 * k] != order[2 * (k - 1)]) {
          e++;
          A->col_idx[e] = order[2 * k];
          A->values[e] = 0;
        }
        A->values[e] += t->val[order[2 * k + 1]];
      }
      A->row_ptr[r + 1] = e + 1;
    }
    *out = A;
  }
  free(count);
  free(order);
  free(fill);
  return st;
}

fea_status fea_multipatch_problem_reference(const fea_multipatch_problem *pb, double *b,
                                            fea_matrix **A) {
  triplets t = {0};
  if (b) memset(b, 0, (size_t)pb->num_free * sizeof *b);
  fea_status st = FEA_SUCCESS;
  for (int p = 0; p < pb->mp->num_patches && st == FEA_SUCCESS; p++) st = add_patch(pb, p, &t, b);
  if (st == FEA_SUCCESS && A) st = to_csr(pb->ctx, pb->num_free, &t, A);
  free(t.row);
  free(t.col);
  free(t.val);
  return st;
}
