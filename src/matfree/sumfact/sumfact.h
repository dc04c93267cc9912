/* Sum-factorization kernel: what its translation units share.
 *
 * sumfact.c           the fea_matfree_kernel_ops table (supports, gather, scatter, cost)
 * sumfact-setup.c     the 1D tables and geometry factors built at create
 * sumfact-diagonal.c  diag(K_e) from 1D sums
 * sumfact-isa-*.c     the batch kernels, one file per instruction set, all made
 *                     from sumfact-body.h
 * sumfact-lines-gen.h fused line batches of structured-mesh layouts, generated
 *                     by tools/gen-sumfact-lines.c
 *
 * A batch kernel works on W elements at once, one per SIMD lane: every array
 * it sees is structure-of-arrays, entry j of lane l at [j * W + l]. */
#ifndef FEA_MATRIXFREE_SUMFACT_H
#define FEA_MATRIXFREE_SUMFACT_H

#include "matfree-kernel.h"

#define SF_MAX_N 9        /* points or functions per direction in the instantiated kernels: p <= 8 */
#define SF_MAX_LANES 8
#define SF_ALIGN 64       /* bytes; every lane array starts on this */
#define SF_MAX_PF 96      /* prefetched windows per line batch at most */
#define SF_PF_AHEAD 2     /* line batches ahead that the prefetches reach */
#define SF_MAX_TILES 64   /* tiles of a line batch at most */
#define SF_TILE_MAX_ST 16 /* the largest stride of a tile */
#define SF_MAX_BLOCKS 8   /* transposed blocks of a line batch at most */
#define SF_GLINE_MAX_OFF 64 /* offsets a generated line batch reads at most (sf_state.goff) */
#define SF_TAIL 0x80      /* sf_state.line_ok: the element is in a batch that starts before it */

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
typedef struct sf_batch {
  int dim;
  int n[3];                /* basis functions per direction (p_k + 1) */
  const double *T[SF_NTAB];/* the lane tables the dimension uses (others NULL) */
  const double *x;         /* nb lane inputs */
  double *y;               /* nb lane outputs */
  double *work;            /* sf_work_vectors() lane vectors */
} sf_batch;

typedef void (*sf_kernel_fn)(const sf_batch *b);

struct sf_state;
/* Line batches (see sf_state.line_ok): X = the lanes of the batch whose
 * first element's free-row class bases are base; the scatter adds Y into y. */
typedef void (*sf_line_gather_fn)(const struct sf_state *s, const fea_index *base,
                                  const double *x, double *X);
typedef void (*sf_line_scatter_fn)(const struct sf_state *s, const fea_index *base,
                                   const double *Y, double *y);
/* Boundary line batches: rows[i] is the free row of DoF i in the first
 * lane (-1: Dirichlet in every lane, read as zero and never written),
 * rows[nb + i] its step from one lane to the next. */
typedef void (*sf_bline_gather_fn)(const struct sf_state *s, const fea_index *rows,
                                   const double *x, double *X);
typedef void (*sf_bline_scatter_fn)(const struct sf_state *s, const fea_index *rows,
                                    const double *Y, double *y);
/* Fused line batches (sf_state.qline): gather from x, kernel, and add into
 * y in one, for the line batch whose one class base is base; the first
 * skip lanes read as zero. */
typedef void (*sf_qline_fn)(const struct sf_state *s, fea_index base, int skip, const double *x,
                            double *y);

/* Generated fused line batches (sf_state.gline): the same with the class
 * bases of the batch's first element. */
typedef void (*sf_gline_fn)(const struct sf_state *s, const fea_index *base, int skip,
                            const double *x, double *y);

/* The line layout that a generated fused line batch serves (sf_state.gline;
 * sumfact-lines-gen.h): the state's free classes, chains, tiles, blocks
 * and singles without their offsets, which the generated code reads from
 * the state. */
typedef struct sf_line_sig {
  int dim, n, nfclass;
  int lstride[SF_MAX_N * SF_MAX_N * SF_MAX_N];
  int fcls[SF_MAX_N * SF_MAX_N * SF_MAX_N];
  int nchain;
  int chain_start[SF_MAX_N * SF_MAX_N * SF_MAX_N + 1];
  int chain_dof[SF_MAX_N * SF_MAX_N * SF_MAX_N];
  int ntile;
  int tile_cls[SF_MAX_TILES], tile_st[SF_MAX_TILES], tile_full[SF_MAX_TILES];
  short tile_sdof[SF_MAX_TILES][2 * SF_TILE_MAX_ST];
  unsigned char tile_lmask[SF_MAX_TILES][SF_TILE_MAX_ST];
  int nblock;
  int block_cls[SF_MAX_BLOCKS], block_st[SF_MAX_BLOCKS], block_m[SF_MAX_BLOCKS];
  short block_dof[SF_MAX_BLOCKS][SF_MAX_N * SF_MAX_N * SF_MAX_N];
  short block_next[SF_MAX_BLOCKS][SF_MAX_N * SF_MAX_N * SF_MAX_N];
  int nsingle;
  int single_dof[SF_MAX_N * SF_MAX_N * SF_MAX_N];
  int noff;                      /* the offsets the code reads, sf_state.goff: */
  int off_src[SF_GLINE_MAX_OFF]; /* >= 0: foff[src]; -1 .. -SF_MAX_TILES: tile_off[-(src + 1)];
                                    below: block_off[-(src + 1) - SF_MAX_TILES] */
} sf_line_sig;

/* DoFs added or loaded lane by lane (sf_state.sg, .ss). */
typedef struct sf_singles {
  int n;
  int dof[SF_MAX_N * SF_MAX_N * SF_MAX_N];      /* by stride */
  int nrun;                                     /* runs of equal stride */
  int run_start[SF_MAX_N * SF_MAX_N * SF_MAX_N + 1];
  int run_st[SF_MAX_N * SF_MAX_N * SF_MAX_N];
} sf_singles;

/* Strides of the tiles (sf_state.tile_*): the line kernels' constants. */
static inline int sf_tile_stride(int st) {
  return st == 2 || st == 3 || st == 4 || st == 5 || st == 6 || st == 8 || st == 9 || st == 12 ||
         st == 16;
}

/* The kernels of one instruction set. fixed[dim - 1][N] serves n_k = N in
 * every direction (p = N - 1 = 1..8; the quadrature rule is folded into the
 * tables, so any n_q); generic serves any sizes. */
typedef struct sf_isa {
  const char *name;
  int lanes;
  int (*available)(void);
  sf_kernel_fn fixed[3][SF_MAX_N + 1];
  sf_kernel_fn generic;
  sf_line_gather_fn line_gather;
  sf_line_scatter_fn line_scatter;
  sf_bline_gather_fn bline_gather;
  sf_bline_scatter_fn bline_scatter;
  int tiles;                /* the line gather and scatter serve tiles (sf_state.tile_*) */
  sf_qline_fn qline[3];     /* fused line batches of Q1, by dimension (NULL: none) */
  sf_gline_fn gline[3][SF_MAX_N + 1]; /* generated fused line batches, by dim - 1 and N = p + 1
                                          (NULL: none) */
} sf_isa;

extern const sf_isa fea_sf_isa_baseline;  /* sumfact-isa-base.c: x86-64 baseline / any CPU */
extern const sf_isa fea_sf_isa_avx2;      /* sumfact-isa-avx2.c (x86 only; NULL kernels elsewhere) */
extern const sf_isa fea_sf_isa_avx512;    /* sumfact-isa-avx512.c */

/* Lane vectors of work space a batch of these sizes needs. */
int sf_work_vectors(int dim, const int n[3]);
/* Flops of one element application with these sizes (counted as the kernels run). */
double sf_flops(int dim, const int n[3]);
/* Which lane tables a dimension uses (SF_M0 .. SF_CS0), and into how many. */
int sf_tables_used(int dim, int which[SF_NTAB]);

/* The kernel's state, read-only after create. */
typedef struct sf_state {
  const fea_space *space;
  int dim, nb, nqt;
  int n[3], nq[3];
  int per_span;            /* B-splines: tables and lengths per element index of a direction */
  fea_index nel[3];        /* element indices per direction that have tables (1 when shared) */
  double *tab[3];          /* per direction nel x (M: n x n, then S: n x n), scalars: the
                              1D mass and stiffness matrices on [0, 1] by the Gauss rule */
  double *len[3];          /* per direction nel physical element lengths (the diagonal of J) */
  double w1[3][20];        /* 1D Gauss weights on [0, 1] */
  double *w;               /* nqt tensor weights */
  double sigma;
  double *lane_tab;        /* shared tables (Lagrange): the used SF_* slots as lane vectors,
                              each padded to SF_ALIGN; NULL for per-span tables */
  /* DoF addressing: the element's DoFs fall into classes (the vertices of a
   * structured mesh, each edge, face and interior of a Lagrange cell, all
   * of a B-spline element) whose DoFs keep fixed distances in every
   * element, found at create: DoF i of element e is
   * base[e * nclass + cls[i]] + off[i]. One index per class instead of one
   * per DoF (B-splines, Q1: one per element; 3D Q_p, p >= 2: 20). */
  int nclass;
  fea_index *base;
  int cls[SF_MAX_N * SF_MAX_N * SF_MAX_N];
  int off[SF_MAX_N * SF_MAX_N * SF_MAX_N];
  /* The same for the free rows of the elements whose DoFs are all free
   * (fbase of the others unused): apply_add's gather from and scatter into
   * the reduced vectors themselves. nfclass 0: none such. */
  int nfclass;
  fea_index *fbase;
  int fcls[SF_MAX_N * SF_MAX_N * SF_MAX_N];
  int foff[SF_MAX_N * SF_MAX_N * SF_MAX_N];
  /* Line batches: W elements e0 .. e0 + W - 1 with every DoF free whose
   * free-row class bases advance by a fixed stride per class from one
   * element to the next (consecutive elements along x of a structured mesh
   * or a B-spline patch): lane l of DoF i is then at
   * fbase[e0][fcls[i]] + foff[i] + l * lstride[fcls[i]], so the gather
   * loads lane vectors (unit stride: one unaligned vector load) and the
   * scatter adds them back with vector read-modify-writes instead of
   * W x nb scalar ones. line_ok[e0] says whether e0 starts such a batch
   * (NULL: none does). Unit-stride DoFs of one class at offsets o, o + 1,
   * ..., o + k (the DoFs one element shares with the next along x) form a
   * chain: their lanes overlap shifted by one, so the scatter sums them in
   * registers (lane shifts) into one vector at o and k scalar tail adds,
   * and never adds twice into one entry within a vector. DoFs of stride
   * > 1 go through tiles (below) where the ISA has them, else lane by
   * lane, one DoF after the other (distinct addresses within a DoF, since
   * the stride is not 0). */
  unsigned char *line_ok;   /* 1: such a batch; 2: a boundary line batch (below); SF_TAIL |
                               kind << 4 | skip: in the batch of that kind that starts skip
                               elements before */
  /* Boundary lines: elements with a Dirichlet DoF keep their DoFs' free
   * rows and each row's step to the next element (brow + brow_at[e] * 2 nb:
   * nb rows, nb steps; brow_at -1 for the others). W consecutive such
   * elements with the same Dirichlet DoFs and the same steps form a
   * boundary line batch (line_ok 2), gathered and added DoF by DoF with
   * lane vectors (no chains); only where all of the lanes' free rows are
   * writable (no ownership, or one block owns them: fea_matfree_target). */
  fea_index *brow;
  int *brow_at;
  int lstride[SF_MAX_N * SF_MAX_N * SF_MAX_N];  /* per free class */
  int nchain;                                   /* unit-stride chains */
  int chain_start[SF_MAX_N * SF_MAX_N * SF_MAX_N + 1]; /* into chain_dof */
  int chain_dof[SF_MAX_N * SF_MAX_N * SF_MAX_N];  /* DoFs by chain, offsets increasing */
  /* Tiles (ISAs with tiles): DoFs of one class with stride ST whose offsets
   * lie in [o, o + 2 ST): the ST x W doubles from o hold lane l of the DoF
   * at o + s (slot s) at o + s + ST l, and of the DoF at o + ST + s
   * (slot ST + s: the same entries one lane on, the DoFs one element
   * shares with the next along x) at o + s + ST (l + 1). The gather loads
   * the tile with ST vector loads (masked to the entries the lanes own) and
   * transposes it into slots; a full tile (every slot has a DoF at
   * o + s, so all ST W entries are the lanes' own) is added back as ST
   * vector read-modify-writes of the transposed sums. The DoFs of a tile
   * that is not full are added as singles. */
  int ntile;
  int tile_cls[SF_MAX_TILES], tile_st[SF_MAX_TILES], tile_full[SF_MAX_TILES];
  fea_index tile_off[SF_MAX_TILES];
  unsigned char tile_lmask[SF_MAX_TILES][SF_TILE_MAX_ST]; /* per vector: the lanes' own entries */
  /* The DoF in slot q (0 .. 2 ST - 1) of tile k, or -1. The line kernels
   * run over the slots, ST a constant, so that each slot's vector stays in
   * a register: a loop over the tile's DoFs indexed the slots at run time,
   * which kept them in memory (2D Q3 1.16 - 1.22x, 3D Q2/Q3 1.07x). */
  short tile_sdof[SF_MAX_TILES][2 * SF_TILE_MAX_ST];
  /* Other DoFs of classes with stride > 1, lane by lane: by stride in runs
   * of equal stride. sg: those the gather loads so (not in a tile), ss:
   * those the scatter adds so (not in a full tile). */
  sf_singles sg, ss;
  fea_index line_batches;                       /* elements that start one (for describe) */
  /* Software prefetch of line batches: the cache lines a batch reads and
   * writes, as windows of 8 doubles (by class, offsets from the class base);
   * the gather and scatter touch the same windows SF_PF_AHEAD batches
   * later along the line. */
  int npf;
  int pf_start[SF_MAX_PF];                      /* class c's windows: from pf_start[c] */
  fea_index pf_off[SF_MAX_PF];                  /* includes SF_PF_AHEAD lanes' strides */
  const sf_isa *isa;
  sf_kernel_fn fn;
  int instantiated;
  fea_index scratch;       /* doubles per apply call */
  uint64_t bytes;          /* what the state keeps */
  /* Read by every line batch too: next to isa and fn (desc, cold, moved
   * to the end to make room). */
  sf_qline_fn qline;        /* fused line batches (below); NULL: not this space or ISA */
  int nblock;               /* blocks (below) */
  /* Added after the fields above, not among them, which keep the offsets
   * they had before session 6: inserting the fused batches' fields before
   * isa and fn had made 2D Q3 10 % slower, and the blocks' arrays before sg
   * with pf_start in place of pf_cls 3D Q2/Q3 4 - 6 % (aligned builds, one
   * process; the offsets of what every line batch reads were all that
   * changed, the cause, cache sets or 4K aliasing with the batch arrays,
   * is not known). */
  /* Fused line batches: where the elements' DoFs are one class, all of
   * unit stride, in chains of N = n_0 DoFs along direction 0 with chain c
   * holding the DoFs c N .. c N + N - 1 (Q1 Lagrange on a structured mesh),
   * a line batch's addresses are base + qoff[c] + t + l, so gather, kernel
   * and scatter run as one function with the lanes and results in
   * registers and no per-DoF address look-ups: the separate gather, kernel
   * and scatter spent more instructions on addressing and calls than the
   * kernel on its arithmetic (3D Q1: about 500 per batch of 8 elements). */
  int qoff[SF_MAX_N * SF_MAX_N];
  const double *qtab[SF_NTAB]; /* the shared lane tables, by slot */
  /* Blocks: M >= W DoFs of a class of stride S >= M that no tile serves,
   * at the consecutive offsets o .. o + M - 1 (3D Q4: the 27 interior
   * DoFs, the 27 of the faces at an element's low corner, and the 9 of
   * each face it shares with its y and z neighbours; stride 27): the
   * batch's entries of them are columns 0 .. M - 1 of a W x S row-major
   * matrix from o, lane l's DoF o + j at o + S l + j. The gather loads it W
   * columns at a time (W vector loads, the last group shifted back to
   * M - W so that no load leaves the columns) and transposes each W x W
   * square with two-source shuffles; the scatter transposes the sums back
   * and adds them with W vector read-modify-writes per group, the last
   * group's columns that the one before added zeroed, so that only the
   * batch's own entries are written. Lane by lane these were M gathers and
   * M W scalar read-modify-writes. The class's DoFs at o + S + j, j < M
   * (the ones an element shares with the next along x: 3D Q4's x-faces)
   * are column j one lane on, as in the tiles. */
  int block_cls[SF_MAX_BLOCKS], block_st[SF_MAX_BLOCKS], block_m[SF_MAX_BLOCKS];
  fea_index block_off[SF_MAX_BLOCKS];
  short block_dof[SF_MAX_BLOCKS][SF_MAX_N * SF_MAX_N * SF_MAX_N]; /* by offset */
  short block_next[SF_MAX_BLOCKS][SF_MAX_N * SF_MAX_N * SF_MAX_N]; /* at o + S + j, or -1 */
  char desc[192];
  /* Generated fused line batches (2D Lagrange Q3 - Q5, 3D Q2 - Q4 on structured meshes,
   * sumfact-lines-gen.h): where the state's line layout is the one a
   * generated function was made from (choose_gline), that function runs
   * the line batch with every DoF's tile slot, chain or single a constant. */
  sf_gline_fn gline;
  /* Its offsets (sf_line_sig.off_src), together: the code reads these
   * instead of foff and tile_off, which lie all over this state (a 2D Q3
   * line batch 1.2x faster so, measured against reading them there). */
  fea_index goff[SF_GLINE_MAX_OFF];
  unsigned char pmask[SF_TILE_MAX_ST];
} sf_state;

/* sumfact-setup.c */
int sf_supports(const fea_problem *pb, char *why, size_t len);
fea_status sf_build_tables(const fea_problem *pb, sf_state *s);
/* The element indices per direction of element e. */
void sf_element_index(const sf_state *s, fea_index e, fea_index idx[3]);
/* c_k = sigma |det J| / J_kk^2 of the element with direction indices idx. */
void sf_geometry_factors(const sf_state *s, const fea_index idx[3], double c[3]);

/* sumfact.c: point b's table slots at the shared lane tables (Lagrange
 * spaces; returns 0 and leaves b alone when the tables are per element). */
int fea_sf_shared_tables(const sf_state *s, sf_batch *b);

/* sumfact-diagonal.c */
void sf_diagonal(const void *state, const fea_index *elems, int count, double *d, double *scratch);

/* sumfact.c, for tests: create with a chosen instruction set ("baseline",
 * "avx2", "avx512", NULL: the best available) and, with generic != 0, the
 * runtime-size kernel even where an instantiated one exists. */
fea_status fea_sumfact_create_with(const fea_problem *pb, const char *isa, int generic,
                                   void **state);

#endif
