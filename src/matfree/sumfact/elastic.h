/* Sum factorization for linear elasticity (fea_problem_create_elasticity):
 * the kernel of FEA_OPERATOR_MATFREE_SUMFACT on systems.
 *
 * What it computes. Each of the dim components u_c of the trial function is
 * a scalar function of the space's basis; its channels (dP_c/dr_0 ..
 * dP_c/dr_{d-1}, and the value P_c first over a NURBS map, where
 * u_c = P_c / W as in qp.h) are interpolated to the tensor Gauss points by
 * the same one-dimensional passes as the scalar kernel at quadrature points
 * (qp-body.h), component by component. At a point the physical gradient is
 * g_ck = du_c/dx_k = sum_j K_kj dP_c/dr_j + k_k P_c (K = J^-T / W,
 * k = -K dW / W: zero off NURBS), the stress times the weight
 *   S_ck = wm (g_ck + g_kc) + delta_ck wl tr g,   wl = w |det J| lambda, wm = w |det J| mu,
 * and the transposed map takes S back to the channels of each component
 * (dP_c/dr_j <- sum_k K_kj S_ck, P_c <- sum_k k_k S_ck), which the
 * transposed passes integrate: y_e = K_e x_e with K_e the element matrix of
 * forms-elastic.c, up to rounding.
 *
 * Two ways to have the point terms:
 * - BOX: axis-aligned box elements (a structured box mesh, a B-spline space
 *   without a map) and a constant material: K is diag(1 / h_k), |det J| the
 *   product of the element's lengths, so nothing is kept per point: the
 *   element lengths per direction and the 1D tables only.
 * - STORED: any tensor-product element (mapped or NURBS patches, general
 *   quadrilateral and hexahedral meshes) and E(x), nu(x): per point wl, wm,
 *   K (d x d) and, over NURBS, k (d): 2 + d^2 (+ d) doubles per point, built
 *   at create from the geometry (the scalar kernel's geometry pass, qp.h) and
 *   the material at the point (fea_form_elastic_lame: a bad E or nu is
 *   refused there, naming x).
 *
 * DoFs are the space's vector DoFs, interleaved (local c + ncomp i): the
 * caller's element table lists them (ne x nb ncomp); the gather and the
 * scatter read one index per function (its component 0: the others follow)
 * and, in apply_add (the direct update strategies), read and add into the
 * reduced vectors through the free rows, without the operator's embedded
 * copies.
 *
 * elastic-setup.c      which problems it serves, the tables, the point terms,
 *                      the ops tables
 * elastic-body.h       the lane kernels (apply, diagonal), included once per
 *                      instruction set by elastic-isa-*.c */
#ifndef FEA_MATFREE_SUMFACT_ELASTIC_H
#define FEA_MATFREE_SUMFACT_ELASTIC_H

#include <stdint.h>

#include "matfree/matfree-kernel.h"
#include "qp.h"

#define EL_MAX_NCH 4 /* channels per component: the value and 3 derivatives */
#define EL_MAX_PP 14 /* doubles per stored point: wl, wm, K (9), k (3) */

struct fea_sf_el_state;

/* y[k * nbv + c + nc i] = (K_e x_e)_(c, i) for e = elems[k] (tg NULL: apply);
 * or, with a target (apply_add, matfree-kernel.h), the results added where
 * tg says, x being tg's (the reduced vector with tg->free_rows), y unused;
 * returns the adds done. */
typedef uint64_t (*fea_sf_el_fn)(const struct fea_sf_el_state *s, const fea_index *elems, int m,
                                 const double *x, double *y, const fea_matfree_target *tg,
                                 double *scratch);
typedef void (*fea_sf_el_diag_fn)(const struct fea_sf_el_state *s, const fea_index *elems, int m,
                                  double *d, double *scratch);

/* The lane kernels of one instruction set (elastic-body.h): each serves
 * m <= lanes elements of elems (lanes beyond m repeat elems[0] with x = 0;
 * their results are dropped). */
typedef struct fea_sf_el_isa {
  const char *name;
  int lanes;
  int (*available)(void);
  /* the element products (fea_sf_el_fn); [0] STORED, [1] BOX */
  fea_sf_el_fn apply[2];
  /* the same with N functions and N points in every direction, by way, dim - 1 and N
   * (NULL: none) */
  fea_sf_el_fn fixed[2][3][QP_MAX_N + 1];
  /* d[k * nbv + c + nc i] = (K_e)_(c i, c i) */
  fea_sf_el_diag_fn diagonal;
} fea_sf_el_isa;

extern const fea_sf_el_isa fea_sf_el_isa_baseline, fea_sf_el_isa_avx2, fea_sf_el_isa_avx512;

typedef struct fea_sf_el_state {
  int dim, nc;  /* components: dim */
  int ns, nbv;  /* scalar functions per element, and vector DoFs (ns nc) */
  int nch;      /* channels per component: dim, + 1 with the value (NURBS) */
  int rational; /* NURBS: the value channel and k */
  int box;      /* BOX point terms (else STORED) */
  int npp;      /* STORED: doubles per point (2 + dim^2 + rational dim) */
  int n[3], nq[3], nqt;
  const fea_sf_el_isa *isa;
  fea_sf_el_fn apply; /* a fixed-size one of isa where the sizes have one */
  int fixed;
  fea_index ne;
  fea_index nel[3]; /* element indices per direction with their own tables (1: one for all) */
  double *tab[3];   /* per direction nel x (B: nq x n, then D: nq x n) on [0, 1] */
  double *len[3];   /* BOX: per direction nel element lengths (J_kk) */
  /* n = n_q in every direction (the default rule): the collocation matrices
   * C_k (n_q x n_q, row a: the derivatives at point a of the Lagrange
   * polynomials through the Gauss points), the same for every element, since
   * the element's functions span the polynomials of degree n - 1; the
   * kernels then interpolate values and differentiate at the points. */
  int colloc;
  double colloc_tab[3][QP_MAX_Q * QP_MAX_Q];
  double w1[3][QP_MAX_Q];
  double lambda, mu;      /* BOX: the constant material (plane stress applied) */
  const fea_index *edofs; /* ne x nbv: the caller's or edofs_own */
  fea_index *edofs_own;
  /* ne x ns: the vector DoF of component 0 of each function (c + nc i: the
   * others follow it), 32-bit where the DoFs fit, else NULL (the gather reads
   * edofs): the gather's index stream, a sixth of edofs' in 3D (B-splines
   * p = 2: 108 B per element instead of 648, which the gather waited on). */
  int32_t *base32;
  /* STORED: the points' terms by batches of isa->lanes consecutive elements,
   * lane-interleaved: entry i = q npp + p of element e at
   * [((e / W) nqt npp + i) W + e % W] (ne rounded up to W) */
  double *P;
  fea_index scratch; /* doubles per call */
  double flops;      /* per element application */
  uint64_t bytes;
  char desc[128];
} fea_sf_el_state;

/* The element indices per direction of element e (0 where the table is shared). */
static inline void fea_sf_el_element_index(const fea_sf_el_state *s, fea_index e,
                                           fea_index idx[3]) {
  idx[0] = idx[1] = idx[2] = 0;
  if (s->nel[0] == 1 && s->nel[1] == 1 && s->nel[2] == 1) return;
  for (int k = 0; k < s->dim; k++) {
    idx[k] = e % s->nel[k];
    e /= s->nel[k];
  }
}

/* Doubles of lane scratch a call needs with W lanes (elastic-body.h's layout). */
fea_index fea_sf_el_scratch_doubles(const fea_sf_el_state *s, int W);

/* BOX: the kernel for axis-aligned boxes and a constant material;
 * STORED: the point terms kept (any tensor-product geometry, E(x), nu(x)). */
extern const fea_matfree_kernel_ops fea_matfree_kernel_sumfact_elastic_box;
extern const fea_matfree_kernel_ops fea_matfree_kernel_sumfact_elastic_stored;

#endif
