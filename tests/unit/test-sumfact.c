/* The sum-factorization kernel (src/matfree/sumfact/sumfact*.c) against the
 * explicit element matrices of the forms (fea_problem_element_system): for
 * every element, apply() must equal K_e x_e and diagonal() diag(K_e), for
 * every instruction set this CPU has, with the degree-instantiated and the
 * generic kernel, and for batches shorter than the lane count. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "matfree/matfree-kernel.h"
#include "disc/problem.h"
#include "disc/space.h"
#include "matfree/sumfact/sumfact.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double urand(void) { /* xorshift64*, uniform in [-1, 1) */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return 2.0 * (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53 - 1.0;
}

static fea_context *ctx;

static int cpu_has_avx512(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
#else
  return 0;
#endif
}

static void setup(void) { cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS); }
static void teardown(void) { fea_context_destroy(&ctx); }

/* Results of one kernel variant over all elements (ne x nb), or NULL when
 * the instruction set is not on this CPU. Elements go in batches of
 * `chunk` (< batch() exercises the padded lanes) in a shuffled order. */
static double *run_variant(const fea_problem *pb, const char *isa, int generic, int chunk,
                           double **diag, char *desc, size_t len) {
  void *st;
  fea_status s = fea_sf_create_with(pb, isa, generic, &st);
  if (s == FEA_ERR_UNSUPPORTED && isa) return NULL;
  cr_assert_eq(s, FEA_SUCCESS, "create: %s", fea_context_last_error(pb->ctx));
  const fea_matfree_kernel_ops *k = &fea_matfree_kernel_sumfact;
  snprintf(desc, len, "%s", k->describe(st));
  int W = k->batch(st);
  if (chunk <= 0 || chunk > W) chunk = W;
  const fea_index ne = pb->space->num_elements, N = pb->space->num_dofs;
  const int nb = pb->space->dofs_per_element;
  double *x = malloc((size_t)N * sizeof *x), *y = malloc((size_t)(ne * nb) * sizeof *y);
  double *d = malloc((size_t)(ne * nb) * sizeof *d);
  double *scratch = malloc((size_t)k->scratch_doubles(st) * sizeof *scratch);
  fea_index *order = malloc((size_t)ne * sizeof *order);
  rng_state = 12345;
  for (fea_index i = 0; i < N; i++) x[i] = urand();
  for (fea_index e = 0; e < ne; e++) order[e] = ne - 1 - e;
  double *yb = malloc((size_t)(W * nb) * sizeof *yb), *db = malloc((size_t)(W * nb) * sizeof *db);
  for (fea_index e0 = 0; e0 < ne; e0 += chunk) {
    int m = (int)(ne - e0 < chunk ? ne - e0 : chunk);
    k->apply(st, order + e0, m, x, yb, scratch);
    k->diagonal(st, order + e0, m, db, scratch);
    for (int l = 0; l < m; l++) {
      memcpy(y + order[e0 + l] * nb, yb + l * nb, (size_t)nb * sizeof *y);
      memcpy(d + order[e0 + l] * nb, db + l * nb, (size_t)nb * sizeof *d);
    }
  }
  double flops, bytes;
  k->cost(st, &flops, &bytes);
  /* Bytes per element beyond the vectors: the DoF addressing, at least one index. */
  cr_assert(flops > 0 && bytes >= (double)sizeof(fea_index) && k->memory(st) > 0);
  k->destroy(st);
  free(x), free(scratch), free(order), free(yb), free(db);
  *diag = d;
  return y;
}

/* K_e x_e and diag(K_e) for all elements from the forms. */
static void reference(const fea_problem *pb, double **yref, double **dref, double **scale) {
  const fea_index ne = pb->space->num_elements, N = pb->space->num_dofs;
  const int nb = pb->space->dofs_per_element;
  double *x = malloc((size_t)N * sizeof *x), *K = malloc((size_t)nb * nb * sizeof *K);
  fea_index *dofs = malloc((size_t)nb * sizeof *dofs);
  *yref = malloc((size_t)(ne * nb) * sizeof **yref);
  *dref = malloc((size_t)(ne * nb) * sizeof **dref);
  *scale = malloc((size_t)ne * sizeof **scale);
  rng_state = 12345;
  for (fea_index i = 0; i < N; i++) x[i] = urand();
  for (fea_index e = 0; e < ne; e++) {
    cr_assert_eq(fea_problem_element_system(pb, e, K, NULL), FEA_SUCCESS);
    cr_assert_eq(fea_space_get_element_dofs(pb->space, e, dofs), FEA_SUCCESS);
    double big = 0;
    for (int i = 0; i < nb; i++) {
      double s = 0, a = 0;
      for (int j = 0; j < nb; j++) {
        s += K[i * nb + j] * x[dofs[j]];
        a += fabs(K[i * nb + j] * x[dofs[j]]);
      }
      (*yref)[e * nb + i] = s;
      (*dref)[e * nb + i] = K[i * nb + i];
      big = fmax(big, a);
    }
    (*scale)[e] = big; /* the size of the terms: rounding is relative to it */
  }
  free(x), free(K), free(dofs);
}

static void compare(const char *what, const char *desc, const double *a, const double *b,
                    const double *scale, fea_index ne, int nb, double tol) {
  for (fea_index e = 0; e < ne; e++)
    for (int i = 0; i < nb; i++) {
      double err = fabs(a[e * nb + i] - b[e * nb + i]);
      cr_assert(err <= tol * scale[e], "%s (%s): element %lld entry %d: %.17g vs %.17g", what, desc,
                (long long)e, i, a[e * nb + i], b[e * nb + i]);
    }
}

/* Every variant against the reference, and against each other. */
static void check_problem(const fea_problem *pb) {
  char why[256];
  cr_assert(fea_matfree_kernel_sumfact.supports(pb, why, sizeof why), "refused: %s", why);
  const fea_index ne = pb->space->num_elements;
  const int nb = pb->space->dofs_per_element;
  double *yref, *dref, *scale, *dscale = malloc((size_t)ne * sizeof *dscale);
  reference(pb, &yref, &dref, &scale);
  for (fea_index e = 0; e < ne; e++) {
    dscale[e] = 0;
    for (int i = 0; i < nb; i++) dscale[e] = fmax(dscale[e], fabs(dref[e * nb + i]));
  }
  static const char *isas[] = {NULL, "baseline", "avx2", "avx512"};
  double *first = NULL;
  for (size_t v = 0; v < sizeof isas / sizeof *isas; v++)
    for (int generic = 0; generic < 2; generic++)
      for (int chunk = 0; chunk <= 3; chunk += 3) {
        char desc[160];
        double *d, *y = run_variant(pb, isas[v], generic, chunk, &d, desc, sizeof desc);
        if (!y) continue;
        compare("apply", desc, y, yref, scale, ne, nb, 1e-13);
        compare("diagonal", desc, d, dref, dscale, ne, nb, 1e-13);
        if (first)
          compare("kernels agree", desc, y, first, scale, ne, nb, 1e-14);
        else
          first = y, y = NULL;
        free(y), free(d);
      }
  free(first), free(yref), free(dref), free(scale), free(dscale);
}

static fea_problem *poisson(fea_space *s, double sigma, int quad_points) {
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma = sigma;
  pd.quad_points = quad_points;
  fea_problem *pb;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  return pb;
}

/* Knots of degree p on [0, 1] with uneven interior knots, one of them
 * doubled when p >= 2 (lower continuity, a short and a long span). */
static int nonuniform_knots(int p, double *t) {
  static const double inner[] = {0.13, 0.4, 0.77};
  int m = 0;
  for (int i = 0; i <= p; i++) t[m++] = 0.0;
  for (int i = 0; i < 3; i++) {
    t[m++] = inner[i];
    if (i == 1 && p >= 2) t[m++] = inner[i];
  }
  for (int i = 0; i <= p; i++) t[m++] = 1.0;
  return m;
}

static void bspline_case(int dim, const int p[3], int nonuniform, int quad_points) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  double t[3][32];
  bd.dim = dim;
  for (int k = 0; k < dim; k++) {
    bd.degree[k] = p[k];
    bd.n[k] = 2 + (k == 0);
    bd.lower[k] = -0.5 * k;
    bd.upper[k] = 1.0 + 0.75 * k; /* non-unit, different per direction */
    if (nonuniform && k != 1) {
      bd.num_knots[k] = nonuniform_knots(p[k], t[k]);
      bd.knots[k] = t[k];
    }
  }
  fea_space *s;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_problem *pb = poisson(s, 1.7, quad_points);
  check_problem(pb);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

static void lagrange_case(int dim, int order, fea_lagrange_nodes nodes) {
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = dim;
  for (int k = 0; k < dim; k++) {
    md.n[k] = 2 + (k == 1);
    md.lower[k] = 0.25 * k - 1.0;
    md.upper[k] = md.lower[k] + 0.5 + 0.8 * k;
  }
  fea_mesh *m;
  fea_space *s;
  cr_assert_eq(fea_mesh_create_structured(ctx, &md, &m), FEA_SUCCESS);
  cr_assert_eq(fea_space_create_lagrange(m, order, nodes, &s), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_problem *pb = poisson(s, 0.6, 0);
  check_problem(pb);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
}

TestSuite(sumfact, .init = setup, .fini = teardown, .timeout = 300);

Test(sumfact, bspline_2d_p1_to_8_uniform_and_nonuniform) {
  for (int p = 1; p <= 8; p++)
    for (int nu = 0; nu < 2; nu++) bspline_case(2, (int[3]){p, p, 1}, nu, 0);
}

Test(sumfact, bspline_3d_p1_to_5_uniform_and_nonuniform) {
  for (int p = 1; p <= 5; p++)
    for (int nu = 0; nu < 2; nu++) bspline_case(3, (int[3]){p, p, p}, nu, 0);
}

Test(sumfact, bspline_mixed_degrees_and_other_rules_take_the_generic_kernel) {
  bspline_case(2, (int[3]){2, 3, 1}, 1, 0);
  bspline_case(3, (int[3]){1, 3, 2}, 1, 0);
  bspline_case(3, (int[3]){2, 2, 2}, 0, 5); /* n_q != p + 1 */
  bspline_case(2, (int[3]){9 - 1, 8, 1}, 0, 11);
  bspline_case(1, (int[3]){3, 1, 1}, 1, 0);
  /* describe() says which ran */
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.degree[0] = 2, bd.degree[1] = 3;
  fea_space *s;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS);
  fea_problem *pb = poisson(s, 1.0, 0);
  void *st;
  cr_assert_eq(fea_matfree_kernel_sumfact.create(pb, NULL, &st), FEA_SUCCESS);
  cr_assert(strstr(fea_matfree_kernel_sumfact.describe(st), "generic"), "%s",
            fea_matfree_kernel_sumfact.describe(st));
  fea_matfree_kernel_sumfact.destroy(st);
  fea_problem_destroy(&pb);
  bd.degree[1] = 2;
  fea_space_destroy(&s);
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS);
  pb = poisson(s, 1.0, 0);
  cr_assert_eq(fea_matfree_kernel_sumfact.create(pb, NULL, &st), FEA_SUCCESS);
  cr_assert(strstr(fea_matfree_kernel_sumfact.describe(st), "p=2 nq=3") &&
                strstr(fea_matfree_kernel_sumfact.describe(st), "instantiated"),
            "%s", fea_matfree_kernel_sumfact.describe(st));
  fea_matfree_kernel_sumfact.destroy(st);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

Test(sumfact, lagrange_q1_to_q4_structured_1d_2d_3d) {
  for (int dim = 1; dim <= 3; dim++)
    for (int p = 1; p <= 4; p++) {
      lagrange_case(dim, p, FEA_NODES_EQUISPACED);
      lagrange_case(dim, p, FEA_NODES_GAUSS_LOBATTO);
    }
}

/* A 1 x 2 x 1 box with sides that are not powers of two: cell 0's
 * Jacobian, from its rounded vertex coordinates, has off-diagonal entries
 * of 5.6e-17 (refused as "not axis-aligned" before); the kernel takes it and
 * matches the forms. */
Test(sumfact, rounding_in_the_jacobian_is_not_a_rotation) {
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 3;
  for (int k = 0; k < 3; k++) {
    md.n[k] = 1 + (k == 1);
    md.lower[k] = 0.25 * k - 1.0;
    md.upper[k] = md.lower[k] + 0.5 + 0.8 * k;
  }
  fea_mesh *m;
  fea_space *s;
  cr_assert_eq(fea_mesh_create_structured(ctx, &md, &m), FEA_SUCCESS);
  cr_assert_eq(fea_space_create_lagrange(m, 2, FEA_NODES_EQUISPACED, &s), FEA_SUCCESS);
  fea_problem *pb = poisson(s, 0.6, 0);
  check_problem(pb);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
}

/* Q5 and Q6 (the kernel serves Q1..Q6) in 2D and 3D on the small meshes of
 * lagrange_case, both node sets, through the degree-instantiated kernel. */
Test(sumfact, lagrange_q5_q6_structured_2d_3d) {
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 5; p <= 6; p++) {
      lagrange_case(dim, p, FEA_NODES_EQUISPACED);
      lagrange_case(dim, p, FEA_NODES_GAUSS_LOBATTO);
    }
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 3;
  fea_mesh *m;
  fea_space *s;
  cr_assert_eq(fea_mesh_create_structured(ctx, &md, &m), FEA_SUCCESS);
  cr_assert_eq(fea_space_create_lagrange(m, 6, FEA_NODES_GAUSS_LOBATTO, &s), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  fea_problem *pb = poisson(s, 1.0, 0);
  void *st;
  cr_assert_eq(fea_matfree_kernel_sumfact.create(pb, NULL, &st), FEA_SUCCESS);
  cr_assert(strstr(fea_matfree_kernel_sumfact.describe(st), "p=6") &&
                strstr(fea_matfree_kernel_sumfact.describe(st), "instantiated"),
            "%s", fea_matfree_kernel_sumfact.describe(st));
  fea_matfree_kernel_sumfact.destroy(st);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
}

static double variable_sigma(const double *x, void *user) { return 1.0 + x[0] * x[0]; }

Test(sumfact, refuses_simplices_general_meshes_and_sigma_functions) {
  char why[256] = "";
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.simplices = 1;
  fea_mesh *m;
  fea_space *s;
  cr_assert_eq(fea_mesh_create_structured(ctx, &md, &m), FEA_SUCCESS);
  cr_assert_eq(fea_space_create_lagrange(m, 2, FEA_NODES_EQUISPACED, &s), FEA_SUCCESS);
  fea_problem *pb = poisson(s, 1.0, 0);
  cr_assert_not(fea_matfree_kernel_sumfact.supports(pb, why, sizeof why));
  cr_assert(strstr(why, "triangle"), "%s", why);
  void *st = (void *)1;
  cr_assert_eq(fea_matfree_kernel_sumfact.create(pb, NULL, &st), FEA_ERR_UNSUPPORTED);
  cr_assert_null(st);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);

  /* A quad mesh from arrays is not structured: no single Jacobian. */
  const double xy[] = {0, 0, 1, 0, 2, 0, 0, 1, 1, 1.2, 2, 1};
  const fea_index cells[] = {0, 1, 4, 3, 1, 2, 5, 4};
  cr_assert_eq(fea_mesh_create_from_arrays(ctx, 2, FEA_CELL_QUAD, 6, xy, 2, cells, &m), FEA_SUCCESS,
               "%s", fea_context_last_error(ctx));
  cr_assert_eq(fea_space_create_lagrange(m, 1, FEA_NODES_EQUISPACED, &s), FEA_SUCCESS);
  pb = poisson(s, 1.0, 0);
  cr_assert_not(fea_matfree_kernel_sumfact.supports(pb, why, sizeof why));
  cr_assert(strstr(why, "structured"), "%s", why);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);

  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS);
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.sigma_fn = variable_sigma;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS);
  cr_assert_not(fea_matfree_kernel_sumfact.supports(pb, why, sizeof why));
  cr_assert(strstr(why, "sigma"), "%s", why);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

Test(sumfact, unknown_instruction_set_is_refused) {
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  fea_space *s;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS);
  fea_problem *pb = poisson(s, 1.0, 0);
  void *st;
  cr_assert_eq(fea_sf_create_with(pb, "sse9", 0, &st), FEA_ERR_UNSUPPORTED);
  cr_assert(strstr(fea_context_last_error(ctx), "sse9"));
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

/* apply_add (gather, kernel and scatter in one, through the DoF classes)
 * against apply followed by a plain scatter: on the full-DoF vectors and on
 * the reduced ones (free_rows), with and without the per-element "all DoFs
 * writable" flags, without ownership and with rows owned by three blocks
 * (each block's call adds its rows only); on the problem as it is (Dirichlet
 * boundary) and with every DoF made free (no boundary: every element takes
 * the fast path). */
static void check_apply_add_isa(fea_problem *pb, int chunk, const char *isa) {
  const fea_matfree_kernel_ops *k = &fea_matfree_kernel_sumfact;
  const fea_index ne = pb->space->num_elements, N = pb->space->num_dofs, nf = pb->num_free;
  const int nb = pb->space->dofs_per_element;
  void *st;
  fea_status cs = fea_sf_create_with(pb, isa, 0, &st);
  if (cs == FEA_ERR_UNSUPPORTED && isa) return; /* not on this CPU */
  cr_assert_eq(cs, FEA_SUCCESS, "%s", fea_context_last_error(pb->ctx));
  const int W = k->batch(st);
  double *xf = calloc((size_t)N + 1, sizeof *xf), *xr = calloc((size_t)nf + 1, sizeof *xr);
  double *yref = calloc((size_t)nf + 1, sizeof *yref), *ye = malloc((size_t)(W * nb) * sizeof *ye);
  double *scratch = malloc((size_t)k->scratch_doubles(st) * sizeof *scratch);
  fea_index *dofs = malloc((size_t)nb * sizeof *dofs), *elems = malloc((size_t)ne * sizeof *elems);
  int *owner = malloc((size_t)nf * sizeof *owner + 1), *eb = malloc((size_t)ne * sizeof *eb);
  unsigned char *run = malloc((size_t)ne + 1);
  rng_state = 777;
  for (fea_index d = 0; d < N; d++) {
    fea_index r = pb->free_index[d];
    if (r >= 0) xf[d] = xr[r] = urand();
  }
  int *owner3 = malloc((size_t)nf * sizeof *owner3 + 1);
  for (fea_index r = 0; r < nf; r++) {
    owner[r] = (int)((r / 7) % 3); /* scattered: few elements owned whole */
    owner3[r] = (int)(r * 3 / nf); /* three contiguous blocks, as PRIVATE_BUFFERS */
  }
  for (fea_index e = 0; e < ne; e++) elems[e] = e; /* element order, as the strategies visit */
  /* Reference: apply, then add the free rows. */
  double big = 0;
  for (fea_index e0 = 0; e0 < ne; e0 += W) {
    int m = (int)(ne - e0 < W ? ne - e0 : W);
    k->apply(st, elems + e0, m, xf, ye, scratch);
    for (int l = 0; l < m; l++) {
      cr_assert_eq(fea_space_get_element_dofs(pb->space, elems[e0 + l], dofs), FEA_SUCCESS);
      for (int i = 0; i < nb; i++) {
        fea_index r = pb->free_index[dofs[i]];
        if (r >= 0) yref[r] += ye[l * nb + i];
        big = fmax(big, fabs(ye[l * nb + i]));
      }
    }
  }
  for (int fr = 0; fr < 2; fr++)
    for (int own = 0; own < 3; own++)
      for (int flags = 0; flags < 8; flags++) {
        /* 1: a write map given; 2: elements as a range; 4: runs longer than 1 (with 1) */
        if ((flags & 4) && !(flags & 1)) continue;
        const int *ow = own == 2 ? owner3 : owner;
        for (fea_index e = 0; e < ne; e++) { /* the ownership plan's elem_block */
          cr_assert_eq(fea_space_get_element_dofs(pb->space, e, dofs), FEA_SUCCESS);
          int b = -1, dir = 0; /* b: the one owner so far (-1: none yet, -2: several) */
          for (int i = 0; i < nb && b != -2; i++) {
            fea_index r = pb->free_index[dofs[i]];
            if (r < 0)
              dir = 1;
            else
              b = b == -1 || b == (own ? ow[r] : 0) ? (own ? ow[r] : 0) : -2;
          }
          eb[e] = b < 0 ? -1 : dir ? -(b + 2) : b;
        }
        double *y = calloc((size_t)(fr ? nf : N) + 1, sizeof *y);
        uint64_t updates = 0;
        for (int blk = 0; blk < (own ? 3 : 1); blk++) {
          /* The operator's write map of this pass (fea_matfree_target):
           * runs of elements whose every DoF is a row of blk (each of
           * length 1 without flag 4: the lanes probed one by one),
           * FEA_MATFREE_WRITE_ROWS where its free rows are. */
          const int cap = flags & 4 ? FEA_MATFREE_RUN_MAX : 1;
          for (fea_index e = ne - 1; e >= 0; e--) {
            const int r = e + 1 < ne && eb[e + 1] == blk ? run[e + 1] : 0;
            run[e] = (unsigned char)(eb[e] == blk          ? (r < cap ? r + 1 : cap)
                                     : eb[e] == -(blk + 2) ? FEA_MATFREE_WRITE_ROWS
                                                           : 0);
          }
          fea_matfree_target tg = {.y = y,
                                   .row = pb->free_index,
                                   .free_rows = fr,
                                   .write = flags & 1 ? run : NULL,
                                   .write_first = 0,
                                   .write_end = ne,
                                   .keep = own ? ow : NULL,
                                   .keep_key = blk,
                                   .updates = &updates};
          for (fea_index e0 = 0; e0 < ne; e0 += chunk) { /* short batches too */
            int m = (int)(ne - e0 < chunk ? ne - e0 : chunk);
            tg.first = flags & 2 ? e0 : -1;
            k->apply_add(st, flags & 2 ? NULL : elems + e0, m, fr ? xr : xf, &tg, scratch);
          }
        }
        for (fea_index d = 0; d < N; d++) {
          fea_index r = pb->free_index[d];
          if (r < 0) {
            if (!fr) cr_assert_eq(y[d], 0.0, "Dirichlet DoF %lld written", (long long)d);
            continue;
          }
          double v = fr ? y[r] : y[d];
          cr_assert(fabs(v - yref[r]) <= 1e-13 * big,
                    "apply_add (chunk %d, free_rows %d, owners %d, flags %d) row %lld: %.17g vs "
                    "%.17g [%s]",
                    chunk, fr, own, flags, (long long)r, v, yref[r], k->describe(st));
        }
        free(y);
      }
  k->destroy(st);
  free(xf), free(xr), free(yref), free(ye), free(scratch), free(dofs), free(elems), free(owner);
  free(owner3), free(eb), free(run);
}

/* apply_add with every instruction set this CPU has (each has its own
 * line gather and scatter). */
static void check_apply_add(fea_problem *pb, int chunk) {
  const char *isas[] = {"avx512", "avx2", "baseline"};
  for (int i = 0; i < 3; i++) check_apply_add_isa(pb, chunk, isas[i]);
}

/* The problem's own boundary, then with every DoF free (swapped in). */
static void apply_add_both_ways(fea_problem *pb) {
  check_apply_add(pb, 3);
  const fea_index N = pb->space->num_dofs;
  fea_index *keep = pb->free_index, nf = pb->num_free;
  fea_index *all = malloc((size_t)N * sizeof *all);
  for (fea_index d = 0; d < N; d++) all[d] = d;
  pb->free_index = all;
  pb->num_free = N;
  check_apply_add(pb, 3);
  pb->free_index = keep;
  pb->num_free = nf;
  free(all);
}

/* 300 x 2 elements of Q3: the DoF classes that find_classes guesses on its
 * sample of elements (the first 128 and 128 spread over the mesh) do not
 * hold at the end of the first row, which the sample misses, so it finds
 * them again on every element; the results must not show it. */
Test(sumfact, classes_guessed_on_a_sample_are_checked_on_every_element) {
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = 300;
  md.n[1] = 2;
  fea_mesh *m;
  fea_space *s;
  cr_assert_eq(fea_mesh_create_structured(ctx, &md, &m), FEA_SUCCESS);
  cr_assert_eq(fea_space_create_lagrange(m, 3, FEA_NODES_EQUISPACED, &s), FEA_SUCCESS);
  fea_problem *pb = poisson(s, 0.7, 0);
  check_problem(pb);
  apply_add_both_ways(pb);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
}

Test(sumfact, apply_add_classes_with_and_without_boundary) {
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= (dim == 2 ? 4 : 3); p++) {
      fea_mesh_desc md = FEA_MESH_DESC_INIT;
      md.dim = dim;
      for (int k = 0; k < dim; k++) md.n[k] = 3 + k + (dim == 2 ? 6 : 0);
      fea_mesh *m;
      fea_space *s;
      cr_assert_eq(fea_mesh_create_structured(ctx, &md, &m), FEA_SUCCESS);
      cr_assert_eq(fea_space_create_lagrange(m, p, FEA_NODES_EQUISPACED, &s), FEA_SUCCESS);
      fea_problem *pb = poisson(s, 0.8, 0);
      apply_add_both_ways(pb);
      fea_problem_destroy(&pb);
      fea_space_destroy(&s);
      fea_mesh_destroy(&m);
    }
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.dim = 3;
  for (int k = 0; k < 3; k++) bd.degree[k] = 2, bd.n[k] = 3 + k;
  fea_space *s;
  cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS);
  fea_problem *pb = poisson(s, 1.3, 0);
  apply_add_both_ways(pb);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
}

/* Line batches (W consecutive all-free elements along x, plan.c): lines
 * longer than a batch, of odd length, and shorter than one; calls of 3
 * (too short for a line batch), 6 (a line batch ends inside the call,
 * leading lanes zeroed), 8 and batch() elements (whole line batches, and runs cut by the call),
 * with and without a boundary, owners scattered and in contiguous blocks. */
static void apply_add_chunks(fea_problem *pb, int expect_lines, int expect_fused) {
  void *st;
  const fea_matfree_kernel_ops *k = &fea_matfree_kernel_sumfact;
  cr_assert_eq(k->create(pb, NULL, &st), FEA_SUCCESS, "%s", fea_context_last_error(pb->ctx));
  const int B = k->batch(st);
  if (expect_lines)
    cr_assert(strstr(k->describe(st), "lines:"), "no line batches: %s", k->describe(st));
  if (expect_lines || !expect_fused)
    cr_assert_eq(strstr(k->describe(st), "fused") != NULL, expect_fused, "fused line batches: %s",
                 k->describe(st));
  k->destroy(st);
  const int chunks[] = {3, 6, 8, B};
  for (int c = 0; c < 4; c++) check_apply_add(pb, chunks[c]);
  const fea_index N = pb->space->num_dofs;
  fea_index *keep = pb->free_index, nf = pb->num_free;
  fea_index *all = malloc((size_t)N * sizeof *all);
  for (fea_index d = 0; d < N; d++) all[d] = d;
  pb->free_index = all;
  pb->num_free = N;
  for (int c = 0; c < 4; c++) check_apply_add(pb, chunks[c]);
  pb->free_index = keep;
  pb->num_free = nf;
  free(all);
}

Test(sumfact, apply_add_line_batches_long_odd_and_short_lines) {
  /* elements along x: 19 (odd, > 2 batches of 8 with a boundary), 22 (runs
   * of 20 and 22 all-free elements: tails of 4 and 6, served by batches
   * with leading lanes zeroed), 4 (< a batch) */
  const int nx[] = {19, 22, 4};
  for (int t = 0; t < 3; t++)
    for (int dim = 2; dim <= 3; dim++)
      for (int p = 1; p <= (dim == 2 ? 6 : 4); p++) { /* 3D Q4: interiors of stride 27 as blocks */
        fea_mesh_desc md = FEA_MESH_DESC_INIT;
        md.dim = dim;
        md.n[0] = nx[t];
        for (int k = 1; k < dim; k++) md.n[k] = 3 + k;
        fea_mesh *m;
        fea_space *s;
        cr_assert_eq(fea_mesh_create_structured(ctx, &md, &m), FEA_SUCCESS);
        cr_assert_eq(fea_space_create_lagrange(m, p, FEA_NODES_EQUISPACED, &s), FEA_SUCCESS);
        fea_problem *pb = poisson(s, 0.8, 0);
        /* fused line batches: Q1, and where the tiles are (AVX-512) 2D Q3 - Q5 and 3D
         * Q2 - Q4 (generated: sumfact-lines-gen.h) */
        const int tiled = cpu_has_avx512() && (dim == 2 ? p >= 3 && p <= 5 : p >= 2 && p <= 4);
        apply_add_chunks(pb, nx[t] > 8, p == 1 || tiled);
        fea_problem_destroy(&pb);
        fea_space_destroy(&s);
        fea_mesh_destroy(&m);
      }
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= (dim == 2 ? 8 : 3); p++) { /* p >= 7: chains of W and more DoFs */
      fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
      bd.dim = dim;
      for (int k = 0; k < dim; k++) bd.degree[k] = p, bd.n[k] = k == 0 ? 17 + p : 2 + k;
      fea_space *s;
      cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS);
      fea_problem *pb = poisson(s, 1.3, 0);
      apply_add_chunks(pb, 1, 0);
      fea_problem_destroy(&pb);
      fea_space_destroy(&s);
    }
}

/* Two states of the same problem have the same classes, bases, line flags
 * and boundary rows. */
static void expect_same_state(const fea_sf_state *sa, const fea_sf_state *sb, const char *what) {
  const fea_index ne = sa->space->num_elements;
  const int nb = sa->nb;
  const fea_sf_plan *a = sa->plan, *b = sb->plan;
  cr_assert_eq(a->nclass, b->nclass, "%s: classes", what);
  cr_assert_eq(a->nfclass, b->nfclass, "%s: free-row classes", what);
  for (int i = 0; i < nb; i++)
    cr_assert(a->cls[i] == b->cls[i] && a->off[i] == b->off[i] && a->fcls[i] == b->fcls[i] &&
                  a->foff[i] == b->foff[i],
              "%s: DoF %d's class", what, i);
  cr_assert(!memcmp(a->base, b->base, (size_t)(ne * a->nclass) * sizeof *a->base), "%s: bases",
            what);
  if (a->nfclass)
    cr_assert(!memcmp(a->fbase, b->fbase, (size_t)(ne * a->nfclass) * sizeof *a->fbase),
              "%s: row bases", what);
  cr_assert_eq(a->line_ok != NULL, b->line_ok != NULL, "%s: line batches", what);
  if (!a->line_ok) return;
  cr_assert_eq(a->line_batches, b->line_batches, "%s: line batch count", what);
  for (fea_index e = 0; e < ne; e++) {
    cr_assert_eq(a->line_ok[e], b->line_ok[e], "%s: element %lld's line flag", what, (long long)e);
    cr_assert_eq(a->brow_at[e], b->brow_at[e], "%s: element %lld's boundary slot", what,
                 (long long)e);
    if (a->brow_at[e] >= 0)
      cr_assert(!memcmp(a->brow + (fea_index)a->brow_at[e] * 2 * nb,
                        b->brow + (fea_index)b->brow_at[e] * 2 * nb,
                        (size_t)(2 * nb) * sizeof *a->brow),
                "%s: element %lld's boundary rows and steps", what, (long long)e);
  }
}

/* The state's setup loops run on the context's threads (plan.c: the
 * class check, the bases, the line flags in shares that hold whole
 * chains): on 2, 3 and 8 threads (more than the rows of some meshes, so
 * that some shares are empty) the state is the one-thread state. */
Test(sumfact, setup_on_threads_is_the_one_thread_setup) {
  const struct {
    int dim, p, n[3];
  } cases[] = {{2, 1, {61, 7, 0}}, {2, 3, {37, 23, 0}}, {2, 2, {300, 2, 0}}, {3, 2, {14, 11, 9}},
               {3, 1, {40, 3, 2}}, {2, 5, {22, 5, 0}},  {1, 2, {50, 0, 0}}};
  fea_context *tc; /* the reference backend runs on one thread */
  cr_assert_eq(fea_context_create("/cpu/threads", &tc), FEA_SUCCESS);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    fea_mesh_desc md = FEA_MESH_DESC_INIT;
    md.dim = cases[c].dim;
    for (int k = 0; k < md.dim; k++) md.n[k] = cases[c].n[k];
    fea_mesh *m;
    fea_space *s;
    cr_assert_eq(fea_mesh_create_structured(tc, &md, &m), FEA_SUCCESS);
    cr_assert_eq(fea_space_create_lagrange(m, cases[c].p, FEA_NODES_EQUISPACED, &s), FEA_SUCCESS);
    fea_problem *pb = poisson(s, 0.9, 0);
    void *one, *many;
    cr_assert_eq(fea_context_set_num_threads(tc, 1), FEA_SUCCESS);
    cr_assert_eq(fea_sf_create_with(pb, NULL, 0, &one), FEA_SUCCESS);
    const int threads[] = {2, 3, 8};
    for (int t = 0; t < 3; t++) {
      cr_assert_eq(fea_context_set_num_threads(tc, threads[t]), FEA_SUCCESS);
      cr_assert_eq(fea_sf_create_with(pb, NULL, 0, &many), FEA_SUCCESS);
      char what[64];
      snprintf(what, sizeof what, "%dD Q%d, %d threads", cases[c].dim, cases[c].p, threads[t]);
      expect_same_state(one, many, what);
      fea_matfree_kernel_sumfact.destroy(many);
    }
    fea_matfree_kernel_sumfact.destroy(one);
    fea_problem_destroy(&pb);
    fea_space_destroy(&s);
    fea_mesh_destroy(&m);
  }
  fea_context_destroy(&tc);
}
