/* Element integrals of the Poisson problem: stiffness with coefficient sigma,
 * load f, the face terms of Neumann and Robin conditions, and the mass
 * matrix. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/names.h"
#include "internal/error.h"
#include "lagrange-faces.h"
#include "problem.h"

static fea_status bad_point(const fea_problem *pb, const char *what, double v, const double *x,
                            int dim) {
  return FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG, "%s is %g at x = (%g, %g, %g)", what, v, x[0],
                   dim > 1 ? x[1] : 0.0, dim > 2 ? x[2] : 0.0);
}

/* Ke += ws g g^T on the upper triangle for one quadrature point, g the
 * nb x DIM gradients (row i: function i). The gradients go to one row per
 * direction first, so that the inner loop runs down contiguous rows of Ke
 * and of the gradients and vectorizes; DIM is a constant in each caller, so
 * the direction loop unrolls. The sum over directions keeps the order of
 * the plain loop (direction 0 first), so the result does not change. */
static inline void stiffness_point(int nb, const int DIM, double ws, const double *g,
                                   double *restrict gs, double *restrict Ke) {
  for (int i = 0; i < nb; i++)
    for (int k = 0; k < DIM; k++) gs[k * nb + i] = g[i * DIM + k];
  for (int i = 0; i < nb; i++) {
    double gi[3] = {0, 0, 0};
    for (int k = 0; k < DIM; k++) gi[k] = gs[k * nb + i];
    double *row = Ke + (size_t)i * nb;
    for (int j = i; j < nb; j++) {
      double s = gi[0] * gs[j];
      if (DIM > 1) s += gi[1] * gs[nb + j];
      if (DIM > 2) s += gi[2] * gs[2 * nb + j];
      row[j] += ws * s;
    }
  }
}

/* The forms' sum-factorization work in ev->scratch (sized in
 * element-values.c), each part after the one before: per point the
 * weights times sigma (W) and times f (WF); per direction k and 1D point a
 * the outer products B B^T then D D^T of the 1D values B and derivatives D
 * (O[k], 2 np_k^2 per point); the stiffness's q0-contracted products DD and
 * BB (np0^2 per (b, c)), q1-contracted ones U and V (3D: (np0 np1)^2 per c)
 * and one block T of Ke (3D); the load's partial sums L0 (np0 per (b, c))
 * and L1 (np0 np1 per c). */
typedef struct sumfact_work {
  double *W, *WF, *O[3], *DD, *BB, *U, *V, *T, *L0, *L1;
} sumfact_work;

static sumfact_work sumfact_layout(const fea_element_values *ev) {
  const size_t n0 = (size_t)ev->tnp[0], n01 = n0 * (size_t)ev->tnp[1];
  const size_t m12 = (size_t)ev->tnq[1] * (size_t)ev->tnq[2], m2 = (size_t)ev->tnq[2];
  sumfact_work w;
  w.W = ev->scratch;
  w.WF = w.W + (size_t)ev->tnq[0] * m12;
  w.O[0] = w.WF + (size_t)ev->tnq[0] * m12;
  for (int k = 1; k < 3; k++)
    w.O[k] = w.O[k - 1] + 2 * (size_t)ev->tnq[k - 1] * (size_t)ev->tnp[k - 1] * ev->tnp[k - 1];
  w.DD = w.O[2] + 2 * m2 * (size_t)ev->tnp[2] * (size_t)ev->tnp[2];
  w.BB = w.DD + m12 * n0 * n0;
  w.U = w.BB + m12 * n0 * n0;
  w.V = w.U + m2 * n01 * n01;
  w.T = w.V + m2 * n01 * n01;
  w.L0 = w.T + n01 * n01;
  w.L1 = w.L0 + m12 * n0;
  return w;
}

/* Row (k, a) of ev->t1d: the np_k values at 1D point a, then the derivatives. */
static inline const double *t1d_row(const fea_element_values *ev, int k, int a) {
  return ev->t1d + ((size_t)k * FEA_QUAD_MAX_1D + (size_t)a) * FEA_ELEMENT_T1D_LD;
}

/* The outer products of each direction's 1D factors, w->O[k]: B B^T then
 * D D^T at each 1D point; or, for a separable W (a constant sigma times the
 * 1D weights, w1d = 1), their sums weighted by ev->w1d, as a single "point"
 * per direction with W = 1. */
static void outer_products(const fea_element_values *ev, const sumfact_work *w, int w1d) {
  for (int k = 0; k < ev->dim; k++) {
    const int n = ev->tnp[k], s = n * n;
    if (w1d)
      for (int x = 0; x < 2 * s; x++) w->O[k][x] = 0;
    for (int a = 0; a < ev->tnq[k]; a++) {
      const double *r = t1d_row(ev, k, a), c = w1d ? ev->w1d[k][a] : 1.0;
      double *o = w->O[k] + (w1d ? 0 : (size_t)a * 2 * s);
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
          if (w1d) {
            o[i * n + j] += c * (r[i] * r[j]);
            o[s + i * n + j] += c * (r[n + i] * r[n + j]);
          } else {
            o[i * n + j] = r[i] * r[j];
            o[s + i * n + j] = r[n + i] * r[n + j];
          }
        }
    }
  }
}

/* The upper triangle of Ke += sum_q W_q grad phi_i . grad phi_j for a
 * tensor element (2D or 3D) from the outer products of its 1D factors
 * (outer_products, m[k] of them in direction k), by sum factorization: the
 * 1D point sums are taken one direction at a time, so an element costs
 * O(nb^2 nq_1D) instead of O(nb^2 nq). Every sum is a scaled add of whole
 * contiguous np0^2 (or, for the last direction in 3D, (np0 np1)^2) blocks:
 * no index arithmetic in the inner loops, which vectorize. That costs about
 * 1.5x the multiply-adds of the upper triangles alone and still took the
 * stiffness (with its point loop) from 1.2 to 0.8 us per element in 2D
 * p = 3, from 4.3 to 2.4 in 3D p = 2 (SSE2 build, AVX-512 host). With a
 * separable W (m = 1, 1, 1) the sums collapse to Kronecker products of the
 * 1D stiffness and mass matrices: 0.6 and 1.3 us. Blocks of Ke above the
 * diagonal (i1 <= j1 in 2D, i2 <= j2 in 3D) are computed whole: the
 * caller mirrors the upper triangle. Entries differ from the
 * point-by-point sum by rounding only. */
static void stiffness_tensor(const fea_element_values *ev, const sumfact_work *w, const int m[3],
                             double *Ke) {
  const int dim = ev->dim, nb = ev->nb;
  const int n0 = ev->tnp[0], n1 = ev->tnp[1], n2 = ev->tnp[2];
  const int m0 = m[0], m1 = m[1], m2 = m[2];
  const int s0 = n0 * n0, s1 = n1 * n1, s2 = n2 * n2;
  /* Direction 0: DD = sum_a W D0 D0^T, BB = sum_a W B0 B0^T per (b, c). */
  for (int bc = 0; bc < m1 * m2; bc++) {
    double *restrict dd = w->DD + (size_t)bc * s0, *restrict bb = w->BB + (size_t)bc * s0;
    for (int x = 0; x < s0; x++) dd[x] = bb[x] = 0;
    for (int a = 0; a < m0; a++) {
      const double wa = w->W[a + m0 * bc], *o = w->O[0] + (size_t)a * 2 * s0;
      for (int x = 0; x < s0; x++) {
        bb[x] += wa * o[x];
        dd[x] += wa * o[s0 + x];
      }
    }
  }
  if (dim == 2) {
    /* Direction 1, block (i1, j1) of Ke: sum_b DD B1 B1^T + BB D1 D1^T. */
    double acc[(FEA_BSPLINE_MAX_DEGREE + 1) * (FEA_BSPLINE_MAX_DEGREE + 1)];
    for (int i1 = 0; i1 < n1; i1++)
      for (int j1 = i1; j1 < n1; j1++) {
        for (int x = 0; x < s0; x++) acc[x] = 0;
        for (int b = 0; b < m1; b++) {
          const double *o = w->O[1] + (size_t)b * 2 * s1;
          const double cb = o[i1 * n1 + j1], cd = o[s1 + i1 * n1 + j1];
          const double *dd = w->DD + (size_t)b * s0, *bb = w->BB + (size_t)b * s0;
          for (int x = 0; x < s0; x++) acc[x] += dd[x] * cb + bb[x] * cd;
        }
        for (int i0 = 0; i0 < n0; i0++) {
          double *row = Ke + (size_t)(i1 * n0 + i0) * nb + (size_t)j1 * n0;
          for (int j0 = 0; j0 < n0; j0++) row[j0] += acc[i0 * n0 + j0];
        }
      }
    return;
  }
  /* 3D, direction 1: U = sum_b DD (x) B1 B1^T + BB (x) D1 D1^T and
   * V = sum_b BB (x) B1 B1^T per c, stored by blocks: U[c][i1 n1 + j1][i0 n0 + j0]. */
  const size_t s01 = (size_t)s0 * s1;
  for (int c = 0; c < m2; c++)
    for (int i1 = 0; i1 < n1; i1++)
      for (int j1 = 0; j1 < n1; j1++) {
        const size_t blk = (size_t)c * s01 + (size_t)(i1 * n1 + j1) * s0;
        double *restrict u = w->U + blk, *restrict v = w->V + blk;
        for (int x = 0; x < s0; x++) u[x] = v[x] = 0;
        for (int b = 0; b < m1; b++) {
          const double *o = w->O[1] + (size_t)b * 2 * s1;
          const double cb = o[i1 * n1 + j1], cd = o[s1 + i1 * n1 + j1];
          const double *dd = w->DD + (size_t)(b + m1 * c) * s0;
          const double *bb = w->BB + (size_t)(b + m1 * c) * s0;
          for (int x = 0; x < s0; x++) {
            u[x] += dd[x] * cb + bb[x] * cd;
            v[x] += bb[x] * cb;
          }
        }
      }
  /* Direction 2, block (i2, j2) of Ke: sum_c U B2 B2^T + V D2 D2^T. */
  double *restrict T = w->T;
  for (int i2 = 0; i2 < n2; i2++)
    for (int j2 = i2; j2 < n2; j2++) {
      for (size_t y = 0; y < s01; y++) T[y] = 0;
      for (int c = 0; c < m2; c++) {
        const double *o = w->O[2] + (size_t)c * 2 * s2;
        const double cb = o[i2 * n2 + j2], cd = o[s2 + i2 * n2 + j2];
        const double *u = w->U + (size_t)c * s01, *v = w->V + (size_t)c * s01;
        for (size_t y = 0; y < s01; y++) T[y] += u[y] * cb + v[y] * cd;
      }
      for (int i1 = 0; i1 < n1; i1++)
        for (int i0 = 0; i0 < n0; i0++) {
          double *row = Ke + (size_t)((i2 * n1 + i1) * n0 + i0) * nb + (size_t)j2 * n0 * n1;
          for (int j1 = 0; j1 < n1; j1++)
            for (int j0 = 0; j0 < n0; j0++)
              row[j1 * n0 + j0] += T[(size_t)(i1 * n1 + j1) * s0 + i0 * n0 + j0];
        }
    }
}

/* fe += (B2 (x) B1 (x) B0) WF for a tensor element (2D or 3D), one
 * direction at a time: O(nq np0 + ...) instead of the nq nb products of
 * phi, and no phi table needed. Differs from the point-by-point sum by
 * rounding only. */
static void load_tensor(const fea_element_values *ev, const sumfact_work *w, double *fe) {
  const int dim = ev->dim, n0 = ev->tnp[0], n1 = ev->tnp[1], n2 = ev->tnp[2];
  const int m0 = ev->tnq[0], m1 = ev->tnq[1], m2 = ev->tnq[2], n01 = n0 * n1;
  for (int bc = 0; bc < m1 * m2; bc++) { /* L0[bc][i0] = sum_a WF B0 */
    double *l = w->L0 + (size_t)bc * n0;
    for (int i0 = 0; i0 < n0; i0++) l[i0] = 0;
    for (int a = 0; a < m0; a++) {
      const double v = w->WF[a + m0 * bc], *r = t1d_row(ev, 0, a);
      for (int i0 = 0; i0 < n0; i0++) l[i0] += v * r[i0];
    }
  }
  for (int c = 0; c < m2; c++) { /* L1[c][i1 n0 + i0] = sum_b L0 B1 */
    double *l = w->L1 + (size_t)c * n01;
    for (int x = 0; x < n01; x++) l[x] = 0;
    for (int b = 0; b < m1; b++) {
      const double *r = t1d_row(ev, 1, b), *l0 = w->L0 + (size_t)(b + m1 * c) * n0;
      for (int i1 = 0; i1 < n1; i1++)
        for (int i0 = 0; i0 < n0; i0++) l[i1 * n0 + i0] += l0[i0] * r[i1];
    }
  }
  if (dim == 2) {
    for (int x = 0; x < n01; x++) fe[x] += w->L1[x];
    return;
  }
  for (int c = 0; c < m2; c++) { /* fe[i2 n01 + x] = sum_c L1 B2 */
    const double *r = t1d_row(ev, 2, c), *l = w->L1 + (size_t)c * n01;
    for (int i2 = 0; i2 < n2; i2++)
      for (int x = 0; x < n01; x++) fe[i2 * n01 + x] += l[x] * r[i2];
  }
}

/* A(x) from the user, checked: finite, symmetric (to 1e-12 relative) and
 * positive definite (its Cholesky factor exists). */
static fea_status tensor_at(const fea_problem *pb, const double *x, int dim, double *A) {
  const fea_problem_desc *d = &pb->desc;
  for (int i = 0; i < dim * dim; i++) A[i] = NAN;
  d->sigma_tensor(x, A, d->sigma_tensor_user);
  double L[9] = {0}, scale = 0;
  for (int i = 0; i < dim * dim; i++) {
    if (!isfinite(A[i])) return bad_point(pb, "an entry of the tensor A", A[i], x, dim);
    scale = fmax(scale, fabs(A[i]));
  }
  for (int i = 0; i < dim; i++)
    for (int j = 0; j < i; j++)
      if (fabs(A[i * dim + j] - A[j * dim + i]) > 1e-12 * scale)
        return bad_point(pb, "the asymmetry A_ij - A_ji of the tensor A",
                         A[i * dim + j] - A[j * dim + i], x, dim);
  for (int j = 0; j < dim; j++) {
    double s = A[j * dim + j];
    for (int k = 0; k < j; k++) s -= L[j * 3 + k] * L[j * 3 + k];
    if (!(s > 0))
      return bad_point(pb, "a Cholesky pivot of the tensor A (not positive definite)", s, x, dim);
    L[j * 3 + j] = sqrt(s);
    for (int i = j + 1; i < dim; i++) {
      double t = A[i * dim + j];
      for (int k = 0; k < j; k++) t -= L[i * 3 + k] * L[j * 3 + k];
      L[i * 3 + j] = t / L[j * 3 + j];
    }
  }
  return FEA_SUCCESS;
}

fea_status fea_form_coefficients_at(const fea_problem *pb, const double *x, double *A, double *c) {
  const fea_problem_desc *d = &pb->desc;
  const int dim = pb->space->dim;
  if (d->sigma_tensor) {
    FEA_CALL(tensor_at(pb, x, dim, A));
  } else {
    const double sigma = d->sigma_fn ? d->sigma_fn(x, d->sigma_user) : d->sigma;
    if (!(sigma > 0) || !isfinite(sigma)) return bad_point(pb, "sigma", sigma, x, dim);
    for (int i = 0; i < dim * dim; i++) A[i] = i % (dim + 1) == 0 ? sigma : 0.0;
  }
  *c = d->reaction_fn ? d->reaction_fn(x, d->reaction_user) : d->reaction;
  if (!(*c >= 0) || !isfinite(*c)) return bad_point(pb, "the reaction coefficient c", *c, x, dim);
  return FEA_SUCCESS;
}

/* Ke += w (A grad phi_i) . grad phi_j on the upper triangle at one point. */
static void anisotropic_point(int nb, int dim, double w, const double *A, const double *g,
                              double *Ke) {
  for (int i = 0; i < nb; i++) {
    double Ag[3] = {0, 0, 0}; /* A grad phi_i (A symmetric) */
    for (int a = 0; a < dim; a++)
      for (int b = 0; b < dim; b++) Ag[a] += A[a * dim + b] * g[i * dim + b];
    for (int j = i; j < nb; j++) {
      double s = 0;
      for (int a = 0; a < dim; a++) s += Ag[a] * g[j * dim + a];
      Ke[i * nb + j] += w * s;
    }
  }
}

fea_status fea_form_stiffness_load(const fea_problem *pb, const fea_element_values *ev, double *Ke,
                                   double *fe) {
  const int nb = ev->nb, dim = ev->dim;
  /* The gradients of one point, one row per direction (stiffness_point). */
  double gs_small[3 * 216], *gs = gs_small, *gs_heap = NULL;
  if (Ke && (size_t)nb * (size_t)dim > sizeof gs_small / sizeof *gs_small) {
    gs = gs_heap = malloc((size_t)nb * (size_t)dim * sizeof *gs);
    if (!gs)
      return FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d x %d gradients", nb, dim);
  }
  fea_status st = FEA_SUCCESS;
  /* Tensor elements in 2D and 3D: the weights go to W and WF, Ke's and fe's
   * sums come after the loop. Without the tables (the caller's request,
   * fea_form_factors_suffice) only these sums are possible. */
  const fea_problem_desc *d = &pb->desc;
  const int sumfact = ev->tensor_valid && ev->scratch && (dim == 2 || dim == 3);
  const int tensor = Ke && sumfact && !d->sigma_tensor;
  const int tensor_load = fe && d->source && sumfact;
  const int reaction = fea_problem_has_reaction(pb);
  if (!fea_element_values_have_tables(ev) &&
      ((Ke && (!tensor || reaction)) || (fe && d->source && !tensor_load))) {
    free(gs_heap);
    return FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG,
                     "the element's basis tables were not built, and the forms need them");
  }
  const sumfact_work sw = sumfact ? sumfact_layout(ev) : (sumfact_work){0};
  if (Ke) memset(Ke, 0, (size_t)nb * nb * sizeof *Ke);
  if (fe) memset(fe, 0, (size_t)nb * sizeof *fe);
  for (int q = 0; q < ev->nq; q++) {
    const double *x = ev->x + q * dim;
    if (Ke) {
      double sigma = 1.0, A[9];
      if (d->sigma_tensor) { /* A(x): checked, then its sums below */
        st = tensor_at(pb, x, dim, A);
        if (st != FEA_SUCCESS) break;
      } else {
        sigma = d->sigma_fn ? d->sigma_fn(x, d->sigma_user) : d->sigma;
        if (!(sigma > 0) || !isfinite(sigma)) {
          st = bad_point(pb, "sigma", sigma, x, dim);
          break;
        }
      }
      double ws = ev->w[q] * sigma;
      const double *g = ev->dphi + (size_t)q * nb * dim;
      if (reaction) { /* c phi_i phi_j, upper triangle, point by point */
        double c = d->reaction_fn ? d->reaction_fn(x, d->reaction_user) : d->reaction;
        if (!(c >= 0) || !isfinite(c)) {
          st = bad_point(pb, "the reaction coefficient c", c, x, dim);
          break;
        }
        const double wc = ev->w[q] * c, *phi = ev->phi + (size_t)q * nb;
        for (int i = 0; i < nb; i++)
          for (int j = i; j < nb; j++) Ke[i * nb + j] += wc * phi[i] * phi[j];
      }
      if (d->sigma_tensor)
        anisotropic_point(nb, dim, ev->w[q], A, g, Ke);
      else if (tensor)
        sw.W[q] = ws;
      else if (dim == 3)
        stiffness_point(nb, 3, ws, g, gs, Ke);
      else if (dim == 2)
        stiffness_point(nb, 2, ws, g, gs, Ke);
      else
        stiffness_point(nb, 1, ws, g, gs, Ke);
    }
    if (fe && d->source) {
      double f = d->source(x, d->source_user);
      if (!isfinite(f)) {
        st = bad_point(pb, "the source f", f, x, dim);
        break;
      }
      if (tensor_load) {
        sw.WF[q] = ev->w[q] * f;
        continue;
      }
      const double *phi = ev->phi + (size_t)q * nb;
      for (int i = 0; i < nb; i++) fe[i] += ev->w[q] * f * phi[i];
    }
  }
  free(gs_heap);
  if (st != FEA_SUCCESS) return st;
  if (tensor) {
    /* A constant sigma on a rule with 1D weights: W is their product. */
    const int w1d = !d->sigma_fn && ev->w1d_valid;
    const int m1d[3] = {1, 1, 1};
    outer_products(ev, &sw, w1d);
    if (w1d) sw.W[0] = d->sigma;
    stiffness_tensor(ev, &sw, w1d ? m1d : ev->tnq, Ke);
  }
  if (tensor_load) load_tensor(ev, &sw, fe);
  if (Ke) /* computed on the upper triangle; the matrix is symmetric */
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < i; j++) Ke[i * nb + j] = Ke[j * nb + i];
  return FEA_SUCCESS;
}

int fea_form_factors_suffice(const fea_problem *pb) {
  const fea_problem_desc *d = &pb->desc;
  return (pb->space->dim == 2 || pb->space->dim == 3) && !pb->elastic && !d->element_form &&
         !d->sigma_tensor && !fea_problem_has_reaction(pb) && !fea_problem_has_faces(pb);
}

/* The load h v and the Robin matrix alpha u v at the npts points of one
 * face with condition bc: points x, surface weights ds, basis values phi. */
static fea_status add_face_points(const fea_problem *pb, const fea_boundary_condition *bc, int npts,
                                  int dim, const double *x, const double *ds, const double *phi,
                                  int nb, double *Ke, double *fe) {
  for (int q = 0; q < npts; q++) {
    const double *xq = x + (size_t)q * dim, *pq = phi + (size_t)q * nb;
    if (fe && bc->flux) {
      const double h = bc->flux(xq, bc->flux_user);
      if (!isfinite(h)) return bad_point(pb, "the boundary flux h", h, xq, dim);
      for (int i = 0; i < nb; i++) fe[i] += ds[q] * h * pq[i];
    }
    if (Ke && bc->type == FEA_BC_ROBIN) /* one product per pair: Ke stays symmetric */
      for (int i = 0; i < nb; i++)
        for (int j = i; j < nb; j++) {
          const double v = ds[q] * bc->alpha * pq[i] * pq[j];
          Ke[i * nb + j] += v;
          if (j != i) Ke[j * nb + i] += v;
        }
  }
  return FEA_SUCCESS;
}

/* Face integrals of Lagrange element e on its natural boundary facets. */
static fea_status lagrange_face_terms(const fea_problem *pb, fea_index e, int nb, double *Ke,
                                      double *fe) {
  const fea_lagrange_faces *lf = pb->lfaces;
  fea_index first, n;
  fea_lagrange_faces_of(lf, e, &first, &n);
  if (n == 0) return FEA_SUCCESS;
  const int dim = pb->space->dim, nq = lf->npts;
  double *x = malloc((size_t)nq * (size_t)(dim + 1 + nb) * sizeof *x);
  FEA_CHECK(x, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the face values of element %lld",
            (long long)e);
  double *ds = x + (size_t)nq * dim, *phi = ds + nq;
  fea_status st = FEA_SUCCESS;
  for (fea_index j = first; j < first + n && st == FEA_SUCCESS; j++) {
    fea_lagrange_face_values(pb, j, x, ds, phi);
    st = add_face_points(pb, lf->bc[j], nq, dim, x, ds, phi, nb, Ke, fe);
  }
  free(x);
  return st;
}

/* Face integrals of element e on the problem's Neumann and Robin sides. */
static fea_status face_terms(const fea_problem *pb, fea_index e, int nb, double *Ke, double *fe) {
  if (pb->lfaces) return lagrange_face_terms(pb, e, nb, Ke, fe);
  const fea_space *s = pb->space;
  const int dim = s->dim;
  int nq = 1;
  for (int k = 0; k < dim && dim > 1; k++)
    if (pb->face_quad[k].npts > nq) nq = pb->face_quad[k].npts;
  double *x = malloc((size_t)nq * (size_t)(dim + 1 + nb) * sizeof *x);
  FEA_CHECK(x, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the face values of element %lld",
            (long long)e);
  double *ds = x + (size_t)nq * dim, *phi = ds + nq;
  fea_status st = FEA_SUCCESS;
  for (int side = 0; side < 2 * dim && st == FEA_SUCCESS; side++) {
    if (!(pb->face_sides >> side & 1u)) continue;
    const fea_quadrature *qf = &pb->face_quad[side / 2];
    int touches = 0;
    st = fea_bspline_face_values(s, e, side, qf, &touches, x, ds, phi);
    if (st != FEA_SUCCESS || !touches) continue;
    const fea_boundary_condition *bc = &pb->desc.sides[side];
    st = add_face_points(pb, bc, dim == 1 ? 1 : qf->npts, dim, x, ds, phi, nb, Ke, fe);
  }
  free(x);
  return st;
}

/* The user's element form in place of the built-in one: called with
 * scratch buffers when the caller wants only one of Ke and fe, and its
 * result checked (finite, Ke symmetric) before anything uses it. */
static fea_status user_form(const fea_problem *pb, fea_index e, const fea_element_values *ev,
                            double *Ke, double *fe) {
  const int nb = ev->nb * pb->space->ncomp; /* the form's n: vector DoFs of the element */
  double *K = Ke, *f = fe, *own = NULL;
  if (!K || !f) {
    own = calloc((size_t)nb * (size_t)(nb + 1), sizeof *own);
    FEA_CHECK(own, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for element %lld's system",
              (long long)e);
    if (!K) K = own;
    if (!f) f = own + (size_t)nb * nb;
  }
  memset(K, 0, (size_t)nb * nb * sizeof *K);
  memset(f, 0, (size_t)nb * sizeof *f);
  const fea_element_data ed = {sizeof ed, e,     ev->dim, ev->nq,   ev->nb,
                               ev->x,     ev->w, ev->phi, ev->dphi, pb->space->ncomp};
  const fea_problem_desc *d = &pb->desc;
  fea_status st = d->element_form(&ed, K, f, d->element_form_user);
  /* The user's status is converted here, at the boundary: one of the
   * library's error codes passes through, anything else (a warning, a value
   * outside the enum) becomes FEA_ERR_INVALID_ARG naming it, so that no
   * caller receives a status it cannot name. */
  if (st != FEA_SUCCESS && !fea_status_is_named(st))
    st = FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG,
                   "the user's element form returned %d, not a fea_status, for element %lld",
                   (int)st, (long long)e);
  else if (st != FEA_SUCCESS)
    st = FEA_ERROR(pb->ctx, st < 0 ? st : FEA_ERR_INVALID_ARG,
                   "the user's element form returned %s for element %lld%s", fea_status_string(st),
                   (long long)e, st < 0 ? "" : "; a form returns FEA_SUCCESS or an error status");
  double scale = 0;
  for (int i = 0; i < nb * nb && st == FEA_SUCCESS; i++) {
    if (!isfinite(K[i]))
      st = FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG,
                     "the user's element form gave Ke[%d][%d] = %g for element %lld", i / nb,
                     i % nb, K[i], (long long)e);
    scale = fmax(scale, fabs(K[i]));
  }
  for (int i = 0; i < nb && st == FEA_SUCCESS; i++) {
    if (!isfinite(f[i]))
      st = FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG,
                     "the user's element form gave fe[%d] = %g for element %lld", i, f[i],
                     (long long)e);
    for (int j = 0; j < i && st == FEA_SUCCESS; j++)
      if (fabs(K[i * nb + j] - K[j * nb + i]) > 1e-12 * scale)
        st = FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG,
                       "the user's element form gave an asymmetric Ke for element %lld: "
                       "Ke[%d][%d] = %.17g, Ke[%d][%d] = %.17g",
                       (long long)e, i, j, K[i * nb + j], j, i, K[j * nb + i]);
  }
  free(own);
  return st;
}

fea_status fea_form_element_system(const fea_problem *pb, fea_index e, const fea_element_values *ev,
                                   double *Ke, double *fe) {
  if (pb->elastic) return fea_form_elastic_system(pb, e, ev, Ke, fe);
  if (pb->desc.element_form)
    FEA_CALL(user_form(pb, e, ev, Ke, fe));
  else
    FEA_CALL(fea_form_stiffness_load(pb, ev, Ke, fe));
  return pb->face_sides ? face_terms(pb, e, ev->nb, Ke, fe) : FEA_SUCCESS;
}

fea_status fea_form_stiffness_weights(const fea_problem *pb, const fea_element_values *ev,
                                      double *W) {
  const fea_problem_desc *d = &pb->desc;
  for (int q = 0; q < ev->nq; q++) {
    const double *x = ev->x + q * ev->dim;
    const double sigma = d->sigma_fn ? d->sigma_fn(x, d->sigma_user) : d->sigma;
    if (!(sigma > 0) || !isfinite(sigma)) return bad_point(pb, "sigma", sigma, x, ev->dim);
    W[q] = ev->w[q] * sigma;
  }
  return FEA_SUCCESS;
}

fea_status fea_form_face_matrix(const fea_problem *pb, fea_index e, int nb, double *Ke) {
  memset(Ke, 0, (size_t)nb * (size_t)nb * sizeof *Ke);
  return fea_problem_has_robin(pb) ? face_terms(pb, e, nb, Ke, NULL) : FEA_SUCCESS;
}

fea_status fea_form_mass(const fea_element_values *ev, double *Me) {
  const int nb = ev->nb;
  memset(Me, 0, (size_t)nb * nb * sizeof *Me);
  for (int q = 0; q < ev->nq; q++) {
    const double *phi = ev->phi + (size_t)q * nb;
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < nb; j++) Me[i * nb + j] += ev->w[q] * phi[i] * phi[j];
  }
  return FEA_SUCCESS;
}

fea_status fea_problem_rule(const fea_space *s, int points, int extra, fea_quadrature *q) {
  if (s->cell == FEA_CELL_TRIANGLE || s->cell == FEA_CELL_TETRAHEDRON) {
    /* The collapsed rule with n points is exact to total degree 2n - 2: the
     * mass matrix of P_p needs 2p, so n = p + 1 (P1: 2, P2: 3). */
    int n = points > 0 ? points : s->degree[0] + 1;
    n += extra;
    if (n > FEA_QUAD_MAX_1D) n = FEA_QUAD_MAX_1D;
    return fea_quadrature_simplex(s->dim, n, q);
  }
  int n[3] = {1, 1, 1};
  for (int k = 0; k < s->dim; k++) {
    n[k] = (points > 0 ? points : s->degree[k] + 1) + extra;
    if (n[k] > FEA_QUAD_MAX_1D) n[k] = FEA_QUAD_MAX_1D;
  }
  return fea_quadrature_tensor(s->dim, n, q);
}
