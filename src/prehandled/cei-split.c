/* The C/E/I splitting of the interior unknowns (Ruda et al. 2022, §4.1): C the coarse
 * nodes, E the other nodes on coarse edges (for P1 also the coarse squares'
 * diagonals), I the macro-cell interiors. I is numbered cell by cell in one
 * local geometric order, so that A_II is block diagonal with identical blocks
 * C_i, stored once. P1 squares hold a lower (x > y) and an upper triangle; the
 * point reflection about the square's centre maps one onto the other and
 * keeps the diagonal, the grid and the hierarchy, so the upper triangle takes
 * the local order of its reflected image and its block equals the lower one's. */
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "macro-mesh.h"
#include "prehandle.h"

void fea_ph_split_free(fea_ph_split *s) {
  if (!s) return;
  free(s->perm);
  free(s->pos);
  free(s->group_cells);
  s->perm = s->pos = s->group_cells = NULL;
}

/* A mesh of macro cells: its hierarchy (macro-mesh.c) numbered the split. */
static fea_status split_macro(fea_context *ctx, const fea_ph_macro *m, fea_ph_split *out) {
  fea_ph_split s = {m->nc, m->ne, m->ni, m->cells, m->blk, NULL, NULL, m->groups, NULL};
  s.perm = malloc((size_t)(m->num + 1) * sizeof *s.perm);
  s.pos = malloc((size_t)(m->num + 1) * sizeof *s.pos);
  s.group_cells = malloc((size_t)m->groups * sizeof *s.group_cells);
  if (!s.perm || !s.pos || !s.group_cells) {
    fea_ph_split_free(&s);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a splitting of %lld nodes",
                     (long long)m->num);
  }
  memcpy(s.perm, m->perm, (size_t)m->num * sizeof *s.perm);
  memcpy(s.pos, m->pos, (size_t)m->num * sizeof *s.pos);
  memcpy(s.group_cells, m->group_cells, (size_t)m->groups * sizeof *s.group_cells);
  *out = s;
  return FEA_SUCCESS;
}

/* Local index of (a, b), 1 <= b < a <= r - 1, in a lower triangle: rows b
 * ascending, a ascending within a row. */
static fea_index lower_local(fea_index r, fea_index a, fea_index b) {
  return (b - 1) * (r - 1) - (b - 1) * b / 2 + (a - b - 1);
}

fea_status fea_ph_split_create(fea_context *ctx, const fea_ph_grid *g, fea_ph_split *out) {
  FEA_CHECK_NULL(g, ctx);
  FEA_CHECK_NULL(out, ctx);
  if (g->macro) return split_macro(ctx, g->macro, out);
  const fea_index n = g->n, n0 = g->n0, r = g->r;
  fea_ph_split s = {0};
  s.groups = 1;
  /* The sizes by counting the classes, so that they check formulas (6)-(8)
   * and (32)-(33) rather than restate them. */
  for (fea_index j = 1; j < n; j++)
    for (fea_index i = 1; i < n; i++) {
      const fea_index a = i % r, b = j % r;
      if (a == 0 && b == 0)
        s.nc++;
      else if (a == 0 || b == 0 || (g->element == FEA_PH_P1 && a == b))
        s.ne++;
      else
        s.ni++;
    }
  s.num_cells = g->element == FEA_PH_Q1 ? n0 * n0 : 2 * n0 * n0;
  s.block = g->element == FEA_PH_Q1 ? (r - 1) * (r - 1) : (r >= 2 ? (r - 1) * (r - 2) / 2 : 0);
  FEA_CHECK(s.num_cells * s.block == s.ni, ctx, FEA_ERR_DIMENSION,
            "%lld macro cells of %lld interior nodes differ from %lld I nodes",
            (long long)s.num_cells, (long long)s.block, (long long)s.ni);
  s.perm = malloc((size_t)g->num * sizeof *s.perm);
  s.pos = malloc((size_t)g->num * sizeof *s.pos);
  if (!s.perm || !s.pos) {
    fea_ph_split_free(&s);
    return FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a splitting of %lld nodes",
                     (long long)g->num);
  }
  fea_index next_c = 0, next_e = s.nc;
  for (fea_index j = 1; j < n; j++)
    for (fea_index i = 1; i < n; i++) {
      const fea_index a = i % r, b = j % r, cell = (j / r) * n0 + i / r;
      fea_index p;
      if (a == 0 && b == 0)
        p = next_c++;
      else if (a == 0 || b == 0 || (g->element == FEA_PH_P1 && a == b))
        p = next_e++;
      else if (g->element == FEA_PH_Q1)
        p = s.nc + s.ne + cell * s.block + (b - 1) * (r - 1) + a - 1;
      else if (a > b)
        p = s.nc + s.ne + (2 * cell) * s.block + lower_local(r, a, b);
      else
        p = s.nc + s.ne + (2 * cell + 1) * s.block + lower_local(r, r - a, r - b);
      const fea_index l = (i - 1) + (j - 1) * (n - 1);
      s.pos[l] = p;
      s.perm[p] = l;
    }
  *out = s;
  return FEA_SUCCESS;
}
