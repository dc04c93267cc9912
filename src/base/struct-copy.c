/* The one copy-in and copy-out of size-versioned structs
 * (src/base/struct-copy.h), and the table of those structs: name, _INIT
 * macro, the end of the first version's last field, and the size now. When a
 * field is appended to a struct, its entry here keeps naming the last field
 * of the first version. */
#include <string.h>

#include <feaccel/assembly.h>
#include <feaccel/context.h>
#include <feaccel/cost.h>
#include <feaccel/mesh.h>
#include <feaccel/multipatch.h>
#include <feaccel/operator.h>
#include <feaccel/problem.h>
#include <feaccel/solver.h>
#include <feaccel/space.h>

#include "internal/error.h"
#include "struct-copy.h"

#define STRUCT_TYPE(type, v1_last, init) \
  { #type, #init, FEA_SIZE_THROUGH(type, v1_last), sizeof(type) }

const fea_struct_type fea_struct_context_info = STRUCT_TYPE(fea_context_info, device_memory_bytes,
                                                            FEA_CONTEXT_INFO_INIT);
const fea_struct_type fea_struct_backend_info = STRUCT_TYPE(fea_backend_info, reason,
                                                            FEA_BACKEND_INFO_INIT);
const fea_struct_type fea_struct_mesh_desc = STRUCT_TYPE(fea_mesh_desc, simplices,
                                                         FEA_MESH_DESC_INIT);
const fea_struct_type fea_struct_bspline_desc = STRUCT_TYPE(fea_bspline_desc, geometry,
                                                            FEA_BSPLINE_DESC_INIT);
const fea_struct_type fea_struct_geometry_desc = STRUCT_TYPE(fea_geometry_desc, weights,
                                                             FEA_GEOMETRY_DESC_INIT);
const fea_struct_type fea_struct_geometry_interface = STRUCT_TYPE(fea_geometry_interface,
                                                                  direction_orientation,
                                                                  FEA_GEOMETRY_INTERFACE_INIT);
const fea_struct_type fea_struct_space_info = STRUCT_TYPE(fea_space_info, elements,
                                                          FEA_SPACE_INFO_INIT);
const fea_struct_type fea_struct_problem_desc = STRUCT_TYPE(fea_problem_desc, quad_points,
                                                            FEA_PROBLEM_DESC_INIT);
const fea_struct_type fea_struct_assembly_desc = STRUCT_TYPE(fea_assembly_desc, tsx_retries,
                                                             FEA_ASSEMBLY_DESC_INIT);
const fea_struct_type fea_struct_assembly_stats = STRUCT_TYPE(fea_assembly_stats,
                                                              elements_recomputed,
                                                              FEA_ASSEMBLY_STATS_INIT);
const fea_struct_type fea_struct_cost_query = STRUCT_TYPE(fea_cost_query, nproc,
                                                          FEA_COST_QUERY_INIT);
const fea_struct_type fea_struct_cost = STRUCT_TYPE(fea_cost, root_front, FEA_COST_INIT);
const fea_struct_type fea_struct_operator_desc = STRUCT_TYPE(fea_operator_desc, strategy,
                                                             FEA_OPERATOR_DESC_INIT);
const fea_struct_type fea_struct_operator_info = STRUCT_TYPE(fea_operator_info, bytes_per_apply,
                                                             FEA_OPERATOR_INFO_INIT);
const fea_struct_type fea_struct_cg_desc = STRUCT_TYPE(fea_cg_desc, history, FEA_CG_DESC_INIT);
const fea_struct_type fea_struct_cg_stats = STRUCT_TYPE(fea_cg_stats, apply_s, FEA_CG_STATS_INIT);
const fea_struct_type fea_struct_solver_desc = STRUCT_TYPE(fea_solver_desc, memory_limit_bytes,
                                                           FEA_SOLVER_DESC_INIT);
const fea_struct_type fea_struct_solver_stats = STRUCT_TYPE(fea_solver_stats, device_bytes,
                                                            FEA_SOLVER_STATS_INIT);
const fea_struct_type fea_struct_solver_level = STRUCT_TYPE(fea_solver_level, factor_s,
                                                            FEA_SOLVER_LEVEL_INIT);
const fea_struct_type fea_struct_solver_node = STRUCT_TYPE(fea_solver_node, r,
                                                           FEA_SOLVER_NODE_INIT);
const fea_struct_type fea_struct_prehandled_desc = STRUCT_TYPE(fea_prehandled_desc, tf32,
                                                               FEA_PREHANDLED_DESC_INIT);
const fea_struct_type fea_struct_prehandled_stats = STRUCT_TYPE(fea_prehandled_stats, device_bytes,
                                                                FEA_PREHANDLED_STATS_INIT);
const fea_struct_type fea_struct_multigrid_desc = STRUCT_TYPE(fea_multigrid_desc, coarsest_cells,
                                                              FEA_MULTIGRID_DESC_INIT);
const fea_struct_type fea_struct_multigrid_stats = STRUCT_TYPE(fea_multigrid_stats, memory_bytes,
                                                               FEA_MULTIGRID_STATS_INIT);

const fea_struct_type fea_struct_multipatch_desc = STRUCT_TYPE(fea_multipatch_desc, tolerance,
                                                               FEA_MULTIPATCH_DESC_INIT);
const fea_struct_type fea_struct_multipatch_info = STRUCT_TYPE(fea_multipatch_info, num_dofs,
                                                               FEA_MULTIPATCH_INFO_INIT);
const fea_struct_type fea_struct_multipatch_interface = STRUCT_TYPE(fea_multipatch_interface,
                                                                    num_dofs,
                                                                    FEA_MULTIPATCH_INTERFACE_INIT);
const fea_struct_type fea_struct_multipatch_stats = STRUCT_TYPE(fea_multipatch_stats,
                                                                interface_bytes,
                                                                FEA_MULTIPATCH_STATS_INIT);

static size_t size_of(const void *s) {
  size_t size;
  memcpy(&size, s, sizeof size);
  return size;
}

fea_status fea_struct_check(const fea_context *ctx, const void *s, const char *what,
                            const fea_struct_type *t) {
  const size_t size = size_of(s);
  FEA_CHECK(size >= t->min_size && size <= t->size, ctx, FEA_ERR_INVALID_ARG,
            "%s.size is %zu; a %s has %zu to %zu bytes in this library (initialize it with %s)",
            what, size, t->name, t->min_size, t->size, t->init);
  return FEA_SUCCESS;
}

fea_status fea_struct_copy_in(const fea_context *ctx, void *dst, const void *src, const char *what,
                              const fea_struct_type *t) {
  if (!src) return FEA_SUCCESS;
  FEA_CALL(fea_struct_check(ctx, src, what, t));
  memcpy(dst, src, size_of(src));
  memcpy(dst, &t->size, sizeof t->size);
  return FEA_SUCCESS;
}

fea_status fea_struct_copy_out(const fea_context *ctx, void *dst, const void *full,
                               const char *what, const fea_struct_type *t) {
  FEA_CALL(fea_struct_check(ctx, dst, what, t));
  const size_t size = size_of(dst);
  memcpy(dst, full, size);
  memcpy(dst, &size, sizeof size);
  return FEA_SUCCESS;
}
