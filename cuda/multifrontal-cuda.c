/* /gpu/cuda multifrontal ops: the numeric phase of the IGA multifrontal
 * solver with the factors on the device (docs/multifrontal.md, "On the GPU").
 *
 * Storage. One device array holds every node's panel [L11; L21] at the
 * tree's factor offsets, zeroed at allocation. Schur blocks live in device
 * blocks shared by the nodes of one level whose parents sit on one level
 * (a "group"): a group is allocated and zeroed when its level starts and
 * freed (stream-ordered) after its parents' level, so the Schur memory alive
 * at any level is exactly what the tree's peak estimate counts. The index
 * maps of the tree (extend-add maps, front DoF lists) are uploaded once.
 *
 * Factorization, level by level (the context's stream, one sync per level):
 *   level 0: the leaves are integrated on the host, on the context's threads
 *            (fea_multifrontal_assemble_leaves, the code /cpu/ref runs), into
 *            pinned chunks of about 32 MiB; each chunk goes up in one copy
 *            and is scattered into place while the host integrates the next
 *            chunk (two pinned buffers, an event each). The load is summed
 *            on the host in leaf order, as /cpu/ref does.
 *   other levels: extend-add, one launch per child slot (children in order:
 *            the same additions as /cpu/ref, in the same order), blocks
 *            spread over the fronts and over each child's entries.
 *   then, per front: small q and q + r (front_batched): one batched kernel
 *            for potrf + trsm of all such panels (a block per front) and
 *            cublasDgemmBatched for S -= L21 L21^T, one call per (q, r)
 *            class; the others: cuSOLVER Xpotrf, cuBLAS trsm and syrk per
 *            front, round-robin over the context's side streams (lanes).
 *   Pivot failures land in a per-level info array read back at the level's
 *   end: FEA_ERR_NOT_POSDEF names the first failing front of the level.
 *   After each batch's fronts are factored one small kernel reads their
 *   diagonals into per-node pivot ranges kept on the device (d_pivots),
 *   copied to f->pivots once, with the last level's sync: the accuracy
 *   report's input, reduced on the host as the CPU backends' is.
 * Solve: y goes up once, each level gathers, solves (small fronts in one
 * kernel, large ones with cuBLAS trsm/gemm) and scatters on the device; y
 * comes back after the forward sweep (the interface zeroes the kept boundary
 * there) and after the backward sweep. */
#include "fea-config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/context.h"
#include "base/progress.h"
#include "cuda-backend.h"
#include "cuda-check.h"
#include "internal/error.h"
#include "internal/etree.h"
#include "kernels/multifrontal-launch.h"
#include "internal/multifrontal.h"

_Static_assert(sizeof(fea_index) == sizeof(int64_t), "front DoF lists go up as int64_t");

/* Fronts with 0 < q <= MULTIFRONTAL_SMALL_Q and q + r <= MULTIFRONTAL_SMALL_M
 * go through the batched kernels (one thread block each: its column sweep is
 * serial in q, its rows spread over the block). A front with few pivots but
 * a large Schur part goes to cuBLAS trsm / syrk, which spread the r rows
 * over the whole GPU. */
#define MULTIFRONTAL_SMALL_Q 64
#define MULTIFRONTAL_SMALL_M 1024

static int front_batched(int64_t q, int64_t r) {
  return q <= MULTIFRONTAL_SMALL_Q && q + r <= MULTIFRONTAL_SMALL_M;
}
/* Doubles of host-integrated leaf fronts per upload (32 MiB). */
#define MULTIFRONTAL_CHUNK_VALUES ((size_t)4 << 20)
/* Shared memory the leaf-integration kernel may take per block (the default
 * limit without opting in); larger records integrate on the host. */
#define MULTIFRONTAL_LEAF_SMEM ((size_t)48 << 10)
/* Device memory kept back in the estimate for cuSOLVER/cuBLAS workspaces. */
#define MULTIFRONTAL_LIBRARY_RESERVE ((uint64_t)256 << 20)
/* ... and for each lane still to be made (its cuBLAS and cuSOLVER handles
 * take their own workspaces when created). */
#define MULTIFRONTAL_LANE_RESERVE ((uint64_t)64 << 20)

/* A small front with r > 0, for the (q, r) classes of the batched Schur update. */
typedef struct gemm_item {
  int64_t q, r;
  double *A; /* L21 = P + q, ld q + r */
  double *C; /* S, ld r */
} gemm_item;

typedef struct multifrontal_cuda {
  double *d_panels;
  int32_t *d_ext_map;
  int64_t *d_front_dofs;
  /* Groups: the nodes of one level whose parents share a level. */
  int ngroups;
  int *birth, *death;           /* per group: its level, and its parents' (the root: its own) */
  size_t *schur_entries;        /* per group: sum of r^2 */
  size_t *work_entries;         /* per group: sum of q + r (times nrhs in a solve) */
  double **schur_d, **work_d;   /* per group while alive */
  int *group_of;                /* per node */
  size_t *schur_off, *work_off; /* per node, within its group */
  double **d_schur;             /* per node: its Schur block while alive */
  /* Batches: descriptors (and leaf values) built in pinned memory, one copy up. */
  size_t batch_bytes, chunk_values;
  void *h_batch[2];
  cudaEvent_t ev[2];
  int ev_made[2];
  int cur;
  void *d_batch;
  int *d_info, *h_info; /* per node of a level */
  double *d_pivots;     /* per node: {smallest, largest} pivot, 2 num_nodes */
  fea_index max_level_nodes;
  double *h_load;    /* the leaf loads of one chunk (chunk_values) */
  size_t *value_off; /* per node of a chunk: its place in the chunk */
  gemm_item *items;  /* max_level_nodes */
  void *h_work;      /* cuSOLVER host workspace */
  size_t h_work_bytes;
  /* Leaves integrated on the device from element records (records != 0). */
  int records;
  fea_multifrontal_leaf_shape shape;
  fea_cuda_leaf_shape dshape;
  int32_t *d_leaf_map;
  /* Solve. */
  cudaEvent_t copy_ev[2]; /* around a copy of y, timed (copy_made: created) */
  int copy_made, copy_pending;
  double *d_y;
  size_t y_entries;
  double *d_z; /* the backward level's work blocks */
} multifrontal_cuda;

/* ------------------------------------------------------------------ helpers */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The flops of one node, summed exactly as fea_cpu_multifrontal_factor_node does. */
static double node_flops(fea_index q, fea_index r) {
  if (q == 0) return 0.0;
  double dq = (double)q, fl = 0.0;
  fl += dq * dq * dq / 3.0 + dq * dq / 2.0 + dq / 6.0;
  if (r == 0) return fl;
  fl += (double)r * (double)q * (double)q;
  fl += (double)r * ((double)r + 1.0) * (double)q;
  return fl;
}

/* Re-raise the message on ctx with the node named (index, level, box); the
 * nested message without its "name(): " head, which the new one carries. */
static fea_status node_fail(fea_context *ctx, const fea_multifrontal_factor *f, fea_index n,
                            fea_status s) {
  char why[FEA_ERROR_LEN];
  snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
  return fea_multifrontal_node_error(ctx, f, n, s, why);
}

static fea_status level_fail(fea_context *ctx, const char *phase, int level, fea_index nodes,
                             fea_status s) {
  char why[FEA_ERROR_LEN];
  snprintf(why, sizeof why, "%s", fea_thread_last_error_text());
  return FEA_ERROR(ctx, s, "%s of tree level %d (%lld nodes) on /gpu/cuda: %s", phase, level,
                   (long long)nodes, why);
}

typedef struct batch_layout {
  size_t fronts, children, list, ga, gc, values, total;
} batch_layout;

static batch_layout layout_of(size_t nfronts, size_t nchildren, size_t nvalues) {
  const size_t fsz = sizeof(fea_cuda_multifrontal_front) > sizeof(fea_cuda_multifrontal_sfront)
                         ? sizeof(fea_cuda_multifrontal_front)
                         : sizeof(fea_cuda_multifrontal_sfront);
  batch_layout l;
  size_t o = 0;
  l.fronts = o;
  o += fea_cuda_align_up(nfronts * fsz);
  l.children = o;
  o += fea_cuda_align_up(nchildren * sizeof(fea_cuda_multifrontal_child));
  l.list = o;
  o += fea_cuda_align_up(nfronts * sizeof(int64_t));
  l.ga = o;
  o += fea_cuda_align_up(nfronts * sizeof(double *));
  l.gc = o;
  o += fea_cuda_align_up(nfronts * sizeof(double *));
  l.values = o;
  o += fea_cuda_align_up(nvalues * sizeof(double));
  l.total = o;
  return l;
}

/* The next pinned buffer, once the copy that last read it has finished. */
static fea_status batch_host(fea_context *ctx, multifrontal_cuda *st, char **out) {
  st->cur ^= 1;
  FEA_CALL_CUDA(ctx, cudaEventSynchronize(st->ev[st->cur]));
  *out = st->h_batch[st->cur];
  return FEA_SUCCESS;
}

/* Copy the current pinned buffer's first bytes to the device batch buffer.
 * The device buffer is reused by the next batch only through the stream, so
 * kernels of this batch have read it by then. */
static fea_status batch_upload(fea_context *ctx, const struct fea_cuda *b, multifrontal_cuda *st,
                               size_t bytes) {
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(st->d_batch, st->h_batch[st->cur], bytes,
                                     cudaMemcpyHostToDevice, b->stream));
  FEA_CALL_CUDA(ctx, cudaEventRecord(st->ev[st->cur], b->stream));
  return FEA_SUCCESS;
}

static void *dev_at(const multifrontal_cuda *st, size_t offset) {
  return (char *)st->d_batch + offset;
}

/* Allocate (and zero) the groups born at level; entries scaled by scale. */
static fea_status groups_birth(fea_context *ctx, const struct fea_cuda *b, multifrontal_cuda *st,
                               int level, const size_t *entries, double **ptr, size_t scale) {
  for (int g = 0; g < st->ngroups; g++) {
    if (st->birth[g] != level || entries[g] == 0) continue;
    size_t bytes = entries[g] * scale * sizeof(double);
    void *p = NULL;
    FEA_CALL(fea_cuda_malloc(ctx, bytes, &p));
    ptr[g] = p;
    FEA_CALL_CUDA(ctx, cudaMemsetAsync(p, 0, bytes, b->stream));
  }
  return FEA_SUCCESS;
}

/* Free (stream-ordered) the groups whose parents' level is level. */
static void groups_death(fea_context *ctx, multifrontal_cuda *st, int level, double **ptr) {
  for (int g = 0; g < st->ngroups; g++)
    if (st->death[g] == level && ptr[g]) {
      fea_cuda_free(ctx, ptr[g]);
      ptr[g] = NULL;
    }
}

static void groups_free_all(fea_context *ctx, multifrontal_cuda *st, double **ptr) {
  if (!ptr) return;
  for (int g = 0; g < st->ngroups; g++) {
    fea_cuda_free(ctx, ptr[g]);
    ptr[g] = NULL;
  }
}

/* Elements in leaf nd's box. */
static fea_index leaf_elements(const fea_etree_node *nd) {
  return (nd->hi[0] - nd->lo[0]) * (nd->hi[1] - nd->lo[1]) * (nd->hi[2] - nd->lo[2]);
}

/* Doubles leaf nd takes in a chunk: its element records, or its assembled
 * panel and Schur block. */
static size_t leaf_values(const multifrontal_cuda *st, const fea_etree_node *nd) {
  if (st->records) return (size_t)leaf_elements(nd) * (size_t)st->shape.rec_len;
  return (size_t)((nd->q + nd->r) * nd->q + nd->r * nd->r);
}

/* --------------------------------------------------------- alloc / release */

static void multifrontal_cuda_free(fea_context *ctx, multifrontal_cuda *st) {
  struct fea_cuda *b = NULL;
  if (fea_cuda_enter(ctx, &b) == FEA_SUCCESS) {
    /* Nothing queued may still read what goes now. */
    (void)cudaStreamSynchronize(b->stream);
    groups_free_all(ctx, st, st->schur_d);
    groups_free_all(ctx, st, st->work_d);
    fea_cuda_free(ctx, st->d_panels);
    fea_cuda_free(ctx, st->d_ext_map);
    fea_cuda_free(ctx, st->d_front_dofs);
    fea_cuda_free(ctx, st->d_leaf_map);
    fea_cuda_free(ctx, st->d_batch);
    fea_cuda_free(ctx, st->d_info);
    fea_cuda_free(ctx, st->d_pivots);
    fea_cuda_free(ctx, st->d_y);
    fea_cuda_free(ctx, st->d_z);
    (void)cudaStreamSynchronize(b->stream);
    for (int i = 0; i < 2 && st->copy_made; i++) (void)cudaEventDestroy(st->copy_ev[i]);
    for (int i = 0; i < 2; i++) {
      if (st->ev_made[i]) (void)cudaEventDestroy(st->ev[i]);
      if (st->h_batch[i]) (void)cudaFreeHost(st->h_batch[i]);
    }
    (void)cudaGetLastError();
  }
  free(st->birth);
  free(st->death);
  free(st->schur_entries);
  free(st->work_entries);
  free(st->schur_d);
  free(st->work_d);
  free(st->group_of);
  free(st->schur_off);
  free(st->work_off);
  free(st->d_schur);
  free(st->h_info);
  free(st->h_load);
  free(st->value_off);
  free(st->items);
  free(st->h_work);
  free(st);
}

static void cuda_factor_release(fea_context *ctx, fea_multifrontal_factor *f) {
  if (f->backend) multifrontal_cuda_free(ctx, f->backend);
  f->backend = NULL;
  if (f->schur && f->tree)
    for (fea_index n = 0; n < f->tree->num_nodes; n++) free(f->schur[n]);
  free(f->schur);
  free(f->load);
  f->schur = NULL;
  f->load = NULL;
  f->panels = NULL;
  f->leaf_load = NULL;
}

/* Host-side plan: groups, offsets, sizes. No device call. */
static fea_status plan(fea_context *ctx, const fea_etree *t, multifrontal_cuda *st) {
  const fea_index nn = t->num_nodes;
  const int nl = t->num_levels;
  int *gid = malloc((size_t)nl * (size_t)nl * sizeof *gid);
  size_t cap = (size_t)nn < (size_t)nl * (size_t)nl ? (size_t)nn : (size_t)nl * (size_t)nl;
  st->birth = malloc(cap * sizeof *st->birth);
  st->death = malloc(cap * sizeof *st->death);
  st->schur_entries = calloc(cap, sizeof *st->schur_entries);
  st->work_entries = calloc(cap, sizeof *st->work_entries);
  st->schur_d = calloc(cap, sizeof *st->schur_d);
  st->work_d = calloc(cap, sizeof *st->work_d);
  st->group_of = malloc((size_t)nn * sizeof *st->group_of);
  st->schur_off = malloc((size_t)nn * sizeof *st->schur_off);
  st->work_off = malloc((size_t)nn * sizeof *st->work_off);
  st->d_schur = calloc((size_t)nn, sizeof *st->d_schur);
  if (!gid || !st->birth || !st->death || !st->schur_entries || !st->work_entries || !st->schur_d ||
      !st->work_d || !st->group_of || !st->schur_off || !st->work_off || !st->d_schur) {
    free(gid);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the device plan of %lld nodes",
                     (long long)nn);
  }
  for (size_t i = 0; i < (size_t)nl * (size_t)nl; i++) gid[i] = -1;
  for (fea_index n = 0; n < nn; n++) {
    const fea_etree_node *nd = &t->nodes[n];
    int bl = nd->level, dl = nd->parent >= 0 ? t->nodes[nd->parent].level : nd->level;
    int *slot = &gid[(size_t)bl * (size_t)nl + (size_t)dl];
    if (*slot < 0) {
      *slot = st->ngroups++;
      st->birth[*slot] = bl;
      st->death[*slot] = dl;
    }
    int g = *slot;
    st->group_of[n] = g;
    st->schur_off[n] = st->schur_entries[g];
    st->schur_entries[g] += (size_t)(nd->r * nd->r);
    st->work_off[n] = st->work_entries[g];
    st->work_entries[g] += (size_t)(nd->q + nd->r);
  }
  free(gid);
  return FEA_SUCCESS;
}

/* Peak over the levels of the entries of alive groups. */
static size_t group_peak(const multifrontal_cuda *st, int levels, const size_t *entries) {
  size_t alive = 0, peak = 0;
  for (int L = 0; L < levels; L++) {
    for (int g = 0; g < st->ngroups; g++)
      if (st->birth[g] == L) alive += entries[g];
    if (alive > peak) peak = alive;
    for (int g = 0; g < st->ngroups; g++)
      if (st->death[g] == L) alive -= entries[g];
  }
  return peak;
}

static fea_status cuda_factor_alloc_device(fea_context *ctx, fea_multifrontal_factor *f,
                                           multifrontal_cuda *st) {
  const fea_etree *t = f->tree;
  struct fea_cuda *b;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  FEA_CALL(plan(ctx, t, st));

  /* The leaves' stiffness on the device where the problem allows it: the
   * host then integrates only records (W and the 1D factors) and loads,
   * and what goes up is O(nq) per element instead of the leaf fronts'
   * O(r^2) (3D p = 2, 1M unknowns: 13 GB of fronts, 0.7 GB of records). */
  st->records = b->leaves_on_device && fea_multifrontal_leaf_shape_of(f, &st->shape);
  if (st->records) {
    const fea_multifrontal_leaf_shape *sh = &st->shape;
    for (int k = 0; k < 3; k++) st->dshape.n[k] = sh->n[k], st->dshape.m[k] = sh->m[k];
    st->dshape.nb = sh->nb;
    st->dshape.nq = sh->nq;
    st->dshape.rec_len = sh->rec_len;
    if (fea_cuda_multifrontal_leaf_smem(&st->dshape) > MULTIFRONTAL_LEAF_SMEM) st->records = 0;
  }

  /* Sizes of everything, then one check against the free device memory. */
  fea_index ext_len = 0, front_len = 0, max_children = 0, z_max = 0, leaf_map_len = 0;
  size_t leaf_max = 0;
  for (fea_index n = 0; n < t->num_nodes; n++) {
    const fea_etree_node *nd = &t->nodes[n];
    const fea_index m = nd->q + nd->r;
    if (nd->parent >= 0 && nd->map_off + nd->r > ext_len) ext_len = nd->map_off + nd->r;
    if (nd->front_off + m > front_len) front_len = nd->front_off + m;
    if (nd->num_children == 0) {
      /* A chunk holds the leaf's values and, in h_load, its q + r loads. */
      size_t v = leaf_values(st, nd);
      if ((size_t)m > v) v = (size_t)m;
      if (v > leaf_max) leaf_max = v;
      const fea_index end = nd->leaf_off + leaf_elements(nd) * st->shape.nb;
      if (st->records && end > leaf_map_len) leaf_map_len = end;
    }
  }
  for (int L = 0; L < t->num_levels; L++) {
    fea_index cnt = t->level_start[L + 1] - t->level_start[L], ch = 0, z = 0;
    for (fea_index k = t->level_start[L]; k < t->level_start[L + 1]; k++) {
      const fea_etree_node *nd = &t->nodes[t->level_nodes[k]];
      ch += nd->num_children;
      if (nd->q > 0) z += nd->q + nd->r;
    }
    if (cnt > st->max_level_nodes) st->max_level_nodes = cnt;
    if (ch > max_children) max_children = ch;
    if (z > z_max) z_max = z;
  }
  st->chunk_values = leaf_max > MULTIFRONTAL_CHUNK_VALUES ? leaf_max : MULTIFRONTAL_CHUNK_VALUES;
  st->batch_bytes = layout_of((size_t)st->max_level_nodes, (size_t)max_children, st->chunk_values)
                        .total;
  const uint64_t panels = (uint64_t)(t->factor_entries ? t->factor_entries : 1) * 8u;
  const uint64_t schur = (uint64_t)group_peak(st, t->num_levels, st->schur_entries) * 8u;
  const uint64_t solve = ((uint64_t)t->num_dofs +
                          (uint64_t)group_peak(st, t->num_levels, st->work_entries) +
                          (uint64_t)z_max) *
                         8u;
  const uint64_t maps = (uint64_t)ext_len * 4u + (uint64_t)front_len * 8u +
                        (uint64_t)leaf_map_len * 4u + (uint64_t)t->num_nodes * 16u;
  const uint64_t libs = MULTIFRONTAL_LIBRARY_RESERVE +
                        (uint64_t)(b->lanes_wanted > 1 ? b->lanes_wanted - b->nlanes : 0) *
                            MULTIFRONTAL_LANE_RESERVE;
  const uint64_t need = panels + schur + maps + (uint64_t)st->batch_bytes +
                        (uint64_t)st->max_level_nodes * sizeof(int) + solve + libs;
  size_t free_b = 0, total_b = 0;
  FEA_CALL(fea_cuda_available_bytes(ctx, &free_b, &total_b));
  FEA_CHECK(need <= (uint64_t)free_b, ctx, FEA_ERR_OUT_OF_MEMORY,
            "the factorization needs %llu bytes of device memory (%llu of factors, %llu of Schur "
            "blocks at the peak level, %llu for one right-hand side, %llu of index maps and "
            "batches, %llu kept for cuSOLVER/cuBLAS) but GPU %d (%s) has %llu bytes free of %llu "
            "(with the memory pool's unused bytes)",
            (unsigned long long)need, (unsigned long long)panels, (unsigned long long)schur,
            (unsigned long long)solve,
            (unsigned long long)(maps + st->batch_bytes + (uint64_t)st->max_level_nodes * 4u),
            (unsigned long long)libs, b->device, b->name, (unsigned long long)free_b,
            (unsigned long long)total_b);
  f->device_bytes = need;

  /* Host side. */
  st->h_info = malloc((size_t)(st->max_level_nodes ? st->max_level_nodes : 1) * sizeof(int));
  /* A chunk's loads fit in chunk_values doubles: the chunk loop counts them. */
  st->h_load = malloc(st->chunk_values * sizeof *st->h_load);
  st->value_off = malloc((size_t)(st->max_level_nodes ? st->max_level_nodes : 1) *
                         sizeof *st->value_off);
  st->items = malloc((size_t)(st->max_level_nodes ? st->max_level_nodes : 1) * sizeof *st->items);
  FEA_CHECK(st->h_info && st->h_load && st->value_off && st->items, ctx, FEA_ERR_OUT_OF_MEMORY,
            "no memory for the host scratch of %lld nodes per level",
            (long long)st->max_level_nodes);
  for (int i = 0; i < 2; i++) {
    FEA_CALL_CUDA(ctx, cudaHostAlloc(&st->h_batch[i], st->batch_bytes, cudaHostAllocDefault));
    FEA_CALL_CUDA(ctx, cudaEventCreateWithFlags(&st->ev[i], cudaEventDisableTiming));
    st->ev_made[i] = 1;
  }

  /* Device side. */
  void *p = NULL;
  FEA_CALL(fea_cuda_malloc(ctx, (size_t)panels, &p));
  st->d_panels = p;
  FEA_CALL_CUDA(ctx, cudaMemsetAsync(st->d_panels, 0, (size_t)panels, b->stream));
  if (ext_len > 0) {
    FEA_CALL(fea_cuda_malloc(ctx, (size_t)ext_len * sizeof(int32_t), &p));
    st->d_ext_map = p;
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(st->d_ext_map, t->ext_map, (size_t)ext_len * sizeof(int32_t),
                                       cudaMemcpyHostToDevice, b->stream));
  }
  if (front_len > 0) {
    FEA_CALL(fea_cuda_malloc(ctx, (size_t)front_len * sizeof(int64_t), &p));
    st->d_front_dofs = p;
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(st->d_front_dofs, t->front_dofs,
                                       (size_t)front_len * sizeof(int64_t), cudaMemcpyHostToDevice,
                                       b->stream));
  }
  if (leaf_map_len > 0) {
    FEA_CALL(fea_cuda_malloc(ctx, (size_t)leaf_map_len * sizeof(int32_t), &p));
    st->d_leaf_map = p;
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(st->d_leaf_map, t->leaf_map,
                                       (size_t)leaf_map_len * sizeof(int32_t),
                                       cudaMemcpyHostToDevice, b->stream));
  }
  FEA_CALL(fea_cuda_malloc(ctx, st->batch_bytes, &p));
  st->d_batch = p;
  FEA_CALL(fea_cuda_malloc(ctx,
                           (size_t)(st->max_level_nodes ? st->max_level_nodes : 1) * sizeof(int),
                           &p));
  st->d_info = p;
  FEA_CALL(fea_cuda_malloc(ctx, (size_t)(t->num_nodes ? t->num_nodes : 1) * 2 * sizeof(double),
                           &p));
  st->d_pivots = p;
  /* The host arrays of the tree are pageable: wait before anything may free them. */
  return fea_cuda_sync(ctx);
}

static fea_status cuda_factor_alloc(fea_context *ctx, fea_multifrontal_factor *f) {
  const fea_etree *t = f->tree;
  f->panels = NULL;
  f->leaf_load = NULL;
  f->schur = calloc((size_t)t->num_nodes, sizeof *f->schur);
  f->load = calloc((size_t)(t->num_dofs ? t->num_dofs : 1), sizeof *f->load);
  multifrontal_cuda *st = calloc(1, sizeof *st);
  f->backend = st;
  fea_status s = FEA_SUCCESS;
  if (!f->schur || !f->load || !st)
    s = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the host side of %lld nodes",
                  (long long)t->num_nodes);
  if (s == FEA_SUCCESS) s = cuda_factor_alloc_device(ctx, f, st);
  if (s < 0) {
    /* Release may only add a message of its own if the device is gone;
     * the caller wants the reason the allocation failed. */
    char why[FEA_ERROR_LEN];
    snprintf(why, sizeof why, "%s", ctx->last_error);
    cuda_factor_release(ctx, f);
    snprintf(ctx->last_error, sizeof ctx->last_error, "%s", why);
  }
  return s;
}

/* ------------------------------------------------------------ factorization */

static int cmp_gemm_item(const void *pa, const void *pb) {
  const gemm_item *a = pa, *b = pb;
  if (a->q != b->q) return a->q < b->q ? -1 : 1;
  if (a->r != b->r) return a->r < b->r ? -1 : 1;
  return 0;
}

/* The handles one large front's calls go through: the context's own, or a
 * lane's (cuda-backend.h). */
typedef struct front_handles {
  cublasHandle_t blas;
  cusolverDnHandle_t solver;
  cusolverDnParams_t params;
} front_handles;

/* potrf, trsm and syrk of one large front through cuSOLVER and cuBLAS. */
static fea_status factor_large(fea_context *ctx, const front_handles *hd,
                               const fea_cuda_multifrontal_front *fr, void *dwork, size_t dbytes,
                               void *hwork, size_t hbytes, int *dinfo) {
  const int64_t q = fr->q, r = fr->r, m = q + r;
  const double one = 1.0, minus_one = -1.0;
  FEA_CALL_CUSOLVER(ctx,
                    cusolverDnXpotrf(hd->solver, hd->params, CUBLAS_FILL_MODE_LOWER, q, CUDA_R_64F,
                                     fr->P, m, CUDA_R_64F, dwork, dbytes, hwork, hbytes, dinfo));
  if (r == 0) return FEA_SUCCESS;
  FEA_CALL_CUBLAS(ctx,
                  cublasDtrsm_64(hd->blas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                 CUBLAS_DIAG_NON_UNIT, r, q, &one, fr->P, m, fr->P + q, m));
  FEA_CALL_CUBLAS(ctx, cublasDsyrk_64(hd->blas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, r, q,
                                      &minus_one, fr->P + q, m, &one, fr->S, r));
  return FEA_SUCCESS;
}

/* The largest cuSOLVER workspaces of the batch's large fronts, made available
 * before any of them is queued (the host one is grown only when the stream
 * is idle, so no queued call can still be using it): nl slices of each, one
 * per lane, device slices of *dbytes *stride bytes apart, host slices of
 * *hbytes *hstride bytes apart in st->h_work (cuSOLVER does not say that it
 * is done with a host workspace when the call returns). */
typedef struct large_work {
  void *d;
  size_t dbytes, dstride;
  size_t hbytes, hstride;
} large_work;

static fea_status large_workspaces(fea_context *ctx, const struct fea_cuda *b,
                                   multifrontal_cuda *st, const fea_cuda_multifrontal_front *fronts,
                                   fea_index count, int nl, large_work *w) {
  size_t dmax = 0, hmax = 0;
  for (fea_index k = 0; k < count; k++) {
    const fea_cuda_multifrontal_front *fr = &fronts[k];
    if (fr->q == 0 || front_batched(fr->q, fr->r)) continue;
    size_t d = 0, h = 0;
    FEA_CALL_CUSOLVER(ctx, cusolverDnXpotrf_bufferSize(b->solver, b->solver_params,
                                                       CUBLAS_FILL_MODE_LOWER, fr->q, CUDA_R_64F,
                                                       fr->P, fr->q + fr->r, CUDA_R_64F, &d, &h));
    if (d > dmax) dmax = d;
    if (h > hmax) hmax = h;
  }
  w->d = NULL;
  w->dbytes = dmax;
  w->dstride = fea_cuda_align_up(dmax);
  w->hbytes = hmax;
  w->hstride = (hmax + 63) / 64 * 64;
  if (dmax > 0) FEA_CALL(fea_cuda_workspace(ctx, w->dstride * (size_t)nl, &w->d));
  const size_t hneed = w->hstride * (size_t)nl;
  if (hneed > st->h_work_bytes) {
    FEA_CALL(fea_cuda_sync(ctx));
    for (int i = 0; i < b->nlanes; i++)
      FEA_CALL_CUDA(ctx, cudaStreamSynchronize(b->lane[i].stream));
    free(st->h_work);
    st->h_work = malloc(hneed);
    st->h_work_bytes = st->h_work ? hneed : 0;
    FEA_CHECK(st->h_work, ctx, FEA_ERR_OUT_OF_MEMORY,
              "no memory for %zu bytes of cuSOLVER host workspace", hneed);
  }
  return FEA_SUCCESS;
}

/* The pivot ranges of a batch's fronts, queued on the context's stream
 * after every front of the batch is factored. */
static fea_status batch_pivots(fea_context *ctx, const struct fea_cuda *b,
                               const multifrontal_cuda *st,
                               const fea_cuda_multifrontal_front *d_fronts, fea_index count) {
  FEA_CALL_CUDA(ctx, fea_cuda_multifrontal_pivots(d_fronts, count, st->d_pivots, b->stream));
  return FEA_SUCCESS;
}

/* One batch of fronts of a level: nodes[0 .. count), the first at position
 * info0 of the level. Leaves are integrated on the host into the batch. */
static fea_status factor_batch(fea_context *ctx, const struct fea_cuda *b,
                               fea_multifrontal_factor *f, multifrontal_cuda *st, int level,
                               const fea_index *nodes, fea_index count, fea_index info0,
                               int leaves) {
  const fea_etree *t = f->tree;
  fea_index nchildren = 0;
  size_t nvalues = 0;
  for (fea_index k = 0; k < count; k++) {
    const fea_etree_node *nd = &t->nodes[nodes[k]];
    nchildren += nd->num_children;
    if (leaves) nvalues += leaf_values(st, nd);
  }
  const batch_layout l = layout_of((size_t)count, (size_t)nchildren, nvalues);
  if (l.total > st->batch_bytes)
    return FEA_ERROR(ctx, FEA_ERR_BACKEND,
                     "internal: a batch of %zu bytes exceeds the %zu planned (level %d)", l.total,
                     st->batch_bytes, level);
  char *h = NULL;
  FEA_CALL(batch_host(ctx, st, &h));
  fea_cuda_multifrontal_front *fronts = (fea_cuda_multifrontal_front *)(void *)(h + l.fronts);
  fea_cuda_multifrontal_child *children = (fea_cuda_multifrontal_child *)(void *)(h + l.children);
  int64_t *list = (int64_t *)(void *)(h + l.list);
  double **ga = (double **)(void *)(h + l.ga), **gc = (double **)(void *)(h + l.gc);
  double *values = (double *)(void *)(h + l.values);

  fea_index nch = 0, nsmall = 0, nitems = 0, max_children = 0, max_child_entries = 0;
  size_t off = 0;
  for (fea_index k = 0; k < count; k++) {
    const fea_index n = nodes[k];
    const fea_etree_node *nd = &t->nodes[n];
    const fea_index q = nd->q, r = nd->r;
    fea_cuda_multifrontal_front *fr = &fronts[k];
    if (nd->num_children > max_children) max_children = nd->num_children;
    fr->P = st->d_panels + nd->factor_off;
    fr->S = st->d_schur[n];
    fr->q = q;
    fr->r = r;
    fr->child_begin = nch;
    fr->num_children = nd->num_children;
    fr->src = -1;
    fr->info = info0 + k;
    fr->node = n;
    fr->elems = 0;
    fr->map = NULL;
    for (fea_index c = 0; c < nd->num_children; c++, nch++) {
      const fea_index ch = t->children[nd->first_child + c];
      const fea_etree_node *cn = &t->nodes[ch];
      children[nch].data = st->d_schur[ch];
      children[nch].map = st->d_ext_map ? st->d_ext_map + cn->map_off : NULL;
      children[nch].q = cn->q;
      children[nch].r = cn->r;
      if (cn->r * cn->r > max_child_entries) max_child_entries = cn->r * cn->r;
    }
    if (leaves) { /* its place in the pinned chunk; integrated below */
      st->value_off[k] = off;
      fr->src = (int64_t)off;
      off += leaf_values(st, nd);
      if (st->records) {
        fr->elems = leaf_elements(nd);
        fr->map = st->d_leaf_map + nd->leaf_off;
      }
    }
    if (q > 0 && front_batched(q, r)) {
      list[nsmall++] = k;
      if (r > 0) {
        gemm_item *it = &st->items[nitems++];
        it->q = q;
        it->r = r;
        it->A = fr->P + q;
        it->C = fr->S;
      }
    }
  }
  /* The leaves on the host's threads, as /cpu/ref integrates them (the load
   * summed in leaf order, so it does not depend on the thread count). */
  if (leaves)
    FEA_CALL(fea_multifrontal_assemble_leaves(ctx, f, nodes, count, st->records ? &st->shape : NULL,
                                              values, st->value_off, st->h_load, ctx->nthreads));
  qsort(st->items, (size_t)nitems, sizeof *st->items, cmp_gemm_item);
  for (fea_index i = 0; i < nitems; i++) {
    ga[i] = st->items[i].A;
    gc[i] = st->items[i].C;
  }
  FEA_CALL(batch_upload(ctx, b, st, l.total));

  const fea_cuda_multifrontal_front *d_fronts = dev_at(st, l.fronts);
  if (leaves && st->records) {
    FEA_CALL_CUDA(ctx, fea_cuda_multifrontal_integrate_leaves(d_fronts, count, dev_at(st, l.values),
                                                              &st->dshape, b->stream));
  } else if (leaves) {
    FEA_CALL_CUDA(ctx, fea_cuda_multifrontal_scatter_leaves(d_fronts, count, dev_at(st, l.values),
                                                            b->stream));
  } else {
    FEA_CALL_CUDA(ctx,
                  fea_cuda_multifrontal_extend_add(d_fronts, count, dev_at(st, l.children),
                                                   max_children, max_child_entries, b->stream));
  }
  FEA_CALL_CUDA(ctx, fea_cuda_multifrontal_panel(d_fronts, dev_at(st, l.list), nsmall, st->d_info,
                                                 b->stream));
  /* S -= L21 L21^T for the small fronts, one batched GEMM per (q, r) class
   * (the full square: the upper triangle is never read). */
  const double one = 1.0, minus_one = -1.0;
  double *const *d_ga = dev_at(st, l.ga), *const *d_gc = dev_at(st, l.gc);
  for (fea_index i = 0; i < nitems;) {
    fea_index e = i + 1;
    while (e < nitems && st->items[e].q == st->items[i].q && st->items[e].r == st->items[i].r) e++;
    const int q = (int)st->items[i].q, r = (int)st->items[i].r, cnt = (int)(e - i);
    FEA_CALL_CUBLAS(ctx, cublasDgemmBatched(b->blas, CUBLAS_OP_N, CUBLAS_OP_T, r, r, q, &minus_one,
                                            (const double *const *)(d_ga + i), q + r,
                                            (const double *const *)(d_ga + i), q + r, &one,
                                            d_gc + i, r, cnt));
    i = e;
  }
  /* The large fronts: one by one on the context's stream, or spread over
   * lanes when there are several (a level's mid-sized fronts are each too
   * small to fill the GPU: 3D p = 2 with 1M unknowns ran its 1024-front
   * level at 0.9 TFLOP/s, 1.4 % of the H100's DGEMM, on one stream). */
  fea_index nlarge = 0;
  for (fea_index k = 0; k < count; k++)
    if (fronts[k].q > 0 && !front_batched(fronts[k].q, fronts[k].r)) nlarge++;
  if (nlarge == 0) return batch_pivots(ctx, b, st, d_fronts, count);
  int nl = b->lanes_wanted;
  if (nl > nlarge) nl = (int)nlarge;
  large_work w;
  FEA_CALL(large_workspaces(ctx, b, st, fronts, count, nl, &w));
  front_handles own = {b->blas, b->solver, b->solver_params}, hd[FEA_CUDA_MAX_LANES];
  fea_cuda_lane *lanes = NULL;
  if (nl > 1) {
    FEA_CALL(fea_cuda_lanes_fork(ctx, nl, &lanes));
    for (int i = 0; i < nl; i++)
      hd[i] = (front_handles){lanes[i].blas, lanes[i].solver, lanes[i].solver_params};
  } else {
    hd[0] = own;
  }
  fea_status s = FEA_SUCCESS;
  fea_index failed = -1, j = 0;
  for (fea_index k = 0; k < count && s == FEA_SUCCESS; k++) {
    if (fronts[k].q == 0 || front_batched(fronts[k].q, fronts[k].r)) continue;
    const int lane = (int)(j++ % nl);
    s = factor_large(ctx, &hd[lane], &fronts[k],
                     w.d ? (char *)w.d + (size_t)lane * w.dstride : NULL, w.dbytes,
                     w.hbytes ? (char *)st->h_work + (size_t)lane * w.hstride : NULL, w.hbytes,
                     st->d_info + info0 + k);
    if (s < 0) failed = k;
  }
  /* The join comes on every path: frees queued later on the context's
   * stream must wait for the lanes. */
  if (nl > 1) {
    fea_status js = fea_cuda_lanes_join(ctx, nl);
    if (s == FEA_SUCCESS) s = js;
  }
  if (failed >= 0) return node_fail(ctx, f, nodes[failed], s);
  if (s == FEA_SUCCESS) s = batch_pivots(ctx, b, st, d_fronts, count); /* after the join */
  return s;
}

static fea_status factor_level_run(fea_context *ctx, fea_multifrontal_factor *f,
                                   multifrontal_cuda *st, const struct fea_cuda *b, int level) {
  const fea_etree *t = f->tree;
  const fea_index *nodes = t->level_nodes + t->level_start[level];
  const fea_index count = t->level_start[level + 1] - t->level_start[level];
  const double before = (double)t->level_start[level], all = (double)t->num_nodes;
  FEA_CALL(fea_progress_of(ctx, FEA_PROGRESS_MULTIFRONTAL, before, all));

  FEA_CALL(groups_birth(ctx, b, st, level, st->schur_entries, st->schur_d, 1));
  for (fea_index k = 0; k < count; k++) {
    const fea_index n = nodes[k];
    const fea_etree_node *nd = &t->nodes[n];
    const int g = st->group_of[n];
    st->d_schur[n] = nd->r > 0 ? st->schur_d[g] + st->schur_off[n] : NULL;
  }
  FEA_CALL_CUDA(ctx, cudaMemsetAsync(st->d_info, 0, (size_t)count * sizeof(int), b->stream));

  if (level == 0) {
    /* Chunks of leaves: the host integrates the next while the device works. */
    for (fea_index k = 0; k < count;) {
      size_t vals = 0, loads = 0;
      fea_index e = k;
      while (e < count) {
        const fea_etree_node *nd = &t->nodes[nodes[e]];
        const size_t v = leaf_values(st, nd), ld = (size_t)(nd->q + nd->r);
        if (e > k && (vals + v > st->chunk_values || loads + ld > st->chunk_values)) break;
        vals += v;
        loads += ld;
        e++;
      }
      FEA_CALL(factor_batch(ctx, b, f, st, level, nodes + k, e - k, k, 1));
      k = e;
      FEA_CALL(fea_progress_of(ctx, FEA_PROGRESS_MULTIFRONTAL, before + (double)k, all));
    }
  } else {
    FEA_CALL(factor_batch(ctx, b, f, st, level, nodes, count, 0, 0));
  }

  /* The root's Schur block (keep_boundary) comes to the host. */
  const fea_index root = t->num_nodes - 1;
  if (level == t->num_levels - 1 && t->nodes[root].r > 0) {
    const fea_index r = t->nodes[root].r;
    f->schur[root] = malloc((size_t)(r * r) * sizeof(double));
    FEA_CHECK(f->schur[root], ctx, FEA_ERR_OUT_OF_MEMORY,
              "no memory for the %lld x %lld boundary Schur complement", (long long)r,
              (long long)r);
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(f->schur[root], st->d_schur[root],
                                       (size_t)(r * r) * sizeof(double), cudaMemcpyDeviceToHost,
                                       b->stream));
  }
  /* The pivot ranges, read once: with the last level's sync. */
  if (level == t->num_levels - 1)
    FEA_CALL_CUDA(ctx, cudaMemcpyAsync(f->pivots, st->d_pivots,
                                       (size_t)t->num_nodes * 2 * sizeof(double),
                                       cudaMemcpyDeviceToHost, b->stream));
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(st->h_info, st->d_info, (size_t)count * sizeof(int),
                                     cudaMemcpyDeviceToHost, b->stream));
  FEA_CALL(fea_cuda_sync(ctx));
  for (fea_index k = 0; k < count; k++) {
    const int info = st->h_info[k];
    if (info == 0) continue;
    if (info < 0)
      return fea_multifrontal_node_error(ctx, f, nodes[k], FEA_ERR_BACKEND,
                                         "cusolverDnXpotrf() rejected one of its arguments");
    /* The failing pivot's value: the panel kernel leaves it on the diagonal
     * (cuSOLVER, as LAPACK, the Schur-updated entry). */
    const fea_etree_node *nd = &t->nodes[nodes[k]];
    double d = NAN;
    if (cudaMemcpy(&d, st->d_panels + nd->factor_off + (fea_index)(info - 1) * (nd->q + nd->r + 1),
                   sizeof d, cudaMemcpyDeviceToHost) != cudaSuccess)
      (void)cudaGetLastError();
    char why[160];
    snprintf(why, sizeof why, "pivot %d of its %lld is %.6g (leading minor of order %d)", info - 1,
             (long long)nd->q, d, info);
    return fea_multifrontal_node_error(ctx, f, nodes[k], FEA_ERR_NOT_POSDEF, why);
  }
  for (fea_index k = 0; k < count; k++) {
    const fea_etree_node *nd = &t->nodes[nodes[k]];
    f->flops += node_flops(nd->q, nd->r);
  }
  /* The children's Schur blocks (and the root's) are no longer needed. */
  groups_death(ctx, st, level, st->schur_d);
  for (fea_index n = 0; n < t->num_nodes; n++)
    if (st->d_schur[n] && st->schur_d[st->group_of[n]] == NULL) st->d_schur[n] = NULL;
  return fea_progress_of(ctx, FEA_PROGRESS_MULTIFRONTAL, before + (double)count, all);
}

static fea_status cuda_factor_level(fea_context *ctx, fea_multifrontal_factor *f, int level) {
  multifrontal_cuda *st = f->backend;
  struct fea_cuda *b;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  fea_status s = factor_level_run(ctx, f, st, b, level);
  if (s < 0 && s != FEA_ERR_NOT_POSDEF && s != FEA_ERR_CANCELLED) {
    const fea_etree *t = f->tree;
    return level_fail(ctx, "factorization", level,
                      t->level_start[level + 1] - t->level_start[level], s);
  }
  return s;
}

/* --------------------------------------------------------------------- solve */

static double *work_of(const multifrontal_cuda *st, fea_index n, int64_t nrhs) {
  double *g = st->work_d[st->group_of[n]];
  return g ? g + st->work_off[n] * (size_t)nrhs : NULL;
}

/* y on the device, nrhs columns of num_dofs (ld num_dofs), from sv->y. */
/* After the level's sync: the pending copy's time into the solve's. */
static fea_status copy_time(fea_context *ctx, multifrontal_cuda *st, fea_multifrontal_solve *sv) {
  if (!st->copy_pending) return FEA_SUCCESS;
  st->copy_pending = 0;
  float ms = 0;
  FEA_CALL_CUDA(ctx, cudaEventElapsedTime(&ms, st->copy_ev[0], st->copy_ev[1]));
  sv->transfer_s += 1e-3 * (double)ms;
  return FEA_SUCCESS;
}

/* One copy of y between host and device, between two timing events; the
 * level's closing sync makes its time readable (copy_time). A second copy
 * in one level (a one-level tree uploads and downloads in it) first waits
 * for the time of the one before. */
static fea_status timed_copy(fea_context *ctx, const struct fea_cuda *b, multifrontal_cuda *st,
                             fea_multifrontal_solve *sv, void *dst, const void *src, size_t bytes,
                             enum cudaMemcpyKind kind) {
  if (st->copy_pending) {
    FEA_CALL_CUDA(ctx, cudaEventSynchronize(st->copy_ev[1]));
    FEA_CALL(copy_time(ctx, st, sv));
  }
  if (!st->copy_made) {
    FEA_CALL_CUDA(ctx, cudaEventCreate(&st->copy_ev[0]));
    if (cudaEventCreate(&st->copy_ev[1]) != cudaSuccess) {
      (void)cudaEventDestroy(st->copy_ev[0]);
      FEA_CALL_CUDA(ctx, cudaGetLastError());
    }
    st->copy_made = 1;
  }
  FEA_CALL_CUDA(ctx, cudaEventRecord(st->copy_ev[0], b->stream));
  FEA_CALL_CUDA(ctx, cudaMemcpyAsync(dst, src, bytes, kind, b->stream));
  FEA_CALL_CUDA(ctx, cudaEventRecord(st->copy_ev[1], b->stream));
  st->copy_pending = 1;
  return FEA_SUCCESS;
}

static fea_status upload_y(fea_context *ctx, const struct fea_cuda *b,
                           const fea_multifrontal_factor *f, multifrontal_cuda *st,
                           fea_multifrontal_solve *sv) {
  const size_t entries = (size_t)(f->tree->num_dofs * sv->nrhs);
  if (entries > st->y_entries || !st->d_y) {
    fea_cuda_free(ctx, st->d_y);
    st->d_y = NULL;
    st->y_entries = 0;
    void *p = NULL;
    FEA_CALL(fea_cuda_malloc(ctx, (entries ? entries : 1) * sizeof(double), &p));
    st->d_y = p;
    st->y_entries = entries;
  }
  if (entries > 0)
    FEA_CALL(timed_copy(ctx, b, st, sv, st->d_y, sv->y, entries * sizeof(double),
                        cudaMemcpyHostToDevice));
  return FEA_SUCCESS;
}

static fea_status download_y(fea_context *ctx, const struct fea_cuda *b,
                             const fea_multifrontal_factor *f, multifrontal_cuda *st,
                             fea_multifrontal_solve *sv) {
  const size_t entries = (size_t)(f->tree->num_dofs * sv->nrhs);
  if (entries > 0)
    FEA_CALL(timed_copy(ctx, b, st, sv, sv->y, st->d_y, entries * sizeof(double),
                        cudaMemcpyDeviceToHost));
  return FEA_SUCCESS;
}

static fea_status forward_large(fea_context *ctx, const struct fea_cuda *b,
                                const fea_cuda_multifrontal_sfront *fr, int64_t nrhs) {
  const int64_t q = fr->q, r = fr->r, m = q + r;
  const double one = 1.0, minus_one = -1.0;
  FEA_CALL_CUBLAS(ctx,
                  cublasDtrsm_64(b->blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                 CUBLAS_DIAG_NON_UNIT, q, nrhs, &one, fr->P, m, fr->W, m));
  if (r == 0) return FEA_SUCCESS;
  FEA_CALL_CUBLAS(ctx, cublasDgemm_64(b->blas, CUBLAS_OP_N, CUBLAS_OP_N, r, nrhs, q, &minus_one,
                                      fr->P + q, m, fr->W, m, &one, fr->W + q, m));
  return FEA_SUCCESS;
}

static fea_status backward_large(fea_context *ctx, const struct fea_cuda *b,
                                 const fea_cuda_multifrontal_sfront *fr, int64_t nrhs) {
  const int64_t q = fr->q, r = fr->r, m = q + r;
  const double one = 1.0, minus_one = -1.0;
  if (r > 0)
    FEA_CALL_CUBLAS(ctx, cublasDgemm_64(b->blas, CUBLAS_OP_T, CUBLAS_OP_N, q, nrhs, r, &minus_one,
                                        fr->P + q, m, fr->W + q, m, &one, fr->W, m));
  FEA_CALL_CUBLAS(ctx,
                  cublasDtrsm_64(b->blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                 CUBLAS_DIAG_NON_UNIT, q, nrhs, &one, fr->P, m, fr->W, m));
  return FEA_SUCCESS;
}

/* A kept boundary (the root's r rows, keep_boundary) leaves the forward
 * substitution as the condensed right-hand side, as on the CPU: the rows of
 * the root's work block (its children's updates less L21 y_q) are added to
 * the load b_B that y still holds there. The block comes to the host before
 * the level's groups are freed (m x nrhs doubles, once per solve). */
static fea_status kept_rows_fetch(fea_context *ctx, const struct fea_cuda *b,
                                  const fea_multifrontal_factor *f, multifrontal_cuda *st,
                                  const fea_multifrontal_solve *sv, double **out) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[t->num_nodes - 1];
  const size_t entries = (size_t)((nd->q + nd->r) * sv->nrhs);
  *out = NULL;
  if (nd->r == 0) return FEA_SUCCESS;
  const double *W = work_of(st, t->num_nodes - 1, sv->nrhs);
  FEA_CHECK(W, ctx, FEA_ERR_BACKEND, "internal: the root's work block is not allocated");
  double *h = malloc(entries * sizeof *h);
  FEA_CHECK(h, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for the %zu entries of the root's block",
            entries);
  cudaError_t e = cudaMemcpyAsync(h, W, entries * sizeof *h, cudaMemcpyDeviceToHost, b->stream);
  if (e == cudaSuccess) e = cudaStreamSynchronize(b->stream);
  if (e != cudaSuccess) {
    free(h);
    FEA_CALL_CUDA(ctx, e);
  }
  *out = h;
  return FEA_SUCCESS;
}

static void kept_rows_add(const fea_multifrontal_factor *f, fea_multifrontal_solve *sv,
                          const double *h) {
  const fea_etree *t = f->tree;
  const fea_etree_node *nd = &t->nodes[t->num_nodes - 1];
  const fea_index q = nd->q, m = q + nd->r, N = t->num_dofs;
  const fea_index *dofs = t->front_dofs + nd->front_off + q;
  for (fea_index j = 0; j < sv->nrhs; j++)
    for (fea_index i = 0; i < nd->r; i++) sv->y[dofs[i] + j * N] += h[q + i + j * m];
}

static fea_status forward_run(fea_context *ctx, const struct fea_cuda *b,
                              const fea_multifrontal_factor *f, multifrontal_cuda *st,
                              fea_multifrontal_solve *sv, int level) {
  const fea_etree *t = f->tree;
  const fea_index *nodes = t->level_nodes + t->level_start[level];
  const fea_index count = t->level_start[level + 1] - t->level_start[level];
  const int64_t nrhs = sv->nrhs, N = t->num_dofs;
  if (level == 0) {
    groups_free_all(ctx, st, st->work_d); /* left by a solve that failed half-way */
    FEA_CALL(upload_y(ctx, b, f, st, sv));
  }
  FEA_CALL(groups_birth(ctx, b, st, level, st->work_entries, st->work_d, (size_t)nrhs));

  fea_index nchildren = 0;
  for (fea_index k = 0; k < count; k++) nchildren += t->nodes[nodes[k]].num_children;
  const batch_layout l = layout_of((size_t)count, (size_t)nchildren, 0);
  FEA_CHECK(l.total <= st->batch_bytes, ctx, FEA_ERR_BACKEND,
            "internal: a solve batch of %zu bytes exceeds the %zu planned", l.total,
            st->batch_bytes);
  char *h = NULL;
  FEA_CALL(batch_host(ctx, st, &h));
  fea_cuda_multifrontal_sfront *fronts = (fea_cuda_multifrontal_sfront *)(void *)(h + l.fronts);
  fea_cuda_multifrontal_child *children = (fea_cuda_multifrontal_child *)(void *)(h + l.children);
  int64_t *list = (int64_t *)(void *)(h + l.list);
  fea_index nch = 0, nsmall = 0;
  for (fea_index k = 0; k < count; k++) {
    const fea_index n = nodes[k];
    const fea_etree_node *nd = &t->nodes[n];
    fea_cuda_multifrontal_sfront *fr = &fronts[k];
    fr->P = st->d_panels + nd->factor_off;
    fr->W = work_of(st, n, nrhs);
    fr->dofs = st->d_front_dofs ? st->d_front_dofs + nd->front_off : NULL;
    fr->q = nd->q;
    fr->r = nd->r;
    fr->child_begin = nch;
    fr->num_children = nd->num_children;
    for (fea_index c = 0; c < nd->num_children; c++, nch++) {
      const fea_index ch = t->children[nd->first_child + c];
      const fea_etree_node *cn = &t->nodes[ch];
      children[nch].data = work_of(st, ch, nrhs);
      children[nch].map = st->d_ext_map ? st->d_ext_map + cn->map_off : NULL;
      children[nch].q = cn->q;
      children[nch].r = cn->r;
    }
    if (nd->q > 0 && front_batched(nd->q, nd->r)) list[nsmall++] = k;
  }
  FEA_CALL(batch_upload(ctx, b, st, l.total));
  const fea_cuda_multifrontal_sfront *d_fronts = dev_at(st, l.fronts);
  FEA_CALL_CUDA(ctx, fea_cuda_multifrontal_forward_gather(d_fronts, count, dev_at(st, l.children),
                                                          st->d_y, N, nrhs, b->stream));
  FEA_CALL_CUDA(ctx, fea_cuda_multifrontal_forward_small(d_fronts, dev_at(st, l.list), nsmall, nrhs,
                                                         b->stream));
  for (fea_index k = 0; k < count; k++) {
    if (fronts[k].q == 0 || front_batched(fronts[k].q, fronts[k].r)) continue;
    fea_status s = forward_large(ctx, b, &fronts[k], nrhs);
    if (s < 0) return node_fail(ctx, f, nodes[k], s);
  }
  FEA_CALL_CUDA(ctx, fea_cuda_multifrontal_scatter_solution(d_fronts, count, st->d_y, N, nrhs,
                                                            b->stream));
  if (level < t->num_levels - 1) {
    groups_death(ctx, st, level, st->work_d);
    return fea_cuda_sync(ctx);
  }
  /* The root: y comes back, and a kept boundary's rows with it (see below). */
  double *kept = NULL;
  fea_status s = t->keep_boundary ? kept_rows_fetch(ctx, b, f, st, sv, &kept) : FEA_SUCCESS;
  groups_death(ctx, st, level, st->work_d);
  if (s == FEA_SUCCESS) s = download_y(ctx, b, f, st, sv);
  if (s == FEA_SUCCESS) s = fea_cuda_sync(ctx);
  if (s == FEA_SUCCESS && kept) kept_rows_add(f, sv, kept);
  free(kept);
  return s;
}

static fea_status backward_run(fea_context *ctx, const struct fea_cuda *b,
                               const fea_multifrontal_factor *f, multifrontal_cuda *st,
                               fea_multifrontal_solve *sv, int level) {
  const fea_etree *t = f->tree;
  const fea_index *nodes = t->level_nodes + t->level_start[level];
  const fea_index count = t->level_start[level + 1] - t->level_start[level];
  const int64_t nrhs = sv->nrhs, N = t->num_dofs;
  if (level == t->num_levels - 1) FEA_CALL(upload_y(ctx, b, f, st, sv));

  size_t zentries = 0;
  fea_index active = 0;
  for (fea_index k = 0; k < count; k++) {
    const fea_etree_node *nd = &t->nodes[nodes[k]];
    if (nd->q == 0) continue;
    zentries += (size_t)(nd->q + nd->r) * (size_t)nrhs;
    active++;
  }
  if (active > 0) {
    const batch_layout l = layout_of((size_t)active, 0, 0);
    FEA_CHECK(l.total <= st->batch_bytes, ctx, FEA_ERR_BACKEND,
              "internal: a solve batch of %zu bytes exceeds the %zu planned", l.total,
              st->batch_bytes);
    void *p = NULL;
    fea_cuda_free(ctx, st->d_z);
    st->d_z = NULL;
    FEA_CALL(fea_cuda_malloc(ctx, zentries * sizeof(double), &p));
    st->d_z = p;
    char *h = NULL;
    FEA_CALL(batch_host(ctx, st, &h));
    fea_cuda_multifrontal_sfront *fronts = (fea_cuda_multifrontal_sfront *)(void *)(h + l.fronts);
    int64_t *list = (int64_t *)(void *)(h + l.list);
    fea_index a = 0, nsmall = 0;
    size_t off = 0;
    for (fea_index k = 0; k < count; k++) {
      const fea_etree_node *nd = &t->nodes[nodes[k]];
      if (nd->q == 0) continue;
      fea_cuda_multifrontal_sfront *fr = &fronts[a];
      fr->P = st->d_panels + nd->factor_off;
      fr->W = st->d_z + off;
      fr->dofs = st->d_front_dofs + nd->front_off;
      fr->q = nd->q;
      fr->r = nd->r;
      fr->child_begin = 0;
      fr->num_children = 0;
      off += (size_t)(nd->q + nd->r) * (size_t)nrhs;
      if (front_batched(nd->q, nd->r)) list[nsmall++] = a;
      a++;
    }
    FEA_CALL(batch_upload(ctx, b, st, l.total));
    const fea_cuda_multifrontal_sfront *d_fronts = dev_at(st, l.fronts);
    FEA_CALL_CUDA(ctx, fea_cuda_multifrontal_backward_gather(d_fronts, active, st->d_y, N, nrhs,
                                                             b->stream));
    FEA_CALL_CUDA(ctx, fea_cuda_multifrontal_backward_small(d_fronts, dev_at(st, l.list), nsmall,
                                                            nrhs, b->stream));
    a = 0;
    for (fea_index k = 0; k < count; k++) {
      const fea_etree_node *nd = &t->nodes[nodes[k]];
      if (nd->q == 0) continue;
      if (!front_batched(nd->q, nd->r)) {
        fea_status s = backward_large(ctx, b, &fronts[a], nrhs);
        if (s < 0) return node_fail(ctx, f, nodes[k], s);
      }
      a++;
    }
    FEA_CALL_CUDA(ctx, fea_cuda_multifrontal_scatter_solution(d_fronts, active, st->d_y, N, nrhs,
                                                              b->stream));
    fea_cuda_free(ctx, st->d_z);
    st->d_z = NULL;
  }
  if (level == 0) FEA_CALL(download_y(ctx, b, f, st, sv));
  return fea_cuda_sync(ctx);
}

static fea_status cuda_forward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                     fea_multifrontal_solve *sv, int level) {
  multifrontal_cuda *st = f->backend;
  struct fea_cuda *b;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  st->copy_pending = 0;
  fea_status s = forward_run(ctx, b, f, st, sv, level);
  if (s == FEA_SUCCESS) s = copy_time(ctx, st, sv);
  if (s < 0) {
    const fea_etree *t = f->tree;
    return level_fail(ctx, "forward substitution", level,
                      t->level_start[level + 1] - t->level_start[level], s);
  }
  return s;
}

static fea_status cuda_backward_level(fea_context *ctx, const fea_multifrontal_factor *f,
                                      fea_multifrontal_solve *sv, int level) {
  multifrontal_cuda *st = f->backend;
  struct fea_cuda *b;
  FEA_CALL(fea_cuda_enter(ctx, &b));
  st->copy_pending = 0;
  fea_status s = backward_run(ctx, b, f, st, sv, level);
  if (s == FEA_SUCCESS) s = copy_time(ctx, st, sv);
  if (s < 0) {
    const fea_etree *t = f->tree;
    return level_fail(ctx, "backward substitution", level,
                      t->level_start[level + 1] - t->level_start[level], s);
  }
  return s;
}

const struct fea_multifrontal_ops fea_cuda_multifrontal_ops = {
    .factor_alloc = cuda_factor_alloc,
    .factor_release = cuda_factor_release,
    .factor_level = cuda_factor_level,
    .forward_level = cuda_forward_level,
    .backward_level = cuda_backward_level,
};
