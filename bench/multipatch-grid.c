/* The grid-of-box-patches benchmark problem (multipatch-grid.h): patches,
 * problem, closed-form interface size, the C0 single patch of the same
 * space and the comparison of the two solutions. */
#include <math.h>
#include <stdlib.h>

#include "multipatch-grid.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

mp_grid mp_grid_cube(int dim, long long p, long long n, long long K) {
  mp_grid g = {dim, p, n, {K, K, dim == 3 ? K : 1}, K};
  return g;
}

mp_grid mp_grid_block(int dim, long long p, long long n, long long total) {
  mp_grid g = {dim, p, n, {1, 1, 1}, 2};
  long long f[64], nf = 0, t = total;
  for (long long q = 2; q * q <= t; q++)
    while (t % q == 0 && nf < 63) f[nf++] = q, t /= q;
  if (t > 1) f[nf++] = t;
  for (long long i = nf - 1; i >= 0; i--) { /* factors ascend: largest first */
    int a = 0;
    for (int b = 1; b < dim; b++)
      if (g.k[b] < g.k[a]) a = b;
    g.k[a] *= f[i];
  }
  return g;
}

long long mp_grid_num_patches(const mp_grid *g) { return g->k[0] * g->k[1] * g->k[2]; }

/* Per direction a patch has m = n + p DoFs; neighbouring patches share their
 * end DoFs (C0), so direction a has M_a = k_a (m - 1) + 1 global DoFs and the
 * global DoFs are the tensor grid j = (j_1, ..., j_d), 0 <= j_a <= M_a - 1
 * (the C0 single patch's numbering). Patch i's local index l along a is
 * global i (m - 1) + l, so a DoF lies on a patch boundary exactly when some
 * j_a is a multiple of m - 1, and on the domain's (Dirichlet) boundary when
 * some j_a is 0 or M_a - 1. Free DoFs have every j_a in [1, M_a - 2]:
 * prod_a (k_a (n + p - 1) - 1) of them. Of the M_a - 2 free values of a
 * direction, k_a - 1 are interior patch boundaries and the other
 * k_a (n + p - 2) are inside a patch. A free DoF is off every patch
 * boundary iff all its j_a are of the latter kind, so
 *
 *   interior  = prod_a k_a (n + p - 2)
 *   interface = prod_a (k_a (n + p - 1) - 1) - prod_a k_a (n + p - 2).
 *
 * With k_a = K: 2D interface = 2 (K - 1) K (n + p - 2) + (K - 1)^2 (lines,
 * plus their crossings counted once); 3D: 3 (K - 1) (K (n+p-2))^2
 * + 3 (K - 1)^2 K (n+p-2) + (K - 1)^3 (faces, edges, vertices). At fixed K
 * and p, N ~ (K n)^d and the interface ~ d (K - 1) (K n)^(d - 1)
 * ~ N^((d - 1) / d): N^(1/2) in 2D, N^(2/3) in 3D. */
double mp_grid_predicted_interface(const mp_grid *g) {
  double a = 1, b = 1;
  for (int d = 0; d < g->dim; d++) {
    a *= (double)(g->k[d] * (g->n + g->p - 1) - 1);
    b *= (double)(g->k[d] * (g->n + g->p - 2));
  }
  return a - b;
}

double mp_grid_predicted_interior(const mp_grid *g) {
  double b = 1;
  for (int d = 0; d < g->dim; d++) b *= (double)(g->k[d] * (g->n + g->p - 2));
  return b;
}

/* -Laplace u = (pi^2 / 4 - 1) u in 2D, (pi^2 / 4) u in 3D. */
double mp_grid_exact_u(const double *x, void *user) {
  const int dim = *(const int *)user;
  return sin(M_PI * x[0] / 2) * exp(x[1]) * (dim == 3 ? cos(x[2]) : 1.0);
}

double mp_grid_exact_f(const double *x, void *user) {
  const int dim = *(const int *)user;
  return (M_PI * M_PI / 4 - (dim == 3 ? 0.0 : 1.0)) * mp_grid_exact_u(x, user);
}

fea_status mp_grid_create_problem(fea_context *ctx, const mp_grid *g, int *user,
                                  fea_space **patches, fea_multipatch **mp,
                                  fea_multipatch_problem **problem) {
  const long long np = mp_grid_num_patches(g);
  for (long long q = 0; q < np; q++) {
    const long long i[3] = {q % g->k[0], (q / g->k[0]) % g->k[1], q / (g->k[0] * g->k[1])};
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = g->dim;
    for (int a = 0; a < 3; a++) {
      d.degree[a] = (int)g->p;
      d.n[a] = (fea_index)g->n;
      d.lower[a] = (double)i[a] / (double)g->den;
      d.upper[a] = (double)(i[a] + 1) / (double)g->den;
    }
    fea_status s = fea_space_create_bspline(ctx, &d, &patches[q]);
    if (s < 0) return s;
  }
  fea_status s = fea_multipatch_create(ctx, (int)np, patches, NULL, mp);
  if (s < 0) return s;
  *user = g->dim;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = mp_grid_exact_f, pd.source_user = user;
  pd.dirichlet = mp_grid_exact_u, pd.dirichlet_user = user;
  return fea_multipatch_problem_create_poisson(*mp, &pd, 0, NULL, problem);
}

/* Per direction k_a (n - 1) + (k_a - 1) p interior knots. */
fea_status mp_grid_create_c0_patch(fea_context *ctx, const mp_grid *g, fea_space **out) {
  const long long p = g->p, n = g->n;
  double *knots[3] = {NULL, NULL, NULL};
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = g->dim;
  fea_status s = FEA_SUCCESS;
  for (int a = 0; a < 3; a++) {
    const long long k = g->k[a];
    d.degree[a] = (int)p;
    d.n[a] = (fea_index)(k * n);
    if (a >= g->dim) continue;
    double *t = knots[a] = malloc((size_t)(2 * (p + 1) + k * (n - 1) + (k - 1) * p) * sizeof *t);
    if (!t) {
      s = FEA_ERR_OUT_OF_MEMORY;
      goto done;
    }
    fea_index m = 0;
    for (long long j = 0; j <= p; j++) t[m++] = 0;
    for (long long i = 0; i < k; i++) {
      for (long long j = 1; j < n; j++)
        t[m++] = ((double)i + (double)j / (double)n) / (double)g->den;
      if (i + 1 < k)
        for (long long j = 0; j < p; j++) t[m++] = (double)(i + 1) / (double)g->den;
    }
    for (long long j = 0; j <= p; j++) t[m++] = (double)k / (double)g->den;
    d.knots[a] = t;
    d.num_knots[a] = m;
    d.lower[a] = 0;
    d.upper[a] = (double)k / (double)g->den;
  }
  s = fea_space_create_bspline(ctx, &d, out);
done:
  for (int a = 0; a < 3; a++) free(knots[a]);
  return s;
}

/* Patch DoF (l0, l1, l2) of patch (i0, i1, i2) is the C0 patch's DoF
 * (i0 (m - 1) + l0, ...), direction 0 fastest in both. */
fea_status mp_grid_max_rel_diff(const fea_multipatch *mp, const mp_grid *g, const double *u_mp,
                                const double *u_single, double *diff) {
  const fea_index m = (fea_index)(g->n + g->p);
  const fea_index M0 = (fea_index)g->k[0] * (m - 1) + 1, M1 = (fea_index)g->k[1] * (m - 1) + 1;
  const fea_index patch_dofs = g->dim == 3 ? m * m * m : m * m;
  fea_index *gl = malloc((size_t)patch_dofs * sizeof *gl);
  if (!gl) return FEA_ERR_OUT_OF_MEMORY;
  double dmax = 0, vmax = 0;
  const long long np = mp_grid_num_patches(g);
  for (long long q = 0; q < np; q++) {
    const fea_index i0 = (fea_index)(q % g->k[0]), i1 = (fea_index)((q / g->k[0]) % g->k[1]),
                    i2 = (fea_index)(q / (g->k[0] * g->k[1]));
    fea_status s = fea_multipatch_get_patch_dofs(mp, (int)q, patch_dofs, gl);
    if (s < 0) {
      free(gl);
      return s;
    }
    for (fea_index l = 0; l < patch_dofs; l++) {
      const fea_index l0 = l % m, l1 = (l / m) % m, l2 = l / (m * m);
      const fea_index w = i0 * (m - 1) + l0 +
                          M0 * (i1 * (m - 1) + l1 + (g->dim == 3 ? M1 * (i2 * (m - 1) + l2) : 0));
      dmax = fmax(dmax, fabs(u_mp[gl[l]] - u_single[w]));
      vmax = fmax(vmax, fabs(u_single[w]));
    }
  }
  free(gl);
  *diff = vmax > 0 ? dmax / vmax : dmax;
  return FEA_SUCCESS;
}

double mp_grid_loglog_slope(int m, const double *x, const double *y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < m; i++) {
    const double lx = log(x[i]), ly = log(y[i]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
  }
  return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}
