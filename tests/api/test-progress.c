/* The progress callback and cancelling (fea_context_set_progress_callback),
 * and the warnings the log callback gets for environment overrides.
 *
 * - Each instrumented piece of long work (the multifrontal setup, the
 *   multigrid hierarchy that create builds and a later setup rebuilds, the
 *   prehandled setup, CG) reports its documented phases in order, every
 *   phase from 0 to 1 with fractions that never go back, and hands the
 *   callback the user pointer it was given;
 * - a callback that returns nonzero at its first call, and at a call half
 *   way through, stops the call with FEA_ERR_CANCELLED and a message naming
 *   the phase of that call; the objects are still destroyable, and the next
 *   setup without a cancel succeeds and gives the solution a run without any
 *   callback gives (the oracle: a run that never saw a callback);
 * - the prehandled inversion of a Pi with |E| >= 1024 runs in reporting
 *   pieces, and its solution still equals a LAPACK solve of the nodal system;
 * - OMP_NUM_THREADS that overrides the thread count reaches the log
 *   callback as one warning naming the variable and the value.
 * The ASan pass of scripts/run-tests runs this with leak detection: a
 * cancelled setup must free what it had allocated. */
#include <stdio.h>
#include <stdlib.h>

#include "api-common.h"
#include "solve-common.h"

#include <feaccel/solver.h>

#define MAX_RUNS 64

/* What a callback saw: the runs of one phase (consecutive calls, a run
 * restarting at fraction 0), their last fractions, and what was wrong. */
typedef struct recorder {
  int calls, cancel_at; /* cancel_at: the 1-based call that returns 1; 0: never */
  double cancel_from;   /* > 0: the first call with a fraction at least this returns 1 */
  int wrong_user, out_of_range, went_back;
  int runs;
  char phase[MAX_RUNS][64];
  double last[MAX_RUNS];
  char cancelled_phase[64];
} recorder;

static int record(void *user, const char *phase, double fraction) {
  recorder *r = user;
  if (!r || r->calls < 0) return 0;
  r->calls++;
  if (!(fraction >= 0.0 && fraction <= 1.0)) r->out_of_range++;
  const int same = r->runs > 0 && strcmp(r->phase[r->runs - 1], phase) == 0;
  if (same && fraction < r->last[r->runs - 1] && fraction != 0.0) r->went_back++;
  if (!same || (fraction == 0.0 && r->last[r->runs - 1] > 0.0)) {
    if (r->runs < MAX_RUNS) snprintf(r->phase[r->runs++], sizeof r->phase[0], "%s", phase);
  }
  if (r->runs > 0) r->last[r->runs - 1] = fraction;
  if (r->cancel_at == r->calls || (r->cancel_from > 0 && fraction >= r->cancel_from)) {
    snprintf(r->cancelled_phase, sizeof r->cancelled_phase, "%s", phase);
    return 1;
  }
  return 0;
}

/* The user pointer check: a second struct whose address the callback must get. */
typedef struct tagged {
  recorder rec;
  unsigned magic;
} tagged;

static int record_tagged(void *user, const char *phase, double fraction) {
  tagged *t = user;
  if (t->magic != 0x5eedu) {
    t->rec.wrong_user++;
    return 0;
  }
  return record(&t->rec, phase, fraction);
}

/* cancel: 0 never, 1 at the first call, 2 at the first call half way through its phase. */
static void recorder_reset(recorder *r, int cancel) {
  memset(r, 0, sizeof *r);
  r->cancel_at = cancel == 1;
  r->cancel_from = cancel == 2 ? 0.5 : 0.0;
}

/* The runs are exactly `want` (n of them), each ending at 1, none going back. */
static void expect_phases(const recorder *r, const char *const *want, int n, const char *what) {
  cr_expect_eq(r->out_of_range, 0, "%s: a fraction outside [0, 1]", what);
  cr_expect_eq(r->went_back, 0, "%s: a fraction went back within a phase", what);
  cr_expect_eq(r->wrong_user, 0, "%s: the callback got another user pointer", what);
  cr_assert_eq(r->runs, n, "%s: %d phase runs, expected %d (first '%s', last '%s')", what, r->runs,
               n, r->runs ? r->phase[0] : "", r->runs ? r->phase[r->runs - 1] : "");
  for (int k = 0; k < n; k++) {
    cr_expect_str_eq(r->phase[k], want[k], "%s: phase %d", what, k);
    cr_expect_eq(r->last[k], 1.0, "%s: phase '%s' ended at %g, not 1", what, r->phase[k],
                 r->last[k]);
  }
}

static void expect_cancelled(fea_status st, const fea_context *ctx, const recorder *r) {
  cr_assert_eq(st, FEA_ERR_CANCELLED, "[%s] returned %s: %s", fea_test_backend,
               fea_status_string(st), fea_context_last_error(ctx));
  const char *msg = fea_context_last_error(ctx);
  cr_expect(strstr(msg, "cancelled") != NULL, "message: %s", msg);
  cr_expect(strstr(msg, r->cancelled_phase) != NULL, "the message does not name phase '%s': %s",
            r->cancelled_phase, msg);
}

static double rel_diff(fea_index n, const double *x, const double *y) {
  double num = 0, den = 0;
  for (fea_index i = 0; i < n; i++) num += (x[i] - y[i]) * (x[i] - y[i]), den += y[i] * y[i];
  return sqrt(num / (den > 0 ? den : 1));
}

static manufactured sine2 = {2};

/* ---- multifrontal ---------------------------------------------------------------------------- */

typedef struct iga {
  fea_space *space;
  fea_problem *pb;
  fea_index nf;
} iga;

static iga iga_make(fea_context *ctx, fea_index n, int p) {
  iga g = {0};
  fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
  d.dim = 2;
  d.degree[0] = d.degree[1] = p;
  d.n[0] = d.n[1] = n;
  OK(fea_space_create_bspline(ctx, &d, &g.space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = sine_f;
  pd.source_user = &sine2;
  OK(fea_problem_create_poisson(g.space, &pd, &g.pb));
  OK(fea_problem_get_num_free_dofs(g.pb, &g.nf));
  return g;
}

static void iga_free(iga *g) {
  fea_problem_destroy(&g->pb);
  fea_space_destroy(&g->space);
}

/* Setup and solve with ctx's callback as installed; x gets the solution. */
static fea_status mf_run(fea_context *ctx, const iga *g, fea_solver **sv, double *x) {
  if (!*sv) OK(fea_solver_create_multifrontal(ctx, g->space, g->pb, NULL, sv));
  fea_status st = fea_solver_setup(*sv);
  if (st == FEA_SUCCESS) OK(fea_solver_solve(*sv, 1, NULL, 0, x, g->nf));
  return st;
}

BACKEND_TEST(progress, multifrontal_phases_cancel_and_resume) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  /* Two threads on /cpu/threads: the subtree walk's team and the level walk above its cut. */
  if (strcmp(resource, "/cpu/threads") == 0) OK(fea_context_set_num_threads(ctx, 2));
  iga g = iga_make(ctx, 48, 3);
  double *ref = malloc((size_t)g.nf * sizeof *ref), *x = malloc((size_t)g.nf * sizeof *x);
  fea_solver *sv = NULL;
  OK(mf_run(ctx, &g, &sv, ref)); /* the oracle: no callback */
  fea_solver_destroy(&sv);

  tagged t = {.magic = 0x5eedu};
  recorder_reset(&t.rec, 0);
  OK(fea_context_set_progress_callback(ctx, record_tagged, &t, 0.0));
  OK(mf_run(ctx, &g, &sv, x));
  static const char *const phases[] = {"multifrontal factorization"};
  expect_phases(&t.rec, phases, 1, "multifrontal setup");
  /* One thread reports every node; in a team only the nodes the calling
   * thread finishes reach it (how many is the schedule's). */
  if (strcmp(resource, "/cpu/ref") == 0)
    cr_expect_gt(t.rec.calls, 10, "per node: %d calls", t.rec.calls);
  cr_expect_eq(rel_diff(g.nf, x, ref), 0.0, "a callback changed the solution");

  /* Cancel at the first call and half way; then a plain setup again. */
  for (int k = 1; k <= 2; k++) {
    recorder_reset(&t.rec, k);
    expect_cancelled(fea_solver_setup(sv), ctx, &t.rec);
    EXPECT_FAIL(fea_solver_solve(sv, 1, NULL, 0, x, g.nf), FEA_ERR_STATE, ctx, "not set up");
    recorder_reset(&t.rec, 0);
    memset(x, 0, (size_t)g.nf * sizeof *x);
    OK(mf_run(ctx, &g, &sv, x));
    cr_expect_eq(rel_diff(g.nf, x, ref), 0.0, "after cancel %d: %g", k, rel_diff(g.nf, x, ref));
  }
  /* A cancelled solver is destroyable as it is. */
  recorder_reset(&t.rec, 2);
  expect_cancelled(fea_solver_setup(sv), ctx, &t.rec);
  OK(fea_solver_destroy(&sv));
  OK(fea_context_set_progress_callback(ctx, NULL, NULL, 0.0));
  free(ref);
  free(x);
  iga_free(&g);
  fea_context_destroy(&ctx);
}

/* ---- multigrid ------------------------------------------------------------------------------- */

typedef struct square {
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_index nf;
} square;

static square square_make(fea_context *ctx, fea_index n) {
  square s = {0};
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = 2;
  md.n[0] = md.n[1] = n;
  OK(fea_mesh_create_structured(ctx, &md, &s.mesh));
  OK(fea_space_create_lagrange(s.mesh, 1, FEA_NODES_EQUISPACED, &s.space));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.source = sine_f;
  pd.source_user = &sine2;
  OK(fea_problem_create_poisson(s.space, &pd, &s.pb));
  OK(fea_problem_get_num_free_dofs(s.pb, &s.nf));
  return s;
}

static void square_free(square *s) {
  fea_problem_destroy(&s->pb);
  fea_space_destroy(&s->space);
  fea_mesh_destroy(&s->mesh);
}

static const char *const mg_phases[] = {"multigrid: hierarchy", "multigrid: level operators",
                                        "multigrid: smoother", "multigrid: coarse factorization"};

BACKEND_TEST(progress, multigrid_phases_cancel_and_resume) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  square s = square_make(ctx, 64);
  double *ref = malloc((size_t)s.nf * sizeof *ref), *x = malloc((size_t)s.nf * sizeof *x);
  fea_multigrid_desc d = FEA_MULTIGRID_DESC_INIT;
  d.krylov = 0; /* plain cycles: the setup's phases alone */
  fea_solver *sv = NULL;
  OK(fea_solver_create_multigrid(ctx, s.pb, &d, &sv));
  OK(fea_solver_setup(sv));
  OK(fea_solver_solve(sv, 1, NULL, 0, ref, s.nf));
  fea_solver_destroy(&sv);

  recorder r;
  recorder_reset(&r, 0);
  OK(fea_context_set_progress_callback(ctx, record, &r, 0.0));
  /* create builds the first hierarchy (the first setup takes it). */
  OK(fea_solver_create_multigrid(ctx, s.pb, &d, &sv));
  expect_phases(&r, mg_phases, 4, "multigrid create");
  OK(fea_solver_setup(sv));
  OK(fea_solver_solve(sv, 1, NULL, 0, x, s.nf));
  cr_expect_lt(rel_diff(s.nf, x, ref), 1e-14, "a callback changed the solution");
  /* A later setup rebuilds: its phases again. */
  recorder_reset(&r, 0);
  OK(fea_solver_setup(sv));
  expect_phases(&r, mg_phases, 4, "multigrid setup");
  fea_solver_destroy(&sv);

  /* Cancelled create: no solver. Cancelled setup: destroyable, and the next
   * setup works and solves as before. */
  for (int k = 1; k <= 2; k++) {
    recorder_reset(&r, k);
    expect_cancelled(fea_solver_create_multigrid(ctx, s.pb, &d, &sv), ctx, &r);
    cr_expect_null(sv);
    recorder_reset(&r, 0);
    OK(fea_solver_create_multigrid(ctx, s.pb, &d, &sv));
    OK(fea_solver_setup(sv));
    recorder_reset(&r, k);
    expect_cancelled(fea_solver_setup(sv), ctx, &r);
    recorder_reset(&r, 0);
    OK(fea_solver_setup(sv));
    memset(x, 0, (size_t)s.nf * sizeof *x);
    OK(fea_solver_solve(sv, 1, NULL, 0, x, s.nf));
    cr_expect_lt(rel_diff(s.nf, x, ref), 1e-14, "after cancel %d", k);
    recorder_reset(&r, 2);
    expect_cancelled(fea_solver_setup(sv), ctx, &r);
    OK(fea_solver_destroy(&sv));
  }
  free(ref);
  free(x);
  square_free(&s);
  fea_context_destroy(&ctx);
}

/* ---- prehandled ------------------------------------------------------------------------------ */

static const char *const ph_phases[] = {"prehandled: preparing", "prehandled: blocks",
                                        "prehandled: Schur complement Pi",
                                        "prehandled: inverting Pi",
                                        "prehandled: working-precision copies"};

static fea_solver *ph_make(fea_context *ctx, const square *s, fea_index n0) {
  fea_prehandled_desc d = FEA_PREHANDLED_DESC_INIT;
  d.coarse_cells = n0;
  d.precision = FEA_F64;
  fea_solver *sv = NULL;
  OK(fea_solver_create_prehandled(ctx, s->pb, &d, &sv));
  return sv;
}

Test(progress, prehandled_phases_cancel_and_resume) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  square s = square_make(ctx, 64);
  double *ref = malloc((size_t)s.nf * sizeof *ref), *x = malloc((size_t)s.nf * sizeof *x);
  fea_solver *sv = ph_make(ctx, &s, 8);
  OK(fea_solver_setup(sv));
  OK(fea_solver_solve(sv, 1, NULL, 0, ref, s.nf));
  fea_solver_destroy(&sv);

  recorder r;
  recorder_reset(&r, 0);
  OK(fea_context_set_progress_callback(ctx, record, &r, 0.0));
  sv = ph_make(ctx, &s, 8);
  OK(fea_solver_setup(sv));
  expect_phases(&r, ph_phases, 5, "prehandled setup");
  OK(fea_solver_solve(sv, 1, NULL, 0, x, s.nf));
  cr_expect_lt(rel_diff(s.nf, x, ref), 1e-15, "a callback changed the solution");

  for (int k = 1; k <= 2; k++) {
    recorder_reset(&r, k);
    expect_cancelled(fea_solver_setup(sv), ctx, &r);
    EXPECT_FAIL(fea_solver_solve(sv, 1, NULL, 0, x, s.nf), FEA_ERR_STATE, ctx, "not set up");
    recorder_reset(&r, 0);
    OK(fea_solver_setup(sv));
    memset(x, 0, (size_t)s.nf * sizeof *x);
    OK(fea_solver_solve(sv, 1, NULL, 0, x, s.nf));
    cr_expect_lt(rel_diff(s.nf, x, ref), 1e-15, "after cancel %d", k);
  }
  /* A phase's last call (fraction 1: the work of the phase is done) cancels too. */
  recorder_reset(&r, 0);
  r.cancel_from = 1.0;
  expect_cancelled(fea_solver_setup(sv), ctx, &r);
  OK(fea_solver_destroy(&sv));
  free(ref);
  free(x);
  square_free(&s);
  fea_context_destroy(&ctx);
}

/* |E| = 2 * 7 * 127 - 49 = 1729 at h = 1/128, h0 = 1/8: Pi is inverted in
 * panels (the path of h = 1/512), reporting between them; the solution is a
 * LAPACK solve's. */
Test(progress, prehandled_panelled_inverse_reports_and_solves) {
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  square s = square_make(ctx, 128);
  recorder r;
  recorder_reset(&r, 0);
  OK(fea_context_set_progress_callback(ctx, record, &r, 0.0));
  fea_solver *sv = ph_make(ctx, &s, 8);
  OK(fea_solver_setup(sv));
  expect_phases(&r, ph_phases, 5, "prehandled setup, |E| = 1729");
  cr_expect_gt(r.calls, 20, "the panels report: %d calls", r.calls);
  double *x = malloc((size_t)s.nf * sizeof *x), *b = malloc((size_t)s.nf * sizeof *b);
  OK(fea_solver_solve(sv, 1, NULL, 0, x, s.nf));
  fea_matrix *A = NULL;
  OK(fea_problem_assemble_reference(s.pb, b, &A));
  lapack_solve_csr(A, b);
  cr_expect_lt(rel_diff(s.nf, x, b), 1e-12, "M1 against LAPACK: %g", rel_diff(s.nf, x, b));
  fea_matrix_destroy(&A);
  fea_solver_destroy(&sv);
  free(x);
  free(b);
  square_free(&s);
  fea_context_destroy(&ctx);
}

/* ---- CG -------------------------------------------------------------------------------------- */

BACKEND_TEST(progress, cg_reports_and_cancels) {
  fea_context *ctx = NULL;
  OPEN_OR_SKIP(resource, &ctx);
  square s = square_make(ctx, 32);
  fea_operator *op = NULL;
  OK(fea_operator_create(ctx, s.pb, NULL, &op));
  fea_vector *b = NULL, *x = NULL;
  OK(fea_vector_create(ctx, s.nf, FEA_F64, &b));
  OK(fea_vector_create(ctx, s.nf, FEA_F64, &x));
  OK(fea_operator_get_rhs(op, b));
  fea_cg_desc cd = FEA_CG_DESC_INIT;
  cd.rtol = 1e-10;
  fea_cg_stats st0 = FEA_CG_STATS_INIT, st = FEA_CG_STATS_INIT;
  OK(fea_cg_solve(op, b, x, &cd, &st0));
  double *ref = malloc((size_t)s.nf * sizeof *ref), *u = malloc((size_t)s.nf * sizeof *u);
  OK(fea_vector_read(x, s.nf, FEA_F64, ref));

  recorder r;
  recorder_reset(&r, 0);
  OK(fea_context_set_progress_callback(ctx, record, &r, 0.0));
  OK(fea_vector_set_all(x, 0.0));
  OK(fea_cg_solve(op, b, x, &cd, &st));
  static const char *const phases[] = {"cg"};
  expect_phases(&r, phases, 1, "cg");
  cr_expect_eq(r.calls, (int)st.iterations + 1, "one call per iteration and one at the start");
  OK(fea_vector_read(x, s.nf, FEA_F64, u));
  cr_expect_eq(rel_diff(s.nf, u, ref), 0.0);

  for (int k = 1; k <= 2; k++) {
    recorder_reset(&r, k);
    OK(fea_vector_set_all(x, 0.0));
    expect_cancelled(fea_cg_solve(op, b, x, &cd, &st), ctx, &r);
  }
  /* The interval: 60 s between calls leaves the start and the end. */
  recorder_reset(&r, 0);
  OK(fea_context_set_progress_callback(ctx, record, &r, 60.0));
  OK(fea_vector_set_all(x, 0.0));
  OK(fea_cg_solve(op, b, x, &cd, &st));
  cr_expect_eq(r.calls, 2, "with a 60 s interval: %d calls", r.calls);
  EXPECT_FAIL(fea_context_set_progress_callback(ctx, record, &r, -1.0), FEA_ERR_INVALID_ARG, ctx,
              "interval");
  EXPECT_FAIL(fea_context_set_progress_callback(ctx, record, &r, NAN), FEA_ERR_INVALID_ARG, ctx,
              "interval");
  EXPECT_FAIL(fea_context_set_progress_callback(NULL, record, &r, 0.0), FEA_ERR_INVALID_ARG, NULL,
              "ctx");
  free(ref);
  free(u);
  fea_vector_destroy(&b);
  fea_vector_destroy(&x);
  fea_operator_destroy(&op);
  square_free(&s);
  fea_context_destroy(&ctx);
}

/* ---- the log callback: environment overrides ------------------------------------------------- */

Test(progress, omp_num_threads_override_is_a_warning) {
  /* A count no machine's default is: the warning must come. */
  setenv("OMP_NUM_THREADS", "1023", 1);
  fea_context *ctx = NULL;
  OK(fea_context_create("/cpu/threads", &ctx));
  warnings w = {0};
  OK(fea_context_set_log_callback(ctx, FEA_LOG_WARN, keep_warning, &w));
  int env_warnings = 0;
  cr_assert_geq(w.count, 1, "no warning");
  if (strstr(w.first, "OMP_NUM_THREADS=1023")) env_warnings++;
  if (w.count > 1 && strstr(w.last, "OMP_NUM_THREADS=1023")) env_warnings++;
  cr_expect_eq(env_warnings, 1, "first: %s; last: %s", w.first, w.last);
  /* Once per context: a second callback hears nothing of it. */
  warnings w2 = {0};
  OK(fea_context_set_log_callback(ctx, FEA_LOG_WARN, keep_warning, &w2));
  cr_expect_eq(w2.count, 0, "%s", w2.first);
  fea_context_destroy(&ctx);

  /* threads= in the resource wins: no warning. */
  OK(fea_context_create("/cpu/threads:threads=1", &ctx));
  warnings w3 = {0};
  OK(fea_context_set_log_callback(ctx, FEA_LOG_WARN, keep_warning, &w3));
  cr_expect(w3.count == 0 || !strstr(w3.last, "OMP_NUM_THREADS"), "%s", w3.last);
  fea_context_destroy(&ctx);
  unsetenv("OMP_NUM_THREADS");
}
