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
 * - geometry terms at quadrature points fall back to element matrices and say so;
 * - scatter=unprotected (GPU_Max) runs both matrix-free kinds in one launch;
 * - eigenvalue estimates of GPU operators equal the CPU's (Lanczos on the host);
 * - Jacobi-PCG on the GPU reaches the CPU PCG solution. */
#include <string.h>

#include "../api/operator-common.h"
#include "cuda-test.h"

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
    const fea_index n = cpu.nf;
    double *x = random_array((size_t)n, 99 + fi);
    double *y0 = random_array((size_t)n, 7 + fi);
    /* CPU oracle: element matrices, serial (any CPU kind agrees to roundoff). */
    fea_operator_desc cd = FEA_OPERATOR_DESC_INIT;
    cd.kind = FEA_OPERATOR_CSR;
    fea_operator *cop = NULL;
    OK(fea_operator_create(cpu.ctx, cpu.pb, &cd, &cop));
    fea_vector *cx = op_vector(&cpu, x), *cy = op_vector(&cpu, NULL), *ca = op_vector(&cpu, y0);
    fea_vector *cdg = op_vector(&cpu, NULL), *cb = op_vector(&cpu, NULL);
    OK(fea_operator_apply(cop, cx, cy));
    OK(fea_operator_apply_add(cop, cx, ca));
    OK(fea_operator_get_diagonal(cop, cdg));
    OK(fea_operator_get_rhs(cop, cb));
    double *ry = malloc((size_t)n * sizeof *ry + 8), *ra = malloc((size_t)n * sizeof *ra + 8);
    double *rd = malloc((size_t)n * sizeof *rd + 8), *rb = malloc((size_t)n * sizeof *rb + 8);
    OK(fea_vector_read(cy, n, FEA_F64, ry));
    OK(fea_vector_read(ca, n, FEA_F64, ra));
    OK(fea_vector_read(cdg, n, FEA_F64, rd));
    OK(fea_vector_read(cb, n, FEA_F64, rb));
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
      cr_expect(ey <= 1e-12, "%s %s apply: %g (%s)", f->name, cases[ci].name, ey, info.kernel);
      cr_expect(ea <= 1e-12, "%s %s apply_add: %g", f->name, cases[ci].name, ea);
      cr_expect(ed <= 1e-12, "%s %s diagonal: %g", f->name, cases[ci].name, ed);
      cr_expect(eb <= 1e-12, "%s %s rhs: %g", f->name, cases[ci].name, eb);
      free(hy), free(ha), free(hd), free(hb);
      fea_vector_destroy(&gx), fea_vector_destroy(&gy), fea_vector_destroy(&ga);
      fea_vector_destroy(&gd), fea_vector_destroy(&gb);
      OK(fea_operator_destroy(&op));
    }
    free(ry), free(ra), free(rd), free(rb), free(x), free(y0);
    fea_vector_destroy(&cx), fea_vector_destroy(&cy), fea_vector_destroy(&ca);
    fea_vector_destroy(&cdg), fea_vector_destroy(&cb);
    OK(fea_operator_destroy(&cop));
    gpu_problem_free(&mesh, &space, &pb);
    op_fixture_free(&cpu);
  }
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

/* scatter=unprotected: both matrix-free kinds in one launch with plain adds,
 * and the info says so. The sums may be wrong where elements share DoFs,
 * but a race loses only the adds that collide in flight: the product stays
 * within half of the CPU's in relative norm (a kernel that wrote nothing is
 * 1 away, NaN fails), which is all that is checked. */
Test(cuda_operator, unprotected_scatter_runs_and_says_so, .timeout = 300) {
  fea_context *plain = open_gpu();
  fea_context_destroy(&plain);
  fea_context *gpu = NULL;
  OK(fea_context_create("/gpu/cuda:scatter=unprotected", &gpu));
  const op_family *f = &op_families[5];
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
    const double e = op_rel_diff(hy, ry, n);
    cr_expect(e < 0.5, "%s: relative difference %g", info.kernel, e);
    free(hy);
    fea_vector_destroy(&gx), fea_vector_destroy(&gy);
    OK(fea_operator_destroy(&op));
  }
  free(x), free(ry);
  fea_vector_destroy(&cx), fea_vector_destroy(&cy);
  OK(fea_operator_destroy(&cop));
  gpu_problem_free(&mesh, &space, &pb);
  op_fixture_free(&cpu);
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
