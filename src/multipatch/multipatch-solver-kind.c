/* The multipatch direct solver: static condensation of every patch onto
 * its boundary, a dense interface system, back-substitution. Systems
 * (elasticity) need nothing of their own: a patch's tree keeps every
 * component of its boundary functions, and the interface rows are the
 * free global vector DoFs on some patch boundary.
 *
 * Each patch has a multifrontal solver that keeps its free boundary DoFs
 * in the root (its Dirichlet DoFs are lifted in the leaves), so its setup
 * ends with the boundary Schur complement S_p = A_BB - A_BI A_II^-1 A_IB of
 * the patch's own matrix (interface sides natural: the patch's share of the coupled
 * matrix). The interface system is the sum of the S_p over the free global
 * DoFs that lie on some patch boundary; Dirichlet DoFs never enter it, as
 * the patches' loads are lifted by them already. A solve condenses every
 * patch's load onto its boundary (the forward substitution's root rows:
 * b_B - A_BI A_II^-1 b_I), sums the pieces, solves the interface system and
 * hands each patch its boundary values for the backward substitution.
 *
 * The interface system is factored densely by LAPACK on the host: in 2D it
 * has O(patches x n) rows, in 3D O(patches x n^2), and its cost next to the
 * patches' is what the multipatch bench reports. A caller's right-hand side
 * entry on a DoF shared by patches goes to one of them (the first), since
 * the condensation is linear in the load.
 *
 * The accuracy report: the patches' fronts and the interface factor are
 * together one Cholesky factorization of the whole system, so the pivot
 * range is over both, and the rule of the multifrontal solver
 * (src/multifrontal/multifrontal-accuracy.c) judges it here, once: a
 * near-null space spread over the domain shows only in the interface's
 * pivots, which the patches never see. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/context.h"
#include "internal/error.h"
#include "internal/multifrontal.h"
#include "base/memory-limit.h"
#include "multifrontal/multifrontal-solver.h"
#include "multipatch.h"
#include "base/solver-object.h"

typedef struct patch_part {
  fea_solver *mf;   /* the patch's multifrontal solver, keeping its free boundary DoFs */
  fea_index n;      /* its tree's numbering: patch DoFs below n (ld of its vectors) */
  fea_index r;      /* its free boundary DoFs (the root's r) */
  fea_index *bdofs; /* r patch DoFs, in the root's order (from the symbolic tree) */
} patch_part;

/* Per patch, between a condensation and its expansion: y (num_dofs x
 * nrhs, the tree's numbering) and g (r x nrhs). */
typedef struct patch_work {
  double *y, *g;
} patch_work;

typedef struct multipatch_solver {
  fea_multipatch_problem *pb; /* holds a reference */
  unsigned char *mine;        /* per patch: handled here (all, or a process's share) */
  patch_part *parts;          /* the handled patches' solvers (others zero) */
  patch_work *work;           /* per patch, from condense to expand; NULL between solves */
  fea_index nrhs;             /* columns of work */
  int dense;                  /* 1: the solver of every patch with its dense interface system */
  fea_index ni;               /* interface rows */
  fea_index *irow;            /* per global DoF: its interface row, or -1 */
  int *owner;                 /* per global DoF: the first patch holding it */
  double *S;                  /* ni x ni, its Cholesky factor after setup (lower) */
  fea_index interior_dofs;
  double local_s, interface_s, solve_s;
  uint64_t patch_bytes;
  double pivot_min, pivot_max; /* of the last setup (0: none) */
  int ill_conditioned;
} multipatch_solver;

/* Allocation counts: malloc(0) may return NULL. */
static size_t at_least_one(fea_index n) { return n > 0 ? (size_t)n : 1; }

static multipatch_solver *multipatch_of(const fea_solver *s) { return s->data; }

static void work_free(multipatch_solver *m) {
  for (int p = 0; m->work && p < m->pb->mp->num_patches; p++) {
    free(m->work[p].y);
    free(m->work[p].g);
  }
  free(m->work);
  m->work = NULL;
}

static void multipatch_reset(fea_solver *s) {
  multipatch_solver *m = multipatch_of(s);
  free(m->S);
  m->S = NULL;
  m->pivot_min = m->pivot_max = 0;
  m->ill_conditioned = 0;
  s->ready = 0;
}

/* The pivot range of the patches' fronts and the interface factor (lower
 * triangle of m->S, factored), and the accuracy rule on it. */
static fea_status check_pivots(fea_solver *s) {
  multipatch_solver *m = multipatch_of(s);
  const fea_multipatch *mp = m->pb->mp;
  double lo = INFINITY, hi = -INFINITY, count = 0;
  char where[320] = "";
  for (int p = 0; p < mp->num_patches; p++) {
    if (!m->mine[p]) continue;
    fea_multifrontal_pivot_range r;
    fea_multifrontal_get_pivot_range(m->parts[p].mf, &r);
    if (r.count == 0) continue;
    const double before = lo;
    fea_multifrontal_pivots_merge(&lo, &hi, r.min, r.max);
    if (before == before && !(lo == before)) {
      int u = snprintf(where, sizeof where, "patch %d's ", p);
      fea_multifrontal_node_name(fea_multifrontal_tree(m->parts[p].mf), r.min_node, where + u,
                                 sizeof where - (size_t)u);
    }
    count += (double)r.count;
  }
  for (fea_index i = 0; i < m->ni; i++) {
    const double l = m->S[i + i * m->ni], d = l * l, before = lo;
    fea_multifrontal_pivots_merge(&lo, &hi, d, d);
    if (before == before && !(lo == before))
      snprintf(where, sizeof where, "row %lld of the %lld x %lld interface system", (long long)i,
               (long long)m->ni, (long long)m->ni);
  }
  count += (double)m->ni;
  if (count == 0) return FEA_SUCCESS;
  m->pivot_min = lo;
  m->pivot_max = hi;
  return fea_multifrontal_pivot_rule(s->ctx, lo, hi, count, where, &m->ill_conditioned);
}

static void multipatch_destroy(fea_solver *s) {
  multipatch_solver *m = multipatch_of(s);
  multipatch_reset(s);
  for (int p = 0; m->parts && p < m->pb->mp->num_patches; p++) {
    if (m->parts[p].mf) fea_object_release(m->parts[p].mf);
    free(m->parts[p].bdofs);
  }
  work_free(m);
  free(m->parts);
  free(m->mine);
  free(m->irow);
  free(m->owner);
  if (m->pb) fea_object_release(m->pb);
  free(m);
  s->data = NULL;
}

/* Interface rows: the free global DoFs on some patch's boundary, in order;
 * and each global DoF's first patch. */
static fea_status number_interface(fea_solver *s) {
  multipatch_solver *m = multipatch_of(s);
  const fea_multipatch_problem *pb = m->pb;
  const fea_multipatch *mp = pb->mp;
  const fea_index N = mp->num_dofs;
  m->irow = malloc(at_least_one(N) * sizeof *m->irow);
  m->owner = malloc(at_least_one(N) * sizeof *m->owner);
  FEA_CHECK(m->irow && m->owner, s->ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the maps of %lld DoFs", (long long)N);
  for (fea_index G = 0; G < N; G++) m->irow[G] = -1, m->owner[G] = -1;
  for (int p = 0; p < mp->num_patches; p++) {
    const fea_space *sp = mp->patches[p];
    const fea_index *g = mp->global + mp->patch_off[p];
    /* boundary_dofs lists functions; every component of one is on the boundary. */
    const int nc = sp->ncomp;
    for (fea_index k = 0; k < sp->num_boundary_dofs; k++)
      for (int c = 0; c < nc; c++) m->irow[g[c + nc * sp->boundary_dofs[k]]] = 0;
    for (fea_index d = 0; d < fea_space_total_dofs(sp); d++)
      if (m->owner[g[d]] < 0) m->owner[g[d]] = p;
    m->interior_dofs += (sp->num_dofs - sp->num_boundary_dofs) * nc;
  }
  m->ni = 0;
  for (fea_index G = 0; G < N; G++)
    m->irow[G] = m->irow[G] == 0 && pb->free_index[G] >= 0 ? m->ni++ : -1;
  return FEA_SUCCESS;
}

static fea_status interface_bytes_fit(fea_solver *s, const fea_solver_desc *d) {
  const multipatch_solver *m = multipatch_of(s);
  char what[160];
  snprintf(what, sizeof what, "the dense interface system of %lld DoFs", (long long)m->ni);
  return fea_memory_require(s->ctx, d->memory_limit_bytes, (double)m->ni * m->ni * sizeof(double),
                            what);
}

fea_status fea_multipatch_patch_schur(const fea_solver *s, int p, fea_index *rows, double *S) {
  const multipatch_solver *m = multipatch_of(s);
  const fea_multipatch *mp = m->pb->mp;
  const patch_part *pp = &m->parts[p];
  const fea_index *g = mp->global + mp->patch_off[p];
  fea_multifrontal_boundary_schur(pp->mf, NULL, S);
  for (fea_index i = 0; i < pp->r; i++) rows[i] = m->irow[g[pp->bdofs[i]]];
  return FEA_SUCCESS;
}

fea_index fea_multipatch_patch_boundary_size(const fea_solver *s, int p) {
  return multipatch_of(s)->parts[p].r;
}

fea_index fea_multipatch_interface_size(const fea_solver *s) { return multipatch_of(s)->ni; }

void fea_multipatch_interface_dofs(const fea_solver *s, fea_index *dofs) {
  const multipatch_solver *m = multipatch_of(s);
  for (fea_index G = 0; G < m->pb->mp->num_dofs; G++)
    if (m->irow[G] >= 0) dofs[m->irow[G]] = G;
}

/* S_p into the dense interface matrix (lower triangle) at the patch's rows. */
static fea_status add_patch_schur(fea_solver *s, int p) {
  multipatch_solver *m = multipatch_of(s);
  const fea_index r = m->parts[p].r, ni = m->ni;
  double *Sp = malloc(at_least_one(r * r) * sizeof *Sp);
  fea_index *rows = malloc(at_least_one(r) * sizeof *rows);
  if (!Sp || !rows) {
    free(Sp);
    free(rows);
    return FEA_ERROR(s->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for patch %d's %lld x %lld boundary Schur complement", p,
                     (long long)r, (long long)r);
  }
  fea_multipatch_patch_schur(s, p, rows, Sp);
  for (fea_index j = 0; j < r; j++) {
    if (rows[j] < 0) continue;
    for (fea_index i = 0; i < r; i++)
      if (rows[i] >= rows[j]) m->S[rows[i] + rows[j] * ni] += Sp[i + j * r];
  }
  free(Sp);
  free(rows);
  return FEA_SUCCESS;
}

fea_status fea_multipatch_factor_patches(fea_solver *s) {
  multipatch_solver *m = multipatch_of(s);
  const fea_multipatch *mp = m->pb->mp;
  const double t0 = fea_now();
  m->patch_bytes = 0;
  for (int p = 0; p < mp->num_patches; p++) {
    if (!m->mine[p]) continue;
    fea_solver *mf = m->parts[p].mf;
    mf->ready = 0;
    FEA_CALL(mf->ops->setup(mf));
    mf->ready = 1;
    fea_solver_stats st;
    fea_multifrontal_get_stats(mf, &st);
    m->patch_bytes += st.peak_bytes;
  }
  m->local_s = fea_now() - t0;
  return FEA_SUCCESS;
}

static fea_status multipatch_setup(fea_solver *s) {
  fea_context *ctx = s->ctx;
  multipatch_solver *m = multipatch_of(s);
  const fea_multipatch *mp = m->pb->mp;
  multipatch_reset(s);
  FEA_CALL(fea_multipatch_factor_patches(s));
  const double t0 = fea_now();
  const fea_index ni = m->ni;
  m->S = calloc(at_least_one(ni * ni), sizeof *m->S);
  FEA_CHECK(m->S, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the %lld x %lld interface system",
            (long long)ni, (long long)ni);
  fea_status st = FEA_SUCCESS;
  for (int p = 0; p < mp->num_patches && st == FEA_SUCCESS; p++) st = add_patch_schur(s, p);
  if (st == FEA_SUCCESS && ni > 0) {
    const lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int)ni, m->S,
                                           (lapack_int)ni);
    if (info > 0)
      st = FEA_ERROR(ctx, FEA_ERR_NOT_POSDEF,
                     "the %lld x %lld interface system is not positive definite (leading minor "
                     "%d): is some part of the domain without a Dirichlet or Robin side?",
                     (long long)ni, (long long)ni, (int)info);
    else if (info < 0)
      st = FEA_ERROR(ctx, FEA_ERR_BACKEND, "LAPACK dpotrf rejected argument %d", (int)-info);
  }
  if (st == FEA_SUCCESS) st = check_pivots(s);
  m->interface_s = fea_now() - t0;
  if (st != FEA_SUCCESS) multipatch_reset(s);
  return st;
}

/* Patch p's loads: b's entries on the DoFs p owns, or its own load. */
static void patch_load(const fea_solver *s, int p, fea_index nrhs, const double *b, fea_index ldb,
                       double *y) {
  const multipatch_solver *m = multipatch_of(s);
  const fea_multipatch_problem *pb = m->pb;
  const fea_multipatch *mp = pb->mp;
  const fea_problem *q = pb->patch_pb[p];
  const fea_index n = m->parts[p].n, *g = mp->global + mp->patch_off[p];
  const double *own = b ? NULL : fea_multifrontal_load(m->parts[p].mf);
  for (fea_index d = 0; d < n; d++) {
    if (q->free_index[d] < 0) continue;
    const fea_index gf = pb->free_index[g[d]];
    for (fea_index j = 0; j < nrhs; j++)
      y[d + j * n] = own ? own[d] : m->owner[g[d]] == p ? b[gf + j * ldb] : 0.0;
  }
}

fea_status fea_multipatch_condense(fea_solver *s, fea_index nrhs, const double *b, fea_index ldb,
                                   double *rhs) {
  fea_context *ctx = s->ctx;
  multipatch_solver *m = multipatch_of(s);
  const fea_multipatch *mp = m->pb->mp;
  const fea_index ni = m->ni;
  work_free(m);
  m->work = calloc((size_t)mp->num_patches, sizeof *m->work);
  FEA_CHECK(m->work, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the patches' work");
  m->nrhs = nrhs;
  for (int p = 0; p < mp->num_patches; p++) {
    if (!m->mine[p]) continue;
    const fea_index n = m->parts[p].n, r = m->parts[p].r;
    patch_work *w = &m->work[p];
    w->y = calloc(at_least_one(n * nrhs), sizeof *w->y);
    w->g = malloc(at_least_one(r * nrhs) * sizeof *w->g);
    FEA_CHECK(w->y && w->g, ctx, FEA_ERR_OUT_OF_MEMORY,
              "no memory for patch %d's %lld right-hand sides", p, (long long)nrhs);
    patch_load(s, p, nrhs, b, ldb, w->y);
    FEA_CALL(fea_multifrontal_kept_forward(m->parts[p].mf, nrhs, w->y, w->g));
    const fea_index *g = mp->global + mp->patch_off[p];
    for (fea_index j = 0; j < nrhs; j++)
      for (fea_index i = 0; i < r; i++) {
        const fea_index row = m->irow[g[m->parts[p].bdofs[i]]];
        if (row >= 0) rhs[row + j * ni] += w->g[i + j * r];
      }
  }
  return FEA_SUCCESS;
}

fea_status fea_multipatch_expand(fea_solver *s, const double *xi, double *x, fea_index ldx,
                                 int owned_only) {
  multipatch_solver *m = multipatch_of(s);
  const fea_multipatch_problem *pb = m->pb;
  const fea_multipatch *mp = pb->mp;
  const fea_index ni = m->ni, nrhs = m->nrhs;
  FEA_CHECK(m->work, s->ctx, FEA_ERR_STATE, "internal: an expansion without a condensation");
  fea_status st = FEA_SUCCESS;
  for (int p = 0; p < mp->num_patches && st == FEA_SUCCESS; p++) {
    if (!m->mine[p]) continue;
    patch_work *w = &m->work[p];
    const fea_index n = m->parts[p].n, r = m->parts[p].r;
    const fea_index *g = mp->global + mp->patch_off[p];
    for (fea_index j = 0; j < nrhs; j++)
      for (fea_index i = 0; i < r; i++) {
        const fea_index row = m->irow[g[m->parts[p].bdofs[i]]];
        w->g[i + j * r] = row >= 0 ? xi[row + j * ni] : 0.0;
      }
    st = fea_multifrontal_kept_backward(m->parts[p].mf, nrhs, w->y, w->g);
    for (fea_index d = 0; d < n && st == FEA_SUCCESS; d++) {
      const fea_index gf = pb->free_index[g[d]];
      if (gf < 0 || (owned_only && m->owner[g[d]] != p)) continue;
      for (fea_index j = 0; j < nrhs; j++) x[gf + j * ldx] = w->y[d + j * n];
    }
  }
  work_free(m);
  return st;
}

static fea_status multipatch_solve(fea_solver *s, fea_index nrhs, const double *b, fea_index ldb,
                                   double *x, fea_index ldx) {
  fea_context *ctx = s->ctx;
  multipatch_solver *m = multipatch_of(s);
  const fea_index ni = m->ni;
  const double t0 = fea_now();
  double *rhs = calloc(at_least_one(ni * nrhs), sizeof *rhs);
  FEA_CHECK(rhs, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld interface right-hand sides",
            (long long)nrhs);
  fea_status st = fea_multipatch_condense(s, nrhs, b, ldb, rhs);
  if (st == FEA_SUCCESS && ni > 0) {
    const lapack_int info = LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', (lapack_int)ni, (lapack_int)nrhs,
                                           m->S, (lapack_int)ni, rhs, (lapack_int)ni);
    if (info != 0)
      st = FEA_ERROR(ctx, FEA_ERR_BACKEND, "LAPACK dpotrs rejected argument %d", (int)-info);
  }
  if (st == FEA_SUCCESS) st = fea_multipatch_expand(s, rhs, x, ldx, 0);
  work_free(m);
  free(rhs);
  m->solve_s = fea_now() - t0;
  return st;
}

static const fea_solver_ops multipatch_ops = {
    .name = "multipatch",
    .check_problem = NULL,
    .reset = multipatch_reset,
    .setup = multipatch_setup,
    .solve = multipatch_solve,
    .destroy = multipatch_destroy,
};

/* Patch p's multifrontal solver (the symbolic phase) and its boundary list. */
static fea_status make_part(fea_solver *s, int p, const fea_solver_desc *d) {
  multipatch_solver *m = multipatch_of(s);
  patch_part *pp = &m->parts[p];
  FEA_CALL(fea_solver_alloc(s->ctx, m->pb->patch_pb[p], m->pb->patch_pb[p]->space,
                            m->pb->patch_pb[p]->num_free, FEA_SOLVER_MULTIFRONTAL,
                            &fea_multifrontal_solver_ops, &pp->mf));
  /* keep_boundary 2: the free boundary DoFs stay in the root; the Dirichlet
   * ones are lifted in the leaves, as in a plain tree, so they make the
   * root no larger (half of a 3D patch's boundary on an outer corner). */
  fea_solver_desc kd = *d;
  kd.keep_boundary = 2;
  FEA_CALL(fea_multifrontal_attach(pp->mf, &kd));
  const fea_etree *t = fea_multifrontal_tree(pp->mf);
  pp->n = t->num_dofs;
  pp->r = t->nodes[t->num_nodes - 1].r;
  pp->bdofs = malloc(at_least_one(pp->r) * sizeof *pp->bdofs);
  FEA_CHECK(pp->bdofs, s->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld boundary DoFs",
            (long long)pp->r);
  fea_multifrontal_boundary_schur(pp->mf, pp->bdofs, NULL);
  return FEA_SUCCESS;
}

fea_status fea_multipatch_solver_create_part(fea_context *ctx, fea_multipatch_problem *pb,
                                             const fea_solver_desc *d, const unsigned char *mine,
                                             fea_solver **out) {
  const int np = pb->mp->num_patches;
  fea_solver *s = NULL;
  FEA_CALL(fea_solver_alloc_bare(ctx, pb->num_free, FEA_SOLVER_MULTIPATCH, &multipatch_ops, &s));
  multipatch_solver *m = calloc(1, sizeof *m);
  fea_status st = FEA_SUCCESS;
  if (!m) {
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a solver");
    goto fail;
  }
  s->data = m;
  m->pb = pb;
  fea_object_retain(pb);
  m->mine = malloc((size_t)np);
  m->parts = calloc((size_t)np, sizeof *m->parts);
  if (!m->mine || !m->parts) {
    st = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %d patch solvers", np);
    goto fail;
  }
  for (int p = 0; p < np; p++) m->mine[p] = mine ? mine[p] != 0 : 1;
  m->dense = mine == NULL;
  st = number_interface(s);
  if (st == FEA_SUCCESS && !mine) st = interface_bytes_fit(s, d);
  for (int p = 0; p < np && st == FEA_SUCCESS; p++)
    if (m->mine[p]) st = make_part(s, p, d);
  if (st == FEA_SUCCESS) {
    *out = s;
    return FEA_SUCCESS;
  }
fail:
  fea_solver_free(s);
  return st;
}

fea_status fea_multipatch_solver_create(fea_context *ctx, fea_multipatch_problem *pb,
                                        const fea_solver_desc *d, fea_solver **out) {
  return fea_multipatch_solver_create_part(ctx, pb, d, NULL, out);
}

void fea_multipatch_solver_stats(const fea_solver *s, fea_multipatch_stats *full) {
  const multipatch_solver *m = multipatch_of(s);
  *full = (fea_multipatch_stats)FEA_MULTIPATCH_STATS_INIT;
  full->num_patches = m->pb->mp->num_patches;
  full->interface_dofs = m->ni;
  full->interior_dofs = m->interior_dofs;
  full->local_s = s->ready ? m->local_s : 0;
  full->interface_s = s->ready ? m->interface_s : 0;
  full->solve_s = m->solve_s;
  full->patch_bytes = m->patch_bytes;
  /* The dense interface system belongs to the single-process solver only. */
  full->interface_bytes = m->dense ? (uint64_t)m->ni * (uint64_t)m->ni * sizeof(double) : 0;
  /* The patches' reports, combined with the interface factor's by the setup. */
  if (s->ready && m->pivot_max > 0) {
    full->pivot_min = m->pivot_min;
    full->pivot_max = m->pivot_max;
    full->pivot_ratio = m->pivot_min / m->pivot_max;
  }
  full->ill_conditioned = s->ready ? m->ill_conditioned : 0;
}
