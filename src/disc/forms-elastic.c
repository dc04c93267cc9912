/* Element integrals of linear elasticity: the stiffness
 * a(u, v) = int lambda div u div v + 2 mu eps(u) : eps(v), the body force
 * f . v, and the traction h . v (or -p n . v) of the faces on loaded sides.
 * Element matrices are (nb ncomp)^2 in the interleaved order of the space's
 * vector DoFs (local c + ncomp i: component c of function i). */
#include <math.h>
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

/* One traction (or pressure) face's load at npts points: fe[c + nc i] +=
 * ds h_c phi_i, h = traction(x) or -p(x) n. */
static fea_status face_load(const fea_problem *pb, const fea_elastic_condition *bc, int npts,
                            const double *x, const double *ds, const double *phi,
                            const double *normal, int nb, double *fe) {
  const int dim = pb->space->dim, nc = pb->space->ncomp;
  for (int q = 0; q < npts; q++) {
    const double *xq = x + (size_t)q * dim, *pq = phi + (size_t)q * nb;
    double h[FEA_MAX_COMPONENTS] = {0};
    if (bc->type == FEA_ELASTIC_PRESSURE) {
      const double p = bc->pressure_fn ? bc->pressure_fn(xq, bc->pressure_user) : bc->pressure;
      if (!isfinite(p)) return bad_point(pb, "the pressure p", p, xq, dim);
      for (int c = 0; c < dim; c++) h[c] = -p * normal[(size_t)q * dim + c];
    } else {
      bc->traction(xq, h, bc->traction_user);
      for (int c = 0; c < nc; c++)
        if (!isfinite(h[c])) return bad_point(pb, "a component of the traction h", h[c], xq, dim);
    }
    for (int i = 0; i < nb; i++)
      for (int c = 0; c < nc; c++) fe[c + nc * i] += ds[q] * h[c] * pq[i];
  }
  return FEA_SUCCESS;
}

/* The loads of Lagrange element e's facets on loaded sides (pb->lfaces
 * lists them; their conditions point into pb->desc.sides, whose index is
 * the elasticity side, or into pb->parts, whose index is the part's). */
static fea_status lagrange_face_loads(const fea_problem *pb, fea_index e, int nb, double *fe) {
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
    /* The facet's condition points into desc.sides or into parts[i].bc. */
    const fea_boundary_condition *bc = lf->bc[j];
    const fea_elastic_condition *ec = NULL;
    if (bc >= pb->desc.sides && bc < pb->desc.sides + 6)
      ec = &pb->elastic->sides[bc - pb->desc.sides];
    for (int i = 0; !ec && i < pb->desc.num_parts; i++)
      if (bc == &pb->parts[i].bc) ec = &pb->elastic->parts[i].bc;
    fea_lagrange_face_values_normal(pb, j, x, ds, phi, normal);
    st = face_load(pb, ec, nq, x, ds, phi, normal, nb, fe);
  }
  free(x);
  return st;
}

/* The loads of element e's faces on the problem's traction and pressure sides. */
static fea_status face_loads(const fea_problem *pb, fea_index e, int nb, double *fe) {
  if (pb->lfaces) return lagrange_face_loads(pb, e, nb, fe);
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
    const fea_quadrature *qf = &pb->face_quad[side / 2];
    int touches = 0;
    st = fea_bspline_face_values_normal(s, e, side, qf, &touches, x, ds, phi, normal);
    if (st != FEA_SUCCESS || !touches) continue;
    st = face_load(pb, &pb->elastic->sides[side], qf->npts, x, ds, phi, normal, nb, fe);
  }
  free(x);
  return st;
}

fea_status fea_form_elastic_system(const fea_problem *pb, fea_index e, const fea_element_values *ev,
                                   double *Ke, double *fe) {
  const fea_elasticity_desc *ed = pb->elastic;
  const int nb = ev->nb, dim = ev->dim, nc = pb->space->ncomp, n = nb * nc;
  if (Ke) memset(Ke, 0, (size_t)n * (size_t)n * sizeof *Ke);
  if (fe) memset(fe, 0, (size_t)n * sizeof *fe);
  for (int q = 0; q < ev->nq; q++) {
    const double *x = ev->x + (size_t)q * dim, *g = ev->dphi + (size_t)q * nb * dim;
    if (Ke) {
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
        if (!isfinite(f[c])) return bad_point(pb, "a component of the body force f", f[c], x, dim);
      const double *phi = ev->phi + (size_t)q * nb;
      for (int i = 0; i < nb; i++)
        for (int c = 0; c < nc; c++) fe[c + nc * i] += ev->w[q] * f[c] * phi[i];
    }
  }
  if (Ke) /* the blocks below the diagonal, from those above */
    for (int i = 0; i < nb; i++)
      for (int j = i + 1; j < nb; j++)
        for (int a = 0; a < nc; a++)
          for (int b = 0; b < nc; b++)
            Ke[(size_t)(b + nc * j) * n + (size_t)(a + nc * i)] =
                Ke[(size_t)(a + nc * i) * n + (size_t)(b + nc * j)];
  return fe && pb->face_sides ? face_loads(pb, e, nb, fe) : FEA_SUCCESS;
}
