/* Element integrals of linear elasticity: the stiffness
 * a(u, v) = int lambda div u div v + 2 mu eps(u) : eps(v) (or, with a
 * tensor C(x), int eps(v) : C eps(u) in Voigt form), the body force f . v,
 * the traction h . v (or -p n . v) of the faces on loaded sides, and the
 * spring terms k u . v and h . v of elastic supports. Element matrices are
 * (nb ncomp)^2 in the interleaved order of the space's vector DoFs (local
 * c + ncomp i: component c of function i). Also what the rigid-body check
 * needs of the springs: the integrals of k over their faces. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "lagrange-faces.h"
#include "problem.h"

static fea_status bad_point(const fea_problem *pb, const char *what, double v, const double *x,
                            int dim) {
  return FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG, "%s is %g at x = (%g, %g, %g)", what, v, x[0],
                   dim > 1 ? x[1] : 0.0, dim > 2 ? x[2] : 0.0);
}

fea_status fea_form_elastic_lame(const fea_problem *pb, const double *x, double *lambda,
                                 double *mu) {
  const fea_elasticity_desc *e = pb->elastic;
  const int dim = pb->space->dim;
  double l, m;
  /* A consumer that integrates an isotropic material itself (the matrix-free
   * kernels) asks here: a tensor is not one. */
  if (e->C_fn)
    return FEA_ERROR(pb->ctx, FEA_ERR_UNSUPPORTED,
                     "the material is an elasticity tensor C(x) (C_fn); this way of computing "
                     "takes an isotropic one only (E and nu, or lambda and mu)");
  if (e->mu > 0) {
    l = e->lambda, m = e->mu;
  } else {
    const double E = e->E_fn ? e->E_fn(x, e->material_user) : e->E;
    const double nu = e->nu_fn ? e->nu_fn(x, e->material_user) : e->nu;
    if (!(E > 0) || !isfinite(E)) return bad_point(pb, "Young's modulus E", E, x, dim);
    if (!(nu > -1.0 && nu < 0.5))
      return bad_point(pb, "Poisson's ratio nu (in (-1, 0.5))", nu, x, dim);
    l = E * nu / ((1 + nu) * (1 - 2 * nu));
    m = E / (2 * (1 + nu));
  }
  /* Plane stress: sigma_zz = 0 eliminates eps_zz, which leaves lambda* = 2 lambda mu / (lambda + 2 mu). */
  if (dim == 2 && e->model == FEA_ELASTICITY_PLANE_STRESS) l = 2 * l * m / (l + 2 * m);
  *lambda = l;
  *mu = m;
  return FEA_SUCCESS;
}

/* Voigt index k's pair of coordinates: 3D xx, yy, zz, yz, xz, xy; 2D xx, yy, xy. */
static const int voigt3[6][2] = {{0, 0}, {1, 1}, {2, 2}, {1, 2}, {0, 2}, {0, 1}};
static const int voigt2[3][2] = {{0, 0}, {1, 1}, {0, 1}};

int fea_form_elastic_voigt_pair(int dim, int k, int which) {
  return dim == 3 ? voigt3[k][which] : voigt2[k][which];
}

fea_status fea_form_elastic_tensor(const fea_problem *pb, const double *x, double *C) {
  const fea_elasticity_desc *e = pb->elastic;
  const int dim = pb->space->dim, nv = FEA_VOIGT(dim);
  if (!e->C_fn) {
    double l, m;
    FEA_CALL(fea_form_elastic_lame(pb, x, &l, &m));
    for (int a = 0; a < nv; a++)
      for (int b = 0; b < nv; b++)
        C[a * nv + b] = a < dim && b < dim ? l + (a == b ? 2 * m : 0.0) : a == b ? m : 0.0;
    return FEA_SUCCESS;
  }
  e->C_fn(x, C, e->material_user);
  double big = 0;
  for (int a = 0; a < nv * nv; a++) {
    if (!isfinite(C[a]))
      return FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG,
                       "the elasticity tensor C_fn has the entry C[%d][%d] = %g at x = (%g, %g, "
                       "%g)",
                       a / nv, a % nv, C[a], x[0], x[1], dim > 2 ? x[2] : 0.0);
    big = fmax(big, fabs(C[a]));
  }
  for (int a = 0; a < nv; a++)
    for (int b = 0; b < a; b++)
      if (fabs(C[a * nv + b] - C[b * nv + a]) > 1e-12 * big)
        return FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG,
                         "the elasticity tensor C_fn is not symmetric at x = (%g, %g, %g): "
                         "C[%d][%d] = %g but C[%d][%d] = %g",
                         x[0], x[1], dim > 2 ? x[2] : 0.0, a, b, C[a * nv + b], b, a,
                         C[b * nv + a]);
  /* Positive definite: a Cholesky factorization whose pivots stay above
   * 1e-12 of the largest entry (a scale-free test, in a scratch copy). */
  double L[36];
  memcpy(L, C, (size_t)nv * nv * sizeof *L);
  for (int j = 0; j < nv; j++) {
    double d = L[j * nv + j];
    for (int k = 0; k < j; k++) d -= L[j * nv + k] * L[j * nv + k];
    if (!(d > 1e-12 * big))
      return FEA_ERROR(pb->ctx, FEA_ERR_INVALID_ARG,
                       "the elasticity tensor C_fn is not positive definite at x = (%g, %g, %g) "
                       "(Cholesky pivot %d is %g)",
                       x[0], x[1], dim > 2 ? x[2] : 0.0, j, d);
    d = sqrt(d);
    L[j * nv + j] = d;
    for (int i = j + 1; i < nv; i++) {
      double v = L[i * nv + j];
      for (int k = 0; k < j; k++) v -= L[i * nv + k] * L[j * nv + k];
      L[i * nv + j] = v / d;
    }
  }
  return FEA_SUCCESS;
}

/* The spring stiffness k of a SPRING side at x, checked (finite, >= 0). */
static fea_status spring_at(const fea_problem *pb, const fea_elastic_condition *bc, const double *x,
                            double *k) {
  *k = bc->pressure_fn ? bc->pressure_fn(x, bc->pressure_user) : bc->pressure;
  if (!(*k >= 0) || !isfinite(*k))
    return bad_point(pb, "the spring stiffness k (finite, >= 0)", *k, x, pb->space->dim);
  return FEA_SUCCESS;
}

/* One loaded face's terms at npts points: fe[c + nc i] += ds h_c phi_i,
 * h = traction(x) (TRACTION, SPRING; NULL: 0) or -p(x) n (PRESSURE); and on
 * a SPRING side Ke[(a + nc i), (a + nc j)] += ds k phi_i phi_j (each unless
 * NULL; n = nb nc). */
static fea_status face_terms(const fea_problem *pb, const fea_elastic_condition *bc, int npts,
                             const double *x, const double *ds, const double *phi,
                             const double *normal, int nb, double *Ke, double *fe) {
  const int dim = pb->space->dim, nc = pb->space->ncomp, n = nb * nc;
  const int spring = bc->type == FEA_ELASTIC_SPRING;
  for (int q = 0; q < npts; q++) {
    const double *xq = x + (size_t)q * dim, *pq = phi + (size_t)q * nb;
    if (Ke && spring) {
      double k;
      FEA_CALL(spring_at(pb, bc, xq, &k));
      for (int i = 0; i < nb; i++)
        for (int j = 0; j < nb; j++) {
          const double v = ds[q] * k * pq[i] * pq[j];
          for (int a = 0; a < nc; a++) Ke[(size_t)(a + nc * i) * n + (size_t)(a + nc * j)] += v;
        }
    }
    if (!fe) continue;
    double h[FEA_MAX_COMPONENTS] = {0};
    if (bc->type == FEA_ELASTIC_PRESSURE) {
      const double p = bc->pressure_fn ? bc->pressure_fn(xq, bc->pressure_user) : bc->pressure;
      if (!isfinite(p)) return bad_point(pb, "the pressure p", p, xq, dim);
      for (int c = 0; c < dim; c++) h[c] = -p * normal[(size_t)q * dim + c];
    } else if (bc->traction) {
      bc->traction(xq, h, bc->traction_user);
      for (int c = 0; c < nc; c++)
        if (!isfinite(h[c])) return bad_point(pb, "a component of the traction h", h[c], xq, dim);
    } else {
      continue; /* a spring without a load */
    }
    for (int i = 0; i < nb; i++)
      for (int c = 0; c < nc; c++) fe[c + nc * i] += ds[q] * h[c] * pq[i];
  }
  return FEA_SUCCESS;
}

/* The elasticity condition of Lagrange facet j: its condition points into
 * desc.sides, whose index is the elasticity side, or into parts[i].bc. */
static const fea_elastic_condition *facet_condition(const fea_problem *pb, fea_index j) {
  const fea_boundary_condition *bc = pb->lfaces->bc[j];
  if (bc >= pb->desc.sides && bc < pb->desc.sides + 6)
    return &pb->elastic->sides[bc - pb->desc.sides];
  for (int i = 0; i < pb->desc.num_parts; i++)
    if (bc == &pb->parts[i].bc) return &pb->elastic->parts[i].bc;
  return NULL;
}

/* The terms of Lagrange element e's facets on loaded sides (pb->lfaces
 * lists them). */
static fea_status lagrange_face_loads(const fea_problem *pb, fea_index e, int nb, double *Ke,
                                      double *fe) {
  const fea_lagrange_faces *lf = pb->lfaces;
  fea_index first, n;
  fea_lagrange_faces_of(lf, e, &first, &n);
  if (n == 0) return FEA_SUCCESS;
  const int dim = pb->space->dim, nq = lf->npts;
  double *x = malloc((size_t)nq * (size_t)(2 * dim + 1 + nb) * sizeof *x);
  FEA_CHECK(x, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the face values of element %lld",
            (long long)e);
  double *ds = x + (size_t)nq * dim, *normal = ds + nq, *phi = normal + (size_t)nq * dim;
  fea_status st = FEA_SUCCESS;
  for (fea_index j = first; j < first + n && st == FEA_SUCCESS; j++) {
    const fea_elastic_condition *ec = facet_condition(pb, j);
    if (!fe && ec->type != FEA_ELASTIC_SPRING) continue;
    fea_lagrange_face_values_normal(pb, j, x, ds, phi, normal);
    st = face_terms(pb, ec, nq, x, ds, phi, normal, nb, Ke, fe);
  }
  free(x);
  return st;
}

/* The terms of element e's faces on the problem's traction, pressure and
 * spring sides (Ke: the springs' alone). */
static fea_status face_loads(const fea_problem *pb, fea_index e, int nb, double *Ke, double *fe) {
  if (pb->lfaces) return lagrange_face_loads(pb, e, nb, Ke, fe);
  const fea_space *s = pb->space;
  const int dim = s->dim;
  int nq = 1;
  for (int k = 0; k < dim; k++)
    if (pb->face_quad[k].npts > nq) nq = pb->face_quad[k].npts;
  double *x = malloc((size_t)nq * (size_t)(2 * dim + 1 + nb) * sizeof *x);
  FEA_CHECK(x, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the face values of element %lld",
            (long long)e);
  double *ds = x + (size_t)nq * dim, *normal = ds + nq, *phi = normal + (size_t)nq * dim;
  fea_status st = FEA_SUCCESS;
  for (int side = 0; side < 2 * dim && st == FEA_SUCCESS; side++) {
    if (!(pb->face_sides >> side & 1u)) continue;
    const fea_elastic_condition *ec = &pb->elastic->sides[side];
    if (!fe && ec->type != FEA_ELASTIC_SPRING) continue;
    const fea_quadrature *qf = &pb->face_quad[side / 2];
    int touches = 0;
    st = fea_bspline_face_values_normal(s, e, side, qf, &touches, x, ds, phi, normal);
    if (st != FEA_SUCCESS || !touches) continue;
    st = face_terms(pb, ec, qf->npts, x, ds, phi, normal, nb, Ke, fe);
  }
  free(x);
  return st;
}

/* The upper triangle of Ke (blocks j >= i) += w B_i^T C(x) B_j: B_(a, i)
 * is the Voigt strain of phi_i e_a (normal entries d_a phi_i, shears
 * d_q phi_i on component p and d_p phi_i on q). */
static fea_status tensor_block(const fea_problem *pb, const double *x, double w, const double *g,
                               int nb, double *B, double *Ke) {
  const int dim = pb->space->dim, nc = pb->space->ncomp, nv = FEA_VOIGT(dim), n = nb * nc;
  double C[36];
  FEA_CALL(fea_form_elastic_tensor(pb, x, C));
  double *CB = B + (size_t)n * nv;
  for (int i = 0; i < nb; i++)
    for (int a = 0; a < nc; a++) {
      double *b = B + (size_t)(a + nc * i) * nv;
      for (int k = 0; k < nv; k++) {
        const int p = fea_form_elastic_voigt_pair(dim, k, 0),
                  r = fea_form_elastic_voigt_pair(dim, k, 1);
        b[k] = (a == p ? g[i * dim + r] : 0.0) + (p != r && a == r ? g[i * dim + p] : 0.0);
      }
      double *cb = CB + (size_t)(a + nc * i) * nv;
      for (int k = 0; k < nv; k++) {
        double v = 0;
        for (int l = 0; l < nv; l++) v += C[k * nv + l] * b[l];
        cb[k] = w * v;
      }
    }
  for (int i = 0; i < nb; i++)
    for (int j = i; j < nb; j++)
      for (int a = 0; a < nc; a++)
        for (int bb = 0; bb < nc; bb++) {
          const double *bi = B + (size_t)(a + nc * i) * nv, *cj = CB + (size_t)(bb + nc * j) * nv;
          double v = 0;
          for (int k = 0; k < nv; k++) v += bi[k] * cj[k];
          Ke[(size_t)(a + nc * i) * n + (size_t)(bb + nc * j)] += v;
        }
  return FEA_SUCCESS;
}

fea_status fea_form_elastic_system(const fea_problem *pb, fea_index e, const fea_element_values *ev,
                                   double *Ke, double *fe) {
  const fea_elasticity_desc *ed = pb->elastic;
  const int nb = ev->nb, dim = ev->dim, nc = pb->space->ncomp, n = nb * nc;
  if (Ke) memset(Ke, 0, (size_t)n * (size_t)n * sizeof *Ke);
  if (fe) memset(fe, 0, (size_t)n * sizeof *fe);
  /* With a tensor: the strain vectors of the element's functions and C times them. */
  double *B = NULL;
  if (Ke && ed->C_fn) {
    B = malloc((size_t)n * (size_t)FEA_VOIGT(dim) * 2 * sizeof *B);
    FEA_CHECK(B, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d strain vectors", n);
  }
  for (int q = 0; q < ev->nq; q++) {
    const double *x = ev->x + (size_t)q * dim, *g = ev->dphi + (size_t)q * nb * dim;
    if (B) {
      const fea_status st = tensor_block(pb, x, ev->w[q], g, nb, B, Ke);
      if (st != FEA_SUCCESS) {
        free(B);
        return st;
      }
    } else if (Ke) {
      double lambda, mu;
      FEA_CALL(fea_form_elastic_lame(pb, x, &lambda, &mu));
      const double wl = ev->w[q] * lambda, wm = ev->w[q] * mu;
      /* Block (i, j) of Ke, entry (a, b): lambda d_a phi_i d_b phi_j
       * + mu (d_b phi_i d_a phi_j + delta_ab grad phi_i . grad phi_j);
       * the upper triangle, mirrored below. */
      for (int i = 0; i < nb; i++) {
        const double *gi = g + (size_t)i * dim;
        for (int j = i; j < nb; j++) {
          const double *gj = g + (size_t)j * dim;
          double dot = 0;
          for (int k = 0; k < dim; k++) dot += gi[k] * gj[k];
          for (int a = 0; a < nc; a++)
            for (int b = 0; b < nc; b++) {
              const double v = wl * gi[a] * gj[b] + wm * (gi[b] * gj[a] + (a == b ? dot : 0.0));
              Ke[(size_t)(a + nc * i) * n + (size_t)(b + nc * j)] += v;
            }
        }
      }
    }
    if (fe && ed->body_force) {
      double f[FEA_MAX_COMPONENTS] = {0};
      ed->body_force(x, f, ed->body_force_user);
      for (int c = 0; c < nc; c++)
        if (!isfinite(f[c])) {
          free(B);
          return bad_point(pb, "a component of the body force f", f[c], x, dim);
        }
      const double *phi = ev->phi + (size_t)q * nb;
      for (int i = 0; i < nb; i++)
        for (int c = 0; c < nc; c++) fe[c + nc * i] += ev->w[q] * f[c] * phi[i];
    }
  }
  free(B);
  if (Ke) /* the blocks below the diagonal, from those above */
    for (int i = 0; i < nb; i++)
      for (int j = i + 1; j < nb; j++)
        for (int a = 0; a < nc; a++)
          for (int b = 0; b < nc; b++)
            Ke[(size_t)(b + nc * j) * n + (size_t)(a + nc * i)] =
                Ke[(size_t)(a + nc * i) * n + (size_t)(b + nc * j)];
  return (fe || (Ke && pb->robin_sides)) && pb->face_sides ? face_loads(pb, e, nb, Ke, fe)
                                                           : FEA_SUCCESS;
}

/* The rigid-body modes at x (translations, then rotations about x, y, z in
 * 3D or z in 2D): modes[m * dim + c], component c of mode m. */
static int rigid_modes_at(int dim, const double *x, double *modes) {
  const int nm = dim == 2 ? 3 : 6;
  memset(modes, 0, (size_t)nm * (size_t)dim * sizeof *modes);
  for (int c = 0; c < dim; c++) modes[c * dim + c] = 1.0;
  static const int pair[3][2] = {{1, 2}, {2, 0}, {0, 1}};
  for (int r = 0; r < nm - dim; r++) {
    const int a = pair[dim == 2 ? 2 : r][0], b = pair[dim == 2 ? 2 : r][1];
    modes[(dim + r) * dim + a] = -x[b];
    modes[(dim + r) * dim + b] = x[a];
  }
  return nm;
}

/* G[m][n] += sum over points ds k v_m . v_n. */
static fea_status spring_gram_face(const fea_problem *pb, const fea_elastic_condition *bc, int npts,
                                   const double *x, const double *ds, double G[6][6]) {
  const int dim = pb->space->dim;
  for (int q = 0; q < npts; q++) {
    const double *xq = x + (size_t)q * dim;
    double k, v[6 * 3];
    FEA_CALL(spring_at(pb, bc, xq, &k));
    const int nm = rigid_modes_at(dim, xq, v);
    for (int m = 0; m < nm; m++)
      for (int n = 0; n < nm; n++) {
        double dot = 0;
        for (int c = 0; c < dim; c++) dot += v[m * dim + c] * v[n * dim + c];
        G[m][n] += ds[q] * k * dot;
      }
  }
  return FEA_SUCCESS;
}

fea_status fea_form_elastic_spring_gram(const fea_problem *pb, double G[6][6]) {
  const fea_space *s = pb->space;
  const int dim = s->dim;
  for (int m = 0; m < 6; m++)
    for (int n = 0; n < 6; n++) G[m][n] = 0.0;
  if (!pb->robin_sides) return FEA_SUCCESS;
  const fea_index ne = s->num_elements;
  const int nb = s->dofs_per_element;
  int nq = 1;
  if (pb->lfaces)
    nq = pb->lfaces->npts;
  else
    for (int k = 0; k < dim; k++)
      if (pb->face_quad[k].npts > nq) nq = pb->face_quad[k].npts;
  double *x = malloc((size_t)nq * (size_t)(2 * dim + 1 + nb) * sizeof *x);
  FEA_CHECK(x, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the face values of %d points", nq);
  double *ds = x + (size_t)nq * dim, *normal = ds + nq, *phi = normal + (size_t)nq * dim;
  fea_status st = FEA_SUCCESS;
  if (pb->lfaces) {
    for (fea_index j = 0; j < pb->lfaces->count && st == FEA_SUCCESS; j++) {
      const fea_elastic_condition *ec = facet_condition(pb, j);
      if (ec->type != FEA_ELASTIC_SPRING) continue;
      fea_lagrange_face_values_normal(pb, j, x, ds, phi, normal);
      st = spring_gram_face(pb, ec, nq, x, ds, G);
    }
  } else {
    for (fea_index e = 0; e < ne && st == FEA_SUCCESS; e++)
      for (int side = 0; side < 2 * dim && st == FEA_SUCCESS; side++) {
        const fea_elastic_condition *ec = &pb->elastic->sides[side];
        if (!(pb->face_sides >> side & 1u) || ec->type != FEA_ELASTIC_SPRING) continue;
        const fea_quadrature *qf = &pb->face_quad[side / 2];
        int touches = 0;
        st = fea_bspline_face_values_normal(s, e, side, qf, &touches, x, ds, phi, normal);
        if (st == FEA_SUCCESS && touches) st = spring_gram_face(pb, ec, qf->npts, x, ds, G);
      }
  }
  free(x);
  return st;
}

/* The rigid-body modes that neither the fixed DoFs (Gram matrix G of the
 * modes at those DoFs) nor the springs (S, fea_form_elastic_spring_gram's)
 * remove: each part is scaled to unit trace first (both are positive
 * semidefinite, so the sum's kernel is the modes that neither removes,
 * whatever their units), then an LDL^T of the sum in which a pivot below
 * 1e-10 of its diagonal entry counts as zero names a free mode. The names go
 * into free_modes ("" when none is free), translations first, then
 * rotations, in api-elasticity.c's order. */
void fea_elastic_free_modes(int dim, const double G[6][6], const double S[6][6], char *free_modes,
                            size_t len) {
  static const char axis[3] = {'x', 'y', 'z'};
  const int nm = dim == 2 ? 3 : 6;
  double A[6][6], tg = 0, ts = 0;
  for (int m = 0; m < nm; m++) tg += G[m][m], ts += S[m][m];
  for (int m = 0; m < nm; m++)
    for (int n = 0; n < nm; n++)
      A[m][n] = (tg > 0 ? G[m][n] / tg : 0.0) + (ts > 0 ? S[m][n] / ts : 0.0);
  size_t used = 0;
  double L[6][6] = {{0}}, D[6] = {0};
  if (len) free_modes[0] = '\0';
  for (int m = 0; m < nm; m++) {
    double d = A[m][m];
    for (int k = 0; k < m; k++) d -= L[m][k] * L[m][k] * D[k];
    const int dependent = !(d > 1e-10 * A[m][m]) || A[m][m] == 0;
    D[m] = dependent ? 0.0 : d;
    for (int n = m + 1; n < nm; n++) {
      double l = A[n][m];
      for (int k = 0; k < m; k++) l -= L[n][k] * L[m][k] * D[k];
      L[n][m] = dependent ? 0.0 : l / d;
    }
    if (!dependent) continue;
    char name[32];
    if (m < dim)
      snprintf(name, sizeof name, "translation in %c", axis[m]);
    else
      snprintf(name, sizeof name, "rotation about %c", axis[dim == 2 ? 2 : m - dim]);
    used += (size_t)snprintf(free_modes + used, used < len ? len - used : 0, "%s%s",
                             used ? ", " : "", name);
  }
}
