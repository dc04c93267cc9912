/* The element-matrix kernel (the thesis's matrix-free method, §2.3.1):
 * y_e = K_e x_e with dense element matrices applied as small GEMMs.
 *
 * What is stored. With a constant sigma, K_e = sigma sum_q w_q |J| grad
 * phi_i . grad phi_j depends only on the element's shape: its weights times
 * |det J| and its physical basis gradients at the quadrature points. On a
 * uniform Cartesian mesh every element has the same shape and ONE matrix
 * serves all (what the thesis stores: (p+1)^(2d) doubles for the whole
 * mesh); B-splines on uniform knots have a few shapes (elements near the
 * boundary see truncated basis functions: (2p-1)^d); a graded
 * structured mesh has one per distinct cell size. So creation groups the
 * elements by shape and keeps one matrix per group plus a group index per
 * element. Where shapes barely repeat (unstructured or deformed meshes) or
 * sigma varies in space, the groups degenerate into per-element matrices:
 * the general fallback, correct but nb^2 doubles per element (more than the
 * CSR matrix: the sum-factorization kernel is the answer there, storing
 * geometry at quadrature points instead).
 *
 * Memory is bounded before it is spent: a per-element store (known from
 * the coefficients alone) is checked before any element is evaluated, and
 * the grouping, whose signatures are larger than the matrices they stand
 * for (nq (1 + nb dim) doubles against nb^2), stops once its signatures
 * and matrices would exceed the budget; the elements then get a matrix
 * each, checked against the budget before the matrices are computed.
 *
 * Shapes are compared with a tolerance of 1e-13 of their largest entry,
 * since equal elements at different places get Jacobians that differ in the
 * last bits; the hash only buckets them (a near-miss on a bucket edge costs
 * an extra group, never a wrong matrix).
 *
 * Systems (a space with ncomp components): nb counts the element's vector
 * DoFs (nb ncomp, interleaved c + ncomp i) and the matrices are those of the
 * forms (elasticity's, or the user's vector form); elasticity's with a
 * constant material depend on the shape alone and group as above.
 *
 * How it is applied: the batch's gathered x_e are the columns of one nb x n
 * block; when every element of the batch shares a matrix, one DGEMM computes
 * all y_e, else one DGEMV per element. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "base/memory-limit.h"
#include "matfree-kernel.h"
#include "disc/pattern.h"

#define EM_BATCH 16

typedef struct em_state {
  int nb;
  fea_index ne, ngroups;
  const fea_index *edofs; /* ne x nb: the caller's or edofs_own */
  fea_index *edofs_own;
  double *K;        /* ngroups x nb x nb, row-major */
  fea_index *group; /* ne: each element's matrix */
  const char *why;  /* why every element has its own matrix, or NULL */
  char describe[96];
} em_state;

/* Shape grouping: one signature (w, dphi at the rule's points) per group. */
typedef struct shapes {
  int len;                 /* doubles per signature */
  int nw;                  /* of which weights (the rest: gradients) */
  fea_index n, cap, limit; /* groups, room, most room the budget allows */
  double *sig;             /* n x len */
  fea_index *rep;          /* n: an element of the group */
  fea_index *table;        /* hash slots: group + 1, 0 empty */
  size_t slots;
} shapes;

/* Signatures hold w (nq values) then dphi; each part is compared on its own
 * scale (its largest magnitude), so that the rounding noise of an entry that
 * is zero in exact arithmetic (an off-diagonal term of J^-1) does not tell
 * two equal shapes apart. */
static double part_scale(const double *v, int n) {
  double m = 0.0;
  for (int k = 0; k < n; k++) m = fmax(m, fabs(v[k]));
  return m > 0.0 ? m : 1.0;
}

/* Bucket: each value rounded to a grid of 1e-9 of its part's scale. */
static uint64_t sig_hash(const double *v, int len, int nw) {
  const double sw = part_scale(v, nw), sd = part_scale(v + nw, len - nw);
  uint64_t h = 1469598103934665603u;
  for (int k = 0; k < len; k++) {
    long long q = llround(v[k] / ((k < nw ? sw : sd) * 1e-9));
    h = (h ^ (uint64_t)q) * 1099511628211u;
  }
  return h;
}

static int sig_equal(const double *a, const double *b, int len, int nw) {
  const double sw = part_scale(a, nw), sd = part_scale(a + nw, len - nw);
  for (int k = 0; k < len; k++)
    if (fabs(a[k] - b[k]) > 1e-13 * (k < nw ? sw : sd)) return 0;
  return 1;
}

/* The group of signature v (added when new), -1 without memory, or -2
 * when a new group would exceed S->limit. */
static fea_index shapes_find(shapes *S, const double *v, fea_index e) {
  size_t h = (size_t)sig_hash(v, S->len, S->nw) & (S->slots - 1);
  for (;; h = (h + 1) & (S->slots - 1)) {
    fea_index g = S->table[h] - 1;
    if (g < 0) break;
    if (sig_equal(S->sig + (size_t)g * S->len, v, S->len, S->nw)) return g;
  }
  if (S->n == S->limit) return -2;
  if (S->n == S->cap) {
    fea_index cap = S->cap ? 2 * S->cap : 16;
    if (cap > S->limit) cap = S->limit;
    double *sig = realloc(S->sig, (size_t)cap * S->len * sizeof *sig);
    if (!sig) return -1;
    S->sig = sig;
    fea_index *rep = realloc(S->rep, (size_t)cap * sizeof *rep);
    if (!rep) return -1;
    S->rep = rep;
    S->cap = cap;
  }
  memcpy(S->sig + (size_t)S->n * S->len, v, (size_t)S->len * sizeof *v);
  S->rep[S->n] = e;
  S->table[h] = S->n + 1;
  return S->n++;
}

static void em_destroy(void *state) {
  em_state *s = state;
  if (!s) return;
  free(s->edofs_own);
  free(s->K);
  free(s->group);
  free(s);
}

/* Why every element needs a matrix of its own whatever the shapes (the
 * shape does not see these), or NULL. */
static const char *coefficients_per_element(const fea_problem *pb) {
  if (pb->desc.element_form) return "the user's element form";
  if (pb->desc.sigma_fn) return "sigma(x)";
  if (pb->desc.sigma_tensor) return "a tensor sigma(x)";
  if (pb->desc.reaction_fn) return "c(x)";
  if (fea_problem_has_robin(pb)) return "Robin sides";
  if (pb->elastic && (pb->elastic->E_fn || pb->elastic->nu_fn)) return "E(x) or nu(x)";
  if (pb->elastic && pb->elastic->C_fn) return "a tensor C(x)";
  return NULL;
}

/* The per-element store against the budget, before the matrices are
 * computed; the message says why there is one per element and what needs
 * less. */
static fea_status require_per_element(const fea_problem *pb, fea_index ne, int nb,
                                      const char *why) {
  char what[320];
  snprintf(what, sizeof what,
           "the element matrices of %lld elements, %d x %d each (one per element: %s; a smaller "
           "problem%s or the CSR kind takes less)",
           (long long)ne, nb, nb, why, pb->desc.element_form ? "" : ", the sum-factorization kind");
  return fea_memory_require(pb->ctx, 0, fea_bytes((double)ne * nb * (double)nb, sizeof(double)),
                            what);
}

static int em_supports(const fea_problem *pb, char *why, size_t len) {
  (void)pb;
  (void)why;
  (void)len;
  return 1; /* any space, any coefficient */
}

/* Group the elements by shape; per element when sigma varies or shapes do not repeat. */
static fea_status group_elements(const fea_problem *pb, em_state *s, fea_element_values *ev,
                                 fea_index **reps) {
  const fea_space *sp = pb->space;
  const fea_index ne = s->ne;
  /* sigma(x) or c(x), or Robin sides (whose face terms the shape does not
   * see): every element its own matrix (em_create checked the store). */
  if (s->why) {
    s->ngroups = ne;
    for (fea_index e = 0; e < ne; e++) s->group[e] = e;
    *reps = NULL;
    return FEA_SUCCESS;
  }
  shapes S = {0};
  S.len = ev->nq * (1 + ev->nb * ev->dim);
  S.nw = ev->nq;
  /* As many groups as their signatures and matrices fit the budget. */
  fea_memory_budget budget;
  fea_memory_budget_get(pb->ctx, 0, &budget);
  const double group_bytes = fea_bytes((double)S.len + (double)s->nb * s->nb, sizeof(double));
  const double fit = floor((double)budget.bytes / group_bytes);
  /* Beyond this many groups, shapes do not repeat enough to be worth it. */
  fea_index give_up = ne / 4 > 64 ? ne / 4 : 64;
  const int capped = fit < (double)give_up;
  if (capped) give_up = (fea_index)fit;
  if (give_up < 1) { /* not one signature fits: compare nothing */
    s->ngroups = ne;
    for (fea_index e = 0; e < ne; e++) s->group[e] = e;
    *reps = NULL;
    s->why = "their shapes do not repeat enough within the memory limit";
    return FEA_SUCCESS;
  }
  S.limit = give_up + 1;
  S.slots = 64;
  while (S.slots < 2 * (size_t)ne) S.slots *= 2;
  S.table = calloc(S.slots, sizeof *S.table);
  double *v = malloc((size_t)S.len * sizeof *v);
  fea_status st = S.table && v
                      ? FEA_SUCCESS
                      : FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                                  "no memory to group %lld elements by shape", (long long)ne);
  for (fea_index e = 0; e < ne && st == FEA_SUCCESS; e++) {
    st = sp->ops->element_values(sp, e, &pb->quad, ev);
    if (st != FEA_SUCCESS) break;
    memcpy(v, ev->w, (size_t)ev->nq * sizeof *v);
    memcpy(v + ev->nq, ev->dphi, (size_t)ev->nq * ev->nb * ev->dim * sizeof *v);
    fea_index g = shapes_find(&S, v, e);
    if (g == -2) { /* one group more than give_up: per element */
      S.n = ne;
      break;
    }
    if (g < 0) {
      st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for %lld element shapes",
                     (long long)S.n + 1);
      break;
    }
    if (S.n > give_up && S.n < ne) {
      S.n = ne; /* marker: per element */
      break;
    }
    s->group[e] = g;
  }
  if (st == FEA_SUCCESS && S.n == ne) {
    for (fea_index e = 0; e < ne; e++) s->group[e] = e;
    s->ngroups = ne;
    *reps = NULL;
    s->why = capped ? "their shapes do not repeat enough within the memory limit"
                    : "their shapes do not repeat";
  } else if (st == FEA_SUCCESS) {
    s->ngroups = S.n;
    *reps = S.rep;
    S.rep = NULL;
  }
  free(S.table);
  free(S.sig);
  free(S.rep);
  free(v);
  return st;
}

static fea_status em_create(const fea_problem *pb, const fea_index *edofs, void **state) {
  const fea_space *sp = pb->space;
  /* Systems: matrices over the element's vector DoFs (nb ncomp, interleaved). */
  const int nbv = fea_space_element_size(sp);
  /* The element groups and, unless the caller has one, the element-DoF table. */
  char what[128];
  snprintf(what, sizeof what, "the element-matrix kernel's tables of %lld elements",
           (long long)sp->num_elements);
  FEA_CALL(fea_memory_require(pb->ctx, 0,
                              fea_bytes((double)sp->num_elements * (edofs ? 1 : 1 + nbv),
                                        sizeof(fea_index)),
                              what));
  /* Known from the coefficients alone: a matrix per element, checked
   * before any element is evaluated. */
  const char *why = coefficients_per_element(pb);
  if (why) FEA_CALL(require_per_element(pb, sp->num_elements, nbv, why));
  em_state *s = calloc(1, sizeof *s);
  FEA_CHECK(s, pb->ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the element-matrix kernel");
  s->nb = nbv;
  s->ne = sp->num_elements;
  s->why = why;
  const size_t nb2 = (size_t)s->nb * s->nb;
  fea_element_values ev = {0};
  fea_index *reps = NULL;
  double *fe = malloc((size_t)s->nb * sizeof *fe);
  s->group = malloc(((size_t)s->ne + 1) * sizeof *s->group);
  fea_status st = fe && s->group
                      ? FEA_SUCCESS
                      : FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                                  "no memory for the groups of %lld elements", (long long)s->ne);
  s->edofs = edofs;
  if (st == FEA_SUCCESS && !edofs && sp->ncomp == 1) {
    st = fea_element_dof_table(sp, &s->edofs_own);
    s->edofs = s->edofs_own;
  } else if (st == FEA_SUCCESS && !edofs) {
    s->edofs_own = malloc(((size_t)s->ne * (size_t)nbv + 1) * sizeof *s->edofs_own);
    if (!s->edofs_own)
      st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for the vector DoFs of %lld elements", (long long)s->ne);
    for (fea_index e = 0; e < s->ne && st == FEA_SUCCESS; e++)
      fea_space_element_vdofs(sp, e, s->edofs_own + e * nbv);
    s->edofs = s->edofs_own;
  }
  if (st == FEA_SUCCESS) st = fea_element_values_alloc(sp, &pb->quad, &ev);
  if (st == FEA_SUCCESS) st = group_elements(pb, s, &ev, &reps);
  if (st == FEA_SUCCESS && s->ngroups == s->ne && s->why) {
    if (!why) st = require_per_element(pb, s->ne, s->nb, s->why); /* the shapes decided */
  } else if (st == FEA_SUCCESS) {
    snprintf(what, sizeof what, "%lld distinct element matrices of %d x %d", (long long)s->ngroups,
             s->nb, s->nb);
    st = fea_memory_require(pb->ctx, 0, fea_bytes((double)s->ngroups * (double)nb2, sizeof(double)),
                            what);
  }
  if (st == FEA_SUCCESS) {
    s->K = malloc((size_t)s->ngroups * nb2 * sizeof *s->K + 1);
    if (!s->K)
      st = FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                     "no memory for %lld element matrices of %d x %d", (long long)s->ngroups, s->nb,
                     s->nb);
  }
  for (fea_index g = 0; g < s->ngroups && st == FEA_SUCCESS; g++) {
    fea_index e = reps ? reps[g] : g;
    st = sp->ops->element_values(sp, e, &pb->quad, &ev);
    if (st == FEA_SUCCESS) st = fea_form_element_system(pb, e, &ev, s->K + (size_t)g * nb2, fe);
  }
  if (ev.x || ev.w || ev.phi || ev.dphi) fea_element_values_free(&ev);
  free(fe);
  free(reps);
  if (st != FEA_SUCCESS) {
    em_destroy(s);
    return st;
  }
  if (s->ngroups == 1)
    snprintf(s->describe, sizeof s->describe,
             "element-matrix: one %dx%d matrix for all %lld elements", s->nb, s->nb,
             (long long)s->ne);
  else if (s->ngroups < s->ne)
    snprintf(s->describe, sizeof s->describe, "element-matrix: %lld shapes for %lld elements",
             (long long)s->ngroups, (long long)s->ne);
  else
    snprintf(s->describe, sizeof s->describe, "element-matrix: per-element matrices (%s)",
             s->why ? s->why : "no repeated shapes");
  *state = s;
  return FEA_SUCCESS;
}

static int em_batch(const void *state) {
  (void)state;
  return EM_BATCH;
}

static fea_index em_scratch(const void *state) {
  const em_state *s = state;
  return (fea_index)s->nb * EM_BATCH;
}

static void em_apply(const void *state, const fea_index *elems, int count, const double *x_full,
                     double *y, double *scratch) {
  const em_state *s = state;
  const int nb = s->nb;
  const size_t nb2 = (size_t)nb * nb;
  double *X = scratch;
  int shared = 1;
  for (int k = 0; k < count; k++) {
    const fea_index *ed = s->edofs + elems[k] * nb;
    for (int j = 0; j < nb; j++) X[k * nb + j] = x_full[ed[j]];
    shared &= s->group[elems[k]] == s->group[elems[0]];
  }
  if (shared) { /* Y = K X, K row-major: its transpose read column-major */
    cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, nb, count, nb, 1.0,
                s->K + (size_t)s->group[elems[0]] * nb2, nb, X, nb, 0.0, y, nb);
    return;
  }
  for (int k = 0; k < count; k++)
    cblas_dgemv(CblasRowMajor, CblasNoTrans, nb, nb, 1.0, s->K + (size_t)s->group[elems[k]] * nb2,
                nb, X + k * nb, 1, 0.0, y + k * nb, 1);
}

static void em_diagonal(const void *state, const fea_index *elems, int count, double *d,
                        double *scratch) {
  (void)scratch;
  const em_state *s = state;
  const int nb = s->nb;
  for (int k = 0; k < count; k++) {
    const double *K = s->K + (size_t)s->group[elems[k]] * nb * nb;
    for (int i = 0; i < nb; i++) d[k * nb + i] = K[i * nb + i];
  }
}

static void em_cost(const void *state, double *flops, double *bytes) {
  const em_state *s = state;
  const double nb = s->nb;
  *flops = 2.0 * nb * nb;
  /* Per element: its DoF indices, x_e and y_e (gathered and scattered),
   * and its matrix unless one is shared by all (then it stays in cache). */
  *bytes = nb * (sizeof(fea_index) + 2 * sizeof(double)) +
           (s->ngroups > 1 ? sizeof(fea_index) : 0) +
           (s->ngroups == s->ne && s->ne > 1 ? nb * nb * sizeof(double) : 0);
}

static uint64_t em_memory(const void *state) {
  const em_state *s = state;
  return (uint64_t)s->ngroups * (uint64_t)s->nb * s->nb * sizeof(double) +
         (uint64_t)s->ne * sizeof(fea_index) + /* group; the DoF table where it is its own */
         (s->edofs_own ? (uint64_t)s->ne * (uint64_t)s->nb * sizeof(fea_index) : 0);
}

static const char *em_describe(const void *state) { return ((const em_state *)state)->describe; }

void fea_matfree_element_matrix_view(const void *state, fea_em_view *view) {
  const em_state *s = state;
  view->nb = s->nb;
  view->ne = s->ne;
  view->ngroups = s->ngroups;
  view->edofs = s->edofs;
  view->K = s->K;
  view->group = s->group;
}

const fea_matfree_kernel_ops fea_matfree_kernel_element_matrix = {
    .name = "element-matrix",
    .supports = em_supports,
    .create = em_create,
    .destroy = em_destroy,
    .batch = em_batch,
    .apply = em_apply,
    .diagonal = em_diagonal,
    .scratch_doubles = em_scratch,
    .cost = em_cost,
    .memory = em_memory,
    .describe = em_describe,
};
