/* The Kronecker operator: the reduced Poisson operator of a B-spline space on
 * an axis-aligned box, applied at the level of the whole patch from the 1D
 * stiffness and mass matrices of its directions (src/matfree/kron/).
 *
 * On a box with a constant sigma the stiffness matrix is exactly the
 * Kronecker sum  A = sigma (K0 x M1 x M2 + M0 x K1 x M2 + M0 x M1 x K2)  of
 * the 1D matrices (direction 0 acting on the fastest index), each banded
 * with half-bandwidth p. Applying it direction by direction costs about
 * 14 (2p + 1) flops per DoF in 3D (70 at p = 2) and moves x and y once,
 * where element-wise sum factorization repeats each B-spline DoF's work in
 * the (p + 1)^d elements that share it (issue #40; the IGA literature's
 * patch-level sum factorization, here without quadrature points because the
 * box makes every 1D integral a band matrix computed once). Dirichlet sides
 * drop the end functions of a direction, so the free DoFs stay a tensor
 * product and the reduced operator keeps the structure.
 *
 * Three parts: this state and its setup (kron-setup.c: the 1D matrices, the
 * tensor check of the free DoFs, the operator's table), and the kernels per
 * instruction set (kron-body.h in kron-isa-{base,avx2,avx512}.c). */
#ifndef FEA_MATFREE_KRON_H
#define FEA_MATFREE_KRON_H

#include <stddef.h>

#include "disc/problem.h"

struct fea_operator;
struct fea_kron_isa;

typedef struct fea_kron_state {
  int dim;
  fea_index n[3]; /* free functions per direction (the reduced 1D size) */
  int p[3];       /* half-bandwidth of direction k's matrices */
  /* Band tables of the reduced 1D matrices: entry (i, i + o) at
   * B[(o + p) n + i], zero where i + o is outside [0, n). sigma is folded
   * into direction 0's pair. */
  double *K[3], *M[3];
  fea_index num_free; /* n0 n1 n2 */
  int threads;        /* work buffers were made for this many */
  double *work;       /* threads x (4 planes of n0 n1 in 3D, 2 rows of n0 in 2D) */
  const struct fea_kron_isa *isa;
  double flops; /* of one apply */
} fea_kron_state;

/* Linear elasticity on the same boxes (kron-elastic.c): with u = phi_j e_d
 * and v = phi_i e_c the stiffness is lambda d_c phi_i d_d phi_j +
 * mu (delta_cd grad phi_i . grad phi_j + d_d phi_i d_c phi_j), so each block
 * A_cd is a sum of Kronecker products of the 1D matrices K, M, G (G(i, j) =
 * int phi_i' phi_j, the test function differentiated) and G^T: on the
 * diagonal (lambda + 2 mu) K_c + mu sum_(k != c) K_k (M elsewhere), off it
 * lambda G_c G^T_d + mu G^T_c G_d. Every component must have the same free
 * functions (clamped or loaded sides; a roller fixes one component and
 * keeps the element-wise kernel). */
enum { FEA_KRON_K = 0, FEA_KRON_M = 1, FEA_KRON_G = 2, FEA_KRON_GT = 3 };
#define FEA_KRON_MAX_TERMS 21 /* 3D: 3 x 3 diagonal, 6 x 2 off-diagonal */

typedef struct fea_kron_term {
  int c, d;    /* output and input component */
  int op[3];   /* per direction: FEA_KRON_K, _M, _G or _GT */
  double *B0;  /* direction 0's band of op[0], times the term's coefficient */
  double coef; /* lambda + 2 mu, mu or lambda */
} fea_kron_term;

typedef struct fea_kron_elastic {
  int dim, ncomp;
  fea_index n[3]; /* free functions per direction, alike for every component */
  int p[3];
  double *B[3][4]; /* per direction the reduced bands of K, M, G, G^T */
  fea_index N;     /* free nodes n0 n1 n2; num_free = ncomp N */
  int nterms;      /* terms grouped by output component, in order */
  fea_kron_term term[FEA_KRON_MAX_TERMS];
  int threads;
  double *xs, *ys; /* component-major copies of x and A x (ncomp N each) */
  double *work;    /* per thread: 4 ncomp + 1 planes (3D) or 4 ncomp rows (2D) */
  const struct fea_kron_isa *isa;
  double flops;
} fea_kron_elastic;

/* The Kronecker operator of a mapped patch (kron-mapped.c): a B-spline or
 * NURBS patch with a geometry map whose weights are a tensor product
 * (w_ijk = a_i b_j c_k, always so for a B-spline map), so that the basis
 * B_ijk / W is a product of 1D rational functions B_i / A(xi) ... . The
 * pulled-back coefficients G = sigma det J J^-1 J^-T (and c det J) at the
 * patch's tensor Gauss points are cut into rank-one terms
 * f0(xi) f1(eta) f2(zeta) by cross approximation (kron-lowrank.c), each
 * term a Kronecker product of 1D band matrices (the 1D integrals of f_k
 * times the rational functions or their derivatives). Terms sharing their
 * last directions' matrices share their passes: the last direction's
 * distinct matrices C_c act first, then per group j the pair (B_j, C_c(j))
 * in direction 1 (3D), and direction 0 sums the groups' bands A_j, each
 * the sum of its terms' bands. A separable map (annulus, ring, cylinder:
 * G diagonal with rank-one entries) gives the box's structure; the
 * operator equals the assembled matrix up to rank_error relative to the
 * coefficients' size. */
#define FEA_KRON_MAPPED_MAX_TERMS 48
#define FEA_KRON_MAPPED_MAX_RANK 8 /* per cut of an unfolding */

typedef struct fea_kron_mapped {
  int dim;
  fea_index n[3]; /* free functions per direction */
  int p[3];
  int nc;                                     /* matrices of the last direction */
  int ng;                                     /* groups (3D); 2D: nc; 1D: 1 */
  const double *C[FEA_KRON_MAPPED_MAX_TERMS]; /* last direction, reduced bands */
  const double *B[FEA_KRON_MAPPED_MAX_TERMS]; /* 3D: group j's direction-1 band */
  int cof[FEA_KRON_MAPPED_MAX_TERMS];         /* 3D: group j's C */
  const double *A[FEA_KRON_MAPPED_MAX_TERMS]; /* group j's direction-0 band */
  double *bands;                              /* the block holding every band */
  fea_index num_free;
  int nterms;        /* rank-one terms over all coefficients (a pair counted twice) */
  double rank_error; /* bound on the largest coefficient error, relative */
  int threads;
  double *work; /* per thread: nc + ng planes (3D), nc rows (2D) */
  const struct fea_kron_isa *isa;
  double flops;
  /* The same terms over every function (no Dirichlet reduction): the
   * lifting of the Dirichlet values in the right-hand side. */
  struct fea_kron_mapped *full;
} fea_kron_mapped;

/* y = A x, or y += A x (add), on at most `threads` (<= s->threads) threads. */
typedef void (*fea_kron_apply_fn)(const fea_kron_state *s, const double *x, double *y, int add,
                                  int threads);
/* The same for elasticity on component-major xs -> ys (ncomp N each). */
typedef void (*fea_kron_elastic_fn)(const fea_kron_elastic *e, const double *xs, double *ys,
                                    int threads);

typedef struct fea_kron_isa {
  const char *name;
  int (*available)(void);
  fea_kron_apply_fn apply;
  fea_kron_elastic_fn elastic;
  void (*mapped)(const fea_kron_mapped *s, const double *x, double *y, int add, int threads);
} fea_kron_isa;

extern const fea_kron_isa fea_kron_isa_baseline, fea_kron_isa_avx2, fea_kron_isa_avx512;

/* Whether the Kronecker operator serves pb: the conditions of the box sum
 * factorization (constant sigma, no reaction, Robin side or user form,
 * axis-aligned box), a B-spline space without a geometry map, and free DoFs
 * that are a tensor product numbered lexicographically. Else 0 and the
 * reason in why. */
int fea_kron_supports(const fea_problem *pb, char *why, size_t len);

/* The state for pb (supported) with the named instruction set (NULL: the
 * best this CPU runs; FEA_ERR_UNSUPPORTED where it does not run the named
 * one) and work buffers for `threads` threads. */
fea_status fea_kron_create_with(const fea_problem *pb, const char *isa, int threads,
                                fea_kron_state **out);
void fea_kron_destroy(fea_kron_state *s);

/* diag(A), num_free entries. */
void fea_kron_diagonal(const fea_kron_state *s, double *d);
/* Entry (i, j) of a band table (the layout above) of half-width p over n
 * functions, 0 outside the band. */
static inline double fea_kron_band_at(const double *B, int p, fea_index n, fea_index i,
                                      fea_index j) {
  const fea_index o = j - i;
  return o < -p || o > p ? 0.0 : B[(size_t)(o + p) * (size_t)n + (size_t)i];
}
/* The dense m x m block (column-major) of the rows (reduced indices). */
void fea_kron_block(const fea_kron_state *s, const fea_index *rows, int m, double *M);

/* The operator's implementation (op->problem set, supported): fills
 * op->impl, op->data and the info's kind, strategy, kernel and costs. */
fea_status fea_operator_kron_build(struct fea_operator *op);

/* Shared by the scalar and the elastic setup (kron-setup.c): functions of
 * direction k; its 1D stiffness K, mass M and, unless NULL, G (G(i, j) =
 * int phi_i' phi_j) over the whole knot vector in band storage of half-width
 * p over n functions, with the problem's Gauss rule per span, physical
 * coordinates; the band restricted to the free functions red (reduced index
 * or -1) of m, half-width p (dropping functions only shortens a band). */
fea_index fea_kron_dir_size(const fea_space *s, int k);
/* The instruction set by name (NULL: the best this CPU runs), or NULL where
 * this CPU does not run it. */
const fea_kron_isa *fea_kron_find_isa(const char *name);
/* red[k][i]: the reduced index of function i of direction k over the nodes
 * of which every component is free, or -1; m[k] the reduced sizes. 1 when
 * the free DoFs are exactly those nodes' components, numbered c + ncomp r
 * with r the node's lexicographic reduced index (direction 0 fastest), as
 * the problem's reduced rows (a scalar space: the free functions in order). */
int fea_kron_tensor_free_set(const fea_problem *pb, fea_index *red[3], fea_index m[3]);
fea_status fea_kron_assemble_1d(const fea_problem *pb, int k, double *K, double *M, double *G);
void fea_kron_reduce_band(int p, fea_index n, const fea_index *red, fea_index m, const double *B,
                          double *R);

/* Elasticity (kron-elastic.c): whether it serves pb (a B-spline box, a
 * constant isotropic material, no spring side, every component with the
 * same tensor-product free set); the state with the named instruction set;
 * the diagonal; the operator's implementation. */
int fea_kron_elastic_supports(const fea_problem *pb, char *why, size_t len);
fea_status fea_kron_elastic_create_with(const fea_problem *pb, const char *isa, int threads,
                                        fea_kron_elastic **out);
void fea_kron_elastic_destroy(fea_kron_elastic *e);
void fea_kron_elastic_apply(const fea_kron_elastic *e, const double *x, double *y, int add,
                            int threads);
void fea_kron_elastic_diagonal(const fea_kron_elastic *e, double *d);
fea_status fea_operator_kron_elastic_build(struct fea_operator *op);

/* Mapped patches (kron-mapped.c): whether the operator serves pb (the
 * built-in Laplacian with a constant sigma and reaction, no Robin side, a
 * geometry map with tensor-product weights, a tensor-product free set);
 * the state (FEA_ERR_UNSUPPORTED with the reason in why, and no error set,
 * when a coefficient needs more rank-one terms than the caps allow); the
 * diagonal; the operator's implementation (the same UNSUPPORTED case
 * leaves op untouched for the element-wise kernel). */
int fea_kron_mapped_supports(const fea_problem *pb, char *why, size_t len);
fea_status fea_kron_mapped_create_with(const fea_problem *pb, const char *isa, int threads,
                                       char *why, size_t len, fea_kron_mapped **out);
void fea_kron_mapped_destroy(fea_kron_mapped *s);
void fea_kron_mapped_diagonal(const fea_kron_mapped *s, double *d);
/* The dense m x m block (column-major) of the rows (reduced indices). */
void fea_kron_mapped_block(const fea_kron_mapped *s, const fea_index *rows, int m, double *M);
fea_status fea_operator_kron_mapped_build(struct fea_operator *op, char *why, size_t len);

/* The 1D tables of a mapped patch's direction at its Gauss points (the
 * elements' rule points in order), shared by the operator and its load. */
typedef struct fea_kron_dir_tables {
  fea_index m;      /* points: elements x nq */
  int p, pg;        /* space and geometry degree */
  double *w;        /* m: the Gauss weight times the span's length */
  fea_index *first; /* m: the first space function non-zero at the point */
  double *phi;      /* m x 2 (p + 1): B_i / A, then its derivative */
  fea_index *gfirst;
  double *r; /* m x 2 (pg + 1): a_i N_i / A, then its derivative (the geometry's basis) */
} fea_kron_dir_tables;
struct fea_geometry_map;
/* fac[k][i]: the NURBS weights' factor of direction k (w_ijk = fac0_i
 * fac1_j fac2_k; all 1 for a B-spline map), or 0 when they are not a
 * product. */
int fea_kron_weight_factors(const struct fea_geometry_map *g, double *fac[3]);
fea_status fea_kron_tables_build(const fea_problem *pb, int k, const double *fac,
                                 fea_kron_dir_tables *t);
void fea_kron_tables_free(fea_kron_dir_tables *t);
/* The map at every Gauss point of the patch (t's points), row by row: for
 * each (q1, q2) row(user, thread, q1, q2, x, J) with x (m0 x dim, filled
 * when want_x) and J (m0 x dim^2, row-major dx_c / dxi_d). A nonzero
 * return stops the sweep (the rows under way finish); the sweep returns the
 * first one, -2 without memory, 0 when every row ran. */
typedef int (*fea_kron_row_fn)(void *user, int thread, fea_index q1, fea_index q2, const double *x,
                               const double *J);
int fea_kron_geometry_sweep(const struct fea_geometry_map *g, const fea_kron_dir_tables *t, int dim,
                            int want_x, int threads, fea_kron_row_fn row, void *user);
/* The reduced right-hand side of pb on the mapped operator s (kron-mapped-load.c):
 * the load by sum factorization over the patch's Gauss points minus the
 * lifting A g of the Dirichlet values by s's full-size twin.
 * FEA_ERR_UNSUPPORTED (no error set) with a Neumann flux (face terms): the
 * element-wise right-hand side serves. */
fea_status fea_kron_mapped_rhs(const fea_problem *pb, const fea_kron_mapped *s, int threads,
                               double *b);

/* Cross approximation with complete pivoting (kron-lowrank.c) of the m x n
 * matrix R (column-major, overwritten by the residual): R ~ sum_r u_r v_r^T
 * with u_r in U (m each) and v_r in V (n each), until the largest residual
 * entry is <= tol. The rank, or -1 when max_rank terms do not reach tol;
 * *error the largest residual entry. */
int fea_kron_cross_approx(double *R, fea_index m, fea_index n, double tol, int max_rank,
                          int threads, double *U, double *V, double *error);

#endif
