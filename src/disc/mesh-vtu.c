/* Writer of VTK XML UnstructuredGrid files (.vtu, version 0.1, ASCII) for
 * ParaView: the mesh as Float64 points (padded to 3 components), its cells
 * (connectivity, offsets, types) and named node and cell fields.
 *
 * The node order of mesh.h is VTK's for these linear cells (VTK_LINE 3,
 * VTK_TRIANGLE 5, VTK_QUAD 9, VTK_TETRA 10, VTK_HEXAHEDRON 12): VTK's
 * parametric coordinates of their points are the reference corners of the
 * table in mesh.h, in the same order, so cells are written as stored. Values use 17 significant digits, so doubles read back
 * exactly. A failed write removes the partial file (when it is a regular file). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "internal/error.h"
#include "mesh.h"

static int vtk_type(fea_cell_type type) {
  switch (type) {
  case FEA_CELL_INTERVAL: return 3;
  case FEA_CELL_TRIANGLE: return 5;
  case FEA_CELL_QUAD: return 9;
  case FEA_CELL_TETRAHEDRON: return 10;
  case FEA_CELL_HEXAHEDRON: return 12;
  }
  return 0;
}

/* An attribute value with XML's five special characters escaped. */
static void put_escaped(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default: fputc(*s, f);
    }
  }
}

/* Rows of `per_row` doubles; short rows padded with zeros up to `width`. */
static void put_reals(FILE *f, const double *v, fea_index rows, int per_row, int width) {
  for (fea_index i = 0; i < rows; i++) {
    fputs("         ", f);
    for (int k = 0; k < width; k++)
      fprintf(f, "%s%.17g", k ? " " : "", k < per_row ? v[i * per_row + k] : 0.0);
    fputc('\n', f);
  }
}

static void put_fields(FILE *f, const fea_mesh *m, fea_field_location where, int num_fields,
                       const fea_field *fields) {
  const char *tag = where == FEA_FIELD_NODE ? "PointData" : "CellData";
  const fea_index rows = where == FEA_FIELD_NODE ? m->num_nodes : m->num_cells;
  fprintf(f, "      <%s>\n", tag);
  for (int i = 0; i < num_fields; i++) {
    if (fields[i].location != where) continue;
    fputs("        <DataArray type=\"Float64\" Name=\"", f);
    put_escaped(f, fields[i].name);
    fprintf(f, "\" NumberOfComponents=\"%d\" format=\"ascii\">\n", fields[i].components);
    put_reals(f, fields[i].values, rows, fields[i].components, fields[i].components);
    fputs("        </DataArray>\n", f);
  }
  fprintf(f, "      </%s>\n", tag);
}

static void put_mesh(FILE *f, const fea_mesh *m, int num_fields, const fea_field *fields) {
  const int npc = m->nodes_per_cell;
  fputs(
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
      "  <UnstructuredGrid>\n",
      f);
  fprintf(f, "    <Piece NumberOfPoints=\"%lld\" NumberOfCells=\"%lld\">\n",
          (long long)m->num_nodes, (long long)m->num_cells);
  put_fields(f, m, FEA_FIELD_NODE, num_fields, fields);
  put_fields(f, m, FEA_FIELD_CELL, num_fields, fields);
  fputs(
      "      <Points>\n"
      "        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n",
      f);
  put_reals(f, m->coords, m->num_nodes, m->dim, 3);
  fputs(
      "        </DataArray>\n"
      "      </Points>\n"
      "      <Cells>\n"
      "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n",
      f);
  for (fea_index c = 0; c < m->num_cells; c++) {
    fputs("         ", f);
    for (int i = 0; i < npc; i++) fprintf(f, " %lld", (long long)m->cells[c * npc + i]);
    fputc('\n', f);
  }
  fputs(
      "        </DataArray>\n"
      "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n",
      f);
  for (fea_index c = 0; c < m->num_cells; c++)
    fprintf(f, "%s%lld%s", c % 16 ? " " : "         ", (long long)((c + 1) * npc),
            c % 16 == 15 || c + 1 == m->num_cells ? "\n" : "");
  fputs(
      "        </DataArray>\n"
      "        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n",
      f);
  const int type = vtk_type(m->type);
  for (fea_index c = 0; c < m->num_cells; c++)
    fprintf(f, "%s%d%s", c % 32 ? " " : "         ", type,
            c % 32 == 31 || c + 1 == m->num_cells ? "\n" : "");
  fputs(
      "        </DataArray>\n"
      "      </Cells>\n"
      "    </Piece>\n"
      "  </UnstructuredGrid>\n"
      "</VTKFile>\n",
      f);
}

fea_status fea_mesh_vtu_write(const fea_mesh *mesh, const char *path, int num_fields,
                              const fea_field *fields) {
  FILE *f = fopen(path, "w");
  FEA_CHECK(f, mesh->ctx, FEA_ERR_IO, "cannot open %s for writing: %s", path, strerror(errno));
  /* Only a regular file is removed after a failure (never /dev/full, say). */
  struct stat st;
  const int regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
  put_mesh(f, mesh, num_fields, fields);
  /* stdio keeps the first error: one check after the last write covers all. */
  int failed = ferror(f), err = errno;
  if (fclose(f) != 0 && !failed) {
    failed = 1;
    err = errno;
  }
  if (failed) {
    if (regular) remove(path);
    return FEA_ERROR(mesh->ctx, FEA_ERR_IO, "writing %s failed: %s", path, strerror(err));
  }
  return FEA_SUCCESS;
}
