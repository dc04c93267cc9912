/* The multigrid object, shared by its translation units only (and the
 * unit tests): the hierarchy (src/multigrid/hierarchy.c; B-spline and NURBS
 * levels in hierarchy-bspline.c), the smoothers (smoother.c; the Schwarz
 * blocks of B-spline levels in smoother-schwarz.c) and the cycles, the
 * iterations and the object's life cycle (cycle.c). */
#ifndef FEA_INTERNAL_MULTIGRID_IMPL_H
#define FEA_INTERNAL_MULTIGRID_IMPL_H

#include "linalg/matrix.h"
#include "internal/multigrid-kernels.h"
#include "multigrid.h"
#include "matfree/operator.h"

/* The highest Lagrange order of the p-transfer's sweeps (disc/lagrange.h's). */
#define FEA_MG_PGRID_MAX_ORDER 6

/* A coarsest level is factored densely up to this many free DoFs (a
 * 512 MiB factor); beyond, the mesh must coarsen further. */
#define FEA_MG_MAX_COARSE_DOFS 8192

/* Vector loops go parallel from this length on (below, a team costs more
 * than the loop). */
#define FEA_MG_PARALLEL_MIN 8192

typedef struct fea_mg_schwarz fea_mg_schwarz;     /* smoother-schwarz.c */
typedef struct fea_mg_blocks fea_mg_blocks;       /* smoother-block.c */
typedef struct fea_mg_pgrid fea_mg_pgrid;         /* transfer-p.c */
typedef struct fea_mg_ktransfer fea_mg_ktransfer; /* transfer-bspline.c */

typedef struct fea_mg_level {
  fea_problem *problem; /* owned: the level's problem (level 0: a copy of the caller's) */
  fea_index cells[3];   /* cells per direction (1 beyond dim) */
  fea_index n;          /* free DoFs */
  fea_operator *op;     /* every level with free DoFs but a factored coarsest */
  double *dinv;        /* 1 / diag(A) where the smoother scales by it, else NULL (mg->k's memory) */
  double lambda_max;   /* the smoothed operator's (A or D^-1 A), smoothing levels */
  fea_matrix *P, *PT;  /* prolongation from level + 1 and its transpose (NULL on the
                            coarsest, when level + 1 has no free DoFs, or with grid) */
  void *Pk, *PTk;      /* the same in mg->k's memory (matrix_create) */
  int grid;            /* the transfers to level + 1 are grid sweeps (transfer-grid.c; host) */
  fea_mg_pgrid *pgrid; /* with grid on a Q_p level: the p-transfer's sweeps (transfer-p.c) */
  fea_mg_ktransfer *ktrans; /* with grid on a B-spline level: Kronecker knot insertion */
  int stencil;   /* the operator comes from the level's stencil: 1 CSR written from it, 2 the
                  matrix-free sweep (level-stencil-op.c); 0 built by fea_operator_build */
  double *b, *x; /* levels > 0: right-hand side and correction of the cycle */
  double *r, *w; /* residual and smoother work */
  fea_mg_schwarz *schwarz; /* the Schwarz smoother's blocks (B-spline levels), else NULL */
  fea_mg_blocks *blocks;   /* node-block Jacobi (vector levels, Chebyshev), else NULL */
} fea_mg_level;

struct fea_mg {
  fea_context *ctx;        /* holds a reference */
  const fea_mg_kernels *k; /* the vector kernels of ctx's memory; every level array is in it */
  fea_multigrid_desc desc;
  int num_levels;
  fea_mg_level *levels; /* num_levels, 0 the finest */
  int bspline;          /* a B-spline / NURBS hierarchy (hierarchy-bspline.c) */
  double *coarse_chol;  /* n x n lower Cholesky factor of the coarsest level, or NULL (host) */
  double *coarse_rhs;   /* n: the coarse solve's right-hand side on the host */
  fea_vector *vb, *vx;  /* the finest level's b and x as vectors, for CG */
  double *res, *corr;   /* finest: residual and correction of the stationary iteration */
  double *db, *dx;      /* finest: b and x in the kernels' memory when it is not the host's */
  fea_multigrid_stats stats;
  fea_mg_setup_phases phases; /* of the setup that built this object */
};

/* fea_mg_create with a chosen kernel table (tests: a table with host = 0
 * over host memory runs a host context's multigrid the way a device runs
 * it: level operators by fea_operator_create, CSR transfers, every host
 * copy through upload and download). */
fea_status fea_mg_create_with(fea_context *ctx, const fea_problem *problem,
                              const fea_multigrid_desc *desc, const fea_mg_kernels *k,
                              fea_mg **out);

/* The checks of fea_mg_create on desc (cycle.c). */
fea_status fea_mg_check_desc(fea_context *ctx, const fea_multigrid_desc *desc);
/* After the levels, operators, smoothers and coarse factor: the finest
 * level's work vectors and the stats (setup_s from t0, omp_get_wtime). */
fea_status fea_mg_finish(fea_mg *mg, double t0);

/* ---- hierarchy (hierarchy.c) ---- */

/* FEA_ERR_UNSUPPORTED naming the space or mesh unless the problem is on a
 * Lagrange space of a 2D or 3D structured mesh: Q_p on quadrilaterals or
 * hexahedra, P1 on simplices, scalar or with components (elasticity); or a
 * scalar B-spline patch. */
fea_status fea_mg_check_problem(fea_context *ctx, const fea_problem *problem);

/* Levels (problems, cells, free DoFs) and transfers into mg->levels and
 * mg->num_levels, coarsening while every direction keeps an even count and at
 * least coarsest_cells cells after halving. Operators are not built here. */
fea_status fea_mg_hierarchy_build(fea_mg *mg, const fea_problem *problem);
void fea_mg_hierarchy_free(fea_mg *mg);

/* P: coarse free DoFs -> fine free DoFs of two order-1 Lagrange problems on
 * structured meshes of the same box, coarse with half the cells of fine per
 * direction: the coarse functions' values at the fine vertices. */
fea_status fea_mg_prolongation(fea_context *ctx, const fea_problem *fine, const fea_problem *coarse,
                               fea_matrix **P);

/* Add (j, w) to a prolongation row of count entries kept sorted by column
 * (rows have at most 8 entries: insertion); returns the new count. */
static inline int fea_mg_row_insert(fea_index *col, double *val, int count, fea_index j, double w) {
  int at = count;
  while (at > 0 && col[at - 1] > j) {
    col[at] = col[at - 1];
    val[at] = val[at - 1];
    at--;
  }
  col[at] = j;
  val[at] = w;
  return count + 1;
}

/* P: Q1 free DoFs -> Q_p free DoFs of two problems on the same
 * quadrilateral or hexahedral mesh (transfer-p.c): the Q1 functions' values
 * at the Q_p nodes. */
fea_status fea_mg_p_prolongation(fea_context *ctx, const fea_problem *fine,
                                 const fea_problem *coarse, fea_matrix **P);

/* The same transfer as grid sweeps (transfer-p.c) where every free DoF of
 * both levels is an interior grid node (a box with Dirichlet data on the
 * whole boundary, one component): the 1D rule's nodes and the fine grid's
 * free DoFs. */
struct fea_mg_pgrid {
  int dim, p;
  fea_index N[3];                         /* cells per direction (1 beyond dim) */
  double x1d[FEA_MG_PGRID_MAX_ORDER + 1]; /* the Q_p reference nodes */
  fea_index *perm; /* fine interior grid position (direction 0 fastest) -> free DoF */
};
/* *out NULL (and FEA_SUCCESS) where the levels are not of that shape. */
fea_status fea_mg_pgrid_build(fea_context *ctx, const fea_problem *fine, const fea_problem *coarse,
                              fea_mg_pgrid **out);
void fea_mg_pgrid_free(fea_mg_pgrid *g);
/* xf += P xc, and bc = P^T rf, on that many threads. */
void fea_mg_pgrid_prolong(const fea_mg_pgrid *g, int threads, const double *xc, double *xf);
void fea_mg_pgrid_restrict(const fea_mg_pgrid *g, int threads, const double *rf, double *bc);

/* ---- B-spline and NURBS hierarchies (hierarchy-bspline.c; more in multigrid.h) ---- */

/* 1 when the problem's space is a B-spline (or NURBS) space. */
int fea_mg_is_bspline(const fea_problem *pb);
/* FEA_ERR_UNSUPPORTED naming it unless a 2D or 3D single-patch Poisson problem. */
fea_status fea_mg_bspline_check(fea_context *ctx, const fea_problem *pb);

/* ---- B-spline transfers as Kronecker products (transfer-bspline.c) ---- */

/* The knot-insertion transfer from coarse to fine as T2 (x) T1 (x) T0
 * restricted to free functions, or *out = NULL where either level's free
 * DoFs are not a tensor product (the CSR P serves). */
fea_status fea_mg_ktransfer_build(fea_context *ctx, const fea_problem *fine,
                                  const fea_problem *coarse, fea_mg_ktransfer **out);
void fea_mg_ktransfer_free(fea_mg_ktransfer *t);
uint64_t fea_mg_ktransfer_bytes(const fea_mg_ktransfer *t);
/* xf += P xc; bc = P^T rf. */
void fea_mg_ktransfer_prolong(const fea_mg_ktransfer *t, int threads, const double *xc, double *xf);
void fea_mg_ktransfer_restrict(const fea_mg_ktransfer *t, int threads, const double *rf,
                               double *bc);

/* ---- the overlapping Schwarz smoother (smoother-schwarz.c) ---- */

/* The blocks of level `level` of B-spline problem pb from its operator's
 * entries (fea_operator_block: CSR or Kronecker levels): boxes of p + 1
 * coefficients per direction, every fea_mg_schwarz_stride(p) coefficients,
 * their dense inverses. */
fea_status fea_mg_schwarz_setup(fea_context *ctx, const fea_problem *pb, const fea_operator *op,
                                int level, fea_mg_schwarz **out);
/* The same over blocks given as lists of the level's free rows (block i:
 * dofs[ptr[i] .. ptr[i + 1]), increasing, at most (p + 1)^3 of the highest
 * degree); A is n x n. Blocks may share DoFs anywhere: they are colored
 * here. */
fea_status fea_mg_schwarz_setup_lists(fea_context *ctx, fea_index n, const fea_matrix *A,
                                      fea_index nblocks, const fea_index *ptr,
                                      const fea_index *dofs, int level, fea_mg_schwarz **out);
void fea_mg_schwarz_free(fea_mg_schwarz *s);
uint64_t fea_mg_schwarz_bytes(const fea_mg_schwarz *s);
/* The block stride for degree p. */
int fea_mg_schwarz_stride(int p);
/* lambda_max of M^-1 A (CG-Lanczos, from below). */
fea_status fea_mg_schwarz_lambda_max(fea_context *ctx, const fea_mg_schwarz *s, fea_operator *op,
                                     fea_index n, int level, double *lambda_max);
/* Chebyshev of that degree in M^-1 A on level l (as the Jacobi one, zero: x = 0 on entry). */
fea_status fea_mg_schwarz_chebyshev(const fea_mg *mg, int l, const double *b, double *x, int degree,
                                    int zero);

/* ---- node-block Jacobi (smoother-block.c) ---- */

/* The Cholesky factors L L^T = D of the node blocks of level l's operator
 * (the free components of each node; host levels of a vector space), from
 * its CSR matrix or by probing a matrix-free one. A block that is not
 * positive definite is FEA_ERR_NOT_POSDEF naming the level and its rows. */
fea_status fea_mg_blocks_setup(const fea_mg *mg, int l, fea_mg_blocks **out);
void fea_mg_blocks_free(fea_mg_blocks *b);
uint64_t fea_mg_blocks_bytes(const fea_mg_blocks *b);
/* z = D^-1 r. */
void fea_mg_blocks_solve(const fea_mg_blocks *b, const double *r, double *z);
/* y = L^-1 x (transpose 0) or L^-T x (transpose 1); y may be x. */
void fea_mg_blocks_half(const fea_mg_blocks *b, int transpose, const double *x, double *y);
/* The blocks' work vector of the level's length (the smoother's D^-1 r). */
double *fea_mg_blocks_scratch(const fea_mg_blocks *b);

/* ---- level matrices on structured meshes (level-stencil.c) ---- */

/* 1 when fea_mg_stencil_system can build pb's matrix: order-1 Lagrange on a
 * structured box mesh (not mapped) of quadrilaterals or hexahedra, constant
 * sigma, no Neumann or Robin side. */
int fea_mg_stencil_applies(const fea_problem *pb);

/* pb's reduced stiffness matrix (the pattern and, up to rounding, the
 * values of its assembly) from the one element matrix its translated cells
 * share, rows on the context's threads, and unless b is NULL its reduced
 * right-hand side (load minus the lifting of the Dirichlet values, equal to
 * the assembly's up to rounding; a non-finite f is FEA_ERR_INVALID_ARG
 * naming the point). *A NULL (and FEA_SUCCESS, b untouched) where the
 * stencil does not apply, and the caller assembles instead. */
fea_status fea_mg_stencil_system(fea_context *ctx, const fea_problem *pb, fea_matrix **A,
                                 double *b);

/* The 3^dim weights of an interior vertex's row (w[t] for the offset t in
 * {-1, 0, 1}^dim, direction 0 fastest) where every free row is one (the
 * stencil applies and every boundary vertex is Dirichlet), and unless b is
 * NULL the reduced right-hand side as above; *usable 0 (nothing written)
 * elsewhere. */
fea_status fea_mg_stencil_weights(fea_context *ctx, const fea_problem *pb, double w[27], double *b,
                                  int *usable);

/* A matrix-free operator for such a level (level-stencil-op.c): y = A x by
 * the weights over the grid of interior vertices, Dirichlet neighbours
 * dropped; rhs (num_free, may be NULL) is its right-hand side. */
fea_status fea_mg_stencil_operator(fea_context *ctx, const fea_problem *pb, const double w[27],
                                   const double *rhs, fea_operator **out);
/* 1 and the exact largest eigenvalue of A (scaled 0) or D^-1 A (scaled 1)
 * when op is such a stencil operator; 0 (nothing written) otherwise. */
int fea_mg_stencil_operator_lambda_max(const fea_operator *op, int scaled, double *lambda_max);

/* ---- transfers by grid sweeps (transfer-grid.c) ---- */

/* 1 when the fine and coarse levels are boxes of quadrilaterals or hexahedra
 * with Dirichlet data on the whole boundary, the fine one with twice the
 * coarse one's cells: their transfers are tensor sweeps of the 1D rule. */
int fea_mg_grid_transfer_applies(const fea_problem *fine, const fea_problem *coarse);
/* xf += P xc, and bc = P^T rf, between levels l and l + 1 (grid set). */
void fea_mg_grid_prolong(const fea_mg *mg, int l, const double *xc, double *xf);
void fea_mg_grid_restrict(const fea_mg *mg, int l, const double *rf, double *bc);

/* ---- smoothers (smoother.c) ---- */

/* The exact largest eigenvalue of D^-1 A (scaled 1) or A (scaled 0) of a Q2
 * problem on a box with a constant coefficient and Dirichlet data on the
 * whole boundary, from its Fourier symbol (smoother-symbol.c); *usable 0
 * (nothing written) where that does not apply. exhaustive 1: every frequency
 * (tests), else a lattice and an ascent beyond 4096 of them. */
fea_status fea_mg_symbol_lambda_max(const fea_problem *pb, int scaled, int exhaustive,
                                    double *lambda_max, int *usable);
/* Where that applies and g is the level's p-transfer grid: diag(A) of
 * every free DoF, an interior node's by its type (the symbol's D; equal to
 * the operator's diagonal up to the order of the additions). */
fea_status fea_mg_symbol_diagonal(const fea_problem *pb, const fea_mg_pgrid *g, double *diag,
                                  int *usable);

/* Diagonals and eigenvalue estimates of the smoothing levels; refuses an
 * unstable Richardson omega (FEA_ERR_INVALID_ARG naming level, omega and
 * lambda_max). */
fea_status fea_mg_smoother_setup(fea_mg *mg);

/* steps smoothing steps (Chebyshev: one polynomial of that degree) on A_l x = b;
 * zero: x is taken as 0 on entry (and need not be set). */
fea_status fea_mg_smooth(const fea_mg *mg, int l, const double *b, double *x, int steps, int zero);

/* r = b - A_l x. */
fea_status fea_mg_residual(const fea_mg *mg, int l, const double *b, const double *x, double *r);

#endif
