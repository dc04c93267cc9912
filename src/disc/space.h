/* The space object and the element interface every space kind implements.
 * Forms, assembly, error norms and (later) the solvers see elements only
 * through this interface: DoFs of an element, and basis values and physical
 * gradients at quadrature points. */
#ifndef FEA_INTERNAL_SPACE_H
#define FEA_INTERNAL_SPACE_H

#include <feaccel/space.h>

#include "bspline.h"
#include "internal/object.h"
#include "quadrature.h"

typedef enum fea_space_kind { FEA_SPACE_LAGRANGE = 0, FEA_SPACE_BSPLINE = 1 } fea_space_kind;

/* An element's basis at the points of a quadrature rule, in physical coordinates. */
typedef struct fea_element_values {
  int nq, nb, dim;
  double *x;    /* nq * dim physical points */
  double *w;    /* nq: rule weight times |det J| */
  double *phi;  /* nq * nb: phi[q * nb + i] */
  double *dphi; /* nq * nb * dim: dphi[(q * nb + i) * dim + k] = d phi_i / d x_k */
  /* Tensor-product elements under a tensor rule (B-spline spaces, and
   * Lagrange cells that are axis-aligned boxes when factors_only is set): the 1D
   * factors of phi and dphi, so that forms can sum-factorize. t1d is NULL
   * where the space fills only the products; tensor_valid says whether the
   * last element_values call filled it. */
  int tnp[3], tnq[3]; /* functions and rule points per direction (1 beyond dim) */
  double *t1d;        /* row (k, a) at (k FEA_QUAD_MAX_1D + a) FEA_ELEMENT_T1D_LD: tnp[k]
                         * values at 1D point a, then tnp[k] physical derivatives */
  int tensor_valid;
  /* Where tensor_valid and the rule has 1D weights (fea_quadrature.w1d):
   * those times the element's length in x_k, so that w at point (a, b, c)
   * is w1d[0][a] w1d[1][b] w1d[2][c] up to rounding; else w1d_valid = 0. */
  double w1d[3][FEA_QUAD_MAX_1D];
  int w1d_valid;
  /* The caller's request (0 after alloc: the tables wanted): its forms work
   * from x, w and the 1D factors alone, so where element_values fills the
   * factors (tensor_valid) it may leave phi and dphi unfilled. */
  int factors_only;
  double *scratch; /* the forms' sum-factorization work (scratch_len doubles) */
  size_t scratch_len;
} fea_element_values;

/* Doubles per (direction, 1D point) row of fea_element_values.t1d. */
#define FEA_ELEMENT_T1D_LD (2 * (FEA_BSPLINE_MAX_DEGREE + 1))

/* Whether the last element_values call filled phi and dphi. */
static inline int fea_element_values_have_tables(const fea_element_values *ev) {
  return !(ev->factors_only && ev->tensor_valid);
}

/* Buffers sized for a space and a rule; reused across elements. */
fea_status fea_element_values_alloc(const fea_space *s, const fea_quadrature *q,
                                    fea_element_values *ev);
void fea_element_values_free(fea_element_values *ev);

struct fea_space_ops {
  /* The element's DoFs (dofs_per_element, local order matching element_values). */
  void (*element_dofs)(const fea_space *s, fea_index e, fea_index *dofs);
  /* Basis values and physical gradients at the rule's points mapped into element e.
   * The rule lives on the reference cell of the space's elements. */
  fea_status (*element_values)(const fea_space *s, fea_index e, const fea_quadrature *q,
                               fea_element_values *ev);
  /* The element containing physical point x and x's reference coordinates in it;
   * FEA_ERR_INVALID_ARG when x is outside the domain. Not const: a Lagrange
   * space builds its point-location grid on first use (thread-safe). */
  fea_status (*locate)(fea_space *s, const double *x, fea_index *e, double *ref);
  /* Interpolant coefficients (num_dofs) of g. */
  fea_status (*interpolate)(const fea_space *s, fea_scalar_fn g, void *user, double *coeffs);
  /* Release impl. */
  void (*destroy)(fea_space *s);
};

struct fea_space {
  FEA_OBJECT_HEADER; /* references: the creator plus every object built on it */
  fea_space_kind kind;
  struct fea_mesh *mesh; /* Lagrange: holds a reference; B-splines: NULL */
  fea_cell_type cell;    /* reference cell of the elements */
  int dim;
  int degree[3];
  fea_index num_dofs;
  fea_index num_elements;
  int dofs_per_element;
  fea_index elements[3]; /* per direction when structured (B-splines, structured meshes), else 0 */
  fea_index num_boundary_dofs;
  fea_index *boundary_dofs; /* sorted */
  /* The ne x nb element-DoF table where the space keeps one (Lagrange), for
   * read-only use by what is built on it (operators, kernels) instead of a
   * copy of its own; NULL where the DoFs are computed per element. */
  const fea_index *element_dof_table;
  const struct fea_space_ops *ops;
  void *impl;
  /* Components per basis function, 1..FEA_MAX_COMPONENTS (1: a scalar
   * space). Every field above counts scalar basis functions: the ops, the
   * element values and boundary_dofs are the scalar space's. A vector DoF is
   * c + ncomp * i for component c of basis function i (interleaved,
   * docs/spaces.md), so with ncomp = 1 the numbering is the scalar one. */
  int ncomp;
};

/* The most components a space takes (fea_space_set_num_components()). */
#define FEA_MAX_COMPONENTS 8

/* Vector DoFs of s: ncomp per scalar basis function. */
static inline fea_index fea_space_total_dofs(const fea_space *s) {
  return s->num_dofs * (fea_index)s->ncomp;
}
/* Vector DoFs of one element: ncomp per element basis function. */
static inline int fea_space_element_size(const fea_space *s) {
  return s->dofs_per_element * s->ncomp;
}
/* Element e's vector DoFs (fea_space_element_size entries, interleaved:
 * local c + ncomp * j is component c of local function j); vdofs must
 * hold that many (space.c). */
void fea_space_element_vdofs(const fea_space *s, fea_index e, fea_index *vdofs);
/* FEA_ERR_UNSUPPORTED naming `what` when s has more than one component:
 * the guard of what takes scalar spaces only so far (space.c). */
fea_status fea_space_require_scalar(const fea_space *s, const char *what);

/* Shared construction (src/disc/space.c): the object with a context
 * reference; its kind's ops->destroy frees impl at the last release. */
fea_status fea_space_alloc(fea_context *ctx, fea_space **out);

/* B-spline specifics (src/disc/space-bspline.c). */
typedef struct fea_bspline_space {
  fea_knots knots[3];
  double lower[3], upper[3];    /* with a geometry: the parameter range (the map is geo's) */
  struct fea_geometry_map *geo; /* NULL: the box; else the patch's map (owned copy) */
} fea_bspline_space;

/* Lagrange constructor (src/disc/space-lagrange.c) and B-spline constructor
 * (src/disc/space-bspline.c); the public functions validate, then call these. */
fea_status fea_space_lagrange_build(struct fea_mesh *mesh, int order, fea_lagrange_nodes nodes,
                                    fea_space **out);
/* Coefficients in fine of the coarse function, direction by direction (nested spaces). */
fea_status fea_space_bspline_transfer(const fea_space *coarse, const double *cc,
                                      const fea_space *fine, double *fc);
/* geo (may be NULL) is copied; the knots must refine it. */
fea_status fea_space_bspline_build(fea_context *ctx, int dim, const fea_knots knots[3],
                                   const double lower[3], const double upper[3],
                                   const struct fea_geometry_map *geo, fea_space **out);

/* The values at the points of the (dim - 1)-dimensional rule qf of
 * B-spline element e's face on side (fea_patch_side: direction side / 2, its low
 * or high end): *touches = 0 when e has no face there; else x (npts x dim),
 * the surface weights ds (rule weight times the face's measure) and the
 * element's nb basis values per point (phi[q * nb + i]). */
fea_status fea_bspline_face_values(const fea_space *s, fea_index e, int side,
                                   const fea_quadrature *qf, int *touches, double *x, double *ds,
                                   double *phi);
/* The same with the outward unit normals (npts x dim) into normal, unless
 * NULL. */
fea_status fea_bspline_face_values_normal(const fea_space *s, fea_index e, int side,
                                          const fea_quadrature *qf, int *touches, double *x,
                                          double *ds, double *phi, double *normal);
/* coeffs on B-spline space s, sampled at samples^dim points per element (2..16),
 * written as a VTU file of linear cells with the node field `name`
 * (src/disc/space-vtu.c). */
fea_status fea_space_bspline_write_vtu(fea_space *s, const double *coeffs, int samples,
                                       const char *path, const char *name);
/* Whether B-spline DoF i lies on side (its index is 0 or n_k - 1 in direction side / 2). */
int fea_bspline_dof_on_side(const fea_space *s, fea_index i, int side);

/* The B-spline space of a complete, checked descriptor: its knot vectors
 * (given, or uniform open with d->n elements) on the box (space-bspline.c). */
fea_status fea_space_bspline_from_desc(fea_context *ctx, const fea_bspline_desc *d,
                                       fea_space **out);

/* Values (and gradients, unless NULL) of the function with coeffs at npts
 * checked physical points (src/disc/space-functions.c). */
fea_status fea_space_evaluate_points(fea_space *s, const double *coeffs, fea_index npts,
                                     const double *points, double *values, double *gradients);
/* The coefficients in fine of the coarse function (spaces of one kind and
 * dimension); FEA_ERR_INVALID_ARG when fine does not contain it. */
fea_status fea_space_transfer_coeffs(fea_space *coarse, const double *coarse_coeffs,
                                     const fea_space *fine, double *fine_coeffs);

/* A new space like the B-spline space `space` with direction dir's knots
 * replaced by *kn (knot insertion, degree elevation). */
fea_status fea_space_bspline_with_knots(const fea_space *space, int dir, const fea_knots *kn,
                                        fea_space **out);

#endif
