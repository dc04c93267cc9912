/* Stresses of elasticity solutions and their VTU output: uniaxial tension
 * gives the exact constant stress (and von Mises stress) at every point, in
 * plane strain, plane stress and 3D, on B-spline boxes (parameters) and a Q2
 * mesh (physical points); on the mapped quarter annulus the points are
 * parameters, mapped where they belong, and the stress converges to Lame's;
 * the VTU file of a solution parses with a 3-component displacement, the
 * 6 stress components and the von Mises stress at every sample; a vector
 * space's own VTU has a 3-component u; bad input is refused by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <feaccel.h>
#include <feaccel/solver.h>

#include "api-common.h"
#include "elasticity-common.h"
#include "ring-common.h"

/* ---- uniaxial tension: sigma_xx = T everywhere ------------------------------------------------ */

/* The box [0, 2] x [0, 1] (x [0, 1]) pulled by T on its east side with
 * rollers on the west, south (and front) sides. The stress is T e_x e_x,
 * except sigma_zz = nu T in plane strain; von Mises follows. */
static void tension_stress(int dim, fea_elasticity_model model, int lagrange) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_mesh *mesh = NULL;
  fea_space *s = tension_space(ctx, dim, lagrange, 3, &mesh);
  const double E = 200.0, nu = 0.25, T = 3.0;
  fea_elasticity_desc d = tension_desc(dim, model, E, nu, &T, 0);
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  double *u = solve_elastic(ctx, s, pb, lagrange);
  /* Points everywhere, element boundaries and corners included. */
  enum { G = 5 };
  const fea_index npts = dim == 2 ? G * G : G * G * G;
  double pts[G * G * G * 3], x[G * G * G * 3], disp[G * G * G * 3], sig[G * G * G * 6],
      vm[G * G * G];
  for (fea_index i = 0; i < npts; i++) {
    fea_index r = i;
    for (int k = 0; k < dim; k++, r /= G)
      pts[i * dim + k] = (k == 0 ? 2.0 : 1.0) * (r % G) / (G - 1);
  }
  OK(fea_problem_evaluate_stress(pb, u, npts, pts, x, disp, sig, vm));
  const double szz = dim == 2 && model == FEA_ELASTICITY_PLANE_STRAIN ? nu * T : 0.0;
  const double want[6] = {T, 0, szz, 0, 0, 0};
  const double vm_want = sqrt(T * T + szz * szz - T * szz);
  /* The displacement of the tension. */
  const tension tn = tension_make(dim, model, E, nu, T);
  const double ex = tn.s[0], ey = tn.s[1];
  for (fea_index i = 0; i < npts; i++) {
    for (int k = 0; k < dim; k++)
      cr_expect(fabs(x[i * dim + k] - pts[i * dim + k]) <= 1e-14, "point %lld maps elsewhere",
                (long long)i);
    for (int k = 0; k < dim; k++) {
      const double w = (k == 0 ? ex : ey) * pts[i * dim + k];
      cr_expect(fabs(disp[i * dim + k] - w) <= 1e-10 * T / E, "point %lld: u_%d = %.17g, not %.17g",
                (long long)i, k, disp[i * dim + k], w);
    }
    for (int c = 0; c < 6; c++)
      cr_expect(fabs(sig[i * 6 + c] - want[c]) <= 1e-9 * T,
                "%dD model %d %s, point %lld (%g, %g): stress[%d] = %.17g, expected %.17g", dim,
                (int)model, lagrange ? "Q2" : "B-splines", (long long)i, pts[i * dim],
                pts[i * dim + 1], c, sig[i * 6 + c], want[c]);
    cr_expect(fabs(vm[i] - vm_want) <= 1e-9 * T, "point %lld: von Mises %.17g, expected %.17g",
              (long long)i, vm[i], vm_want);
  }
  /* Only what is asked for is written. */
  OK(fea_problem_evaluate_stress(pb, u, npts, pts, NULL, NULL, NULL, vm));
  OK(fea_problem_evaluate_stress(pb, u, 0, NULL, NULL, NULL, NULL, NULL));
  free(u);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
}

Test(elasticity_stress, tension_plane_strain) { tension_stress(2, FEA_ELASTICITY_PLANE_STRAIN, 0); }
Test(elasticity_stress, tension_plane_stress) { tension_stress(2, FEA_ELASTICITY_PLANE_STRESS, 0); }
Test(elasticity_stress, tension_3d) { tension_stress(3, FEA_ELASTICITY_PLANE_STRAIN, 0); }
Test(elasticity_stress, tension_q2_physical_points) {
  tension_stress(2, FEA_ELASTICITY_PLANE_STRESS, 1);
  tension_stress(3, FEA_ELASTICITY_PLANE_STRAIN, 1);
}

/* ---- the mapped annulus: parameters in, Lame's stresses out ------------------------------------ */

/* Lame's cylinder (elasticity-common.h) on the quarter annulus q: degree p, n x n elements. */
static fea_problem *annulus_problem(fea_context *ctx, const ring *q, const lame *l, int p,
                                    fea_index n, fea_space **out) {
  *out = annulus_space(ctx, q, 2, p, n, 0);
  fea_elasticity_desc d = lame_desc(l);
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(*out, &d, &pb));
  return pb;
}

/* The largest difference, relative to P, of the stresses and von Mises
 * stress at 7 x 7 parameters from Lame's (lame_stress). */
static double lame_stress_error(fea_context *ctx, int p, fea_index n) {
  ring q;
  ring_init(&q, 2, 0);
  const lame l = lame_make(2, 1000.0, 0.3, 10.0);
  fea_space *s = NULL;
  fea_problem *pb = annulus_problem(ctx, &q, &l, p, n, &s);
  double *u = solve_direct(ctx, s, pb);
  enum { G = 7 };
  double t[G * G * 2], x[G * G * 2], sig[G * G * 6], vm[G * G];
  for (int i = 0; i < G * G; i++)
    t[2 * i] = (double)(i % G) / (G - 1), t[2 * i + 1] = (double)(i / G) / (G - 1);
  OK(fea_problem_evaluate_stress(pb, u, G * G, t, x, NULL, sig, vm));
  double worst = 0;
  for (int i = 0; i < G * G; i++) {
    const double r = hypot(x[2 * i], x[2 * i + 1]);
    /* Direction 0 is radial: parameter t0 at radius 1 + t0 (the map is linear in r). */
    cr_assert(fabs(r - (1 + t[2 * i])) <= 1e-12, "parameter %g maps to radius %.17g", t[2 * i], r);
    double want[6];
    lame_stress(&l, x + 2 * i, want);
    for (int k = 0; k < 6; k++) worst = fmax(worst, fabs(sig[6 * i + k] - want[k]));
    const double a = want[0] - want[1], b = want[1] - want[2], d = want[2] - want[0];
    const double vm_want = sqrt(0.5 * (a * a + b * b + d * d) + 3 * want[5] * want[5]);
    worst = fmax(worst, fabs(vm[i] - vm_want));
  }
  free(u);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  return worst / l.P;
}

/* The stress is a derivative: its pointwise error falls at order p. */
Test(elasticity_stress, lame_annulus_parameters_converge) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  const double e0 = lame_stress_error(ctx, 3, 8), e1 = lame_stress_error(ctx, 3, 16);
  const double order = log2(e0 / e1);
  cr_log_info("annulus p = 3: max stress error %.3e -> %.3e (order %.2f)", e0, e1, order);
  cr_expect(e1 < 1e-3, "max relative stress error %.3e at n = 16", e1);
  cr_expect(order > 2.6, "pointwise stress order %.2f, expected about 3", order);
  fea_context_destroy(&ctx);
}

/* ---- VTU output --------------------------------------------------------------------------------- */

static char *read_all(const char *path) {
  FILE *f = fopen(path, "r");
  cr_assert(f, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  cr_assert(text);
  cr_assert_eq(fread(text, 1, (size_t)n, f), (size_t)n);
  text[n] = '\0';
  fclose(f);
  return text;
}

/* The values of the node array `name` (after its DataArray tag, which must
 * say NumberOfComponents="comps"), count of them. */
static void read_array(const char *text, const char *name, int comps, long long count,
                       double *out) {
  char tag[96];
  snprintf(tag, sizeof tag, "Name=\"%s\"", name);
  const char *p = strstr(text, tag);
  cr_assert(p, "no array %s", name);
  const char *end = strchr(p, '>');
  char want[64];
  snprintf(want, sizeof want, "NumberOfComponents=\"%d\"", comps);
  const char *nc = strstr(p, want);
  cr_assert(nc && nc < end, "array %s does not have %d components", name, comps);
  p = end + 1;
  for (long long i = 0; i < count * comps; i++) {
    char *e = NULL;
    out[i] = strtod(p, &e);
    cr_assert(e != p, "array %s ends after %lld of %lld values", name, i, count * comps);
    p = e;
  }
  while (*p == ' ' || *p == '\n') p++;
  cr_assert(strncmp(p, "</DataArray>", 12) == 0, "array %s has more than %lld values", name,
            count * comps);
}

/* Tension in 2D plane strain and in 3D: every sample of the file carries the
 * exact displacement (z = 0 in 2D), stress and von Mises stress; the points
 * are where the displacement says. */
static void tension_vtu(int dim, int lagrange) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  fea_mesh *mesh = NULL; /* Q2 on a structured mesh of 2^dim cells, or B-splines */
  fea_space *s = tension_space(ctx, dim, lagrange, 2, &mesh);
  const double E = 200.0, nu = 0.25, T = 3.0;
  fea_elasticity_desc d = tension_desc(dim, FEA_ELASTICITY_PLANE_STRAIN, E, nu, &T, 1);
  fea_problem *pb = NULL;
  OK(fea_problem_create_elasticity(s, &d, &pb));
  double *u = solve_elastic(ctx, s, pb, lagrange);
  char path[] = "/tmp/fea-elastic-vtu-XXXXXX";
  const int fd = mkstemp(path);
  cr_assert(fd >= 0);
  close(fd);
  const int samples = 3;
  OK(fea_problem_write_vtu(pb, u, samples, path));
  char *text = read_all(path);
  long long ne = dim == 2 ? 4 : 8, npts = ne * (dim == 2 ? 9 : 27);
  char want[96];
  snprintf(want, sizeof want, "NumberOfPoints=\"%lld\"", npts);
  cr_assert(strstr(text, want), "no '%s'", want);
  double *pts = malloc((size_t)npts * 3 * sizeof *pts), *disp = malloc((size_t)npts * 3 * 8),
         *sig = malloc((size_t)npts * 6 * 8), *vm = malloc((size_t)npts * 8);
  cr_assert(pts && disp && sig && vm);
  const char *pp = strstr(text, "<Points>");
  cr_assert(pp);
  pp = strchr(strstr(pp, "<DataArray"), '>') + 1;
  for (long long i = 0; i < npts * 3; i++) {
    char *e = NULL;
    pts[i] = strtod(pp, &e);
    pp = e;
  }
  read_array(text, "displacement", 3, npts, disp);
  read_array(text, "stress", 6, npts, sig);
  read_array(text, "von_mises", 1, npts, vm);
  const double szz = dim == 2 ? nu * T : 0.0;
  const tension tn = tension_make(dim, FEA_ELASTICITY_PLANE_STRAIN, E, nu, T);
  const double ex = tn.s[0], ey = tn.s[1];
  for (long long i = 0; i < npts; i++) {
    for (int k = 0; k < 3; k++) {
      const double w = k >= dim ? 0.0 : (k == 0 ? ex : ey) * pts[3 * i + k];
      cr_expect(fabs(disp[3 * i + k] - w) <= 1e-10 * T / E, "sample %lld: u_%d = %.17g, not %.17g",
                i, k, disp[3 * i + k], w);
    }
    /* ParaView's order: xx, yy, zz, xy, yz, xz. */
    const double sw[6] = {T, 0, szz, 0, 0, 0};
    for (int c = 0; c < 6; c++)
      cr_expect(fabs(sig[6 * i + c] - sw[c]) <= 1e-9 * T, "sample %lld: stress[%d] = %.17g", i, c,
                sig[6 * i + c]);
    cr_expect(fabs(vm[i] - sqrt(T * T + szz * szz - T * szz)) <= 1e-9 * T);
  }
  /* The space's own writer (B-splines): u with 3 components too (2D padded). */
  if (!lagrange) {
    OK(fea_space_write_vtu(s, u, samples, path));
    free(text);
    text = read_all(path);
    read_array(text, "u", 3, npts, disp);
    for (long long i = 0; i < npts; i++)
      cr_expect(fabs(disp[3 * i] - ex * pts[3 * i]) <= 1e-10 * T / E);
  }
  unlink(path);
  free(text);
  free(pts);
  free(disp);
  free(sig);
  free(vm);
  free(u);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&mesh);
  fea_context_destroy(&ctx);
}

Test(elasticity_stress, vtu_2d) { tension_vtu(2, 0); }
Test(elasticity_stress, vtu_3d) { tension_vtu(3, 0); }
Test(elasticity_stress, vtu_q2) {
  tension_vtu(2, 1);
  tension_vtu(3, 1);
}

/* ---- refusals ------------------------------------------------------------------------------------- */

Test(elasticity_stress, refusals) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  ring q;
  ring_init(&q, 2, 0);
  const lame l = lame_make(2, 1000.0, 0.3, 10.0);
  fea_space *s = NULL;
  fea_problem *pb = annulus_problem(ctx, &q, &l, 2, 2, &s);
  fea_space_info info = FEA_SPACE_INFO_INIT;
  OK(fea_space_get_info(s, &info));
  double *u = calloc((size_t)info.num_dofs, sizeof *u);
  double t[4] = {0.5, 0.5, 0.5, 1.5}, sig[12], vm[2];
  EXPECT_FAIL(fea_problem_evaluate_stress(pb, u, 2, t, NULL, NULL, sig, vm), FEA_ERR_INVALID_ARG,
              ctx,
              "point 1 has the parameter 1.5 in direction 1, outside the patch's range [0, 1]");
  t[3] = NAN;
  EXPECT_FAIL(fea_problem_evaluate_stress(pb, u, 2, t, NULL, NULL, sig, vm), FEA_ERR_INVALID_ARG,
              ctx, "point 1 is not finite: nan in direction 1");
  EXPECT_FAIL(fea_problem_evaluate_stress(pb, u, -1, t, NULL, NULL, sig, vm), FEA_ERR_INVALID_ARG,
              ctx, "npts -1 is negative");
  EXPECT_FAIL(fea_problem_evaluate_stress(pb, NULL, 1, t, NULL, NULL, sig, vm), FEA_ERR_INVALID_ARG,
              ctx, "u_full");
  EXPECT_FAIL(fea_problem_write_vtu(pb, u, 1, "/tmp/x.vtu"), FEA_ERR_INVALID_ARG, ctx,
              "samples = 1 is outside 2..16");
  EXPECT_FAIL(fea_problem_write_vtu(pb, u, 3, ""), FEA_ERR_INVALID_ARG, ctx, "path is empty");
  EXPECT_FAIL(fea_problem_write_vtu(pb, u, 3, "/nonexistent-dir/x.vtu"), FEA_ERR_IO, ctx,
              "/nonexistent-dir/x.vtu");
  u[3] = NAN;
  EXPECT_FAIL(fea_problem_write_vtu(pb, u, 3, "/tmp/fea-never-written.vtu"), FEA_ERR_INVALID_ARG,
              ctx, "the function is nan at sample");
  /* A Poisson problem has no stress. */
  fea_space *sc = NULL;
  fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
  bd.degree[0] = bd.degree[1] = 2, bd.n[0] = bd.n[1] = 2;
  OK(fea_space_create_bspline(ctx, &bd, &sc));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_problem *pp = NULL;
  OK(fea_problem_create_poisson(sc, &pd, &pp));
  t[3] = 0.5;
  EXPECT_FAIL(fea_problem_evaluate_stress(pp, u, 1, t, NULL, NULL, sig, vm), FEA_ERR_INVALID_ARG,
              ctx, "takes an elasticity problem");
  EXPECT_FAIL(fea_problem_write_vtu(pp, u, 3, "/tmp/x.vtu"), FEA_ERR_INVALID_ARG, ctx,
              "takes an elasticity problem");
  /* A Lagrange space on triangles is not sampled. */
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2, md.n[0] = md.n[1] = 2, md.simplices = 1;
  fea_mesh *mesh = NULL;
  fea_space *ls = NULL;
  OK(fea_mesh_create_structured(ctx, &md, &mesh));
  OK(fea_space_create_lagrange(mesh, 2, FEA_NODES_EQUISPACED, &ls));
  OK(fea_space_set_num_components(ls, 2));
  fea_elasticity_desc ed = FEA_ELASTICITY_DESC_INIT;
  fea_problem *lp = NULL;
  OK(fea_problem_create_elasticity(ls, &ed, &lp));
  EXPECT_FAIL(fea_problem_write_vtu(lp, u, 3, "/tmp/x.vtu"), FEA_ERR_UNSUPPORTED, ctx,
              "this space's cells are triangles");
  /* A physical point outside the P2 mesh is named. */
  const double far[2] = {0.5, 3.0};
  EXPECT_FAIL(fea_problem_evaluate_stress(lp, u, 1, far, NULL, NULL, sig, vm), FEA_ERR_INVALID_ARG,
              ctx, "outside");
  free(u);
  fea_problem_destroy(&lp);
  fea_space_destroy(&ls);
  fea_mesh_destroy(&mesh);
  fea_problem_destroy(&pp);
  fea_space_destroy(&sc);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}
