/* One leaf's element loop for the multifrontal factorization: integrate the
 * elements of a leaf's box into its front (or into element records, from
 * which a device integrates the stiffness itself) and its load, lifted by
 * the Dirichlet values. Shared by every backend; calls no other file of the
 * CPU multifrontal code.
 *
 * Also the worker view: f with its problem and space copied without a
 * context, which threads integrate leaves through (cpu.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cpu/cpu.h"
#include "disc/problem.h"
#include "internal/error.h"
#include "internal/etree.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Add v at front position (a, b) of a node with q eliminated rows and m = q + r,
 * into the lower triangle: the panel for columns < q, else the Schur block. */
static inline void front_add(double *P, double *S, fea_index q, fea_index m, fea_index a,
                             fea_index b, double v) {
  fea_index row = a > b ? a : b, col = a > b ? b : a;
  if (col < q)
    P[row + col * m] += v;
  else
    S[(row - q) + (col - q) * (m - q)] += v;
}

/* The work arrays of one leaf's element loop (both leaf paths). */
typedef struct leaf_scratch {
  fea_element_values ev;
  double *Ke, *fe;
  double *g; /* per element function: its Dirichlet value on a boundary DoF, else 0 */
  fea_index *edofs;
} leaf_scratch;

static void leaf_scratch_free(leaf_scratch *w) {
  free(w->Ke);
  free(w->fe);
  free(w->g);
  free(w->edofs);
  fea_element_values_free(&w->ev);
}

static fea_status leaf_scratch_alloc(fea_context *ctx, const fea_problem *pb, fea_index n,
                                     leaf_scratch *w) {
  const fea_space *s = pb->space;
  const size_t nb = (size_t)fea_space_element_size(s); /* vector DoFs c + ncomp j */
  memset(w, 0, sizeof *w);
  FEA_CALL(fea_element_values_alloc(s, &pb->quad, &w->ev));
  w->ev.factors_only = fea_form_factors_suffice(pb);
  w->Ke = malloc(nb * nb * sizeof *w->Ke);
  w->fe = malloc(nb * sizeof *w->fe);
  w->g = malloc(nb * sizeof *w->g);
  w->edofs = malloc(nb * sizeof *w->edofs);
  if (!w->Ke || !w->fe || !w->g || !w->edofs) {
    leaf_scratch_free(w);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the element matrices of leaf %lld",
                     (long long)n);
  }
  return FEA_SUCCESS;
}

/* Element e's DoFs and Dirichlet values into w; 1 when it has any. The
 * boundary test once per function, not per pair: nb^2 lookups of
 * free_index were 0.03 s of the scatter's 0.19 s (2D p = 3, n = 512). */
static int leaf_element_dirichlet(const fea_problem *pb, fea_index e, leaf_scratch *w) {
  const fea_space *s = pb->space;
  const int nb = fea_space_element_size(s);
  fea_space_element_vdofs(s, e, w->edofs);
  int lifted = 0;
  for (int j = 0; j < nb; j++) {
    const int fixed = pb->free_index[w->edofs[j]] < 0;
    w->g[j] = fixed ? pb->dirichlet[w->edofs[j]] : 0.0;
    lifted |= fixed;
  }
  return lifted;
}

/* The element's load into the leaf's: the problem's free DoFs, lifted by
 * the Dirichlet values (row i of Ke times g; free functions have g = 0 and
 * leave the entry as it is) where the element has any. */
static void leaf_add_load(const fea_problem *pb, int nb, const int32_t *map, int lifted,
                          const leaf_scratch *w, double *load) {
  for (int i = 0; i < nb; i++) {
    const fea_index a = map[i];
    if (a < 0 || pb->free_index[w->edofs[i]] < 0) continue;
    double v = w->fe[i];
    if (lifted) {
      const double *row = w->Ke + (size_t)i * nb;
      for (int j = 0; j < nb; j++) v -= row[j] * w->g[j];
    }
    load[a] += v;
  }
}

fea_status fea_multifrontal_assemble_leaf(fea_context *ctx, const fea_multifrontal_factor *f,
                                          fea_index n, double *P, double *S, double *load,
                                          double *integrate_s) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[n];
  const fea_problem *pb = f->problem;
  const fea_space *s = pb->space;
  const int nb = fea_space_element_size(s);
  const fea_index q = nd->q, m = nd->q + nd->r;
  *integrate_s = 0;
  leaf_scratch w;
  FEA_CALL(leaf_scratch_alloc(ctx, pb, n, &w));
  fea_status st = FEA_SUCCESS;
  const int32_t *map = t->leaf_map + nd->leaf_off;
  const fea_index ne0 = s->elements[0], ne1 = s->dim > 1 ? s->elements[1] : 1;
  double integ = 0;
  for (fea_index e2 = nd->lo[2]; e2 < nd->hi[2] && st == FEA_SUCCESS; e2++)
    for (fea_index e1 = nd->lo[1]; e1 < nd->hi[1] && st == FEA_SUCCESS; e1++)
      for (fea_index e0 = nd->lo[0]; e0 < nd->hi[0] && st == FEA_SUCCESS; e0++, map += nb) {
        fea_index e = e0 + ne0 * (e1 + ne1 * e2);
        double t0 = now_s();
        st = s->ops->element_values(s, e, &pb->quad, &w.ev);
        if (st == FEA_SUCCESS) st = fea_form_element_system(pb, e, &w.ev, w.Ke, w.fe);
        integ += now_s() - t0;
        if (st != FEA_SUCCESS) break;
        const int lifted = leaf_element_dirichlet(pb, e, &w);
        for (int i = 0; i < nb; i++) {
          fea_index a = map[i];
          if (a < 0) continue;
          const double *row = w.Ke + (size_t)i * nb;
          for (int j = 0; j < nb; j++)
            if (map[j] >= 0 && a >= map[j]) front_add(P, S, q, m, a, map[j], row[j]);
        }
        leaf_add_load(pb, nb, map, lifted, &w, load);
      }
  *integrate_s = integ;
  leaf_scratch_free(&w);
  return st;
}

int fea_multifrontal_leaf_shape_of(const fea_multifrontal_factor *f,
                                   fea_multifrontal_leaf_shape *shape) {
  const fea_problem *pb = f->problem;
  const fea_space *s = pb->space;
  const fea_quadrature *q = &pb->quad;
  if (s->kind != FEA_SPACE_BSPLINE || ((const fea_bspline_space *)s->impl)->geo) return 0;
  if (s->ncomp > 1 || pb->elastic) return 0; /* the records hold a scalar Laplacian's weights */
  if (pb->desc.element_form || pb->desc.sigma_tensor || fea_problem_has_reaction(pb) ||
      fea_problem_has_robin(pb) || pb->lfaces || q->tensor[0] <= 0)
    return 0;
  fea_multifrontal_leaf_shape sh = {.n = {1, 1, 1}, .m = {1, 1, 1}};
  for (int k = 0; k < s->dim; k++) {
    sh.n[k] = s->degree[k] + 1;
    sh.m[k] = q->tensor[k];
    if (sh.m[k] < 1 || sh.m[k] > FEA_QUAD_MAX_1D) return 0;
  }
  sh.nb = sh.n[0] * sh.n[1] * sh.n[2];
  sh.nq = sh.m[0] * sh.m[1] * sh.m[2];
  if (sh.nq != q->npts || sh.nb != s->dofs_per_element) return 0;
  sh.rec_len = sh.nq;
  for (int k = 0; k < 3; k++) sh.rec_len += 2 * sh.m[k] * sh.n[k];
  *shape = sh;
  return 1;
}

fea_status fea_multifrontal_leaf_records(fea_context *ctx, const fea_multifrontal_factor *f,
                                         fea_index n, const fea_multifrontal_leaf_shape *sh,
                                         double *rec, double *load, double *integrate_s) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[n];
  const fea_problem *pb = f->problem;
  const fea_space *s = pb->space;
  const int nb = s->dofs_per_element, dim = s->dim;
  *integrate_s = 0;
  leaf_scratch w;
  FEA_CALL(leaf_scratch_alloc(ctx, pb, n, &w));
  fea_status st = FEA_SUCCESS;
  if (!w.ev.t1d)
    st = FEA_ERROR(ctx, FEA_ERR_BACKEND, "internal: leaf %lld has no 1D factors for its records",
                   (long long)n);
  const int32_t *map = t->leaf_map + nd->leaf_off;
  const fea_index ne0 = s->elements[0], ne1 = dim > 1 ? s->elements[1] : 1;
  double integ = 0;
  for (fea_index e2 = nd->lo[2]; e2 < nd->hi[2] && st == FEA_SUCCESS; e2++)
    for (fea_index e1 = nd->lo[1]; e1 < nd->hi[1] && st == FEA_SUCCESS; e1++)
      for (fea_index e0 = nd->lo[0]; e0 < nd->hi[0] && st == FEA_SUCCESS;
           e0++, map += nb, rec += sh->rec_len) {
        fea_index e = e0 + ne0 * (e1 + ne1 * e2);
        double t0 = now_s();
        st = s->ops->element_values(s, e, &pb->quad, &w.ev);
        if (st == FEA_SUCCESS && !w.ev.tensor_valid)
          st = FEA_ERROR(ctx, FEA_ERR_BACKEND,
                         "internal: element %lld of leaf %lld has no 1D factors for its record",
                         (long long)e, (long long)n);
        if (st == FEA_SUCCESS) st = fea_form_stiffness_weights(pb, &w.ev, rec);
        /* The element matrix only where Dirichlet values lift the load: the
         * device adds every element's stiffness itself. */
        const int lifted = leaf_element_dirichlet(pb, e, &w);
        if (st == FEA_SUCCESS)
          st = fea_form_element_system(pb, e, &w.ev, lifted ? w.Ke : NULL, w.fe);
        if (st != FEA_SUCCESS) break;
        double *r1 = rec + sh->nq;
        for (int k = 0; k < 3; k++)
          for (int a = 0; a < sh->m[k]; a++, r1 += 2 * sh->n[k]) {
            if (k >= dim) {
              r1[0] = 1.0, r1[1] = 0.0;
              continue;
            }
            const double *row = w.ev.t1d +
                                ((size_t)k * FEA_QUAD_MAX_1D + (size_t)a) * FEA_ELEMENT_T1D_LD;
            memcpy(r1, row, 2 * (size_t)sh->n[k] * sizeof *r1);
          }
        integ += now_s() - t0;
        leaf_add_load(pb, nb, map, lifted, &w, load);
      }
  *integrate_s = integ;
  leaf_scratch_free(&w);
  return st;
}

void fea_cpu_multifrontal_worker_view_init(fea_cpu_multifrontal_worker_view *w,
                                           const fea_multifrontal_factor *f) {
  w->space = *f->problem->space;
  w->space.ctx = NULL;
  w->problem = *f->problem;
  w->problem.ctx = NULL;
  w->problem.space = &w->space;
  w->f = *f;
  w->f.problem = &w->problem;
}
