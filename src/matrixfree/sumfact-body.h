/* The sum-factorization batch kernels as inline templates; included once per
 * instruction set by sumfact-isa-*.c with
 *   SF_W        lanes (elements per batch)
 *   SF_TARGET   the function attribute of that instruction set (or nothing)
 *   SF_ISA_NAME, SF_ISA_VAR, SF_ISA_AVAILABLE
 *
 * Every function here carries SF_TARGET: GCC will not inline a function into
 * one built for another target, and the vector type must be lowered the same
 * way on both sides. The sizes are arguments of always_inline bodies; the
 * instantiations pass constants, so the compiler sees fixed trip counts
 * (unrolled, registers for the accumulators) while the generic kernel passes
 * the runtime sizes through the same code. */
#include <stddef.h>

#include "sumfact.h"

/* Contract to FMA: in ISO C mode GCC keeps a * b + c as two roundings, and
 * here the fused form is both faster and more accurate. */
#if defined(__clang__)
#pragma clang fp contract(fast)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=fast")
#endif

typedef double sf_vd __attribute__((vector_size(SF_W * sizeof(double))));

#define SF_INLINE static inline __attribute__((always_inline)) SF_TARGET

/* out[o][j][t] (+)= sum_i M[j * so + i * si] in[o][i][t]: direction contraction
 * of a tensor laid out [outer][nin][inner] into [outer][nout][inner]. With
 * so = nin, si = 1 it applies an nout x nin table (values at points from
 * coefficients); with so = 1, si = nout its transpose. */
SF_INLINE void sf_contract(int nout, int nin, int inner, int outer, const sf_vd *restrict M, int so,
                           int si, const sf_vd *restrict in, sf_vd *restrict out, int add) {
  for (int o = 0; o < outer; o++)
    for (int j = 0; j < nout; j++)
      for (int t = 0; t < inner; t++) {
        sf_vd acc = add ? out[(o * nout + j) * inner + t] : (sf_vd){0};
        for (int i = 0; i < nin; i++) acc += M[j * so + i * si] * in[(o * nin + i) * inner + t];
        out[(o * nout + j) * inner + t] = acc;
      }
}

/* Tables T (nq x n): forward maps n coefficients to nq points. */
#define SF_FWD(T, n, nq, inner, outer, in, out, add) \
  sf_contract(nq, n, inner, outer, T, n, 1, in, out, add)
#define SF_BWD(T, n, nq, inner, outer, in, out, add) \
  sf_contract(n, nq, inner, outer, T, 1, n, in, out, add)

SF_INLINE void sf_body1(int n0, int q0, const sf_batch *b) {
  const sf_vd *D0 = (const sf_vd *)b->D[0], *c = (const sf_vd *)b->c;
  sf_vd *g = (sf_vd *)b->work;
  SF_FWD(D0, n0, q0, 1, 1, (const sf_vd *)b->x, g, 0);
  for (int q = 0; q < q0; q++) g[q] *= c[0] * b->w[q];
  SF_BWD(D0, n0, q0, 1, 1, g, (sf_vd *)b->y, 0);
}

/* 2D: [i1][i0] -> B0, D0 along 0 -> [i1][q0] -> along 1 -> gradients at
 * [q1][q0], scaled, then the transposes back. 8 contractions. */
SF_INLINE void sf_body2(int n0, int n1, int q0, int q1, const sf_batch *b) {
  const sf_vd *B0 = (const sf_vd *)b->B[0], *D0 = (const sf_vd *)b->D[0];
  const sf_vd *B1 = (const sf_vd *)b->B[1], *D1 = (const sf_vd *)b->D[1];
  const sf_vd *c = (const sf_vd *)b->c, *x = (const sf_vd *)b->x;
  sf_vd *y = (sf_vd *)b->y;
  sf_vd *tb = (sf_vd *)b->work, *td = tb + q0 * n1;
  sf_vd *g0 = td + q0 * n1, *g1 = g0 + q0 * q1;
  SF_FWD(B0, n0, q0, 1, n1, x, tb, 0);
  SF_FWD(D0, n0, q0, 1, n1, x, td, 0);
  SF_FWD(B1, n1, q1, q0, 1, td, g0, 0); /* d/dxi_0 */
  SF_FWD(D1, n1, q1, q0, 1, tb, g1, 0); /* d/dxi_1 */
  for (int q = 0; q < q0 * q1; q++) {
    double wq = b->w[q];
    g0[q] *= c[0] * wq;
    g1[q] *= c[1] * wq;
  }
  SF_BWD(B1, n1, q1, q0, 1, g0, td, 0);
  SF_BWD(D1, n1, q1, q0, 1, g1, tb, 0);
  SF_BWD(D0, n0, q0, 1, n1, td, y, 0);
  SF_BWD(B0, n0, q0, 1, n1, tb, y, 1);
}

/* 3D: along 0 (B0, D0), along 1 (three products), along 2 (the three
 * gradient components), scaled, then the same 8 contractions transposed. */
SF_INLINE void sf_body3(int n0, int n1, int n2, int q0, int q1, int q2, const sf_batch *b) {
  const sf_vd *B0 = (const sf_vd *)b->B[0], *D0 = (const sf_vd *)b->D[0];
  const sf_vd *B1 = (const sf_vd *)b->B[1], *D1 = (const sf_vd *)b->D[1];
  const sf_vd *B2 = (const sf_vd *)b->B[2], *D2 = (const sf_vd *)b->D[2];
  const sf_vd *c = (const sf_vd *)b->c, *x = (const sf_vd *)b->x;
  sf_vd *y = (sf_vd *)b->y;
  const int st = q0 * n1 * n2, su = q0 * q1 * n2, sg = q0 * q1 * q2;
  sf_vd *tb = (sf_vd *)b->work, *td = tb + st;
  sf_vd *ubb = td + st, *ubd = ubb + su, *udb = ubd + su;
  sf_vd *g0 = udb + su, *g1 = g0 + sg, *g2 = g1 + sg;
  SF_FWD(B0, n0, q0, 1, n1 * n2, x, tb, 0);
  SF_FWD(D0, n0, q0, 1, n1 * n2, x, td, 0);
  SF_FWD(B1, n1, q1, q0, n2, tb, ubb, 0);
  SF_FWD(D1, n1, q1, q0, n2, tb, ubd, 0);
  SF_FWD(B1, n1, q1, q0, n2, td, udb, 0);
  SF_FWD(B2, n2, q2, q0 * q1, 1, udb, g0, 0);
  SF_FWD(B2, n2, q2, q0 * q1, 1, ubd, g1, 0);
  SF_FWD(D2, n2, q2, q0 * q1, 1, ubb, g2, 0);
  for (int q = 0; q < sg; q++) {
    double wq = b->w[q];
    g0[q] *= c[0] * wq;
    g1[q] *= c[1] * wq;
    g2[q] *= c[2] * wq;
  }
  SF_BWD(B2, n2, q2, q0 * q1, 1, g0, udb, 0);
  SF_BWD(B2, n2, q2, q0 * q1, 1, g1, ubd, 0);
  SF_BWD(D2, n2, q2, q0 * q1, 1, g2, ubb, 0);
  SF_BWD(B1, n1, q1, q0, n2, udb, td, 0);
  SF_BWD(D1, n1, q1, q0, n2, ubd, tb, 0);
  SF_BWD(B1, n1, q1, q0, n2, ubb, tb, 1);
  SF_BWD(D0, n0, q0, 1, n1 * n2, td, y, 0);
  SF_BWD(B0, n0, q0, 1, n1 * n2, tb, y, 1);
}

#define SF_CAT2(a, b) a##b
#define SF_CAT(a, b) SF_CAT2(a, b)
#define SF_FN(name) SF_CAT(name, SF_CAT(_, SF_ISA_VAR))

/* The instantiations: N = p + 1 functions and points in every direction. */
#define SF_INSTANTIATE(N)                                                                       \
  static SF_TARGET void SF_FN(sf_k1_##N)(const sf_batch *b) { sf_body1(N, N, b); }              \
  static SF_TARGET void SF_FN(sf_k2_##N)(const sf_batch *b) { sf_body2(N, N, N, N, b); }        \
  static SF_TARGET void SF_FN(sf_k3_##N)(const sf_batch *b) { sf_body3(N, N, N, N, N, N, b); }
SF_INSTANTIATE(2)
SF_INSTANTIATE(3)
SF_INSTANTIATE(4)
SF_INSTANTIATE(5)
SF_INSTANTIATE(6)
SF_INSTANTIATE(7)
SF_INSTANTIATE(8)
SF_INSTANTIATE(9)

static SF_TARGET void SF_FN(sf_generic)(const sf_batch *b) {
  switch (b->dim) {
  case 1: sf_body1(b->n[0], b->nq[0], b); break;
  case 2: sf_body2(b->n[0], b->n[1], b->nq[0], b->nq[1], b); break;
  default: sf_body3(b->n[0], b->n[1], b->n[2], b->nq[0], b->nq[1], b->nq[2], b); break;
  }
}

#define SF_ROW(d) {NULL, NULL, SF_FN(sf_k##d##_2), SF_FN(sf_k##d##_3), SF_FN(sf_k##d##_4), \
                   SF_FN(sf_k##d##_5), SF_FN(sf_k##d##_6), SF_FN(sf_k##d##_7),             \
                   SF_FN(sf_k##d##_8), SF_FN(sf_k##d##_9)}

const sf_isa SF_CAT(fea_sf_isa_, SF_ISA_VAR) = {
  .name = SF_ISA_NAME,
  .lanes = SF_W,
  .available = SF_ISA_AVAILABLE,
  .fixed = {SF_ROW(1), SF_ROW(2), SF_ROW(3)},
  .generic = SF_FN(sf_generic),
};
