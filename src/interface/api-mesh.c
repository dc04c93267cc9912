/* Mesh API: argument checks, then the builders of src/disc/mesh-*.c. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "base/memory-limit.h"
#include "disc/mesh-boundary.h"
#include "disc/mesh.h"
#include "base/struct-copy.h"

#define TYPE_OK(t) ((t) >= FEA_CELL_INTERVAL && (t) <= FEA_CELL_HEXAHEDRON)

/* Largest node or cell count accepted: far beyond any host's memory, and small
 * enough that counts times nodes per cell times 8 bytes cannot overflow. */
#define MAX_COUNT ((fea_index)1 << 56)

/* The caller's descriptor up to its .size; later fields keep their defaults. */
static fea_status read_desc(fea_context *ctx, const fea_mesh_desc *desc, fea_mesh_desc *d) {
  const fea_mesh_desc defaults = FEA_MESH_DESC_INIT;
  *d = defaults;
  return fea_struct_copy_in(ctx, d, desc, "desc", &fea_struct_mesh_desc);
}

fea_status fea_mesh_create_structured(fea_context *ctx, const fea_mesh_desc *desc, fea_mesh **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(desc, ctx);
  FEA_CHECK_NULL(out, ctx);
  fea_mesh_desc d;
  FEA_CALL(read_desc(ctx, desc, &d));
  FEA_CHECK(d.dim >= 1 && d.dim <= 3, ctx, FEA_ERR_INVALID_ARG, "dim = %d must be 1, 2 or 3",
            d.dim);
  FEA_CHECK(d.simplices == 0 || d.simplices == 1, ctx, FEA_ERR_INVALID_ARG,
            "simplices = %d must be 0 or 1", d.simplices);
  FEA_CHECK(!d.simplices || d.dim >= 2, ctx, FEA_ERR_INVALID_ARG,
            "simplices = 1 needs dim 2 or 3 (dim = 1 has only intervals)");
  fea_index nodes = 1;
  for (int k = 0; k < d.dim; k++) {
    FEA_CHECK(d.n[k] >= 1, ctx, FEA_ERR_INVALID_ARG, "n[%d] = %lld must be at least 1", k,
              (long long)d.n[k]);
    FEA_CHECK(isfinite(d.lower[k]) && isfinite(d.upper[k]), ctx, FEA_ERR_INVALID_ARG,
              "the box [%g, %g] in direction %d is not finite", d.lower[k], d.upper[k], k);
    FEA_CHECK(d.lower[k] < d.upper[k], ctx, FEA_ERR_INVALID_ARG,
              "lower[%d] = %g must be below upper[%d] = %g", k, d.lower[k], k, d.upper[k]);
    FEA_CHECK(d.n[k] < MAX_COUNT && nodes <= MAX_COUNT / (d.n[k] + 1), ctx, FEA_ERR_OUT_OF_MEMORY,
              "n[%d] = %lld makes too many nodes to address", k, (long long)d.n[k]);
    nodes *= d.n[k] + 1;
    /* The cells' width: representable next to the box's coordinates, and
     * inside the window where their integrals are normal doubles. */
    const double width = (d.upper[k] - d.lower[k]) / (double)d.n[k];
    const double coord = fmax(fabs(d.lower[k]), fabs(d.upper[k]));
    FEA_CHECK(width > 1e-14 * coord, ctx, FEA_ERR_INVALID_ARG,
              "cells %g wide in direction %d are below the rounding of coordinates near %g", width,
              k, coord);
    char why[200];
    FEA_CHECK(!fea_cell_scale_problem(width, d.dim, why, sizeof why), ctx, FEA_ERR_INVALID_ARG,
              "a cell of direction %d %s", k, why);
  }
  /* Coordinates and connectivity (a box cell is 6 tetrahedra or 2 triangles). */
  fea_index cells = 1;
  for (int k = 0; k < d.dim; k++) cells *= d.n[k];
  const double per_cell = d.simplices ? (d.dim == 2 ? 2 * 3 : 6 * 4) : 1 << d.dim;
  char what[96];
  snprintf(what, sizeof what, "a mesh of %lld nodes and %lld box cells", (long long)nodes,
           (long long)cells);
  FEA_CALL(fea_memory_require(ctx, 0,
                              fea_bytes((double)nodes, d.dim * sizeof(double)) +
                                  fea_bytes((double)cells * per_cell, sizeof(fea_index)),
                              what));
  return fea_mesh_build_structured(ctx, &d, out);
}

fea_status fea_mesh_create_from_arrays(fea_context *ctx, int dim, fea_cell_type type,
                                       fea_index num_nodes, const double *coords,
                                       fea_index num_cells, const fea_index *cells,
                                       fea_mesh **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(out, ctx);
  FEA_CHECK(TYPE_OK(type), ctx, FEA_ERR_INVALID_ARG, "unknown cell type %d", (int)type);
  FEA_CHECK(dim >= 1 && dim <= 3, ctx, FEA_ERR_INVALID_ARG, "dim = %d must be 1, 2 or 3", dim);
  FEA_CHECK(dim >= fea_cell_dim(type), ctx, FEA_ERR_INVALID_ARG,
            "%s cells need dim >= %d, got dim = %d", fea_cell_name(type), fea_cell_dim(type), dim);
  FEA_CHECK(num_nodes >= 1, ctx, FEA_ERR_INVALID_ARG, "num_nodes = %lld must be at least 1",
            (long long)num_nodes);
  FEA_CHECK(num_cells >= 1, ctx, FEA_ERR_INVALID_ARG, "num_cells = %lld must be at least 1",
            (long long)num_cells);
  FEA_CHECK(num_nodes <= MAX_COUNT && num_cells <= MAX_COUNT, ctx, FEA_ERR_OUT_OF_MEMORY,
            "%lld nodes and %lld cells are too many to address", (long long)num_nodes,
            (long long)num_cells);
  FEA_CHECK_NULL(coords, ctx);
  FEA_CHECK_NULL(cells, ctx);
  for (fea_index v = 0; v < num_nodes; v++)
    for (int k = 0; k < dim; k++)
      FEA_CHECK(isfinite(coords[v * dim + k]), ctx, FEA_ERR_INVALID_ARG,
                "coordinate %d of node %lld is %g", k, (long long)v, coords[v * dim + k]);
  const int npc = fea_cell_num_nodes(type);
  for (fea_index c = 0; c < num_cells; c++)
    for (int i = 0; i < npc; i++) {
      fea_index v = cells[c * npc + i];
      FEA_CHECK(v >= 0 && v < num_nodes, ctx, FEA_ERR_INVALID_ARG,
                "cell %lld, node %d is %lld, outside [0, %lld)", (long long)c, i, (long long)v,
                (long long)num_nodes);
      for (int j = 0; j < i; j++)
        FEA_CHECK(cells[c * npc + j] != v, ctx, FEA_ERR_INVALID_ARG,
                  "cell %lld lists node %lld twice (as its nodes %d and %d)", (long long)c,
                  (long long)v, j, i);
    }
  return fea_mesh_build_from_arrays(ctx, dim, type, num_nodes, coords, num_cells, cells, out);
}

fea_status fea_mesh_refine_uniform(const fea_mesh *coarse, fea_mesh **fine) {
  FEA_ENTRY();
  if (fine) *fine = NULL;
  FEA_CHECK_NULL(coarse, NULL);
  FEA_CHECK_NULL(fine, coarse->ctx);
  return fea_mesh_build_refined(coarse, fine);
}

fea_status fea_mesh_destroy(fea_mesh **mesh) {
  FEA_ENTRY();
  if (!mesh || !*mesh) return FEA_SUCCESS;
  fea_object_release(*mesh);
  *mesh = NULL;
  return FEA_SUCCESS;
}

fea_status fea_mesh_get_info(const fea_mesh *mesh, int *dim, fea_cell_type *type,
                             fea_index *num_nodes, fea_index *num_cells) {
  FEA_ENTRY();
  FEA_CHECK_NULL(mesh, NULL);
  if (dim) *dim = mesh->dim;
  if (type) *type = mesh->type;
  if (num_nodes) *num_nodes = mesh->num_nodes;
  if (num_cells) *num_cells = mesh->num_cells;
  return FEA_SUCCESS;
}

/* capacity entries are there for `needed`; `what` names the array. */
static fea_status check_capacity(const fea_mesh *mesh, fea_index capacity, const void *array,
                                 fea_index needed, const char *what) {
  FEA_CHECK(array != NULL, mesh->ctx, FEA_ERR_INVALID_ARG, "argument '%s' is NULL", what);
  FEA_CHECK(capacity >= needed, mesh->ctx, FEA_ERR_DIMENSION, "%s: capacity %lld < %lld needed",
            what, (long long)capacity, (long long)needed);
  return FEA_SUCCESS;
}

fea_status fea_mesh_get_coordinates(const fea_mesh *mesh, fea_index capacity, double *coords) {
  FEA_ENTRY();
  FEA_CHECK_NULL(mesh, NULL);
  const fea_index needed = mesh->num_nodes * mesh->dim;
  FEA_CALL(check_capacity(mesh, capacity, coords, needed, "coords"));
  memcpy(coords, mesh->coords, (size_t)needed * sizeof *coords);
  return FEA_SUCCESS;
}

fea_status fea_mesh_get_cells(const fea_mesh *mesh, fea_index capacity, fea_index *cells) {
  FEA_ENTRY();
  FEA_CHECK_NULL(mesh, NULL);
  const fea_index needed = mesh->num_cells * mesh->nodes_per_cell;
  FEA_CALL(check_capacity(mesh, capacity, cells, needed, "cells"));
  memcpy(cells, mesh->cells, (size_t)needed * sizeof *cells);
  return FEA_SUCCESS;
}

fea_status fea_mesh_get_parents(const fea_mesh *mesh, fea_index capacity, fea_index *parents) {
  FEA_ENTRY();
  FEA_CHECK_NULL(mesh, NULL);
  FEA_CHECK(mesh->parents != NULL, mesh->ctx, FEA_ERR_STATE,
            "the mesh has no parents: it was not made by fea_mesh_refine_uniform()");
  FEA_CALL(check_capacity(mesh, capacity, parents, mesh->num_cells, "parents"));
  memcpy(parents, mesh->parents, (size_t)mesh->num_cells * sizeof *parents);
  return FEA_SUCCESS;
}

fea_status fea_mesh_read_gmsh(fea_context *ctx, const char *path, fea_mesh **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(path, ctx);
  FEA_CHECK_NULL(out, ctx);
  FEA_CHECK(path[0] != '\0', ctx, FEA_ERR_INVALID_ARG, "path is empty");
  return fea_mesh_gmsh_read(ctx, path, out);
}

fea_status fea_mesh_get_boundary_groups(const fea_mesh *mesh, int capacity, int *tags,
                                        fea_index *num_facets, int *count) {
  FEA_ENTRY();
  FEA_CHECK_NULL(mesh, NULL);
  FEA_CHECK_NULL(count, mesh->ctx);
  FEA_CHECK(capacity >= 0, mesh->ctx, FEA_ERR_INVALID_ARG, "capacity = %d is negative", capacity);
  FEA_CHECK(tags || capacity == 0, mesh->ctx, FEA_ERR_INVALID_ARG,
            "argument 'tags' is NULL but capacity = %d", capacity);
  const fea_mesh_boundary *b = mesh->boundary;
  const int n = b ? b->num_groups : 0;
  *count = n;
  if (capacity == 0) return FEA_SUCCESS;
  FEA_CHECK(capacity >= n, mesh->ctx, FEA_ERR_DIMENSION,
            "capacity = %d is below the mesh's %d boundary groups", capacity, n);
  for (int g = 0; g < n; g++) {
    tags[g] = b->group_tag[g];
    if (num_facets) num_facets[g] = b->group_facets[g];
  }
  return FEA_SUCCESS;
}

fea_status fea_mesh_get_boundary_group_name(const fea_mesh *mesh, int tag, const char **name) {
  FEA_ENTRY();
  FEA_CHECK_NULL(mesh, NULL);
  FEA_CHECK_NULL(name, mesh->ctx);
  const int g = fea_mesh_boundary_find_tag(mesh->boundary, tag);
  FEA_CHECK(g >= 0, mesh->ctx, FEA_ERR_INVALID_ARG,
            "physical tag %d is not a group of the mesh's boundary (%d groups)", tag,
            mesh->boundary ? mesh->boundary->num_groups : 0);
  *name = mesh->boundary->group_name[g];
  return FEA_SUCCESS;
}

fea_status fea_mesh_write_vtu(const fea_mesh *mesh, const char *path, int num_fields,
                              const fea_field *fields) {
  FEA_ENTRY();
  FEA_CHECK_NULL(mesh, NULL);
  fea_context *ctx = mesh->ctx;
  FEA_CHECK_NULL(path, ctx);
  FEA_CHECK(path[0] != '\0', ctx, FEA_ERR_INVALID_ARG, "path is empty");
  FEA_CHECK(num_fields >= 0, ctx, FEA_ERR_INVALID_ARG, "num_fields = %d is negative", num_fields);
  FEA_CHECK(num_fields == 0 || fields != NULL, ctx, FEA_ERR_INVALID_ARG,
            "fields is NULL for num_fields = %d", num_fields);
  for (int f = 0; f < num_fields; f++) {
    const fea_field *fd = &fields[f];
    FEA_CHECK(fd->name != NULL && fd->name[0] != '\0', ctx, FEA_ERR_INVALID_ARG,
              "field %d has no name", f);
    for (const char *p = fd->name; *p; p++)
      FEA_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f, ctx, FEA_ERR_INVALID_ARG,
                "field %d's name has the control character 0x%02x, which XML cannot hold", f,
                (unsigned)(unsigned char)*p);
    FEA_CHECK(fd->location == FEA_FIELD_NODE || fd->location == FEA_FIELD_CELL, ctx,
              FEA_ERR_INVALID_ARG, "field '%s' has unknown location %d", fd->name,
              (int)fd->location);
    FEA_CHECK(fd->components >= 1 && fd->components <= 9, ctx, FEA_ERR_INVALID_ARG,
              "field '%s' has %d components, must be 1 to 9", fd->name, fd->components);
    FEA_CHECK(fd->values != NULL, ctx, FEA_ERR_INVALID_ARG, "field '%s' has NULL values", fd->name);
    for (int g = 0; g < f; g++)
      FEA_CHECK(fields[g].location != fd->location || strcmp(fields[g].name, fd->name) != 0, ctx,
                FEA_ERR_INVALID_ARG, "fields %d and %d are both named '%s' on the %s", g, f,
                fd->name, fd->location == FEA_FIELD_NODE ? "nodes" : "cells");
    /* VTK's ASCII reader cannot parse NaN or infinity. */
    const fea_index count = (fd->location == FEA_FIELD_NODE ? mesh->num_nodes : mesh->num_cells) *
                            fd->components;
    for (fea_index i = 0; i < count; i++)
      FEA_CHECK(isfinite(fd->values[i]), ctx, FEA_ERR_INVALID_ARG,
                "field '%s' value %lld (%s %lld, component %d) is %g, which VTK cannot read",
                fd->name, (long long)i, fd->location == FEA_FIELD_NODE ? "node" : "cell",
                (long long)(i / fd->components), (int)(i % fd->components), fd->values[i]);
  }
  return fea_mesh_vtu_write(mesh, path, num_fields, fields);
}
