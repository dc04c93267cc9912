/* libFuzzer target of the G+Smo XML geometry reader: each input is written
 * to an in-memory file and read with fea_geometry_file_read(). A file that
 * is read must give patches the library accepts (each makes a space of its
 * own degrees) and a multipatch topology that names them (patch positions in
 * range, sides of their dimension, direction maps that are permutations, no
 * side named twice); a refusal must be a reader error that names the file. */
#define _GNU_SOURCE /* memfd_create, in fuzz-common.h */
#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fea_context *ctx = fuzz_context();
  const char *path = fuzz_write_input(data, size);
  fea_geometry_file *file = (fea_geometry_file *)&size; /* must become NULL on failure */
  const fea_status s = fea_geometry_file_read(ctx, path, &file);
  if (s != FEA_SUCCESS) {
    FUZZ_REQUIRE(file == NULL, "failure %d left the handle set", (int)s);
    FUZZ_REQUIRE(s == FEA_ERR_IO || s == FEA_ERR_INVALID_ARG || s == FEA_ERR_UNSUPPORTED ||
                     s == FEA_ERR_OUT_OF_MEMORY,
                 "status %d", (int)s);
    const char *msg = fea_context_last_error(ctx);
    FUZZ_REQUIRE(msg && strstr(msg, path), "message without the path: %s", msg);
    return 0;
  }
  int count = 0;
  FUZZ_REQUIRE(fea_geometry_file_get_num_patches(file, &count) == FEA_SUCCESS && count >= 1,
               "%d patches", count);
  for (int i = 0; i < count; i++) {
    fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
    int dim = 0;
    FUZZ_REQUIRE(fea_geometry_file_get_patch(file, i, &dim, &g) == FEA_SUCCESS, "patch %d", i);
    FUZZ_REQUIRE(dim == 2 || dim == 3, "patch %d is %dD", i, dim);
    /* A space of the geometry's own degrees and knots contains it; keep it
     * small (the reader accepts any size the budget allows). */
    fea_index n = 1;
    for (int k = 0; k < dim; k++) n *= g.num_knots[k];
    if (n > 4096) continue;
    fea_bspline_desc d = FEA_BSPLINE_DESC_INIT;
    d.dim = dim;
    for (int k = 0; k < dim; k++) {
      d.degree[k] = g.degree[k];
      d.knots[k] = g.knots[k];
      d.num_knots[k] = g.num_knots[k];
    }
    d.geometry = &g;
    fea_space *space = NULL;
    const fea_status ss = fea_space_create_bspline(ctx, &d, &space);
    /* Element sizes below the rounding of their knots are refused by the
     * space but not by the reader (a map may have them). */
    FUZZ_REQUIRE(ss == FEA_SUCCESS || ss == FEA_ERR_INVALID_ARG, "space of patch %d: %d", i,
                 (int)ss);
    fea_space_destroy(&space);
  }
  int nm = 0, ni = 0, nb = 0;
  const int *members = NULL;
  FUZZ_REQUIRE(fea_geometry_file_get_multipatch(file, &nm, &members) == FEA_SUCCESS && nm >= 0 &&
                   nm <= count && (nm == 0) == (members == NULL),
               "%d multipatch patches", nm);
  for (int i = 0; i < nm; i++)
    FUZZ_REQUIRE(members[i] >= 0 && members[i] < count, "member %d is %d", i, members[i]);
  FUZZ_REQUIRE(fea_geometry_file_get_num_interfaces(file, &ni) == FEA_SUCCESS && ni >= 0 &&
                   fea_geometry_file_get_num_boundary_sides(file, &nb) == FEA_SUCCESS && nb >= 0,
               "%d interfaces, %d boundary sides", ni, nb);
  FUZZ_REQUIRE(nm > 0 || ni + nb == 0, "topology without a multipatch");
  static unsigned char used[4096 * 6];
  if (count <= 4096) memset(used, 0, (size_t)count * 6);
  for (int i = 0; i < ni; i++) {
    fea_geometry_interface in = FEA_GEOMETRY_INTERFACE_INIT;
    FUZZ_REQUIRE(fea_geometry_file_get_interface(file, i, &in) == FEA_SUCCESS, "interface %d", i);
    int dim = 0, seen[3] = {0, 0, 0};
    for (int j = 0; j < 2; j++) {
      FUZZ_REQUIRE(in.patch[j] >= 0 && in.patch[j] < count, "interface %d: patch %d", i,
                   in.patch[j]);
      fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
      FUZZ_REQUIRE(fea_geometry_file_get_patch(file, in.patch[j], &dim, &g) == FEA_SUCCESS,
                   "patch %d", in.patch[j]);
      FUZZ_REQUIRE((int)in.side[j] >= 0 && (int)in.side[j] < 2 * dim, "interface %d: side %d", i,
                   (int)in.side[j]);
      if (count <= 4096) {
        FUZZ_REQUIRE(!used[in.patch[j] * 6 + in.side[j]]++, "interface %d: a side used twice", i);
      }
    }
    for (int k = 0; k < dim; k++) {
      FUZZ_REQUIRE(in.direction_map[k] >= 0 && in.direction_map[k] < dim &&
                       (in.direction_orientation[k] == 0 || in.direction_orientation[k] == 1),
                   "interface %d: direction %d", i, k);
      seen[in.direction_map[k]]++;
    }
    for (int k = 0; k < dim; k++)
      FUZZ_REQUIRE(seen[k] == 1, "interface %d: the map is not a permutation", i);
  }
  for (int i = 0; i < nb; i++) {
    int p = -1, dim = 0;
    fea_patch_side side = FEA_SIDE_WEST;
    const char *name = NULL;
    FUZZ_REQUIRE(fea_geometry_file_get_boundary_side(file, i, &p, &side, &name) == FEA_SUCCESS &&
                     p >= 0 && p < count,
                 "boundary side %d: patch %d", i, p);
    fea_geometry_desc g = FEA_GEOMETRY_DESC_INIT;
    FUZZ_REQUIRE(fea_geometry_file_get_patch(file, p, &dim, &g) == FEA_SUCCESS && (int)side >= 0 &&
                     (int)side < 2 * dim,
                 "boundary side %d: side %d", i, (int)side);
    if (count <= 4096) {
      FUZZ_REQUIRE(!used[p * 6 + side]++, "boundary side %d: a side used twice", i);
    }
  }
  fea_geometry_file_destroy(&file);
  FUZZ_REQUIRE(file == NULL, "destroy left the handle");
  return 0;
}
