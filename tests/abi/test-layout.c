/* The layout of every public struct, frozen (docs/architecture.md, "ABI and
 * soname policy"): structs only grow at their end. Each existing field's
 * offset and size and each struct's size are asserted at compile time with
 * the values of x86-64 LP64 (the build fails on another layout); a field
 * inserted or moved, or a type changed, fails the build of this test.
 * Appending a field changes only the struct's SIZE line here: update it, and
 * keep the first version's end in src/base/struct-copy.c.
 *
 * At run time: every struct that carries .size has an _INIT macro that sets
 * it to sizeof. */
#include <stddef.h>

#include <criterion/criterion.h>

#include <feaccel.h>

#if defined(__x86_64__) && defined(__LP64__)
#define SIZE(type, bytes) \
  _Static_assert(sizeof(type) == (bytes), "sizeof(" #type ") is not " #bytes)
#define FIELD(type, field, off, bytes)                                                  \
  _Static_assert(offsetof(type, field) == (off), #type "." #field " moved from " #off); \
  _Static_assert(sizeof(((type *)0)->field) == (bytes), #type "." #field " is not " #bytes " bytes")
#else
#define SIZE(type, bytes) _Static_assert(1, "")
#define FIELD(type, field, off, bytes) _Static_assert(1, "")
#endif

/* fea_context_info */
SIZE(fea_context_info, 856);
FIELD(fea_context_info, size, 0, 8);
FIELD(fea_context_info, backend, 8, 32);
FIELD(fea_context_info, resource, 40, 128);
FIELD(fea_context_info, num_threads, 168, 4);
FIELD(fea_context_info, bound, 172, 4);
FIELD(fea_context_info, num_cores, 176, 4);
FIELD(fea_context_info, num_pus, 180, 4);
FIELD(fea_context_info, num_numa_nodes, 184, 4);
FIELD(fea_context_info, cpu_model, 188, 128);
FIELD(fea_context_info, blas, 316, 128);
FIELD(fea_context_info, device_name, 444, 128);
FIELD(fea_context_info, device_id, 572, 4);
FIELD(fea_context_info, device_cc, 576, 4);
FIELD(fea_context_info, device_memory_bytes, 584, 8);
FIELD(fea_context_info, blas_kernels, 592, 32);
FIELD(fea_context_info, blas_isa, 624, 16);
FIELD(fea_context_info, cpu_isa, 640, 16);
FIELD(fea_context_info, blas_slow, 656, 4);
FIELD(fea_context_info, blas_advice, 660, 192);

/* fea_backend_info */
SIZE(fea_backend_info, 312);
FIELD(fea_backend_info, size, 0, 8);
FIELD(fea_backend_info, prefix, 8, 32);
FIELD(fea_backend_info, priority, 40, 4);
FIELD(fea_backend_info, built, 44, 4);
FIELD(fea_backend_info, usable, 48, 4);
FIELD(fea_backend_info, reason, 52, 256);

/* fea_mesh_desc */
SIZE(fea_mesh_desc, 112);
FIELD(fea_mesh_desc, size, 0, 8);
FIELD(fea_mesh_desc, dim, 8, 4);
FIELD(fea_mesh_desc, n, 16, 24);
FIELD(fea_mesh_desc, lower, 40, 24);
FIELD(fea_mesh_desc, upper, 64, 24);
FIELD(fea_mesh_desc, simplices, 88, 4);
FIELD(fea_mesh_desc, map, 96, 8);
FIELD(fea_mesh_desc, map_user, 104, 8);

/* fea_field */
SIZE(fea_field, 24);
FIELD(fea_field, name, 0, 8);
FIELD(fea_field, location, 8, 4);
FIELD(fea_field, components, 12, 4);
FIELD(fea_field, values, 16, 8);

/* fea_bspline_desc */
SIZE(fea_bspline_desc, 152);
FIELD(fea_bspline_desc, size, 0, 8);
FIELD(fea_bspline_desc, dim, 8, 4);
FIELD(fea_bspline_desc, degree, 12, 12);
FIELD(fea_bspline_desc, n, 24, 24);
FIELD(fea_bspline_desc, knots, 48, 24);
FIELD(fea_bspline_desc, num_knots, 72, 24);
FIELD(fea_bspline_desc, lower, 96, 24);
FIELD(fea_bspline_desc, upper, 120, 24);
FIELD(fea_bspline_desc, geometry, 144, 8);

/* fea_geometry_desc */
SIZE(fea_geometry_desc, 96);
FIELD(fea_geometry_desc, size, 0, 8);
FIELD(fea_geometry_desc, degree, 8, 12);
FIELD(fea_geometry_desc, knots, 24, 24);
FIELD(fea_geometry_desc, num_knots, 48, 24);
FIELD(fea_geometry_desc, control_points, 72, 8);
FIELD(fea_geometry_desc, num_control_points, 80, 8);
FIELD(fea_geometry_desc, weights, 88, 8);

/* fea_geometry_interface */
SIZE(fea_geometry_interface, 48);
FIELD(fea_geometry_interface, size, 0, 8);
FIELD(fea_geometry_interface, patch, 8, 8);
FIELD(fea_geometry_interface, side, 16, 8);
FIELD(fea_geometry_interface, direction_map, 24, 12);
FIELD(fea_geometry_interface, direction_orientation, 36, 12);

/* fea_space_info */
SIZE(fea_space_info, 96);
FIELD(fea_space_info, size, 0, 8);
FIELD(fea_space_info, dim, 8, 4);
FIELD(fea_space_info, is_bspline, 12, 4);
FIELD(fea_space_info, degree, 16, 12);
FIELD(fea_space_info, num_dofs, 32, 8);
FIELD(fea_space_info, num_elements, 40, 8);
FIELD(fea_space_info, dofs_per_element, 48, 4);
FIELD(fea_space_info, num_boundary_dofs, 56, 8);
FIELD(fea_space_info, elements, 64, 24);
FIELD(fea_space_info, num_components, 88, 4);

/* fea_boundary_condition */
SIZE(fea_boundary_condition, 32);
FIELD(fea_boundary_condition, type, 0, 4);
FIELD(fea_boundary_condition, alpha, 8, 8);
FIELD(fea_boundary_condition, flux, 16, 8);
FIELD(fea_boundary_condition, flux_user, 24, 8);

/* fea_boundary_part */
SIZE(fea_boundary_part, 48);
FIELD(fea_boundary_part, physical_tag, 0, 4);
FIELD(fea_boundary_part, name, 8, 8);
FIELD(fea_boundary_part, bc, 16, 32);

/* fea_element_data */
SIZE(fea_element_data, 72);
FIELD(fea_element_data, size, 0, 8);
FIELD(fea_element_data, element, 8, 8);
FIELD(fea_element_data, dim, 16, 4);
FIELD(fea_element_data, nq, 20, 4);
FIELD(fea_element_data, nb, 24, 4);
FIELD(fea_element_data, x, 32, 8);
FIELD(fea_element_data, w, 40, 8);
FIELD(fea_element_data, phi, 48, 8);
FIELD(fea_element_data, dphi, 56, 8);
FIELD(fea_element_data, ncomp, 64, 4);

/* fea_elastic_condition */
SIZE(fea_elastic_condition, 48);
FIELD(fea_elastic_condition, type, 0, 4);
FIELD(fea_elastic_condition, components, 4, 4);
FIELD(fea_elastic_condition, traction, 8, 8);
FIELD(fea_elastic_condition, traction_user, 16, 8);
FIELD(fea_elastic_condition, pressure, 24, 8);
FIELD(fea_elastic_condition, pressure_fn, 32, 8);
FIELD(fea_elastic_condition, pressure_user, 40, 8);

/* fea_elasticity_desc */
SIZE(fea_elasticity_desc, 424);
FIELD(fea_elasticity_desc, size, 0, 8);
FIELD(fea_elasticity_desc, E, 8, 8);
FIELD(fea_elasticity_desc, nu, 16, 8);
FIELD(fea_elasticity_desc, E_fn, 24, 8);
FIELD(fea_elasticity_desc, nu_fn, 32, 8);
FIELD(fea_elasticity_desc, material_user, 40, 8);
FIELD(fea_elasticity_desc, lambda, 48, 8);
FIELD(fea_elasticity_desc, mu, 56, 8);
FIELD(fea_elasticity_desc, model, 64, 4);
FIELD(fea_elasticity_desc, body_force, 72, 8);
FIELD(fea_elasticity_desc, body_force_user, 80, 8);
FIELD(fea_elasticity_desc, displacement, 88, 8);
FIELD(fea_elasticity_desc, displacement_user, 96, 8);
FIELD(fea_elasticity_desc, quad_points, 104, 4);
FIELD(fea_elasticity_desc, sides, 112, 288);
FIELD(fea_elasticity_desc, parts, 400, 8);
FIELD(fea_elasticity_desc, num_parts, 408, 4);
FIELD(fea_elasticity_desc, C_fn, 416, 8);

/* fea_elastic_part */
SIZE(fea_elastic_part, 64);
FIELD(fea_elastic_part, physical_tag, 0, 4);
FIELD(fea_elastic_part, name, 8, 8);
FIELD(fea_elastic_part, bc, 16, 48);

/* fea_problem_desc */
SIZE(fea_problem_desc, 336);
FIELD(fea_problem_desc, size, 0, 8);
FIELD(fea_problem_desc, sigma, 8, 8);
FIELD(fea_problem_desc, sigma_fn, 16, 8);
FIELD(fea_problem_desc, sigma_user, 24, 8);
FIELD(fea_problem_desc, source, 32, 8);
FIELD(fea_problem_desc, source_user, 40, 8);
FIELD(fea_problem_desc, dirichlet, 48, 8);
FIELD(fea_problem_desc, dirichlet_user, 56, 8);
FIELD(fea_problem_desc, quad_points, 64, 4);
FIELD(fea_problem_desc, reaction, 72, 8);
FIELD(fea_problem_desc, reaction_fn, 80, 8);
FIELD(fea_problem_desc, reaction_user, 88, 8);
FIELD(fea_problem_desc, sides, 96, 192);
FIELD(fea_problem_desc, sigma_tensor, 288, 8);
FIELD(fea_problem_desc, sigma_tensor_user, 296, 8);
FIELD(fea_problem_desc, element_form, 304, 8);
FIELD(fea_problem_desc, element_form_user, 312, 8);
FIELD(fea_problem_desc, parts, 320, 8);
FIELD(fea_problem_desc, num_parts, 328, 4);

/* fea_assembly_desc */
SIZE(fea_assembly_desc, 40);
FIELD(fea_assembly_desc, size, 0, 8);
FIELD(fea_assembly_desc, strategy, 8, 4);
FIELD(fea_assembly_desc, threads, 12, 4);
FIELD(fea_assembly_desc, lock_stripe, 16, 4);
FIELD(fea_assembly_desc, spin, 20, 4);
FIELD(fea_assembly_desc, tsx_batch, 24, 4);
FIELD(fea_assembly_desc, backoff, 28, 4);
FIELD(fea_assembly_desc, tsx_retries, 32, 4);

/* fea_assembly_stats */
SIZE(fea_assembly_stats, 128);
FIELD(fea_assembly_stats, size, 0, 8);
FIELD(fea_assembly_stats, strategy_run, 8, 4);
FIELD(fea_assembly_stats, threads, 12, 4);
FIELD(fea_assembly_stats, time_s, 16, 8);
FIELD(fea_assembly_stats, updates_per_s, 24, 8);
FIELD(fea_assembly_stats, updates, 32, 8);
FIELD(fea_assembly_stats, retries, 40, 8);
FIELD(fea_assembly_stats, aborts_conflict, 48, 8);
FIELD(fea_assembly_stats, aborts_capacity, 56, 8);
FIELD(fea_assembly_stats, aborts_explicit, 64, 8);
FIELD(fea_assembly_stats, aborts_other, 72, 8);
FIELD(fea_assembly_stats, tx_started, 80, 8);
FIELD(fea_assembly_stats, tx_committed, 88, 8);
FIELD(fea_assembly_stats, tx_fallback, 96, 8);
FIELD(fea_assembly_stats, lock_contended, 104, 8);
FIELD(fea_assembly_stats, colors, 112, 4);
FIELD(fea_assembly_stats, elements_recomputed, 120, 8);

/* fea_cost_query */
SIZE(fea_cost_query, 48);
FIELD(fea_cost_query, size, 0, 8);
FIELD(fea_cost_query, dim, 8, 4);
FIELD(fea_cost_query, p, 12, 4);
FIELD(fea_cost_query, n, 16, 8);
FIELD(fea_cost_query, nproc, 24, 4);
FIELD(fea_cost_query, sides, 32, 8);
FIELD(fea_cost_query, num_components, 40, 4);

/* fea_cost */
SIZE(fea_cost, 48);
FIELD(fea_cost, size, 0, 8);
FIELD(fea_cost, flops, 8, 8);
FIELD(fea_cost, critical_path_flops, 16, 8);
FIELD(fea_cost, memory_bytes, 24, 8);
FIELD(fea_cost, num_levels, 32, 4);
FIELD(fea_cost, root_front, 40, 8);

/* fea_operator_desc */
SIZE(fea_operator_desc, 24);
FIELD(fea_operator_desc, size, 0, 8);
FIELD(fea_operator_desc, kind, 8, 4);
FIELD(fea_operator_desc, strategy, 12, 4);
FIELD(fea_operator_desc, geometry_terms, 16, 4);

/* fea_operator_info */
SIZE(fea_operator_info, 152);
FIELD(fea_operator_info, size, 0, 8);
FIELD(fea_operator_info, kind_run, 8, 4);
FIELD(fea_operator_info, strategy_run, 12, 4);
FIELD(fea_operator_info, rows, 16, 8);
FIELD(fea_operator_info, memory_bytes, 24, 8);
FIELD(fea_operator_info, setup_s, 32, 8);
FIELD(fea_operator_info, kernel, 40, 96);
FIELD(fea_operator_info, flops_per_apply, 136, 8);
FIELD(fea_operator_info, bytes_per_apply, 144, 8);

/* fea_cg_desc */
SIZE(fea_cg_desc, 56);
FIELD(fea_cg_desc, size, 0, 8);
FIELD(fea_cg_desc, rtol, 8, 8);
FIELD(fea_cg_desc, atol, 16, 8);
FIELD(fea_cg_desc, max_iterations, 24, 8);
FIELD(fea_cg_desc, jacobi, 32, 4);
FIELD(fea_cg_desc, history_capacity, 40, 8);
FIELD(fea_cg_desc, history, 48, 8);

/* fea_cg_stats */
SIZE(fea_cg_stats, 56);
FIELD(fea_cg_stats, size, 0, 8);
FIELD(fea_cg_stats, iterations, 8, 8);
FIELD(fea_cg_stats, initial_residual, 16, 8);
FIELD(fea_cg_stats, final_residual, 24, 8);
FIELD(fea_cg_stats, converged, 32, 4);
FIELD(fea_cg_stats, solve_s, 40, 8);
FIELD(fea_cg_stats, apply_s, 48, 8);

/* fea_solver_desc */
SIZE(fea_solver_desc, 32);
FIELD(fea_solver_desc, size, 0, 8);
FIELD(fea_solver_desc, merge, 8, 4);
FIELD(fea_solver_desc, keep_boundary, 12, 4);
FIELD(fea_solver_desc, memory_limit_bytes, 16, 8);
FIELD(fea_solver_desc, check_residual, 24, 4);
FIELD(fea_solver_desc, estimate_condition, 28, 4);

/* fea_solver_stats */
SIZE(fea_solver_stats, 192);
FIELD(fea_solver_stats, size, 0, 8);
FIELD(fea_solver_stats, num_levels, 8, 4);
FIELD(fea_solver_stats, num_nodes, 16, 8);
FIELD(fea_solver_stats, max_front, 24, 8);
FIELD(fea_solver_stats, flops, 32, 8);
FIELD(fea_solver_stats, critical_path_flops, 40, 8);
FIELD(fea_solver_stats, factor_bytes, 48, 8);
FIELD(fea_solver_stats, peak_bytes, 56, 8);
FIELD(fea_solver_stats, integrate_s, 64, 8);
FIELD(fea_solver_stats, factor_s, 72, 8);
FIELD(fea_solver_stats, root_s, 80, 8);
FIELD(fea_solver_stats, forward_s, 88, 8);
FIELD(fea_solver_stats, backward_s, 96, 8);
FIELD(fea_solver_stats, threads, 104, 4);
FIELD(fea_solver_stats, device_bytes, 112, 8);
FIELD(fea_solver_stats, transfer_s, 120, 8);
FIELD(fea_solver_stats, pivot_min, 128, 8);
FIELD(fea_solver_stats, pivot_max, 136, 8);
FIELD(fea_solver_stats, pivot_ratio, 144, 8);
FIELD(fea_solver_stats, pivot_min_node, 152, 8);
FIELD(fea_solver_stats, relative_residual, 160, 8);
FIELD(fea_solver_stats, backward_error, 168, 8);
FIELD(fea_solver_stats, condition_estimate, 176, 8);
FIELD(fea_solver_stats, ill_conditioned, 184, 4);

/* fea_solver_level */
SIZE(fea_solver_level, 64);
FIELD(fea_solver_level, size, 0, 8);
FIELD(fea_solver_level, nodes, 8, 8);
FIELD(fea_solver_level, q_min, 16, 8);
FIELD(fea_solver_level, q_max, 24, 8);
FIELD(fea_solver_level, r_min, 32, 8);
FIELD(fea_solver_level, r_max, 40, 8);
FIELD(fea_solver_level, flops, 48, 8);
FIELD(fea_solver_level, factor_s, 56, 8);

/* fea_solver_node */
SIZE(fea_solver_node, 88);
FIELD(fea_solver_node, size, 0, 8);
FIELD(fea_solver_node, level, 8, 4);
FIELD(fea_solver_node, parent, 16, 8);
FIELD(fea_solver_node, box_lo, 24, 24);
FIELD(fea_solver_node, box_hi, 48, 24);
FIELD(fea_solver_node, q, 72, 8);
FIELD(fea_solver_node, r, 80, 8);

/* fea_prehandled_desc */
SIZE(fea_prehandled_desc, 56);
FIELD(fea_prehandled_desc, size, 0, 8);
FIELD(fea_prehandled_desc, coarse_cells, 8, 8);
FIELD(fea_prehandled_desc, precision, 16, 4);
FIELD(fea_prehandled_desc, refine, 20, 4);
FIELD(fea_prehandled_desc, refine_rtol, 24, 8);
FIELD(fea_prehandled_desc, refine_max_iterations, 32, 4);
FIELD(fea_prehandled_desc, rhs_scaling, 36, 4);
FIELD(fea_prehandled_desc, memory_limit_bytes, 40, 8);
FIELD(fea_prehandled_desc, tf32, 48, 4);

/* fea_prehandled_stats */
SIZE(fea_prehandled_stats, 152);
FIELD(fea_prehandled_stats, size, 0, 8);
FIELD(fea_prehandled_stats, n, 8, 8);
FIELD(fea_prehandled_stats, n0, 16, 8);
FIELD(fea_prehandled_stats, num_c, 24, 8);
FIELD(fea_prehandled_stats, num_e, 32, 8);
FIELD(fea_prehandled_stats, num_i, 40, 8);
FIELD(fea_prehandled_stats, num_cells, 48, 8);
FIELD(fea_prehandled_stats, block, 56, 8);
FIELD(fea_prehandled_stats, precision, 64, 4);
FIELD(fea_prehandled_stats, dense_bytes, 72, 8);
FIELD(fea_prehandled_stats, flops_per_rhs, 80, 8);
FIELD(fea_prehandled_stats, model_flops_per_rhs, 88, 8);
FIELD(fea_prehandled_stats, setup_s, 96, 8);
FIELD(fea_prehandled_stats, solve_s, 104, 8);
FIELD(fea_prehandled_stats, transform_s, 112, 8);
FIELD(fea_prehandled_stats, dense_s, 120, 8);
FIELD(fea_prehandled_stats, refine_iterations, 128, 4);
FIELD(fea_prehandled_stats, relative_residual, 136, 8);
FIELD(fea_prehandled_stats, device_bytes, 144, 8);

/* fea_multigrid_desc */
SIZE(fea_multigrid_desc, 96);
FIELD(fea_multigrid_desc, size, 0, 8);
FIELD(fea_multigrid_desc, cycle, 8, 4);
FIELD(fea_multigrid_desc, smoother, 12, 4);
FIELD(fea_multigrid_desc, omega, 16, 8);
FIELD(fea_multigrid_desc, jacobi, 24, 4);
FIELD(fea_multigrid_desc, pre_smooth, 28, 4);
FIELD(fea_multigrid_desc, post_smooth, 32, 4);
FIELD(fea_multigrid_desc, chebyshev_range, 40, 8);
FIELD(fea_multigrid_desc, operator_kind, 48, 4);
FIELD(fea_multigrid_desc, strategy, 52, 4);
FIELD(fea_multigrid_desc, krylov, 56, 4);
FIELD(fea_multigrid_desc, rtol, 64, 8);
FIELD(fea_multigrid_desc, atol, 72, 8);
FIELD(fea_multigrid_desc, max_iterations, 80, 8);
FIELD(fea_multigrid_desc, coarsest_cells, 88, 8);

/* fea_multigrid_stats */
SIZE(fea_multigrid_stats, 128);
FIELD(fea_multigrid_stats, size, 0, 8);
FIELD(fea_multigrid_stats, num_levels, 8, 4);
FIELD(fea_multigrid_stats, fine_dofs, 16, 8);
FIELD(fea_multigrid_stats, coarse_dofs, 24, 8);
FIELD(fea_multigrid_stats, iterations, 32, 8);
FIELD(fea_multigrid_stats, converged, 40, 4);
FIELD(fea_multigrid_stats, initial_residual, 48, 8);
FIELD(fea_multigrid_stats, final_residual, 56, 8);
FIELD(fea_multigrid_stats, convergence_factor, 64, 8);
FIELD(fea_multigrid_stats, lambda_max, 72, 8);
FIELD(fea_multigrid_stats, setup_s, 80, 8);
FIELD(fea_multigrid_stats, solve_s, 88, 8);
FIELD(fea_multigrid_stats, memory_bytes, 96, 8);
FIELD(fea_multigrid_stats, smoother, 104, 4);
FIELD(fea_multigrid_stats, pre_smooth, 108, 4);
FIELD(fea_multigrid_stats, post_smooth, 112, 4);
FIELD(fea_multigrid_stats, krylov, 116, 4);
FIELD(fea_multigrid_stats, operator_kind, 120, 4);
FIELD(fea_multigrid_stats, stencil_levels, 124, 4);

/* fea_multipatch_desc */
SIZE(fea_multipatch_desc, 16);
FIELD(fea_multipatch_desc, size, 0, 8);
FIELD(fea_multipatch_desc, tolerance, 8, 8);

/* fea_multipatch_info */
SIZE(fea_multipatch_info, 32);
FIELD(fea_multipatch_info, size, 0, 8);
FIELD(fea_multipatch_info, dim, 8, 4);
FIELD(fea_multipatch_info, num_patches, 12, 4);
FIELD(fea_multipatch_info, num_interfaces, 16, 4);
FIELD(fea_multipatch_info, num_boundary_sides, 20, 4);
FIELD(fea_multipatch_info, num_dofs, 24, 8);

/* fea_multipatch_interface */
SIZE(fea_multipatch_interface, 48);
FIELD(fea_multipatch_interface, size, 0, 8);
FIELD(fea_multipatch_interface, patch, 8, 8);
FIELD(fea_multipatch_interface, side, 16, 8);
FIELD(fea_multipatch_interface, flip, 24, 8);
FIELD(fea_multipatch_interface, swap, 32, 4);
FIELD(fea_multipatch_interface, num_dofs, 40, 8);

/* fea_multipatch_bc (no size field: an array element) */
SIZE(fea_multipatch_bc, 40);
FIELD(fea_multipatch_bc, patch, 0, 4);
FIELD(fea_multipatch_bc, side, 4, 4);
FIELD(fea_multipatch_bc, bc, 8, 32);

/* fea_multipatch_elastic_bc (no size field: an array element) */
SIZE(fea_multipatch_elastic_bc, 56);
FIELD(fea_multipatch_elastic_bc, patch, 0, 4);
FIELD(fea_multipatch_elastic_bc, side, 4, 4);
FIELD(fea_multipatch_elastic_bc, bc, 8, 48);

/* fea_multipatch_stats */
SIZE(fea_multipatch_stats, 104);
FIELD(fea_multipatch_stats, size, 0, 8);
FIELD(fea_multipatch_stats, num_patches, 8, 4);
FIELD(fea_multipatch_stats, interface_dofs, 16, 8);
FIELD(fea_multipatch_stats, interior_dofs, 24, 8);
FIELD(fea_multipatch_stats, local_s, 32, 8);
FIELD(fea_multipatch_stats, interface_s, 40, 8);
FIELD(fea_multipatch_stats, solve_s, 48, 8);
FIELD(fea_multipatch_stats, patch_bytes, 56, 8);
FIELD(fea_multipatch_stats, interface_bytes, 64, 8);
FIELD(fea_multipatch_stats, pivot_min, 72, 8);
FIELD(fea_multipatch_stats, pivot_max, 80, 8);
FIELD(fea_multipatch_stats, pivot_ratio, 88, 8);
FIELD(fea_multipatch_stats, ill_conditioned, 96, 4);

#define INIT_SIZE(type, init)                                                 \
  do {                                                                        \
    type v_ = init;                                                           \
    cr_expect_eq(v_.size, sizeof(type), #init " sets .size to %zu", v_.size); \
  } while (0)

Test(layout, init_macros_set_size) {
  INIT_SIZE(fea_context_info, FEA_CONTEXT_INFO_INIT);
  INIT_SIZE(fea_backend_info, FEA_BACKEND_INFO_INIT);
  INIT_SIZE(fea_mesh_desc, FEA_MESH_DESC_INIT);
  INIT_SIZE(fea_bspline_desc, FEA_BSPLINE_DESC_INIT);
  INIT_SIZE(fea_geometry_desc, FEA_GEOMETRY_DESC_INIT);
  INIT_SIZE(fea_geometry_interface, FEA_GEOMETRY_INTERFACE_INIT);
  INIT_SIZE(fea_space_info, FEA_SPACE_INFO_INIT);
  INIT_SIZE(fea_problem_desc, FEA_PROBLEM_DESC_INIT);
  INIT_SIZE(fea_elasticity_desc, FEA_ELASTICITY_DESC_INIT);
  INIT_SIZE(fea_assembly_desc, FEA_ASSEMBLY_DESC_INIT);
  INIT_SIZE(fea_assembly_stats, FEA_ASSEMBLY_STATS_INIT);
  INIT_SIZE(fea_cost_query, FEA_COST_QUERY_INIT);
  INIT_SIZE(fea_cost, FEA_COST_INIT);
  INIT_SIZE(fea_operator_desc, FEA_OPERATOR_DESC_INIT);
  INIT_SIZE(fea_operator_info, FEA_OPERATOR_INFO_INIT);
  INIT_SIZE(fea_cg_desc, FEA_CG_DESC_INIT);
  INIT_SIZE(fea_cg_stats, FEA_CG_STATS_INIT);
  INIT_SIZE(fea_solver_desc, FEA_SOLVER_DESC_INIT);
  INIT_SIZE(fea_solver_stats, FEA_SOLVER_STATS_INIT);
  INIT_SIZE(fea_solver_level, FEA_SOLVER_LEVEL_INIT);
  INIT_SIZE(fea_solver_node, FEA_SOLVER_NODE_INIT);
  INIT_SIZE(fea_prehandled_desc, FEA_PREHANDLED_DESC_INIT);
  INIT_SIZE(fea_prehandled_stats, FEA_PREHANDLED_STATS_INIT);
  INIT_SIZE(fea_multigrid_desc, FEA_MULTIGRID_DESC_INIT);
  INIT_SIZE(fea_multigrid_stats, FEA_MULTIGRID_STATS_INIT);
  INIT_SIZE(fea_multipatch_desc, FEA_MULTIPATCH_DESC_INIT);
  INIT_SIZE(fea_multipatch_info, FEA_MULTIPATCH_INFO_INIT);
  INIT_SIZE(fea_multipatch_interface, FEA_MULTIPATCH_INTERFACE_INIT);
  INIT_SIZE(fea_multipatch_stats, FEA_MULTIPATCH_STATS_INIT);
}
