/* Element colorings (src/disc/coloring.c): the Cartesian formula, greedy
 * coloring of unstructured meshes, and the validator.
 *
 * Every coloring is checked here by brute force over all element pairs (two
 * elements sharing a DoF must differ in color), independently of the library's
 * validator, and the validator is shown to catch planted conflicts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include <feaccel/context.h>

#include "disc/coloring.h"
#include "disc/mesh.h"

/* Element-DoF incidence of a mesh: its cells with nodes as DoFs. */
struct incidence {
  fea_index nelem, ndofs;
  int per_elem;
  fea_index *dofs;
};

static struct incidence mesh_incidence(const fea_mesh *m) {
  struct incidence in = {m->num_cells, m->num_nodes, m->nodes_per_cell, NULL};
  in.dofs = malloc((size_t)(in.nelem * in.per_elem) * sizeof *in.dofs);
  cr_assert_not_null(in.dofs);
  memcpy(in.dofs, m->cells, (size_t)(in.nelem * in.per_elem) * sizeof *in.dofs);
  return in;
}

static int share_dof(const struct incidence *in, fea_index a, fea_index b) {
  for (int i = 0; i < in->per_elem; i++)
    for (int j = 0; j < in->per_elem; j++)
      if (in->dofs[a * in->per_elem + i] == in->dofs[b * in->per_elem + j]) return 1;
  return 0;
}

/* Brute force: no two elements of one color share a DoF, colors in [0, ncolors). */
static void assert_valid(const struct incidence *in, const fea_index *colors, int ncolors) {
  for (fea_index a = 0; a < in->nelem; a++) {
    cr_assert(colors[a] >= 0 && colors[a] < ncolors, "element %lld has color %lld of %d",
              (long long)a, (long long)colors[a], ncolors);
    for (fea_index b = a + 1; b < in->nelem; b++)
      cr_assert(colors[a] != colors[b] || !share_dof(in, a, b),
                "elements %lld and %lld share a DoF and both have color %lld", (long long)a,
                (long long)b, (long long)colors[a]);
  }
  cr_assert_eq(fea_coloring_check(NULL, in->nelem, in->per_elem, in->dofs, in->ndofs, colors),
               FEA_SUCCESS, "the validator rejects a valid coloring: %s",
               fea_context_last_error(NULL));
}

static int colors_used(const fea_index *colors, fea_index n, int ncolors) {
  int used = 0;
  for (int c = 0; c < ncolors; c++)
    for (fea_index e = 0; e < n; e++)
      if (colors[e] == c) {
        used++;
        break;
      }
  return used;
}

static fea_context *open_context(void) {
  fea_context *ctx = NULL;
  cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  return ctx;
}

static fea_mesh *structured(fea_context *ctx, int dim, fea_index n0, fea_index n1, fea_index n2,
                            int simplices) {
  fea_mesh_desc d = FEA_MESH_DESC_INIT;
  d.dim = dim;
  d.n[0] = n0;
  d.n[1] = n1;
  d.n[2] = n2;
  d.simplices = simplices;
  fea_mesh *m = NULL;
  cr_assert_eq(fea_mesh_create_structured(ctx, &d, &m), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  return m;
}

/* The validator's message names a real conflict involving element `planted`. */
static void assert_conflict_reported(const struct incidence *in, const fea_index *colors,
                                     fea_index planted) {
  fea_status s = fea_coloring_check(NULL, in->nelem, in->per_elem, in->dofs, in->ndofs, colors);
  cr_assert_eq(s, FEA_ERR_INVALID_ARG, "a planted conflict passed the validator");
  const char *msg = fea_context_last_error(NULL);
  const char *at = strstr(msg, "elements ");
  cr_assert_not_null(at, "message: %s", msg);
  long long a, b, color, dof;
  cr_assert_eq(sscanf(at, "elements %lld and %lld both have color %lld and share DoF %lld", &a, &b,
                      &color, &dof),
               4, "message: %s", msg);
  cr_assert(a == planted || b == planted, "the conflict %lld/%lld does not involve element %lld", a,
            b, (long long)planted);
  cr_assert(colors[a] == color && colors[b] == color, "message: %s", msg);
  int in_a = 0, in_b = 0;
  for (int i = 0; i < in->per_elem; i++) {
    in_a |= in->dofs[a * in->per_elem + i] == dof;
    in_b |= in->dofs[b * in->per_elem + i] == dof;
  }
  cr_assert(in_a && in_b, "DoF %lld is not shared by elements %lld and %lld", dof, a, b);
}

/* ---- Cartesian formula ---------------------------------------------------------------------- */

Test(coloring, cartesian_lagrange_two_per_direction) {
  fea_context *ctx = open_context();
  for (int dim = 1; dim <= 3; dim++) {
    fea_mesh *m = structured(ctx, dim, 5, 4, 3, 0);
    struct incidence in = mesh_incidence(m);
    fea_index *colors = malloc((size_t)in.nelem * sizeof *colors);
    int ncolors = -1;
    fea_coloring_cartesian(dim, m->n, 2, colors, &ncolors);
    cr_assert_eq(ncolors, 1 << dim, "dim %d: %d colors, expected 2^d = %d", dim, ncolors, 1 << dim);
    cr_assert_eq(colors_used(colors, in.nelem, ncolors), ncolors, "dim %d: a color is unused", dim);
    assert_valid(&in, colors, ncolors);
    /* The thesis's formula c = ix%2 + 2(iy%2) + 4(iz%2), element by element. */
    for (fea_index e = 0; e < in.nelem; e++) {
      fea_index ix = e % 5, iy = (e / 5) % 4, iz = e / 20;
      fea_index want = ix % 2 + (dim > 1 ? 2 * (iy % 2) : 0) + (dim > 2 ? 4 * (iz % 2) : 0);
      cr_assert_eq(colors[e], want, "dim %d element %lld", dim, (long long)e);
    }
    free(colors);
    free(in.dofs);
    fea_object_release(m);
  }
  fea_context_destroy(&ctx);
}

/* B-splines of degree p on a grid: element (i, j, k) touches the DoFs
 * (i + a, j + b, k + c), 0 <= a, b, c <= p, of an (n + p)^d grid. */
static struct incidence spline_incidence(int dim, const fea_index n[3], int p) {
  struct incidence in = {1, 1, 1, NULL};
  fea_index dn[3] = {1, 1, 1};
  for (int k = 0; k < dim; k++) {
    in.nelem *= n[k];
    dn[k] = n[k] + p;
    in.ndofs *= dn[k];
    in.per_elem *= p + 1;
  }
  in.dofs = malloc((size_t)(in.nelem * in.per_elem) * sizeof *in.dofs);
  for (fea_index e = 0; e < in.nelem; e++) {
    fea_index idx[3] = {0, 0, 0}, rest = e;
    for (int k = 0; k < dim; k++) {
      idx[k] = rest % n[k];
      rest /= n[k];
    }
    for (int l = 0; l < in.per_elem; l++) {
      fea_index dof = 0, stride = 1;
      for (int k = 0, q = l; k < dim; k++, q /= p + 1) {
        dof += (idx[k] + q % (p + 1)) * stride;
        stride *= dn[k];
      }
      in.dofs[e * in.per_elem + l] = dof;
    }
  }
  return in;
}

Test(coloring, cartesian_splines_need_p_plus_one_per_direction) {
  const fea_index n[3] = {7, 6, 5};
  for (int dim = 1; dim <= 3; dim++)
    for (int p = 1; p <= 3; p++) {
      struct incidence in = spline_incidence(dim, n, p);
      fea_index *colors = malloc((size_t)in.nelem * sizeof *colors);
      int ncolors = -1, want = 1;
      for (int k = 0; k < dim; k++) want *= p + 1;
      fea_coloring_cartesian(dim, n, p + 1, colors, &ncolors);
      cr_assert_eq(ncolors, want, "dim %d p %d: %d colors, expected (p+1)^d = %d", dim, p, ncolors,
                   want);
      cr_assert_eq(colors_used(colors, in.nelem, ncolors), want);
      assert_valid(&in, colors, ncolors);
      /* One stride less is too few: neighbours p apart then collide. */
      fea_coloring_cartesian(dim, n, p, colors, &ncolors);
      cr_assert_eq(fea_coloring_check(NULL, in.nelem, in.per_elem, in.dofs, in.ndofs, colors),
                   FEA_ERR_INVALID_ARG, "dim %d p %d: stride p passed the validator", dim, p);
      free(colors);
      free(in.dofs);
    }
}

/* ---- greedy ---------------------------------------------------------------------------------- */

/* Largest number of other elements sharing a DoF with one element. */
static int max_neighbours(const struct incidence *in) {
  int most = 0;
  for (fea_index a = 0; a < in->nelem; a++) {
    int count = 0;
    for (fea_index b = 0; b < in->nelem; b++) count += b != a && share_dof(in, a, b);
    if (count > most) most = count;
  }
  return most;
}

/* Shuffle the elements (fixed-seed LCG), so the order is far from lexicographic. */
static void shuffle(struct incidence *in, unsigned long long seed) {
  for (fea_index e = in->nelem - 1; e > 0; e--) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    fea_index f = (fea_index)((seed >> 33) % (unsigned long long)(e + 1));
    for (int i = 0; i < in->per_elem; i++) {
      fea_index t = in->dofs[e * in->per_elem + i];
      in->dofs[e * in->per_elem + i] = in->dofs[f * in->per_elem + i];
      in->dofs[f * in->per_elem + i] = t;
    }
  }
}

static void check_greedy(struct incidence *in, const char *what) {
  fea_index *colors = malloc((size_t)in->nelem * sizeof *colors);
  int ncolors = -1;
  cr_assert_eq(fea_coloring_greedy(NULL, in->nelem, in->per_elem, in->dofs, in->ndofs, colors,
                                   &ncolors),
               FEA_SUCCESS, "%s: %s", what, fea_context_last_error(NULL));
  cr_assert(ncolors >= 2 && ncolors <= max_neighbours(in) + 1,
            "%s: %d colors, more than the greedy bound %d", what, ncolors, max_neighbours(in) + 1);
  cr_assert_eq(colors_used(colors, in->nelem, ncolors), ncolors, "%s: a color is unused", what);
  assert_valid(in, colors, ncolors);

  /* Plant a conflict: give an element the color of one it shares a DoF with. */
  fea_index a = in->nelem / 2, b = -1;
  for (fea_index e = 0; e < in->nelem && b < 0; e++)
    if (e != a && share_dof(in, a, e)) b = e;
  cr_assert(b >= 0);
  colors[b] = colors[a];
  assert_conflict_reported(in, colors, b);
  free(colors);
}

Test(coloring, greedy_on_unstructured_meshes) {
  fea_context *ctx = open_context();
  /* Triangles and tetrahedra in shuffled order. */
  fea_mesh *tri = structured(ctx, 2, 6, 5, 1, 1), *tet = structured(ctx, 3, 3, 3, 2, 1);
  struct incidence in = mesh_incidence(tri);
  shuffle(&in, 1);
  check_greedy(&in, "shuffled triangles");
  free(in.dofs);
  in = mesh_incidence(tet);
  shuffle(&in, 2);
  check_greedy(&in, "shuffled tetrahedra");
  free(in.dofs);
  /* A refined triangle mesh: coarse-first numbering, nodes of high valence. */
  fea_mesh *fine = NULL;
  cr_assert_eq(fea_mesh_refine_uniform(tri, &fine), FEA_SUCCESS);
  in = mesh_incidence(fine);
  check_greedy(&in, "refined triangles");
  free(in.dofs);
  fea_object_release(fine);
  fea_object_release(tri);
  fea_object_release(tet);
  fea_context_destroy(&ctx);
}

Test(coloring, greedy_on_a_cartesian_grid_matches_the_formula_count) {
  /* In lexicographic order greedy finds the 2^d coloring of Q1 elements. */
  fea_context *ctx = open_context();
  fea_mesh *m = structured(ctx, 3, 4, 3, 3, 0);
  struct incidence in = mesh_incidence(m);
  fea_index colors[36];
  int ncolors = -1;
  cr_assert_eq(fea_coloring_greedy(NULL, in.nelem, in.per_elem, in.dofs, in.ndofs, colors,
                                   &ncolors),
               FEA_SUCCESS);
  cr_assert_eq(ncolors, 8);
  assert_valid(&in, colors, ncolors);
  free(in.dofs);
  fea_object_release(m);
  fea_context_destroy(&ctx);
}

/* ---- validator and argument checks ------------------------------------------------------------ */

Test(coloring, validator_accepts_any_labels_and_repeated_dofs) {
  /* Three intervals 0-1, 1-2, 2-3 as DoF pairs; the middle one lists DoF 1 twice. */
  const fea_index dofs[6] = {0, 1, 1, 1, 2, 3};
  const fea_index colors[3] = {1000000000000ll, 7, 1000000000000ll};
  cr_assert_eq(fea_coloring_check(NULL, 3, 2, dofs, 4, colors), FEA_SUCCESS, "%s",
               fea_context_last_error(NULL));
  const fea_index clash[3] = {7, 7, 5};
  cr_assert_eq(fea_coloring_check(NULL, 3, 2, dofs, 4, clash), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(NULL),
                   "elements 0 and 1 both have color 7 and share "
                   "DoF 1"),
            "%s", fea_context_last_error(NULL));
}

Test(coloring, bad_input_is_named) {
  const fea_index dofs[4] = {0, 1, 1, 9};
  fea_index colors[2] = {0, 1};
  int ncolors;
  cr_assert_eq(fea_coloring_greedy(NULL, 2, 2, dofs, 3, colors, &ncolors), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(NULL), "element 1, local DoF 1 is 9, outside [0, 3)"),
            "%s", fea_context_last_error(NULL));
  cr_assert_eq(colors[0], 0, "a failed coloring wrote colors");
  cr_assert_eq(fea_coloring_check(NULL, 2, 2, dofs, 3, colors), FEA_ERR_INVALID_ARG);
  const fea_index ok_dofs[4] = {0, 1, 1, 2}, uncolored[2] = {0, -1};
  cr_assert_eq(fea_coloring_check(NULL, 2, 2, ok_dofs, 3, uncolored), FEA_ERR_INVALID_ARG);
  cr_assert(strstr(fea_context_last_error(NULL), "element 1 has no color (-1)"), "%s",
            fea_context_last_error(NULL));
}
