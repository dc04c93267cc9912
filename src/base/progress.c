/* Progress reports (progress.h): which reports reach the user's callback,
 * and the FEA_ERR_CANCELLED its nonzero return turns into. The library
 * rate-limits, not the call sites, so that a site reports at each natural
 * step of its work and the callback still sees at most one call per the
 * context's interval within a phase. */
#include "progress.h"

#include <math.h>
#include <string.h>

#include "clock.h"
#include "context.h"
#include "internal/error.h"

fea_status fea_progress(fea_context *ctx, const char *phase, double fraction) {
  if (!ctx || !ctx->progress_fn) return FEA_SUCCESS;
  if (!(fraction >= 0.0)) fraction = 0.0; /* NaN too */
  if (fraction > 1.0) fraction = 1.0;
  const int same = ctx->progress_phase &&
                   (ctx->progress_phase == phase || strcmp(ctx->progress_phase, phase) == 0);
  const double now = fea_now();
  int call = 1; /* a phase starts (again) */
  if (same && !(fraction == 0.0 && ctx->progress_fraction > 0.0)) {
    if (fraction < ctx->progress_fraction) fraction = ctx->progress_fraction; /* never back */
    call = (fraction == 1.0 && ctx->progress_fraction < 1.0) ||
           now - ctx->progress_time >= ctx->progress_interval;
  }
  if (!call) return FEA_SUCCESS;
  ctx->progress_phase = phase;
  ctx->progress_fraction = fraction;
  ctx->progress_time = now;
  if (ctx->progress_fn(ctx->progress_user, phase, fraction) == 0) return FEA_SUCCESS;
  /* The next report of this phase (a later call) starts it afresh. */
  ctx->progress_phase = NULL;
  return FEA_ERROR(ctx, FEA_ERR_CANCELLED,
                   "cancelled by the progress callback during phase '%s' at %.0f %%", phase,
                   100.0 * fraction);
}

fea_status fea_progress_tick(fea_context *ctx) {
  if (!ctx || !ctx->progress_fn || !ctx->progress_phase) return FEA_SUCCESS;
  return fea_progress(ctx, ctx->progress_phase, ctx->progress_fraction);
}

fea_status fea_progress_of(fea_context *ctx, const char *phase, double done, double total) {
  if (!ctx || !ctx->progress_fn) return FEA_SUCCESS;
  return fea_progress(ctx, phase, total > 0 ? done / total : 1.0);
}

void fea_progress_follow(fea_context *helper, const fea_context *ctx) {
  if (helper == ctx) return;
  if (helper->progress_fn != ctx->progress_fn || helper->progress_user != ctx->progress_user)
    helper->progress_phase = NULL;
  helper->progress_fn = ctx->progress_fn;
  helper->progress_user = ctx->progress_user;
  helper->progress_interval = ctx->progress_interval;
}
