/* The object base: the header every handle starts with, and its life cycle.
 *
 * Every public handle (context, mesh, space, problem, matrix, vector,
 * operator, solver) begins with FEA_OBJECT_HEADER, so that one retain and
 * one release serve them all and "objects hold a reference on what they use"
 * is implemented once. The context is the root: its header's ctx is NULL.
 * The fields are spelled out (not a named member) so that x->ctx keeps
 * reading naturally; fea_object has the same fields in the same order, and
 * every handle is reached through a pointer to its first member. */
#ifndef FEA_INTERNAL_OBJECT_H
#define FEA_INTERNAL_OBJECT_H

#include <stddef.h>

#include <feaccel/types.h>

#include "private-export.h"

/* What an object's release does when its last reference goes: free what the
 * object owns and the object itself. References the object holds on other
 * objects (its space, its mesh) are dropped here too; the one on the
 * context is dropped by fea_object_release after this returns. */
typedef void (*fea_object_free_fn)(void *object);

#define FEA_OBJECT_HEADER                                             \
  fea_context *ctx;       /* holds a reference; NULL for a context */ \
  int refcount;           /* the creator plus every holder */         \
  const char *class_name; /* "mesh", "space", ... for messages */     \
  fea_object_free_fn free_object

typedef struct fea_object {
  FEA_OBJECT_HEADER;
} fea_object;

/* A zeroed object of size bytes (at least sizeof(fea_object)) with one
 * reference, a reference on ctx (none when ctx is NULL: the context
 * itself), and free_object called at the last release. */
fea_status fea_object_alloc(fea_context *ctx, size_t size, const char *class_name,
                            fea_object_free_fn free_object, void **out);
FEA_PRIVATE_EXPORT void fea_object_retain(void *object);
/* Drop one reference; at the last, free_object, then the context reference.
 * NULL is accepted. */
FEA_PRIVATE_EXPORT void fea_object_release(void *object);
/* Release and forget: p = NULL afterwards (the internal destroy). */
#define FEA_OBJECT_DROP(p) (fea_object_release(p), (p) = NULL)

#endif
