/* Writes src/matfree/sumfact/sumfact-lines-gen.h: fused line batches for the
 * DoF layouts that the sum-factorization kernel finds on structured Lagrange
 * meshes (2D Q3 - Q5, 3D Q2 - Q4), one function per layout with every
 * DoF's place in its tile or chain a constant (see fea_sf_state.gline).
 *
 *   gen-sumfact-lines > src/matfree/sumfact/sumfact-lines-gen.h    regenerate
 *   gen-sumfact-lines --check FILE [STAMP]     exit 1 if FILE differs, else touch STAMP
 *
 * The layout is the kernel's restriction plan (plan.c), built here for
 * AVX-512's 8 lanes with tiles from the element-DoF table of a structured
 * mesh with its boundary, whatever CPU runs this: the code emitted is what
 * fea_sf_line_gather / fea_sf_line_scatter do for that plan, unrolled, and the
 * signature emitted is what choose_gline compares with a plan at create, so
 * the generated code runs only on the layout it was made from. The build
 * runs --check on every build (tools/meson.build). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <feaccel.h>

#include "matfree/matfree-kernel.h"
#include "disc/problem.h"
#include "disc/space.h"
#include "matfree/sumfact/plan.h"
#include "disc/pattern.h"

/* The offsets a generated function reads (fea_sf_state.goff), in the order it
 * first uses them (fea_sf_line_sig.off_src): >= 0 foff of that DoF, -1 ..
 * -SF_MAX_TILES tile_off of tile -(src + 1), below block_off of block
 * -(src + 1) - SF_MAX_TILES. */
static int off_src[SF_GLINE_MAX_OFF], noff;

static int off_index(int src) {
  for (int j = 0; j < noff; j++)
    if (off_src[j] == src) return j;
  if (noff == SF_GLINE_MAX_OFF) {
    fprintf(stderr, "gen-sumfact-lines: more than %d offsets\n", SF_GLINE_MAX_OFF);
    exit(1);
  }
  off_src[noff] = src;
  return noff++;
}
static int dof_off(int i) { return off_index(i); }
static int tile_off(int k) { return off_index(-(k + 1)); }
static int block_off(int k) { return off_index(-(k + 1) - SF_MAX_TILES); }

typedef struct buf {
  char *p;
  size_t n, cap;
} buf;

__attribute__((format(printf, 2, 3))) static void out(buf *b, const char *fmt, ...) {
  va_list ap;
  if (!b->p) { /* b->p + b->n on a NULL p would be undefined, even with n = 0 */
    b->cap = 4096;
    b->p = malloc(b->cap);
    if (!b->p) exit(2);
  }
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (k < 0) exit(2);
    if (b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    b->cap = 2 * b->cap + (size_t)k + 1;
    b->p = realloc(b->p, b->cap);
    if (!b->p) exit(2);
  }
}

static void shorts(buf *b, const short *v, int n) {
  out(b, "{");
  for (int i = 0; i < n; i++) out(b, "%s%d", i ? ", " : "", v[i]);
  out(b, "}");
}

/* Rows k < count of a [][width] short array, row k of length len[k]. */
static void short_rows(buf *b, const short *rows, int width, const int *len, int count, int mul) {
  if (count == 0) { /* C11 has no empty initializer */
    out(b, "{{0}}");
    return;
  }
  out(b, "{");
  for (int k = 0; k < count; k++) {
    out(b, "%s", k ? ",\n    " : "");
    shorts(b, rows + (size_t)k * (size_t)width, mul * len[k]);
  }
  out(b, "}");
}

/* A tile's ST vector masks (fea_sf_state.tile_lmask). */
static void masks(buf *b, const unsigned char *m, int st) {
  out(b, "{");
  for (int v = 0; v < st; v++) out(b, "%s0x%02x", v ? ", " : "", m[v]);
  out(b, "}");
}

static void ints(buf *b, const int *v, int n) {
  if (n == 0) { /* C11 has no empty initializer */
    out(b, "{0}");
    return;
  }
  out(b, "{");
  for (int i = 0; i < n; i++) out(b, "%s%d", i ? ", " : "", v[i]);
  out(b, "}");
}

/* The signature: everything of the state's line layout but its offsets. */
static void emit_signature(buf *b, const fea_sf_plan *s, int dim, int N) {
  out(b, "static const fea_sf_line_sig fea_sf_gline_sig_%d_%d = {\n", dim, N);
  out(b, "  .dim = %d, .n = %d, .nfclass = %d,\n  .lstride = ", dim, N, s->nfclass);
  ints(b, s->lstride, s->nfclass);
  out(b, ",\n  .fcls = ");
  ints(b, s->fcls, s->nb);
  out(b, ",\n  .nchain = %d,\n  .chain_start = ", s->nchain);
  ints(b, s->chain_start, s->nchain + 1);
  out(b, ",\n  .chain_dof = ");
  ints(b, s->chain_dof, s->chain_start[s->nchain]);
  out(b, ",\n  .ntile = %d,\n  .tile_cls = ", s->ntile);
  ints(b, s->tile_cls, s->ntile);
  out(b, ",\n  .tile_st = ");
  ints(b, s->tile_st, s->ntile);
  out(b, ",\n  .tile_full = ");
  ints(b, s->tile_full, s->ntile);
  out(b, ",\n  .tile_sdof = ");
  short_rows(b, &s->tile_sdof[0][0], 2 * SF_TILE_MAX_ST, s->tile_st, s->ntile, 2);
  out(b, ",\n  .tile_lmask = {");
  for (int k = 0; k < s->ntile; k++) {
    out(b, "%s", k ? ",\n    " : "");
    masks(b, s->tile_lmask[k], s->tile_st[k]);
  }
  out(b, "%s},\n  .nblock = %d,\n  .block_cls = ", s->ntile ? "" : "{0}", s->nblock);
  ints(b, s->block_cls, s->nblock);
  out(b, ",\n  .block_st = ");
  ints(b, s->block_st, s->nblock);
  out(b, ",\n  .block_m = ");
  ints(b, s->block_m, s->nblock);
  out(b, ",\n  .block_dof = ");
  short_rows(b, &s->block_dof[0][0], SF_MAX_N * SF_MAX_N * SF_MAX_N, s->block_m, s->nblock, 1);
  out(b, ",\n  .block_next = ");
  short_rows(b, &s->block_next[0][0], SF_MAX_N * SF_MAX_N * SF_MAX_N, s->block_m, s->nblock, 1);
  out(b, ",\n  .nsingle = %d,\n  .single_dof = ", s->sg.n);
  ints(b, s->sg.dof, s->sg.n);
  out(b, ",\n  .noff = %d,\n  .off_src = ", noff);
  ints(b, off_src, noff);
  out(b, ",\n};\n\n");
}

/* The function: gather (chains, tiles, blocks, singles), kernel, scatter
 * (chains, tiles: full ones added whole, the others with masked stores of
 * the lanes' own entries, blocks, singles). */
static void emit_function(buf *b, const fea_sf_plan *s, int dim, int N) {
  out(b,
      "SF_GLINE_FN void SF_FN(fea_sf_gline_%d_%d)(const fea_sf_state *s, const fea_index *base,\n"
      "                                      int skip, const double *x, double *y) {\n",
      dim, N);
  const int W = s->lanes;
  out(b, "  SF_GLINE_BEGIN(%d, %d, %d);\n", dim, N, s->nfclass);
  for (int ch = 0; ch < s->nchain; ch++)
    for (int j = s->chain_start[ch]; j < s->chain_start[ch + 1]; j++) {
      const int i = s->chain_dof[j];
      out(b, "  memcpy(&X[%d], xc[%d] + s->goff[%d], sizeof *X);\n", i, s->fcls[i], dof_off(i));
    }
  for (int k = 0; k < s->ntile; k++) {
    const int st = s->tile_st[k], c = s->tile_cls[k];
    out(b, "  {\n    static const unsigned char m[] = ");
    masks(b, s->tile_lmask[k], st);
    out(b, ";\n    SF_TILE_SLOTS(xc[%d] + s->goff[%d], m, %d, S);\n  }\n", c, tile_off(k), st);
    for (int q = 0; q < 2 * st; q++) {
      const int i = s->tile_sdof[k][q];
      if (i < 0) continue;
      if (q < st)
        out(b, "  X[%d] = S[%d];\n", i, q);
      else
        out(b, "  X[%d] = SF_SHIFT_DOWN1(S[%d], xc[%d][s->goff[%d] + %d]);\n", i, q - st, c,
            tile_off(k), q + st * (W - 1));
    }
  }
  for (int k = 0; k < s->nblock; k++) { /* as fea_sf_block_load */
    const int S = s->block_st[k], M = s->block_m[k], c = s->block_cls[k], o = block_off(k);
    for (int j0 = 0; j0 < M; j0 += W) {
      const int j = j0 + W <= M ? j0 : M - W;
      out(b, "  SF_FN(fea_sf_block_in)(xc[%d] + s->goff[%d], %d, %d, V);\n", c, o, S, j);
      for (int t = 0; t < W; t++) {
        out(b, "  X[%d] = V[%d];\n", s->block_dof[k][j + t], t);
        const int i = s->block_next[k][j + t];
        if (i >= 0)
          out(b, "  X[%d] = SF_SHIFT_DOWN1(V[%d], xc[%d][s->goff[%d] + %d]);\n", i, t, c, o,
              S * W + j + t);
      }
    }
  }
  for (int j = 0; j < s->sg.n; j++) {
    const int i = s->sg.dof[j];
    out(b, "  SF_FN(fea_sf_lane_load)(s, xc[%d] + s->goff[%d], %d, &X[%d]);\n", s->fcls[i],
        dof_off(i), s->lstride[s->fcls[i]], i);
  }
  out(b, "  SF_GLINE_KERNEL(%d, %d);\n", dim, N);
  for (int ch = 0; ch < s->nchain; ch++) {
    const int j0 = s->chain_start[ch], len = s->chain_start[ch + 1] - j0;
    out(b, "  {\n    static const int d[] = ");
    ints(b, s->chain_dof + j0, len);
    out(b, ";\n    SF_FN(fea_sf_chain_add)(yc[%d] + s->goff[%d], d, Yd, %d);\n  }\n",
        s->fcls[s->chain_dof[j0]], dof_off(s->chain_dof[j0]), len);
  }
  for (int k = 0; k < s->ntile; k++) {
    const int st = s->tile_st[k], c = s->tile_cls[k];
    for (int q = 0; q < st; q++) {
      const int own = s->tile_sdof[k][q], next = s->tile_sdof[k][q + st];
      if (own >= 0 && next >= 0)
        out(b, "  S[%d] = Y[%d] + SF_SHIFT_UP(Y[%d], 1);\n", q, own, next);
      else if (own >= 0)
        out(b, "  S[%d] = Y[%d];\n", q, own);
      else if (next >= 0)
        out(b, "  S[%d] = SF_SHIFT_UP(Y[%d], 1);\n", q, next);
      else
        out(b, "  S[%d] = (fea_sf_vd){0};\n", q);
      if (next >= 0)
        out(b, "  yc[%d][s->goff[%d] + %d] += Y[%d][SF_W - 1];\n", c, tile_off(k),
            q + st + st * (W - 1), next);
    }
    if (s->tile_full[k]) {
      out(b, "  SF_TILE_ADD(yc[%d] + s->goff[%d], %d, S);\n", c, tile_off(k), st);
    } else { /* only the lanes' own entries read and written */
      out(b, "  {\n    static const unsigned char m[] = ");
      masks(b, s->tile_lmask[k], st);
      out(b, ";\n    SF_TILE_ADD_MASKED(yc[%d] + s->goff[%d], m, %d, S);\n  }\n", c, tile_off(k),
          st);
    }
  }
  for (int k = 0; k < s->nblock; k++) { /* as fea_sf_block_add */
    const int S = s->block_st[k], M = s->block_m[k], c = s->block_cls[k], o = block_off(k);
    for (int j0 = 0; j0 < M; j0 += W) {
      const int j = j0 + W <= M ? j0 : M - W;
      for (int t = 0; t < W; t++) {
        const int i = s->block_next[k][j + t];
        if (j + t < j0) {
          out(b, "  V[%d] = (fea_sf_vd){0};\n", t);
        } else if (i < 0) {
          out(b, "  V[%d] = Y[%d];\n", t, s->block_dof[k][j + t]);
        } else {
          out(b, "  V[%d] = Y[%d] + SF_SHIFT_UP(Y[%d], 1);\n", t, s->block_dof[k][j + t], i);
          out(b, "  yc[%d][s->goff[%d] + %d] += Y[%d][SF_W - 1];\n", c, o, S * W + j + t, i);
        }
      }
      out(b, "  SF_FN(fea_sf_block_out)(yc[%d] + s->goff[%d], %d, %d, V);\n", c, o, S, j);
    }
  }
  for (int j = 0; j < s->sg.n; j++) { /* in no tile or block: lane by lane */
    const int i = s->sg.dof[j];
    out(b, "  SF_GLINE_SINGLE_ADD(yc[%d] + s->goff[%d], %d, Y[%d]);\n", s->fcls[i], dof_off(i),
        s->lstride[s->fcls[i]], i);
  }
  out(b, "}\n\n");
}

static int layout(fea_context *ctx, int dim, int p, buf *code, buf *sig) {
  fea_mesh_desc md = FEA_MESH_DESC_INIT;
  md.dim = dim;
  const int n[3] = {14, 11, 9};
  for (int k = 0; k < dim; k++) md.n[k] = n[k];
  fea_mesh *m = NULL;
  fea_space *sp = NULL;
  fea_problem *pb = NULL;
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  fea_index *edofs = NULL;
  fea_sf_plan plan;
  int built = 0, rc = 1;
  if (fea_mesh_create_structured(ctx, &md, &m) ||
      fea_space_create_lagrange(m, p, FEA_NODES_EQUISPACED, &sp) ||
      fea_problem_create_poisson(sp, &pd, &pb) || fea_element_dof_table(sp, &edofs)) {
    fprintf(stderr, "gen-sumfact-lines: %s\n", fea_context_last_error(ctx));
    goto done;
  }
  const fea_sf_plan_input in = {.edofs = edofs,
                                .free_index = pb->free_index,
                                .ne = sp->num_elements,
                                .nb = sp->dofs_per_element,
                                .lanes = 8,
                                .tiles = 1,
                                .threads = 1};
  if (fea_sf_plan_build(&in, &plan) != FEA_SUCCESS) {
    fprintf(stderr, "gen-sumfact-lines: no memory for the plan of %dD Q%d\n", dim, p);
    goto done;
  }
  built = 1;
  if (!plan.line_ok || plan.sg.n + plan.ntile + plan.nchain == 0) {
    fprintf(stderr, "gen-sumfact-lines: %dD Q%d has no line batches\n", dim, p);
    goto done;
  }
  noff = 0;
  emit_function(code, &plan, dim, p + 1);
  emit_signature(sig, &plan, dim, p + 1);
  rc = 0;
done:
  if (built) fea_sf_plan_free(&plan);
  free(edofs);
  fea_problem_destroy(&pb);
  fea_space_destroy(&sp);
  fea_mesh_destroy(&m);
  return rc;
}

int main(int argc, char **argv) {
  const char *check = (argc == 3 || argc == 4) && !strcmp(argv[1], "--check") ? argv[2] : NULL;
  const char *stamp = check && argc == 4 ? argv[3] : NULL;
  if (argc != 1 && !check) {
    fprintf(stderr, "usage: gen-sumfact-lines [--check FILE [STAMP]]\n");
    return 2;
  }
  fea_context *ctx;
  if (fea_context_create("/cpu/ref", &ctx)) return 2;
  buf code = {0}, sig = {0}, all = {0};
  out(&code, "%s", "");
  out(&sig, "%s", "");
  static const int cases[][2] = {{2, 3}, {2, 4}, {2, 5}, {3, 2}, {3, 3}, {3, 4}};
  enum { NCASE = sizeof cases / sizeof *cases };
  buf table = {0}, list = {0};
  out(&table, "#define SF_GLINE_TABLE \\\n  {");
  out(&list, "%s", "");
  for (int c = 0; c < NCASE; c++) {
    const int dim = cases[c][0], N = cases[c][1] + 1;
    if (layout(ctx, dim, cases[c][1], &code, &sig)) return 1;
    const int first = c == 0 || cases[c - 1][0] != dim;
    const int last = c + 1 == NCASE || cases[c + 1][0] != dim;
    out(&table, "%s%s[%d] = SF_FN(fea_sf_gline_%d_%d)%s", first ? (c ? ", \\\n   " : "") : "",
        first ? (dim == 2 ? "[1] = {" : "[2] = {") : ", ", N, dim, N, last ? "}" : "");
    out(&list, "  &fea_sf_gline_sig_%d_%d,\n", dim, N);
  }
  out(&table, "}\n");
  out(&all,
      "/* Generated by tools/gen-sumfact-lines.c; do not edit. Fused line\n"
      " * batches of 2D Lagrange Q3 - Q5 and 3D Q2 - Q4 on structured meshes\n"
      " * (fea_sf_state.gline). */\n"
      "#if defined(SF_GLINE_CODE)\n%s%s"
      "#else\n%s"
      "static const fea_sf_line_sig *const fea_sf_gline_sigs[] = {\n%s};\n#endif\n",
      code.p, table.p, sig.p, list.p);
  fea_context_destroy(&ctx);
  free(code.p), free(sig.p), free(table.p), free(list.p);
  if (!check) {
    fputs(all.p, stdout);
    free(all.p);
    return 0;
  }
  FILE *f = fopen(check, "rb");
  if (!f) {
    fprintf(stderr, "gen-sumfact-lines: cannot open %s\n", check);
    return 1;
  }
  char *old = malloc(all.n + 2);
  size_t got = old ? fread(old, 1, all.n + 1, f) : 0;
  fclose(f);
  const int differs = !old || got != all.n || memcmp(old, all.p, all.n);
  free(old), free(all.p);
  if (differs) {
    fprintf(stderr,
            "gen-sumfact-lines: %s is not what the generator writes now; regenerate it "
            "(gen-sumfact-lines > %s)\n",
            check, check);
    return 1;
  }
  if (stamp) { /* the build's record that FILE was checked */
    FILE *t = fopen(stamp, "w");
    if (!t || fclose(t)) {
      fprintf(stderr, "gen-sumfact-lines: cannot write %s\n", stamp);
      return 1;
    }
  }
  return 0;
}
