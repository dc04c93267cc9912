/* Lagrange reference elements (src/disc/lagrange.c) and Lagrange spaces
 * (src/disc/space-lagrange.c) seen from inside.
 *
 * The reference checks compare against closed forms (the Gauss-Lobatto
 * points of degree 2..6) and a long double bisection on P'_p, definitions
 * (Kronecker property, partition of unity, monomials reproduced by
 * interpolation at the nodes) and finite differences.
 * The space checks build meshes whose node numbers are shuffled and whose
 * cells are rotated, so that neighbouring cells see shared edges and faces
 * in every orientation, and verify that the numbering is conforming: every
 * DoF is one point for all cells holding it, and a function with random
 * coefficients takes one value on a shared facet from both sides. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "disc/lagrange.h"
#include "disc/mesh.h"
#include "disc/space.h"

#define NAME(cell) fea_cell_name(cell)

/* The highest tensor-cell order under test, written out rather than taken
 * from FEA_LAGRANGE_MAX_ORDER so that lowering the library's limit fails. */
#define QMAX 6

/* ---- helpers --------------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static void rng_seed(uint64_t s) { rng_state = s * 0x9e3779b97f4a7c15ull + 1; }

/* xorshift64*: uniform in [0, 1) */
static double urand(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53;
}

static int irand(int n) { return (int)(urand() * n); }

static int cell_dim(fea_cell_type c) {
  return c == FEA_CELL_INTERVAL ? 1 : c == FEA_CELL_TRIANGLE || c == FEA_CELL_QUAD ? 2 : 3;
}

static int is_simplex(fea_cell_type c) {
  return c == FEA_CELL_TRIANGLE || c == FEA_CELL_TETRAHEDRON;
}

/* A random point of the reference cell. */
static void random_ref_point(fea_cell_type cell, double *xi) {
  int d = cell_dim(cell);
  for (;;) {
    double s = 0;
    for (int k = 0; k < d; k++) s += xi[k] = urand();
    if (!is_simplex(cell) || s <= 1.0) return;
  }
}

/* Every element kind the library has. */
typedef struct kind {
  fea_cell_type cell;
  int order;
  fea_lagrange_nodes nodes;
} kind;

static int all_kinds(kind *k) {
  static const fea_cell_type cells[] = {FEA_CELL_INTERVAL, FEA_CELL_QUAD, FEA_CELL_HEXAHEDRON,
                                        FEA_CELL_TRIANGLE, FEA_CELL_TETRAHEDRON};
  int n = 0;
  for (int c = 0; c < 5; c++)
    for (int p = 1; p <= (is_simplex(cells[c]) ? 2 : QMAX); p++)
      for (int s = 0; s < 2; s++)
        k[n++] = (kind){cells[c], p, s ? FEA_NODES_GAUSS_LOBATTO : FEA_NODES_EQUISPACED};
  return n;
}

static fea_lagrange_element make_element(kind k) {
  fea_lagrange_element el;
  fea_status st = fea_lagrange_element_init(k.cell, k.order, k.nodes, &el);
  cr_assert_eq(st, FEA_SUCCESS, "%s order %d: %s", NAME(k.cell), k.order,
               fea_context_last_error(NULL));
  return el;
}

/* ---- 1D nodes -------------------------------------------------------------------------------- */

Test(lagrange_nodes, gauss_lobatto_known_values) {
  /* closed forms of the roots of P'_p on [-1, 1], in long double */
  const long double r5 = 1.0L / sqrtl(5.0L), r37 = sqrtl(3.0L / 7.0L);
  const long double a5 = sqrtl((7.0L - 2.0L * sqrtl(7.0L)) / 21.0L),
                    b5 = sqrtl((7.0L + 2.0L * sqrtl(7.0L)) / 21.0L);
  const long double a6 = sqrtl((15.0L - 2.0L * sqrtl(15.0L)) / 33.0L),
                    b6 = sqrtl((15.0L + 2.0L * sqrtl(15.0L)) / 33.0L);
  const long double want[QMAX + 1][QMAX + 1] = {
      {0},
      {0.0L, 1.0L},
      {0.0L, 0.5L, 1.0L},
      {0.0L, 0.5L * (1 - r5), 0.5L * (1 + r5), 1.0L},
      {0.0L, 0.5L * (1 - r37), 0.5L, 0.5L * (1 + r37), 1.0L},
      {0.0L, 0.5L * (1 - b5), 0.5L * (1 - a5), 0.5L * (1 + a5), 0.5L * (1 + b5), 1.0L},
      {0.0L, 0.5L * (1 - b6), 0.5L * (1 - a6), 0.5L, 0.5L * (1 + a6), 0.5L * (1 + b6), 1.0L},
  };
  for (int p = 1; p <= QMAX; p++) {
    double x[QMAX + 1];
    cr_assert_eq(fea_lagrange_nodes_1d(p, FEA_NODES_GAUSS_LOBATTO, x), FEA_SUCCESS);
    for (int i = 0; i <= p; i++)
      cr_assert(fabsl((long double)x[i] - want[p][i]) <= 1e-15L,
                "GLL p=%d node %d: %.17g, expected %.17Lg", p, i, x[i], want[p][i]);
  }
}

/* P'_p(t) in long double by the recurrence P'_{n+1} = P'_{n-1} + (2n+1) P_n. */
static long double legendre_derivative_ld(int p, long double t) {
  long double P0 = 1, P1 = t, d0 = 0, d1 = 1;
  for (int n = 1; n < p; n++) {
    long double P2 = ((2 * n + 1) * t * P1 - n * P0) / (n + 1), d2 = d0 + (2 * n + 1) * P1;
    P0 = P1;
    P1 = P2;
    d0 = d1;
    d1 = d2;
  }
  return d1;
}

/* An independent computation of the interior GLL points: the sign changes of
 * P'_p on a fine grid of [-1, 1], each bisected to long double precision (no
 * Newton, no starting guesses). Every degree up to QMAX, to 1e-15. */
Test(lagrange_nodes, gauss_lobatto_against_bisection) {
  for (int p = 2; p <= QMAX; p++) {
    double x[QMAX + 1];
    cr_assert_eq(fea_lagrange_nodes_1d(p, FEA_NODES_GAUSS_LOBATTO, x), FEA_SUCCESS);
    long double root[QMAX + 1];
    int nroot = 0;
    const int grid = 4096;
    for (int g = 0; g < grid; g++) {
      long double lo = -1.0L + 2.0L * g / grid, hi = -1.0L + 2.0L * (g + 1) / grid;
      long double flo = legendre_derivative_ld(p, lo), fhi = legendre_derivative_ld(p, hi);
      if (flo == 0) {
        if (g > 0) root[nroot++] = lo;
        continue;
      }
      if ((flo < 0) == (fhi < 0) || fhi == 0) continue;
      for (int it = 0; it < 200; it++) {
        long double mid = 0.5L * (lo + hi), fm = legendre_derivative_ld(p, mid);
        if (fm == 0 || mid == lo || mid == hi) {
          lo = hi = mid;
          break;
        }
        if ((fm < 0) == (flo < 0))
          lo = mid, flo = fm;
        else
          hi = mid;
      }
      root[nroot++] = 0.5L * (lo + hi);
    }
    cr_assert_eq(nroot, p - 1, "p=%d: %d roots of P'_p found", p, nroot);
    for (int i = 1; i < p; i++) {
      long double want = 0.5L * (1.0L + root[i - 1]);
      cr_assert(fabsl((long double)x[i] - want) <= 1e-15L,
                "GLL p=%d node %d: %.17g, bisection %.20Lg", p, i, x[i], want);
    }
  }
}

Test(lagrange_nodes, equispaced_values_and_symmetry) {
  for (int s = 0; s < 2; s++)
    for (int p = 1; p <= QMAX; p++) {
      double x[QMAX + 1];
      fea_lagrange_nodes nodes = s ? FEA_NODES_GAUSS_LOBATTO : FEA_NODES_EQUISPACED;
      cr_assert_eq(fea_lagrange_nodes_1d(p, nodes, x), FEA_SUCCESS);
      cr_assert(x[0] == 0.0 && x[p] == 1.0, "p=%d: ends %g %g", p, x[0], x[p]);
      for (int i = 0; i <= p; i++) {
        if (!s)
          cr_assert(fabs(x[i] - (double)i / p) <= 0x1p-52, "equispaced p=%d node %d: %.17g", p, i,
                    x[i]);
        cr_assert(i == 0 || x[i] > x[i - 1], "p=%d: nodes not ascending at %d", p, i);
        /* exact: an edge read from either end must meet the same nodes */
        cr_assert(x[p - i] == 1.0 - x[i], "p=%d kind %d: node %d is not the mirror of node %d", p,
                  s, p - i, i);
      }
    }
}

Test(lagrange_nodes, rejects_bad_arguments) {
  double x[8];
  cr_assert_eq(fea_lagrange_nodes_1d(0, FEA_NODES_EQUISPACED, x), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(NULL), "degree 0") != NULL, "%s",
            fea_context_last_error(NULL));
  cr_assert_eq(fea_lagrange_nodes_1d(QMAX, FEA_NODES_GAUSS_LOBATTO, x), FEA_SUCCESS);
  cr_assert_eq(fea_lagrange_nodes_1d(QMAX + 1, FEA_NODES_GAUSS_LOBATTO, x), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(NULL), "degree 7 is outside 1..6") != NULL, "%s",
            fea_context_last_error(NULL));
  cr_assert_eq(fea_lagrange_nodes_1d(2, (fea_lagrange_nodes)7, x), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(NULL), "node set 7") != NULL, "%s",
            fea_context_last_error(NULL));
  fea_lagrange_element el;
  cr_assert_eq(fea_lagrange_element_init(FEA_CELL_TRIANGLE, 3, FEA_NODES_EQUISPACED, &el),
               FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(NULL), "order 3") != NULL, "%s",
            fea_context_last_error(NULL));
  cr_assert_eq(fea_lagrange_element_init(FEA_CELL_HEXAHEDRON, QMAX, FEA_NODES_EQUISPACED, &el),
               FEA_SUCCESS);
  cr_assert_eq(el.nb, (QMAX + 1) * (QMAX + 1) * (QMAX + 1));
  cr_assert_eq(fea_lagrange_element_init(FEA_CELL_QUAD, QMAX + 1, FEA_NODES_EQUISPACED, &el),
               FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(NULL), "order 7 is outside 1..6") != NULL, "%s",
            fea_context_last_error(NULL));
  cr_assert_eq(fea_lagrange_element_init((fea_cell_type)9, 1, FEA_NODES_EQUISPACED, &el),
               FEA_ERR_INVALID_ARG);
}

/* The GLL points are where the Lobatto rule with weights 2/(p(p+1)P_p^2) is
 * exact to degree 2p - 1: an independent property of the same points. */
Test(lagrange_nodes, gauss_lobatto_quadrature_exactness) {
  for (int p = 2; p <= QMAX; p++) {
    double x[QMAX + 1];
    cr_assert_eq(fea_lagrange_nodes_1d(p, FEA_NODES_GAUSS_LOBATTO, x), FEA_SUCCESS);
    for (int m = 0; m <= 2 * p - 1; m++) {
      double sum = 0.0;
      for (int i = 0; i <= p; i++) {
        double t = 2 * x[i] - 1, P0 = 1, P1 = t; /* Legendre P_p(t) */
        for (int n = 1; n < p; n++) {
          double P2 = ((2 * n + 1) * t * P1 - n * P0) / (n + 1);
          P0 = P1;
          P1 = P2;
        }
        double w = 1.0 / (p * (p + 1.0) * P1 * P1); /* on [0, 1]: half of 2/(p(p+1)P^2) */
        sum += w * pow(x[i], m);
      }
      cr_assert(fabs(sum - 1.0 / (m + 1)) <= 1e-14, "p=%d: Lobatto rule on x^%d gives %.17g", p, m,
                sum);
    }
  }
}

Test(lagrange_nodes, basis_1d_values_and_derivatives) {
  rng_seed(1);
  for (int s = 0; s < 2; s++)
    for (int p = 1; p <= QMAX; p++) {
      double x[QMAX + 1], v[QMAX + 1], d[QMAX + 1], vp[QMAX + 1], vm[QMAX + 1];
      cr_assert_eq(fea_lagrange_nodes_1d(p, s ? FEA_NODES_GAUSS_LOBATTO : FEA_NODES_EQUISPACED, x),
                   FEA_SUCCESS);
      for (int j = 0; j <= p; j++) {
        fea_lagrange_basis_1d(p, x, x[j], v, NULL);
        for (int i = 0; i <= p; i++)
          cr_assert(v[i] == (i == j), "p=%d: l_%d(x_%d) = %.17g", p, i, j, v[i]);
      }
      for (int r = 0; r < 20; r++) {
        double t = urand(), h = 1e-6, sv = 0, sd = 0;
        fea_lagrange_basis_1d(p, x, t, v, d);
        fea_lagrange_basis_1d(p, x, t + h, vp, NULL);
        fea_lagrange_basis_1d(p, x, t - h, vm, NULL);
        for (int i = 0; i <= p; i++) {
          double fd = (vp[i] - vm[i]) / (2 * h);
          cr_assert(fabs(fd - d[i]) <= 1e-6 * (1 + fabs(d[i])), "p=%d: l_%d'(%g) = %g, FD %g", p, i,
                    t, d[i], fd);
          sv += v[i];
          sd += d[i];
        }
        cr_assert(fabs(sv - 1) <= 1e-14 && fabs(sd) <= 1e-12, "p=%d: sums %g %g", p, sv, sd);
      }
    }
}

/* ---- reference elements ---------------------------------------------------------------------- */

Test(lagrange_element, counts_and_local_order) {
  kind ks[64];
  int nk = all_kinds(ks);
  for (int t = 0; t < nk; t++) {
    fea_lagrange_element el = make_element(ks[t]);
    int p = ks[t].order, d = cell_dim(ks[t].cell), n1 = p + 1;
    cr_assert_eq(el.dim, d);
    if (!is_simplex(ks[t].cell)) {
      cr_assert_eq(el.nb, d == 1 ? n1 : d == 2 ? n1 * n1 : n1 * n1 * n1);
      double x1d[QMAX + 1];
      cr_assert_eq(fea_lagrange_nodes_1d(p, ks[t].nodes, x1d), FEA_SUCCESS);
      /* lexicographic, direction 0 fastest */
      for (int i = 0; i < el.nb; i++) {
        int a[3] = {i % n1, (i / n1) % n1, i / (n1 * n1)};
        for (int k = 0; k < d; k++)
          cr_assert(el.nodes[i * d + k] == x1d[a[k]], "%s Q%d node %d coordinate %d: %g",
                    NAME(ks[t].cell), p, i, k, el.nodes[i * d + k]);
      }
    } else {
      int nv = d + 1, ne = d == 2 ? 3 : 6;
      cr_assert_eq(el.nb, p == 1 ? nv : nv + ne);
      /* vertices: 0, e_1, e_2 (, e_3); then midpoints of the documented edges */
      const int(*edges)[2] = d == 2 ? fea_triangle_edges : fea_tetrahedron_edges;
      static const int tri_edges[3][2] = {{0, 1}, {1, 2}, {2, 0}};
      static const int tet_edges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
      for (int e = 0; e < ne; e++)
        for (int j = 0; j < 2; j++)
          cr_assert_eq(edges[e][j], d == 2 ? tri_edges[e][j] : tet_edges[e][j]);
      double vx[4][3] = {{0}};
      for (int v = 1; v < nv; v++) vx[v][v - 1] = 1.0;
      for (int i = 0; i < el.nb; i++)
        for (int k = 0; k < d; k++) {
          double want = i < nv ? vx[i][k]
                               : 0.5 * (vx[edges[i - nv][0]][k] + vx[edges[i - nv][1]][k]);
          cr_assert(el.nodes[i * d + k] == want, "%s P%d node %d coordinate %d: %g",
                    NAME(ks[t].cell), p, i, k, el.nodes[i * d + k]);
        }
    }
  }
}

Test(lagrange_element, kronecker_property) {
  kind ks[64];
  int nk = all_kinds(ks);
  for (int t = 0; t < nk; t++) {
    fea_lagrange_element el = make_element(ks[t]);
    double phi[FEA_LAGRANGE_MAX_BASIS];
    for (int j = 0; j < el.nb; j++) {
      fea_lagrange_element_eval(&el, el.nodes + j * el.dim, phi, NULL);
      for (int i = 0; i < el.nb; i++)
        cr_assert(phi[i] == (i == j), /* exactly: no rounding at the nodes */
                  "%s order %d nodes %d: phi_%d(node %d) = %.17g", NAME(ks[t].cell), ks[t].order,
                  ks[t].nodes, i, j, phi[i]);
    }
  }
}

Test(lagrange_element, partition_of_unity_and_gradients) {
  kind ks[64];
  int nk = all_kinds(ks);
  rng_seed(2);
  for (int t = 0; t < nk; t++) {
    fea_lagrange_element el = make_element(ks[t]);
    int d = el.dim, nb = el.nb;
    double phi[FEA_LAGRANGE_MAX_BASIS], dphi[FEA_LAGRANGE_MAX_BASIS * 3];
    double pp[FEA_LAGRANGE_MAX_BASIS], pm[FEA_LAGRANGE_MAX_BASIS];
    for (int r = 0; r < 10; r++) {
      double xi[3];
      random_ref_point(el.cell, xi);
      fea_lagrange_element_eval(&el, xi, phi, dphi);
      double s = 0, g[3] = {0, 0, 0};
      for (int i = 0; i < nb; i++) {
        s += phi[i];
        for (int k = 0; k < d; k++) g[k] += dphi[i * d + k];
      }
      cr_assert(fabs(s - 1) <= 1e-13, "%s order %d: sum of phi = %.17g", NAME(el.cell), el.order,
                s);
      for (int k = 0; k < d; k++)
        cr_assert(fabs(g[k]) <= 1e-11, "%s order %d: sum of dphi/dxi_%d = %g", NAME(el.cell),
                  el.order, k, g[k]);
      /* central differences, h^2 error well under the tolerance */
      for (int k = 0; k < d; k++) {
        double h = 1e-6, xp[3], xm[3];
        memcpy(xp, xi, sizeof xp);
        memcpy(xm, xi, sizeof xm);
        xp[k] += h;
        xm[k] -= h;
        fea_lagrange_element_eval(&el, xp, pp, NULL);
        fea_lagrange_element_eval(&el, xm, pm, NULL);
        for (int i = 0; i < nb; i++) {
          double fd = (pp[i] - pm[i]) / (2 * h);
          cr_assert(fabs(fd - dphi[i * d + k]) <= 1e-6 * (1 + fabs(fd)),
                    "%s order %d nodes %d: dphi_%d/dxi_%d = %.10g, FD %.10g", NAME(el.cell),
                    el.order, ks[t].nodes, i, k, dphi[i * d + k], fd);
        }
      }
      /* the gradient-only path agrees with the full one */
      double dphi2[FEA_LAGRANGE_MAX_BASIS * 3];
      fea_lagrange_element_eval(&el, xi, NULL, dphi2);
      cr_assert(memcmp(dphi, dphi2, sizeof(double) * (size_t)(nb * d)) == 0);
    }
  }
}

/* Interpolating a monomial of the element's space at its nodes gives it back,
 * with its gradient: the shape functions span Q_p (each exponent <= p) or
 * P_p (total degree <= p). */
Test(lagrange_element, reproduces_its_polynomials) {
  kind ks[64];
  int nk = all_kinds(ks);
  rng_seed(3);
  for (int t = 0; t < nk; t++) {
    fea_lagrange_element el = make_element(ks[t]);
    int d = el.dim, nb = el.nb, p = el.order;
    int emax[3] = {d > 0 ? p : 0, d > 1 ? p : 0, d > 2 ? p : 0};
    for (int e0 = 0; e0 <= emax[0]; e0++)
      for (int e1 = 0; e1 <= emax[1]; e1++)
        for (int e2 = 0; e2 <= emax[2]; e2++) {
          int e[3] = {e0, e1, e2};
          if (is_simplex(el.cell) && e0 + e1 + e2 > p) continue;
          double xi[3], phi[FEA_LAGRANGE_MAX_BASIS], dphi[FEA_LAGRANGE_MAX_BASIS * 3];
          random_ref_point(el.cell, xi);
          fea_lagrange_element_eval(&el, xi, phi, dphi);
          double u = 0, g[3] = {0, 0, 0};
          for (int i = 0; i < nb; i++) {
            double m = 1;
            for (int k = 0; k < d; k++) m *= pow(el.nodes[i * d + k], e[k]);
            u += m * phi[i];
            for (int k = 0; k < d; k++) g[k] += m * dphi[i * d + k];
          }
          double want = 1;
          for (int k = 0; k < d; k++) want *= pow(xi[k], e[k]);
          cr_assert(fabs(u - want) <= 1e-13,
                    "%s order %d: monomial (%d,%d,%d) gives %.17g, not %.17g", NAME(el.cell), p, e0,
                    e1, e2, u, want);
          for (int k = 0; k < d; k++) {
            double gw = e[k] == 0 ? 0 : e[k] * pow(xi[k], e[k] - 1);
            for (int j = 0; j < d; j++)
              if (j != k) gw *= pow(xi[j], e[j]);
            cr_assert(fabs(g[k] - gw) <= 1e-11, "%s order %d: d/dxi_%d of (%d,%d,%d): %g, not %g",
                      NAME(el.cell), p, k, e0, e1, e2, g[k], gw);
          }
        }
  }
}

/* vmask names the vertices of the entity a node lies on: a vertex node sits
 * at its vertex, and the counts per entity size are the closed forms. */
Test(lagrange_element, node_entities) {
  kind ks[64];
  int nk = all_kinds(ks);
  for (int t = 0; t < nk; t++) {
    fea_lagrange_element el = make_element(ks[t]);
    int d = el.dim, p = el.order, nv = fea_cell_num_nodes(el.cell);
    int count[9] = {0};
    for (int i = 0; i < el.nb; i++) {
      int bits = __builtin_popcount(el.vmask[i]);
      count[bits]++;
      cr_assert(el.vmask[i] < (1u << nv), "node %d mask 0x%x", i, el.vmask[i]);
      if (bits != 1) continue;
      int v = __builtin_ctz(el.vmask[i]);
      double want[3] = {0, 0, 0};
      if (is_simplex(el.cell)) {
        if (v > 0) want[v - 1] = 1.0;
      } else {
        for (int k = 0; k < d; k++) want[k] = (fea_cell_corner_bits[v] >> k) & 1;
      }
      for (int k = 0; k < d; k++)
        cr_assert(el.nodes[i * d + k] == want[k], "%s order %d: node %d of vertex %d at %g",
                  NAME(el.cell), p, i, v, el.nodes[i * d + k]);
    }
    cr_assert_eq(count[1], nv, "%s order %d: %d vertex nodes", NAME(el.cell), p, count[1]);
    int ne = d == 1                            ? 0
             : el.cell == FEA_CELL_TRIANGLE    ? 3
             : el.cell == FEA_CELL_QUAD        ? 4
             : el.cell == FEA_CELL_TETRAHEDRON ? 6
                                               : 12;
    if (d > 1)
      cr_assert_eq(count[2], ne * (p - 1), "%s order %d: %d edge nodes", NAME(el.cell), p,
                   count[2]);
    if (el.cell == FEA_CELL_HEXAHEDRON) {
      cr_assert_eq(count[4], 6 * (p - 1) * (p - 1));
      cr_assert_eq(count[8], (p - 1) * (p - 1) * (p - 1));
    }
    if (el.cell == FEA_CELL_QUAD) cr_assert_eq(count[4], (p - 1) * (p - 1));
    if (el.cell == FEA_CELL_INTERVAL) cr_assert_eq(count[2], p - 1);
  }
}

/* ---- cell geometry --------------------------------------------------------------------------- */

/* The lexicographic corners map to the mesh's node order as mesh.c says. */
Test(cell_geometry, corner_table_matches_mesh) {
  for (int d = 1; d <= 3; d++)
    for (int c = 0; c < (1 << d); c++)
      cr_assert_eq(fea_tensor_corner_vertex(d, c), fea_cell_corner_bits[c], "dim %d corner %d", d,
                   c);
}

Test(cell_geometry, small_inverse) {
  rng_seed(4);
  for (int d = 1; d <= 3; d++)
    for (int r = 0; r < 20; r++) {
      double A[9], Ai[9];
      for (int i = 0; i < d * d; i++) A[i] = urand() - 0.5 + (i % (d + 1) == 0 ? 2.0 : 0.0);
      double det = fea_small_inverse(d, A, Ai);
      /* det by the Leibniz formula, computed here */
      double want = d == 1 ? A[0]
                    : d == 2
                        ? A[0] * A[3] - A[1] * A[2]
                        : A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
                              A[2] * (A[3] * A[7] - A[4] * A[6]);
      cr_assert(fabs(det - want) <= 1e-14 * (1 + fabs(want)));
      for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) {
          double s = 0;
          for (int k = 0; k < d; k++) s += A[i * d + k] * Ai[k * d + j];
          cr_assert(fabs(s - (i == j)) <= 1e-13, "A Ainv (%d,%d) = %g", i, j, s);
        }
    }
}

/* A distorted cell of each type (vertices in mesh order, positive orientation). */
static const double distorted_interval[] = {0.2, 1.1};
static const double distorted_triangle[] = {0.1, 0.0, 1.2, 0.3, 0.4, 0.9};
static const double distorted_quad[] = {0.0, 0.0, 1.0, 0.1, 1.3, 1.2, -0.1, 0.8};
static const double distorted_tet[] = {0, 0, 0, 1, 0.1, 0, 0.2, 1.1, 0.1, 0.1, 0.2, 0.9};
static const double distorted_hex[] = {0,   0, 0,   1,   0.1, 0,   1.1, 1.0, 0.1, 0,   0.9, -0.1,
                                       0.1, 0, 1.0, 1.0, 0,   1.2, 1.2, 1.1, 1.1, 0.1, 1.0, 1.0};

static const double *distorted(fea_cell_type c) {
  switch (c) {
  case FEA_CELL_INTERVAL: return distorted_interval;
  case FEA_CELL_TRIANGLE: return distorted_triangle;
  case FEA_CELL_QUAD: return distorted_quad;
  case FEA_CELL_TETRAHEDRON: return distorted_tet;
  default: return distorted_hex;
  }
}

Test(cell_geometry, map_jacobian_and_inverse) {
  static const fea_cell_type cells[] = {FEA_CELL_INTERVAL, FEA_CELL_TRIANGLE, FEA_CELL_QUAD,
                                        FEA_CELL_TETRAHEDRON, FEA_CELL_HEXAHEDRON};
  rng_seed(5);
  for (int c = 0; c < 5; c++) {
    fea_cell_type cell = cells[c];
    int d = cell_dim(cell), nv = fea_cell_num_nodes(cell);
    const double *V = distorted(cell);
    /* the reference vertices go to the cell's vertices */
    fea_lagrange_element el = make_element((kind){cell, 1, FEA_NODES_EQUISPACED});
    for (int i = 0; i < el.nb; i++) {
      int v = __builtin_ctz(el.vmask[i]);
      double x[3];
      fea_cell_map(cell, d, V, el.nodes + i * d, x, NULL);
      for (int k = 0; k < d; k++)
        cr_assert(fabs(x[k] - V[v * d + k]) <= 1e-15, "%s vertex %d", NAME(cell), v);
    }
    (void)nv;
    for (int r = 0; r < 20; r++) {
      double xi[3], x[3], J[9], back[3];
      random_ref_point(cell, xi);
      fea_cell_map(cell, d, V, xi, x, J);
      for (int k = 0; k < d; k++) {
        double h = 1e-6, xp[3], xm[3], yp[3], ym[3];
        memcpy(xp, xi, sizeof xp);
        memcpy(xm, xi, sizeof xm);
        xp[k] += h;
        xm[k] -= h;
        fea_cell_map(cell, d, V, xp, yp, NULL);
        fea_cell_map(cell, d, V, xm, ym, NULL);
        for (int i = 0; i < d; i++)
          cr_assert(fabs((yp[i] - ym[i]) / (2 * h) - J[i * d + k]) <= 1e-8, "%s J(%d,%d)",
                    NAME(cell), i, k);
      }
      cr_assert(fea_small_inverse(d, J, NULL) > 0, "%s: test cell is inverted", NAME(cell));
      cr_assert_eq(fea_cell_map_inverse(cell, V, x, 1e-12, back), 1, "%s: point not found",
                   NAME(cell));
      for (int k = 0; k < d; k++)
        cr_assert(fabs(back[k] - xi[k]) <= 1e-13, "%s: inverse %g, expected %g", NAME(cell),
                  back[k], xi[k]);
    }
    /* outside: beyond a vertex, away from the centroid */
    double far[3], xi[3];
    double cen[3] = {0, 0, 0};
    for (int j = 0; j < nv; j++)
      for (int k = 0; k < d; k++) cen[k] += V[j * d + k] / nv;
    for (int k = 0; k < d; k++) far[k] = V[k] + 0.05 * (V[k] - cen[k]);
    cr_assert_eq(fea_cell_map_inverse(cell, V, far, 1e-12, xi), 0, "%s: outside point accepted",
                 NAME(cell));
    for (int k = 0; k < d; k++) far[k] = V[k] + 1e-14 * (V[k] - cen[k]);
    cr_assert_eq(fea_cell_map_inverse(cell, V, far, 1e-12, xi), 1,
                 "%s: vertex within tolerance rejected", NAME(cell));
  }
}

/* ---- spaces on meshes ------------------------------------------------------------------------ */

static fea_context *open_ctx(void) {
  fea_context *ctx = NULL;
  cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  return ctx;
}

static fea_mesh *structured(fea_context *ctx, int dim, int n, int simplices) {
  fea_mesh_desc desc = FEA_MESH_DESC_INIT;
  desc.dim = dim;
  desc.n[0] = n;
  desc.n[1] = n + (dim > 1); /* not square: transposed numbering shows */
  desc.n[2] = n;
  desc.simplices = simplices;
  fea_mesh *m = NULL;
  cr_assert_eq(fea_mesh_build_structured(ctx, &desc, &m), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  return m;
}

/* Rotations of the cube as corner maps: bit k of a corner is its coordinate k. */
static int rotate_corner(int c, int axis) {
  int x = c & 1, y = (c >> 1) & 1, z = (c >> 2) & 1, nx = x, ny = y, nz = z;
  if (axis == 2) { /* about z: (x, y) -> (1 - y, x) */
    nx = 1 - y;
    ny = x;
  } else if (axis == 0) { /* about x: (y, z) -> (1 - z, y) */
    ny = 1 - z;
    nz = y;
  } else { /* about y: (z, x) -> (1 - x, z) */
    nz = 1 - x;
    nx = z;
  }
  return nx | ny << 1 | nz << 2;
}

/* The same cells with shuffled node numbers, each cell's vertex list turned
 * by a random orientation-preserving symmetry, and interior nodes moved by up
 * to `jitter` of the mesh size: an unstructured mesh on which shared edges
 * and faces meet in all orientations. */
static fea_mesh *scramble(fea_context *ctx, const fea_mesh *m, double jitter) {
  fea_mesh *s = NULL;
  cr_assert_eq(fea_mesh_alloc(ctx, m->dim, m->type, m->num_nodes, m->num_cells, &s), FEA_SUCCESS);
  fea_index nn = m->num_nodes, *perm = malloc((size_t)nn * sizeof *perm);
  for (fea_index i = 0; i < nn; i++) perm[i] = i;
  for (fea_index i = nn - 1; i > 0; i--) {
    fea_index j = (fea_index)(urand() * (double)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  double h = 1.0 / (double)m->n[0];
  for (fea_index i = 0; i < nn; i++) {
    int boundary = 0;
    for (int k = 0; k < m->dim; k++) {
      double x = m->coords[i * m->dim + k];
      boundary |= x == m->lower[k] || x == m->upper[k];
    }
    for (int k = 0; k < m->dim; k++)
      s->coords[perm[i] * m->dim + k] = m->coords[i * m->dim + k] +
                                        (boundary ? 0.0 : jitter * h * (2 * urand() - 1));
  }
  int npc = m->nodes_per_cell, d = cell_dim(m->type);
  for (fea_index c = 0; c < m->num_cells; c++) {
    const fea_index *v = m->cells + c * npc;
    int map[8]; /* new local vertex l = old local vertex map[l] */
    for (int l = 0; l < npc; l++) map[l] = l;
    if (m->type == FEA_CELL_QUAD || m->type == FEA_CELL_TRIANGLE) {
      int r = irand(npc);
      for (int l = 0; l < npc; l++) map[l] = (l + r) % npc;
    } else if (m->type == FEA_CELL_HEXAHEDRON) {
      int corner_of[8]; /* lexicographic corner -> its image */
      for (int c8 = 0; c8 < 8; c8++) corner_of[c8] = c8;
      for (int r = irand(12); r >= 0; r--) {
        int axis = irand(3);
        for (int c8 = 0; c8 < 8; c8++) corner_of[c8] = rotate_corner(corner_of[c8], axis);
      }
      for (int l = 0; l < 8; l++) map[l] = fea_cell_corner_bits[corner_of[fea_cell_corner_bits[l]]];
    } else if (m->type == FEA_CELL_TETRAHEDRON) {
      for (int l = 3; l > 0; l--) {
        int j = irand(l + 1), t = map[l];
        map[l] = map[j];
        map[j] = t;
      }
      int inversions = 0; /* odd permutations flip the orientation: undo with a swap */
      for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++) inversions += map[a] > map[b];
      if (inversions % 2) {
        int t = map[2];
        map[2] = map[3];
        map[3] = t;
      }
    }
    (void)d;
    for (int l = 0; l < npc; l++) s->cells[c * npc + l] = perm[v[map[l]]];
  }
  free(perm);
  cr_assert_eq(fea_mesh_check_cells(s), FEA_SUCCESS, "scrambled mesh: %s",
               fea_context_last_error(NULL));
  return s;
}

static fea_space *build(fea_mesh *m, int order, fea_lagrange_nodes nodes) {
  fea_space *s = NULL;
  cr_assert_eq(fea_space_lagrange_build(m, order, nodes, &s), FEA_SUCCESS, "%s order %d: %s",
               NAME(m->type), order, fea_context_last_error(NULL));
  return s;
}

static void load_verts(const fea_mesh *m, fea_index c, double *V) {
  for (int j = 0; j < m->nodes_per_cell; j++)
    for (int k = 0; k < m->dim; k++)
      V[j * m->dim + k] = m->coords[m->cells[c * m->nodes_per_cell + j] * m->dim + k];
}

/* Each cell's local nodes land on the DoF points of their global numbers,
 * vertex nodes take the node numbers, DoFs within a cell are distinct, and
 * every DoF belongs to some cell: the numbering means one point per DoF. */
static void check_numbering(const fea_space *s) {
  const fea_mesh *m = s->mesh;
  const fea_lagrange_element *el = fea_space_lagrange_element(s);
  const double *X = fea_space_lagrange_dof_coords(s);
  cr_assert(el && X);
  int nb = s->dofs_per_element, d = m->dim;
  unsigned char *used = calloc((size_t)s->num_dofs, 1);
  fea_index dofs[FEA_LAGRANGE_MAX_BASIS];
  for (fea_index c = 0; c < m->num_cells; c++) {
    double V[24];
    load_verts(m, c, V);
    s->ops->element_dofs(s, c, dofs);
    for (int i = 0; i < nb; i++) {
      cr_assert(dofs[i] >= 0 && dofs[i] < s->num_dofs, "cell %lld dof %lld", (long long)c,
                (long long)dofs[i]);
      used[dofs[i]] = 1;
      for (int j = 0; j < i; j++)
        cr_assert_neq(dofs[i], dofs[j], "cell %lld repeats DoF %lld", (long long)c,
                      (long long)dofs[i]);
      if (__builtin_popcount(el->vmask[i]) == 1)
        cr_assert_eq(dofs[i], m->cells[c * m->nodes_per_cell + __builtin_ctz(el->vmask[i])]);
      double x[3];
      fea_cell_map(m->type, d, V, el->nodes + i * el->dim, x, NULL);
      for (int k = 0; k < d; k++)
        cr_assert(
            fabs(x[k] - X[dofs[i] * d + k]) <= 1e-13,
            "%s order %d: cell %lld local node %d is at %g in direction %d, its DoF %lld at %g",
            NAME(m->type), el->order, (long long)c, i, x[k], k, (long long)dofs[i],
            X[dofs[i] * d + k]);
    }
  }
  for (fea_index i = 0; i < s->num_dofs; i++)
    cr_assert(used[i], "DoF %lld in no cell", (long long)i);
  free(used);
}

/* Facets (mesh-order local vertices), independent of the library's tables. */
static int test_facets(fea_cell_type t, int f[6][4], int *nv) {
  static const int quad[4][4] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  static const int tri[3][4] = {{0, 1}, {1, 2}, {2, 0}};
  static const int tet[4][4] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
  /* hexahedron faces with their vertices in cyclic order */
  static const int hex[6][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 5, 4},
                                {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
  int n = t == FEA_CELL_QUAD ? 4 : t == FEA_CELL_TRIANGLE ? 3 : t == FEA_CELL_TETRAHEDRON ? 4 : 6;
  *nv = t == FEA_CELL_QUAD || t == FEA_CELL_TRIANGLE ? 2 : t == FEA_CELL_TETRAHEDRON ? 3 : 4;
  const int(*src)[4] = t == FEA_CELL_QUAD          ? quad
                       : t == FEA_CELL_TRIANGLE    ? tri
                       : t == FEA_CELL_TETRAHEDRON ? tet
                                                   : hex;
  memcpy(f, src, (size_t)n * sizeof *src);
  return n;
}

static int same_set(const fea_index *a, const fea_index *b, int n) {
  for (int i = 0; i < n; i++) {
    int found = 0;
    for (int j = 0; j < n; j++) found |= a[i] == b[j];
    if (!found) return 0;
  }
  return 1;
}

static double expand(const fea_space *s, fea_index c, const double *coef, const double *xi) {
  const fea_lagrange_element *el = fea_space_lagrange_element(s);
  double phi[FEA_LAGRANGE_MAX_BASIS];
  fea_index dofs[FEA_LAGRANGE_MAX_BASIS];
  fea_lagrange_element_eval(el, xi, phi, NULL);
  s->ops->element_dofs(s, c, dofs);
  double u = 0;
  for (int i = 0; i < el->nb; i++) u += coef[dofs[i]] * phi[i];
  return u;
}

/* A function with random coefficients, evaluated on each shared facet from
 * both cells' local expansions: conforming spaces give one value. Returns the
 * number of facets compared. */
static int check_conformity(const fea_space *s) {
  const fea_mesh *m = s->mesh;
  int d = m->dim, npc = m->nodes_per_cell, f[6][4], fnv, nf = test_facets(m->type, f, &fnv);
  double *coef = malloc((size_t)s->num_dofs * sizeof *coef);
  for (fea_index i = 0; i < s->num_dofs; i++) coef[i] = 2 * urand() - 1;
  int shared = 0;
  for (fea_index a = 0; a < m->num_cells; a++)
    for (fea_index b = a + 1; b < m->num_cells; b++)
      for (int fa = 0; fa < nf; fa++)
        for (int fb = 0; fb < nf; fb++) {
          fea_index ka[4], kb[4];
          for (int j = 0; j < fnv; j++) {
            ka[j] = m->cells[a * npc + f[fa][j]];
            kb[j] = m->cells[b * npc + f[fb][j]];
          }
          if (!same_set(ka, kb, fnv)) continue;
          shared++;
          double Va[24], Vb[24];
          load_verts(m, a, Va);
          load_verts(m, b, Vb);
          for (int r = 0; r < 6; r++) {
            /* a point of the facet: barycentric on simplex facets and edges,
             * bilinear on quad faces (exactly the hexahedra's face surface) */
            double x[3] = {0, 0, 0}, w[4];
            if (fnv == 4) {
              double u = urand(), v = urand();
              w[0] = (1 - u) * (1 - v), w[1] = u * (1 - v), w[2] = u * v, w[3] = (1 - u) * v;
            } else {
              double sum = 0;
              for (int j = 0; j < fnv; j++) sum += w[j] = -log(1 - urand());
              for (int j = 0; j < fnv; j++) w[j] /= sum;
            }
            for (int j = 0; j < fnv; j++)
              for (int k = 0; k < d; k++) x[k] += w[j] * m->coords[ka[j] * d + k];
            double xa[3], xb[3];
            cr_assert(fea_cell_map_inverse(m->type, Va, x, 1e-10, xa),
                      "cell %lld misses its facet point", (long long)a);
            cr_assert(fea_cell_map_inverse(m->type, Vb, x, 1e-10, xb),
                      "cell %lld misses its facet point", (long long)b);
            double ua = expand(s, a, coef, xa), ub = expand(s, b, coef, xb);
            cr_assert(fabs(ua - ub) <= 1e-12,
                      "%s order %d: jump %.3g across the facet of cells %lld and %lld",
                      NAME(m->type), s->degree[0], fabs(ua - ub), (long long)a, (long long)b);
          }
        }
  free(coef);
  return shared;
}

/* Q2..Q6 and P2 on scrambled meshes: the numbering is one point per DoF and
 * the space is conforming, for both node sets. */
Test(lagrange_space, conforming_on_scrambled_meshes) {
  fea_context *ctx = open_ctx();
  struct {
    int dim, n, simplices, max_order;
  } cases[] = {{1, 4, 0, QMAX}, {2, 3, 0, QMAX}, {2, 3, 1, 2}, {3, 2, 0, QMAX}, {3, 2, 1, 2}};
  rng_seed(6);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fea_mesh *base = structured(ctx, cases[c].dim, cases[c].n, cases[c].simplices);
    fea_mesh *m = scramble(ctx, base, cases[c].simplices ? 0.08 : 0.15);
    for (int p = 1; p <= cases[c].max_order; p++)
      for (int gll = 0; gll < 2; gll++) {
        fea_space *s = build(m, p, gll ? FEA_NODES_GAUSS_LOBATTO : FEA_NODES_EQUISPACED);
        check_numbering(s);
        if (cases[c].dim > 1) cr_assert_gt(check_conformity(s), 0);
        fea_space_destroy(&s);
      }
    fea_object_release(base);
    fea_object_release(m);
  }
  fea_context_destroy(&ctx);
}

/* The same space on the structured mesh and on a renumbered copy (no
 * rotation, no jitter) has the same counts. */
Test(lagrange_space, counts_do_not_depend_on_numbering) {
  fea_context *ctx = open_ctx();
  rng_seed(7);
  for (int dim = 2; dim <= 3; dim++)
    for (int simp = 0; simp < 2; simp++) {
      fea_mesh *base = structured(ctx, dim, 2, simp);
      fea_mesh *m = scramble(ctx, base, 0.0);
      for (int p = 1; p <= (simp ? 2 : QMAX); p++) {
        fea_space *a = build(base, p, FEA_NODES_EQUISPACED), *b = build(m, p, FEA_NODES_EQUISPACED);
        cr_assert_eq(a->num_dofs, b->num_dofs);
        cr_assert_eq(a->num_boundary_dofs, b->num_boundary_dofs);
        fea_space_destroy(&a);
        fea_space_destroy(&b);
      }
      fea_object_release(base);
      fea_object_release(m);
    }
  fea_context_destroy(&ctx);
}

/* Boundary DoFs are exactly the DoFs whose points lie on the box's boundary
 * (interior nodes of the scrambled mesh stay strictly inside). */
Test(lagrange_space, boundary_dofs_lie_on_the_boundary) {
  fea_context *ctx = open_ctx();
  rng_seed(8);
  struct {
    int dim, simplices, max_order;
  } cases[] = {{1, 0, QMAX}, {2, 0, QMAX}, {2, 1, 2}, {3, 0, QMAX}, {3, 1, 2}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fea_mesh *base = structured(ctx, cases[c].dim, 3, cases[c].simplices);
    fea_mesh *m = scramble(ctx, base, 0.1);
    for (int p = 1; p <= cases[c].max_order; p++) {
      fea_space *s = build(m, p, FEA_NODES_GAUSS_LOBATTO);
      const double *X = fea_space_lagrange_dof_coords(s);
      fea_index nb = 0;
      for (fea_index i = 0; i < s->num_dofs; i++) {
        int on = 0;
        for (int k = 0; k < m->dim; k++) {
          double x = X[i * m->dim + k];
          on |= fabs(x - base->lower[k]) < 1e-12 || fabs(x - base->upper[k]) < 1e-12;
        }
        if (!on) continue;
        cr_assert(nb < s->num_boundary_dofs && s->boundary_dofs[nb] == i,
                  "%s order %d: DoF %lld is on the boundary but not listed", NAME(m->type), p,
                  (long long)i);
        nb++;
      }
      cr_assert_eq(nb, s->num_boundary_dofs, "%s order %d: %lld listed, %lld on the boundary",
                   NAME(m->type), p, (long long)s->num_boundary_dofs, (long long)nb);
      fea_space_destroy(&s);
    }
    fea_object_release(base);
    fea_object_release(m);
  }
  fea_context_destroy(&ctx);
}

/* element_values on a distorted mesh: the weights add up to the domain's
 * measure, and x itself, which every space holds exactly (the geometry is
 * linear), has gradient e_k at every point. */
Test(lagrange_space, element_values_on_distorted_meshes) {
  fea_context *ctx = open_ctx();
  rng_seed(9);
  struct {
    int dim, simplices, max_order;
  } cases[] = {{1, 0, QMAX}, {2, 0, QMAX}, {2, 1, 2}, {3, 0, QMAX}, {3, 1, 2}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fea_mesh *base = structured(ctx, cases[c].dim, 3, cases[c].simplices);
    fea_mesh *m = scramble(ctx, base, cases[c].simplices ? 0.08 : 0.2);
    double measure = 1;
    for (int k = 0; k < m->dim; k++) measure *= base->upper[k] - base->lower[k];
    for (int p = 1; p <= cases[c].max_order; p++) {
      fea_space *s = build(m, p, FEA_NODES_EQUISPACED);
      const double *X = fea_space_lagrange_dof_coords(s);
      int d = m->dim, nb = s->dofs_per_element;
      fea_quadrature q;
      cr_assert_eq(fea_quadrature_for_cell(m->type, p + 2, &q), FEA_SUCCESS);
      fea_element_values ev;
      cr_assert_eq(fea_element_values_alloc(s, &q, &ev), FEA_SUCCESS);
      double total = 0;
      fea_index dofs[FEA_LAGRANGE_MAX_BASIS];
      for (fea_index e = 0; e < s->num_elements; e++) {
        cr_assert_eq(s->ops->element_values(s, e, &q, &ev), FEA_SUCCESS, "%s",
                     fea_context_last_error(NULL));
        s->ops->element_dofs(s, e, dofs);
        double V[24];
        load_verts(m, e, V);
        for (int k = 0; k < q.npts; k++) {
          total += ev.w[k];
          double x[3];
          fea_cell_map(m->type, d, V, q.points + k * d, x, NULL);
          for (int j = 0; j < d; j++) cr_assert(fabs(ev.x[k * d + j] - x[j]) <= 1e-15);
          for (int j = 0; j < d; j++) { /* the interpolant of x_j and its gradient */
            double u = 0, g[3] = {0, 0, 0};
            for (int i = 0; i < nb; i++) {
              double cj = X[dofs[i] * d + j];
              u += cj * ev.phi[k * nb + i];
              for (int l = 0; l < d; l++) g[l] += cj * ev.dphi[(k * nb + i) * d + l];
            }
            cr_assert(fabs(u - x[j]) <= 1e-13, "%s order %d: x_%d reproduced as %g at %g",
                      NAME(m->type), p, j, u, x[j]);
            for (int l = 0; l < d; l++)
              cr_assert(fabs(g[l] - (l == j)) <= 1e-11, "%s order %d: d x_%d / d x_%d = %.15g",
                        NAME(m->type), p, j, l, g[l]);
          }
        }
      }
      cr_assert(fabs(total - measure) <= 1e-13, "%s order %d: weights add up to %.17g",
                NAME(m->type), p, total);
      fea_element_values_free(&ev);
      fea_quadrature_free(&q);
      fea_space_destroy(&s);
    }
    fea_object_release(base);
    fea_object_release(m);
  }
  fea_context_destroy(&ctx);
}

/* locate() finds a cell whose map sends the reference point back to x, on
 * structured meshes (direct index) and scrambled ones (bucket search), for
 * random points, mesh nodes and DoF points; points outside are refused. */
Test(lagrange_space, locate_points) {
  fea_context *ctx = open_ctx();
  rng_seed(10);
  struct {
    int dim, simplices;
  } cases[] = {{1, 0}, {2, 0}, {2, 1}, {3, 0}, {3, 1}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fea_mesh *base = structured(ctx, cases[c].dim, 4, cases[c].simplices);
    fea_mesh *scr = scramble(ctx, base, cases[c].simplices ? 0.08 : 0.2);
    fea_mesh *meshes[2] = {base, scr};
    for (int which = 0; which < 2; which++) {
      fea_mesh *m = meshes[which];
      fea_space *s = build(m, 2, FEA_NODES_EQUISPACED);
      const double *X = fea_space_lagrange_dof_coords(s);
      int d = m->dim;
      for (int r = 0; r < 300; r++) {
        double x[3], ref[3], y[3], V[24];
        /* random points, DoF points, and points mixing DoF coordinates
         * (many on cell boundaries, some of them outside their neighbours) */
        fea_index i0 = irand((int)s->num_dofs), i1 = irand((int)s->num_dofs);
        for (int k = 0; k < d; k++)
          x[k] = r < 100 ? urand() : r < 200 ? X[i0 * d + k] : X[(k ? i1 : i0) * d + k];
        fea_index e = -1;
        cr_assert_eq(s->ops->locate(s, x, &e, ref), FEA_SUCCESS, "%s (%s): %s", NAME(m->type),
                     which ? "scrambled" : "structured", fea_context_last_error(NULL));
        cr_assert(e >= 0 && e < m->num_cells);
        load_verts(m, e, V);
        fea_cell_map(m->type, d, V, ref, y, NULL);
        for (int k = 0; k < d; k++)
          cr_assert(fabs(y[k] - x[k]) <= 1e-12, "%s: cell %lld maps ref back to %g, not %g",
                    NAME(m->type), (long long)e, y[k], x[k]);
        double sum = 0;
        for (int k = 0; k < d; k++) {
          cr_assert(ref[k] >= 0 && ref[k] <= 1, "reference coordinate %g", ref[k]);
          sum += ref[k];
        }
        if (is_simplex(m->type)) cr_assert(sum <= 1.0);
      }
      double out[3] = {0.5, 0.5, 0.5}, ref[3];
      out[d - 1] = 1.001;
      fea_index e;
      cr_assert_eq(s->ops->locate(s, out, &e, ref), FEA_ERR_INVALID_ARG);
      cr_assert(strstr(fea_context_last_error(ctx), "is outside the mesh") != NULL, "%s",
                fea_context_last_error(ctx));
      cr_assert(strstr(fea_context_last_error(ctx), "1.0009999") != NULL,
                "message names the point: %s", fea_context_last_error(ctx));
      fea_space_destroy(&s);
    }
    fea_object_release(base);
    fea_object_release(scr);
  }
  fea_context_destroy(&ctx);
}

/* Small cells far from the origin: reference coordinates are only as exact
 * as eps |x| / h allows, which location must tolerate (it once demanded
 * 1e-14 and lost points in the middle of cells). */
Test(lagrange_space, locate_small_cells_far_from_origin) {
  fea_context *ctx = open_ctx();
  rng_seed(16);
  for (int dim = 2; dim <= 3; dim++) {
    fea_mesh_desc desc = FEA_MESH_DESC_INIT;
    desc.dim = dim;
    for (int k = 0; k < dim; k++) {
      desc.n[k] = dim == 2 ? 100 : 20;
      desc.lower[k] = 1000.0;
      desc.upper[k] = 1000.5;
    }
    fea_mesh *base = NULL;
    cr_assert_eq(fea_mesh_build_structured(ctx, &desc, &base), FEA_SUCCESS);
    fea_mesh *m = scramble(ctx, base, 0.0); /* unstructured: the bucket search */
    fea_space *s = build(m, 2, FEA_NODES_EQUISPACED);
    for (int r = 0; r < 2000; r++) {
      double x[3], ref[3];
      for (int k = 0; k < dim; k++) x[k] = 1000.0 + 0.5 * urand();
      if (r % 2) x[r % dim] = r % 4 == 1 ? 1000.5 : 1000.0; /* on the boundary */
      fea_index e;
      cr_assert_eq(s->ops->locate(s, x, &e, ref), FEA_SUCCESS, "%s", fea_context_last_error(ctx));
    }
    fea_space_destroy(&s);
    fea_object_release(base);
    fea_object_release(m);
  }
  fea_context_destroy(&ctx);
}

/* An L-shaped domain: inside its bounding box but outside the mesh. */
Test(lagrange_space, locate_refuses_holes) {
  fea_context *ctx = open_ctx();
  fea_mesh *m = NULL;
  cr_assert_eq(fea_mesh_alloc(ctx, 2, FEA_CELL_QUAD, 8, 3, &m), FEA_SUCCESS);
  const double xy[] = {0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1, 0, 2, 1, 2};
  const fea_index q[] = {0, 1, 4, 3, 1, 2, 5, 4, 3, 4, 7, 6};
  memcpy(m->coords, xy, sizeof xy);
  memcpy(m->cells, q, sizeof q);
  fea_space *s = build(m, 3, FEA_NODES_GAUSS_LOBATTO);
  double in[2] = {0.5, 1.5}, hole[2] = {1.5, 1.5}, ref[2];
  fea_index e;
  cr_assert_eq(s->ops->locate(s, in, &e, ref), FEA_SUCCESS);
  cr_assert_eq(e, 2);
  cr_assert(fabs(ref[0] - 0.5) < 1e-14 && fabs(ref[1] - 0.5) < 1e-14);
  cr_assert_eq(s->ops->locate(s, hole, &e, ref), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(ctx), "(1.5, 1.5) is outside the mesh") != NULL, "%s",
            fea_context_last_error(ctx));
  /* DoF counts: 8 nodes, 10 edges x 2, 3 cells x 4; boundary: 8 edges x 2 + 8 nodes */
  cr_assert_eq(s->num_dofs, 8 + 20 + 12);
  cr_assert_eq(s->num_boundary_dofs, 8 + 16);
  fea_space_destroy(&s);
  fea_object_release(m);
  fea_context_destroy(&ctx);
}

/* Two long thin cells: rounding the bucket counts up in each direction would
 * give far more buckets than cells, so the grid coarsens; points are found. */
Test(lagrange_space, locate_on_a_thin_domain) {
  fea_context *ctx = open_ctx();
  fea_mesh *m = NULL;
  cr_assert_eq(fea_mesh_alloc(ctx, 2, FEA_CELL_QUAD, 6, 2, &m), FEA_SUCCESS);
  const double xy[] = {0, 0, 1, 0, 2, 0, 0, 1e-6, 1, 1e-6, 2, 1e-6};
  const fea_index q[] = {0, 1, 4, 3, 1, 2, 5, 4};
  memcpy(m->coords, xy, sizeof xy);
  memcpy(m->cells, q, sizeof q);
  fea_space *s = build(m, 1, FEA_NODES_EQUISPACED);
  const double pts[4][2] = {{0.25, 5e-7}, {1.75, 1e-7}, {0.999, 1e-6}, {2.0, 0.0}};
  const fea_index want[4] = {0, 1, 0, 1};
  for (int i = 0; i < 4; i++) {
    fea_index e;
    double ref[2];
    cr_assert_eq(s->ops->locate(s, pts[i], &e, ref), FEA_SUCCESS, "%s",
                 fea_context_last_error(ctx));
    cr_assert_eq(e, want[i], "point %d in cell %lld", i, (long long)e);
  }
  double above[2] = {0.5, 2e-6}, ref[2];
  fea_index e;
  cr_assert_eq(s->ops->locate(s, above, &e, ref), FEA_ERR_INVALID_ARG);
  fea_space_destroy(&s);
  fea_object_release(m);
  fea_context_destroy(&ctx);
}

/* A node no cell uses is still a DoF (DoF = node number), listed with the
 * boundary DoFs so that Dirichlet elimination fixes it instead of leaving an
 * empty row; the interior node of a 2 x 2 quad mesh is not. */
Test(lagrange_space, unused_nodes_are_constrained) {
  fea_context *ctx = open_ctx();
  fea_mesh *m = NULL;
  cr_assert_eq(fea_mesh_alloc(ctx, 2, FEA_CELL_QUAD, 10, 4, &m), FEA_SUCCESS);
  const double xy[] = {0, 0, 1, 0, 2, 0, 0, 1, 1, 1, 2, 1, 0, 2, 1, 2, 2, 2, 5, 5};
  const fea_index q[] = {0, 1, 4, 3, 1, 2, 5, 4, 3, 4, 7, 6, 4, 5, 8, 7};
  memcpy(m->coords, xy, sizeof xy);
  memcpy(m->cells, q, sizeof q);
  fea_space *s = build(m, 2, FEA_NODES_EQUISPACED);
  cr_assert_eq(s->num_dofs, 10 + 12 + 4);
  cr_assert_eq(s->num_boundary_dofs, 8 + 8 + 1);
  int has4 = 0, has9 = 0;
  for (fea_index i = 0; i < s->num_boundary_dofs; i++) {
    has4 |= s->boundary_dofs[i] == 4;
    has9 |= s->boundary_dofs[i] == 9;
    cr_assert(i == 0 || s->boundary_dofs[i] > s->boundary_dofs[i - 1], "not sorted");
  }
  cr_assert(!has4 && has9, "interior node listed: %d, unused node listed: %d", has4, has9);
  fea_space_destroy(&s);
  fea_object_release(m);
  fea_context_destroy(&ctx);
}

/* Inverted cells reach element_values only if a mesh skipped its checks;
 * then the element is named. Cells of lower dimension than the space are not
 * supported there (yet), but numbering and interpolation work. */
Test(lagrange_space, element_values_refusals) {
  fea_context *ctx = open_ctx();
  fea_mesh *m = NULL;
  cr_assert_eq(fea_mesh_alloc(ctx, 2, FEA_CELL_TRIANGLE, 4, 2, &m), FEA_SUCCESS);
  const double xy[] = {0, 0, 1, 0, 1, 1, 0, 1};
  const fea_index t[] = {0, 1, 2, 0, 3, 2}; /* the second one clockwise */
  memcpy(m->coords, xy, sizeof xy);
  memcpy(m->cells, t, sizeof t);
  fea_space *s = build(m, 2, FEA_NODES_EQUISPACED);
  cr_assert_eq(s->num_dofs, 4 + 5);
  fea_quadrature q;
  cr_assert_eq(fea_quadrature_for_cell(FEA_CELL_TRIANGLE, 2, &q), FEA_SUCCESS);
  fea_element_values ev;
  cr_assert_eq(fea_element_values_alloc(s, &q, &ev), FEA_SUCCESS);
  cr_assert_eq(s->ops->element_values(s, 0, &q, &ev), FEA_SUCCESS);
  cr_assert_eq(s->ops->element_values(s, 1, &q, &ev), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(ctx), "element 1 is inverted") != NULL, "%s",
            fea_context_last_error(ctx));
  fea_element_values_free(&ev);
  fea_space_destroy(&s);
  fea_object_release(m);

  cr_assert_eq(fea_mesh_alloc(ctx, 3, FEA_CELL_TRIANGLE, 3, 1, &m), FEA_SUCCESS);
  const double xyz[] = {0, 0, 0, 1, 0, 1, 0, 1, 1};
  const fea_index t1[] = {0, 1, 2};
  memcpy(m->coords, xyz, sizeof xyz);
  memcpy(m->cells, t1, sizeof t1);
  s = build(m, 2, FEA_NODES_EQUISPACED);
  cr_assert_eq(s->num_dofs, 6);
  cr_assert_eq(s->num_boundary_dofs, 6);
  cr_assert_eq(fea_element_values_alloc(s, &q, &ev), FEA_SUCCESS);
  cr_assert_eq(s->ops->element_values(s, 0, &q, &ev), FEA_ERR_UNSUPPORTED);
  cr_assert(strstr(fea_context_last_error(ctx), "triangle cells in 3D") != NULL, "%s",
            fea_context_last_error(ctx));
  double x[3] = {0.2, 0.2, 0.4}, ref[3];
  fea_index e;
  cr_assert_eq(s->ops->locate(s, x, &e, ref), FEA_ERR_UNSUPPORTED);
  fea_element_values_free(&ev);
  fea_quadrature_free(&q);
  fea_space_destroy(&s);
  fea_object_release(m);
  fea_context_destroy(&ctx);
}

static double first_coordinate(const double *x, void *user) {
  (void)user;
  return x[0];
}

static double bad_function(const double *x, void *user) {
  (void)user;
  return x[0] > 0.7 ? NAN : 1.0;
}

Test(lagrange_space, interpolate_and_lifetime) {
  fea_context *ctx = open_ctx();
  fea_mesh *m = structured(ctx, 2, 2, 0);
  fea_space *s = build(m, 3, FEA_NODES_GAUSS_LOBATTO);
  cr_assert_eq(m->refcount, 2, "the space holds the mesh");
  fea_object_release(m); /* the space keeps it alive */
  double *u = malloc((size_t)s->num_dofs * sizeof *u);
  cr_assert_eq(s->ops->interpolate(s, first_coordinate, NULL, u), FEA_SUCCESS);
  const double *X = fea_space_lagrange_dof_coords(s);
  for (fea_index i = 0; i < s->num_dofs; i++) cr_assert_eq(u[i], X[2 * i]);
  cr_assert_eq(s->ops->interpolate(s, bad_function, NULL, u), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(ctx), "the function is nan at DoF") != NULL, "%s",
            fea_context_last_error(ctx));
  free(u);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* Arguments the interface normally filters are refused here too, by name. */
Test(lagrange_space, build_rechecks_arguments) {
  fea_context *ctx = open_ctx();
  fea_mesh *m = structured(ctx, 2, 1, 1);
  fea_space *s = (fea_space *)&m; /* any non-NULL value: it must be reset */
  cr_assert_eq(fea_space_lagrange_build(m, 3, FEA_NODES_EQUISPACED, &s), FEA_ERR_INVALID_ARG);
  cr_assert_null(s);
  cr_assert(strstr(fea_context_last_error(ctx), "order 3 is outside 1..2 for triangle") != NULL,
            "%s", fea_context_last_error(ctx));
  cr_assert_eq(fea_space_lagrange_build(m, 1, (fea_lagrange_nodes)3, &s), FEA_ERR_INVALID_ARG);
  cr_assert_eq(m->refcount, 1, "a failed build holds no reference");
  fea_object_release(m);
  fea_context_destroy(&ctx);
}
