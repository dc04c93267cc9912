/* The largest eigenvalue of a Q2 level on a box, from its Fourier symbol,
 * for the Chebyshev smoother's interval (smoother.c) instead of 20 Lanczos
 * products of the finest, most expensive level.
 *
 * Where it applies: Q2 on a structured box mesh of quadrilaterals or
 * hexahedra (not mapped), one component, a constant coefficient (no sigma_fn,
 * sigma_tensor, reaction_fn or element form), Dirichlet data on the whole
 * boundary, so that every free DoF is an interior node of the grid of
 * 2 N_k + 1 nodes per direction. Every cell is then a translate of cell 0
 * with its element matrix A_e, and the operator is A_e assembled over the
 * grid: translation invariant with period one cell, whose 2^d node types
 * (vertex or midpoint per direction) are the Bloch unknowns.
 *
 * Where A_e is also symmetric under the reflection of each axis (the
 * Laplacian's element matrix on a box is), the Dirichlet operator maps the
 * span of {sin(theta_k x_k / h_k)} over the node types into itself for each
 * theta_k = pi j / N_k, j = 1 .. N_k (x_k the node's coordinate: a vertex at
 * theta_k = pi is zero, so that frequency keeps only the midpoints of
 * direction k). These sine families have equal norms per type, so A and D
 * restricted to one of them are the real symmetric 2^d x 2^d matrices
 *   H_tt'(theta) = sum over pairs (a of type t, b of type t') of cell 0's
 *                  local nodes of A_e[a][b] prod_k cos(theta_k (x_bk - x_ak) / h_k),
 *   D_t = sum over a of type t of A_e[a][a] (an interior node's diagonal),
 * and the spectrum of D^-1 A is the union of those of D^-1/2 H(theta) D^-1/2
 * over the prod_k N_k frequencies: 2 N_k - 1 per direction, the free DoFs.
 * Checked against LAPACK on the assembled matrix (tests/unit/test-multigrid.c).
 *
 * The largest eigenvalue over the frequencies: every one up to
 * SYMBOL_EXHAUSTIVE of them; beyond, a lattice of candidates per direction
 * (the two lowest and three highest frequencies, and quarters of the range)
 * and an ascent from the best few to a frequency whose 3^d - 1 neighbours
 * are all lower. lambda_max(theta) is smooth and its maxima lie near the
 * highest frequencies for the Laplacian (at n = 48, 3D: at j = 47 in every
 * direction); the ascent equals the exhaustive search at every size and
 * aspect ratio tested (test-multigrid.c, and n = 8..64 offline). Lanczos's
 * 20 steps came out 0.4 % below this (1.3339 against 1.3393 at n = 48). */
#include <math.h>
#include <stdlib.h>

#include "disc/lagrange.h"
#include "disc/mesh.h"
#include "disc/problem.h"
#include "disc/space.h"
#include "internal/error.h"
#include "multigrid-impl.h"

#define PI 3.14159265358979323846
/* Frequencies searched one by one up to this many. */
#define SYMBOL_EXHAUSTIVE 4096
/* Candidate lattice per direction (candidates()). */
#define SYMBOL_CANDIDATES 8
/* Ascents start from this many best candidates. */
#define SYMBOL_STARTS 3

typedef struct symbol {
  int dim, types; /* types = 2^dim */
  fea_index N[3]; /* cells per direction */
  /* C[t][t'][c]: the sum of A_e over the pairs of types t, t' whose offset
   * class per direction (|x_b - x_a| / h in {0, 1/2, 1}, base 3, direction 0
   * fastest) is c. */
  double C[8][8][27];
  double diag[8];   /* D_t: an interior node's diagonal entry by type */
  double dscale[8]; /* D_t^-1/2, or 1 unscaled */
} symbol;

/* The problem's shape as the symbol needs it; 0 where it does not apply. */
static int symbol_applies(const fea_problem *pb, fea_index N[3]) {
  const fea_space *s = pb->space;
  const fea_mesh *m = s->mesh;
  if (!m || !m->structured || m->mapped || m->simplices || s->kind != FEA_SPACE_LAGRANGE ||
      s->degree[0] != 2 || s->ncomp != 1 || pb->elastic || pb->desc.sigma_fn ||
      pb->desc.sigma_tensor || pb->desc.reaction_fn || pb->desc.element_form ||
      fea_problem_has_faces(pb) || (m->dim != 2 && m->dim != 3))
    return 0;
  int nb = 1;
  fea_index interior = 1;
  for (int k = 0; k < 3; k++) {
    N[k] = k < m->dim ? m->n[k] : 1;
    if (k < m->dim) nb *= 3, interior *= 2 * N[k] - 1;
  }
  return s->dofs_per_element == nb && pb->num_free == interior;
}

/* Cell 0's local nodes as grid offsets {0, 1, 2}^dim (off[a], base 3, direction
 * 0 fastest) from their coordinates; 0 when they are not that grid. */
static int local_offsets(const fea_space *s, int nb, int *off) {
  const int dim = s->dim;
  const double *xyz = fea_space_lagrange_dof_coords(s);
  fea_index dofs[27];
  if (!xyz || nb > 27) return 0;
  s->ops->element_dofs(s, 0, dofs);
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int a = 0; a < nb; a++)
    for (int k = 0; k < dim; k++) {
      lo[k] = fmin(lo[k], xyz[dofs[a] * dim + k]);
      hi[k] = fmax(hi[k], xyz[dofs[a] * dim + k]);
    }
  int seen[27] = {0};
  for (int a = 0; a < nb; a++) {
    int o = 0;
    for (int k = dim - 1; k >= 0; k--) {
      const double t = 2.0 * (xyz[dofs[a] * dim + k] - lo[k]) / (hi[k] - lo[k]);
      const int r = (int)lround(t);
      if (!(hi[k] > lo[k]) || fabs(t - r) > 1e-9 || r < 0 || r > 2) return 0;
      o = 3 * o + r;
    }
    if (seen[o]++) return 0;
    off[a] = o;
  }
  return 1;
}

/* The offset class and type of a pair of local offsets; reflect: the offset
 * with direction k mirrored. */
static int digit(int o, int k) {
  for (int i = 0; i < k; i++) o /= 3;
  return o % 3;
}

static int reflect(int o, int k) {
  int p = 1;
  for (int i = 0; i < k; i++) p *= 3;
  return o + (2 - 2 * digit(o, k)) * p;
}

static int type_of(int o, int dim) {
  int t = 0;
  for (int k = 0; k < dim; k++) t |= (digit(o, k) & 1) << k;
  return t;
}

/* Cell 0's element matrix into sy's coefficients; *usable 0 where it is not
 * symmetric under each axis' reflection (then the sines do not decouple). */
static fea_status symbol_init(const fea_problem *pb, int scaled, symbol *sy, int *usable) {
  const fea_space *s = pb->space;
  const int dim = s->dim, nb = s->dofs_per_element;
  int off[27], at[27]; /* at[o]: the local node at offset o */
  *usable = local_offsets(s, nb, off);
  if (!*usable) return FEA_SUCCESS;
  for (int a = 0; a < nb; a++) at[off[a]] = a;
  double Ke[27 * 27], fe[27];
  fea_element_values ev;
  FEA_CALL(fea_element_values_alloc(s, &pb->quad, &ev));
  fea_status st = s->ops->element_values(s, 0, &pb->quad, &ev);
  if (st == FEA_SUCCESS) st = fea_form_stiffness_load(pb, &ev, Ke, fe);
  fea_element_values_free(&ev);
  FEA_CALL(st);
  double big = 0.0;
  for (int i = 0; i < nb * nb; i++) big = fmax(big, fabs(Ke[i]));
  for (int k = 0; k < dim && *usable; k++)
    for (int a = 0; a < nb && *usable; a++)
      for (int b = 0; b < nb && *usable; b++) {
        const double mirrored = Ke[at[reflect(off[a], k)] * nb + at[reflect(off[b], k)]];
        *usable = fabs(Ke[a * nb + b] - mirrored) <= 1e-12 * big;
      }
  if (!*usable) return FEA_SUCCESS;
  sy->dim = dim;
  sy->types = 1 << dim;
  double *diag = sy->diag;
  for (int a = 0; a < nb; a++)
    for (int b = 0; b < nb; b++) {
      int c = 0;
      for (int k = dim - 1; k >= 0; k--) c = 3 * c + abs(digit(off[a], k) - digit(off[b], k));
      sy->C[type_of(off[a], dim)][type_of(off[b], dim)][c] += Ke[a * nb + b];
    }
  for (int a = 0; a < nb; a++) diag[type_of(off[a], dim)] += Ke[a * nb + a];
  for (int t = 0; t < sy->types; t++) {
    FEA_CHECK(diag[t] > 0.0 && isfinite(diag[t]), pb->ctx, FEA_ERR_NOT_POSDEF,
              "an interior node's diagonal entry is %g; the smoother needs positive entries",
              diag[t]);
    sy->dscale[t] = scaled ? 1.0 / sqrt(diag[t]) : 1.0;
  }
  return FEA_SUCCESS;
}

/* The largest eigenvalue of the symmetric m x m matrix B (destroyed), by
 * cyclic Jacobi rotations (m <= 8: a few microseconds). */
static double sym_lambda_max(int m, double B[8][8]) {
  for (int sweep = 0; sweep < 50; sweep++) {
    double off = 0.0, norm = 0.0;
    for (int i = 0; i < m; i++)
      for (int j = 0; j < m; j++) {
        norm += B[i][j] * B[i][j];
        if (i != j) off += B[i][j] * B[i][j];
      }
    if (off <= 1e-30 * norm) break;
    for (int p = 0; p < m; p++)
      for (int q = p + 1; q < m; q++) {
        if (B[p][q] == 0.0) continue;
        const double tau = (B[q][q] - B[p][p]) / (2.0 * B[p][q]);
        const double t = (tau >= 0 ? 1.0 : -1.0) / (fabs(tau) + sqrt(1.0 + tau * tau));
        const double c = 1.0 / sqrt(1.0 + t * t), s = t * c;
        for (int k = 0; k < m; k++) { /* columns p, q */
          const double bp = B[k][p], bq = B[k][q];
          B[k][p] = c * bp - s * bq;
          B[k][q] = s * bp + c * bq;
        }
        for (int k = 0; k < m; k++) { /* rows p, q */
          const double bp = B[p][k], bq = B[q][k];
          B[p][k] = c * bp - s * bq;
          B[q][k] = s * bp + c * bq;
        }
      }
  }
  double top = B[0][0];
  for (int i = 1; i < m; i++) top = fmax(top, B[i][i]);
  return top;
}

/* lambda_max of the block of frequency (j_0, j_1, j_2), j_k in 1..N_k. */
static double block_max(const symbol *sy, const fea_index j[3]) {
  double cosv[3][3]; /* cos(theta_k * class / 2) for the classes 0, 1/2, 1 */
  int keep[3];       /* 0: theta_k = pi, the vertices of direction k drop out */
  for (int k = 0; k < sy->dim; k++) {
    const double th = PI * (double)j[k] / (double)sy->N[k];
    for (int c = 0; c < 3; c++) cosv[k][c] = cos(0.5 * th * c);
    keep[k] = j[k] < sy->N[k];
  }
  int act[8], m = 0;
  for (int t = 0; t < sy->types; t++) {
    int in = 1;
    for (int k = 0; k < sy->dim; k++) in = in && (keep[k] || (t >> k & 1));
    if (in) act[m++] = t;
  }
  double cprod[27];
  const int classes = sy->dim == 3 ? 27 : 9;
  for (int c = 0; c < classes; c++) {
    double v = 1.0;
    for (int k = 0, r = c; k < sy->dim; k++, r /= 3) v *= cosv[k][r % 3];
    cprod[c] = v;
  }
  double B[8][8];
  for (int p = 0; p < m; p++)
    for (int q = 0; q < m; q++) {
      double h = 0.0;
      for (int c = 0; c < classes; c++) h += sy->C[act[p]][act[q]][c] * cprod[c];
      B[p][q] = sy->dscale[act[p]] * h * sy->dscale[act[q]];
    }
  return sym_lambda_max(m, B);
}

/* The candidate frequencies of one direction: the two lowest and three
 * highest and the quarters of the range (ascending, distinct, in 1..N). */
static int candidates(fea_index N, fea_index *c) {
  const fea_index all[SYMBOL_CANDIDATES] = {
      1, 2, (N + 2) / 4, (N + 1) / 2, (3 * N + 2) / 4, N - 2, N - 1, N};
  int count = 0;
  for (fea_index j = 1; j <= N; j++)
    for (int i = 0; i < SYMBOL_CANDIDATES; i++)
      if (all[i] == j) {
        c[count++] = j;
        break;
      }
  return count;
}

/* From j, move to the best of the 3^d - 1 neighbouring frequencies while it
 * is higher; returns the value there. */
static double ascend(const symbol *sy, fea_index j[3], double v) {
  for (;;) {
    fea_index best[3] = {j[0], j[1], j[2]};
    double bv = v;
    const int moves = sy->dim == 3 ? 27 : 9;
    for (int mv = 0; mv < moves; mv++) {
      fea_index t[3] = {1, 1, 1};
      int ok = 1, r = mv;
      for (int k = 0; k < sy->dim; k++, r /= 3) {
        t[k] = j[k] + r % 3 - 1;
        ok = ok && t[k] >= 1 && t[k] <= sy->N[k];
      }
      if (!ok || mv == (sy->dim == 3 ? 13 : 4)) continue;
      const double tv = block_max(sy, t);
      if (tv > bv) bv = tv, best[0] = t[0], best[1] = t[1], best[2] = t[2];
    }
    if (bv <= v) return v;
    v = bv;
    for (int k = 0; k < 3; k++) j[k] = best[k];
  }
}

fea_status fea_mg_symbol_lambda_max(const fea_problem *pb, int scaled, int exhaustive,
                                    double *lambda_max, int *usable) {
  symbol sy = {0};
  *usable = symbol_applies(pb, sy.N);
  if (!*usable) return FEA_SUCCESS;
  FEA_CALL(symbol_init(pb, scaled, &sy, usable));
  if (!*usable) return FEA_SUCCESS;
  const fea_index total = sy.N[0] * sy.N[1] * sy.N[2];
  double top = -INFINITY;
  if (exhaustive || total <= SYMBOL_EXHAUSTIVE) {
    for (fea_index i = 0; i < total; i++) {
      const fea_index j[3] = {i % sy.N[0] + 1, i / sy.N[0] % sy.N[1] + 1,
                              i / (sy.N[0] * sy.N[1]) + 1};
      top = fmax(top, block_max(&sy, j));
    }
  } else {
    fea_index c[3][SYMBOL_CANDIDATES], start[SYMBOL_STARTS][3];
    int nc[3] = {1, 1, 1};
    double sv[SYMBOL_STARTS];
    for (int k = 0; k < 3; k++) c[k][0] = 1;
    for (int k = 0; k < sy.dim; k++) nc[k] = candidates(sy.N[k], c[k]);
    for (int s = 0; s < SYMBOL_STARTS; s++) sv[s] = -INFINITY;
    for (int i2 = 0; i2 < nc[2]; i2++)
      for (int i1 = 0; i1 < nc[1]; i1++)
        for (int i0 = 0; i0 < nc[0]; i0++) {
          const fea_index j[3] = {c[0][i0], c[1][i1], c[2][i2]};
          const double v = block_max(&sy, j);
          int s = SYMBOL_STARTS; /* insert into the best few, descending */
          while (s > 0 && v > sv[s - 1]) {
            if (s < SYMBOL_STARTS) {
              sv[s] = sv[s - 1];
              for (int k = 0; k < 3; k++) start[s][k] = start[s - 1][k];
            }
            s--;
          }
          if (s < SYMBOL_STARTS) {
            sv[s] = v;
            for (int k = 0; k < 3; k++) start[s][k] = j[k];
          }
        }
    for (int s = 0; s < SYMBOL_STARTS; s++)
      if (sv[s] > -INFINITY) top = fmax(top, ascend(&sy, start[s], sv[s]));
  }
  FEA_CHECK(top > 0.0 && isfinite(top), pb->ctx, FEA_ERR_NOT_POSDEF,
            "the largest eigenvalue of the Q2 level's symbol is %g", top);
  *lambda_max = top;
  return FEA_SUCCESS;
}

fea_status fea_mg_symbol_diagonal(const fea_problem *pb, const fea_mg_pgrid *g, double *diag,
                                  int *usable) {
  symbol sy = {0};
  *usable = g && g->p == 2 && symbol_applies(pb, sy.N);
  for (int k = 0; *usable && k < 3; k++) *usable = sy.N[k] == g->N[k];
  if (!*usable) return FEA_SUCCESS;
  FEA_CALL(symbol_init(pb, 1, &sy, usable));
  if (!*usable) return FEA_SUCCESS;
  /* Interior index i of a direction is grid position i + 1: a vertex where i
   * is odd, a midpoint where it is even (type bit 1). */
  const double *d = sy.diag;
  const fea_index m0 = 2 * sy.N[0] - 1, m1 = 2 * sy.N[1] - 1,
                  m2 = sy.dim == 3 ? 2 * sy.N[2] - 1 : 1;
  const fea_index *perm = g->perm;
  for (fea_index i2 = 0; i2 < m2; i2++)
    for (fea_index i1 = 0; i1 < m1; i1++) {
      const int t12 = (int)((1 - i1 % 2) << 1 | (sy.dim == 3 ? (1 - i2 % 2) << 2 : 0));
      const fea_index *row = perm + (i2 * m1 + i1) * m0;
      for (fea_index i0 = 0; i0 < m0; i0++) diag[row[i0]] = d[t12 | (int)(1 - i0 % 2)];
    }
  return FEA_SUCCESS;
}
