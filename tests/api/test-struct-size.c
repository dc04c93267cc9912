/* The one size rule of size-versioned structs (docs/architecture.md,
 * "Objects"), at every kind of entry point: a descriptor copied in, and an
 * info or stats struct copied out. A size of 0, one that stops inside the
 * first version's last field, and one larger than the library's struct are
 * FEA_ERR_INVALID_ARG naming the value, and the call changes nothing. */
#include <stddef.h>
#include <stdio.h>

#include "api-common.h"

/* Bytes through the last field of the first version. */
#define THROUGH(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/* The three refused sizes of a struct whose first version ends at last. */
#define BAD_SIZES(type, last) \
  { 0, THROUGH(type, last) - 1, sizeof(type) + 8 }

/* The caller's struct inside a larger buffer, so that a too-large size
 * still describes memory the caller owns. */
#define BUFFERED(type)      \
  struct {                  \
    type s;                 \
    unsigned char tail[16]; \
  }

/* expr, with v.s.size set to each bad size, fails with a message naming it. */
#define EXPECT_SIZES_REFUSED(type, last, init, what, ctx, expr)                        \
  do {                                                                                 \
    const size_t sizes_[] = BAD_SIZES(type, last);                                     \
    for (size_t k_ = 0; k_ < 3; k_++) {                                                \
      BUFFERED(type) v = {init, {0}};                                                  \
      v.s.size = sizes_[k_];                                                           \
      char want_[64];                                                                  \
      snprintf(want_, sizeof want_, what ".size is %zu; a " #type " has", sizes_[k_]); \
      EXPECT_FAIL(expr, FEA_ERR_INVALID_ARG, ctx, want_);                              \
      cr_assert_eq(v.s.size, sizes_[k_], "the caller's size changed");                 \
    }                                                                                  \
  } while (0)

static fea_context *open_ref(void) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/ref", &ctx));
  return ctx;
}

static fea_space *bspline_space(fea_context *ctx) {
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.degree[0] = d.degree[1] = 2;
  d.n[0] = d.n[1] = 4;
  fea_space *s = NULL;
  OK(fea_space_create_bspline(ctx, &d, &s));
  return s;
}

Test(struct_size, descriptors_copied_in) {
  fea_context *ctx = open_ref();
  fea_mesh *m = (fea_mesh *)&m;
  EXPECT_SIZES_REFUSED(fea_mesh_desc, simplices, FEA_MESH_DESC_INIT, "desc", ctx,
                       fea_mesh_create_structured(ctx, &v.s, &m));
  cr_assert_null(m);
  fea_space *s = (fea_space *)&s;
  EXPECT_SIZES_REFUSED(fea_bspline_desc, geometry, FEA_BSPLINE_DESC_INIT, "desc", ctx,
                       fea_space_create_bspline(ctx, &v.s, &s));
  cr_assert_null(s);
  /* The geometry a B-spline descriptor points to is copied in by its own size. */
  {
    fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
    EXPECT_SIZES_REFUSED(fea_geometry_desc, weights, FEA_GEOMETRY_DESC_INIT, "desc->geometry", ctx,
                         (bd.geometry = &v.s, fea_space_create_bspline(ctx, &bd, &s)));
    cr_assert_null(s);
  }
  s = bspline_space(ctx);
  fea_problem *pb = (fea_problem *)&pb;
  EXPECT_SIZES_REFUSED(fea_problem_desc, quad_points, FEA_PROBLEM_DESC_INIT, "desc", ctx,
                       fea_problem_create_poisson(s, &v.s, &pb));
  cr_assert_null(pb);
  OK(fea_problem_create_poisson(s, &(fea_problem_desc)FEA_PROBLEM_DESC_INIT, &pb));
  fea_solver *sv = (fea_solver *)&sv;
  EXPECT_SIZES_REFUSED(fea_solver_desc, memory_limit_bytes, FEA_SOLVER_DESC_INIT, "desc", ctx,
                       fea_solver_create_multifrontal(ctx, s, pb, &v.s, &sv));
  cr_assert_null(sv);
  fea_operator *op = (fea_operator *)&op;
  EXPECT_SIZES_REFUSED(fea_operator_desc, strategy, FEA_OPERATOR_DESC_INIT, "desc", ctx,
                       fea_operator_create(ctx, pb, &v.s, &op));
  cr_assert_null(op);
  EXPECT_SIZES_REFUSED(fea_cost_query, nproc, FEA_COST_QUERY_INIT, "query", ctx,
                       fea_cost_model_exact(ctx, &v.s, &(fea_cost)FEA_COST_INIT));
  EXPECT_SIZES_REFUSED(fea_cost_query, nproc, FEA_COST_QUERY_INIT, "query", NULL,
                       fea_cost_model_paper(&v.s, &(fea_cost)FEA_COST_INIT));

  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  OK(fea_operator_create(ctx, pb, NULL, &op));
  fea_vector *b = NULL, *x = NULL;
  OK(fea_vector_create(ctx, nf, FEA_F64, &b));
  OK(fea_vector_create(ctx, nf, FEA_F64, &x));
  OK(fea_operator_get_rhs(op, b));
  EXPECT_SIZES_REFUSED(fea_cg_desc, history, FEA_CG_DESC_INIT, "desc", ctx,
                       fea_cg_solve(op, b, x, &v.s, NULL));
  double x0 = -1;
  OK(fea_vector_dot(x, x, &x0));
  cr_assert_eq(x0, 0.0, "x written by a refused solve");
  EXPECT_SIZES_REFUSED(fea_cg_stats, apply_s, FEA_CG_STATS_INIT, "stats", ctx,
                       fea_cg_solve(op, b, x, NULL, &v.s));
  OK(fea_vector_dot(x, x, &x0));
  cr_assert_eq(x0, 0.0, "x written by a refused solve");

  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* Out-structs: refused before anything past .size is written. */
Test(struct_size, results_copied_out) {
  fea_context *ctx = open_ref();
  EXPECT_SIZES_REFUSED(fea_context_info, device_memory_bytes, FEA_CONTEXT_INFO_INIT, "info", ctx,
                       fea_context_get_info(ctx, &v.s));
  fea_space *s = bspline_space(ctx);
  EXPECT_SIZES_REFUSED(fea_space_info, elements, FEA_SPACE_INFO_INIT, "info", ctx,
                       fea_space_get_info(s, &v.s));
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(s, &(fea_problem_desc)FEA_PROBLEM_DESC_INIT, &pb));
  fea_operator *op = NULL;
  OK(fea_operator_create(ctx, pb, NULL, &op));
  EXPECT_SIZES_REFUSED(fea_operator_info, bytes_per_apply, FEA_OPERATOR_INFO_INIT, "info", ctx,
                       fea_operator_get_info(op, &v.s));
  fea_solver *sv = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, pb, NULL, &sv));
  EXPECT_SIZES_REFUSED(fea_solver_stats, device_bytes, FEA_SOLVER_STATS_INIT, "stats", ctx,
                       fea_solver_get_stats(sv, &v.s));
  EXPECT_SIZES_REFUSED(fea_solver_level, factor_s, FEA_SOLVER_LEVEL_INIT, "info", ctx,
                       fea_solver_get_level(sv, 0, &v.s));
  EXPECT_SIZES_REFUSED(fea_solver_node, r, FEA_SOLVER_NODE_INIT, "info", ctx,
                       fea_solver_get_node(sv, 0, &v.s));
  fea_cost_query q = FEA_COST_QUERY_INIT;
  EXPECT_SIZES_REFUSED(fea_cost, root_front, FEA_COST_INIT, "out", NULL,
                       fea_cost_model_paper(&q, &v.s));
  fea_solver_destroy(&sv);
  fea_operator_destroy(&op);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* The right sizes are accepted and the caller's size is kept. */
Test(struct_size, exact_size_accepted) {
  fea_context *ctx = open_ref();
  fea_space *s = bspline_space(ctx);
  BUFFERED(fea_space_info) v = {FEA_SPACE_INFO_INIT, {0}};
  OK(fea_space_get_info(s, &v.s));
  cr_assert_eq(v.s.size, sizeof v.s);
  cr_assert_eq(v.s.dim, 2);
  for (size_t i = 0; i < sizeof v.tail; i++) cr_assert_eq(v.tail[i], 0, "tail byte %zu written", i);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* Fields appended for the accuracy report (issue #43): a caller built
 * against the struct before them passes its old size. Its descriptor takes
 * the new fields' defaults (no residual check); its stats get the old
 * fields and nothing past them. */
Test(struct_size, solver_structs_of_older_callers) {
  fea_context *ctx = open_ref();
  fea_space *s = bspline_space(ctx);
  fea_problem *pb = NULL;
  OK(fea_problem_create_poisson(s, &(fea_problem_desc)FEA_PROBLEM_DESC_INIT, &pb));
  fea_solver_desc d = FEA_SOLVER_DESC_INIT;
  d.check_residual = 2;
  d.size = THROUGH(fea_solver_desc, memory_limit_bytes); /* check_residual is past it */
  fea_solver *sv = NULL;
  OK(fea_solver_create_multifrontal(ctx, s, pb, &d, &sv));
  OK(fea_solver_setup(sv));
  fea_index nf = 0;
  OK(fea_problem_get_num_free_dofs(pb, &nf));
  double *x = calloc((size_t)nf, sizeof *x);
  OK(fea_solver_solve(sv, 1, NULL, 0, x, nf));
  BUFFERED(fea_solver_stats) v = {FEA_SOLVER_STATS_INIT, {0}};
  memset(&v.s.pivot_min, 0xab, sizeof v.s - offsetof(fea_solver_stats, pivot_min));
  v.s.size = THROUGH(fea_solver_stats, transfer_s);
  OK(fea_solver_get_stats(sv, &v.s));
  cr_assert_eq(v.s.size, THROUGH(fea_solver_stats, transfer_s));
  cr_assert(v.s.num_nodes > 0 && v.s.factor_bytes > 0);
  const unsigned char *past = (const unsigned char *)&v.s.pivot_min;
  for (size_t i = 0; i < sizeof v.s - offsetof(fea_solver_stats, pivot_min); i++)
    cr_assert_eq(past[i], 0xab, "byte %zu past the caller's size written", i);
  /* The same solver with a caller of today: the report, no residual measured. */
  fea_solver_stats now = FEA_SOLVER_STATS_INIT;
  OK(fea_solver_get_stats(sv, &now));
  cr_assert(now.pivot_min > 0 && now.pivot_ratio > 0 && now.pivot_min_node >= 0);
  cr_assert(now.relative_residual == -1 && now.backward_error == -1,
            "an old descriptor's solve measured its residual");
  free(x);
  fea_solver_destroy(&sv);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_context_destroy(&ctx);
}

/* Fields appended for the BLAS kernel check (issue #41): a caller built
 * against fea_context_info before them passes its old size and gets the old
 * fields, nothing past them. */
Test(struct_size, context_info_of_older_callers) {
  fea_context *ctx = open_ref();
  BUFFERED(fea_context_info) v = {FEA_CONTEXT_INFO_INIT, {0}};
  const size_t old = THROUGH(fea_context_info, device_memory_bytes);
  memset((unsigned char *)&v.s + old, 0xab, sizeof v.s - old);
  v.s.size = old;
  OK(fea_context_get_info(ctx, &v.s));
  cr_assert_eq(v.s.size, old);
  cr_assert_str_eq(v.s.backend, "/cpu/ref");
  const unsigned char *past = (const unsigned char *)&v.s + old;
  for (size_t i = 0; i < sizeof v.s - old; i++)
    cr_assert_eq(past[i], 0xab, "byte %zu past the caller's size written", i);
  fea_context_destroy(&ctx);
}

/* Fields appended to say what ran (issue #40, the defaults): a caller built
 * against fea_multigrid_stats before them passes its old size and gets the
 * old fields, nothing past them; a caller of today gets the configuration. */
Test(struct_size, multigrid_stats_of_older_callers) {
  fea_context *ctx = open_ref();
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = md.n[1] = 8;
  fea_mesh *m = NULL;
  fea_space *s = NULL;
  fea_problem *pb = NULL;
  OK(fea_mesh_create_structured(ctx, &md, &m));
  OK(fea_space_create_lagrange(m, 1, FEA_NODES_EQUISPACED, &s));
  OK(fea_problem_create_poisson(s, &(fea_problem_desc)FEA_PROBLEM_DESC_INIT, &pb));
  fea_solver *sv = NULL;
  OK(fea_solver_create_multigrid(ctx, pb, NULL, &sv));
  OK(fea_solver_setup(sv));
  BUFFERED(fea_multigrid_stats) v = {FEA_MULTIGRID_STATS_INIT, {0}};
  const size_t old = THROUGH(fea_multigrid_stats, memory_bytes);
  memset((unsigned char *)&v.s + old, 0xab, sizeof v.s - old);
  v.s.size = old;
  OK(fea_solver_get_multigrid_stats(sv, &v.s));
  cr_assert_eq(v.s.size, old);
  cr_assert(v.s.num_levels == 4 && v.s.memory_bytes > 0);
  const unsigned char *past = (const unsigned char *)&v.s + old;
  for (size_t i = 0; i < sizeof v.s - old; i++)
    cr_assert_eq(past[i], 0xab, "byte %zu past the caller's size written", i);
  fea_multigrid_stats now = FEA_MULTIGRID_STATS_INIT;
  OK(fea_solver_get_multigrid_stats(sv, &now));
  const fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  cr_assert(now.smoother == d.smoother && now.krylov == d.krylov &&
            now.pre_smooth == d.pre_smooth && now.post_smooth == d.post_smooth);
  cr_assert_eq(now.operator_kind, FEA_OPERATOR_MATFREE_SUMFACT);
  cr_assert_eq(now.stencil_levels, 3, "%d stencil levels", now.stencil_levels);
  fea_solver_destroy(&sv);
  fea_problem_destroy(&pb);
  fea_space_destroy(&s);
  fea_mesh_destroy(&m);
  fea_context_destroy(&ctx);
}
