/* The update strategies from the inside (src/concurrency):
 *  - COLORING equals SERIAL run over the elements in color order, bit for
 *    bit, for any thread count (the order it adds each entry's contributions
 *    in), and its colorings pass the validator;
 *  - PRIVATE_COPIES is the thread blocks' serial sums added in thread order,
 *    bit for bit, and its copies respect the memory limit;
 *  - PRIVATE_BUFFERS equals the reference bit for bit and integrates each
 *    element at most once more per neighbouring block; its plan (built on
 *    threads) is the one a serial pass over the elements makes;
 *  - TSX with forced aborts never starts a transaction, counts every attempt
 *    as a conflict, retries, backs off, and applies each batch under the
 *    fallback lock; the CPUID answer agrees with /proc/cpuinfo;
 *  - the artificial workload of the benchmarks leaves the result unchanged;
 *  - AUTO never picks TSX. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <feaccel.h>

#include "assembly/conc.h"
#include "linalg/matrix.h"
#include "disc/pattern.h"
#include "disc/problem.h"

typedef struct setup {
  fea_context *ctx;
  fea_mesh *mesh;
  fea_space *space;
  fea_problem *pb;
  fea_matrix *A;
  double *b;
} setup;

static double g_fn(const double *x, void *u) {
  (void)u;
  return x[0] * x[0] - x[1];
}

static void make(setup *s, int bspline, int dim, int order, int n) {
  memset(s, 0, sizeof *s);
  cr_assert_eq(fea_context_create("/cpu/ref", &s->ctx), FEA_SUCCESS);
  if (bspline) {
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = dim;
    for (int k = 0; k < 3; k++) d.degree[k] = order, d.n[k] = n + k;
    cr_assert_eq(fea_space_create_bspline(s->ctx, &d, &s->space), FEA_SUCCESS);
  } else {
    fea_mesh_desc md = FEA_MESH_DESC_INIT;
    md.dim = dim;
    for (int k = 0; k < 3; k++) md.n[k] = n + k;
    cr_assert_eq(fea_mesh_create_structured(s->ctx, &md, &s->mesh), FEA_SUCCESS);
    cr_assert_eq(fea_space_create_lagrange(s->mesh, order, FEA_NODES_EQUISPACED, &s->space),
                 FEA_SUCCESS);
  }
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.dirichlet = g_fn;
  cr_assert_eq(fea_problem_create_poisson(s->space, &pd, &s->pb), FEA_SUCCESS);
  cr_assert_eq(fea_matrix_create_pattern(s->pb, &s->A), FEA_SUCCESS);
  s->b = calloc((size_t)s->pb->num_free + 1, sizeof *s->b);
}

static void unmake(setup *s) {
  free(s->b);
  fea_matrix_destroy(&s->A);
  fea_problem_destroy(&s->pb);
  fea_space_destroy(&s->space);
  fea_mesh_destroy(&s->mesh);
  fea_context_destroy(&s->ctx);
}

static fea_conc_config config(int threads) {
  fea_conc_config c = {
      .threads = threads, .lock_stripe = 8, .tsx_batch = 8, .tsx_retries = 8, .backoff = 1};
  return c;
}

/* SERIAL over the first count elements of `order` (all elements in their
 * own order when order is NULL) into a fresh target: values then b. */
static double *serial_over(setup *s, const fea_index *order, fea_index count) {
  fea_index *edofs = NULL;
  cr_assert_eq(fea_element_dof_table(s->space, &edofs), FEA_SUCCESS);
  fea_conc_job *job = calloc(1, sizeof *job);
  fea_conc_job_init(job, s->pb, edofs);
  if (order) job->ne = count;
  job->row_ptr = s->A->row_ptr;
  job->col_idx = s->A->col_idx;
  job->rhs_offset = s->A->nnz;
  job->target_len = s->A->nnz + s->pb->num_free;
  job->target = calloc((size_t)job->target_len, sizeof(double));
  job->order = order;
  job->cfg = config(1);
  fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
  cr_assert_eq(fea_conc_run(job, FEA_UPDATE_SERIAL, &st), FEA_SUCCESS);
  double *t = job->target;
  free(job);
  free(edofs);
  return t;
}

static double *serial_in_order(setup *s, const fea_index *order) {
  return serial_over(s, order, s->space->num_elements);
}

static void expect_bitwise(const setup *s, const double *t, const char *what) {
  cr_assert(memcmp(t, s->A->values, (size_t)s->A->nnz * sizeof(double)) == 0, "%s: A differs",
            what);
  cr_assert(memcmp(t + s->A->nnz, s->b, (size_t)s->pb->num_free * sizeof(double)) == 0,
            "%s: b differs", what);
}

Test(concurrency, coloring_is_serial_in_color_order_bit_for_bit) {
  static const int cases[][4] = {
      {0, 2, 1, 6}, {0, 2, 3, 3}, {0, 3, 2, 2}, {1, 2, 3, 4}, {1, 3, 2, 2}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    setup s;
    make(&s, cases[c][0], cases[c][1], cases[c][2], cases[c][3]);
    fea_index *order = NULL, *start = NULL;
    int nc = 0;
    cr_assert_eq(fea_conc_color_order(s.space, &order, &start, &nc), FEA_SUCCESS);
    /* the coloring the strategy uses passes the validator */
    fea_index *colors = malloc((size_t)s.space->num_elements * sizeof *colors);
    for (int k = 0; k < nc; k++)
      for (fea_index i = start[k]; i < start[k + 1]; i++) colors[order[i]] = k;
    cr_assert_eq(start[nc], s.space->num_elements);
    cr_assert_eq(fea_space_check_coloring(s.space, colors), FEA_SUCCESS, "%s",
                 fea_context_last_error(s.ctx));
    double *want = serial_in_order(&s, order);
    for (int threads = 1; threads <= 4; threads++) {
      fea_conc_config cfg = config(threads);
      fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
      cr_assert_eq(fea_conc_assemble_csr(s.pb, s.A, s.b, FEA_UPDATE_COLORING, &cfg, &st),
                   FEA_SUCCESS);
      cr_expect_eq(st.colors, nc);
      expect_bitwise(&s, want, "coloring");
    }
    free(want);
    free(colors);
    free(order);
    free(start);
    unmake(&s);
  }
}

/* SERIAL over elements [lo, hi) into a fresh target. */
static double *serial_block(setup *s, fea_index lo, fea_index hi) {
  fea_index *order = malloc((size_t)(hi - lo + 1) * sizeof *order);
  for (fea_index e = lo; e < hi; e++) order[e - lo] = e;
  double *t = serial_over(s, order, hi - lo);
  free(order);
  return t;
}

/* PRIVATE_COPIES is, bit for bit, the sum in thread order of the serial
 * assemblies of each thread's contiguous block of elements. */
Test(concurrency, private_copies_are_the_blocks_summed_in_thread_order) {
  static const int cases[][4] = {{0, 2, 1, 6}, {0, 3, 2, 2}, {1, 2, 3, 4}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    setup s;
    make(&s, cases[c][0], cases[c][1], cases[c][2], cases[c][3]);
    const fea_index ne = s.space->num_elements, len = s.A->nnz + s.pb->num_free;
    for (int threads = 1; threads <= 4; threads++) {
      double *want = calloc((size_t)len, sizeof *want);
      for (int t = 0; t < threads; t++) {
        double *blk = serial_block(&s, ne * t / threads, ne * (t + 1) / threads);
        for (fea_index i = 0; i < len; i++) want[i] += blk[i];
        free(blk);
      }
      fea_conc_config cfg = config(threads);
      fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
      cr_assert_eq(fea_conc_assemble_csr(s.pb, s.A, s.b, FEA_UPDATE_PRIVATE_COPIES, &cfg, &st),
                   FEA_SUCCESS, "%s", fea_context_last_error(s.ctx));
      cr_assert_eq(st.strategy_run, FEA_UPDATE_PRIVATE_COPIES);
      cr_assert_eq(st.elements_recomputed, 0);
      char what[64];
      snprintf(what, sizeof what, "private copies, case %zu, %d threads", c, threads);
      expect_bitwise(&s, want, what);
      free(want);
    }
    unmake(&s);
  }
}

/* The copies are checked against the context's memory limit before any is
 * made, and a refusal names them. */
Test(concurrency, private_copies_respect_the_memory_limit) {
  setup s;
  make(&s, 0, 3, 2, 3);
  /* room for the element-DoF table (13 KB), not for the copies (~1 MB) */
  cr_assert_eq(fea_context_set_memory_limit(s.ctx, 65536), FEA_SUCCESS);
  fea_conc_config cfg = config(4);
  cr_assert_eq(fea_conc_assemble_csr(s.pb, s.A, s.b, FEA_UPDATE_PRIVATE_COPIES, &cfg, NULL),
               FEA_ERR_OUT_OF_MEMORY);
  cr_expect(strstr(fea_context_last_error(s.ctx), "PRIVATE_COPIES' 3 copies") != NULL, "%s",
            fea_context_last_error(s.ctx));
  unmake(&s);
}

/* AUTO takes the copies where ownership would recompute a fifth of the
 * elements (two blocks of a 3 x 4 x 5 Q2 mesh) and two threads' copies move
 * fewer bytes than the updates; not when the copies do not fit a quarter of
 * the memory budget. */
Test(concurrency, auto_picks_private_copies_by_cost) {
  if (omp_get_num_procs() < 2) cr_skip_test("one processor: AUTO picks CAS for 2 threads");
  setup s;
  make(&s, 0, 3, 2, 3);
  fea_conc_config cfg = config(2);
  fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
  cr_assert_eq(fea_conc_assemble_csr(s.pb, s.A, s.b, FEA_UPDATE_AUTO, &cfg, &st), FEA_SUCCESS);
  cr_expect_eq(st.strategy_run, FEA_UPDATE_PRIVATE_COPIES, "ran %s",
               fea_update_strategy_name(st.strategy_run));
  cr_assert_eq(fea_context_set_memory_limit(s.ctx, 65536), FEA_SUCCESS);
  st = (fea_assembly_stats)FEA_ASSEMBLY_STATS_INIT;
  cr_assert_eq(fea_conc_assemble_csr(s.pb, s.A, s.b, FEA_UPDATE_AUTO, &cfg, &st), FEA_SUCCESS, "%s",
               fea_context_last_error(s.ctx));
  cr_expect_neq(st.strategy_run, FEA_UPDATE_PRIVATE_COPIES);
  unmake(&s);
}

Test(concurrency, private_buffers_are_the_reference_bit_for_bit) {
  setup s;
  make(&s, 0, 3, 2, 3);
  double *want = serial_in_order(&s, NULL);
  fea_matrix *R = NULL;
  double *bref = calloc((size_t)s.pb->num_free, sizeof *bref);
  cr_assert_eq(fea_problem_assemble_reference(s.pb, bref, &R), FEA_SUCCESS);
  cr_assert(memcmp(want, R->values, (size_t)R->nnz * sizeof(double)) == 0, "SERIAL != reference");
  for (int threads = 1; threads <= 7; threads++) {
    fea_conc_config cfg = config(threads);
    fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
    cr_assert_eq(fea_conc_assemble_csr(s.pb, s.A, s.b, FEA_UPDATE_PRIVATE_BUFFERS, &cfg, &st),
                 FEA_SUCCESS);
    expect_bitwise(&s, want, "private buffers");
    /* on a 3 x 4 x 5 grid cut into slabs, each block boundary costs at most
     * a layer of elements */
    cr_expect(st.elements_recomputed <= (uint64_t)(threads - 1) * 3 * 4 * 2,
              "%d threads: %llu elements integrated twice", threads,
              (unsigned long long)st.elements_recomputed);
    cr_expect(threads > 1 || st.elements_recomputed == 0);
  }
  free(bref);
  fea_matrix_destroy(&R);
  free(want);
  unmake(&s);
}

Test(concurrency, tsx_forced_aborts_take_the_fallback_without_xbegin) {
  setup s;
  make(&s, 0, 2, 2, 4);
  double *want = serial_in_order(&s, NULL);
  for (int threads = 1; threads <= 4; threads *= 2) {
    fea_conc_config cfg = config(threads);
    cfg.tsx_force_abort = 1;
    cfg.tsx_batch = 4;
    cfg.tsx_retries = 2;
    fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
    cr_assert_eq(fea_conc_assemble_csr(s.pb, s.A, s.b, FEA_UPDATE_TSX, &cfg, &st), FEA_SUCCESS);
    cr_expect_eq(st.tx_committed, 0);
    cr_expect_eq(st.tx_started, 2 * st.tx_fallback);
    cr_expect_eq(st.aborts_conflict, st.tx_started);
    cr_expect_eq(st.aborts_capacity + st.aborts_explicit + st.aborts_other, 0);
    cr_expect(st.tx_fallback >= (st.updates + 3) / 4);
    if (threads == 1) expect_bitwise(&s, want, "TSX fallback, 1 thread");
  }
  /* without the hook, TSX runs exactly where CPUID says RTM works */
  char why[256];
  int usable = fea_tsx_cpu_usable(why, sizeof why);
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[4096];
    int rtm = 0;
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "flags", 5) == 0) {
        rtm = strstr(line, " rtm") != NULL;
        break;
      }
    fclose(f);
    cr_expect_eq(usable, rtm, "CPUID says %d (%s), /proc/cpuinfo says %d", usable, why, rtm);
  }
  fea_conc_config cfg = config(2);
  fea_status st = fea_conc_assemble_csr(s.pb, s.A, s.b, FEA_UPDATE_TSX, &cfg, NULL);
  cr_expect_eq(st, usable ? FEA_SUCCESS : FEA_ERR_UNSUPPORTED);
  free(want);
  unmake(&s);
}

Test(concurrency, artificial_work_and_constant_element_leave_the_sum) {
  setup s;
  make(&s, 0, 2, 1, 8);
  double *want = serial_in_order(&s, NULL);
  fea_conc_config cfg = config(2);
  cfg.work_flops = 1000;
  cr_assert_eq(fea_conc_assemble_csr(s.pb, s.A, s.b, FEA_UPDATE_PRIVATE_BUFFERS, &cfg, NULL),
               FEA_SUCCESS);
  expect_bitwise(&s, want, "1000 extra flops");
  /* The uniform mesh's one element system for all: the same matrix. */
  double Ke[16], fe[4];
  cr_assert_eq(fea_problem_element_system(s.pb, 0, Ke, fe), FEA_SUCCESS);
  cfg.const_Ke = Ke;
  cfg.const_fe = fe;
  fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
  cr_assert_eq(fea_conc_assemble_csr(s.pb, s.A, s.b, FEA_UPDATE_ATOMIC_CAS, &cfg, &st),
               FEA_SUCCESS);
  for (fea_index k = 0; k < s.A->nnz; k++)
    cr_assert(fabs(s.A->values[k] - want[k]) <= 1e-13, "entry %lld", (long long)k);
  free(want);
  unmake(&s);
}

/* The ownership plan against one made here element by element: a row's
 * owner is the block of the first element touching it, last[b] the last
 * element touching a row of b, and each element's flag as conc.h defines
 * it. Up to 64 blocks, a thread each: more threads than cores, preempted
 * in the middle of a pass, so that blocks next to each other mark rows at
 * the same moment and the settling pass has rows to lower now and then;
 * built many times over. */
Test(concurrency, ownership_plan_is_the_first_toucher_for_any_block_count) {
  setup s;
  make(&s, 0, 3, 2, 5);
  fea_index *edofs = NULL;
  cr_assert_eq(fea_element_dof_table(s.space, &edofs), FEA_SUCCESS);
  fea_conc_job job;
  memset(&job, 0, sizeof job);
  fea_conc_job_init(&job, s.pb, edofs);
  const fea_index ne = job.ne, nf = s.pb->num_free;
  const int nb = job.nb;
  int *owner = malloc((size_t)nf * sizeof *owner);
  for (int blocks = 1; blocks <= 64; blocks = blocks < 4 ? blocks + 1 : blocks * 4) {
    fea_index last[64];
    for (fea_index r = 0; r < nf; r++) owner[r] = -1;
    for (int b = 0; b < blocks; b++) last[b] = ne * b / blocks - 1;
    for (fea_index e = 0, b = 0; e < ne; e++) {
      while (b + 1 < blocks && e >= ne * (b + 1) / blocks) b++;
      for (int i = 0; i < nb; i++) {
        const fea_index r = s.pb->free_index[edofs[e * nb + i]];
        if (r < 0) continue;
        if (owner[r] < 0) owner[r] = (int)b;
        last[owner[r]] = e;
      }
    }
    for (int round = 0; round < 60; round++) {
      fea_conc_plan plan;
      cr_assert_eq(fea_conc_plan_build(&job, FEA_UPDATE_PRIVATE_BUFFERS, blocks, &plan),
                   FEA_SUCCESS);
      cr_assert_eq(plan.blocks, blocks);
      cr_assert(memcmp(plan.owner, owner, (size_t)nf * sizeof *owner) == 0,
                "%d blocks: the owners differ", blocks);
      for (int b = 0; b < blocks; b++)
        cr_assert_eq(plan.last[b], last[b], "%d blocks: last[%d] %lld, not %lld", blocks, b,
                     (long long)plan.last[b], (long long)last[b]);
      for (fea_index e = 0; e < ne; e++) {
        int b = -1, dir = 0;
        for (int i = 0; i < nb; i++) {
          const fea_index r = s.pb->free_index[edofs[e * nb + i]];
          if (r < 0)
            dir = 1;
          else
            b = b == -1 || b == owner[r] ? owner[r] : -2;
        }
        const int want = b < 0 ? -1 : dir ? -(b + 2) : b;
        cr_assert_eq(plan.elem_block[e], want, "%d blocks: element %lld flag %d, not %d", blocks,
                     (long long)e, plan.elem_block[e], want);
      }
      fea_conc_plan_free(&plan);
    }
  }
  free(owner);
  free(edofs);
  unmake(&s);
}

Test(concurrency, auto_picks_serial_for_one_thread_and_never_tsx) {
  setup s;
  make(&s, 0, 2, 1, 40);
  for (int threads = 1; threads <= 64; threads *= 2) {
    fea_conc_config cfg = config(threads);
    fea_assembly_stats st = FEA_ASSEMBLY_STATS_INIT;
    cr_assert_eq(fea_conc_assemble_csr(s.pb, s.A, s.b, FEA_UPDATE_AUTO, &cfg, &st), FEA_SUCCESS);
    cr_expect_neq(st.strategy_run, FEA_UPDATE_TSX);
    cr_expect(threads > 1 || st.strategy_run == FEA_UPDATE_SERIAL);
  }
  unmake(&s);
}

Test(concurrency, strategy_table_is_complete) {
  for (int k = FEA_UPDATE_SERIAL; k <= FEA_UPDATE_PRIVATE_COPIES; k++) {
    if (k == FEA_UPDATE_AUTO) continue;
    const struct fea_update_ops *ops = fea_update_ops_get((fea_update_strategy)k);
    cr_assert_not_null(ops);
    cr_expect_eq(ops->strategy, (fea_update_strategy)k);
    cr_expect_str_eq(ops->name, fea_update_strategy_name((fea_update_strategy)k));
  }
  cr_expect_null(fea_update_ops_get(FEA_UPDATE_AUTO));
  cr_expect_null(fea_update_ops_get((fea_update_strategy)99));
}
