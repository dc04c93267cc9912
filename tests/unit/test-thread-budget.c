/* The thread budget (src/base/thread-budget.c): the decision's bounds, the
 * /proc/stat parser, the adapt option and its environment variable, and
 * the count a context's regions get. No timing: the load is whatever the
 * machine has, so only the bounds are checked on live contexts, and that an
 * operator's y does not depend on how many threads its regions get. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "../api/operator-common.h"
#include "base/context.h"
#include "base/resource.h"
#include "base/thread-budget.h"

Test(thread_budget, decide_bounds) {
  /* never 0, never above the context's threads, whatever the load */
  for (int n = 1; n <= 64; n *= 2)
    for (int cpus = 1; cpus <= 128; cpus *= 2)
      for (double others = -1.0; others <= 200.0; others += 0.37) {
        const int t = fea_thread_budget_decide(n, cpus, others);
        cr_assert(t >= 1 && t <= n, "decide(%d, %d, %g) = %d", n, cpus, others, t);
      }
  cr_assert_eq(fea_thread_budget_decide(0, 2, 0.0), 1);
  cr_assert_eq(fea_thread_budget_decide(-3, 2, 0.0), 1);
}

Test(thread_budget, decide_follows_the_load) {
  cr_assert_eq(fea_thread_budget_decide(2, 2, -1.0), 2, "unknown load: every thread");
  cr_assert_eq(fea_thread_budget_decide(2, 0, 1.0), 2, "no CPU count: every thread");
  cr_assert_eq(fea_thread_budget_decide(2, 2, 0.0), 2);
  cr_assert_eq(fea_thread_budget_decide(2, 2, 0.2), 2, "a fifth of a core taken: still free");
  cr_assert_eq(fea_thread_budget_decide(2, 2, 0.3), 1, "more than a quarter: taken");
  cr_assert_eq(fea_thread_budget_decide(2, 2, 1.0), 1);
  cr_assert_eq(fea_thread_budget_decide(2, 2, 2.0), 1, "all taken: still one thread");
  cr_assert_eq(fea_thread_budget_decide(16, 16, 4.0), 12);
  cr_assert_eq(fea_thread_budget_decide(8, 16, 4.0), 8, "free cores beyond the context's");
  cr_assert_eq(fea_thread_budget_decide(4, 2, 0.0), 2, "no more threads than CPUs");
}

static const char stat_text[] =
    "cpu  500 10 200 9000 40 0 5 3 0 0\n"
    "cpu0 100 5 50 4000 20 0 2 1 0 0\n"
    "cpu1 200 5 100 3000 10 0 2 1 0 0\n"
    "cpu2 200 0 50 2000 10 0 1 1 0 0\n"
    "intr 123456 7 8 9\n"
    "ctxt 42\n"
    "procs_running 3\n";

Test(thread_budget, parse_stat_all_cpus) {
  unsigned long long total, idle;
  int cpus;
  cr_assert_eq(fea_thread_budget_parse_stat(stat_text, NULL, 0, &total, &idle, &cpus), 0);
  cr_assert_eq(cpus, 3, "the summary line \"cpu \" is not a CPU");
  cr_assert_eq(idle, 4020ull + 3010ull + 2010ull);
  cr_assert_eq(total, 4178ull + 3318ull + 2262ull);
}

Test(thread_budget, parse_stat_set) {
  unsigned long long total, idle, set[1] = {(1ull << 0) | (1ull << 2)};
  int cpus;
  cr_assert_eq(fea_thread_budget_parse_stat(stat_text, set, 1, &total, &idle, &cpus), 0);
  cr_assert_eq(cpus, 2);
  cr_assert_eq(idle, 4020ull + 2010ull);
  set[0] = 1ull << 7; /* a CPU without a line */
  cr_assert_eq(fea_thread_budget_parse_stat(stat_text, set, 1, &total, &idle, &cpus), -1);
  cr_assert_eq(cpus, 0);
}

Test(thread_budget, parse_stat_not_a_stat) {
  unsigned long long total, idle;
  int cpus;
  cr_assert_eq(fea_thread_budget_parse_stat("", NULL, 0, &total, &idle, &cpus), -1);
  cr_assert_eq(fea_thread_budget_parse_stat("cpu0\ncpu1 x y\ncpux 1 2 3 4\n", NULL, 0, &total,
                                            &idle, &cpus),
               -1);
  cr_assert_eq(fea_thread_budget_parse_stat("cpu7 1 2 3\n", NULL, 0, &total, &idle, &cpus), -1,
               "fewer than the four fields up to idle");
}

static fea_status option(const char *resource, fea_thread_adapt *adapt) {
  char base[64];
  fea_resource_opts opts;
  fea_status s = fea_resource_parse(resource, base, sizeof base, &opts);
  return s < 0 ? s : fea_thread_budget_option(&opts, adapt);
}

Test(thread_budget, option) {
  unsetenv("FEACCEL_THREADS_ADAPT");
  fea_thread_adapt a = FEA_THREADS_ADAPT_OFF;
  cr_assert_eq(option("/cpu/threads", &a), FEA_SUCCESS);
  cr_assert_eq(a, FEA_THREADS_ADAPT_LOAD, "the default follows the load");
  cr_assert_eq(option("/cpu/threads:adapt=off", &a), FEA_SUCCESS);
  cr_assert_eq(a, FEA_THREADS_ADAPT_OFF);
  cr_assert_eq(option("/cpu/threads:threads=2,adapt=load", &a), FEA_SUCCESS);
  cr_assert_eq(a, FEA_THREADS_ADAPT_LOAD);
  cr_assert_eq(fea_thread_budget_option(NULL, &a), FEA_SUCCESS);
  cr_assert_eq(a, FEA_THREADS_ADAPT_LOAD);
}

Test(thread_budget, option_bad_values) {
  unsetenv("FEACCEL_THREADS_ADAPT");
  const char *bad[] = {"/cpu/threads:adapt=maybe", "/cpu/threads:adapt=LOAD",
                       "/cpu/threads:adapt=off ", "/cpu/threads:adapt=0"};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    fea_thread_adapt a;
    cr_assert_eq(option(bad[k], &a), FEA_ERR_INVALID_ARG, "%s accepted", bad[k]);
    cr_assert(strstr(fea_context_last_error(NULL), "adapt=") != NULL, "%s: %s", bad[k],
              fea_context_last_error(NULL));
  }
}

Test(thread_budget, environment) {
  fea_thread_adapt a;
  setenv("FEACCEL_THREADS_ADAPT", "off", 1);
  cr_assert_eq(option("/cpu/threads", &a), FEA_SUCCESS);
  cr_assert_eq(a, FEA_THREADS_ADAPT_OFF);
  cr_assert_eq(option("/cpu/threads:adapt=load", &a), FEA_SUCCESS);
  cr_assert_eq(a, FEA_THREADS_ADAPT_LOAD, "the option wins over the environment");
  setenv("FEACCEL_THREADS_ADAPT", "", 1);
  cr_assert_eq(option("/cpu/threads", &a), FEA_SUCCESS);
  cr_assert_eq(a, FEA_THREADS_ADAPT_LOAD, "empty: the default");
  setenv("FEACCEL_THREADS_ADAPT", "sometimes", 1);
  cr_assert_eq(option("/cpu/threads", &a), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(NULL), "FEACCEL_THREADS_ADAPT=sometimes") != NULL, "%s",
            fea_context_last_error(NULL));
  unsetenv("FEACCEL_THREADS_ADAPT");
}

/* Live contexts: within bounds on every call, over a few sampling windows. */
Test(thread_budget, context_bounds) {
  unsetenv("FEACCEL_THREADS_ADAPT");
  fea_context *load = NULL, *off = NULL, *one = NULL, *ref = NULL;
  cr_assert_eq(fea_context_create("/cpu/threads:threads=3,adapt=load", &load), FEA_SUCCESS);
  cr_assert_eq(fea_context_create("/cpu/threads:threads=3,adapt=off", &off), FEA_SUCCESS);
  cr_assert_eq(fea_context_create("/cpu/threads:threads=1", &one), FEA_SUCCESS);
  cr_assert_eq(fea_context_create("/cpu/ref", &ref), FEA_SUCCESS);
  cr_assert_eq(load->adapt, FEA_THREADS_ADAPT_LOAD);
  cr_assert_eq(off->adapt, FEA_THREADS_ADAPT_OFF);
  for (int k = 0; k < 200; k++) {
    const int t = fea_thread_budget(load);
    cr_assert(t >= 1 && t <= 3, "budget %d of 3 threads", t);
    cr_assert_eq(fea_thread_budget(off), 3, "adapt=off pins every region to the threads");
    cr_assert_eq(fea_thread_budget(one), 1);
    cr_assert_eq(fea_thread_budget(ref), 1);
    if (k == 100) cr_assert_eq(fea_context_set_num_threads(load, 2), FEA_SUCCESS);
    if (k > 100) cr_assert(fea_thread_budget(load) <= 2, "follows the new thread count");
    const struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  int cpus = 0;
  const double others = fea_thread_budget_others(&cpus);
  cr_assert(others == -1.0 || (others >= 0.0 && others <= cpus), "others %g on %d CPUs", others,
            cpus);
  fea_context_destroy(&load);
  fea_context_destroy(&off);
  fea_context_destroy(&one);
  fea_context_destroy(&ref);
}

/* An operator built for 4 threads gives the same y, bit for bit, when its
 * regions get fewer: the budget is lowered here by lowering the context's
 * count behind the operator's back (its plans stay those of 4 threads),
 * which is what a busy machine does through the load. The strategies
 * whose adds come in a fixed order (private buffers, coloring, CSR's row
 * blocks) are the ones the claim is about. */
static void apply_on(fea_operator *op, fea_vector *x, fea_vector *y, double *out, fea_index n) {
  cr_assert_eq(fea_operator_apply(op, x, y), FEA_SUCCESS, "%s", fea_context_last_error(NULL));
  cr_assert_eq(fea_vector_read(y, n, FEA_F64, out), FEA_SUCCESS);
}

Test(thread_budget, apply_does_not_depend_on_the_team, .timeout = 120) {
  unsetenv("FEACCEL_THREADS_ADAPT");
  const struct {
    fea_operator_kind kind;
    fea_update_strategy strategy;
    int family;
  } cases[] = {
      {FEA_OPERATOR_CSR, FEA_UPDATE_AUTO, 1},
      {FEA_OPERATOR_MATFREE_SUMFACT, FEA_UPDATE_PRIVATE_BUFFERS, 0},
      {FEA_OPERATOR_MATFREE_SUMFACT, FEA_UPDATE_COLORING, 0},
      {FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, FEA_UPDATE_PRIVATE_BUFFERS, 1},
      {FEA_OPERATOR_MATFREE_ELEMENT_MATRIX, FEA_UPDATE_COLORING, 5},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    op_fixture f;
    op_fixture_make(&f, "/cpu/threads:threads=4,adapt=off", 0, &op_families[cases[c].family],
                    op_sigma);
    fea_operator_desc d = FEA_OPERATOR_DESC_INIT;
    d.kind = cases[c].kind;
    d.strategy = cases[c].strategy;
    fea_operator *op = NULL;
    cr_assert_eq(fea_operator_create(f.ctx, f.pb, &d, &op), FEA_SUCCESS, "%s",
                 fea_context_last_error(NULL));
    fea_operator_info info = FEA_OPERATOR_INFO_INIT;
    cr_assert_eq(fea_operator_get_info(op, &info), FEA_SUCCESS);
    cr_assert(d.kind != FEA_OPERATOR_MATFREE_SUMFACT || op_sumfact_built(&info), "%s", info.kernel);
    double *xv = malloc((size_t)f.nf * sizeof *xv), *want = malloc((size_t)f.nf * sizeof *want);
    double *got = malloc((size_t)f.nf * sizeof *got);
    for (fea_index i = 0; i < f.nf; i++) xv[i] = 1.0 + 0.37 * (double)(i % 11) - 1e-3 * (double)i;
    fea_vector *x = op_vector(&f, xv), *y = op_vector(&f, xv);
    apply_on(op, x, y, want, f.nf);
    for (int team = 3; team >= 1; team--) {
      f.ctx->nthreads = team; /* what fea_thread_budget hands the regions now */
      cr_assert_eq(fea_thread_budget(f.ctx), team);
      apply_on(op, x, y, got, f.nf);
      cr_assert(memcmp(got, want, (size_t)f.nf * sizeof *got) == 0,
                "%s (%s): y on %d of 4 threads differs by %.3g", info.kernel,
                fea_update_strategy_name(info.strategy_run), team, op_rel_diff(got, want, f.nf));
    }
    f.ctx->nthreads = 4;
    fea_vector_destroy(&x);
    fea_vector_destroy(&y);
    fea_operator_destroy(&op);
    free(xv);
    free(want);
    free(got);
    op_fixture_free(&f);
  }
}

/* The multifrontal factor and solve on 4 threads give the same x, bit for
 * bit, whatever the load leaves its node-parallel levels (the cap stands
 * in for the load). */
Test(thread_budget, multifrontal_does_not_depend_on_the_team, .timeout = 120) {
  unsetenv("FEACCEL_THREADS_ADAPT");
  const op_family fam = {"B p2 2D", 1, 2, 2, 0, 24};
  op_fixture f;
  op_fixture_make(&f, "/cpu/threads:threads=4,adapt=load", 0, &fam, op_sigma);
  double *want = malloc((size_t)f.nf * sizeof *want), *got = malloc((size_t)f.nf * sizeof *got);
  for (int cap = 0; cap <= 3; cap++) {
    fea_thread_budget_cap(cap == 0 ? 4 : cap);
    fea_solver *s = NULL;
    cr_assert_eq(fea_solver_create_multifrontal(f.ctx, f.space, f.pb, NULL, &s), FEA_SUCCESS, "%s",
                 fea_context_last_error(NULL));
    cr_assert_eq(fea_solver_setup(s), FEA_SUCCESS, "%s", fea_context_last_error(NULL));
    cr_assert_eq(fea_solver_solve(s, 1, NULL, 0, cap ? got : want, f.nf), FEA_SUCCESS, "%s",
                 fea_context_last_error(NULL));
    fea_solver_destroy(&s);
    if (cap)
      cr_assert(memcmp(got, want, (size_t)f.nf * sizeof *got) == 0,
                "x with the budget capped at %d of 4 threads differs by %.3g", cap,
                op_rel_diff(got, want, f.nf));
  }
  fea_thread_budget_cap(0);
  free(want);
  free(got);
  op_fixture_free(&f);
}
