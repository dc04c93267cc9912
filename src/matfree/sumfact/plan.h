/* The restriction plan of the sum-factorization kernel: where each element's
 * DoFs and free rows are, as pure data built once from the element-DoF table,
 * the free-row numbering and the lane width (no 1D tables, no instruction
 * set, no context): the DoF classes and their bases, the line batches
 * (strides, chains, tiles, blocks, singles, prefetch windows) and the kept
 * rows of boundary elements. plan.c builds it; the kernel's gather and
 * scatter (sumfact-body.h, sumfact-apply.c) and tools/gen-sumfact-lines.c
 * read it. */
#ifndef FEA_MATFREE_SUMFACT_PLAN_H
#define FEA_MATFREE_SUMFACT_PLAN_H

#include <stdint.h>

#include <feaccel/types.h>

#define SF_MAX_N 9                                 /* functions per direction: p <= 8 */
#define SF_MAX_NB (SF_MAX_N * SF_MAX_N * SF_MAX_N) /* DoFs per element at most */
#define SF_MAX_LANES 8
#define SF_MAX_PF 96      /* prefetched windows per line batch at most */
#define SF_PF_AHEAD 2     /* line batches ahead that the prefetches reach */
#define SF_MAX_TILES 64   /* tiles of a line batch at most */
#define SF_TILE_MAX_ST 16 /* the largest stride of a tile */
#define SF_MAX_BLOCKS 8   /* transposed blocks of a line batch at most */
#define SF_TAIL 0x80      /* fea_sf_plan.line_ok: the element is in a batch that starts before it */

/* Strides of the tiles (fea_sf_plan.tile_*): the line kernels' constants. */
static inline int fea_sf_tile_stride(int st) {
  return st == 2 || st == 3 || st == 4 || st == 5 || st == 6 || st == 8 || st == 9 || st == 12 ||
         st == 16;
}

/* DoFs added or loaded lane by lane (fea_sf_plan.sg, .ss). */
typedef struct fea_sf_singles {
  int n;
  int dof[SF_MAX_NB]; /* by stride */
  int nrun;           /* runs of equal stride */
  int run_start[SF_MAX_NB + 1];
  int run_st[SF_MAX_NB];
} fea_sf_singles;

/* What the plan is built from. */
typedef struct fea_sf_plan_input {
  const fea_index *edofs;      /* ne x nb, fea_element_dof_table's layout */
  const fea_index *free_index; /* per DoF: its free row, or -1 (Dirichlet) */
  fea_index ne;
  int nb;      /* <= SF_MAX_NB */
  int lanes;   /* W: elements per line batch, 4 or 8 */
  int tiles;   /* build tiles (lanes 8: the AVX-512 line kernels have them) */
  int threads; /* for the setup loops */
} fea_sf_plan_input;

/* The plan, read-only once built. The fields that apply_add and the line
 * batches read per batch come first, in the order they are read; the
 * counts for describe and memory last. */
typedef struct fea_sf_plan {
  int nb, lanes;
  /* DoF classes: the element's DoFs fall into classes (the vertices of a
   * structured mesh, each edge, face and interior of a Lagrange cell, all
   * of a B-spline element) whose DoFs keep fixed distances in every
   * element: DoF i of element e is base[e * nclass + cls[i]] + off[i]. One
   * index per class instead of one per DoF (B-splines, Q1: one per
   * element; 3D Q_p, p >= 2: 20). nfclass, fbase, fcls, foff: the same for
   * the free rows of the elements whose DoFs are all free (fbase of the
   * others zero); nfclass 0: none such. */
  int nclass, nfclass;
  fea_index *base, *fbase;
  /* Line batches: W elements e0 .. e0 + W - 1 with every DoF free whose
   * free-row class bases advance by a fixed stride per class from one
   * element to the next (consecutive elements along x of a structured mesh
   * or a B-spline patch): lane l of DoF i is then at
   * fbase[e0][fcls[i]] + foff[i] + l * lstride[fcls[i]]. line_ok[e0]: 1,
   * such a batch starts at e0; 2, a boundary line batch (below); SF_TAIL |
   * kind << 4 | skip: e0 is in the batch of that kind that starts skip
   * elements before (the last r >= W / 2 elements of a run); 0: none. NULL:
   * no line batches. */
  unsigned char *line_ok;
  /* Boundary lines: elements with a Dirichlet DoF keep their DoFs' free
   * rows and each row's step to the next element (brow + brow_at[e] * 2 nb:
   * nb rows, nb steps; brow_at -1 for the others). W consecutive such
   * elements with the same Dirichlet DoFs and the same steps form a
   * boundary line batch (line_ok 2), gathered and added DoF by DoF with
   * lane vectors. */
  fea_index *brow;
  int *brow_at;
  /* Software prefetch of line batches: the cache lines a batch reads and
   * writes, as windows of 8 doubles (by class, offsets from the class
   * base); the gather and scatter touch the same windows SF_PF_AHEAD
   * batches later along the line. */
  int npf;
  int pf_start[SF_MAX_PF];     /* class c's windows: from pf_start[c] */
  fea_index pf_off[SF_MAX_PF]; /* includes SF_PF_AHEAD lanes' strides */
  int nchain, ntile, nblock;
  int cls[SF_MAX_NB], off[SF_MAX_NB];
  int fcls[SF_MAX_NB], foff[SF_MAX_NB];
  int lstride[SF_MAX_NB]; /* per free class */
  /* Chains: unit-stride DoFs of one class at offsets o, o + 1, ..., o + k
   * (the DoFs one element shares with the next along x): their lanes
   * overlap shifted by one, so the scatter sums them in registers (lane
   * shifts) into one vector at o and k scalar tail adds, and never adds
   * twice into one entry within a vector. */
  int chain_start[SF_MAX_NB + 1]; /* into chain_dof */
  int chain_dof[SF_MAX_NB];       /* DoFs by chain, offsets increasing */
  /* Tiles (tiles set): DoFs of one class with stride ST whose offsets lie
   * in [o, o + 2 ST): the ST x W doubles from o hold lane l of the DoF at
   * o + s (slot s) at o + s + ST l, and of the DoF at o + ST + s (slot
   * ST + s: the same entries one lane on, the DoFs one element shares with
   * the next along x) at o + s + ST (l + 1). A full tile (every slot has a
   * DoF at o + s, so all ST W entries are the lanes' own) is added back as
   * ST vector read-modify-writes; the DoFs of a tile that is not full are
   * added as singles (or masked, by the generated line batches). */
  int tile_cls[SF_MAX_TILES], tile_st[SF_MAX_TILES], tile_full[SF_MAX_TILES];
  fea_index tile_off[SF_MAX_TILES];
  unsigned char tile_lmask[SF_MAX_TILES][SF_TILE_MAX_ST]; /* per vector: the lanes' own entries */
  /* The DoF in slot q (0 .. 2 ST - 1) of tile k, or -1: the line kernels
   * run over the slots, ST a constant, so that each slot's vector stays in
   * a register (a loop over the tile's DoFs indexed the slots at run time,
   * which kept them in memory: 2D Q3 1.16 - 1.22x, 3D Q2/Q3 1.07x). */
  short tile_sdof[SF_MAX_TILES][2 * SF_TILE_MAX_ST];
  /* Blocks: M >= W DoFs of a class of stride S >= M that no tile serves,
   * at the consecutive offsets o .. o + M - 1 (3D Q4: the 27 interior
   * DoFs, the 27 of the faces at an element's low corner, and the 9 of
   * each face it shares with its y and z neighbours; stride 27): the
   * batch's entries of them are columns 0 .. M - 1 of a W x S row-major
   * matrix from o, lane l's DoF o + j at o + S l + j, loaded and added W
   * columns at a time through W x W transposes. The class's DoFs at
   * o + S + j, j < M (3D Q4's x-faces) are column j one lane on. */
  int block_cls[SF_MAX_BLOCKS], block_st[SF_MAX_BLOCKS], block_m[SF_MAX_BLOCKS];
  fea_index block_off[SF_MAX_BLOCKS];
  short block_dof[SF_MAX_BLOCKS][SF_MAX_NB];  /* by offset */
  short block_next[SF_MAX_BLOCKS][SF_MAX_NB]; /* at o + S + j, or -1 */
  /* Other DoFs of classes with stride > 1, lane by lane, by stride in runs
   * of equal stride. sg: those the gather loads so (not in a tile or
   * block), ss: those the scatter adds so (not in a full tile or block). */
  fea_sf_singles sg, ss;
  /* Cold: for describe and memory. */
  fea_index ne;
  fea_index line_batches; /* elements that start one */
  uint64_t bytes;         /* the arrays the plan keeps */
} fea_sf_plan;

/* Builds the plan (every field; the arrays allocated here). Returns
 * FEA_SUCCESS, or FEA_ERR_OUT_OF_MEMORY with *plan freed: the caller, which
 * has a context, says so. */
fea_status fea_sf_plan_build(const fea_sf_plan_input *in, fea_sf_plan *plan);
void fea_sf_plan_free(fea_sf_plan *plan);

/* The signature of a line layout (sumfact-lines-gen.h): the plan's free
 * classes, chains, tiles, blocks and singles without their offsets, which
 * generated code reads from the kernel state (fea_sf_state.goff). */
#define SF_GLINE_MAX_OFF 64 /* offsets a generated line batch reads at most */
typedef struct fea_sf_line_sig {
  int dim, n, nfclass;
  int lstride[SF_MAX_NB];
  int fcls[SF_MAX_NB];
  int nchain;
  int chain_start[SF_MAX_NB + 1];
  int chain_dof[SF_MAX_NB];
  int ntile;
  int tile_cls[SF_MAX_TILES], tile_st[SF_MAX_TILES], tile_full[SF_MAX_TILES];
  short tile_sdof[SF_MAX_TILES][2 * SF_TILE_MAX_ST];
  unsigned char tile_lmask[SF_MAX_TILES][SF_TILE_MAX_ST];
  int nblock;
  int block_cls[SF_MAX_BLOCKS], block_st[SF_MAX_BLOCKS], block_m[SF_MAX_BLOCKS];
  short block_dof[SF_MAX_BLOCKS][SF_MAX_NB];
  short block_next[SF_MAX_BLOCKS][SF_MAX_NB];
  int nsingle;
  int single_dof[SF_MAX_NB];
  int noff;                      /* the offsets the code reads, fea_sf_state.goff: */
  int off_src[SF_GLINE_MAX_OFF]; /* >= 0: foff[src]; -1 .. -SF_MAX_TILES: tile_off[-(src + 1)];
                                    below: block_off[-(src + 1) - SF_MAX_TILES] */
} fea_sf_line_sig;

/* Whether the plan's line layout is g's (offsets aside). */
int fea_sf_plan_layout_is(const fea_sf_plan *p, const fea_sf_line_sig *g);
/* Offset j of a generated line batch's (g->off_src[j]) in this plan. */
fea_index fea_sf_plan_sig_offset(const fea_sf_plan *p, int src);

#endif
