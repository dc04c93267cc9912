/* The space object: allocation with a context reference and its release,
 * which hands the kind's data to the kind's ops->destroy. */
#include <stdlib.h>

#include "internal/error.h"
#include "space.h"

static void space_free(void *object) {
  fea_space *s = object;
  if (s->ops && s->ops->destroy) s->ops->destroy(s);
  free(s->boundary_dofs);
  free(s);
}

fea_status fea_space_alloc(fea_context *ctx, fea_space **out) {
  return fea_object_alloc(ctx, sizeof(fea_space), "space", space_free, (void **)out);
}
