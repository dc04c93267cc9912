/* Progress reports of long work to the context's progress callback, and
 * cancelling through its return value (src/base/progress.c). */
#ifndef FEA_INTERNAL_PROGRESS_H
#define FEA_INTERNAL_PROGRESS_H

#include <feaccel/context.h>

#include "internal/private-export.h"

/* Report that `phase` (a string literal: it is kept by pointer) is
 * `fraction` done. Returns FEA_SUCCESS, or FEA_ERR_CANCELLED raised on ctx
 * naming the phase when the callback asks to stop: the caller releases
 * what it holds and returns the status. Without a callback it only checks
 * a pointer, so call sites report as often as their work has natural steps
 * (a node, a block, a panel); the callback is called at a phase's first
 * report, at its fraction 1, at a fraction 0 (the phase starts again), and
 * otherwise when the context's interval has passed since its last call.
 * Fractions are clamped to [0, 1] and never go back within a phase.
 *
 * Call only on the thread that entered the library (in an OpenMP region,
 * thread 0 of the team), never concurrently: the callback runs on the
 * user's thread, and the delivery state lives in the context. */
fea_status fea_progress(fea_context *ctx, const char *phase, double fraction);

/* A report of the current phase at its current fraction: for work that
 * does not know how far its caller's phase is (a dense front inside the
 * tree walk), so that a long piece still reaches the callback (and a
 * cancel) at its steps. Nothing when no phase is running. */
fea_status fea_progress_tick(fea_context *ctx);

/* fea_progress(ctx, phase, done / total); total 0 reads as done. Exported
 * privately for the /gpu/cuda module's level walk. */
FEA_PRIVATE_EXPORT fea_status fea_progress_of(fea_context *ctx, const char *phase, double done,
                                              double total);

/* Make `helper` (a context the library made for ctx's host work) report to
 * ctx's callback, with ctx's interval. */
void fea_progress_follow(fea_context *helper, const fea_context *ctx);

/* The phases' names, one place for the docs (docs/backends.md, "Progress
 * and cancelling") to list. */
#define FEA_PROGRESS_MULTIFRONTAL "multifrontal factorization"
#define FEA_PROGRESS_MG_HIERARCHY "multigrid: hierarchy"
#define FEA_PROGRESS_MG_OPERATORS "multigrid: level operators"
#define FEA_PROGRESS_MG_SMOOTHER "multigrid: smoother"
#define FEA_PROGRESS_MG_COARSE "multigrid: coarse factorization"
#define FEA_PROGRESS_PH_PREPARE "prehandled: preparing"
#define FEA_PROGRESS_PH_BLOCKS "prehandled: blocks"
#define FEA_PROGRESS_PH_SCHUR "prehandled: Schur complement Pi"
#define FEA_PROGRESS_PH_INVERSE "prehandled: inverting Pi"
#define FEA_PROGRESS_PH_ROUND "prehandled: working-precision copies"
#define FEA_PROGRESS_CG "cg"

#endif
