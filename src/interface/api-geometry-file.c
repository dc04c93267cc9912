/* Geometry file API: the file read whole (a regular file only, opened
 * without blocking, its size checked against libxml2's ceiling and the
 * memory that reading and parsing it needs before the buffer exists), then
 * src/disc/geometry-gismo.c parses it; the patches are
 * handed out as descriptors that point into the object, the MultiPatch
 * topology as positions in the patch list and 0-based sides. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/context.h"
#include "internal/error.h"
#include "disc/geometry-gismo.h"
#include "base/memory-limit.h"
#include "base/struct-copy.h"

static void file_free(void *object) {
  fea_geometry_file *f = object;
  fea_geometry_file_release(f);
  free(f);
}

/* The whole file into *data (NUL-terminated, *size bytes before the NUL). */
static fea_status slurp(fea_context *ctx, const char *path, char **data, size_t *size) {
  *data = NULL;
  struct stat st;
  const int fd = open(path, O_RDONLY | O_NONBLOCK);
  FEA_CHECK(fd >= 0, ctx, FEA_ERR_IO, "%s: %s", path, strerror(errno));
  fea_status s = FEA_SUCCESS;
  if (fstat(fd, &st) != 0)
    s = FEA_ERROR(ctx, FEA_ERR_IO, "%s: %s", path, strerror(errno));
  else if (!S_ISREG(st.st_mode))
    s = FEA_ERROR(ctx, FEA_ERR_IO, "%s: not a regular file", path);
  /* Too large for libxml2 whatever the memory, or for the budget: named
   * before a byte is read or allocated. */
  if (s == FEA_SUCCESS && st.st_size > FEA_GISMO_MAX_BYTES)
    s = FEA_ERROR(ctx, FEA_ERR_UNSUPPORTED,
                  "%s is %lld bytes; the reader takes files up to %ld bytes (libxml2's limit)",
                  path, (long long)st.st_size, FEA_GISMO_MAX_BYTES);
  if (s == FEA_SUCCESS) {
    char what[1100];
    snprintf(what, sizeof what, "reading and parsing %.1000s (%lld bytes)", path,
             (long long)st.st_size);
    s = fea_memory_require(ctx, 0, fea_geometry_gismo_text_bytes((size_t)st.st_size), what);
  }
  char *buf = s == FEA_SUCCESS ? malloc((size_t)st.st_size + 1) : NULL;
  if (s == FEA_SUCCESS && !buf)
    s = FEA_ERROR(ctx, FEA_ERR_OUT_OF_MEMORY, "%s: no memory for %lld bytes", path,
                  (long long)st.st_size);
  size_t done = 0;
  while (s == FEA_SUCCESS && done < (size_t)st.st_size) {
    const ssize_t n = read(fd, buf + done, (size_t)st.st_size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      s = FEA_ERROR(ctx, FEA_ERR_IO, "%s: %s after %zu bytes", path,
                    n < 0 ? strerror(errno) : "end of file", done);
      break;
    }
    done += (size_t)n;
  }
  close(fd);
  if (s != FEA_SUCCESS) {
    free(buf);
    return s;
  }
  buf[done] = '\0';
  *data = buf;
  *size = done;
  return FEA_SUCCESS;
}

fea_status fea_geometry_file_read(fea_context *ctx, const char *path, fea_geometry_file **out) {
  FEA_ENTRY();
  if (out) *out = NULL;
  FEA_CHECK_NULL(ctx, NULL);
  FEA_CHECK_NULL(path, ctx);
  FEA_CHECK_NULL(out, ctx);
  FEA_CHECK(path[0] != '\0', ctx, FEA_ERR_INVALID_ARG, "path is empty");
  char *data = NULL;
  size_t size = 0;
  FEA_CALL(slurp(ctx, path, &data, &size));
  fea_geometry_file *f = NULL;
  fea_status s = fea_object_alloc(ctx, sizeof *f, "geometry file", file_free, (void **)&f);
  if (s == FEA_SUCCESS) s = fea_geometry_gismo_parse(ctx, path, data, size, f);
  free(data);
  if (s != FEA_SUCCESS) {
    fea_object_release(f);
    return s;
  }
  *out = f;
  return FEA_SUCCESS;
}

fea_status fea_geometry_file_get_num_patches(const fea_geometry_file *file, int *count) {
  FEA_ENTRY();
  FEA_CHECK_NULL(file, NULL);
  FEA_CHECK_NULL(count, file->ctx);
  *count = file->count;
  return FEA_SUCCESS;
}

fea_status fea_geometry_file_get_patch(const fea_geometry_file *file, int index, int *dim,
                                       fea_geometry_desc *desc) {
  FEA_ENTRY();
  FEA_CHECK_NULL(file, NULL);
  FEA_CHECK_NULL(dim, file->ctx);
  FEA_CHECK_NULL(desc, file->ctx);
  FEA_CHECK(index >= 0 && index < file->count, file->ctx, FEA_ERR_INVALID_ARG,
            "patch %d is outside [0, %d)", index, file->count);
  FEA_CALL(fea_struct_copy_out(file->ctx, desc, &file->patches[index].desc, "desc",
                               &fea_struct_geometry_desc));
  *dim = file->patches[index].dim;
  return FEA_SUCCESS;
}

fea_status fea_geometry_file_get_multipatch(const fea_geometry_file *file, int *num_patches,
                                            const int **patches) {
  FEA_ENTRY();
  FEA_CHECK_NULL(file, NULL);
  FEA_CHECK_NULL(num_patches, file->ctx);
  FEA_CHECK_NULL(patches, file->ctx);
  *num_patches = file->num_members;
  *patches = file->members;
  return FEA_SUCCESS;
}

fea_status fea_geometry_file_get_num_interfaces(const fea_geometry_file *file, int *count) {
  FEA_ENTRY();
  FEA_CHECK_NULL(file, NULL);
  FEA_CHECK_NULL(count, file->ctx);
  *count = file->num_interfaces;
  return FEA_SUCCESS;
}

fea_status fea_geometry_file_get_interface(const fea_geometry_file *file, int index,
                                           fea_geometry_interface *out) {
  FEA_ENTRY();
  FEA_CHECK_NULL(file, NULL);
  FEA_CHECK_NULL(out, file->ctx);
  FEA_CHECK(index >= 0 && index < file->num_interfaces, file->ctx, FEA_ERR_INVALID_ARG,
            "interface %d is outside [0, %d)", index, file->num_interfaces);
  return fea_struct_copy_out(file->ctx, out, &file->interfaces[index], "out",
                             &fea_struct_geometry_interface);
}

fea_status fea_geometry_file_get_num_boundary_sides(const fea_geometry_file *file, int *count) {
  FEA_ENTRY();
  FEA_CHECK_NULL(file, NULL);
  FEA_CHECK_NULL(count, file->ctx);
  *count = file->num_boundary;
  return FEA_SUCCESS;
}

fea_status fea_geometry_file_get_boundary_side(const fea_geometry_file *file, int index, int *patch,
                                               fea_patch_side *side, const char **name) {
  FEA_ENTRY();
  FEA_CHECK_NULL(file, NULL);
  FEA_CHECK_NULL(patch, file->ctx);
  FEA_CHECK_NULL(side, file->ctx);
  FEA_CHECK(index >= 0 && index < file->num_boundary, file->ctx, FEA_ERR_INVALID_ARG,
            "boundary side %d is outside [0, %d)", index, file->num_boundary);
  const fea_geometry_boundary_side *b = &file->boundary[index];
  *patch = b->patch;
  *side = b->side;
  if (name) *name = b->name;
  return FEA_SUCCESS;
}

fea_status fea_geometry_file_destroy(fea_geometry_file **file) {
  FEA_ENTRY();
  if (!file || !*file) return FEA_SUCCESS;
  fea_object_release(*file);
  *file = NULL;
  return FEA_SUCCESS;
}
