/* /cpu/ref: the serial reference backend. Every other backend is checked
 * against it, and it is the delegate that fills their missing host slots. */
#include "backends/cpu/cpu.h"
#include "internal/error.h"

static fea_status ref_set_num_threads(fea_context *ctx, int nthreads) {
  FEA_CHECK(nthreads == 1, ctx, FEA_ERR_UNSUPPORTED,
            "/cpu/ref is the serial reference and runs on 1 thread, not %d (use /cpu/threads)",
            nthreads);
  return FEA_SUCCESS;
}

const struct fea_backend fea_backend_cpu_ref = {
    .abi = FEA_BACKEND_ABI,
    .prefix = "/cpu/ref",
    .priority = 10,
    .delegate = NULL,
    .mem = FEA_MEM_HOST,
    .options = NULL,
    .probe = NULL, /* always usable */
    .set_num_threads = ref_set_num_threads,
    .vec = &fea_cpu_ref_vec_ops,
    .multifrontal = &fea_cpu_ref_multifrontal_ops,
    .dense = &fea_cpu_ref_dense_ops,
};
