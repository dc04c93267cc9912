/* libFuzzer target of the Gmsh reader: each input is written to an in-memory
 * file and read with fea_mesh_read_gmsh(); a mesh that is read must be one
 * the rest of the library can trust, and a refusal must be a reader error
 * that names the file. */
#define _GNU_SOURCE /* memfd_create, in fuzz-common.h */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"

static int cell_dim(fea_cell_type t) {
  switch (t) {
  case FEA_CELL_INTERVAL: return 1;
  case FEA_CELL_TRIANGLE:
  case FEA_CELL_QUAD: return 2;
  case FEA_CELL_TETRAHEDRON:
  case FEA_CELL_HEXAHEDRON: return 3;
  }
  return 0;
}

static int cell_nodes(fea_cell_type t) {
  static const int n[] = {0, 2, 3, 4, 4, 8};
  return t >= FEA_CELL_INTERVAL && t <= FEA_CELL_HEXAHEDRON ? n[t] : 0;
}

/* Signed measure of a simplex whose dimension is the space dimension, computed
 * here from the coordinates the mesh hands out. */
static double simplex_measure(int dim, const double *x, const fea_index *v) {
  const double *a = x + v[0] * dim;
  if (dim == 1) return x[v[1]] - a[0];
  if (dim == 2) {
    const double *b = x + v[1] * 2, *c = x + v[2] * 2;
    return 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
  }
  double e[3][3];
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) e[i][k] = x[v[i + 1] * 3 + k] - a[k];
  return (e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
          e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
          e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0])) /
         6.0;
}

/* h = 1 on every facet, for the natural conditions of check_groups. */
static double one(const double *x, void *user) {
  (void)x, (void)user;
  return 1.0;
}

/* The boundary groups a mesh keeps: positive ascending tags, facet counts
 * the input could hold, names readable; a P1 problem with a Neumann
 * condition on every group is built (and its element systems integrate), or
 * refused as the problem's checks say: a group's facet off the boundary, or
 * a facet in two groups. */
static void check_groups(fea_mesh *mesh, fea_index nc) {
  int count = -1, tags[64];
  fea_index facets[64];
  FUZZ_REQUIRE(fea_mesh_get_boundary_groups(mesh, 0, NULL, NULL, &count) == FEA_SUCCESS, "count");
  FUZZ_REQUIRE(count >= 0, "%d groups", count);
  if (count == 0 || count > 64) return;
  FUZZ_REQUIRE(fea_mesh_get_boundary_groups(mesh, 64, tags, facets, &count) == FEA_SUCCESS,
               "groups");
  fea_boundary_part parts[64];
  for (int g = 0; g < count; g++) {
    FUZZ_REQUIRE(tags[g] > 0 && (g == 0 || tags[g] > tags[g - 1]), "group %d has tag %d", g,
                 tags[g]);
    FUZZ_REQUIRE(facets[g] >= 0 && facets[g] <= (1 << 20), "group %d: %lld facets", g,
                 (long long)facets[g]);
    const char *name = (const char *)&count;
    FUZZ_REQUIRE(fea_mesh_get_boundary_group_name(mesh, tags[g], &name) == FEA_SUCCESS, "name");
    FUZZ_REQUIRE(name != (const char *)&count, "name not written");
    parts[g] = (fea_boundary_part){tags[g], NULL, {FEA_BC_NEUMANN, 0.0, one, NULL}};
  }
  fea_space *space = NULL;
  FUZZ_REQUIRE(fea_space_create_lagrange(mesh, 1, FEA_NODES_EQUISPACED, &space) == FEA_SUCCESS,
               "P1 space: %s", fea_context_last_error(NULL));
  fea_problem_desc pd = FEA_PROBLEM_DESC_INIT;
  pd.reaction = 1.0; /* well posed even if every facet is Neumann */
  pd.parts = parts;
  pd.num_parts = count;
  fea_problem *pb = NULL;
  const fea_status s = fea_problem_create_poisson(space, &pd, &pb);
  FUZZ_REQUIRE(s == FEA_SUCCESS || (s == FEA_ERR_INVALID_ARG && !pb), "problem: %d %s", (int)s,
               fea_context_last_error(NULL));
  for (fea_index e = 0; pb && e < nc && e < 64; e++) {
    double K[64], f[8];
    FUZZ_REQUIRE(fea_problem_element_system(pb, e, K, f) == FEA_SUCCESS, "element %lld: %s",
                 (long long)e, fea_context_last_error(NULL));
  }
  fea_problem_destroy(&pb);
  fea_space_destroy(&space);
}

/* What the reader promises of a mesh it returns (mesh.h, src/disc/mesh-gmsh.c). */
static void check_mesh(fea_mesh *mesh) {
  int dim = 0;
  fea_cell_type type = (fea_cell_type)0;
  fea_index nn = 0, nc = 0;
  FUZZ_REQUIRE(fea_mesh_get_info(mesh, &dim, &type, &nn, &nc) == FEA_SUCCESS, "get_info");
  const int npc = cell_nodes(type);
  FUZZ_REQUIRE(npc > 0, "cell type %d", (int)type);
  FUZZ_REQUIRE(dim == cell_dim(type), "space dimension %d for cells of dimension %d", dim,
               cell_dim(type));
  FUZZ_REQUIRE(nn >= 1 && nc >= 1, "%lld nodes, %lld cells", (long long)nn, (long long)nc);
  /* The input is at most a few kB: every node and cell takes bytes of it. */
  FUZZ_REQUIRE(nn <= (1 << 20) && nc <= (1 << 20), "%lld nodes, %lld cells", (long long)nn,
               (long long)nc);

  double *x = malloc((size_t)(nn * dim) * sizeof *x);
  fea_index *cells = malloc((size_t)(nc * npc) * sizeof *cells);
  unsigned char *used = calloc((size_t)nn, 1);
  FUZZ_REQUIRE(x && cells && used, "out of memory");
  /* One entry short must be refused, the exact size accepted. */
  FUZZ_REQUIRE(fea_mesh_get_coordinates(mesh, nn * dim - 1, x) == FEA_ERR_DIMENSION, "capacity");
  FUZZ_REQUIRE(fea_mesh_get_coordinates(mesh, nn * dim, x) == FEA_SUCCESS, "coordinates");
  FUZZ_REQUIRE(fea_mesh_get_cells(mesh, nc * npc - 1, cells) == FEA_ERR_DIMENSION, "capacity");
  FUZZ_REQUIRE(fea_mesh_get_cells(mesh, nc * npc, cells) == FEA_SUCCESS, "cells");
  for (fea_index i = 0; i < nn * dim; i++)
    FUZZ_REQUIRE(isfinite(x[i]), "coordinate %lld is %g", (long long)i, x[i]);
  for (fea_index c = 0; c < nc; c++) {
    const fea_index *v = cells + c * npc;
    for (int i = 0; i < npc; i++) {
      FUZZ_REQUIRE(v[i] >= 0 && v[i] < nn, "cell %lld node %d is %lld of %lld", (long long)c, i,
                   (long long)v[i], (long long)nn);
      for (int j = 0; j < i; j++)
        FUZZ_REQUIRE(v[j] != v[i], "cell %lld repeats node %lld", (long long)c, (long long)v[i]);
      used[v[i]] = 1;
    }
    if (npc == dim + 1)
      FUZZ_REQUIRE(simplex_measure(dim, x, v) > 0, "cell %lld has measure %g", (long long)c,
                   simplex_measure(dim, x, v));
  }
  /* Nodes no cell uses are dropped by the reader. */
  for (fea_index i = 0; i < nn; i++) FUZZ_REQUIRE(used[i], "node %lld is in no cell", (long long)i);
  free(x);
  free(cells);
  free(used);
  check_groups(mesh, nc);

  /* The mesh must be usable downstream: one uniform refinement has the
   * documented counts (tetrahedra are not refined). */
  fea_mesh *fine = NULL;
  const fea_status s = fea_mesh_refine_uniform(mesh, &fine);
  if (type == FEA_CELL_TETRAHEDRON) {
    FUZZ_REQUIRE(s == FEA_ERR_UNSUPPORTED && !fine, "refining tetrahedra gave %d", (int)s);
    return;
  }
  FUZZ_REQUIRE(s == FEA_SUCCESS, "refinement failed with %d", (int)s);
  fea_index fine_cells = 0;
  FUZZ_REQUIRE(fea_mesh_get_info(fine, NULL, NULL, NULL, &fine_cells) == FEA_SUCCESS, "info");
  FUZZ_REQUIRE(fine_cells == nc * (1 << dim), "%lld cells refined into %lld", (long long)nc,
               (long long)fine_cells);
  fea_mesh_destroy(&fine);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fea_context *ctx = fuzz_context();
  const char *file_path = fuzz_write_input(data, size);
  fea_mesh *mesh = (fea_mesh *)&size; /* must be overwritten with NULL on failure */
  const fea_status s = fea_mesh_read_gmsh(ctx, file_path, &mesh);
  if (s == FEA_SUCCESS) {
    FUZZ_REQUIRE(mesh != NULL, "success without a mesh");
    check_mesh(mesh);
    fea_mesh_destroy(&mesh);
    FUZZ_REQUIRE(mesh == NULL, "destroy left the handle");
    return 0;
  }
  FUZZ_REQUIRE(mesh == NULL, "failure %d left the handle set", (int)s);
  FUZZ_REQUIRE(s == FEA_ERR_IO || s == FEA_ERR_UNSUPPORTED, "status %d", (int)s);
  /* Reader errors are "path:LINE: what" (mesh.h). */
  const char *msg = fea_context_last_error(ctx);
  const char *at = msg ? strstr(msg, file_path) : NULL;
  FUZZ_REQUIRE(at && at[strlen(file_path)] == ':', "message without 'path:': %s", msg);
  return 0;
}
