/* Sum factorization: which problems it serves, and the 1D tables and
 * geometry factors it precomputes.
 *
 * Served: tensor-product elements whose geometry is an axis-aligned box map,
 * so that J is diagonal and the stiffness integrand splits into d terms
 * c_k (d_k phi_i)(d_k phi_j) with c_k = sigma |det J| / J_kk^2.
 * - B-spline spaces: J_kk is the span length times the box scale; it and the
 *   1D basis differ per span (non-uniform knots, boundary spans), so both are
 *   tabulated per element index of each direction. Still cheap: sum over k of
 *   nel_k x nq_k x (p_k + 1) x 2 numbers.
 * - Lagrange Q_p on structured box meshes: one 1D table per direction and one
 *   J for all elements (the mesh is uniform).
 * Refused: simplices (no tensor structure), and what needs the quadrature
 * points: general or mapped quad/hex meshes and mapped B-spline patches (J
 * varies inside the element), sigma(x), A(x), a reaction term and Robin
 * faces. The kernel at quadrature points (qp.h) serves those; the reasons
 * below are what an operator reports when neither serves a problem. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "disc/lagrange.h"
#include "disc/mesh.h"
#include "sumfact.h"

#define REFUSE(...) (snprintf(why, len, __VA_ARGS__), 0)

/* Points per direction of the problem's rule, checked against the tensor
 * Gauss rule they must be (the kernel rebuilds the 1D rules). */
int fea_sf_rule_sizes(const fea_problem *pb, int nq[3], char *why, size_t len) {
  const fea_space *s = pb->space;
  const fea_quadrature *q = &pb->quad;
  int dim = s->dim, total = 1;
  for (int k = 0; k < 3; k++) nq[k] = 1;
  for (int k = 0; k < dim; k++) {
    int n = pb->desc.quad_points > 0 ? pb->desc.quad_points : s->degree[k] + 1;
    nq[k] = n > FEA_QUAD_MAX_1D ? FEA_QUAD_MAX_1D : n;
    total *= nq[k];
  }
  if (q->dim != dim || q->npts != total)
    return REFUSE(
        "the problem's quadrature rule (%d points in %dD) is not the tensor rule of "
        "%d x %d x %d points",
        q->npts, q->dim, nq[0], nq[1], nq[2]);
  double g[3][FEA_QUAD_MAX_1D], gw[FEA_QUAD_MAX_1D];
  for (int k = 0; k < dim; k++)
    if (fea_gauss_legendre(nq[k], g[k], gw) != FEA_SUCCESS)
      return REFUSE("no %d-point Gauss rule", nq[k]);
  for (int i = 0; i < total; i++) {
    int r = i;
    for (int k = 0; k < dim; k++) {
      if (q->points[i * dim + k] != g[k][r % nq[k]])
        return REFUSE("the problem's quadrature point %d is not on the tensor Gauss grid", i);
      r /= nq[k];
    }
  }
  return 1;
}

/* J of a structured mesh's first cell (the same for all: the grid is uniform). */
static void structured_jacobian(const fea_mesh *m, double J[9]) {
  double verts[FEA_CELL_MAX_VERTICES * 3], xi[3] = {0.5, 0.5, 0.5}, x[3];
  int nv = m->nodes_per_cell, d = m->dim;
  for (int j = 0; j < nv; j++)
    for (int k = 0; k < d; k++) verts[j * d + k] = m->coords[m->cells[j] * d + k];
  fea_cell_map(m->type, d, verts, xi, x, J);
}

int fea_sf_supports(const fea_problem *pb, char *why, size_t len) {
  if (pb->space->ncomp > 1)
    return REFUSE(
        "the space has %d components; the scalar sum-factorization kernel serves one (linear "
        "elasticity has its own)",
        pb->space->ncomp);
  if (pb->desc.sigma_fn)
    return REFUSE(
        "sigma is a function of x; the sum-factorization kernel serves a constant sigma "
        "only");
  if (pb->desc.element_form)
    return REFUSE(
        "the problem has the user's element form; the sum-factorization kernel "
        "serves the built-in Laplacian only");
  if (pb->desc.sigma_tensor)
    return REFUSE(
        "the coefficient is a tensor field A(x); the sum-factorization kernel serves a "
        "constant scalar sigma only");
  if (fea_problem_has_reaction(pb))
    return REFUSE(
        "the problem has a reaction term c u; the sum-factorization kernel serves "
        "-div(sigma grad u) only");
  if (fea_problem_has_robin(pb))
    return REFUSE(
        "the problem has Robin sides; the sum-factorization kernel has no face "
        "terms");
  return fea_sf_box_supports(pb, why, len);
}

int fea_sf_box_supports(const fea_problem *pb, char *why, size_t len) {
  const fea_space *s = pb->space;
  int nq[3];
  if (s->dim < 1 || s->dim > 3) return REFUSE("dimension %d is outside 1..3", s->dim);
  if (s->kind == FEA_SPACE_LAGRANGE) {
    const fea_mesh *m = s->mesh;
    if (s->cell == FEA_CELL_TRIANGLE || s->cell == FEA_CELL_TETRAHEDRON)
      return REFUSE(
          "the space's elements are %ss: P_p on simplices has no tensor-product "
          "basis to factor",
          fea_cell_name(s->cell));
    if (!m->structured || m->simplices || m->dim != s->dim)
      return REFUSE(
          "the mesh is not a structured box mesh: sum factorization here needs one "
          "diagonal Jacobian for all cells");
    if (m->mapped)
      return REFUSE(
          "the structured mesh has a point map: its cells have different shapes, and sum "
          "factorization here needs one diagonal Jacobian for all cells");
    double J[9];
    structured_jacobian(m, J);
    /* Off-diagonal entries are zero up to the rounding of cell 0's vertex
     * coordinates (seen: 5.6e-17 on a 1 x 2 x 1 box whose sides are not
     * powers of two); the tables use the diagonal alone. */
    double jmax = 0.0;
    for (int k = 0; k < s->dim; k++) jmax = fmax(jmax, fabs(J[k * s->dim + k]));
    for (int i = 0; i < s->dim; i++)
      for (int k = 0; k < s->dim; k++)
        if ((i == k && !(J[i * s->dim + k] > 0)) ||
            (i != k && !(fabs(J[i * s->dim + k]) <= 1e-13 * jmax)))
          return REFUSE(
              "the structured mesh's cells are not axis-aligned boxes in reference "
              "orientation (J[%d][%d] = %g)",
              i, k, J[i * s->dim + k]);
  } else if (s->kind != FEA_SPACE_BSPLINE) {
    return REFUSE("unknown kind of space %d", (int)s->kind);
  } else if (((const fea_bspline_space *)s->impl)->geo) {
    return REFUSE(
        "the B-spline space is mapped by a geometry: sum factorization here needs one "
        "diagonal Jacobian per span");
  }
  return fea_sf_rule_sizes(pb, nq, why, len);
}

void fea_sf_element_index(const fea_sf_state *s, fea_index e, fea_index idx[3]) {
  idx[0] = idx[1] = idx[2] = 0;
  if (!s->per_span) return;
  for (int k = 0; k < s->dim; k++) {
    idx[k] = e % s->nel[k];
    e /= s->nel[k];
  }
}

void fea_sf_geometry_factors(const fea_sf_state *s, const fea_index idx[3], double c[3]) {
  double det = 1.0;
  for (int k = 0; k < s->dim; k++) det *= s->len[k][idx[k]];
  for (int k = 0; k < 3; k++) {
    double L = k < s->dim ? s->len[k][idx[k]] : 1.0;
    c[k] = k < s->dim ? s->sigma * det / (L * L) : 0.0;
  }
}

/* The 1D mass and stiffness matrices of n functions from their values B and
 * derivatives D at nq points (nq x n each) and the rule's weights:
 * M[i][j] = sum_q w_q B_qi B_qj, S[i][j] = sum_q w_q D_qi D_qj. */
static void fold_1d(int n, int nq, const double *w, const double *B, const double *D, double *M,
                    double *S) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double m = 0.0, d = 0.0;
      for (int q = 0; q < nq; q++) {
        m += w[q] * B[q * n + i] * B[q * n + j];
        d += w[q] * D[q * n + i] * D[q * n + j];
      }
      M[i * n + j] = m;
      S[i * n + j] = d;
    }
}

/* Direction k of a Lagrange space: the 1D Lagrange basis on the element's
 * node set at the Gauss points folded into M and S, and the cell size. */
static void lagrange_tables(const fea_space *sp, int k, const double *gq, fea_sf_state *s) {
  const fea_lagrange_element *el = fea_space_lagrange_element(sp);
  int n = s->n[k], nq = s->nq[k];
  double B[FEA_QUAD_MAX_1D * SF_MAX_N], D[FEA_QUAD_MAX_1D * SF_MAX_N];
  for (int q = 0; q < nq; q++)
    fea_lagrange_basis_1d(el->order, el->x1d, gq[q], B + q * n, D + q * n);
  fold_1d(n, nq, s->w1[k], B, D, s->tab[k], s->tab[k] + n * n);
  double J[9];
  structured_jacobian(sp->mesh, J);
  s->len[k][0] = J[k * s->dim + k];
}

/* Direction k of a B-spline space: per span, the p + 1 non-zero functions
 * at the Gauss points mapped into the span, derivatives taken in the
 * span's reference coordinate (d/dr = h d/dxi), folded into M and S. */
static void bspline_tables(const fea_space *sp, int k, const double *gq, fea_sf_state *s) {
  const fea_bspline_space *bs = sp->impl;
  const fea_knots *kn = &bs->knots[k];
  int n = s->n[k], nq = s->nq[k], p = kn->p;
  double scale = (bs->upper[k] - bs->lower[k]) / (kn->t[kn->m - 1] - kn->t[0]);
  double ders[2 * (FEA_BSPLINE_MAX_DEGREE + 1)];
  double B[FEA_QUAD_MAX_1D * SF_MAX_N], D[FEA_QUAD_MAX_1D * SF_MAX_N];
  for (fea_index e = 0; e < kn->nelem; e++) {
    fea_index span = kn->span[e];
    double t0 = kn->t[span], h = kn->t[span + 1] - t0;
    for (int q = 0; q < nq; q++) {
      fea_bspline_basis_ders(kn, span, t0 + gq[q] * h, 1, ders);
      for (int i = 0; i < n; i++) {
        B[q * n + i] = ders[i];
        D[q * n + i] = ders[p + 1 + i] * h;
      }
    }
    double *M = s->tab[k] + e * 2 * n * n;
    fold_1d(n, nq, s->w1[k], B, D, M, M + n * n);
    s->len[k][e] = h * scale;
  }
}

fea_status fea_sf_build_tables(const fea_problem *pb, fea_sf_state *s) {
  const fea_space *sp = pb->space;
  char why[256];
  int nq[3];
  if (!fea_sf_rule_sizes(pb, nq, why, sizeof why))
    return FEA_ERROR(pb->ctx, FEA_ERR_UNSUPPORTED, "sum factorization: %s", why);
  s->space = sp;
  s->dim = sp->dim;
  s->sigma = pb->desc.sigma;
  s->per_span = sp->kind == FEA_SPACE_BSPLINE;
  s->nb = sp->dofs_per_element;
  s->nqt = 1;
  double gq[3][FEA_QUAD_MAX_1D];
  for (int k = 0; k < 3; k++) {
    s->n[k] = s->nq[k] = 1;
    s->nel[k] = 1;
    s->w1[k][0] = 1.0;
  }
  size_t doubles = 0;
  for (int k = 0; k < s->dim; k++) {
    s->nq[k] = nq[k];
    s->nqt *= nq[k];
    FEA_CALL(fea_gauss_legendre(nq[k], gq[k], s->w1[k]));
    if (s->per_span) {
      const fea_bspline_space *bs = sp->impl;
      s->n[k] = bs->knots[k].p + 1;
      s->nel[k] = bs->knots[k].nelem;
    } else {
      s->n[k] = fea_space_lagrange_element(sp)->order + 1;
    }
    doubles += (size_t)s->nel[k] * (2u * (size_t)s->n[k] * (size_t)s->n[k] + 1u);
  }
  doubles += (size_t)s->nqt;
  double *mem = malloc(doubles * sizeof *mem);
  if (!mem)
    return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %zu doubles of 1D tables",
                     doubles);
  s->bytes += doubles * sizeof *mem;
  s->w = mem;
  mem += s->nqt;
  for (int k = 0; k < s->dim; k++) {
    s->tab[k] = mem;
    mem += s->nel[k] * 2 * s->n[k] * s->n[k];
    s->len[k] = mem;
    mem += s->nel[k];
    if (s->per_span)
      bspline_tables(sp, k, gq[k], s);
    else
      lagrange_tables(sp, k, gq[k], s);
  }
  /* Tensor weights in the rule's order (direction 0 fastest). */
  for (int q = 0; q < s->nqt; q++) {
    int r = q;
    double w = 1.0;
    for (int k = 0; k < s->dim; k++) {
      w *= s->w1[k][r % s->nq[k]];
      r /= s->nq[k];
    }
    s->w[q] = w;
  }
  return FEA_SUCCESS;
}
