/* Lagrange reference elements (see lagrange.h for the conventions): node sets
 * on [0,1], 1D bases, shape functions of the reference cells, and the linear
 * map from a reference cell to a mesh cell.
 *
 * Orders stay at or below 6 (FEA_LAGRANGE_MAX_ORDER), so every basis is
 * evaluated straight from its product formula: no division by t - x_j, hence
 * exact Kronecker values at the nodes, and the cost is negligible next to
 * what the caller does with it. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "internal/error.h"
#include "lagrange.h"

const int fea_triangle_edges[3][2] = {{0, 1}, {1, 2}, {2, 0}};
const int fea_tetrahedron_edges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};

/* Lexicographic corner (bit k = coordinate k) to mesh vertex: the quad lists
 * (0,0) (1,0) (1,1) (0,1), the hexahedron that square at z = 0 then at z = 1. */
int fea_tensor_corner_vertex(int dim, int c) {
  static const int square[4] = {0, 1, 3, 2};
  if (dim == 1) return c;
  return square[c & 3] + (dim == 3 ? 4 * (c >> 2) : 0);
}

static int cell_dim(fea_cell_type cell) {
  return cell == FEA_CELL_INTERVAL ? 1 : cell == FEA_CELL_TRIANGLE || cell == FEA_CELL_QUAD ? 2 : 3;
}

static int is_simplex(fea_cell_type cell) {
  return cell == FEA_CELL_TRIANGLE || cell == FEA_CELL_TETRAHEDRON;
}

/* P_p and P'_p at x (p >= 1) by the three-term recurrences. */
static void legendre(int p, double x, double *P, double *dP) {
  double p0 = 1.0, p1 = x, d0 = 0.0, d1 = 1.0;
  for (int n = 1; n < p; n++) {
    double p2 = ((2 * n + 1) * x * p1 - n * p0) / (n + 1);
    double d2 = d0 + (2 * n + 1) * p1;
    p0 = p1;
    p1 = p2;
    d0 = d1;
    d1 = d2;
  }
  *P = p1;
  *dP = d1;
}

/* The interior Gauss-Lobatto points of degree p on [-1, 1] are the roots of
 * P'_p; Newton's method from the Chebyshev-Lobatto points, with P''_p from
 * Legendre's equation (1 - x^2) P'' = 2x P' - p(p+1) P, converges in at
 * most 6 steps for p <= 6 (checked up to 8), to within 1e-16 of the roots
 * (the closed forms for p <= 6 agree). Only the lower half is computed: the
 * caller mirrors it. */
static double lobatto_root(int p, int k) {
  const double pi = 3.14159265358979323846;
  double x = -cos(pi * k / p);
  for (int it = 0; it < 100; it++) {
    double P, dP;
    legendre(p, x, &P, &dP);
    double d2P = (2.0 * x * dP - p * (p + 1.0) * P) / (1.0 - x * x);
    double step = dP / d2P;
    x -= step;
    if (fabs(step) < 1e-15) break; /* quadratic convergence: x is now exact to rounding */
  }
  return x;
}

fea_status fea_lagrange_nodes_1d(int p, fea_lagrange_nodes kind, double *x) {
  FEA_CHECK(p >= 1 && p <= FEA_LAGRANGE_MAX_ORDER, NULL, FEA_ERR_INVALID_ARG,
            "degree %d is outside 1..%d", p, FEA_LAGRANGE_MAX_ORDER);
  FEA_CHECK(kind == FEA_NODES_EQUISPACED || kind == FEA_NODES_GAUSS_LOBATTO, NULL,
            FEA_ERR_INVALID_ARG,
            "unknown node set %d (expected FEA_NODES_EQUISPACED or FEA_NODES_GAUSS_LOBATTO)",
            (int)kind);
  /* The lower half defines the set; the upper half is its exact mirror image,
   * so that the interior nodes of an edge coincide from both of its ends. */
  x[0] = 0.0;
  for (int i = 1; 2 * i < p; i++) {
    double t = kind == FEA_NODES_EQUISPACED ? (double)i / p : 0.5 * (1.0 + lobatto_root(p, i));
    /* A multiple of 2^-53 (a change below 2^-54) makes 1 - t exact, and with
     * it 1 - (1 - t) == t: the set is symmetric in both directions. */
    x[i] = ldexp(nearbyint(ldexp(t, 53)), -53);
  }
  if (p % 2 == 0) x[p / 2] = 0.5;
  for (int i = 0; 2 * i < p; i++) x[p - i] = 1.0 - x[i];
  return FEA_SUCCESS;
}

void fea_lagrange_basis_1d(int p, const double *x, double t, double *val, double *der) {
  for (int i = 0; i <= p; i++) {
    double v = 1.0, d = 0.0;
    for (int j = 0; j <= p; j++) {
      if (j == i) continue;
      double den = x[i] - x[j];
      /* product rule, accumulated: d(v * f) = d * f + v * f'; dividing (not
       * multiplying by 1 / den) keeps the factor at t = x[i] exactly 1 */
      d = d * (t - x[j]) / den + v / den;
      v *= (t - x[j]) / den;
    }
    val[i] = v;
    if (der) der[i] = d;
  }
}

/* Lexicographic multi-index of tensor node i. */
static void tensor_index(int i, int n1, int a[3]) {
  a[0] = i % n1;
  a[1] = (i / n1) % n1;
  a[2] = i / (n1 * n1);
}

static void init_tensor(fea_lagrange_element *el, fea_lagrange_nodes kind) {
  int d = el->dim, p = el->order, n1 = p + 1;
  el->tensor = 1;
  el->nb = d == 1 ? n1 : d == 2 ? n1 * n1 : n1 * n1 * n1;
  (void)fea_lagrange_nodes_1d(p, kind, el->x1d); /* arguments checked by the caller */
  for (int i = 0; i < el->nb; i++) {
    int a[3];
    tensor_index(i, n1, a);
    unsigned mask = 0;
    for (int c = 0; c < (1 << d); c++) {
      /* Corner c belongs to the node's entity when it agrees with the node in
       * every direction where the node sits on the boundary (a_k = 0 or p). */
      int on = 1;
      for (int k = 0; k < d; k++)
        if ((a[k] == 0 || a[k] == p) && ((c >> k) & 1) != (a[k] == p)) on = 0;
      if (on) mask |= 1u << fea_tensor_corner_vertex(d, c);
    }
    el->vmask[i] = (unsigned char)mask;
    for (int k = 0; k < d; k++) el->nodes[i * d + k] = el->x1d[a[k]];
  }
}

static void init_simplex(fea_lagrange_element *el) {
  int d = el->dim, nv = d + 1, ne = d == 2 ? 3 : 6;
  const int(*edges)[2] = d == 2 ? fea_triangle_edges : fea_tetrahedron_edges;
  el->tensor = 0;
  el->nb = el->order == 1 ? nv : nv + ne;
  memset(el->nodes, 0, sizeof el->nodes);
  for (int v = 0; v < nv; v++) {
    if (v > 0) el->nodes[v * d + v - 1] = 1.0;
    el->vmask[v] = (unsigned char)(1u << v);
  }
  for (int e = 0; el->order == 2 && e < ne; e++) {
    int i = nv + e, v0 = edges[e][0], v1 = edges[e][1];
    for (int k = 0; k < d; k++)
      el->nodes[i * d + k] = 0.5 * (el->nodes[v0 * d + k] + el->nodes[v1 * d + k]);
    el->vmask[i] = (unsigned char)((1u << v0) | (1u << v1));
  }
}

fea_status fea_lagrange_element_init(fea_cell_type cell, int order, fea_lagrange_nodes kind,
                                     fea_lagrange_element *el) {
  int simplex = cell == FEA_CELL_TRIANGLE || cell == FEA_CELL_TETRAHEDRON;
  int tensor = cell == FEA_CELL_INTERVAL || cell == FEA_CELL_QUAD || cell == FEA_CELL_HEXAHEDRON;
  FEA_CHECK(simplex || tensor, NULL, FEA_ERR_INVALID_ARG, "unknown cell type %d", (int)cell);
  int max = simplex ? 2 : FEA_LAGRANGE_MAX_ORDER;
  FEA_CHECK(order >= 1 && order <= max, NULL, FEA_ERR_INVALID_ARG,
            "order %d is outside 1..%d for %s cells", order, max,
            simplex ? "simplex" : "tensor-product");
  FEA_CHECK(kind == FEA_NODES_EQUISPACED || kind == FEA_NODES_GAUSS_LOBATTO, NULL,
            FEA_ERR_INVALID_ARG,
            "unknown node set %d (expected FEA_NODES_EQUISPACED or FEA_NODES_GAUSS_LOBATTO)",
            (int)kind);
  memset(el, 0, sizeof *el);
  el->cell = cell;
  el->order = order;
  el->dim = cell_dim(cell);
  if (tensor)
    init_tensor(el, kind);
  else
    init_simplex(el);
  return FEA_SUCCESS;
}

static void eval_tensor(const fea_lagrange_element *el, const double *xi, double *phi,
                        double *dphi) {
  int d = el->dim, p = el->order, n1 = p + 1;
  double v[3][FEA_LAGRANGE_MAX_ORDER + 1], dv[3][FEA_LAGRANGE_MAX_ORDER + 1];
  for (int k = 0; k < d; k++) fea_lagrange_basis_1d(p, el->x1d, xi[k], v[k], dv[k]);
  for (int i = 0; i < el->nb; i++) {
    int a[3];
    tensor_index(i, n1, a);
    if (phi) {
      double f = 1.0;
      for (int k = 0; k < d; k++) f *= v[k][a[k]];
      phi[i] = f;
    }
    if (dphi)
      for (int m = 0; m < d; m++) {
        double g = 1.0;
        for (int k = 0; k < d; k++) g *= k == m ? dv[k][a[k]] : v[k][a[k]];
        dphi[i * d + m] = g;
      }
  }
}

/* P1: the barycentric coordinates lambda_0 = 1 - sum xi, lambda_v = xi_{v-1}.
 * P2: lambda_v (2 lambda_v - 1) at the vertices, 4 lambda_a lambda_b on edge (a, b). */
static void eval_simplex(const fea_lagrange_element *el, const double *xi, double *phi,
                         double *dphi) {
  int d = el->dim, nv = d + 1, ne = d == 2 ? 3 : 6;
  const int(*edges)[2] = d == 2 ? fea_triangle_edges : fea_tetrahedron_edges;
  double lam[4], glam[4][3] = {{0}};
  lam[0] = 1.0;
  for (int k = 0; k < d; k++) {
    lam[0] -= xi[k];
    lam[k + 1] = xi[k];
    glam[0][k] = -1.0;
    glam[k + 1][k] = 1.0;
  }
  for (int v = 0; v < nv; v++) {
    double f = el->order == 1 ? lam[v] : lam[v] * (2.0 * lam[v] - 1.0);
    double df = el->order == 1 ? 1.0 : 4.0 * lam[v] - 1.0;
    if (phi) phi[v] = f;
    if (dphi)
      for (int k = 0; k < d; k++) dphi[v * d + k] = df * glam[v][k];
  }
  for (int e = 0; el->order == 2 && e < ne; e++) {
    int a = edges[e][0], b = edges[e][1], i = nv + e;
    if (phi) phi[i] = 4.0 * lam[a] * lam[b];
    if (dphi)
      for (int k = 0; k < d; k++)
        dphi[i * d + k] = 4.0 * (lam[b] * glam[a][k] + lam[a] * glam[b][k]);
  }
}

void fea_lagrange_element_eval(const fea_lagrange_element *el, const double *xi, double *phi,
                               double *dphi) {
  if (el->tensor)
    eval_tensor(el, xi, phi, dphi);
  else
    eval_simplex(el, xi, phi, dphi);
}

void fea_cell_map(fea_cell_type cell, int gdim, const double *verts, const double *xi, double *x,
                  double *J) {
  int d = cell_dim(cell);
  if (is_simplex(cell)) {
    /* x = X_0 + sum_k xi_k (X_{k+1} - X_0) */
    for (int i = 0; i < gdim; i++) {
      double xi_sum = verts[i];
      for (int k = 0; k < d; k++) {
        double edge = verts[(k + 1) * gdim + i] - verts[i];
        xi_sum += xi[k] * edge;
        if (J) J[i * d + k] = edge;
      }
      x[i] = xi_sum;
    }
    return;
  }
  /* Multilinear: x = sum_c N_c(xi) X_c with N_c = prod_k (xi_k or 1 - xi_k). */
  for (int i = 0; i < gdim; i++) x[i] = 0.0;
  if (J)
    for (int i = 0; i < gdim * d; i++) J[i] = 0.0;
  for (int c = 0; c < (1 << d); c++) {
    const double *X = verts + fea_tensor_corner_vertex(d, c) * gdim;
    double f[3], df[3], N = 1.0;
    for (int k = 0; k < d; k++) {
      int b = (c >> k) & 1;
      f[k] = b ? xi[k] : 1.0 - xi[k];
      df[k] = b ? 1.0 : -1.0;
      N *= f[k];
    }
    for (int i = 0; i < gdim; i++) x[i] += N * X[i];
    if (!J) continue;
    for (int m = 0; m < d; m++) {
      double dN = df[m];
      for (int k = 0; k < d; k++)
        if (k != m) dN *= f[k];
      for (int i = 0; i < gdim; i++) J[i * d + m] += dN * X[i];
    }
  }
}

int fea_cell_map_inverse(fea_cell_type cell, const double *verts, const double *x, double tol,
                         double *xi) {
  int d = cell_dim(cell), simplex = is_simplex(cell);
  /* Start at the centroid. The map is affine for simplices and intervals
   * (one step is exact; the second only confirms it) and multilinear
   * otherwise, where Newton's method converges quadratically for points in
   * or near a cell with a positive Jacobian. Far outside it may not: such
   * points are rejected, which is the right answer for them anyway.
   * Rounding bounds what a step can resolve: x is known to about eps |x|,
   * hence xi to about eps |x| |J^{-1}|, which for small cells far from the
   * origin exceeds any fixed threshold. That floor is added both to the
   * convergence test and to the caller's tolerance. */
  for (int k = 0; k < d; k++) xi[k] = simplex ? 1.0 / (d + 1) : 0.5;
  double xmax = 0.0;
  for (int i = 0; i < d; i++) xmax = fmax(xmax, fabs(x[i]));
  int converged = 0;
  double floor_ = 0.0;
  for (int it = 0; it < 40 && !converged; it++) {
    double y[3], J[9], Jinv[9], step = 0.0, jnorm = 0.0;
    fea_cell_map(cell, d, verts, xi, y, J);
    if (!(fea_small_inverse(d, J, Jinv) > 0.0)) return 0;
    for (int k = 0; k < d; k++) {
      double dk = 0.0, row = 0.0;
      for (int i = 0; i < d; i++) {
        dk += Jinv[k * d + i] * (x[i] - y[i]);
        row += fabs(Jinv[k * d + i]);
      }
      xi[k] += dk;
      step = fmax(step, fabs(dk));
      jnorm = fmax(jnorm, row);
    }
    if (!isfinite(step) || step > 1e6) return 0;
    floor_ = 64.0 * DBL_EPSILON * xmax * jnorm;
    converged = step <= 1e-14 + floor_;
  }
  if (!converged) return 0;
  tol += floor_;
  double sum = 0.0;
  for (int k = 0; k < d; k++) {
    if (xi[k] < -tol || (!simplex && xi[k] > 1.0 + tol)) return 0;
    sum += xi[k];
  }
  if (simplex && sum > 1.0 + tol) return 0;
  /* Within the tolerance: onto the reference cell. */
  sum = 0.0;
  for (int k = 0; k < d; k++) {
    xi[k] = fmin(fmax(xi[k], 0.0), 1.0);
    sum += xi[k];
  }
  if (simplex && sum > 1.0)
    for (int k = 0; k < d; k++) xi[k] /= sum;
  return 1;
}

double fea_small_inverse(int d, const double *A, double *Ainv) {
  double det;
  if (d == 1) {
    det = A[0];
    if (Ainv && det != 0.0) Ainv[0] = 1.0 / det;
    return det;
  }
  if (d == 2) {
    det = A[0] * A[3] - A[1] * A[2];
    if (Ainv && det != 0.0) {
      Ainv[0] = A[3] / det;
      Ainv[1] = -A[1] / det;
      Ainv[2] = -A[2] / det;
      Ainv[3] = A[0] / det;
    }
    return det;
  }
  /* 3 x 3 by cofactors: Ainv = adj(A) / det. */
  double c[9];
  c[0] = A[4] * A[8] - A[5] * A[7];
  c[1] = A[2] * A[7] - A[1] * A[8];
  c[2] = A[1] * A[5] - A[2] * A[4];
  c[3] = A[5] * A[6] - A[3] * A[8];
  c[4] = A[0] * A[8] - A[2] * A[6];
  c[5] = A[2] * A[3] - A[0] * A[5];
  c[6] = A[3] * A[7] - A[4] * A[6];
  c[7] = A[1] * A[6] - A[0] * A[7];
  c[8] = A[0] * A[4] - A[1] * A[3];
  det = A[0] * c[0] + A[1] * c[3] + A[2] * c[6];
  if (Ainv && det != 0.0)
    for (int i = 0; i < 9; i++) Ainv[i] = c[i] / det;
  return det;
}
