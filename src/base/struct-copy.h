/* Size-versioned public structs (docs/architecture.md, "Objects"): every
 * descriptor, info and stats struct starts with `size_t size`, the sizeof the
 * caller was compiled with, and grows only at its end. These two functions
 * are the only place where the library reads or writes one by that size:
 *
 * - the caller's size must cover every field of the struct's first version
 *   (min_size, through its last field) and may not exceed the struct this
 *   library knows (size); anything else is FEA_ERR_INVALID_ARG naming the
 *   value, before anything is written;
 * - copy-in takes the caller's first `size` bytes over the defaults (a
 *   caller older than the library leaves the newer fields at their _INIT
 *   values) and sets the copy's size to the full size;
 * - copy-out writes only the caller's first `size` bytes and leaves its size
 *   as it was.
 *
 * Each struct is described once, in src/base/struct-copy.c. */
#ifndef FEA_INTERNAL_STRUCT_COPY_H
#define FEA_INTERNAL_STRUCT_COPY_H

#include <stddef.h>

#include <feaccel/context.h>

#include "internal/private-export.h"

/* Bytes from the start of type through field. */
#define FEA_SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

typedef struct fea_struct_type {
  const char *name; /* "fea_mesh_desc" */
  const char *init; /* "FEA_MESH_DESC_INIT" */
  size_t min_size;  /* through the last field of the first version */
  size_t size;      /* sizeof as this library was built */
} fea_struct_type;

extern const fea_struct_type fea_struct_context_info, fea_struct_backend_info, fea_struct_mesh_desc,
    fea_struct_bspline_desc, fea_struct_geometry_desc, fea_struct_geometry_interface,
    fea_struct_space_info, fea_struct_problem_desc, fea_struct_assembly_desc,
    fea_struct_assembly_stats, fea_struct_cost_query, fea_struct_cost, fea_struct_operator_desc,
    fea_struct_operator_info, fea_struct_cg_desc, fea_struct_cg_stats, fea_struct_solver_stats,
    fea_struct_solver_level, fea_struct_solver_node, fea_struct_prehandled_desc,
    fea_struct_prehandled_stats, fea_struct_multigrid_desc, fea_struct_multigrid_stats,
    fea_struct_multipatch_desc, fea_struct_multipatch_info, fea_struct_multipatch_interface,
    fea_struct_multipatch_stats;
/* Also used by the PETSc library (libfeaccel-petsc.so). */
FEA_PRIVATE_EXPORT extern const fea_struct_type fea_struct_solver_desc;

/* FEA_ERR_INVALID_ARG (on ctx, which may be NULL) unless s's size is in
 * [t->min_size, t->size]; `what` names the argument in the message
 * ("desc", "info", "infos[0]"). s must not be NULL. */
fea_status fea_struct_check(const fea_context *ctx, const void *s, const char *what,
                            const fea_struct_type *t);

/* dst (t->size bytes) holds the defaults; src NULL keeps them. Otherwise src
 * is checked, its first size bytes are copied over dst and dst's size is set
 * to t->size. dst is not written when the check fails. */
FEA_PRIVATE_EXPORT fea_status fea_struct_copy_in(const fea_context *ctx, void *dst, const void *src,
                                                 const char *what, const fea_struct_type *t);

/* Check dst, then write the first dst->size bytes of full (t->size bytes)
 * into it, keeping dst's size. */
FEA_PRIVATE_EXPORT fea_status fea_struct_copy_out(const fea_context *ctx, void *dst,
                                                  const void *full, const char *what,
                                                  const fea_struct_type *t);

#endif
