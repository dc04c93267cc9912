/* The prehandled Schur-complement solver behind the solver ops.
 *
 * Setup: the reference assembly of the nodal system A_h x = b (reduced:
 * interior nodes, lexicographic, which is the grid order of prehandle.h),
 * the explicit S and At = S^T A_h S, the partial Cholesky L of At, the C/E/I
 * split, and M1 in the working precision. Only A_h (for refinement and the
 * residual), the problem's load, L and M1 are kept: S, At and the split are
 * O(N) and rebuilt when needed. The condition-number diagnostics need A_h
 * and L only, not M1 (whose Pi inversion is the O(|E|^3) part of setup).
 *
 * Solve: b = L^-1 S^T b_h, x = M1^-1 b, x_h = S L^-T x, column by column
 * for the O(N) transforms and one batch for M1's GEMMs; or the
 * mixed-precision refinement of schur-m1.h around the same steps.
 *
 * A backend with an M1 of its own (its `m1` slot, prehandled-device.h)
 * names the host context the same setup runs on (hctx); its errors are
 * relayed to the solver's context. The set-up M1 then goes to the
 * backend's M1 and the host copy is dropped; solves run there entirely.
 * The condition diagnostics stay on the host. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "base/progress.h"
#include "internal/error.h"
#include "base/memory-limit.h"
#include "internal/prehandled-device.h"
#include "linalg/matrix.h"
#include "macro-mesh.h"
#include "prehandled.h"
#include "schur-m1.h"

typedef struct ph_solver {
  fea_prehandled_desc desc; /* complete */
  fea_ph_grid grid;
  fea_ph_macro *macro; /* a mesh of macro cells (grid.macro), or NULL */
  fea_matrix *A;       /* A_h over the interior nodes (last setup) */
  double *load;        /* the problem's reduced right-hand side (last setup) */
  fea_ph_factor *f;
  fea_ph_m1 *m1;                           /* host M1 (host contexts) */
  fea_context *hctx;                       /* the setup context a backend's own M1 names, or NULL */
  const struct fea_ph_m1_device_ops *dops; /* device contexts: the backend's M1 */
  fea_ph_m1_device *dev;                   /* device contexts: the set-up device M1 */
  fea_ph_m1_device_pinv *pinv_dev; /* during setup: Pi^-1 inverted on the device (pi_inverse) */
  fea_ph_m1_info info;
  double setup_s, solve_s, transform_s, dense_s, relres;
  int iterations;
} ph_solver;

static ph_solver *ph_of(const fea_solver *s) { return s->data; }

static void ph_reset(fea_solver *s) {
  ph_solver *p = ph_of(s);
  if (p->dev) p->dops->destroy(&p->dev);
  if (p->pinv_dev) p->dops->pi_release(&p->pinv_dev);
  fea_ph_m1_destroy(&p->m1);
  fea_ph_factor_destroy(&p->f);
  FEA_OBJECT_DROP(p->A);
  free(p->load);
  p->load = NULL;
  s->ready = 0;
}

static void ph_destroy(fea_solver *s) {
  ph_reset(s);
  fea_ph_macro_destroy(&ph_of(s)->macro);
  free(s->data);
  s->data = NULL;
}

static fea_index split_sizes(const fea_ph_grid *g, fea_index *nc, fea_index *ne, fea_index *blk) {
  if (g->macro) {
    *nc = g->macro->nc, *ne = g->macro->ne, *blk = g->macro->blk;
    return g->macro->ni;
  }
  const fea_index n = g->n, n0 = g->n0, r = g->r;
  *nc = (n0 - 1) * (n0 - 1);
  fea_index cells = g->element == FEA_PH_Q1 ? n0 * n0 : 2 * n0 * n0;
  *blk = g->element == FEA_PH_Q1 ? (r - 1) * (r - 1) : (r - 1) * (r - 2) / 2;
  fea_index ni = cells * *blk;
  *ne = (n - 1) * (n - 1) - *nc - ni;
  return ni;
}

double fea_ph_flops(const fea_ph_grid *g) {
  fea_index nc, ne, blk;
  fea_index ni = split_sizes(g, &nc, &ne, &blk);
  return 2.0 * (double)ne * (double)ne + 4.0 * (double)blk * (double)ni;
}

double fea_ph_model_flops(const fea_ph_grid *g) {
  if (g->macro) return 0; /* the paper's model is the unit square's */
  /* h0 = 2^l sqrt(h): l = log2(h0 / sqrt(h)) = log2(sqrt(n) / n0). */
  const double N = (double)g->num, l = log2(sqrt((double)g->n) / (double)g->n0);
  const double q = pow(4.0, l);
  const double c = g->element == FEA_PH_Q1 ? 8.0 / q + 4.0 * q : 18.0 / q + 2.0 * q;
  return c * pow(N, 1.5);
}

/* The FP64 setup's host peak: Lambda, its inverse and the working-precision
 * copy of Pi^-1 (only Lambda when the device inverts Pi), B twice, plus O(N)
 * sparse data (At, S, L's diagonal, the split). */
static uint64_t setup_bytes(const ph_solver *p) {
  fea_index nc, ne, blk;
  (void)split_sizes(&p->grid, &nc, &ne, &blk);
  const fea_precision pr = p->desc.precision;
  const size_t es = pr == FEA_F64 ? 8 : pr == FEA_F32 ? 4 : 2;
  const double e2 = (double)ne * (double)ne;
  const double pi_bytes = p->dops && p->dops->pi_inverse ? 8.0 : 16.0 + (double)es;
  double bytes = e2 * pi_bytes + (double)nc * (double)ne * (8.0 + (double)es) +
                 (double)nc * (double)nc * 8.0 +
                 (double)(p->macro ? p->macro->groups : 1) * (double)blk * (double)blk * 24.0 +
                 (double)p->grid.num * 400.0;
  return bytes >= 1.8e19 ? UINT64_MAX : (uint64_t)bytes;
}

/* The context the host setup runs on: the solver's own, or on a device
 * context the internal host one. */
static fea_context *host_ctx(const fea_solver *s) {
  const ph_solver *p = ph_of(s);
  return p->hctx ? p->hctx : s->ctx;
}

/* An error raised on the internal host context, raised again on the
 * solver's context (where the caller looks for it). */
static fea_status relay(fea_solver *s, fea_status st) {
  const ph_solver *p = ph_of(s);
  if (st >= 0 || !p->hctx) return st;
  char why[FEA_ERROR_LEN];
  snprintf(why, sizeof why, "%s", p->hctx->last_error);
  return FEA_ERROR(s->ctx, st, "host setup of the prehandled solver for '%s': %s",
                   s->ctx->backend->prefix, why);
}

/* S, At = S^T A S and the split of the grid, for setup and diagnostics (on
 * the host context; errors relayed). */
static fea_status transformed(fea_solver *s, const fea_matrix *A, fea_matrix **At,
                              fea_ph_split *split) {
  const ph_solver *p = ph_of(s);
  fea_context *hc = host_ctx(s);
  fea_matrix *S = NULL;
  FEA_CALL(relay(s, fea_ph_build_s(hc, &p->grid, &S)));
  fea_status st = fea_progress(s->ctx, FEA_PROGRESS_PH_PREPARE, 0.5);
  /* The products run on the host context: it reports the phase too, so
   * that their ticks (fea_ph_transform_matrix) reach the callback. */
  if (st >= 0) st = relay(s, fea_progress(hc, FEA_PROGRESS_PH_PREPARE, 0.5));
  if (st >= 0) st = relay(s, fea_ph_transform_matrix(hc, A, S, At));
  if (hc != s->ctx) hc->progress_phase = NULL; /* s->ctx goes on reporting */
  FEA_OBJECT_DROP(S);
  if (st < 0) return st;
  st = fea_progress(s->ctx, FEA_PROGRESS_PH_PREPARE, 0.7);
  if (st < 0) {
    FEA_OBJECT_DROP(*At);
    return st;
  }
  st = fea_ph_split_create(hc, &p->grid, split);
  if (st < 0) FEA_OBJECT_DROP(*At);
  return relay(s, st);
}

/* A_h, the load and L for the current problem: what setup and the
 * condition-number diagnostics share. Kept until the problem changes. */
static fea_status prepare(fea_solver *s, fea_matrix **At_out, fea_ph_split *split_out) {
  fea_context *ctx = s->ctx;
  ph_solver *p = ph_of(s);
  if (p->f) /* prepared earlier (a diagnostic): rebuild only what the caller wants */
    return At_out ? transformed(s, p->A, At_out, split_out) : FEA_SUCCESS;
  fea_matrix *At = NULL;
  fea_ph_split split = {0};
  p->load = malloc((size_t)(p->grid.num ? p->grid.num : 1) * sizeof *p->load);
  fea_status st = p->load ? FEA_SUCCESS
                          : FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld loads",
                                      (long long)p->grid.num);
  if (st >= 0) st = fea_problem_assemble_reference(s->problem, p->load, &p->A);
  if (st >= 0) st = fea_progress(ctx, FEA_PROGRESS_PH_PREPARE, 0.4);
  if (st >= 0) st = transformed(s, p->A, &At, &split);
  if (st >= 0) st = fea_progress(ctx, FEA_PROGRESS_PH_PREPARE, 0.8);
  if (st >= 0) st = relay(s, fea_ph_factor_create(host_ctx(s), &p->grid, At, &p->f));
  if (st >= 0 && At_out) { /* the caller's: S^T A S and the split are built once */
    *At_out = At;
    *split_out = split;
    return FEA_SUCCESS;
  }
  FEA_OBJECT_DROP(At);
  fea_ph_split_free(&split);
  if (st < 0) ph_reset(s);
  return st;
}

/* Pi's inversion on the device (fea_ph_m1_create_pi_elsewhere's hook): the
 * result waits in p->pinv_dev for to_device. */
static fea_status invert_pi_on_device(void *user, const double *pi, fea_index ne,
                                      fea_precision prec) {
  fea_solver *s = user;
  ph_solver *p = ph_of(s);
  fea_status st = p->dops->pi_inverse(s->ctx, pi, ne, prec, &p->pinv_dev);
  if (st < 0 && p->hctx) /* the setup runs on the host context: the message goes there too */
    return FEA_ERROR(p->hctx, st, "Pi^-1 on the device: %s", s->ctx->last_error);
  return st;
}

/* Hand the set-up host M1 (with L and A_h) to the device M1, then drop the
 * host copy: the device one serves every solve. */
static fea_status to_device(fea_solver *s) {
  ph_solver *p = ph_of(s);
  fea_ph_m1_device_data data;
  memset(&data, 0, sizeof data);
  data.grid = p->grid;
  fea_ph_m1_export(p->m1, &data);
  data.pinv_device = p->pinv_dev; /* create takes it over, whatever it returns */
  p->pinv_dev = NULL;
  data.compute = p->desc.tf32 ? FEA_COMPUTE_TF32 : FEA_COMPUTE_DEFAULT;
  data.l0 = fea_ph_factor_coarse(p->f, NULL);
  data.sqrt_diag = fea_ph_factor_sqrt_diag(p->f);
  data.A = p->A;
  FEA_CALL(p->dops->create(s->ctx, &data, &p->dev));
  fea_ph_m1_destroy(&p->m1);
  return FEA_SUCCESS;
}

static fea_status ph_setup(fea_solver *s) {
  fea_context *ctx = s->ctx;
  ph_solver *p = ph_of(s);
  char what[160];
  snprintf(what, sizeof what,
           "the prehandled setup (|E| = %lld: Pi%s in FP64; a smaller n / n0 shrinks |E|)",
           (long long)p->info.ne,
           p->dops && p->dops->pi_inverse ? ", inverted on the device," : " and its inverse");
  FEA_CALL(fea_memory_require(ctx, p->desc.memory_limit_bytes, (double)setup_bytes(p), what));
  if (p->dev) p->dops->destroy(&p->dev);
  fea_ph_m1_destroy(&p->m1);
  s->ready = 0;
  const double t0 = fea_now();
  fea_matrix *At = NULL;
  fea_ph_split split = {0};
  if (p->hctx) fea_progress_follow(p->hctx, ctx); /* the callback may be newer than hctx */
  FEA_CALL(fea_progress(ctx, FEA_PROGRESS_PH_PREPARE, 0.0));
  FEA_CALL(prepare(s, &At, &split));
  fea_status pst = fea_progress(ctx, FEA_PROGRESS_PH_PREPARE, 1.0);
  if (pst < 0) {
    FEA_OBJECT_DROP(At);
    fea_ph_split_free(&split);
    return pst;
  }
  /* A device that inverts Pi spares the host Pi^-1 and its rounded copy. */
  const int pi_on_device = p->dops && p->dops->pi_inverse;
  fea_status st = relay(s, fea_ph_m1_create_pi_elsewhere(host_ctx(s), &p->grid, &split, At, p->f,
                                                         p->desc.precision,
                                                         pi_on_device ? invert_pi_on_device : NULL,
                                                         s, &p->m1));
  FEA_OBJECT_DROP(At);
  fea_ph_split_free(&split);
  if (st < 0) {
    if (p->pinv_dev) p->dops->pi_release(&p->pinv_dev);
    return st;
  }
  fea_ph_m1_set_rhs_scaling(p->m1, p->desc.rhs_scaling);
  fea_ph_m1_get_info(p->m1, &p->info);
  if (p->dops) st = to_device(s);
  if (st < 0) return st;
  p->setup_s = fea_now() - t0;
  return FEA_SUCCESS;
}

/* Plain M1: the transforms of all columns (one coarse TRSM, column-parallel
 * sweeps), one batched dense solve. */
static fea_status solve_once(fea_solver *s, fea_index k, double *w) {
  ph_solver *p = ph_of(s);
  double t0 = fea_now();
  FEA_CALL(fea_ph_forward_many(p->f, k, w));
  double t1 = fea_now();
  FEA_CALL(fea_ph_m1_solve(p->m1, k, w, w));
  double t2 = fea_now();
  FEA_CALL(fea_ph_backward_many(p->f, k, w));
  double t3 = fea_now();
  p->transform_s = (t1 - t0) + (t3 - t2);
  p->dense_s = t2 - t1;
  return FEA_SUCCESS;
}

/* The device solve: host columns in and out, everything else on the device. */
static fea_status solve_device(fea_solver *s, fea_index nrhs, const double *b, fea_index ldb,
                               double *x, fea_index ldx) {
  ph_solver *p = ph_of(s);
  const double t0 = fea_now();
  if (!b) b = p->load, ldb = p->grid.num; /* nrhs = 1 */
  fea_status st;
  if (p->desc.refine) {
    p->transform_s = p->dense_s = 0;
    st = p->dops->refine(p->dev, nrhs, b, ldb, x, ldx, p->desc.refine_rtol,
                         p->desc.refine_max_iterations, &p->iterations, &p->relres);
  } else {
    st = p->dops->solve(p->dev, nrhs, b, ldb, x, ldx, &p->transform_s, &p->dense_s);
    p->iterations = 1;
    p->relres = 0;
  }
  p->solve_s = fea_now() - t0;
  return st;
}

static fea_status ph_solve(fea_solver *s, fea_index nrhs, const double *b, fea_index ldb, double *x,
                           fea_index ldx) {
  fea_context *ctx = s->ctx;
  ph_solver *p = ph_of(s);
  if (p->dev) return solve_device(s, nrhs, b, ldb, x, ldx);
  const fea_index num = p->grid.num;
  const double t0 = fea_now();
  double *w = malloc((size_t)(num * nrhs) * sizeof *w);
  double *xw = p->desc.refine ? malloc((size_t)(num * nrhs) * sizeof *xw) : NULL;
  if (!w || (p->desc.refine && !xw)) {
    free(w);
    free(xw);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for %lld right-hand sides of %lld unknowns", (long long)nrhs,
                     (long long)num);
  }
  for (fea_index j = 0; j < nrhs; j++)
    memcpy(w + j * num, b ? b + j * ldb : p->load, (size_t)num * sizeof *w);
  fea_status st;
  if (p->desc.refine) {
    p->transform_s = p->dense_s = 0;
    st = fea_ph_m1_refine(p->m1, p->f, p->A, nrhs, w, xw, p->desc.refine_rtol,
                          p->desc.refine_max_iterations, &p->iterations, &p->relres);
  } else {
    st = solve_once(s, nrhs, w);
    p->iterations = 1;
    p->relres = 0;
  }
  const double *out = p->desc.refine ? xw : w;
  if (st >= 0)
    for (fea_index j = 0; j < nrhs; j++)
      memcpy(x + j * ldx, out + j * num, (size_t)num * sizeof *x);
  free(w);
  free(xw);
  p->solve_s = fea_now() - t0;
  return st;
}

const fea_solver_ops fea_ph_solver_ops = {
    .name = "prehandled",
    .check_problem = fea_ph_check_problem,
    .reset = ph_reset,
    .setup = ph_setup,
    .solve = ph_solve,
    .destroy = ph_destroy,
};

fea_status fea_ph_solver_attach(fea_solver *s, const fea_prehandled_desc *desc,
                                const fea_ph_grid *g) {
  fea_ph_macro *macro = (fea_ph_macro *)g->macro; /* taken over, whatever happens */
  if (macro && s->ctx->backend->m1) {
    fea_ph_macro_destroy(&macro);
    return FEA_ERROR(s->ctx, FEA_ERR_UNSUPPORTED,
                     "the prehandled solver on a mesh of several macro cells runs on host "
                     "contexts only: backend '%s' keeps one macro-cell block, not one per group",
                     s->ctx->backend->prefix);
  }
  ph_solver *p = calloc(1, sizeof *p);
  if (!p) fea_ph_macro_destroy(&macro);
  FEA_CHECK(p, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a prehandled solver");
  p->desc = *desc;
  p->grid = *g;
  p->macro = macro;
  fea_index blk;
  p->info.ni = split_sizes(g, &p->info.nc, &p->info.ne, &blk);
  p->info.block = blk;
  p->info.num_cells = macro                     ? macro->cells
                      : g->element == FEA_PH_Q1 ? g->n0 * g->n0
                                                : 2 * g->n0 * g->n0;
  p->info.groups = macro ? macro->groups : 1;
  p->info.prec = desc->precision;
  if (s->ctx->backend->m1) {
    /* A backend with an M1 of its own: it names the host context the setup runs on. */
    p->dops = s->ctx->backend->m1;
    fea_status st = p->dops->setup_context(s->ctx, &p->hctx);
    if (st < 0) {
      free(p);
      return st;
    }
  }
  s->data = p;
  return FEA_SUCCESS;
}

void fea_ph_solver_get_stats(const fea_solver *s, fea_prehandled_stats *full) {
  const ph_solver *p = ph_of(s);
  *full = (fea_prehandled_stats)FEA_PREHANDLED_STATS_INIT;
  full->n = p->grid.n;
  full->n0 = p->grid.n0;
  full->num_c = p->info.nc;
  full->num_e = p->info.ne;
  full->num_i = p->info.ni;
  full->num_cells = p->info.num_cells;
  full->block = p->info.block;
  full->precision = p->desc.precision;
  full->dense_bytes = s->ready ? (uint64_t)p->info.dense_bytes : 0;
  full->flops_per_rhs = fea_ph_flops(&p->grid);
  full->model_flops_per_rhs = fea_ph_model_flops(&p->grid);
  full->setup_s = s->ready ? p->setup_s : 0;
  full->solve_s = p->solve_s;
  full->transform_s = p->transform_s;
  full->dense_s = p->dense_s;
  full->refine_iterations = p->iterations;
  full->relative_residual = p->relres;
  full->device_bytes = s->ready && p->dev ? p->dops->bytes(p->dev) : 0;
}

/* ---- condition numbers ------------------------------------------------ */

typedef struct apply_ctx {
  const ph_solver *p;
  const fea_matrix *A; /* nodal, for NODAL / HIERARCHICAL / SCALED */
  fea_index n;
  double *tmp;
} apply_ctx;

static fea_status apply_nodal(void *u, const double *x, double *y) {
  apply_ctx *a = u;
  fea_csr_multiply_vector(a->A, x, y);
  return FEA_SUCCESS;
}

/* y = S^T A S x through the O(N) sweeps. */
static fea_status apply_hier(void *u, const double *x, double *y) {
  apply_ctx *a = u;
  memcpy(a->tmp, x, (size_t)a->n * sizeof *x);
  fea_ph_apply_s(&a->p->grid, a->tmp);
  fea_csr_multiply_vector(a->A, a->tmp, y);
  fea_ph_apply_st(&a->p->grid, y);
  return FEA_SUCCESS;
}

/* y = L^-1 S^T A S L^-T x. */
static fea_status apply_scaled(void *u, const double *x, double *y) {
  apply_ctx *a = u;
  memcpy(a->tmp, x, (size_t)a->n * sizeof *x);
  FEA_CALL(fea_ph_solve_lt(a->p->f, a->tmp));
  fea_ph_apply_s(&a->p->grid, a->tmp);
  fea_csr_multiply_vector(a->A, a->tmp, y);
  fea_ph_apply_st(&a->p->grid, y);
  return fea_ph_solve_l(a->p->f, y);
}

/* kappa of C_1 or Pi: the FP64 setup rebuilt up to Pi (no inversion). */
static fea_status dense_block_kappa(fea_solver *s, fea_prehandled_matrix which, int steps,
                                    double *kappa) {
  ph_solver *p = ph_of(s);
  const int block = which == FEA_PREHANDLED_MACRO_BLOCK;
  /* Pi in FP64 is |E|^2 doubles, as in setup (less the inverse); on several
   * groups of macro cells Pi is applied as an operator (m1-setup.c), which
   * holds B and the groups' blocks. */
  const double groups = p->info.groups > 1 ? (double)p->info.groups : 1.0;
  const double blocks = 8.0 * groups * (double)p->info.block * (double)p->info.block;
  const double need = block                ? blocks
                      : p->info.groups > 1 ? blocks + 8.0 * (double)p->info.nc * (double)p->info.ne
                                           : 8.0 * (double)p->info.ne * (double)p->info.ne;
  FEA_CALL(fea_memory_require(s->ctx, p->desc.memory_limit_bytes, need,
                              block ? "the macro-cell block in FP64"
                                    : "the Schur complement Pi in FP64"));
  FEA_CHECK(block ? p->info.block > 0 : p->info.ne > 0, s->ctx, FEA_ERR_INVALID_ARG,
            "the %s is empty on this grid (n = %lld, n0 = %lld)",
            block ? "macro-cell block" : "Schur complement", (long long)p->grid.n,
            (long long)p->grid.n0);
  fea_matrix *At = NULL;
  fea_ph_split split = {0};
  FEA_CALL(prepare(s, &At, &split));
  fea_status st = relay(s, fea_ph_m1_condition(host_ctx(s), &p->grid, &split, At, p->f, steps,
                                               block ? kappa : NULL, block ? NULL : kappa));
  FEA_OBJECT_DROP(At);
  fea_ph_split_free(&split);
  return st;
}

fea_status fea_ph_condition(fea_solver *s, fea_prehandled_matrix which, int steps, double *kappa) {
  ph_solver *p = ph_of(s);
  if (which == FEA_PREHANDLED_MACRO_BLOCK || which == FEA_PREHANDLED_SCHUR)
    return dense_block_kappa(s, which, steps, kappa);
  FEA_CALL(prepare(s, NULL, NULL));
  apply_ctx a = {.p = p, .A = p->A, .n = p->grid.num};
  a.tmp = malloc((size_t)a.n * sizeof *a.tmp);
  FEA_CHECK(a.tmp, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld values", (long long)a.n);
  fea_spd_apply_fn fn = which == FEA_PREHANDLED_NODAL          ? apply_nodal
                        : which == FEA_PREHANDLED_HIERARCHICAL ? apply_hier
                                                               : apply_scaled;
  double lmin = 0, lmax = 0;
  fea_status st = relay(s, fea_lanczos_extremes(host_ctx(s), a.n, fn, &a, steps, 1, 12345, &lmin,
                                                &lmax));
  free(a.tmp);
  if (st >= 0) *kappa = lmax / lmin;
  return st;
}
