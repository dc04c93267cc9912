/* libFuzzer target of the G+Smo XML geometry reader: each input is written
 * to an in-memory file and read with fea_geometry_file_read(). A file that
 * is read must give patches the library accepts (each makes a space of its
 * own degrees); a refusal must be a reader error that names the file. */
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
  fea_geometry_file_destroy(&file);
  FUZZ_REQUIRE(file == NULL, "destroy left the handle");
  return 0;
}
