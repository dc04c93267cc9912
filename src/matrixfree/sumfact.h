/* Sum-factorization kernel: what its translation units share.
 *
 * sumfact.c           the fea_mf_kernel_ops table (supports, gather, scatter, cost)
 * sumfact-setup.c     the 1D tables and geometry factors built at create
 * sumfact-diagonal.c  diag(K_e) from 1D sums
 * sumfact-isa-*.c     the batch kernels, one file per instruction set, all made
 *                     from sumfact-body.h
 *
 * A batch kernel works on W elements at once, one per SIMD lane: every array
 * it sees is structure-of-arrays, entry j of lane l at [j * W + l]. */
#ifndef FEA_MATRIXFREE_SUMFACT_H
#define FEA_MATRIXFREE_SUMFACT_H

#include "mf-kernel.h"

#define SF_MAX_N 9        /* points or functions per direction in the instantiated kernels: p <= 8 */
#define SF_MAX_LANES 8
#define SF_ALIGN 64       /* bytes; every lane array starts on this */

/* One batch: sizes, lane tables, geometry, input and output. */
typedef struct sf_batch {
  int dim;
  int n[3];                /* basis functions per direction (p_k + 1) */
  int nq[3];               /* quadrature points per direction */
  const double *B[3];      /* per direction nq x n lane values: B[(q * n + i) * W + l] */
  const double *D[3];      /* same, derivatives in the reference coordinate of [0, 1] */
  const double *c;         /* dim lane factors: c_k = sigma |det J| / J_kk^2 */
  const double *w;         /* nq[0] * nq[1] * nq[2] reference weights (scalars) */
  const double *x;         /* nb lane inputs */
  double *y;               /* nb lane outputs */
  double *work;            /* sf_work_vectors() lane vectors */
} sf_batch;

typedef void (*sf_kernel_fn)(const sf_batch *b);

/* The kernels of one instruction set. fixed[dim - 1][N] serves n_k = nq_k = N
 * in every direction (p = N - 1 = 1..8); generic serves any sizes. */
typedef struct sf_isa {
  const char *name;
  int lanes;
  int (*available)(void);
  sf_kernel_fn fixed[3][SF_MAX_N + 1];
  sf_kernel_fn generic;
} sf_isa;

extern const sf_isa fea_sf_isa_baseline;  /* sumfact-isa-base.c: x86-64 baseline / any CPU */
extern const sf_isa fea_sf_isa_avx2;      /* sumfact-isa-avx2.c (x86 only; NULL kernels elsewhere) */
extern const sf_isa fea_sf_isa_avx512;    /* sumfact-isa-avx512.c */

/* Lane vectors of work space a batch of these sizes needs. */
int sf_work_vectors(int dim, const int n[3], const int nq[3]);
/* Flops of one element application with these sizes (counted as the kernels run). */
double sf_flops(int dim, const int n[3], const int nq[3]);

/* The kernel's state, read-only after create. */
typedef struct sf_state {
  const fea_space *space;
  int dim, nb, nqt;
  int n[3], nq[3];
  int per_span;            /* B-splines: tables and lengths per element index of a direction */
  fea_index nel[3];        /* element indices per direction that have tables (1 when shared) */
  double *tab[3];          /* per direction nel x (B: nq x n, then D: nq x n), scalars */
  double *len[3];          /* per direction nel physical element lengths (the diagonal of J) */
  double w1[3][20];        /* 1D Gauss weights on [0, 1] */
  double *w;               /* nqt tensor weights */
  double sigma;
  double *lane_tab;        /* shared tables: per direction B then D as lane vectors, or NULL */
  /* shared geometry factors as lanes, read as whole vectors: the state is
   * allocated with SF_ALIGN alignment for this field */
  _Alignas(64) double lane_c[3 * SF_MAX_LANES];
  const sf_isa *isa;
  sf_kernel_fn fn;
  int instantiated;
  fea_index scratch;       /* doubles per apply call */
  uint64_t bytes;          /* what the state keeps */
  char desc[192];
} sf_state;

/* sumfact-setup.c */
int sf_supports(const fea_problem *pb, char *why, size_t len);
fea_status sf_build_tables(const fea_problem *pb, sf_state *s);
/* The element indices per direction of element e. */
void sf_element_index(const sf_state *s, fea_index e, fea_index idx[3]);
/* c_k = sigma |det J| / J_kk^2 of the element with direction indices idx. */
void sf_geometry_factors(const sf_state *s, const fea_index idx[3], double c[3]);

/* sumfact-diagonal.c */
void sf_diagonal(const void *state, const fea_index *elems, int count, double *d, double *scratch);

/* sumfact.c, for tests: create with a chosen instruction set ("baseline",
 * "avx2", "avx512", NULL: the best available) and, with generic != 0, the
 * runtime-size kernel even where an instantiated one exists. */
fea_status fea_sumfact_create_with(const fea_problem *pb, const char *isa, int generic,
                                   void **state);

#endif
