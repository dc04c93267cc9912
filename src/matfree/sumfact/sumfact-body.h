/* The sum-factorization batch kernels as inline templates; included once per
 * instruction set by sumfact-isa-*.c with
 *   SF_W        lanes (elements per batch)
 *   SF_TARGET   the function attribute of that instruction set (or nothing)
 *   SF_ISA_NAME, SF_ISA_VAR, SF_ISA_AVAILABLE
 *
 * The operator is applied in coefficient space: with a constant sigma and an
 * axis-aligned box map, K_e = sum_k c_k (x)_j (j == k ? S_j : M_j) exactly
 * (the tensor Gauss rule factors over the directions), so the quadrature
 * points never appear at run time: 2 (2D) or 3 (3D) passes of n x n
 * tables instead of 2 d passes of n_q x n tables there and back.
 *
 * Every function here carries SF_TARGET: GCC will not inline a function into
 * one built for another target, and the vector type must be lowered the same
 * way on both sides. The sizes are arguments of always_inline bodies; the
 * instantiations pass constants, so the compiler sees fixed trip counts
 * (unrolled, registers for the accumulators) while the generic kernel passes
 * the runtime sizes through the same code. */
#include <stddef.h>
#include <string.h>

#include "sumfact.h"

/* Contract to FMA: in ISO C mode GCC keeps a * b + c as two roundings, and
 * here the fused form is both faster and more accurate. */
#if defined(__clang__)
#pragma clang fp contract(fast)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=fast")
/* The generated line batches (sumfact-lines-gen.h) are long straight-line
 * functions: GCC's variable-location tracking gave up on them and started
 * over without, which made the sanitizer build take four minutes on this
 * file. Line information for profiles and debuggers stays. */
#pragma GCC optimize("no-var-tracking-assignments")
#endif

typedef double fea_sf_vd __attribute__((vector_size(SF_W * sizeof(double))));

/* The instantiations' loops over one line's n inputs and outputs must be
 * unrolled completely for the accumulators and inputs to live in registers;
 * GCC at -O2 keeps them as loops over stack arrays (measured: 40 % of the
 * FMA rate), so ask for it. */
#define SF_UNROLL _Pragma("GCC unroll 9")
#define SF_UNROLL_LINES _Pragma("GCC unroll 8")
#define SF_UNROLL_TILE _Pragma("GCC unroll 16")
#define SF_UNROLL_TILE2 _Pragma("GCC unroll 32")

/* The inline bodies are left out of UBSan's instrumentation: unrolled, its
 * checks on every fixed array index made this file take two minutes to
 * compile in the sanitizer pass (8 s without); ASan still checks their
 * memory accesses, and the unit tests compare every result with the
 * element matrices. */
#define SF_INLINE static inline __attribute__((always_inline, no_sanitize("undefined"))) SF_TARGET

/* One pass along a direction of a tensor laid out [outer][n][inner]: with
 * u, v the inputs and P, Q, R n x n lane tables (symmetric),
 *   o1[o][j][t] = sum_i P[j][i] u[o][i][t] (+ sum_i Q[j][i] v[o][i][t] when Q)
 *   o2[o][j][t] = sum_i R[j][i] u[o][i][t]                          (when R)
 * The n inputs of one line are loaded once and kept in registers while all
 * n outputs are formed: one table load per multiply-add, no reload of the
 * inputs (the instantiations pass constant n, inner, outer, hq = Q used,
 * hr = R used: the pointers themselves are not constants). SF_LINE_FN makes
 * one line (o, t), fea_sf_pass runs all of them. */
#define SF_LINE_FN(name, UNROLL)                                                        \
  SF_INLINE void name(int n, int inner, int o, int t, const fea_sf_vd *restrict u,      \
                      const fea_sf_vd *restrict v, const fea_sf_vd *restrict P,         \
                      const fea_sf_vd *restrict Q, const fea_sf_vd *restrict R,         \
                      fea_sf_vd *restrict o1, fea_sf_vd *restrict o2, int hq, int hr) { \
    fea_sf_vd uu[SF_MAX_N] = {0}, vv[SF_MAX_N] = {0};                                   \
    UNROLL                                                                              \
    for (int i = 0; i < n; i++) {                                                       \
      uu[i] = u[(o * n + i) * inner + t];                                               \
      if (hq) vv[i] = v[(o * n + i) * inner + t];                                       \
    }                                                                                   \
    UNROLL                                                                              \
    for (int j = 0; j < n; j++) {                                                       \
      fea_sf_vd acc = P[j * n] * uu[0];                                                 \
      UNROLL                                                                            \
      for (int i = 1; i < n; i++) acc += P[j * n + i] * uu[i];                          \
      if (hq) {                                                                         \
        UNROLL                                                                          \
        for (int i = 0; i < n; i++) acc += Q[j * n + i] * vv[i];                        \
      }                                                                                 \
      o1[(o * n + j) * inner + t] = acc;                                                \
      if (hr) {                                                                         \
        fea_sf_vd acc2 = R[j * n] * uu[0];                                              \
        UNROLL                                                                          \
        for (int i = 1; i < n; i++) acc2 += R[j * n + i] * uu[i];                       \
        o2[(o * n + j) * inner + t] = acc2;                                             \
      }                                                                                 \
    }                                                                                   \
  }

/* The line, unrolled for the instantiations (fixed n), rolled for the
 * generic kernel: unrolling loops of run-time length only grows the code
 * (and its compile time, tenfold under the sanitizers). */
#define SF_ROLLED
SF_LINE_FN(fea_sf_line, SF_UNROLL)
SF_LINE_FN(fea_sf_line_rolled, SF_ROLLED)

SF_INLINE void fea_sf_pass(int n, int inner, int outer, const fea_sf_vd *restrict u,
                           const fea_sf_vd *restrict v, const fea_sf_vd *restrict P,
                           const fea_sf_vd *restrict Q, const fea_sf_vd *restrict R,
                           fea_sf_vd *restrict o1, fea_sf_vd *restrict o2, int hq, int hr,
                           int rolled) {
  if (rolled) {
    for (int o = 0; o < outer; o++)
      for (int t = 0; t < inner; t++)
        fea_sf_line_rolled(n, inner, o, t, u, v, P, Q, R, o1, o2, hq, hr);
  } else if (n <= 2 && outer <= 8 && inner <= 8) { /* Q1: all lines unrolled, all in registers */
    SF_UNROLL_LINES
    for (int o = 0; o < 8; o++) {
      if (o >= outer) break;
      SF_UNROLL_LINES
      for (int t = 0; t < 8; t++) {
        if (t >= inner) break;
        fea_sf_line(n, inner, o, t, u, v, P, Q, R, o1, o2, hq, hr);
      }
    }
  } else {
    for (int o = 0; o < outer; o++)
      for (int t = 0; t < inner; t++) fea_sf_line(n, inner, o, t, u, v, P, Q, R, o1, o2, hq, hr);
  }
}

#define SF_T(k) ((const fea_sf_vd *)b->T[k])

/* 1D: y = c0 S0 x. */
SF_INLINE void fea_sf_body1(int rolled, int n0, const fea_sf_batch *b) {
  fea_sf_pass(n0, 1, 1, (const fea_sf_vd *)b->x, NULL, SF_T(SF_CS0), NULL, NULL, (fea_sf_vd *)b->y,
              NULL, 0, 0, rolled);
}

/* 2D, x as [i1][i0]: a = M0 x, b = S0 x along 0; y = (c1 S1) a + (c0 M1) b
 * along 1. 4 n^3 multiply-adds. */
SF_INLINE void fea_sf_body2(int rolled, int n0, int n1, const fea_sf_batch *b) {
  fea_sf_vd *ta = (fea_sf_vd *)b->work, *tb = ta + n0 * n1;
  fea_sf_pass(n0, 1, n1, (const fea_sf_vd *)b->x, NULL, SF_T(SF_M0), NULL, SF_T(SF_S0), ta, tb, 0,
              1, rolled);
  fea_sf_pass(n1, n0, 1, ta, tb, SF_T(SF_CS1), SF_T(SF_CM1), NULL, (fea_sf_vd *)b->y, NULL, 1, 0,
              rolled);
}

/* 3D, x as [i2][i1][i0]: a = M0 x, b = S0 x; aa = M1 a, t = (c1 S1) a +
 * (c0 M1) b; y = (c2 S2) aa + M2 t. 7 n^4 multiply-adds. */
SF_INLINE void fea_sf_body3(int rolled, int n0, int n1, int n2, const fea_sf_batch *b) {
  const int N = n0 * n1 * n2;
  /* Q1: the intermediates as locals, which the compiler keeps in registers. */
  fea_sf_vd local[4 * 8];
  fea_sf_vd *ta = N <= 8 ? local : (fea_sf_vd *)b->work, *tb = ta + N, *taa = tb + N, *tt = taa + N;
  fea_sf_pass(n0, 1, n1 * n2, (const fea_sf_vd *)b->x, NULL, SF_T(SF_M0), NULL, SF_T(SF_S0), ta, tb,
              0, 1, rolled);
  fea_sf_pass(n1, n0, n2, ta, tb, SF_T(SF_CS1), SF_T(SF_CM1), SF_T(SF_M1), tt, taa, 1, 1, rolled);
  fea_sf_pass(n2, n0 * n1, 1, taa, tt, SF_T(SF_CS2), SF_T(SF_M2), NULL, (fea_sf_vd *)b->y, NULL, 1,
              0, rolled);
}

#define SF_CAT2(a, b) a##b
#define SF_CAT(a, b) SF_CAT2(a, b)
#define SF_FN(name) SF_CAT(name, SF_CAT(_, SF_ISA_VAR))

/* The instantiations: N = p + 1 functions and points in every direction. */
#define SF_INSTANTIATE(N)                                                                         \
  static SF_TARGET void SF_FN(fea_sf_k1_##N)(const fea_sf_batch *b) { fea_sf_body1(0, N, b); }    \
  static SF_TARGET void SF_FN(fea_sf_k2_##N)(const fea_sf_batch *b) { fea_sf_body2(0, N, N, b); } \
  static SF_TARGET void SF_FN(fea_sf_k3_##N)(const fea_sf_batch *b) { fea_sf_body3(0, N, N, N, b); }
SF_INSTANTIATE(2)
SF_INSTANTIATE(3)
SF_INSTANTIATE(4)
SF_INSTANTIATE(5)
SF_INSTANTIATE(6)
SF_INSTANTIATE(7)
SF_INSTANTIATE(8)
SF_INSTANTIATE(9)

static SF_TARGET void SF_FN(fea_sf_generic)(const fea_sf_batch *b) {
  switch (b->dim) {
  case 1: fea_sf_body1(1, b->n[0], b); break;
  case 2: fea_sf_body2(1, b->n[0], b->n[1], b); break;
  default: fea_sf_body3(1, b->n[0], b->n[1], b->n[2], b); break;
  }
}

/* Line batches (fea_sf_plan.line_ok): lane l of DoF i is at
 * base[fcls[i]] + foff[i] + l * lstride[fcls[i]]. */
typedef long long fea_sf_vi __attribute__((vector_size(SF_W * sizeof(long long))));

/* Lanes of a and b chosen by m (0 .. W-1 from a, W .. 2W-1 from b): GCC's
 * __builtin_shuffle. Clang has no two-source shuffle whose mask is a value
 * rather than constants, so there (the fuzz build, docs/fuzzing.md) it is
 * written lane by lane, which its optimizer turns back into permutes where
 * the mask is known after unrolling. */
#if defined(__clang__)
/* A statement expression rather than a function: a vector argument of a
 * function without AVX enabled draws clang's -Wpsabi. The mask is variadic:
 * written as (fea_sf_vi){1, 2, ...} it holds commas. */
#define SF_SHUFFLE2(a, b, ...)                                                                     \
  __extension__({                                                                                  \
    const fea_sf_vd fea_sf_a_ = (a), fea_sf_b_ = (b);                                              \
    const fea_sf_vi fea_sf_m_ = __VA_ARGS__;                                                       \
    fea_sf_vd fea_sf_r_;                                                                           \
    for (int fea_sf_q_ = 0; fea_sf_q_ < SF_W; fea_sf_q_++)                                         \
      fea_sf_r_[fea_sf_q_] = fea_sf_m_[fea_sf_q_] < SF_W ? fea_sf_a_[fea_sf_m_[fea_sf_q_]]         \
                                                         : fea_sf_b_[fea_sf_m_[fea_sf_q_] - SF_W]; \
    fea_sf_r_;                                                                                     \
  })
#else
#define SF_SHUFFLE2(...) __builtin_shuffle(__VA_ARGS__)
#endif

/* Lanes l >= t of v moved up by t, the lowest t lanes zero (0 < t < W):
 * one two-source permute with AVX-512. Masks index v (0 .. W-1) or the
 * zero vector (W). */
#if SF_W == 8
static const fea_sf_vi SF_FN(fea_sf_up)[8] = {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 0, 1, 2, 3, 4, 5, 6},
                                              {8, 8, 0, 1, 2, 3, 4, 5}, {8, 8, 8, 0, 1, 2, 3, 4},
                                              {8, 8, 8, 8, 0, 1, 2, 3}, {8, 8, 8, 8, 8, 0, 1, 2},
                                              {8, 8, 8, 8, 8, 8, 0, 1}, {8, 8, 8, 8, 8, 8, 8, 0}};
#elif SF_W == 4
static const fea_sf_vi SF_FN(fea_sf_up)[4] = {{0, 1, 2, 3},
                                              {4, 0, 1, 2},
                                              {4, 4, 0, 1},
                                              {4, 4, 4, 0}};
#else
#error "line batches need SF_W 4 or 8"
#endif

#define SF_SHIFT_UP(v, t) SF_SHUFFLE2((v), (fea_sf_vd){0}, SF_FN(fea_sf_up)[t])

/* Lanes l < W - 1 of v moved down by one, t into lane W - 1. */
#if SF_W == 8
#define SF_SHIFT_DOWN1(v, t) SF_SHUFFLE2((v), (fea_sf_vd){(t)}, (fea_sf_vi){1, 2, 3, 4, 5, 6, 7, 8})
#else
#define SF_SHIFT_DOWN1(v, t) SF_SHUFFLE2((v), (fea_sf_vd){(t)}, (fea_sf_vi){1, 2, 3, 4})
#endif

/* The W lane values p[0], p[st], ..., p[(W - 1) st] of one DoF along a line:
 * one vector load at unit stride, masked loads and permutes for short
 * strides (where the ISA has them), a gather otherwise. */
SF_INLINE void SF_FN(fea_sf_lane_load)(const void *s, const double *p, ptrdiff_t st, fea_sf_vd *v) {
  if (st == 1) {
    memcpy(v, p, sizeof *v);
    return;
  }
#if defined(SF_STRIDED)
  *v = st >= 2 && st <= 16 ? SF_STRIDED(s, p, st) : SF_GATHER(p, st);
#else
  (void)s;
  for (int l = 0; l < SF_W; l++) (*v)[l] = p[l * st];
#endif
}

/* The singles j0 .. j1 - 1 (fea_sf_plan.sg, .ss), all of stride st: a
 * constant where the callers switch on it, so that the lane loops unroll
 * with fixed offsets. */
SF_INLINE void SF_FN(fea_sf_singles_load)(const fea_sf_plan *s, const fea_index *base,
                                          const double *x, fea_sf_vd *Xv, int j0, int j1,
                                          ptrdiff_t st) {
  for (int j = j0; j < j1; j++) {
    const int i = s->sg.dof[j];
    SF_FN(fea_sf_lane_load)(s, x + base[s->fcls[i]] + s->foff[i], st, &Xv[i]);
  }
}

SF_INLINE void SF_FN(fea_sf_singles_add)(const fea_sf_plan *s, const fea_index *base,
                                         const double *Y, double *y, int j0, int j1, ptrdiff_t st) {
  for (int j = j0; j < j1; j++) {
    const int i = s->ss.dof[j];
    double *p = y + base[s->fcls[i]] + s->foff[i];
    const double *v = Y + i * SF_W;
    SF_UNROLL
    for (int l = 0; l < SF_W; l++) p[l * st] += v[l];
  }
}

/* Run k of the singles (equal strides) with its stride as a constant. */
#define SF_BY_STRIDE(fn, g, k, ...)                                   \
  do {                                                                \
    const int j0_ = (g)->run_start[k], j1_ = (g)->run_start[(k) + 1]; \
    switch ((g)->run_st[k]) {                                         \
    case 2: fn(__VA_ARGS__, j0_, j1_, 2); break;                      \
    case 3: fn(__VA_ARGS__, j0_, j1_, 3); break;                      \
    case 4: fn(__VA_ARGS__, j0_, j1_, 4); break;                      \
    case 5: fn(__VA_ARGS__, j0_, j1_, 5); break;                      \
    case 6: fn(__VA_ARGS__, j0_, j1_, 6); break;                      \
    case 8: fn(__VA_ARGS__, j0_, j1_, 8); break;                      \
    case 9: fn(__VA_ARGS__, j0_, j1_, 9); break;                      \
    case 12: fn(__VA_ARGS__, j0_, j1_, 12); break;                    \
    case 16: fn(__VA_ARGS__, j0_, j1_, 16); break;                    \
    default: fn(__VA_ARGS__, j0_, j1_, (g)->run_st[k]); break;        \
    }                                                                 \
  } while (0)

#if defined(SF_TILE_SLOTS)
#if SF_W != 8
#error "tiles need SF_W 8"
#endif

/* Tile k (fea_sf_plan.tile_*), stride ST a constant: its slots from ST
 * loads, then each DoF's lanes from its slot (those one lane on shifted
 * down, lane W - 1 from the entry after the tile). */
SF_INLINE void SF_FN(fea_sf_tile_load)(const fea_sf_plan *s, const fea_index *base, const double *x,
                                       fea_sf_vd *Xv, int k, const int ST) {
  const double *p = x + base[s->tile_cls[k]] + s->tile_off[k];
  fea_sf_vd S[SF_TILE_MAX_ST];
  SF_TILE_SLOTS(p, s->tile_lmask[k], ST, S);
  const short *sd = s->tile_sdof[k];
  SF_UNROLL_TILE2
  for (int sl = 0; sl < 2 * ST; sl++) {
    const int i = sd[sl];
    if (i < 0) continue;
    if (sl < ST)
      Xv[i] = S[sl];
    else
      Xv[i] = SF_SHIFT_DOWN1(S[sl - ST], p[sl + ST * (SF_W - 1)]);
  }
}

/* Full tile k: each DoF's lanes summed into its slot (those one lane on
 * shifted up, their lane W - 1 added to the entry after the tile), the
 * slots transposed back and added with ST vector read-modify-writes. */
SF_INLINE void SF_FN(fea_sf_tile_add)(const fea_sf_plan *s, const fea_index *base, const double *Y,
                                      double *y, int k, const int ST) {
  double *p = y + base[s->tile_cls[k]] + s->tile_off[k];
  const fea_sf_vd *Yv = (const fea_sf_vd *)Y;
  fea_sf_vd S[SF_TILE_MAX_ST];
  SF_UNROLL_TILE
  for (int q = 0; q < ST; q++) S[q] = (fea_sf_vd){0};
  const short *sd = s->tile_sdof[k];
  SF_UNROLL_TILE2
  for (int sl = 0; sl < 2 * ST; sl++) {
    const int i = sd[sl];
    if (i < 0) continue;
    if (sl < ST) {
      S[sl] += Yv[i];
    } else {
      S[sl - ST] += SF_SHIFT_UP(Yv[i], 1);
      p[sl + ST * (SF_W - 1)] += Y[i * SF_W + SF_W - 1];
    }
  }
  SF_TILE_ADD(p, ST, S);
}

/* Tile k with its stride as a constant (fea_sf_tile_stride's list). */
#define SF_BY_TILE(fn, s, k, ...)           \
  do {                                      \
    switch ((s)->tile_st[k]) {              \
    case 2: fn(__VA_ARGS__, k, 2); break;   \
    case 3: fn(__VA_ARGS__, k, 3); break;   \
    case 4: fn(__VA_ARGS__, k, 4); break;   \
    case 5: fn(__VA_ARGS__, k, 5); break;   \
    case 6: fn(__VA_ARGS__, k, 6); break;   \
    case 8: fn(__VA_ARGS__, k, 8); break;   \
    case 9: fn(__VA_ARGS__, k, 9); break;   \
    case 12: fn(__VA_ARGS__, k, 12); break; \
    default: fn(__VA_ARGS__, k, 16); break; \
    }                                       \
  } while (0)
#endif

/* v[0 .. W-1] transposed in place (entry l of v[j] <-> entry j of v[l]):
 * log2 W rounds that swap the off-diagonal h x h blocks, h = 1, 2, 4, each
 * a pair of two-source shuffles per pair of vectors. */
SF_INLINE void SF_FN(fea_sf_transpose)(fea_sf_vd *v) {
  SF_UNROLL
  for (int h = 1; h < SF_W; h *= 2) {
    fea_sf_vi lo, hi; /* indices: 0 .. W - 1 from a, W .. 2 W - 1 from b */
    for (int q = 0; q < SF_W; q++) {
      lo[q] = q & h ? SF_W + q - h : q;
      hi[q] = q & h ? SF_W + q : q + h;
    }
    SF_UNROLL
    for (int i = 0; i < SF_W; i++) {
      if (i & h) continue;
      const fea_sf_vd a = v[i], b = v[i + h];
      v[i] = SF_SHUFFLE2(a, b, lo);
      v[i + h] = SF_SHUFFLE2(a, b, hi);
    }
  }
}

/* Columns j .. j + W - 1 of a block's W x S row-major matrix at p (lane l's
 * entries in row l), transposed: v[t] holds column j + t's lanes. */
SF_INLINE void SF_FN(fea_sf_block_in)(const double *p, const int S, const int j, fea_sf_vd *v) {
  SF_UNROLL
  for (int l = 0; l < SF_W; l++) memcpy(&v[l], p + (ptrdiff_t)S * l + j, sizeof *v);
  SF_FN(fea_sf_transpose)(v);
}

/* The reverse: v[t] (column j + t's lanes) transposed back and added. */
SF_INLINE void SF_FN(fea_sf_block_out)(double *p, const int S, const int j, fea_sf_vd *v) {
  SF_FN(fea_sf_transpose)(v);
  SF_UNROLL
  for (int l = 0; l < SF_W; l++) {
    fea_sf_vd old;
    double *q = p + (ptrdiff_t)S * l + j;
    memcpy(&old, q, sizeof old);
    old += v[l];
    memcpy(q, &old, sizeof old);
  }
}

/* Block k (fea_sf_plan.block_*): group by group of W of its M columns, the
 * last shifted back to M - W (its columns that the group before loaded
 * are loaded again, the same values). */
SF_INLINE void SF_FN(fea_sf_block_load)(const fea_sf_plan *s, const fea_index *base,
                                        const double *x, fea_sf_vd *Xv, int k) {
  const int S = s->block_st[k], M = s->block_m[k];
  const double *p = x + base[s->block_cls[k]] + s->block_off[k];
  const short *dof = s->block_dof[k];
  for (int j0 = 0; j0 < M; j0 += SF_W) {
    const int j = j0 + SF_W <= M ? j0 : M - SF_W;
    fea_sf_vd v[SF_W];
    SF_FN(fea_sf_block_in)(p, S, j, v);
    SF_UNROLL
    for (int t = 0; t < SF_W; t++) {
      Xv[dof[j + t]] = v[t];
      const int i = s->block_next[k][j + t];
      if (i >= 0) Xv[i] = SF_SHIFT_DOWN1(v[t], p[(ptrdiff_t)S * SF_W + j + t]);
    }
  }
}

/* Block k's sums added back; in the shifted last group the columns that
 * the group before added are zero. */
SF_INLINE void SF_FN(fea_sf_block_add)(const fea_sf_plan *s, const fea_index *base, const double *Y,
                                       double *y, int k) {
  const int S = s->block_st[k], M = s->block_m[k];
  double *p = y + base[s->block_cls[k]] + s->block_off[k];
  const short *dof = s->block_dof[k];
  const fea_sf_vd *Yv = (const fea_sf_vd *)Y;
  for (int j0 = 0; j0 < M; j0 += SF_W) {
    const int j = j0 + SF_W <= M ? j0 : M - SF_W;
    fea_sf_vd v[SF_W];
    SF_UNROLL
    for (int t = 0; t < SF_W; t++) {
      v[t] = (fea_sf_vd){0};
      if (j + t < j0) continue;
      v[t] = Yv[dof[j + t]];
      const int i = s->block_next[k][j + t];
      if (i >= 0) {
        v[t] += SF_SHIFT_UP(Yv[i], 1);
        p[(ptrdiff_t)S * SF_W + j + t] += Y[i * SF_W + SF_W - 1];
      }
    }
    SF_FN(fea_sf_block_out)(p, S, j, v);
  }
}

/* Unit-stride DoFs (the chains') by vector loads, the tiles, the blocks,
 * then the other DoFs run by run of equal strides. */
static SF_TARGET void SF_FN(fea_sf_line_gather)(const fea_sf_plan *s, const fea_index *base,
                                                const double *x, double *X) {
  fea_sf_vd *Xv = (fea_sf_vd *)X;
  /* The lines of a batch are streams that the hardware prefetchers miss
   * (the lanes' loads at a stride, many streams at once): on the shared
   * machine of the measurements, where x and y do not stay in the L3, this
   * made 2D Q3/Q4 and 3D Q2 applies 1.2 - 2x faster. */
  for (int c = 0; c < s->nfclass && s->npf; c++) {
    const double *b = x + base[c];
    for (int k = s->pf_start[c]; k < s->pf_start[c + 1]; k++)
      __builtin_prefetch(b + s->pf_off[k], 0, 3);
  }
  const int nu = s->chain_start[s->nchain];
  for (int j = 0; j < nu; j++) {
    const int i = s->chain_dof[j];
    memcpy(&Xv[i], x + base[s->fcls[i]] + s->foff[i], sizeof *Xv);
  }
#if defined(SF_TILE_SLOTS)
  for (int k = 0; k < s->ntile; k++) SF_BY_TILE(SF_FN(fea_sf_tile_load), s, k, s, base, x, Xv);
#endif
  for (int k = 0; k < s->nblock; k++) SF_FN(fea_sf_block_load)(s, base, x, Xv, k);
  for (int k = 0; k < s->sg.nrun; k++)
    SF_BY_STRIDE(SF_FN(fea_sf_singles_load), &s->sg, k, s, base, x, Xv);
}

/* A chain of k DoFs from p (k a constant where the caller switches on it:
 * the shifts then take constant permutes): the lanes of DoF t summed
 * shifted by t into the vector at p; what moves past lane W - 1 is added
 * entry by entry after it. */
SF_INLINE void SF_FN(fea_sf_chain_add)(double *p, const int *d, const double *Y, const int k) {
  const fea_sf_vd *Yv = (const fea_sf_vd *)Y;
  fea_sf_vd acc = Yv[d[0]];
  SF_UNROLL
  for (int t = 1; t < k && t < SF_W; t++) acc += SF_SHIFT_UP(Yv[d[t]], t);
  fea_sf_vd old;
  memcpy(&old, p, sizeof old);
  old += acc;
  memcpy(p, &old, sizeof old);
  SF_UNROLL
  for (int u = 0; u + 1 < k; u++) { /* entry W + u: lane W + u - t of DoF t > u */
    double v = 0.0;
    for (int t = u + 1; t < k; t++)
      if (SF_W + u - t >= 0) v += Y[d[t] * SF_W + SF_W + u - t];
    p[SF_W + u] += v;
  }
}

/* Chains first (fea_sf_chain_add), then the full tiles, the blocks, and the DoFs of other
 * strides lane by lane, run by run of equal strides. */
static SF_TARGET void SF_FN(fea_sf_line_scatter)(const fea_sf_plan *s, const fea_index *base,
                                                 const double *Y, double *y) {
  for (int c = 0; c < s->nfclass && s->npf; c++) {
    double *b = y + base[c];
    for (int k = s->pf_start[c]; k < s->pf_start[c + 1]; k++)
      __builtin_prefetch(b + s->pf_off[k], 1, 3);
  }
  for (int ch = 0; ch < s->nchain; ch++) {
    const int *d = s->chain_dof + s->chain_start[ch];
    double *p = y + base[s->fcls[d[0]]] + s->foff[d[0]];
    switch (s->chain_start[ch + 1] - s->chain_start[ch]) {
    case 1: SF_FN(fea_sf_chain_add)(p, d, Y, 1); break;
    case 2: SF_FN(fea_sf_chain_add)(p, d, Y, 2); break;
    case 3: SF_FN(fea_sf_chain_add)(p, d, Y, 3); break;
    case 4: SF_FN(fea_sf_chain_add)(p, d, Y, 4); break;
    default: SF_FN(fea_sf_chain_add)(p, d, Y, s->chain_start[ch + 1] - s->chain_start[ch]); break;
    }
  }
#if defined(SF_TILE_SLOTS)
  for (int k = 0; k < s->ntile; k++)
    if (s->tile_full[k]) SF_BY_TILE(SF_FN(fea_sf_tile_add), s, k, s, base, Y, y);
#endif
  for (int k = 0; k < s->nblock; k++) SF_FN(fea_sf_block_add)(s, base, Y, y, k);
  for (int k = 0; k < s->ss.nrun; k++)
    SF_BY_STRIDE(SF_FN(fea_sf_singles_add), &s->ss, k, s, base, Y, y);
}

static SF_TARGET void SF_FN(fea_sf_bline_gather)(int nb, const fea_index *rows, const double *x,
                                                 double *X) {
  fea_sf_vd *Xv = (fea_sf_vd *)X;
  for (int i = 0; i < nb; i++) {
    fea_sf_vd v = {0};
    if (rows[i] >= 0) {
      const double *p = x + rows[i];
      SF_FN(fea_sf_lane_load)(NULL, p, rows[nb + i], &v);
    }
    Xv[i] = v;
  }
}

/* DoF by DoF, one read-modify-write of the lanes each, in order: DoFs
 * whose lanes overlap (shared with the neighbour along x) add one after
 * the other. */
static SF_TARGET void SF_FN(fea_sf_bline_scatter)(int nb, const fea_index *rows, const double *Y,
                                                  double *y) {
  const fea_sf_vd *Yv = (const fea_sf_vd *)Y;
  for (int i = 0; i < nb; i++) {
    if (rows[i] < 0) continue;
    double *p = y + rows[i];
    const ptrdiff_t st = rows[nb + i];
    if (st == 1) {
      fea_sf_vd old;
      memcpy(&old, p, sizeof old);
      old += Yv[i];
      memcpy(p, &old, sizeof old);
    } else {
      for (int l = 0; l < SF_W; l++) p[l * st] += Y[i * SF_W + l];
    }
  }
}

/* The kernel of a fused line batch (fea_sf_qline_body, the generated ones):
 * the first skip lanes of the nx = N^dim inputs X zeroed, then Y from X
 * with the shared tables (fea_sf_state.qtab); inlined where inl, else through
 * the state's instantiated kernel. */
SF_INLINE void SF_FN(fea_sf_fused_kernel)(const fea_sf_state *s, const int dim, const int N,
                                          int skip, fea_sf_vd *X, fea_sf_vd *Y, fea_sf_vd *work,
                                          const int inl) {
  const int nx = dim == 2 ? N * N : N * N * N;
  if (skip) {
    fea_sf_vi lane, keep;
    for (int l = 0; l < SF_W; l++) lane[l] = l;
    keep = lane >= (fea_sf_vi){0} + skip;
    SF_UNROLL
    for (int i = 0; i < nx; i++) X[i] = (fea_sf_vd)((fea_sf_vi)X[i] & keep);
  }
  fea_sf_batch b;
  b.dim = dim;
  b.n[0] = b.n[1] = b.n[2] = N;
  memcpy(b.T, s->qtab, sizeof b.T);
  b.x = (const double *)X;
  b.y = (double *)Y;
  b.work = (double *)work;
  if (!inl)
    s->fn(&b);
  else if (dim == 2)
    fea_sf_body2(0, N, N, &b);
  else
    fea_sf_body3(0, N, N, N, &b);
}

/* Fused line batch of a one-class unit-stride space (fea_sf_state.qline) with
 * N = 2 (Q1) in dimension dim: the chains' lanes loaded straight into
 * vectors, the kernel on them, and the results summed chain by chain into
 * y, all in one function so that nothing goes through the batch arrays. */
SF_INLINE void SF_FN(fea_sf_qline_body)(const fea_sf_state *s, const int dim, fea_index base,
                                        int skip, const double *x, double *y) {
  enum { N = 2 };
  const int nc = dim == 2 ? N : N * N; /* chains */
  fea_sf_vd X[N * N * N], Y[N * N * N], work[4 * N * N * N];
  const double *xb = x + base;
  double *yb = y + base;
  const fea_sf_plan *P = s->plan;
  for (int k = 0; k < P->npf; k++) { /* see fea_sf_line_gather */
    __builtin_prefetch(xb + P->pf_off[k], 0, 3);
    __builtin_prefetch(yb + P->pf_off[k], 1, 3);
  }
  SF_UNROLL
  for (int c = 0; c < nc; c++) {
    SF_UNROLL
    for (int t = 0; t < N; t++) memcpy(&X[c * N + t], xb + s->qoff[c] + t, sizeof *X);
  }
  SF_FN(fea_sf_fused_kernel)(s, dim, N, skip, X, Y, work, 1);
  SF_UNROLL
  for (int c = 0; c < nc; c++) {
    const int d[N] = {c * N, c * N + 1};
    SF_FN(fea_sf_chain_add)(yb + s->qoff[c], d, (const double *)Y, N);
  }
}

static SF_TARGET void SF_FN(fea_sf_qline2)(const fea_sf_state *s, fea_index base, int skip,
                                           const double *x, double *y) {
  SF_FN(fea_sf_qline_body)(s, 2, base, skip, x, y);
}

static SF_TARGET void SF_FN(fea_sf_qline3)(const fea_sf_state *s, fea_index base, int skip,
                                           const double *x, double *y) {
  SF_FN(fea_sf_qline_body)(s, 3, base, skip, x, y);
}

#if defined(SF_TILE_SLOTS)
/* Generated fused line batches (sumfact-lines-gen.h): the gather's and
 * scatter's statements are generated from the layout; these are the parts
 * every one of them shares. Left out of UBSan like the inline bodies (with
 * it the sanitizer build spent four minutes on this file); ASan checks
 * their memory accesses, unit-sumfact their results. */
#define SF_GLINE_FN static SF_TARGET __attribute__((no_sanitize("undefined")))
#define SF_GLINE_BEGIN(DIM, N, NFC)                                                             \
  /* sized for this element (not SF_MAX_N: a 2D Q3 batch 1.2x slower with */                    \
  /* 280 KB of stack frame spread over these arrays) */                                         \
  fea_sf_vd X[(DIM) == 2 ? (N) * (N) : (N) * (N) * (N)],                                        \
      Y[(DIM) == 2 ? (N) * (N) : (N) * (N) * (N)];                                              \
  fea_sf_vd work[(DIM) == 2 ? 2 * (N) * (N) : 4 * (N) * (N) * (N)], S[SF_TILE_MAX_ST], V[SF_W]; \
  const double *xc[NFC];                                                                        \
  double *yc[NFC];                                                                              \
  SF_UNROLL                                                                                     \
  for (int c = 0; c < NFC; c++) {                                                               \
    xc[c] = x + base[c];                                                                        \
    yc[c] = y + base[c];                                                                        \
  }                                                                                             \
  const fea_sf_plan *P_ = s->plan;                                                              \
  for (int c = 0; c < NFC; c++) /* see fea_sf_line_gather */                                    \
    for (int k = P_->pf_start[c]; k < P_->pf_start[c + 1]; k++) {                               \
      __builtin_prefetch(x + base[c] + P_->pf_off[k], 0, 3);                                    \
      __builtin_prefetch(y + base[c] + P_->pf_off[k], 1, 3);                                    \
    }                                                                                           \
  (void)S, (void)V; /* not every layout has tiles and blocks */                                 \
  const double *Yd = (const double *)Y

/* The first skip lanes zeroed, the kernel from X into Y: inlined for 3D Q2
 * (1.11x against calling it), called for the others (the same speed either
 * way, and their kernels inlined here made the sanitizer build compile this
 * file for four minutes instead of one). */
#define SF_GLINE_KERNEL(DIM, N) \
  SF_FN(fea_sf_fused_kernel)(s, (DIM), (N), skip, X, Y, work, (DIM) == 3 && (N) == 3)

/* A DoF of stride ST in no tile or block: its lanes added one by one. */
#define SF_GLINE_SINGLE_ADD(p, ST, v)                     \
  do {                                                    \
    double *p_ = (p);                                     \
    const fea_sf_vd v_ = (v);                             \
    SF_UNROLL                                             \
    for (int l = 0; l < SF_W; l++) p_[l * (ST)] += v_[l]; \
  } while (0)

#define SF_GLINE_CODE
#include "sumfact-lines-gen.h"
#undef SF_GLINE_CODE

#endif

#define SF_ROW(d)                                                                       \
  {                                                                                     \
    NULL, NULL, SF_FN(fea_sf_k##d##_2), SF_FN(fea_sf_k##d##_3), SF_FN(fea_sf_k##d##_4), \
        SF_FN(fea_sf_k##d##_5), SF_FN(fea_sf_k##d##_6), SF_FN(fea_sf_k##d##_7),         \
        SF_FN(fea_sf_k##d##_8), SF_FN(fea_sf_k##d##_9)                                  \
  }

const fea_sf_isa SF_CAT(fea_sf_isa_, SF_ISA_VAR) = {
    .name = SF_ISA_NAME,
    .lanes = SF_W,
    .available = SF_ISA_AVAILABLE,
    .fixed = {SF_ROW(1), SF_ROW(2), SF_ROW(3)},
    .generic = SF_FN(fea_sf_generic),
    .line_gather = SF_FN(fea_sf_line_gather),
    .line_scatter = SF_FN(fea_sf_line_scatter),
    .bline_gather = SF_FN(fea_sf_bline_gather),
    .bline_scatter = SF_FN(fea_sf_bline_scatter),
#if defined(SF_TILE_SLOTS)
    .tiles = 1,
#endif
    .qline = {NULL, SF_FN(fea_sf_qline2), SF_FN(fea_sf_qline3)},
#if defined(SF_TILE_SLOTS)
#if defined(SF_GLINE_TABLE)
    .gline = SF_GLINE_TABLE,
#endif
#endif
};
