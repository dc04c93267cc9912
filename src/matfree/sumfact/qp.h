/* Sum factorization at quadrature points: the kernel for elements whose
 * geometry is not an axis-aligned box (mapped B-spline patches, NURBS,
 * curved or general quadrilateral and hexahedral meshes) and for the terms
 * the coefficient-space kernel (sumfact.h) has no place for: a reaction
 * c u, a variable sigma(x), a tensor A(x).
 *
 * What it computes. On the reference cell [0,1]^d of element e, with the
 * trial function's polynomial part P = sum_i x_i N_i (over a NURBS map the
 * basis is N_i / W, so u = P / W), the channels
 *   v = (P, dP/dr_0, .., dP/dr_{d-1})     (the value only where it is needed)
 * are interpolated to the tensor Gauss points by d one-dimensional passes
 * of (n_q x n) tables, multiplied there by a symmetric (nc x nc) matrix
 * Q(q) that holds everything about the point (weight, det J, J^-1, A, c, W),
 * and integrated back by the transposed passes: y_e = sum_q V(q)^T Q(q) V(q) x_e.
 * With G = J^-1 A J^-T w |det J| (J = dx/dr):
 *   no value channel:   Q = G
 *   value channel:      u = P / W, grad_r u = (grad_r P - u grad_r W) / W, so
 *                       Q_00 = (dW^T G dW / W^2 + c w |det J|) / W^2,
 *                       Q_0j = -(G dW)_j / W^3,  Q_ij = G_ij / W^2
 *                       (W = 1 and dW = 0 off NURBS: Q_00 = c w |det J|).
 *
 * Where Q comes from: STORED keeps Q at every point of every element
 * (nc (nc + 1) / 2 doubles per point, built at create; any coefficient);
 * RECOMPUTED keeps the geometry instead, as the coefficients of the
 * coordinates in the space's own basis (x_a W and W over NURBS: the space
 * contains the geometry, isoparametric; Lagrange Q_p holds the multilinear
 * cell map exactly), interpolates them with the same passes at every apply
 * and forms Q in registers: d (+ 1) doubles per DoF instead of
 * n_q^d nc (nc + 1) / 2 per element, for about twice the arithmetic. Constant
 * coefficients only (a callback per point per apply is the price STORED
 * avoids).
 *
 * Robin sides add face mass terms alpha u v, which no point of the cell
 * carries: the few elements with such a face keep that matrix (nb x nb,
 * from the forms) and add its product after the kernel.
 *
 * qp-setup.c      which problems it serves, the 1D tables, the geometry
 *                 coefficients, the stored Q, the face matrices, the ops tables
 * qp-body.h       the lane kernels (apply, diagonal, geometry), included once
 *                 per instruction set by qp-isa-*.c
 * qp-metric.h     Q from J, W, dW, A, c at one point, for doubles and lanes */
#ifndef FEA_MATFREE_SUMFACT_QP_H
#define FEA_MATFREE_SUMFACT_QP_H

#include <stdint.h>

#include "matfree/matfree-kernel.h"
#include "disc/quadrature.h"

#define QP_MAX_N 9               /* functions per direction: p <= 8 */
#define QP_MAX_Q FEA_QUAD_MAX_1D /* points per direction */
#define QP_MAX_NC 4              /* channels: value and 3 derivatives */
#define QP_MAX_PACK 10           /* QP_MAX_NC (QP_MAX_NC + 1) / 2 */
#define QP_GEO_PER_POINT 16      /* x (3), J (9), W, dW (3) */
#define QP_ALIGN 64

struct fea_sf_qp_state;

/* The lane kernels of one instruction set (qp-body.h). Each serves m <= lanes
 * elements of elems at once (the lanes beyond m repeat elems[0] with x = 0
 * and their results are dropped). */
typedef struct fea_sf_qp_isa {
  const char *name;
  int lanes;
  int (*available)(void);
  /* y[k * nb + i] = (K_e x_e)_i for e = elems[k] */
  void (*apply)(const struct fea_sf_qp_state *s, const fea_index *elems, int m,
                const double *x_full, double *y, double *scratch);
  /* the same with N functions and N points in every direction, by dim - 1
   * and N (NULL: none; the generic apply serves) */
  void (*fixed[3][QP_MAX_N + 1])(const struct fea_sf_qp_state *s, const fea_index *elems, int m,
                                 const double *x_full, double *y, double *scratch);
  /* d[k * nb + i] = (K_e)_ii */
  void (*diagonal)(const struct fea_sf_qp_state *s, const fea_index *elems, int m, double *d,
                   double *scratch);
  /* g[(k * nqt + q) * QP_GEO_PER_POINT + ..]: x, J (row-major dx_a / dr_b), W, dW / dr
   * at point q of e = elems[k], from the geometry coefficients */
  void (*geometry)(const struct fea_sf_qp_state *s, const fea_index *elems, int m, double *g,
                   double *scratch);
} fea_sf_qp_isa;

extern const fea_sf_qp_isa fea_sf_qp_isa_baseline, fea_sf_qp_isa_avx2, fea_sf_qp_isa_avx512;

typedef struct fea_sf_qp_state {
  int dim, nb;
  int nc;    /* channels: dim, or dim + 1 with the value first */
  int value; /* the value channel is used (NURBS or a reaction) */
  int npack; /* nc (nc + 1) / 2: Q's packed upper triangle, row by row */
  int n[3], nq[3], nqt;
  int recompute; /* Q formed at every apply from geo */
  int rational;  /* the geometry has a weight channel (NURBS) */
  int ngc;       /* geometry channels per DoF: dim, + 1 with W */
  const fea_sf_qp_isa *isa;
  /* the apply that runs: a fixed-size one of isa where the sizes have one */
  void (*apply)(const struct fea_sf_qp_state *s, const fea_index *elems, int m,
                const double *x_full, double *y, double *scratch);
  int fixed; /* apply is a fixed-size instantiation */
  fea_index ne, ndofs;
  fea_index nel[3]; /* element indices per direction with their own tables (1: one for all) */
  double *tab[3];   /* per direction nel x (B: nq x n, then D: nq x n), D = dN/dr on [0, 1] */
  double w1[3][QP_MAX_Q];
  const fea_index *edofs; /* ne x nb: the caller's or edofs_own */
  fea_index *edofs_own;
  /* STORED: Q of the points, by batches of isa->lanes consecutive elements,
   * lane-interleaved: entry i (point q, packed p: i = q npack + p) of
   * element e at [((e / W) nqt npack + i) W + e % W] (ne rounded up to W) */
  double *Q;
  double *geo; /* RECOMPUTED (and at create): ndofs x ngc, x_a W then W */
  /* Robin sides: the face matrices (alpha u v, nb x nb) of the elements
   * with a face on one, added after the point kernel; robin_of[e] is e's
   * matrix or -1 (NULL without Robin sides). */
  int32_t *robin_of;
  double *R;
  fea_index nrobin;
  double sigma, reaction; /* RECOMPUTED: the constant coefficients */
  fea_index scratch;      /* doubles per call */
  double flops;           /* per element application */
  uint64_t bytes;
  char desc[96];
} fea_sf_qp_state;

/* The element indices per direction of element e (0 where the table is shared). */
static inline void fea_sf_qp_element_index(const fea_sf_qp_state *s, fea_index e,
                                           fea_index idx[3]) {
  idx[0] = idx[1] = idx[2] = 0;
  if (s->nel[0] == 1 && s->nel[1] == 1 && s->nel[2] == 1) return;
  for (int k = 0; k < s->dim; k++) {
    idx[k] = e % s->nel[k];
    e /= s->nel[k];
  }
}

/* Doubles of lane scratch a call needs with W lanes (qp-body.h's layout). */
fea_index fea_sf_qp_scratch_doubles(const fea_sf_qp_state *s, int W);

/* Packed index of (i, j), i <= j, of an nc x nc symmetric matrix. */
static inline int fea_sf_qp_pack(int nc, int i, int j) {
  return i * nc - i * (i - 1) / 2 + (j - i);
}

extern const fea_matfree_kernel_ops fea_matfree_kernel_sumfact_qp_stored;
extern const fea_matfree_kernel_ops fea_matfree_kernel_sumfact_qp_recomputed;

/* Whether the quadrature-point kernel serves the problem (recompute: the
 * RECOMPUTED way); else 0 and a sentence in why. */
int fea_sf_qp_supports(const fea_problem *pb, int recompute, char *why, size_t len);

#endif
