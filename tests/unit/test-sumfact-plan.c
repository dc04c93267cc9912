/* The sum-factorization restriction plan (src/matfree/sumfact/plan.c)
 * against the element-DoF table it was built from: every address the plan
 * gives (class bases and offsets, free-row classes, line batch lanes,
 * boundary line rows and steps, chains, tiles, blocks, singles) must be the
 * table's entry or its free row, on structured Lagrange meshes Q1 up to the
 * largest degree the spaces have (Q6, FEA_LAGRANGE_MAX_ORDER; 2D and 3D), B-splines p = 1..4, and a randomly renumbered mesh where no DoF
 * keeps a fixed distance to another (the plan falls back to one class per
 * DoF and no line batches). Built for 4 lanes and for 8 with tiles. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "disc/lagrange.h"
#include "disc/pattern.h"
#include "disc/problem.h"
#include "disc/space.h"
#include "matfree/sumfact/plan.h"

static fea_context *ctx;

static void setup(void) { cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS); }
static void teardown(void) { fea_context_destroy(&ctx); }

TestSuite(sumfact_plan, .init = setup, .fini = teardown, .timeout = 300);

/* Lane l of DoF i of the line batch that starts at e0, by the plan. */
static fea_index lane_row(const fea_sf_plan *p, fea_index e0, int i, int l) {
  const int c = p->fcls[i];
  return p->fbase[e0 * p->nfclass + c] + p->foff[i] + (fea_index)l * p->lstride[c];
}

/* The batch of kind 1 or 2 that starts at e0: each lane's rows are the
 * table's. */
static void expect_batch(const fea_sf_plan *p, const fea_index *ed, const fea_index *fi,
                         fea_index e0, int kind, const char *what) {
  const int nb = p->nb, W = p->lanes;
  cr_assert(e0 >= 0 && e0 + W <= p->ne, "%s: batch at %lld leaves the mesh", what, (long long)e0);
  const fea_index *rows = kind == 2 ? p->brow + (fea_index)p->brow_at[e0] * 2 * nb : NULL;
  if (kind == 2)
    cr_assert(p->brow_at[e0] >= 0, "%s: boundary batch at %lld without rows", what, (long long)e0);
  for (int l = 0; l < W; l++)
    for (int i = 0; i < nb; i++) {
      const fea_index want = fi[ed[(e0 + l) * nb + i]];
      const fea_index got = kind == 1     ? lane_row(p, e0, i, l)
                            : rows[i] < 0 ? -1
                                          : rows[i] + (fea_index)l * rows[nb + i];
      cr_assert_eq(got, want,
                   "%s: line batch (kind %d) at element %lld, lane %d, DoF %d: row "
                   "%lld, the table's %lld",
                   what, kind, (long long)e0, l, i, (long long)got, (long long)want);
    }
}

/* Everything the plan says, against the table ed (ne x nb) and free rows fi. */
static void check_plan(const fea_index *ed, const fea_index *fi, fea_index ne, int nb, int lanes,
                       int tiles, const char *what, int expect_lines) {
  fea_sf_plan p;
  const fea_sf_plan_input in = {.edofs = ed,
                                .free_index = fi,
                                .ne = ne,
                                .nb = nb,
                                .lanes = lanes,
                                .tiles = tiles,
                                .threads = 2};
  cr_assert_eq(fea_sf_plan_build(&in, &p), FEA_SUCCESS, "%s: plan not built", what);
  cr_assert(p.nclass >= 1 && p.nclass <= nb, "%s: %d classes for %d DoFs", what, p.nclass, nb);
  for (fea_index e = 0; e < ne; e++) {
    int all_free = 1;
    for (int i = 0; i < nb; i++) {
      const fea_index d = p.base[e * p.nclass + p.cls[i]] + p.off[i];
      cr_assert_eq(d, ed[e * nb + i], "%s: element %lld DoF %d at %lld, the table says %lld", what,
                   (long long)e, i, (long long)d, (long long)ed[e * nb + i]);
      all_free &= fi[ed[e * nb + i]] >= 0;
    }
    if (!all_free) continue;
    cr_assert(p.nfclass >= 1, "%s: element %lld is all free but there are no row classes", what,
              (long long)e);
    for (int i = 0; i < nb; i++) {
      const fea_index r = p.fbase[e * p.nfclass + p.fcls[i]] + p.foff[i];
      cr_assert_eq(r, fi[ed[e * nb + i]],
                   "%s: element %lld DoF %d in row %lld, the table's is "
                   "%lld",
                   what, (long long)e, i, (long long)r, (long long)fi[ed[e * nb + i]]);
    }
  }
  if (expect_lines >= 0)
    cr_assert_eq(p.line_ok != NULL, expect_lines, "%s: line batches %s", what,
                 p.line_ok ? "found" : "missing");
  if (!p.line_ok) {
    fea_sf_plan_free(&p);
    return;
  }
  fea_index starts = 0;
  for (fea_index e = 0; e < ne; e++) {
    const unsigned v = p.line_ok[e];
    if (v == 1 || v == 2) {
      expect_batch(&p, ed, fi, e, (int)v, what);
      starts++;
    } else if (v & SF_TAIL) { /* in the batch of that kind from e - skip */
      const int kind = (v >> 4) & 3, skip = v & 15;
      cr_assert(skip >= 1 && skip <= lanes / 2, "%s: element %lld's tail skip %d", what,
                (long long)e, skip);
      expect_batch(&p, ed, fi, e - skip, kind, what);
    } else {
      cr_assert_eq(v, 0u, "%s: element %lld's line flag 0x%x", what, (long long)e, v);
    }
  }
  cr_assert_eq(starts, p.line_batches, "%s: %lld batch starts, the plan counts %lld", what,
               (long long)starts, (long long)p.line_batches);
  /* Chains: unit stride, offsets one apart, each free DoF of stride 1 once. */
  int seen[SF_MAX_NB] = {0};
  for (int c = 0; c < p.nchain; c++)
    for (int j = p.chain_start[c]; j < p.chain_start[c + 1]; j++) {
      const int i = p.chain_dof[j];
      cr_assert_eq(p.lstride[p.fcls[i]], 1, "%s: chain %d holds DoF %d of stride %d", what, c, i,
                   p.lstride[p.fcls[i]]);
      if (j > p.chain_start[c])
        cr_assert_eq(p.foff[i], p.foff[p.chain_dof[j - 1]] + 1,
                     "%s: chain %d not consecutive at "
                     "DoF %d",
                     what, c, i);
      seen[i]++;
    }
  /* Tiles: slot q of tile k is the DoF at offset tile_off + q of its class. */
  cr_assert(tiles || p.ntile == 0, "%s: %d tiles without tiles", what, p.ntile);
  for (int k = 0; k < p.ntile; k++)
    for (int q = 0; q < 2 * p.tile_st[k]; q++) {
      const int i = p.tile_sdof[k][q];
      if (i < 0) continue;
      cr_assert(p.fcls[i] == p.tile_cls[k] && p.foff[i] == p.tile_off[k] + q &&
                    p.lstride[p.fcls[i]] == p.tile_st[k],
                "%s: tile %d slot %d holds DoF %d at offset %d", what, k, q, i, p.foff[i]);
      seen[i]++;
    }
  /* Blocks: column j at offset block_off + j, the next ones one stride on. */
  for (int k = 0; k < p.nblock; k++)
    for (int j = 0; j < p.block_m[k]; j++) {
      const int i = p.block_dof[k][j], n = p.block_next[k][j];
      cr_assert(p.fcls[i] == p.block_cls[k] && p.foff[i] == p.block_off[k] + j,
                "%s: block %d column %d holds DoF %d at offset %d", what, k, j, i, p.foff[i]);
      seen[i]++;
      if (n >= 0) {
        cr_assert(p.fcls[n] == p.block_cls[k] && p.foff[n] == p.block_off[k] + p.block_st[k] + j,
                  "%s: block %d column %d's next is DoF %d at offset %d", what, k, j, n, p.foff[n]);
        seen[n]++;
      }
    }
  for (int j = 0; j < p.sg.n; j++) seen[p.sg.dof[j]]++;
  for (int i = 0; i < nb; i++)
    cr_assert_eq(seen[i], 1, "%s: DoF %d is gathered %d times (chains, tiles, blocks, singles)",
                 what, i, seen[i]);
  fea_sf_plan_free(&p);
}

/* The plan of the problem's table, and of the same table with the DoFs
 * renumbered at random (no fixed distances left). */
static void check_problem(const fea_problem *pb, const char *what, int expect_lines) {
  const fea_space *sp = pb->space;
  const fea_index ne = sp->num_elements, N = sp->num_dofs;
  const int nb = sp->dofs_per_element;
  fea_index *ed;
  cr_assert_eq(fea_element_dof_table(sp, &ed), FEA_SUCCESS);
  char w[160];
  for (int t = 0; t < 2; t++) {
    snprintf(w, sizeof w, "%s, %d lanes", what, t ? 8 : 4);
    check_plan(ed, pb->free_index, ne, nb, t ? 8 : 4, t, w, expect_lines);
  }
  /* Renumbered: DoF d becomes perm[d]; the free rows follow their DoFs. */
  fea_index *perm = malloc((size_t)N * sizeof *perm),
            *ed2 = malloc((size_t)(ne * nb) * sizeof *ed2);
  fea_index *fi2 = malloc((size_t)N * sizeof *fi2);
  uint64_t r = 12345;
  for (fea_index d = 0; d < N; d++) perm[d] = d;
  for (fea_index d = N - 1; d > 0; d--) {
    r = r * 6364136223846793005ull + 1442695040888963407ull;
    const fea_index j = (fea_index)((r >> 33) % (uint64_t)(d + 1)), tmp = perm[d];
    perm[d] = perm[j];
    perm[j] = tmp;
  }
  for (fea_index k = 0; k < ne * nb; k++) ed2[k] = perm[ed[k]];
  for (fea_index d = 0; d < N; d++) fi2[perm[d]] = pb->free_index[d];
  snprintf(w, sizeof w, "%s renumbered", what);
  check_plan(ed2, fi2, ne, nb, 8, 1, w, -1);
  free(perm), free(ed2), free(fi2), free(ed);
}

static fea_problem *poisson(fea_space *s) {
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_problem *pb;
  cr_assert_eq(fea_problem_create_poisson(s, &pd, &pb), FEA_SUCCESS, "%s",
               fea_context_last_error(ctx));
  return pb;
}

Test(sumfact_plan, lagrange_q1_to_q6_structured_2d_3d) {
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= FEA_LAGRANGE_MAX_ORDER; p++) {
      fea_mesh_desc md = FEA_MESH_DESC_INIT;
      md.dim = dim;
      md.n[0] = dim == 2 ? 19 : (p <= 4 ? 11 : 9); /* lines longer than two batches */
      md.n[1] = dim == 2 ? 4 : 3;
      if (dim == 3) md.n[2] = 3;
      fea_mesh *m;
      fea_space *s;
      cr_assert_eq(fea_mesh_create_structured(ctx, &md, &m), FEA_SUCCESS);
      cr_assert_eq(fea_space_create_lagrange(m, p, FEA_NODES_EQUISPACED, &s), FEA_SUCCESS);
      fea_problem *pb = poisson(s);
      char what[64];
      snprintf(what, sizeof what, "%dD Q%d", dim, p);
      check_problem(pb, what, 1);
      fea_problem_destroy(&pb);
      fea_space_destroy(&s);
      fea_mesh_destroy(&m);
    }
}

Test(sumfact_plan, bsplines_p1_to_p4_2d_3d) {
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 4; p++) {
      fea_bspline_desc bd = FEA_BSPLINE_DESC_INIT;
      bd.dim = dim;
      for (int k = 0; k < dim; k++) bd.degree[k] = p, bd.n[k] = k == 0 ? 17 + p : 3 + k;
      fea_space *s;
      cr_assert_eq(fea_space_create_bspline(ctx, &bd, &s), FEA_SUCCESS, "%s",
                   fea_context_last_error(ctx));
      fea_problem *pb = poisson(s);
      char what[64];
      snprintf(what, sizeof what, "%dD B-splines p=%d", dim, p);
      check_problem(pb, what, 1);
      fea_problem_destroy(&pb);
      fea_space_destroy(&s);
    }
}
