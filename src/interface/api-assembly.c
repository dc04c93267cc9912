/* Concurrent assembly API: argument checks and the options, then the
 * drivers of src/assembly/assemble.c. */
#include "assembly/assemble.h"
#include "assembly/conc.h"
#include "base/context.h"
#include "internal/error.h"
#include "disc/pattern.h"
#include "base/size-checks.h"
#include "base/struct-copy.h"

#define MAX_THREADS 1024

fea_status fea_tsx_available(int *available, char *reason, size_t len) {
  FEA_ENTRY();
  FEA_CHECK_NULL(available, NULL);
  char buf[256];
  *available = fea_tsx_cpu_usable(buf, sizeof buf);
  if (reason && len > 0) {
    strncpy(reason, buf, len - 1);
    reason[len - 1] = '\0';
  }
  return FEA_SUCCESS;
}

fea_status fea_matrix_create_pattern(const fea_problem *problem, fea_matrix **A) {
  FEA_ENTRY();
  if (A) *A = NULL;
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(A, problem->ctx);
  return fea_pattern_matrix(problem, A);
}

/* The caller's options checked into a run configuration. */
static fea_status read_desc(const fea_problem *pb, const fea_assembly_desc *user,
                            fea_update_strategy *strategy, fea_conc_config *cfg) {
  fea_assembly_desc d = FEA_ASSEMBLY_DESC_INIT;
  FEA_CALL(fea_struct_copy_in(pb->ctx, &d, user, "desc", &fea_struct_assembly_desc));
  FEA_CHECK(fea_update_strategy_name(d.strategy), pb->ctx, FEA_ERR_INVALID_ARG,
            "unknown update strategy %d (valid: 0..%d)", (int)d.strategy,
            (int)FEA_UPDATE_PRIVATE_COPIES);
  FEA_CHECK(d.threads >= 0 && d.threads <= MAX_THREADS, pb->ctx, FEA_ERR_INVALID_ARG,
            "thread count %d is outside [1, %d] (0: the context's)", d.threads, MAX_THREADS);
  FEA_CHECK(d.lock_stripe >= 1, pb->ctx, FEA_ERR_INVALID_ARG,
            "lock_stripe %d: a lock guards at least 1 entry", d.lock_stripe);
  FEA_CHECK(d.tsx_batch >= 1 && d.tsx_batch <= 64, pb->ctx, FEA_ERR_INVALID_ARG,
            "tsx_batch %d is outside [1, 64]", d.tsx_batch);
  FEA_CHECK(d.tsx_retries >= 1 && d.tsx_retries <= 64, pb->ctx, FEA_ERR_INVALID_ARG,
            "tsx_retries %d is outside [1, 64]", d.tsx_retries);
  FEA_CHECK(d.spin == 0 || d.spin == 1, pb->ctx, FEA_ERR_INVALID_ARG, "spin is %d, not 0 or 1",
            d.spin);
  FEA_CHECK(d.backoff == 0 || d.backoff == 1, pb->ctx, FEA_ERR_INVALID_ARG,
            "backoff is %d, not 0 or 1", d.backoff);
  fea_conc_config_init(cfg, pb->ctx, &d);
  *strategy = d.strategy;
  return FEA_SUCCESS;
}

fea_status fea_problem_assemble(const fea_problem *problem, fea_matrix *A, double *b,
                                const fea_assembly_desc *desc, fea_assembly_stats *stats) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CHECK_NULL(A, problem->ctx);
  FEA_CALL(fea_space_require_scalar(problem->space, "fea_problem_assemble() (concurrent)"));
  fea_update_strategy s;
  fea_conc_config cfg;
  FEA_CALL(read_desc(problem, desc, &s, &cfg));
  return fea_conc_assemble_csr(problem, A, b, s, &cfg, stats);
}

fea_status fea_problem_assemble_dense(const fea_problem *problem, double *A_dense, fea_index ld,
                                      double *b, const fea_assembly_desc *desc,
                                      fea_assembly_stats *stats) {
  FEA_ENTRY();
  FEA_CHECK_NULL(problem, NULL);
  FEA_CALL(fea_space_require_scalar(problem->space, "fea_problem_assemble_dense()"));
  /* The scratch holds the matrix, num_free rows ld apart, and b after it. */
  if (ld >= 1)
    FEA_CALL(fea_size_check_span(problem->ctx, "the dense system", "num_free * ld + num_free",
                                 (uint64_t)problem->num_free, (uint64_t)ld,
                                 (uint64_t)problem->num_free, sizeof *A_dense, NULL));
  fea_update_strategy s;
  fea_conc_config cfg;
  FEA_CALL(read_desc(problem, desc, &s, &cfg));
  return fea_conc_assemble_dense(problem, A_dense, ld, b, s, &cfg, stats);
}
