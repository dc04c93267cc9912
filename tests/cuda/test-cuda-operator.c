/* Operators and CG on /gpu/cuda against the same operators on /cpu/threads
 * (docs/operators.md, "On the GPU"). Every test skips without a device.
 * The CSR and element-matrix cases ran on an H200; the sum-factorization
 * kernel's and the unprotected scatter's are compiled, not yet run on one
 * (their arithmetic runs on the host in tests/unit/test-sumfact-gpu-stages.c).
 *
 * - each GPU kind (CSR through cuSPARSE, element matrices and sum
 *   factorization, each with atomics and with coloring) applied to a
 *   pseudo-random vector matches the CPU operator to 1e-12 relative, and so
 *   do apply_add, the diagonal and the right-hand side, for Q1..Q4 in 2D and
 *   3D and B-splines (one shape or several); sum factorization runs its own
 *   kernel, not the element-matrix fallback;
 * - so does every kernel instance sum factorization has (1D, 2D and 3D, n =
 *   2..9): Q1..Q6 and B-splines p = 1..8, each on a box of more elements
 *   than one block holds;
 * - geometry terms at quadrature points fall back to element matrices and say so;
 * - scatter=unprotected (GPU_Max) runs both matrix-free kinds in one launch,
 *   and every entry is a sum over some of its elements' contributions;
 * - eigenvalue estimates of GPU operators equal the CPU's (Lanczos on the host);
 * - Jacobi-PCG on the GPU reaches the CPU PCG solution. */
#include <stdio.h>
#include <string.h>

#include "../../cuda/kernels/sumfact-stages.h"
#include "../api/operator-common.h"
#include "cuda-test.h"
#include "disc/problem.h"

/* Families of operator-common.h: Q1..Q4 2D, Q1..Q4 3D, B p2 and p3 in 2D and 3D. */
static const int fams[] = {0, 1, 2, 3, 4, 5, 6, 7, 13, 14, 18, 19};
#define NFAMS (sizeof fams / sizeof fams[0])

typedef struct gpu_case {
  fea_operator_kind kind;
  fea_update_strategy strategy;
  const char *name;
} gpu_case;

static const gpu_case cases[] = {
    {FEA_OPERATOR_CSR, FEA_UPDATE_AUTO, "csr"},
    {FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, FEA_UPDATE_ATOMIC_CAS, "em atomic"},
    {FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, FEA_UPDATE_COLORING, "em coloring"},
    {FEA_OPERATOR_MATFREE_SUMFACT, FEA_UPDATE_AUTO, "sumfact atomic"},
    {FEA_OPERATOR_MATFREE_SUMFACT, FEA_UPDATE_COLORING, "sumfact coloring"},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* Helpers of operator-common.h this file does not need. */
static void unused_helpers(void) __attribute__((unused));
static void unused_helpers(void) {
  (void)op_sigma;
  (void)op_sumfact_built;
}

/* A vector of ctx (the GPU's, or the CPU oracle's) holding values, and a
 * vector's values as a malloc'd host array. */
static fea_vector *gpu_vector(fea_context *ctx, fea_index n, const double *values) {
  fea_vector *v = NULL;
  OK(fea_vector_create(ctx, n, FEA_F64, &v));
  if (values) OK(fea_vector_write(v, n, FEA_F64, values));
  return v;
}

static double *gpu_read(const fea_vector *v, fea_index n) {
  double *h = malloc(((size_t)n + 1) * sizeof *h);
  cr_assert_not_null(h);
  OK(fea_vector_read(v, n, FEA_F64, h));
  return h;
}

/* The problem of the fixture on the GPU context: same space description,
 * built there (spaces and meshes live on the host whatever the context). */
static void gpu_problem(fea_context *gpu, const op_family *f, fea_mesh **mesh, fea_space **space,
                        fea_problem **pb) {
  *mesh = NULL;
  if (f->bspline) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = f->dim;
    for (int k = 0; k < 3; k++) d.degree[k] = f->order, d.n[k] = f->n + (k == 1);
    OK(fea_space_create_bspline(gpu, &d, space));
  } else {
    fea_mesh_desc md = FEA_MESH_DESC_INIT;
    md.dim = f->dim;
    for (int k = 0; k < 3; k++) md.n[k] = f->n + (k == 1);
    md.simplices = f->simplices;
    OK(fea_mesh_create_structured(gpu, &md, mesh));
    OK(fea_space_create_lagrange(*mesh, f->order, FEA_NODES_EQUISPACED, space));
  }
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = op_f;
  pd.dirichlet = op_g;
  OK(fea_problem_create_poisson(*space, &pd, pb));
}

static void gpu_problem_free(fea_mesh **mesh, fea_space **space, fea_problem **pb) {
  fea_problem_destroy(pb);
  fea_space_destroy(space);
  fea_mesh_destroy(mesh);
}

/* Every kind of cases[] on the GPU problem pb against the CPU's CSR
 * operator of the same problem (cpb on the context cctx, n free DoFs):
 * apply of a pseudo-random x (seed xs), apply_add onto y0 (seed ys), the
 * diagonal and the right-hand side, each to 1e-12 relative. Sum
 * factorization must run its own kernel, and, where sf_text is given, say
 * it in the kernel string (the instance that ran). */
static void every_kind_against_cpu(fea_context *gpu, fea_problem *pb, fea_context *cctx,
                                   fea_problem *cpb, fea_index n, const char *name, uint64_t xs,
                                   uint64_t ys, const char *sf_text) {
  double *x = random_array((size_t)n, xs);
  double *y0 = random_array((size_t)n, ys);
  /* CPU oracle: the assembled matrix (any CPU kind agrees to roundoff). */
  fea_operator_desc cd = FEA_OPERATOR_DESC_INIT;
  cd.kind = FEA_OPERATOR_CSR;
  fea_operator *cop = NULL;
  OK(fea_operator_create(cctx, cpb, &cd, &cop));
  fea_vector *cx = gpu_vector(cctx, n, x), *cy = gpu_vector(cctx, n, NULL);
  fea_vector *ca = gpu_vector(cctx, n, y0), *cdg = gpu_vector(cctx, n, NULL);
  fea_vector *cb = gpu_vector(cctx, n, NULL);
  OK(fea_operator_apply(cop, cx, cy));
  OK(fea_operator_apply_add(cop, cx, ca));
  OK(fea_operator_get_diagonal(cop, cdg));
  OK(fea_operator_get_rhs(cop, cb));
  double *ry = gpu_read(cy, n), *ra = gpu_read(ca, n), *rd = gpu_read(cdg, n);
  double *rb = gpu_read(cb, n);
  for (size_t ci = 0; ci < NCASES; ci++) {
    fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
    d.kind = cases[ci].kind;
    d.strategy = cases[ci].strategy;
    fea_operator *op = NULL;
    OK(fea_operator_create(gpu, pb, &d, &op));
    fea_operator_info info = FEA_OPERATOR_INFO_INIT;
    OK(fea_operator_get_info(op, &info));
    cr_assert_eq(info.rows, n);
    if (cases[ci].kind == FEA_OPERATOR_MATFREE_SUMFACT) {
      cr_expect(strstr(info.kernel, "gpu sum-factorization") != NULL, "%s", info.kernel);
      cr_expect_eq(info.kind_run, FEA_OPERATOR_MATFREE_SUMFACT, "%s", info.kernel);
      if (sf_text)
        cr_expect(strstr(info.kernel, sf_text) != NULL, "%s: '%s' is not in '%s'", name, sf_text,
                  info.kernel);
    }
    fea_vector *gx = gpu_vector(gpu, n, x), *gy = gpu_vector(gpu, n, NULL);
    fea_vector *ga = gpu_vector(gpu, n, y0), *gd = gpu_vector(gpu, n, NULL);
    fea_vector *gb = gpu_vector(gpu, n, NULL);
    OK(fea_operator_apply(op, gx, gy));
    OK(fea_operator_apply_add(op, gx, ga));
    OK(fea_operator_get_diagonal(op, gd));
    OK(fea_operator_get_rhs(op, gb));
    double *hy = gpu_read(gy, n), *ha = gpu_read(ga, n), *hd = gpu_read(gd, n);
    double *hb = gpu_read(gb, n);
    const double ey = op_rel_diff(hy, ry, n), ea = op_rel_diff(ha, ra, n);
    const double ed = op_rel_diff(hd, rd, n), eb = op_rel_diff(hb, rb, n);
    cr_expect(ey <= 1e-12, "%s %s apply: %g (%s)", name, cases[ci].name, ey, info.kernel);
    cr_expect(ea <= 1e-12, "%s %s apply_add: %g", name, cases[ci].name, ea);
    cr_expect(ed <= 1e-12, "%s %s diagonal: %g", name, cases[ci].name, ed);
    cr_expect(eb <= 1e-12, "%s %s rhs: %g", name, cases[ci].name, eb);
    free(hy), free(ha), free(hd), free(hb);
    fea_vector_destroy(&gx), fea_vector_destroy(&gy), fea_vector_destroy(&ga);
    fea_vector_destroy(&gd), fea_vector_destroy(&gb);
    OK(fea_operator_destroy(&op));
  }
  free(ry), free(ra), free(rd), free(rb), free(x), free(y0);
  fea_vector_destroy(&cx), fea_vector_destroy(&cy), fea_vector_destroy(&ca);
  fea_vector_destroy(&cdg), fea_vector_destroy(&cb);
  OK(fea_operator_destroy(&cop));
}

Test(cuda_operator, every_kind_matches_the_cpu_operator, .timeout = 600) {
  fea_context *gpu = open_gpu();
  for (size_t fi = 0; fi < NFAMS; fi++) {
    const op_family *f = &op_families[fams[fi]];
    op_fixture cpu;
    op_fixture_make(&cpu, "/cpu/threads", 2, f, NULL);
    fea_mesh *mesh = NULL;
    fea_space *space = NULL;
    fea_problem *pb = NULL;
    gpu_problem(gpu, f, &mesh, &space, &pb);
    every_kind_against_cpu(gpu, pb, cpu.ctx, cpu.pb, cpu.nf, f->name, 99 + fi, 7 + fi, NULL);
    gpu_problem_free(&mesh, &space, &pb);
    op_fixture_free(&cpu);
  }
  fea_context_destroy(&gpu);
}

/* f and g of operator-common.h for boxes of any dimension (a 1D point has
 * one coordinate); the user data points to the dimension. */
static int box_dims[4] = {0, 1, 2, 3};
static double box_g(const double *x, void *u) {
  const int dim = *(const int *)u;
  return 1.0 + x[0] - (dim > 1 ? 0.5 * x[1] : 0.0);
}
static double box_f(const double *x, void *u) {
  const int dim = *(const int *)u;
  return sin(3.0 * x[0]) + (dim > 1 ? x[1] * x[1] : 0.0);
}

/* The Poisson problem of Q_p (Lagrange, structured mesh) or of B-splines of
 * degree p on the unit box of e[k] elements per direction, on ctx. */
static void box_problem(fea_context *ctx, int bspline, int dim, int p, const fea_index e[3],
                        fea_mesh **mesh, fea_space **space, fea_problem **pb) {
  *mesh = NULL;
  if (bspline) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = dim;
    for (int k = 0; k < 3; k++) d.degree[k] = p, d.n[k] = e[k];
    OK(fea_space_create_bspline(ctx, &d, space));
  } else {
    fea_mesh_desc md = FEA_MESH_DESC_INIT;
    md.dim = dim;
    for (int k = 0; k < 3; k++) md.n[k] = e[k];
    OK(fea_mesh_create_structured(ctx, &md, mesh));
    OK(fea_space_create_lagrange(*mesh, p, FEA_NODES_EQUISPACED, space));
  }
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = box_f;
  pd.dirichlet = box_g;
  pd.source_user = pd.dirichlet_user = &box_dims[dim];
  OK(fea_problem_create_poisson(*space, &pd, pb));
}

/* Elements per direction for the kernel instance (dim, n): two per
 * direction (every direction has shared faces), grown one direction at a
 * time until the elements fill more than one block and leave the last one
 * partial, so that full blocks and the idle threads of a partial one both
 * run (fea_sf_gpu_elements_per_block: 28..128 elements per block in 1D and
 * 2D, 3..64 in 3D). Returns the element count. */
static fea_index sf_box(int dim, int n, fea_index e[3]) {
  const fea_index per_block = fea_sf_gpu_elements_per_block(dim, n);
  for (int k = 0; k < 3; k++) e[k] = k < dim ? 2 : 1;
  for (int k = 0;; k = (k + 1) % dim) {
    const fea_index ne = e[0] * e[1] * e[2];
    if (ne > per_block && ne % per_block != 0) return ne;
    e[k]++;
  }
}

/* Every instance sumfact.cu compiles: dimensions 1..3 and n = SFG_MIN_N..
 * SFG_MAX_N points per direction (p = 1..8), each with its own block size
 * and shared-memory slices. Lagrange Q_p where spaces have it (p <= 6: one
 * set of 1D tables) and B-splines for every p (tables per span), 8 to 132
 * elements each, every GPU kind against the CPU's CSR operator; the kernel
 * string must name the instance. 42 problems of at most 1435 free DoFs: a
 * few seconds of host work in all. */
Test(cuda_operator, every_sumfact_instance_matches_the_cpu_operator, .timeout = 600) {
  enum { lagrange_max_p = 6 }; /* fea_space_create_lagrange: Q1..Q6 */
  fea_context *gpu = open_gpu();
  fea_context *cpu = NULL;
  OK(fea_context_create("/cpu/threads", &cpu));
  OK(fea_context_set_num_threads(cpu, 2));
  uint64_t seed = 1000;
  for (int dim = 1; dim <= 3; dim++)
    for (int n = SFG_MIN_N; n <= SFG_MAX_N; n++)
      for (int bspline = 0; bspline < 2; bspline++) {
        const int p = n - 1;
        if (!bspline && p > lagrange_max_p) continue;
        fea_index e[3];
        const fea_index ne = sf_box(dim, n, e);
        char name[64], sf_text[48];
        snprintf(name, sizeof name, "%s%d %dD %lldx%lldx%lld", bspline ? "B p" : "Q", p, dim,
                 (long long)e[0], (long long)e[1], (long long)e[2]);
        snprintf(sf_text, sizeof sf_text, "gpu sum-factorization %dD n=%d:", dim, n);
        fea_mesh *cmesh = NULL, *gmesh = NULL;
        fea_space *cspace = NULL, *gspace = NULL;
        fea_problem *cpb = NULL, *gpb = NULL;
        box_problem(cpu, bspline, dim, p, e, &cmesh, &cspace, &cpb);
        box_problem(gpu, bspline, dim, p, e, &gmesh, &gspace, &gpb);
        fea_index nf = 0, gnf = 0;
        OK(fea_problem_get_num_free_dofs(cpb, &nf));
        OK(fea_problem_get_num_free_dofs(gpb, &gnf));
        cr_assert_eq(nf, gnf, "%s", name);
        cr_log_info("%s: %lld elements, %lld free DoFs", name, (long long)ne, (long long)nf);
        every_kind_against_cpu(gpu, gpb, cpu, cpb, nf, name, seed, seed + 1, sf_text);
        seed += 2;
        gpu_problem_free(&gmesh, &gspace, &gpb);
        gpu_problem_free(&cmesh, &cspace, &cpb);
      }
  fea_context_destroy(&cpu);
  fea_context_destroy(&gpu);
}

Test(cuda_operator, strategies_without_a_gpu_form_are_refused) {
  fea_context *gpu = open_gpu();
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  gpu_problem(gpu, &op_families[0], &mesh, &space, &pb);
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = FEA_OPERATOR_MATFREE_ELEMENT_MATRIX;
  d.strategy = FEA_UPDATE_MUTEX;
  fea_operator *op = NULL;
  cr_expect_eq(fea_operator_create(gpu, pb, &d, &op), FEA_ERR_UNSUPPORTED);
  cr_expect_null(op);
  gpu_problem_free(&mesh, &space, &pb);
  fea_context_destroy(&gpu);
}

/* Geometry terms at quadrature points have no device kernel: element
 * matrices run, and the info says why. */
Test(cuda_operator, sumfact_at_quadrature_points_falls_back) {
  fea_context *gpu = open_gpu();
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  gpu_problem(gpu, &op_families[5], &mesh, &space, &pb);
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  d.kind = FEA_OPERATOR_MATFREE_SUMFACT;
  d.geometry_terms = FEA_GEOMETRY_TERMS_STORED;
  fea_operator *op = NULL;
  OK(fea_operator_create(gpu, pb, &d, &op));
  fea_operator_info info = FEA_OPERATOR_INFO_INIT;
  OK(fea_operator_get_info(op, &info));
  cr_expect_eq(info.kind_run, FEA_OPERATOR_MATFREE_ELEMENT_MATRIX);
  cr_expect(strstr(info.kernel, "fallback: no device kernel at quadrature points") != NULL, "%s",
            info.kernel);
  OK(fea_operator_destroy(&op));
  gpu_problem_free(&mesh, &space, &pb);
  fea_context_destroy(&gpu);
}

/* Each free row's element contributions c_e(i) = (K_e x_e)_i, from the
 * CPU's element matrices (Dirichlet DoFs read as zero, as on the GPU):
 * count[i] of them at parts + i * most. scale is the largest sum_j
 * |K_e,ij x_j| over elements and rows, the size of the products' roundoff. */
typedef struct row_parts {
  int most;
  int *count;
  double *parts;
  double scale;
} row_parts;

static row_parts row_parts_make(const fea_problem *pb, const fea_space *space, fea_index n,
                                const double *x) {
  fea_space_info si = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(space, &si));
  const int nb = si.dofs_per_element;
  const fea_index *free_row = pb->free_index; /* per DoF: its free row, or -1 */
  fea_index *dofs = malloc((size_t)nb * sizeof *dofs);
  double *Ke = malloc((size_t)nb * nb * sizeof *Ke);
  row_parts rp = {0, calloc((size_t)n + 1, sizeof(int)), NULL, 0.0};
  cr_assert(dofs && Ke && rp.count);
  for (fea_index e = 0; e < si.num_elements; e++) {
    OK(fea_space_get_element_dofs(space, e, dofs));
    for (int i = 0; i < nb; i++)
      if (free_row[dofs[i]] >= 0) {
        const int c = ++rp.count[free_row[dofs[i]]];
        if (c > rp.most) rp.most = c;
      }
  }
  rp.parts = malloc(((size_t)n * rp.most + 1) * sizeof *rp.parts);
  cr_assert_not_null(rp.parts);
  memset(rp.count, 0, (size_t)n * sizeof *rp.count);
  for (fea_index e = 0; e < si.num_elements; e++) {
    OK(fea_space_get_element_dofs(space, e, dofs));
    OK(fea_problem_element_system(pb, e, Ke, NULL));
    for (int i = 0; i < nb; i++) {
      const fea_index r = free_row[dofs[i]];
      if (r < 0) continue;
      double s = 0.0, a = 0.0;
      for (int j = 0; j < nb; j++) {
        const fea_index rj = free_row[dofs[j]];
        const double xj = rj >= 0 ? x[rj] : 0.0;
        s += Ke[i * nb + j] * xj;
        a += fabs(Ke[i * nb + j] * xj);
      }
      rp.parts[(size_t)r * rp.most + rp.count[r]++] = s;
      rp.scale = fmax(rp.scale, a);
    }
  }
  free(dofs), free(Ke);
  return rp;
}

/* Whether v lies within tol of the sum of some nonempty subset of the m
 * parts (2^m - 1 sums). */
static int near_a_subset_sum(const double *parts, int m, double v, double tol) {
  for (unsigned s = 1; s < 1u << m; s++) {
    double sum = 0.0;
    for (int k = 0; k < m; k++)
      if (s >> k & 1u) sum += parts[k];
    if (fabs(v - sum) <= tol) return 1;
  }
  return 0;
}

/* scatter=unprotected: both matrix-free kinds in one launch with plain adds
 * (GPU_Max), and the info says so. How wrong the sums are is not bounded by
 * anything but the contributions themselves: the sum-factorization kernel
 * serves x-neighbouring elements from one warp, so one store instruction
 * writes their shared face row twice and one of the two adds is lost every
 * time, deterministically (an estimated 0.3 - 0.4 of max|y| for 3D Q2, too
 * close to the "< 0.5 relative" this test checked before); the
 * element-matrix kernel loses adds only where races happen to land.
 *
 * What does hold: an add is a load, an add and a store of one 8-byte word,
 * and where two adds to one row overlap, the later store overwrites the
 * earlier one and that contribution is lost. No contribution is counted
 * twice, and every stored value is a value stored before (or the cleared
 * zero) plus one contribution, so each entry of y is the sum of a nonempty
 * subset of its elements' contributions c_e(i). That is the check: for
 * every row, some nonempty subset of the contributions, computed on the host
 * from the element matrices, sums to the GPU's entry within roundoff
 * (1e-12 of the largest |K_e||x_e| entry; the device's own products differ
 * from the host's by ~1e-15 of it). Rows in one element only (the cell-
 * interior DoFs of Q2) thus equal the CPU product. A correct device cannot
 * fail it; NaN, garbage, adds into wrong rows and adds counted twice do. Q2
 * has at most 4 (2D) or 8 (3D) elements per row: at most 255 sums. How many
 * rows lost adds is logged. */
Test(cuda_operator, unprotected_scatter_runs_and_says_so, .timeout = 300) {
  fea_context *plain = open_gpu();
  fea_context_destroy(&plain);
  fea_context *gpu = NULL;
  OK(fea_context_create("/gpu/cuda:scatter=unprotected", &gpu));
  static const int unprotected_fams[] = {1, 5}; /* Q2 2D, Q2 3D */
  for (size_t fi = 0; fi < sizeof unprotected_fams / sizeof unprotected_fams[0]; fi++) {
    const op_family *f = &op_families[unprotected_fams[fi]];
    op_fixture cpu;
    op_fixture_make(&cpu, "/cpu/threads", 2, f, NULL);
    fea_mesh *mesh = NULL;
    fea_space *space = NULL;
    fea_problem *pb = NULL;
    gpu_problem(gpu, f, &mesh, &space, &pb);
    const fea_index n = cpu.nf;
    double *x = random_array((size_t)n, 5);
    fea_operator_desc cd = FEA_OPERATOR_DESC_INIT;
    cd.kind = FEA_OPERATOR_CSR;
    fea_operator *cop = NULL;
    OK(fea_operator_create(cpu.ctx, cpu.pb, &cd, &cop));
    fea_vector *cx = op_vector(&cpu, x), *cy = op_vector(&cpu, NULL);
    OK(fea_operator_apply(cop, cx, cy));
    double *ry = malloc((size_t)n * sizeof *ry + 8);
    OK(fea_vector_read(cy, n, FEA_F64, ry));
    row_parts rp = row_parts_make(cpu.pb, cpu.space, n, x);
    cr_assert(rp.most >= 1 && rp.most <= 8, "%s: %d elements share a row", f->name, rp.most);
    const double tol = 1e-12 * rp.scale;
    const fea_operator_kind kinds[] = {FEA_OPERATOR_MATFREE_ELEMENT_MATRIX,
                                       FEA_OPERATOR_MATFREE_SUMFACT};
    for (int k = 0; k < 2; k++) {
      fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
      d.kind = kinds[k];
      fea_operator *op = NULL;
      OK(fea_operator_create(gpu, pb, &d, &op));
      fea_operator_info info = FEA_OPERATOR_INFO_INIT;
      OK(fea_operator_get_info(op, &info));
      cr_expect(strstr(info.kernel, "UNPROTECTED, GPU_Max") != NULL, "%s", info.kernel);
      fea_vector *gx = gpu_vector(gpu, n, x), *gy = gpu_vector(gpu, n, NULL);
      OK(fea_operator_apply(op, gx, gy));
      double *hy = gpu_read(gy, n);
      fea_index bad = 0, lost = 0;
      for (fea_index i = 0; i < n; i++) {
        const double *parts = rp.parts + (size_t)i * rp.most;
        if (!near_a_subset_sum(parts, rp.count[i], hy[i], tol)) {
          if (bad++ < 5)
            cr_log_error("%s %s: row %lld is %.17g, no subset of its %d contributions sums to it",
                         f->name, info.kernel, (long long)i, hy[i], rp.count[i]);
        } else if (!(fabs(hy[i] - ry[i]) <= tol)) {
          lost++;
        }
      }
      cr_expect_eq(bad, 0, "%s %s: %lld of %lld rows are no sum of their contributions", f->name,
                   info.kernel, (long long)bad, (long long)n);
      cr_log_info("%s %s: %lld of %lld rows lost adds, relative difference %.3g", f->name,
                  info.kernel, (long long)lost, (long long)n, op_rel_diff(hy, ry, n));
      free(hy);
      fea_vector_destroy(&gx), fea_vector_destroy(&gy);
      OK(fea_operator_destroy(&op));
    }
    free(rp.count), free(rp.parts), free(x), free(ry);
    fea_vector_destroy(&cx), fea_vector_destroy(&cy);
    OK(fea_operator_destroy(&cop));
    gpu_problem_free(&mesh, &space, &pb);
    op_fixture_free(&cpu);
  }
  fea_context_destroy(&gpu);
}

/* Lanczos runs on the host for both: the same products up to rounding, the
 * same estimates to 1e-8. */
Test(cuda_operator, eigenvalue_estimates_equal_the_cpu_ones, .timeout = 300) {
  fea_context *gpu = open_gpu();
  const op_family *f = &op_families[5];
  op_fixture cpu;
  op_fixture_make(&cpu, "/cpu/threads", 2, f, NULL);
  fea_mesh *mesh = NULL;
  fea_space *space = NULL;
  fea_problem *pb = NULL;
  gpu_problem(gpu, f, &mesh, &space, &pb);
  fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
  fea_operator *cop = NULL, *gop = NULL;
  OK(fea_operator_create(cpu.ctx, cpu.pb, &d, &cop));
  OK(fea_operator_create(gpu, pb, &d, &gop));
  for (int jacobi = 0; jacobi < 2; jacobi++) {
    double cmin = 0, cmax = 0, gmin = 0, gmax = 0;
    OK(fea_operator_estimate_eigenvalues(cop, 30, jacobi, &cmin, &cmax));
    OK(fea_operator_estimate_eigenvalues(gop, 30, jacobi, &gmin, &gmax));
    cr_expect(fabs(gmin - cmin) <= 1e-8 * cmin && fabs(gmax - cmax) <= 1e-8 * cmax,
              "jacobi %d: GPU [%.12g, %.12g], CPU [%.12g, %.12g]", jacobi, gmin, gmax, cmin, cmax);
  }
  OK(fea_operator_destroy(&gop));
  OK(fea_operator_destroy(&cop));
  gpu_problem_free(&mesh, &space, &pb);
  op_fixture_free(&cpu);
  fea_context_destroy(&gpu);
}

/* Jacobi-PCG on both sides to rtol 1e-12: the solutions agree to ~1e-9. */
Test(cuda_operator, device_cg_reaches_the_cpu_solution, .timeout = 600) {
  fea_context *gpu = open_gpu();
  static const int cg_fams[] = {1, 5, 14};
  for (size_t fi = 0; fi < sizeof cg_fams / sizeof cg_fams[0]; fi++) {
    const op_family *f = &op_families[cg_fams[fi]];
    op_fixture cpu;
    op_fixture_make(&cpu, "/cpu/threads", 2, f, NULL);
    fea_mesh *mesh = NULL;
    fea_space *space = NULL;
    fea_problem *pb = NULL;
    gpu_problem(gpu, f, &mesh, &space, &pb);
    const fea_index n = cpu.nf;
    fea_cg_desc cg = FEA_CG_DESC_INIT;
    cg.rtol = 1e-12;
    fea_operator_desc cd = FEA_OPERATOR_DESC_INIT;
    cd.kind = FEA_OPERATOR_CSR;
    fea_operator *cop = NULL;
    OK(fea_operator_create(cpu.ctx, cpu.pb, &cd, &cop));
    fea_vector *cb = op_vector(&cpu, NULL), *cx = op_vector(&cpu, NULL);
    OK(fea_operator_get_rhs(cop, cb));
    OK(fea_cg_solve(cop, cb, cx, &cg, NULL));
    double *ref = malloc((size_t)n * sizeof *ref + 8);
    OK(fea_vector_read(cx, n, FEA_F64, ref));
    for (size_t ci = 0; ci < NCASES; ci++) {
      fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
      d.kind = cases[ci].kind;
      d.strategy = cases[ci].strategy;
      fea_operator *op = NULL;
      OK(fea_operator_create(gpu, pb, &d, &op));
      fea_vector *gb = gpu_vector(gpu, n, NULL), *gx = gpu_vector(gpu, n, NULL);
      OK(fea_operator_get_rhs(op, gb));
      fea_cg_stats st = FEA_CG_STATS_INIT;
      OK(fea_cg_solve(op, gb, gx, &cg, &st));
      cr_expect(st.converged, "%s %s: not converged", f->name, cases[ci].name);
      double *hx = gpu_read(gx, n);
      const double e = op_rel_diff(hx, ref, n);
      cr_expect(e <= 1e-9, "%s %s: GPU CG solution differs by %g", f->name, cases[ci].name, e);
      free(hx);
      fea_vector_destroy(&gb), fea_vector_destroy(&gx);
      OK(fea_operator_destroy(&op));
    }
    free(ref);
    fea_vector_destroy(&cb), fea_vector_destroy(&cx);
    OK(fea_operator_destroy(&cop));
    gpu_problem_free(&mesh, &space, &pb);
    op_fixture_free(&cpu);
  }
  fea_context_destroy(&gpu);
}
