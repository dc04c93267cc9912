/* hello: the smallest libfeaccel program. Lists the backends, opens the best
 * one (or the one named on the command line) and takes a dot product.
 *
 *   cc hello.c $(pkg-config --cflags --libs feaccel) -o hello && ./hello /cpu/threads */
#include <stdio.h>

#include <feaccel.h>

#define TRY(call)                                                          \
  do {                                                                     \
    fea_status s_ = (call);                                                \
    if (s_ != FEA_SUCCESS) {                                               \
      fprintf(stderr, "%s failed: %s: %s\n", #call, fea_status_string(s_), \
              fea_context_last_error(ctx));                                \
      return 1;                                                            \
    }                                                                      \
  } while (0)

int main(int argc, char **argv) {
  fea_context *ctx = NULL;
  printf("libfeaccel %s (headers %s)\n", fea_version_string(), FEA_VERSION_STRING);

  fea_backend_info list[8];
  for (int i = 0; i < 8; i++) list[i] = (fea_backend_info)FEA_BACKEND_INFO_INIT;
  size_t count = 0;
  TRY(fea_backend_list(list, 8, &count));
  for (size_t i = 0; i < count && i < 8; i++)
    printf("  %-13s %s%s\n", list[i].prefix,
           list[i].usable ? "usable" : "not usable: ", list[i].usable ? "" : list[i].reason);

  TRY(fea_context_create(argc > 1 ? argv[1] : NULL, &ctx));
  fea_context_info info = FEA_CONTEXT_INFO_INIT;
  TRY(fea_context_get_info(ctx, &info));
  printf("running on %s with %d thread(s)%s%s\n", info.backend, info.num_threads,
         info.device_name[0] ? ", GPU " : "", info.device_name);
  printf("machine: %s, %d cores, %d hardware threads, %d NUMA node(s)\n", info.cpu_model,
         info.num_cores, info.num_pus, info.num_numa_nodes);
  printf("BLAS: %s\n", info.blas);
  if (info.blas_slow)
    printf("BLAS kernels %s (%s) below this CPU (%s): %s\n", info.blas_kernels, info.blas_isa,
           info.cpu_isa, info.blas_advice);

  enum { N = 1000 };
  double x[N];
  for (int i = 0; i < N; i++) x[i] = i + 1;
  fea_vector *v = NULL;
  TRY(fea_vector_create(ctx, N, FEA_F64, &v));
  TRY(fea_vector_write(v, N, FEA_F64, x));
  double dot = 0;
  TRY(fea_vector_dot(v, v, &dot));
  /* sum of squares 1..N = N(N+1)(2N+1)/6 */
  printf("x.x = %.0f (expected %.0f)\n", dot, N * (N + 1.0) * (2.0 * N + 1) / 6);
  TRY(fea_vector_destroy(&v));
  TRY(fea_context_destroy(&ctx));
  return dot == N * (N + 1.0) * (2.0 * N + 1) / 6 ? 0 : 1;
}
