/* Lagrange spaces through the public API: DoF counts against closed forms,
 * boundary DoFs against the geometry, exact interpolation and evaluation of
 * the polynomials a space holds, and conformity (no jump across shared
 * facets) on meshes whose node numbers are shuffled and whose cells are
 * rotated, so that shared edges and faces meet in every orientation. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <feaccel/space.h>

#include "mesh-common.h"

/* The highest order on intervals, quads and hexahedra, written out. */
#define QMAX 6

/* ---- helpers --------------------------------------------------------------------------------- */

static uint64_t rng_state;

static void rng_seed(uint64_t s) { rng_state = s * 0x9e3779b97f4a7c15ull + 1; }

static double urand(void) { /* xorshift64*, uniform in [0, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53;
}

static int irand(int n) { return (int)(urand() * n); }

static fea_mesh *box_mesh(fea_context *ctx, int dim, const fea_index n[3], int simplices) {
  fea_mesh_desc d = FEA_MESH_DESC_INIT;
  d.dim = dim;
  for (int k = 0; k < 3; k++) d.n[k] = n[k];
  d.simplices = simplices;
  fea_mesh *m = NULL;
  OK(fea_mesh_create_structured(ctx, &d, &m));
  return m;
}

static fea_space *lagrange(fea_mesh *m, int p, fea_lagrange_nodes nodes) {
  fea_space *s = NULL;
  OK(fea_space_create_lagrange(m, p, nodes, &s));
  return s;
}

static fea_space_info info_of(const fea_space *s) {
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  return info;
}

/* Reference corner bits (x + 2y + 4z) of local node l of quads and hexahedra,
 * read off the node-order table of mesh.h. */
static const int corner_bits[8] = {0, 1, 3, 2, 4, 5, 7, 6};

/* Turn the cube's corner c (bits x, y, z) a quarter about an axis. */
static int rotate_corner(int c, int axis) {
  int x = c & 1, y = (c >> 1) & 1, z = (c >> 2) & 1, nx = x, ny = y, nz = z;
  if (axis == 2) { /* (x, y) -> (1 - y, x) */
    nx = 1 - y;
    ny = x;
  } else if (axis == 0) { /* (y, z) -> (1 - z, y) */
    ny = 1 - z;
    nz = y;
  } else { /* (z, x) -> (1 - x, z) */
    nz = 1 - x;
    nx = z;
  }
  return nx | ny << 1 | nz << 2;
}

/* The mesh's cells with node numbers shuffled, each cell's vertex list turned
 * by a random orientation-preserving symmetry, and interior nodes moved by up
 * to `jitter` times h (0 keeps box cells affine), as a mesh from arrays. */
static fea_mesh *scramble(fea_context *ctx, const fea_mesh *m, double jitter, double h) {
  struct arrays a = get_arrays(m);
  fea_index *perm = malloc((size_t)a.nn * sizeof *perm),
            *cells = malloc((size_t)(a.nc * a.npc) * sizeof *cells);
  double *x = malloc((size_t)(a.nn * a.dim) * sizeof *x);
  for (fea_index i = 0; i < a.nn; i++) perm[i] = i;
  for (fea_index i = a.nn - 1; i > 0; i--) {
    fea_index j = (fea_index)(urand() * (double)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (fea_index i = 0; i < a.nn; i++) {
    int boundary = 0;
    for (int k = 0; k < a.dim; k++)
      boundary |= a.x[i * a.dim + k] == 0.0 || a.x[i * a.dim + k] == 1.0;
    for (int k = 0; k < a.dim; k++)
      x[perm[i] * a.dim + k] = a.x[i * a.dim + k] +
                               (boundary ? 0.0 : jitter * h * (2 * urand() - 1));
  }
  for (fea_index c = 0; c < a.nc; c++) {
    int map[8] = {0, 1, 2, 3, 4, 5, 6, 7}; /* new local node l = old local node map[l] */
    if (a.type == FEA_CELL_QUAD || a.type == FEA_CELL_TRIANGLE) {
      int r = irand(a.npc);
      for (int l = 0; l < a.npc; l++) map[l] = (l + r) % a.npc;
    } else if (a.type == FEA_CELL_HEXAHEDRON) {
      int img[8] = {0, 1, 2, 3, 4, 5, 6, 7};
      for (int r = irand(12); r >= 0; r--) {
        int axis = irand(3);
        for (int b = 0; b < 8; b++) img[b] = rotate_corner(img[b], axis);
      }
      for (int l = 0; l < 8; l++) map[l] = corner_bits[img[corner_bits[l]]];
    } else if (a.type == FEA_CELL_TETRAHEDRON) {
      for (int l = 3; l > 0; l--) {
        int j = irand(l + 1), t = map[l];
        map[l] = map[j];
        map[j] = t;
      }
      int inv = 0; /* an odd permutation inverts the cell: one more swap */
      for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) inv += map[i] > map[j];
      if (inv % 2) {
        int t = map[2];
        map[2] = map[3];
        map[3] = t;
      }
    }
    for (int l = 0; l < a.npc; l++) cells[c * a.npc + l] = perm[a.c[c * a.npc + map[l]]];
  }
  fea_mesh *out = NULL;
  OK(fea_mesh_create_from_arrays(ctx, a.dim, a.type, a.nn, x, a.nc, cells, &out));
  free(perm);
  free(cells);
  free(x);
  free_arrays(&a);
  return out;
}

/* DoF points through the public API: the interpolant of x_k holds the
 * k-th coordinate of every DoF's node. */
static double coordinate(const double *x, void *user) { return x[*(const int *)user]; }

static double *dof_points(const fea_space *s, int dim, fea_index n) {
  double *X = malloc((size_t)(n * dim) * sizeof *X), *u = malloc((size_t)n * sizeof *u);
  for (int k = 0; k < dim; k++) {
    OK(fea_space_interpolate(s, coordinate, &k, u));
    for (fea_index i = 0; i < n; i++) X[i * dim + k] = u[i];
  }
  free(u);
  return X;
}

static fea_index ipow(fea_index b, int e) {
  fea_index r = 1;
  while (e-- > 0) r *= b;
  return r;
}

/* ---- counts ---------------------------------------------------------------------------------- */

/* On an n_0 x n_1 x n_2 box, Q_p and P_p (p <= 2) place DoFs on the grid of
 * spacing h/p: prod (p n_k + 1) DoFs, prod (p n_k + 1) - prod (p n_k - 1) on
 * the boundary. P2 on the Kuhn tetrahedra: every edge midpoint is such a grid
 * point and every such point that is not a vertex is an edge midpoint. */
Test(space_lagrange, dof_counts_closed_forms) {
  fea_context *ctx = open_ref();
  static const fea_index n[3] = {3, 2, 4};
  for (int dim = 1; dim <= 3; dim++)
    for (int simp = 0; simp <= (dim > 1); simp++) {
      fea_mesh *m = box_mesh(ctx, dim, n, simp);
      for (int p = 1; p <= (simp ? 2 : QMAX); p++)
        for (int gll = 0; gll < 2; gll++) {
          fea_space *s = lagrange(m, p, gll ? FEA_NODES_GAUSS_LOBATTO : FEA_NODES_EQUISPACED);
          fea_space_info info = info_of(s);
          fea_index all = 1, inner = 1, cells = 1;
          for (int k = 0; k < dim; k++) {
            all *= p * n[k] + 1;
            inner *= p * n[k] - 1;
            cells *= n[k];
          }
          int per = simp ? (dim == 2 ? (p == 1 ? 3 : 6) : (p == 1 ? 4 : 10))
                         : (int)ipow(p + 1, dim);
          cells *= simp ? (dim == 2 ? 2 : 6) : 1;
          cr_assert_eq(info.num_dofs, all, "dim %d simplices %d p %d: %lld DoFs, expected %lld",
                       dim, simp, p, (long long)info.num_dofs, (long long)all);
          cr_assert_eq(info.num_boundary_dofs, all - inner,
                       "dim %d simplices %d p %d: %lld boundary DoFs", dim, simp, p,
                       (long long)info.num_boundary_dofs);
          cr_assert_eq(info.dofs_per_element, per);
          cr_assert_eq(info.num_elements, cells);
          cr_assert_eq(info.dim, dim);
          cr_assert_eq(info.is_bspline, 0);
          for (int k = 0; k < dim; k++) {
            cr_assert_eq(info.degree[k], p);
            cr_assert_eq(info.elements[k], n[k]);
          }
          OK(fea_space_destroy(&s));
          cr_assert_null(s);
        }
      OK(fea_mesh_destroy(&m));
    }
  OK(fea_context_destroy(&ctx));
}

/* The element DoFs are distinct, in range, cover all DoFs; the vertex DoFs
 * are the node numbers; counts do not depend on the node numbering. */
Test(space_lagrange, element_dofs_on_scrambled_meshes) {
  fea_context *ctx = open_ref();
  rng_seed(11);
  static const fea_index n[3] = {3, 3, 2};
  for (int dim = 2; dim <= 3; dim++)
    for (int simp = 0; simp < 2; simp++) {
      fea_mesh *base = box_mesh(ctx, dim, n, simp), *m = scramble(ctx, base, 0.0, 0.5);
      struct arrays a = get_arrays(m);
      for (int p = 1; p <= (simp ? 2 : QMAX); p++) {
        fea_space *s0 = lagrange(base, p, FEA_NODES_EQUISPACED),
                  *s = lagrange(m, p, FEA_NODES_EQUISPACED);
        fea_space_info i0 = info_of(s0), info = info_of(s);
        cr_assert_eq(info.num_dofs, i0.num_dofs);
        cr_assert_eq(info.num_boundary_dofs, i0.num_boundary_dofs);
        cr_assert_eq(info.elements[0], 0, "an unstructured mesh has no elements per direction");
        char *seen = calloc((size_t)info.num_dofs, 1);
        fea_index *dofs = malloc((size_t)info.dofs_per_element * sizeof *dofs);
        for (fea_index e = 0; e < info.num_elements; e++) {
          OK(fea_space_get_element_dofs(s, e, dofs));
          for (int i = 0; i < info.dofs_per_element; i++) {
            cr_assert(dofs[i] >= 0 && dofs[i] < info.num_dofs);
            for (int j = 0; j < i; j++)
              cr_assert_neq(dofs[i], dofs[j], "element %lld repeats a DoF", (long long)e);
            seen[dofs[i]] = 1;
          }
          /* every node of the cell is one of its DoFs */
          for (int v = 0; v < a.npc; v++) {
            int found = 0;
            for (int i = 0; i < info.dofs_per_element; i++) found |= dofs[i] == a.c[e * a.npc + v];
            cr_assert(found, "element %lld lacks the DoF of its node %lld", (long long)e,
                      (long long)a.c[e * a.npc + v]);
          }
        }
        for (fea_index i = 0; i < info.num_dofs; i++)
          cr_assert(seen[i], "DoF %lld in no element", (long long)i);
        free(seen);
        free(dofs);
        OK(fea_space_destroy(&s0));
        OK(fea_space_destroy(&s));
      }
      free_arrays(&a);
      OK(fea_mesh_destroy(&base));
      OK(fea_mesh_destroy(&m));
    }
  OK(fea_context_destroy(&ctx));
}

/* The boundary DoFs are exactly the DoFs whose points lie on the box's faces,
 * and come sorted. */
Test(space_lagrange, boundary_dofs_are_the_dofs_on_the_boundary) {
  fea_context *ctx = open_ref();
  rng_seed(12);
  static const fea_index n[3] = {3, 3, 3};
  for (int dim = 1; dim <= 3; dim++)
    for (int simp = 0; simp <= (dim > 1); simp++) {
      fea_mesh *base = box_mesh(ctx, dim, n, simp),
               *m = scramble(ctx, base, simp ? 0.08 : 0.15, 1.0 / 3);
      for (int p = 1; p <= (simp ? 2 : QMAX); p++) {
        fea_space *s = lagrange(m, p, FEA_NODES_GAUSS_LOBATTO);
        fea_space_info info = info_of(s);
        double *X = dof_points(s, dim, info.num_dofs);
        fea_index *b = malloc((size_t)(info.num_boundary_dofs + 1) * sizeof *b);
        OK(fea_space_get_boundary_dofs(s, info.num_boundary_dofs, b));
        fea_index j = 0;
        for (fea_index i = 0; i < info.num_dofs; i++) {
          int on = 0;
          for (int k = 0; k < dim; k++)
            on |= fabs(X[i * dim + k]) < 1e-13 || fabs(X[i * dim + k] - 1) < 1e-13;
          if (!on) continue;
          cr_assert(j < info.num_boundary_dofs && b[j] == i,
                    "dim %d simplices %d p %d: DoF %lld on the boundary is not listed", dim, simp,
                    p, (long long)i);
          j++;
        }
        cr_assert_eq(j, info.num_boundary_dofs,
                     "dim %d simplices %d p %d: %lld listed, %lld on the boundary", dim, simp, p,
                     (long long)info.num_boundary_dofs, (long long)j);
        free(X);
        free(b);
        OK(fea_space_destroy(&s));
      }
      OK(fea_mesh_destroy(&base));
      OK(fea_mesh_destroy(&m));
    }
  OK(fea_context_destroy(&ctx));
}

/* ---- exactness ------------------------------------------------------------------------------- */

/* A polynomial of the space: sum of c_e x^e over exponents e with each e_k <=
 * p (Q_p) or sum e_k <= p (P_p), with fixed pseudo-random coefficients. */
typedef struct poly {
  int dim, p, simplex;
  double c[QMAX + 1][QMAX + 1][QMAX + 1];
} poly;

static void poly_init(poly *P, int dim, int p, int simplex) {
  P->dim = dim;
  P->p = p;
  P->simplex = simplex;
  for (int a = 0; a <= QMAX; a++)
    for (int b = 0; b <= QMAX; b++)
      for (int c = 0; c <= QMAX; c++) {
        int in = a <= p && (dim > 1 ? b <= p : b == 0) && (dim > 2 ? c <= p : c == 0) &&
                 (!simplex || a + b + c <= p);
        P->c[a][b][c] = in ? 2 * urand() - 1 : 0.0;
      }
  if (!simplex) P->c[p][dim > 1 ? p : 0][dim > 2 ? p : 0] = 1.0; /* the top term x^p y^p z^p */
}

static double poly_eval(const poly *P, const double *x, double *grad) {
  double u = 0, g[3] = {0, 0, 0}, y[3] = {x[0], P->dim > 1 ? x[1] : 0, P->dim > 2 ? x[2] : 0};
  for (int a = 0; a <= QMAX; a++)
    for (int b = 0; b <= QMAX; b++)
      for (int c = 0; c <= QMAX; c++) {
        double k = P->c[a][b][c];
        if (k == 0) continue;
        int e[3] = {a, b, c};
        double t = k;
        for (int i = 0; i < 3; i++) t *= pow(y[i], e[i]);
        u += t;
        for (int i = 0; i < P->dim; i++) {
          double d = e[i] ? k * e[i] * pow(y[i], e[i] - 1) : 0;
          for (int j = 0; j < 3; j++)
            if (j != i) d *= pow(y[j], e[j]);
          g[i] += d;
        }
      }
  if (grad)
    for (int i = 0; i < P->dim; i++) grad[i] = g[i];
  return u;
}

static double poly_fn(const double *x, void *user) { return poly_eval(user, x, NULL); }

/* Interpolation holds the space's polynomials exactly; evaluation at random
 * points gives their values and gradients. Box cells stay affine (no jitter),
 * simplices are jittered (they are affine anyway). */
Test(space_lagrange, interpolation_reproduces_polynomials) {
  fea_context *ctx = open_ref();
  rng_seed(13);
  static const fea_index n[3] = {3, 2, 2};
  for (int dim = 1; dim <= 3; dim++)
    for (int simp = 0; simp <= (dim > 1); simp++) {
      fea_mesh *base = box_mesh(ctx, dim, n, simp),
               *scr = scramble(ctx, base, simp ? 0.08 : 0.0, 0.5);
      fea_mesh *meshes[2] = {base, scr};
      for (int w = 0; w < 2; w++)
        for (int p = 1; p <= (simp ? 2 : QMAX); p++)
          for (int gll = 0; gll < 2; gll++) {
            fea_space *s = lagrange(meshes[w], p,
                                    gll ? FEA_NODES_GAUSS_LOBATTO : FEA_NODES_EQUISPACED);
            fea_space_info info = info_of(s);
            poly P;
            poly_init(&P, dim, p, simp);
            double *u = malloc((size_t)info.num_dofs * sizeof *u);
            OK(fea_space_interpolate(s, poly_fn, &P, u));
            enum { NPTS = 50 };
            double pts[NPTS * 3], val[NPTS], grad[NPTS * 3];
            for (int i = 0; i < NPTS * dim; i++) pts[i] = urand();
            OK(fea_space_evaluate(s, u, NPTS, pts, val, grad));
            for (int i = 0; i < NPTS; i++) {
              double g[3], want = poly_eval(&P, pts + i * dim, g);
              cr_assert(fabs(val[i] - want) <= 1e-12,
                        "dim %d simplices %d p %d %s: u_h = %.17g, u = %.17g", dim, simp, p,
                        w ? "scrambled" : "structured", val[i], want);
              for (int k = 0; k < dim; k++)
                cr_assert(fabs(grad[i * dim + k] - g[k]) <= 1e-10,
                          "dim %d simplices %d p %d: du_h/dx_%d = "
                          "%.17g, du/dx_%d = %.17g",
                          dim, simp, p, k, grad[i * dim + k], k, g[k]);
            }
            free(u);
            OK(fea_space_destroy(&s));
          }
      OK(fea_mesh_destroy(&base));
      OK(fea_mesh_destroy(&scr));
    }
  OK(fea_context_destroy(&ctx));
}

static double affine_fn(const double *x, void *user) {
  const int *dim = user;
  return 0.5 + 2 * x[0] - (*dim > 1 ? 3 * x[1] : 0) + (*dim > 2 ? x[2] : 0);
}

/* On distorted quads and hexahedra (multilinear, not affine) every order
 * still holds the affine functions (the geometry is isoparametric): values
 * and gradients come back exactly, which checks x(xi), J^{-T} and the Newton
 * inversion behind point location. */
Test(space_lagrange, affine_functions_on_distorted_meshes) {
  fea_context *ctx = open_ref();
  rng_seed(14);
  static const fea_index n[3] = {4, 3, 3};
  for (int dim = 2; dim <= 3; dim++) {
    fea_mesh *base = box_mesh(ctx, dim, n, 0), *m = scramble(ctx, base, 0.2, 1.0 / 4);
    for (int p = 1; p <= QMAX; p++) {
      fea_space *s = lagrange(m, p, FEA_NODES_GAUSS_LOBATTO);
      fea_space_info info = info_of(s);
      double *u = malloc((size_t)info.num_dofs * sizeof *u);
      OK(fea_space_interpolate(s, affine_fn, &dim, u));
      enum { NPTS = 100 };
      double pts[NPTS * 3], val[NPTS], grad[NPTS * 3];
      for (int i = 0; i < NPTS * dim; i++) pts[i] = urand();
      OK(fea_space_evaluate(s, u, NPTS, pts, val, grad));
      const double want_g[3] = {2, -3, 1};
      for (int i = 0; i < NPTS; i++) {
        cr_assert(fabs(val[i] - affine_fn(pts + i * dim, &dim)) <= 1e-13, "dim %d p %d: %.17g", dim,
                  p, val[i]);
        for (int k = 0; k < dim; k++)
          cr_assert(fabs(grad[i * dim + k] - want_g[k]) <= 1e-11,
                    "dim %d p %d: gradient %d = %.17g", dim, p, k, grad[i * dim + k]);
      }
      free(u);
      OK(fea_space_destroy(&s));
    }
    OK(fea_mesh_destroy(&base));
    OK(fea_mesh_destroy(&m));
  }
  OK(fea_context_destroy(&ctx));
}

/* ---- conformity ------------------------------------------------------------------------------ */

/* Facets as local node lists of the mesh.h node order, vertices in cyclic order. */
static int facets_of(fea_cell_type t, const int (**f)[4], int *nv) {
  static const int quad[4][4] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  static const int tri[3][4] = {{0, 1}, {1, 2}, {2, 0}};
  static const int tet[4][4] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
  static const int hex[6][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 5, 4},
                                {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
  switch (t) {
  case FEA_CELL_QUAD: *f = quad, *nv = 2; return 4;
  case FEA_CELL_TRIANGLE: *f = tri, *nv = 2; return 3;
  case FEA_CELL_TETRAHEDRON: *f = tet, *nv = 3; return 4;
  default: *f = hex, *nv = 4; return 6;
  }
}

static int same_vertices(const fea_index *a, const fea_index *b, int n) {
  for (int i = 0; i < n; i++) {
    int hit = 0;
    for (int j = 0; j < n; j++) hit |= a[i] == b[j];
    if (!hit) return 0;
  }
  return 1;
}

/* u_h with random coefficients, evaluated just before and just after random
 * points of every interior facet, along the line between the two cells'
 * centroids: a conforming space has no jump there (a difference of order
 * delta times the gradient); a wrong numbering gives jumps of order one. */
static void check_no_jumps(fea_space *s, const fea_mesh *m, const char *what) {
  struct arrays a = get_arrays(m);
  fea_space_info info = info_of(s);
  double *u = malloc((size_t)info.num_dofs * sizeof *u);
  for (fea_index i = 0; i < info.num_dofs; i++) u[i] = 2 * urand() - 1;
  const int(*f)[4];
  int fnv, nf = facets_of(a.type, &f, &fnv), d = a.dim, shared = 0;
  const double delta = 1e-10;
  for (fea_index c0 = 0; c0 < a.nc; c0++)
    for (fea_index c1 = c0 + 1; c1 < a.nc; c1++)
      for (int f0 = 0; f0 < nf; f0++)
        for (int f1 = 0; f1 < nf; f1++) {
          fea_index k0[4], k1[4];
          for (int j = 0; j < fnv; j++) {
            k0[j] = a.c[c0 * a.npc + f[f0][j]];
            k1[j] = a.c[c1 * a.npc + f[f1][j]];
          }
          if (!same_vertices(k0, k1, fnv)) continue;
          shared++;
          double cen0[3] = {0, 0, 0}, cen1[3] = {0, 0, 0}, dir[3], len = 0;
          for (int v = 0; v < a.npc; v++)
            for (int k = 0; k < d; k++) {
              cen0[k] += X(&a, c0, v, k) / a.npc;
              cen1[k] += X(&a, c1, v, k) / a.npc;
            }
          for (int k = 0; k < d; k++) {
            dir[k] = cen1[k] - cen0[k];
            len += dir[k] * dir[k];
          }
          for (int k = 0; k < d; k++) dir[k] /= sqrt(len);
          for (int r = 0; r < 4; r++) {
            double w[4], x[3] = {0, 0, 0}, pts[6], val[2];
            if (fnv == 4) { /* the bilinear face */
              double s0 = 0.05 + 0.9 * urand(), t0 = 0.05 + 0.9 * urand();
              w[0] = (1 - s0) * (1 - t0), w[1] = s0 * (1 - t0), w[2] = s0 * t0,
              w[3] = (1 - s0) * t0;
            } else { /* away from the facet's boundary, so the offsets stay in the two cells */
              double sum = 0;
              for (int j = 0; j < fnv; j++) sum += w[j] = 0.2 + urand();
              for (int j = 0; j < fnv; j++) w[j] /= sum;
            }
            for (int j = 0; j < fnv; j++)
              for (int k = 0; k < d; k++) x[k] += w[j] * a.x[k0[j] * d + k];
            for (int k = 0; k < d; k++) {
              pts[k] = x[k] - delta * dir[k];
              pts[d + k] = x[k] + delta * dir[k];
            }
            OK(fea_space_evaluate(s, u, 2, pts, val, NULL));
            cr_assert(fabs(val[0] - val[1]) <= 1e-6,
                      "%s: u_h jumps by %.3g across the facet of elements "
                      "%lld and %lld",
                      what, fabs(val[0] - val[1]), (long long)c0, (long long)c1);
          }
        }
  cr_assert_gt(shared, 0);
  free(u);
  free_arrays(&a);
}

Test(space_lagrange, conforming_across_facets) {
  fea_context *ctx = open_ref();
  rng_seed(15);
  struct {
    int dim, simplices, pmin, pmax;
    fea_index n[3];
  } cases[] = {{2, 0, 2, QMAX, {3, 3, 1}},
               {2, 1, 2, 2, {3, 3, 1}},
               {3, 0, 2, QMAX, {2, 2, 2}},
               {3, 1, 2, 2, {2, 2, 2}}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fea_mesh *base = box_mesh(ctx, cases[c].dim, cases[c].n, cases[c].simplices);
    fea_mesh *m = scramble(ctx, base, cases[c].simplices ? 0.08 : 0.15,
                           1.0 / (double)cases[c].n[0]);
    for (int p = cases[c].pmin; p <= cases[c].pmax; p++)
      for (int gll = 0; gll < 2; gll++) {
        fea_space *s = lagrange(m, p, gll ? FEA_NODES_GAUSS_LOBATTO : FEA_NODES_EQUISPACED);
        char what[64];
        snprintf(what, sizeof what, "%dD %s order %d %s", cases[c].dim,
                 cases[c].simplices ? "simplices" : "boxes", p, gll ? "GLL" : "equispaced");
        check_no_jumps(s, m, what);
        OK(fea_space_destroy(&s));
      }
    OK(fea_mesh_destroy(&base));
    OK(fea_mesh_destroy(&m));
  }
  OK(fea_context_destroy(&ctx));
}

/* ---- errors and lifetime --------------------------------------------------------------------- */

/* Q1..Q6 on every tensor cell, and no further; simplices stop at P2. */
Test(space_lagrange, order_limits) {
  fea_context *ctx = open_ref();
  static const fea_index n[3] = {1, 1, 1};
  for (int dim = 1; dim <= 3; dim++) {
    fea_mesh *m = box_mesh(ctx, dim, n, 0);
    fea_space *s = lagrange(m, QMAX, FEA_NODES_GAUSS_LOBATTO);
    cr_assert_eq(info_of(s).dofs_per_element, (int)ipow(QMAX + 1, dim));
    OK(fea_space_destroy(&s));
    EXPECT_FAIL(fea_space_create_lagrange(m, QMAX + 1, FEA_NODES_EQUISPACED, &s),
                FEA_ERR_INVALID_ARG, ctx, "order 7 is outside 1..6");
    cr_assert_null(s);
    cr_assert(strstr(fea_context_last_error(ctx), "(Q1..Q6)") != NULL, "%s",
              fea_context_last_error(ctx));
    EXPECT_FAIL(fea_space_create_lagrange(m, 0, FEA_NODES_EQUISPACED, &s), FEA_ERR_INVALID_ARG, ctx,
                "order 0 is outside 1..6");
    OK(fea_mesh_destroy(&m));
  }
  fea_mesh *t = box_mesh(ctx, 2, n, 1);
  fea_space *s = NULL;
  EXPECT_FAIL(fea_space_create_lagrange(t, 3, FEA_NODES_EQUISPACED, &s), FEA_ERR_INVALID_ARG, ctx,
              "order 3 is outside 1..2");
  OK(fea_mesh_destroy(&t));
  OK(fea_context_destroy(&ctx));
}

Test(space_lagrange, evaluate_outside_names_the_point) {
  fea_context *ctx = open_ref();
  static const fea_index n[3] = {2, 2, 2};
  for (int simp = 0; simp < 2; simp++) {
    fea_mesh *m = box_mesh(ctx, 2, n, simp);
    fea_space *s = lagrange(m, 2, FEA_NODES_EQUISPACED);
    fea_space_info info = info_of(s);
    double *u = calloc((size_t)info.num_dofs, sizeof *u), pts[4] = {0.5, 0.5, 0.25, -0.5}, val[2];
    EXPECT_FAIL(fea_space_evaluate(s, u, 2, pts, val, NULL), FEA_ERR_INVALID_ARG, ctx,
                "point (0.25, -0.5) is outside the mesh");
    free(u);
    OK(fea_space_destroy(&s));
    OK(fea_mesh_destroy(&m));
  }
  OK(fea_context_destroy(&ctx));
}

/* The space holds the mesh: destroying the mesh first leaves the space usable. */
Test(space_lagrange, space_outlives_its_mesh) {
  fea_context *ctx = open_ref();
  static const fea_index n[3] = {2, 2, 2};
  fea_mesh *m = box_mesh(ctx, 3, n, 0);
  fea_space *s = lagrange(m, 3, FEA_NODES_GAUSS_LOBATTO);
  OK(fea_mesh_destroy(&m));
  OK(fea_context_destroy(&ctx));
  fea_space_info info = info_of(s);
  double *u = malloc((size_t)info.num_dofs * sizeof *u), pt[3] = {0.3, 0.6, 0.9}, val;
  int dim = 3;
  OK(fea_space_interpolate(s, affine_fn, &dim, u));
  OK(fea_space_evaluate(s, u, 1, pt, &val, NULL));
  cr_assert(fabs(val - affine_fn(pt, &dim)) < 1e-13);
  free(u);
  OK(fea_space_destroy(&s));
}
