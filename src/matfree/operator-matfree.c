/* The matrix-free operator: y = R (sum_e P_e K_e P_e^T) E x, where E embeds
 * the free vector into a full-DoF vector with the Dirichlet entries zero (so
 * the eliminated columns drop out) and R restricts to the free rows.
 *
 * The element loop is the one of the concurrency strategies
 * (src/concurrency): this file supplies the per-element work, which hands
 * batches of elements to the kernel (element-matrix or sum-factorization,
 * matfree-kernel.h) and lists y_e's updates of the full-DoF output. Only free DoFs
 * are listed: Dirichlet rows are dropped by R anyway, and listing them would
 * cost updates (and, for PRIVATE_BUFFERS, owners) for nothing.
 *
 * Strategies whose updates need no protection (SERIAL, COLORING,
 * PRIVATE_BUFFERS: w->direct, conc.h) get no lists: each kernel batch's y_e
 * is added straight into the output right after the kernel, in the batch's
 * element order (the rows the worker owns only), which is the order the
 * lists would have been applied in, so the sums are the same bit for bit.
 * Kernels that offer apply_add (sum factorization) do that add themselves,
 * from their SIMD lanes, into the rows this file tells them per pass (a
 * write map, fea_matfree_target): which elements have every DoF free and
 * written by the pass, in runs, so that those need no test per DoF, and a
 * row filter (PRIVATE_BUFFERS' owners) for the others. The kernel knows
 * nothing of blocks or strategies.
 *
 * Systems (ncomp > 1): the DoFs are the space's vector DoFs, and an
 * element's are its nb ncomp vector DoFs (vector_dof_table): everything
 * below sees them as it sees a scalar element's.
 *
 * The embedding and the restriction copy runs: free DoFs come in runs of
 * consecutive DoFs with consecutive rows (lines of the mesh between
 * boundary DoFs), found once at creation. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/blas.h"
#include "assembly/conc.h"
#include "base/context.h"
#include "internal/error.h"
#include "operator.h"
#include "internal/operator-device.h"
#include "disc/pattern.h"
#include "base/memory-limit.h"
#include "base/thread-budget.h"

#define MATFREE_MAX_BATCH 256

typedef struct matfree_op {
  const fea_matfree_kernel_ops *k;
  void *ks; /* kernel state */
  int batch, nb;
  fea_index ne, ndofs, nf;
  const fea_index *edofs; /* ne x nb: the space's (element_dof_table) or edofs_own */
  fea_index *edofs_own;
  double *x_full, *y_full; /* ndofs each: the gather source and the scatter target */
  fea_index nruns;
  fea_index *run_row; /* nruns + 1: first free row of each run, then nf */
  fea_index *run_dof; /* nruns: its first DoF */
  /* apply_add's write maps (fea_matfree_target.write), one per pass: pass
   * b covers the elements wmap_first[b] .. wmap_end[b] - 1 that it visits
   * (PRIVATE_BUFFERS: block b's; else one pass, every element). NULL: no
   * apply_add. */
  int npass;
  unsigned char **wmap;
  fea_index *wmap_first, *wmap_end;
  int free_rows;      /* apply_add on the reduced vectors (no embedding) */
  const double *x_in; /* free_rows: this application's x and y */
  double *y_out;
  fea_conc_job *job;
  fea_conc_plan plan;
  fea_update_strategy strategy;
} matfree_op;

/* A thread's cache of one kernel batch: the strategies ask for elements one
 * at a time, the kernel prefers them by the batch. */
typedef struct matfree_worker {
  fea_index elems[MATFREE_MAX_BATCH];
  fea_index first; /* >= 0: the batch is first .. first + count - 1, not in elems */
  int count, cursor;
  int blk; /* direct updates: the pass (w->blk) of the batch */
  double *y, *scratch;
  int blas_prev;
} matfree_worker;

static int work_init(fea_conc_worker *w) {
  const matfree_op *m = w->job->work_arg;
  const size_t nb = (size_t)m->nb;
  matfree_worker *x = calloc(1, sizeof *x);
  if (x) {
    x->y = malloc(nb * (size_t)m->batch * sizeof *x->y);
    x->scratch = malloc(((size_t)m->k->scratch_doubles(m->ks) + 1) * sizeof *x->scratch);
    /* Every thread runs its own small GEMMs: OpenBLAS must not fork inside. */
    x->blas_prev = fea_blas_push_threads(1);
  }
  w->ext = x;
  w->idx = malloc(nb * sizeof *w->idx);
  w->row = malloc(nb * sizeof *w->row);
  w->val = malloc(nb * sizeof *w->val);
  if (!x || !x->y || !x->scratch || !w->idx || !w->row || !w->val) {
    fea_conc_fail(w->job,
                  FEA_ERROR(NULL, FEA_ERR_OUT_OF_MEMORY,
                            "no memory for a thread's batch of %d elements", m->batch),
                  -1);
    return 0;
  }
  return 1;
}

static void work_fini(fea_conc_worker *w) {
  matfree_worker *x = w->ext;
  if (!x) return;
  fea_blas_pop_threads(x->blas_prev);
  free(x->y);
  free(x->scratch);
  free(x);
}

/* Direct updates (w->direct): add the whole batch's y_e into the target,
 * element by element in the batch's order, the free rows this worker may
 * write only. */
static void scatter_batch(const matfree_op *m, fea_conc_worker *w, const matfree_worker *x) {
  const int nb = m->nb, blk = w->blk;
  const int *own = w->owner;
  const fea_index *fi = w->job->pb->free_index;
  double *t = w->job->target;
  uint64_t n = 0;
  for (int b = 0; b < x->count; b++) {
    const fea_index *ed = m->edofs + x->elems[b] * nb;
    const double *ye = x->y + (size_t)b * nb;
    for (int i = 0; i < nb; i++) {
      const fea_index r = fi[ed[i]];
      if (r < 0 || (own && own[r] != blk)) continue;
      t[ed[i]] += ye[i];
      n++;
    }
  }
  w->ctr->updates += n;
}

static inline fea_index batch_elem(const matfree_worker *x, int i) {
  return x->first >= 0 ? x->first + i : x->elems[i];
}

static int work_element(fea_conc_worker *w, const fea_index *seq, fea_index k, fea_index end) {
  const matfree_op *m = w->job->work_arg;
  matfree_worker *x = w->ext;
  const fea_index e = seq ? seq[k] : k;
  if (w->direct && x->blk != w->blk) { /* another pass: its batches start afresh */
    x->count = x->cursor = 0;
    x->blk = w->blk;
  }
  /* Direct loops skip what a batch served (w->served) or visit it in
   * order, so only the next element of the batch can be one already
   * served: no search (a batch has up to MATFREE_MAX_BATCH elements). */
  if (w->direct) {
    if (x->cursor < x->count && batch_elem(x, x->cursor) != e) x->cursor = x->count;
  } else {
    while (x->cursor < x->count && x->elems[x->cursor] != e) x->cursor++;
  }
  if (x->cursor == x->count) { /* not in the batch: start one here */
    const fea_index stop = end - k < m->batch ? end : k + m->batch;
    const int n = (int)(stop - k);
    const int add = w->direct && m->k->apply_add;
    /* apply_add takes consecutive elements as a range: at 3D Q1's ~30
     * cycles per element, writing the list cost 3 % of the apply. */
    x->first = add && !seq ? e : -1;
    if (x->first < 0) {
      x->elems[0] = e;
      if (seq)
        for (int j = 1; j < n; j++) x->elems[j] = seq[k + j];
      else
        for (int j = 1; j < n; j++) x->elems[j] = k + j;
    }
    x->count = n;
    x->cursor = 0;
    if (add) {
      const int pass = w->owner ? w->blk : 0;
      const fea_matfree_target tg = {.y = m->free_rows ? m->y_out : w->job->target,
                                     .row = w->job->pb->free_index,
                                     .free_rows = m->free_rows,
                                     .first = x->first,
                                     .write = m->wmap ? m->wmap[pass] : NULL,
                                     .write_first = m->wmap ? m->wmap_first[pass] : 0,
                                     .write_end = m->wmap ? m->wmap_end[pass] : 0,
                                     .keep = w->owner,
                                     .keep_key = w->blk,
                                     .updates = &w->ctr->updates};
      m->k->apply_add(m->ks, x->first >= 0 ? NULL : x->elems, n, m->free_rows ? m->x_in : m->x_full,
                      &tg, x->scratch);
    } else {
      m->k->apply(m->ks, x->elems, n, m->x_full, x->y, x->scratch);
      if (w->direct) scatter_batch(m, w, x);
    }
  }
  if (w->direct) {        /* added with its batch */
    if (x->cursor == 0) { /* the batch starts here: the loop may skip the rest */
      w->served = x->count - 1;
      w->ctr->elements += (uint64_t)x->count;
    }
    x->cursor++;
    w->n = 0;
    return 1;
  }
  w->ctr->elements++;
  const int nb = m->nb;
  const fea_index *ed = m->edofs + e * nb;
  const fea_index *fi = w->job->pb->free_index;
  const double *ye = x->y + (size_t)x->cursor * nb;
  int n = 0;
  for (int i = 0; i < nb; i++) {
    fea_index r = fi[ed[i]];
    if (r < 0) continue;
    w->idx[n] = ed[i];
    w->row[n] = r;
    w->val[n++] = ye[i];
  }
  x->cursor++;
  w->n = n;
  w->ctr->updates += (uint64_t)n;
  return 1;
}

static const fea_conc_work matfree_work = {work_init, work_fini, work_element};

static fea_status matfree_apply(fea_operator *op, const double *x, double *y, int add) {
  matfree_op *m = op->data;
  const fea_index nf = m->nf;
  /* The threads the load leaves cores for (thread-budget.h): the
   * strategies deal their blocks or colors over whatever team they get, so
   * y does not depend on it. */
  const int budget = fea_thread_budget(op->ctx);
  const int T = budget < m->job->cfg.threads ? budget : m->job->cfg.threads;
  m->job->team = T;
  if (m->free_rows) { /* the kernel reads x and adds into y themselves */
    if (!add) {
#pragma omp parallel for schedule(static) num_threads(T)
      for (fea_index r = 0; r < nf; r++) y[r] = 0.0;
    }
    m->x_in = x;
    m->y_out = y;
    fea_blas_use_threads(1);
    fea_assembly_stats st_run = FEA_ASSEMBLY_STATS_INIT;
    atomic_init(&m->job->sync, 0u);
    fea_status st = fea_conc_run(m->job, m->strategy, &st_run);
    m->x_in = NULL;
    m->y_out = NULL;
    return st;
  }
  /* Embed (Dirichlet entries of x_full stay zero from creation) and clear
   * the free entries of the target, run by run, in parallel: first touch by
   * threads. */
  const fea_index nr = m->nruns;
#pragma omp parallel for schedule(static) num_threads(T)
  for (fea_index k = 0; k < nr; k++) {
    const fea_index r0 = m->run_row[k], len = m->run_row[k + 1] - r0;
    memcpy(m->x_full + m->run_dof[k], x + r0, (size_t)len * sizeof *x);
    memset(m->y_full + m->run_dof[k], 0, (size_t)len * sizeof *x);
  }
  fea_blas_use_threads(1);
  fea_assembly_stats st_run = FEA_ASSEMBLY_STATS_INIT;
  atomic_init(&m->job->sync, 0u);
  FEA_CALL(fea_conc_run(m->job, m->strategy, &st_run));
#pragma omp parallel for schedule(static) num_threads(T)
  for (fea_index k = 0; k < nr; k++) {
    const fea_index r0 = m->run_row[k], len = m->run_row[k + 1] - r0;
    const double *src = m->y_full + m->run_dof[k];
    double *dst = y + r0;
    if (add)
      for (fea_index i = 0; i < len; i++) dst[i] += src[i];
    else
      memcpy(dst, src, (size_t)len * sizeof *dst);
  }
  (void)nf;
  return FEA_SUCCESS;
}

static fea_status matfree_diagonal(const fea_operator *op, double *d) {
  const matfree_op *m = op->data;
  const int nb = m->nb, B = m->batch;
  const fea_index *fi = op->problem->free_index;
  double *de = malloc((size_t)nb * (size_t)B * sizeof *de);
  double *sc = malloc(((size_t)m->k->scratch_doubles(m->ks) + 1) * sizeof *sc);
  if (!de || !sc) {
    free(de);
    free(sc);
    return FEA_ERROR(op->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a batch of diagonals");
  }
  memset(d, 0, (size_t)m->nf * sizeof *d);
  fea_index elems[MATFREE_MAX_BATCH];
  /* Serial, in element order: once per solve, and deterministic. */
  for (fea_index e0 = 0; e0 < m->ne; e0 += B) {
    int n = m->ne - e0 < B ? (int)(m->ne - e0) : B;
    for (int k = 0; k < n; k++) elems[k] = e0 + k;
    m->k->diagonal(m->ks, elems, n, de, sc);
    for (int k = 0; k < n; k++) {
      const fea_index *ed = m->edofs + (e0 + k) * nb;
      for (int i = 0; i < nb; i++)
        if (fi[ed[i]] >= 0) d[fi[ed[i]]] += de[k * nb + i];
    }
  }
  free(de);
  free(sc);
  return FEA_SUCCESS;
}

static void matfree_destroy(void *data) {
  matfree_op *m = data;
  if (!m) return;
  if (m->ks) m->k->destroy(m->ks);
  fea_conc_plan_free(&m->plan);
  free(m->job);
  free(m->edofs_own);
  free(m->run_row);
  free(m->run_dof);
  for (int b = 0; b < m->npass && m->wmap; b++) free(m->wmap[b]);
  free(m->wmap);
  free(m->wmap_first);
  free(m->wmap_end);
  free(m->x_full);
  free(m->y_full);
  free(m);
}

static const fea_operator_impl matfree_impl = {.apply = matfree_apply,
                                               .diagonal = matfree_diagonal,
                                               .destroy = matfree_destroy};

fea_status fea_operator_matfree_kernel_state(const fea_operator *op,
                                             const fea_matfree_kernel_ops **k, const void **state) {
  FEA_CHECK(op->impl == &matfree_impl, op->ctx, FEA_ERR_STATE, "the operator is not matrix-free");
  const matfree_op *m = op->data;
  *k = m->k;
  *state = m->ks;
  return FEA_SUCCESS;
}

/* The strategy (AUTO's pick), its availability and its plan. */
static fea_status pick_strategy(fea_operator *op, matfree_op *m, fea_update_strategy s) {
  fea_conc_job *job = m->job;
  m->plan.strategy = FEA_UPDATE_AUTO;
  if (s == FEA_UPDATE_AUTO) s = fea_conc_auto_pick(job, job->cfg.threads, &m->plan);
  const struct fea_update_ops *ops = fea_update_ops_get(s);
  FEA_CHECK(ops, op->ctx, FEA_ERR_INVALID_ARG, "unknown update strategy %d", (int)s);
  char why[256] = "";
  FEA_CHECK(!ops->available || ops->available(&job->cfg, why, sizeof why), op->ctx,
            FEA_ERR_UNSUPPORTED, "the %s strategy cannot run here: %s", ops->name, why);
  if (m->plan.strategy != s) FEA_CALL(fea_conc_plan_build(job, s, job->cfg.threads, &m->plan));
  job->plan = &m->plan;
  m->strategy = s;
  return FEA_SUCCESS;
}

/* Runs of free rows r0..r1 whose DoFs are consecutive too: as the rows
 * are numbered in DoF order (problem.h), the runs of free DoFs. */
static fea_status build_runs(fea_operator *op, matfree_op *m) {
  const fea_index *fi = op->problem->free_index;
  fea_index nr = 0;
  for (fea_index d = 0; d < m->ndofs; d++) nr += fi[d] >= 0 && (d == 0 || fi[d - 1] < 0);
  m->run_row = malloc(((size_t)nr + 1) * sizeof *m->run_row);
  m->run_dof = malloc(((size_t)nr + 1) * sizeof *m->run_dof);
  FEA_CHECK(m->run_row && m->run_dof, op->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for %lld runs of free DoFs", (long long)nr);
  fea_index k = 0;
  for (fea_index d = 0; d < m->ndofs; d++)
    if (fi[d] >= 0 && (d == 0 || fi[d - 1] < 0)) {
      m->run_row[k] = fi[d];
      m->run_dof[k++] = d;
    }
  m->run_row[nr] = m->nf;
  m->nruns = nr;
  return FEA_SUCCESS;
}

/* Pass b's write map over its elements lo .. hi - 1 (fea_matfree_target),
 * from each element's flag (fea_conc_plan.elem_block's values: the pass key
 * where every DoF is a free row of that pass, -(key + 2) where its free
 * rows all are but a DoF is Dirichlet, else -1). Runs are counted
 * backwards, so that a kernel tells W lanes of the pass's own from one
 * byte instead of W flags (two blocks, Q1 with fused line batches: 3D
 * 1.09x, 2D 1.29x). */
static void fill_write_map(const int *flag, int key, fea_index lo, fea_index hi,
                           unsigned char *map) {
  int run = 0;
  for (fea_index e = hi - 1; e >= lo; e--) {
    const int f = flag[e];
    run = f == key ? (run < FEA_MATFREE_RUN_MAX ? run + 1 : FEA_MATFREE_RUN_MAX) : 0;
    map[e - lo] = (unsigned char)(f == key ? run : f == -(key + 2) ? FEA_MATFREE_WRITE_ROWS : 0);
  }
}

/* For kernels with apply_add under a strategy with direct updates, the
 * write map of each pass: PRIVATE_BUFFERS has one pass per block over the
 * elements the block visits (its plan's first .. last), its rows filtered
 * by the owners; SERIAL and COLORING one pass over all elements, all free
 * rows written. The per-element flags are the plan's elem_block (made in
 * its last pass over the rows) or, without owners, computed here; they are
 * not kept. */
static fea_status build_write_maps(fea_operator *op, matfree_op *m) {
  const fea_update_strategy s = m->strategy;
  if (!m->k->apply_add ||
      (s != FEA_UPDATE_SERIAL && s != FEA_UPDATE_COLORING && s != FEA_UPDATE_PRIVATE_BUFFERS))
    return FEA_SUCCESS;
  const int T = op->ctx->nthreads > 1 ? op->ctx->nthreads : 1;
  const int owned = s == FEA_UPDATE_PRIVATE_BUFFERS;
  int *flag = owned ? m->plan.elem_block : malloc(((size_t)m->ne + 1) * sizeof *flag);
  FEA_CHECK(flag, op->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld element flags",
            (long long)m->ne);
  if (!owned) {
    const fea_index *fi = op->problem->free_index;
#pragma omp parallel for num_threads(T) schedule(static) if (T > 1)
    for (fea_index e = 0; e < m->ne; e++) {
      const fea_index *ed = m->edofs + e * m->nb;
      int nfree = 0;
      for (int i = 0; i < m->nb; i++) nfree += fi[ed[i]] >= 0;
      /* The one pass is 0: -(0 + 2) with a Dirichlet DoF, -1 without free rows. */
      flag[e] = nfree == m->nb ? 0 : nfree ? -2 : -1;
    }
  }
  m->npass = owned ? m->plan.blocks : 1;
  m->wmap = calloc((size_t)m->npass, sizeof *m->wmap);
  m->wmap_first = malloc((size_t)m->npass * sizeof *m->wmap_first);
  m->wmap_end = malloc((size_t)m->npass * sizeof *m->wmap_end);
  int ok = m->wmap && m->wmap_first && m->wmap_end;
  for (int b = 0; ok && b < m->npass; b++) {
    m->wmap_first[b] = owned ? m->plan.first[b] : 0;
    m->wmap_end[b] = owned ? m->plan.last[b] + 1 : m->ne;
    if (m->wmap_end[b] < m->wmap_first[b]) m->wmap_end[b] = m->wmap_first[b];
    m->wmap[b] = malloc((size_t)(m->wmap_end[b] - m->wmap_first[b]) + 1);
    ok = m->wmap[b] != NULL;
  }
  if (ok) {
#pragma omp parallel for num_threads(T) schedule(dynamic, 1) if (T > 1 && m->npass > 1)
    for (int b = 0; b < m->npass; b++)
      fill_write_map(flag, b, m->wmap_first[b], m->wmap_end[b], m->wmap[b]);
  }
  if (owned) {
    m->plan.elem_block = NULL;
  }
  free(flag);
  FEA_CHECK(ok, op->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the write maps of %d passes",
            m->npass);
  return FEA_SUCCESS;
}

/* Systems: the ne x (nb ncomp) table of the elements' vector DoFs, which the
 * loop, the strategies' plans and the write maps see as the element's DoFs
 * (the colorings stay the scalar space's: two elements share a vector DoF
 * exactly when they share a basis function). */
static fea_status vector_dof_table(fea_operator *op, matfree_op *m) {
  const fea_space *sp = op->problem->space;
  const size_t nb = (size_t)m->nb;
  char what[96];
  snprintf(what, sizeof what, "the vector DoF table of %lld elements", (long long)m->ne);
  FEA_CALL(fea_memory_require(op->ctx, 0, fea_bytes((double)m->ne * (double)nb, sizeof(fea_index)),
                              what));
  m->edofs_own = malloc(((size_t)m->ne * nb + 1) * sizeof *m->edofs_own);
  FEA_CHECK(m->edofs_own, op->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the vector DoFs of %lld elements (%d each)", (long long)m->ne, m->nb);
  for (fea_index e = 0; e < m->ne; e++) fea_space_element_vdofs(sp, e, m->edofs_own + e * nb);
  return FEA_SUCCESS;
}

static fea_status matfree_setup(fea_operator *op, matfree_op *m, fea_update_strategy s) {
  const fea_problem *pb = op->problem;
  const fea_space *sp = pb->space;
  m->nb = fea_space_element_size(sp);
  m->ne = sp->num_elements;
  m->ndofs = fea_space_total_dofs(sp);
  m->nf = pb->num_free;
  if (sp->ncomp > 1) { /* systems: the vector DoFs, interleaved (space.h) */
    FEA_CALL(vector_dof_table(op, m));
    m->edofs = m->edofs_own;
  } else if (sp->element_dof_table) { /* the space's own, not a copy (2D Q1, 1M elements: 32 MB) */
    m->edofs = sp->element_dof_table;
  } else {
    FEA_CALL(fea_element_dof_table(sp, &m->edofs_own));
    m->edofs = m->edofs_own;
  }
  m->x_full = calloc((size_t)m->ndofs + 1, sizeof *m->x_full);
  m->y_full = calloc((size_t)m->ndofs + 1, sizeof *m->y_full);
  m->job = calloc(1, sizeof *m->job);
  FEA_CHECK(m->x_full && m->y_full && m->job, op->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the gather and scatter vectors of %lld DoFs", (long long)m->ndofs);
  FEA_CALL(build_runs(op, m));
  FEA_CALL(m->k->create(pb, m->edofs, &m->ks));
  m->batch = m->k->batch(m->ks);
  if (m->batch < 1) m->batch = 1;
  if (m->batch > MATFREE_MAX_BATCH) m->batch = MATFREE_MAX_BATCH;
  fea_conc_job *job = m->job;
  fea_conc_job_init(job, pb, m->edofs);
  job->nb = m->nb; /* the vector DoFs of an element on systems (the job counts scalar ones) */
  job->target = m->y_full;
  job->target_len = m->ndofs;
  job->work = &matfree_work;
  job->work_arg = m;
  job->cfg.threads = op->ctx->nthreads > 0 ? op->ctx->nthreads : 1;
  job->cfg.lock_stripe = 8;
  job->cfg.tsx_batch = 8;
  job->cfg.tsx_retries = 8;
  job->cfg.backoff = 1;
  FEA_CALL(pick_strategy(op, m, s));
  FEA_CALL(build_write_maps(op, m));
  /* With the kernel adding its results itself, it works on the reduced
   * vectors directly: no embedding, no restriction. */
  m->free_rows = m->wmap != NULL;
  return FEA_SUCCESS;
}

/* Bytes of the write maps (one per element and pass that visits it). */
static uint64_t wmap_bytes(const matfree_op *m) {
  uint64_t n = 0;
  for (int b = 0; b < m->npass && m->wmap; b++) n += (uint64_t)(m->wmap_end[b] - m->wmap_first[b]);
  return n;
}

fea_status fea_operator_matfree_build(fea_operator *op, const fea_matfree_kernel_ops *kernel,
                                      fea_update_strategy strategy) {
  matfree_op *m = calloc(1, sizeof *m);
  FEA_CHECK(m, op->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the matrix-free operator");
  m->k = kernel;
  fea_status st = matfree_setup(op, m, strategy);
  if (st != FEA_SUCCESS) {
    matfree_destroy(m);
    return st;
  }
  op->impl = &matfree_impl;
  op->data = m;
  op->info.strategy_run = m->strategy;
  snprintf(op->info.kernel, sizeof op->info.kernel, "%s", kernel->describe(m->ks));
  double fe = 0.0, be = 0.0;
  kernel->cost(m->ks, &fe, &be);
  /* The kernel's per-element cost, plus the vectors: x and y of the free
   * DoFs, and the embedded copies read and written once each. */
  op->info.flops_per_apply = fe * (double)m->ne;
  op->info.bytes_per_apply = be * (double)m->ne + (double)m->nf * 2.0 * sizeof(double) +
                             (m->free_rows ? 0.0 : (double)m->ndofs * 4.0 * sizeof(double)) +
                             (double)wmap_bytes(m);
  op->info.memory_bytes = kernel->memory(m->ks) +
                          (m->edofs_own ? (uint64_t)m->ne * (uint64_t)m->nb * sizeof(fea_index)
                                        : 0) +
                          (uint64_t)(m->nruns + 1) * 2 * sizeof(fea_index) + wmap_bytes(m) +
                          (uint64_t)m->ndofs * 2 * sizeof(double) +
                          (m->plan.color_order ? (uint64_t)m->ne * sizeof(fea_index) : 0) +
                          (m->plan.owner ? (uint64_t)m->nf * sizeof(int) : 0);
  return FEA_SUCCESS;
}
