/* The prehandled Schur-complement solver kind (fea_solver_create_prehandled):
 * the pipeline of prehandle.h and schur-m1.h behind the solver ops. The
 * interface file checks the problem and the options; this one builds and
 * solves. */
#ifndef FEA_INTERNAL_PREHANDLED_H
#define FEA_INTERNAL_PREHANDLED_H

#include "prehandle.h"
#include "base/solver-object.h"

extern const fea_solver_ops fea_ph_solver_ops;

/* Attach the kind's state to s (created by fea_solver_alloc with
 * fea_ph_solver_ops): desc complete and checked, g the grid of s's problem.
 * A g->macro is taken over (destroyed with the solver, or here on failure). */
fea_status fea_ph_solver_attach(fea_solver *s, const fea_prehandled_desc *desc,
                                const fea_ph_grid *g);

/* Whether problem suits the method (also for set_problem), and its element
 * and cells per direction (src/prehandled/problem-check.c). */
fea_status fea_ph_check_problem(const fea_solver *s, const fea_problem *problem);
fea_status fea_ph_problem_kind(fea_context *ctx, const fea_problem *pb, fea_ph_element *el,
                               fea_index *n);
/* The power-of-two coarsening n0 = n / 2^j, j >= 1, with the fewest FLOPs; 0
 * when n is odd. */
fea_index fea_ph_auto_coarse_cells(fea_ph_element el, fea_index n);

/* Complete stats of s (a prehandled solver). */
void fea_ph_solver_get_stats(const fea_solver *s, fea_prehandled_stats *full);

/* kappa of one of s's matrices by `steps` Lanczos steps (checked: 2..1000,
 * which valid, set up when it needs the setup). */
fea_status fea_ph_condition(fea_solver *s, fea_prehandled_matrix which, int steps, double *kappa);

/* Exact dense FLOPs per right-hand side (docs/prehandled.md, "Choosing h0")
 * (2 |E|^2 + 4 block |I|) for a grid, and the paper's model
 * (Q1: (8 4^-l + 4 4^l) N^1.5, P1: (18 4^-l + 2 4^l) N^1.5, h0 = 2^l sqrt(h)). */
double fea_ph_flops(const fea_ph_grid *g);
double fea_ph_model_flops(const fea_ph_grid *g);

#endif
