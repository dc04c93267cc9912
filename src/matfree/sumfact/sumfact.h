/* Sum-factorization kernel: what its translation units share.
 *
 * plan.c              the restriction plan (plan.h): DoF classes, line
 *                     batches, boundary rows; pure data
 * sumfact-tables.c    which problems it serves; the 1D tables and geometry
 *                     factors built at create
 * sumfact-ops.c       the fea_matfree_kernel_ops table: create (the plan,
 *                     the tables, the choice of instruction set and kernels),
 *                     describe, cost
 * sumfact-apply.c     apply and apply_add: gather, kernel, scatter of
 *                     general and line batches
 * sumfact-diagonal.c  diag(K_e) from 1D sums
 * sumfact-isa-*.c     the tensor kernels on lane arrays and the line gather
 *                     and scatter, one file per instruction set, all made
 *                     from sumfact-body.h
 * sumfact-lines-gen.h fused line batches of structured-mesh layouts, generated
 *                     by tools/gen-sumfact-lines.c from the plan
 * (qp.h: the kernel at quadrature points; elastic.h: linear elasticity's)
 *
 * A batch kernel works on W elements at once, one per SIMD lane: every array
 * it sees is structure-of-arrays, entry j of lane l at [j * W + l]. */
#ifndef FEA_MATRIXFREE_SUMFACT_H
#define FEA_MATRIXFREE_SUMFACT_H

#include "matfree/matfree-kernel.h"
#include "plan.h"

#define SF_ALIGN 64 /* bytes; every lane array starts on this */

/* The lane tables of one batch (each an n_k x n_k matrix as lane vectors,
 * entry (j, i) of lane l at [(j * n_k + i) * W + l]), with the 1D mass
 * matrices M_k and stiffness matrices S_k of the element in direction k and
 * the geometry factors c_k folded into the ones that carry them:
 *   1D: y = c0 S0 x
 *   2D: y = (c0 M1) (S0 x) + (c1 S1) (M0 x)
 *   3D: a = M0 x, b = S0 x; aa = M1 a, t = (c0 M1) b + (c1 S1) a;
 *       y = M2 t + (c2 S2) aa
 * (directions applied right to left, direction 0 fastest in x). */
enum { SF_M0, SF_S0, SF_M1, SF_CM1, SF_CS1, SF_M2, SF_CS2, SF_CS0, SF_NTAB };

/* One batch: sizes, lane tables, input and output. */
typedef struct fea_sf_batch {
  int dim;
  int n[3];                 /* basis functions per direction (p_k + 1) */
  const double *T[SF_NTAB]; /* the lane tables the dimension uses (others NULL) */
  const double *x;          /* nb lane inputs */
  double *y;                /* nb lane outputs */
  double *work;             /* fea_sf_work_vectors() lane vectors */
} fea_sf_batch;

typedef void (*fea_sf_kernel_fn)(const fea_sf_batch *b);

struct fea_sf_state;
/* Line batches (fea_sf_plan.line_ok): X = the lanes of the batch whose first
 * element's free-row class bases are base; the scatter adds Y into y. */
typedef void (*fea_sf_line_gather_fn)(const fea_sf_plan *p, const fea_index *base, const double *x,
                                      double *X);
typedef void (*fea_sf_line_scatter_fn)(const fea_sf_plan *p, const fea_index *base, const double *Y,
                                       double *y);
/* Boundary line batches: rows[i] is the free row of DoF i in the first
 * lane (-1: Dirichlet in every lane, read as zero and never written),
 * rows[nb + i] its step from one lane to the next. */
typedef void (*fea_sf_bline_gather_fn)(int nb, const fea_index *rows, const double *x, double *X);
typedef void (*fea_sf_bline_scatter_fn)(int nb, const fea_index *rows, const double *Y, double *y);
/* Fused line batches (fea_sf_state.qline): gather from x, kernel, and add into
 * y in one, for the line batch whose one class base is base; the first
 * skip lanes read as zero. */
typedef void (*fea_sf_qline_fn)(const struct fea_sf_state *s, fea_index base, int skip,
                                const double *x, double *y);

/* Generated fused line batches (fea_sf_state.gline): the same with the class
 * bases of the batch's first element. */
typedef void (*fea_sf_gline_fn)(const struct fea_sf_state *s, const fea_index *base, int skip,
                                const double *x, double *y);

/* The kernels of one instruction set. fixed[dim - 1][N] serves n_k = N in
 * every direction (p = N - 1 = 1..8; the quadrature rule is folded into the
 * tables, so any n_q); generic serves any sizes. */
typedef struct fea_sf_isa {
  const char *name;
  int lanes;
  int (*available)(void);
  fea_sf_kernel_fn fixed[3][SF_MAX_N + 1];
  fea_sf_kernel_fn generic;
  fea_sf_line_gather_fn line_gather;
  fea_sf_line_scatter_fn line_scatter;
  fea_sf_bline_gather_fn bline_gather;
  fea_sf_bline_scatter_fn bline_scatter;
  int tiles;                /* the line gather and scatter serve tiles (fea_sf_state.tile_*) */
  fea_sf_qline_fn qline[3]; /* fused line batches of Q1, by dimension (NULL: none) */
  fea_sf_gline_fn gline[3][SF_MAX_N + 1]; /* generated fused line batches, by dim - 1 and N = p + 1
                                          (NULL: none) */
} fea_sf_isa;

extern const fea_sf_isa fea_sf_isa_baseline; /* sumfact-isa-base.c: x86-64 baseline / any CPU */
extern const fea_sf_isa fea_sf_isa_avx2; /* sumfact-isa-avx2.c (x86 only; NULL kernels elsewhere) */
extern const fea_sf_isa fea_sf_isa_avx512; /* sumfact-isa-avx512.c */

/* Lane vectors of work space a batch of these sizes needs. */
int fea_sf_work_vectors(int dim, const int n[3]);
/* Flops of one element application with these sizes (counted as the kernels run). */
double fea_sf_flops(int dim, const int n[3]);
/* Which lane tables a dimension uses (SF_M0 .. SF_CS0), and into how many. */
int fea_sf_tables_used(int dim, int which[SF_NTAB]);

/* The kernel's state, read-only after create: hot (read per batch by
 * apply_add and the fused line batches), then cold (setup, describe,
 * diagonal). The restriction plan is its own allocation (plan.h), reached
 * through plan. No field order is frozen: moving the hot fields measured
 * within the placement noise of two copies of the same code (docs/operators.md,
 * "The state's layout"). */
typedef struct fea_sf_state {
  /* Hot. */
  fea_sf_plan *plan; /* its own allocation, built by fea_sf_plan_build */
  const fea_sf_isa *isa;
  fea_sf_kernel_fn fn;
  /* Fused line batches: where the elements' DoFs are one class, all of
   * unit stride, in chains of N = n_0 DoFs along direction 0 with chain c
   * holding the DoFs c N .. c N + N - 1 (Q1 Lagrange on a structured mesh),
   * a line batch's addresses are base + qoff[c] + t + l, so gather, kernel
   * and scatter run as one function with the lanes and results in
   * registers and no per-DoF address look-ups: the separate gather, kernel
   * and scatter spent more instructions on addressing and calls than the
   * kernel on its arithmetic (3D Q1: about 500 per batch of 8 elements). */
  fea_sf_qline_fn qline; /* NULL: not this space or ISA */
  /* Generated fused line batches (2D Lagrange Q3 - Q5, 3D Q2 - Q4 on
   * structured meshes, sumfact-lines-gen.h): where the plan's line layout
   * is the one a generated function was made from (choose_gline), that
   * function runs the line batch with every DoF's tile slot, chain or
   * single a constant. */
  fea_sf_gline_fn gline;
  int dim, nb, lanes, per_span;
  const double *lane_tab;      /* shared tables (Lagrange): the used SF_* slots as lane vectors,
                               each padded to SF_ALIGN; NULL for per-span tables */
  const double *qtab[SF_NTAB]; /* the shared lane tables, by slot (fused line batches) */
  int qoff[SF_MAX_N * SF_MAX_N];
  /* The generated line batch's offsets (fea_sf_line_sig.off_src), together:
   * the code reads these instead of foff and tile_off, which lie all over
   * the plan (a 2D Q3 line batch 1.2x faster so, measured against reading
   * them there). */
  fea_index goff[SF_GLINE_MAX_OFF];
  /* Cold. */
  const fea_space *space;
  int nqt, instantiated;
  int n[3], nq[3];
  fea_index nel[3]; /* element indices per direction that have tables (1 when shared) */
  double *tab[3];   /* per direction nel x (M: n x n, then S: n x n), scalars: the
                              1D mass and stiffness matrices on [0, 1] by the Gauss rule */
  double *len[3];   /* per direction nel physical element lengths (the diagonal of J) */
  double w1[3][20]; /* 1D Gauss weights on [0, 1] */
  double *w;        /* nqt tensor weights */
  double sigma;
  fea_index scratch; /* doubles per apply call */
  uint64_t bytes;    /* what the state keeps, its plan included */
  char desc[192];
} fea_sf_state;

/* sumfact-tables.c */
int fea_sf_supports(const fea_problem *pb, char *why, size_t len);
/* The geometry part of fea_sf_supports: axis-aligned box elements (a
 * structured box mesh, a B-spline space without a map) under the tensor
 * Gauss rule, whatever the coefficients (the elasticity kernel's box way). */
int fea_sf_box_supports(const fea_problem *pb, char *why, size_t len);
/* The points per direction of the problem's rule, which must be the tensor
 * Gauss rule (1 when it is; else 0 and a sentence in why). */
int fea_sf_rule_sizes(const fea_problem *pb, int nq[3], char *why, size_t len);
fea_status fea_sf_build_tables(const fea_problem *pb, fea_sf_state *s);
/* The element indices per direction of element e. */
void fea_sf_element_index(const fea_sf_state *s, fea_index e, fea_index idx[3]);
/* c_k = sigma |det J| / J_kk^2 of the element with direction indices idx. */
void fea_sf_geometry_factors(const fea_sf_state *s, const fea_index idx[3], double c[3]);

/* sumfact-ops.c: point b's table slots at the shared lane tables (Lagrange
 * spaces; returns 0 and leaves b alone when the tables are per element). */
int fea_sf_shared_tables(const fea_sf_state *s, fea_sf_batch *b);

/* sumfact-diagonal.c */
void fea_sf_diagonal(const void *state, const fea_index *elems, int count, double *d,
                     double *scratch);

/* sumfact-ops.c: the lane tables of one batch (doubles), and lane l of them
 * filled from the element with direction indices idx and factors c. */
fea_index fea_sf_lane_table_doubles(const fea_sf_state *s, int W);
void fea_sf_fill_lane(const fea_sf_state *s, int W, int l, const fea_index idx[3],
                      const double c[3], double *t);
void fea_sf_point_tables(const fea_sf_state *s, int W, const double *t, fea_sf_batch *b);
/* Round a count of doubles up so that the next array stays SF_ALIGN-aligned. */
static inline fea_index fea_sf_pad(fea_index n) {
  const fea_index a = SF_ALIGN / sizeof(double);
  return (n + a - 1) / a * a;
}

/* sumfact-apply.c: the ops table's apply and apply_add. */
void fea_sf_apply(const void *state, const fea_index *elems, int count, const double *x_full,
                  double *y, double *scratch);
void fea_sf_apply_add(const void *state, const fea_index *elems, int count, const double *x_full,
                      const fea_matfree_target *tg, double *scratch);

/* sumfact-ops.c, for tests: create with a chosen instruction set ("baseline",
 * "avx2", "avx512", NULL: the best available) and, with generic != 0, the
 * runtime-size kernel even where an instantiated one exists. */
fea_status fea_sf_create_with(const fea_problem *pb, const char *isa, int generic, void **state);

#endif
