/* The object base: allocation with a context reference, retain and release
 * for every handle (src/internal/object.h). */
#include <stdlib.h>

#include "internal/error.h"
#include "internal/object.h"

fea_status fea_object_alloc(fea_context *ctx, size_t size, const char *class_name,
                            fea_object_free_fn free_object, void **out) {
  fea_object *o = size >= sizeof *o ? calloc(1, size) : NULL;
  FEA_CHECK(o, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a %s (%zu bytes)", class_name, size);
  o->ctx = ctx;
  o->refcount = 1;
  o->class_name = class_name;
  o->free_object = free_object;
  if (ctx) fea_object_retain(ctx);
  *out = o;
  return FEA_SUCCESS;
}

void fea_object_retain(void *object) { ((fea_object *)object)->refcount++; }

void fea_object_release(void *object) {
  fea_object *o = object;
  if (!o || --o->refcount > 0) return;
  fea_context *ctx = o->ctx;
  if (o->free_object)
    o->free_object(o);
  else
    free(o);
  if (ctx) fea_object_release(ctx);
}
