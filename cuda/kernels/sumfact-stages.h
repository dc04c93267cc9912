/* The GPU sum-factorization kernel's arithmetic, stage by stage: sumfact.cu
 * runs the stages with block barriers between them, and
 * tests/unit/test-sumfact-gpu-stages.c runs the very same functions on the
 * host, one simulated thread at a time, against the forms' element matrices
 * (so the indexing is checked on machines without a GPU). Plain C99 that
 * nvcc compiles as well; no CUDA construct appears here.
 *
 * The element operator of an axis-aligned cell with a constant sigma is a
 * sum of Kronecker products of the 1D mass and stiffness matrices M_k, S_k of
 * direction k (the CPU kernel's, src/matfree/sumfact/sumfact.h), with the
 * geometry factors c_k = sigma |det J| / J_kk^2:
 *   1D: y = c0 S0 x
 *   2D: y = c0 (M1 (x) S0) x + c1 (S1 (x) M0) x
 *   3D: y = c0 (M2 (x) M1 (x) S0) x + c1 (M2 (x) S1 (x) M0) x
 *         + c2 (S2 (x) M1 (x) M0) x
 * evaluated as a = M0 x, b = S0 x along direction 0, then direction 1, then
 * direction 2: 7 n^(d+1) multiply-adds in 3D, as on the CPU.
 *
 * Threads: one element is served by n threads in 1D and 2D and n^2 in 3D.
 * Thread lt of an element has i0 = lt % n and, in 3D, i1 = lt / n; in 2D and
 * 3D it owns the line of DoFs along the last direction (i1 in 2D, i2 in 3D),
 * whose contraction it does in its own registers. Directions 0 (and 1 in 3D)
 * read other threads' values, through the element's shared array X (3D: and
 * a second one). Local DoF (i0, i1, i2) is i0 + n i1 + n^2 i2, the spaces'
 * lexicographic order. */
#ifndef FEA_CUDA_SUMFACT_STAGES_H
#define FEA_CUDA_SUMFACT_STAGES_H

#include <stdint.h>

#ifdef __CUDACC__
#define SFG_HD __host__ __device__ __forceinline__
#else
#define SFG_HD static inline
#endif
#ifdef __CUDA_ARCH__ /* nvcc's device pass; its host compiler knows no such pragma */
#define SFG_UNROLL _Pragma("unroll")
#else
#define SFG_UNROLL
#endif

/* Basis functions per direction the kernel is compiled for: p = 1..8. */
#define SFG_MIN_N 2
#define SFG_MAX_N 9

/* Threads per block the launcher aims at: as many whole elements as fit. */
#define SFG_BLOCK_THREADS 256

/* What the kernel reads, all in device memory (host memory in the test). */
typedef struct fea_sf_gpu_params {
  int dim, n, nb;       /* nb = n^dim */
  int per_span;         /* tables per element index (B-splines); else entry 0 for all */
  int64_t nel[3];       /* element indices per direction (per_span) */
  const double *tab[3]; /* direction k: nel[k] x (M: n x n, then S: n x n), row-major */
  const double *len[3]; /* direction k: nel[k] element lengths (J_kk) */
  double sigma;
  const int *erow; /* ne x nb: the free row of each local DoF, -1 for Dirichlet DoFs */
} fea_sf_gpu_params;

/* One element's tables and geometry factors. */
typedef struct fea_sf_gpu_element {
  const double *M[3], *S[3];
  double c[3];
} fea_sf_gpu_element;

/* Threads per element, and DoFs per thread line. */
SFG_HD int fea_sf_gpu_threads_per_element(int dim, int n) { return dim == 3 ? n * n : n; }
SFG_HD int fea_sf_gpu_line(int dim, int n) { return dim == 1 ? 1 : n; }

SFG_HD int fea_sf_gpu_elements_per_block(int dim, int n) {
  const int t = fea_sf_gpu_threads_per_element(dim, n);
  return t >= SFG_BLOCK_THREADS ? 1 : SFG_BLOCK_THREADS / t;
}

/* Shared doubles per element: X (3D: and the second array). */
SFG_HD int fea_sf_gpu_shared_per_element(int dim, int n) {
  return dim == 3 ? 2 * n * n * n : (dim == 2 ? n * n : n);
}

/* The local DoF at position i of thread lt's line. */
SFG_HD int fea_sf_gpu_local_dof(int dim, int n, int lt, int i) {
  return dim == 1 ? lt : lt + i * (dim == 3 ? n * n : n);
}

/* Element e's tables and c_k (per_span: e's direction indices, direction 0
 * fastest, as the CPU's fea_sf_element_index). dim is p->dim, passed apart so
 * that the kernel's constant unrolls the loops (el stays in registers). */
SFG_HD void fea_sf_gpu_element_setup(const fea_sf_gpu_params *p, int dim, int64_t e,
                                     fea_sf_gpu_element *el) {
  int64_t idx[3] = {0, 0, 0};
  if (p->per_span) {
    SFG_UNROLL
    for (int k = 0; k < dim; k++) {
      idx[k] = e % p->nel[k];
      e /= p->nel[k];
    }
  }
  double det = 1.0;
  SFG_UNROLL
  for (int k = 0; k < dim; k++) det *= p->len[k][idx[k]];
  SFG_UNROLL
  for (int k = 0; k < 3; k++) {
    if (k < dim) {
      const double L = p->len[k][idx[k]];
      el->c[k] = p->sigma * det / (L * L);
      el->M[k] = p->tab[k] + idx[k] * 2 * p->n * p->n;
      el->S[k] = el->M[k] + p->n * p->n;
    } else {
      el->c[k] = 0.0;
      el->M[k] = el->S[k] = 0;
    }
  }
}

/* X at thread lt's line := x at the element's rows r (Dirichlet: 0). */
SFG_HD void fea_sf_gpu_gather(int dim, int n, int lt, const int *r, const double *x, double *X) {
  const int line = fea_sf_gpu_line(dim, n);
  SFG_UNROLL
  for (int i = 0; i < line; i++) {
    const int d = fea_sf_gpu_local_dof(dim, n, lt, i);
    const int row = r[d];
    X[d] = row >= 0 ? x[row] : 0.0;
  }
}

/* 1D: v[0] = c0 (S0 X)_lt. */
SFG_HD void fea_sf_gpu_stage_1d(int n, int lt, const fea_sf_gpu_element *el, const double *X,
                                double *v) {
  const double *S0 = el->S[0] + lt * n;
  double s = 0.0;
  SFG_UNROLL
  for (int j = 0; j < n; j++) s += S0[j] * X[j];
  v[0] = el->c[0] * s;
}

/* 2D, thread i0: a = M0 X and b = S0 X on its line, then direction 1 in
 * registers: v[i1] = c0 (M1 b)_i1 + c1 (S1 a)_i1. */
SFG_HD void fea_sf_gpu_stage_2d(int n, int i0, const fea_sf_gpu_element *el, const double *X,
                                double *v) {
  double a[SFG_MAX_N], b[SFG_MAX_N];
  const double *M0 = el->M[0] + i0 * n, *S0 = el->S[0] + i0 * n;
  SFG_UNROLL
  for (int i1 = 0; i1 < n; i1++) {
    double sa = 0.0, sb = 0.0;
    SFG_UNROLL
    for (int j = 0; j < n; j++) {
      sa += M0[j] * X[i1 * n + j];
      sb += S0[j] * X[i1 * n + j];
    }
    a[i1] = sa;
    b[i1] = sb;
  }
  const double *M1 = el->M[1], *S1 = el->S[1];
  SFG_UNROLL
  for (int i1 = 0; i1 < n; i1++) {
    double sm = 0.0, ss = 0.0;
    SFG_UNROLL
    for (int j = 0; j < n; j++) {
      sm += M1[i1 * n + j] * b[j];
      ss += S1[i1 * n + j] * a[j];
    }
    v[i1] = el->c[0] * sm + el->c[1] * ss;
  }
}

/* 3D stage 1, thread (i0, i1): a = M0 X and b = S0 X along direction 0 on
 * its line (into the caller's registers). */
SFG_HD void fea_sf_gpu_stage1_3d(int n, int lt, const fea_sf_gpu_element *el, const double *X,
                                 double *a, double *b) {
  const int i0 = lt % n, i1 = lt / n;
  const double *M0 = el->M[0] + i0 * n, *S0 = el->S[0] + i0 * n;
  SFG_UNROLL
  for (int i2 = 0; i2 < n; i2++) {
    const double *Xl = X + (i2 * n + i1) * n;
    double sa = 0.0, sb = 0.0;
    SFG_UNROLL
    for (int j = 0; j < n; j++) {
      sa += M0[j] * Xl[j];
      sb += S0[j] * Xl[j];
    }
    a[i2] = sa;
    b[i2] = sb;
  }
}

/* 3D, after a barrier (X may then be overwritten): the line's a and b into
 * the shared arrays A and B, at the thread's own DoFs. */
SFG_HD void fea_sf_gpu_store_3d(int n, int lt, const double *a, const double *b, double *A,
                                double *B) {
  SFG_UNROLL
  for (int i2 = 0; i2 < n; i2++) {
    A[lt + i2 * n * n] = a[i2];
    B[lt + i2 * n * n] = b[i2];
  }
}

/* 3D stage 2, after a barrier: direction 1 from A and B, aa = M1 a and
 * t = c0 M1 b + c1 S1 a, then direction 2 in registers:
 * v[i2] = (M2 t)_i2 + c2 (S2 aa)_i2. */
SFG_HD void fea_sf_gpu_stage2_3d(int n, int lt, const fea_sf_gpu_element *el, const double *A,
                                 const double *B, double *v) {
  const int i0 = lt % n, i1 = lt / n;
  double aa[SFG_MAX_N], t[SFG_MAX_N];
  const double *M1 = el->M[1] + i1 * n, *S1 = el->S[1] + i1 * n;
  SFG_UNROLL
  for (int i2 = 0; i2 < n; i2++) {
    double sa = 0.0, ss = 0.0, sb = 0.0;
    SFG_UNROLL
    for (int j = 0; j < n; j++) {
      const double av = A[(i2 * n + j) * n + i0], bv = B[(i2 * n + j) * n + i0];
      sa += M1[j] * av;
      ss += S1[j] * av;
      sb += M1[j] * bv;
    }
    aa[i2] = sa;
    t[i2] = el->c[0] * sb + el->c[1] * ss;
  }
  const double *M2 = el->M[2], *S2 = el->S[2];
  SFG_UNROLL
  for (int i2 = 0; i2 < n; i2++) {
    double sm = 0.0, ss = 0.0;
    SFG_UNROLL
    for (int j = 0; j < n; j++) {
      sm += M2[i2 * n + j] * t[j];
      ss += S2[i2 * n + j] * aa[j];
    }
    v[i2] = sm + el->c[2] * ss;
  }
}

#endif
