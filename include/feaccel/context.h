/**
 * @file context.h
 * @brief Library context, backend selection, threads, errors and logging.
 *
 * A context binds one backend, chosen by a resource string:
 *
 * | resource       | what runs                                               |
 * |----------------|---------------------------------------------------------|
 * | `/cpu/ref`     | serial reference code, single-threaded BLAS             |
 * | `/cpu/threads` | OpenMP threads, topology from hwloc, optional binding   |
 * | `/gpu/cuda`    | one NVIDIA GPU through CUDA, cuBLAS, cuSPARSE, cuSOLVER |
 *
 * A resource may name a family (`/cpu`, `/gpu`): the best usable backend in
 * it is taken. Options follow a colon as comma-separated `key=value` pairs:
 * `/cpu/threads:threads=4,bind=core`, `/gpu/cuda:device=1`. Nothing is
 * trimmed: a space, an empty option or a trailing comma is refused
 * (docs/backends.md, "Resource strings", has the grammar).
 *
 * A context is not thread-safe: use one context per thread, or serialize.
 *
 * @par Errors common to this header
 * Every function here that returns fea_status returns FEA_SUCCESS when it did
 * its job. Except fea_context_destroy(), each also returns
 * FEA_ERR_INVALID_ARG when the context or a pointer it must write through is
 * NULL; the message then goes to fea_context_last_error(NULL) when there is
 * no context to hold it. The other codes are listed under each function.
 */
#ifndef FEACCEL_CONTEXT_H
#define FEACCEL_CONTEXT_H

#include <feaccel/export.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** Severity of a message handed to the log callback. @since 0.1.0 */
typedef enum fea_log_level {
  FEA_LOG_ERROR = 0, /**< a call failed; the same text as fea_context_last_error() */
  FEA_LOG_WARN = 1,  /**< something was worked around */
  FEA_LOG_INFO = 2,  /**< what was chosen: backend, device, threads, binding */
  FEA_LOG_DEBUG = 3  /**< details for maintainers */
} fea_log_level;

/**
 * @brief Receives the library's messages; the library itself never prints.
 * @param msg valid only during the call.
 * @since 0.1.0
 */
typedef void (*fea_log_fn)(void *user, fea_log_level level, const char *msg);

/**
 * @brief Create a context on the backend named by @p resource.
 *
 * @param resource a resource string (see the file description), or NULL for
 *        the `FEACCEL_BACKEND` environment variable, else the best usable
 *        backend (highest priority whose probe and init succeed).
 * @param[out] out the new context; set to NULL on failure.
 * @retval FEA_ERR_INVALID_ARG for a malformed or unknown resource, an option
 *         the backend does not have, set twice or out of its range
 *         (`threads` 1..1024, `bind` core or none, `device` an ordinal
 *         of a present GPU), or a NULL @p out; also for an environment
 *         variable the library reads (`FEACCEL_BACKEND` with a NULL
 *         resource, `FEACCEL_THREADS_ADAPT`, `OMP_NUM_THREADS`,
 *         `FEACCEL_TSX_FORCE_ABORT`: docs/backends.md) whose value is
 *         malformed, whatever the backend, naming the variable and the value.
 *         Option values are checked before a device is looked for, so a bad
 *         one is this code on a machine without the device too
 * @retval FEA_ERR_UNSUPPORTED when the named backend was not built, or no
 *         backend of the named family (or none at all, for NULL) was built;
 *         also `/gpu/cuda` in a program linked to libfeaccel.a, which its
 *         module (it needs libfeaccel.so) cannot serve
 * @retval FEA_ERR_DEVICE when the backend was built but its probe or device
 *         initialization fails here (no GPU, a CUDA call failed)
 * @retval FEA_ERR_BACKEND when the backend was built for another backend ABI,
 *         or hwloc cannot load the topology or bind the threads
 * @retval FEA_ERR_OUT_OF_MEMORY when the context's state cannot be allocated
 * For a family or NULL, backends are tried by priority, the next one only
 * when a backend cannot run here or lacks an option's key (a bad value or
 * environment variable is returned at once: no lower backend silently stands
 * in), and the first failure is the one returned. On failure
 * fea_context_last_error(NULL) says why.
 * @since 0.1.0
 */
FEA_API fea_status fea_context_create(const char *resource, fea_context **out);

/**
 * @brief Release the caller's reference; objects created from the context keep
 * it alive until they are destroyed. Accepts NULL and `*ctx == NULL`; sets `*ctx = NULL`.
 * Not marked warn-unused-result: it is called on cleanup paths.
 * @retval FEA_SUCCESS always; it cannot fail.
 * @since 0.1.0
 */
FEA_EXPORT fea_status fea_context_destroy(fea_context **ctx);

/**
 * @brief The last error message of @p ctx, e.g.
 * `"fea_vector_axpy(): length mismatch: x has 10 entries, y has 12 (vector.c:88)"`:
 * the public function that was called, what was wrong with which value, and
 * where in the library's sources the check is.
 *
 * With @p ctx NULL: the last error raised on the calling thread by any call,
 * including calls that have no context (a failed fea_context_create()).
 * Returns "" when there was none. The string lives until the next failing call.
 * @since 0.1.0
 */
FEA_EXPORT const char *fea_context_last_error(const fea_context *ctx);

/**
 * @brief Number of threads the context's CPU work uses (1 on `/cpu/ref`).
 * @retval FEA_ERR_INVALID_ARG for a NULL @p ctx or @p nthreads.
 * @since 0.1.0
 */
FEA_API fea_status fea_context_get_num_threads(const fea_context *ctx, int *nthreads);

/**
 * @brief Set the thread count for CPU work, 1..1024.
 *
 * `/cpu/ref` accepts only 1. On `/cpu/threads` a count above the number of
 * hardware threads is allowed (and logged as a warning) but oversubscribes.
 * @retval FEA_ERR_INVALID_ARG for a count outside 1..1024
 * @retval FEA_ERR_UNSUPPORTED when the backend runs on a fixed thread count
 *         (`/cpu/ref`: 1) and @p nthreads is another
 * @retval FEA_ERR_BACKEND on `/cpu/threads` with `bind=core` when hwloc cannot
 *         load the topology or bind the threads
 * @since 0.1.0
 */
FEA_API fea_status fea_context_set_num_threads(fea_context *ctx, int nthreads);

/**
 * @brief Install a log callback receiving messages up to @p max_level; NULL removes it.
 *
 * The first callback installed in the process that takes FEA_LOG_WARN
 * receives, when the BLAS runs kernels below the CPU's vector ISA
 * (fea_context_info.blas_slow), one warning naming the kernels, the CPU's ISA
 * and the fix (fea_context_info.blas_advice). The first callback taking
 * FEA_LOG_WARN installed on a context also receives one warning per
 * environment variable that chose one of its settings in place of the
 * program (`OMP_NUM_THREADS` the thread count of `/cpu/threads` when the
 * resource has no `threads=`, `FEACCEL_THREADS_ADAPT` its `adapt=`), naming
 * the variable, its value and the setting.
 * @retval FEA_ERR_INVALID_ARG for a level outside FEA_LOG_ERROR..FEA_LOG_DEBUG.
 * @since 0.1.0
 */
FEA_API fea_status fea_context_set_log_callback(fea_context *ctx, fea_log_level max_level,
                                                fea_log_fn fn, void *user);

/**
 * @brief Receives the progress of long work; a nonzero return cancels it.
 *
 * @param phase what runs, a fixed name such as "multifrontal factorization"
 *        or "prehandled: inverting Pi" (docs/backends.md, "Progress and
 *        cancelling", lists them); valid only during the call.
 * @param fraction how much of the phase is done, in [0, 1]: 0 when the phase
 *        starts, never decreasing within it, 1 when it is complete.
 * @return 0 to go on; any other value stops the running call, which returns
 *         FEA_ERR_CANCELLED with a message naming the phase.
 * @since 0.1.0
 */
typedef int (*fea_progress_fn)(void *user, const char *phase, double fraction);

/**
 * @brief Install a progress callback; NULL removes it.
 *
 * The multifrontal, multigrid and prehandled setups (also the multigrid
 * hierarchy that fea_solver_create_multigrid() builds) and CG report their
 * phases to @p fn, always on the thread that called the library, never on
 * a worker thread and never concurrently. Each phase is reported when it
 * starts (fraction 0) and when it ends (fraction 1); in between the library
 * reports where it stands at least every few hundred milliseconds of work
 * (per tree node, per block, per panel, per CG iteration), and @p fn is
 * called for such a report only when @p interval_s seconds have passed
 * since its previous call. A call the callback cancels returns
 * FEA_ERR_CANCELLED, frees what it allocated, and leaves its objects
 * destroyable and as a failed call of its kind leaves them (a solver is
 * then not set up; a later setup starts afresh).
 *
 * @param interval_s the least time between two calls within a phase, in
 *        seconds, 0 to 60 (0: every report; 0.1 suits a progress bar)
 * @retval FEA_ERR_INVALID_ARG for an @p interval_s outside [0, 60] or not finite.
 * @since 0.1.0
 */
FEA_API fea_status fea_context_set_progress_callback(fea_context *ctx, fea_progress_fn fn,
                                                     void *user, double interval_s);

/**
 * @brief Limit the memory that creates and setups on @p ctx may plan to use.
 *
 * Every create and setup estimates its memory from its description before it
 * allocates anything and refuses with FEA_ERR_OUT_OF_MEMORY, naming both
 * figures, when the estimate exceeds the budget: the least of @p bytes (0:
 * the kernel's MemAvailable), the process's RLIMIT_AS and RLIMIT_DATA minus
 * what it uses of them, and its cgroup memory limits minus their usage. A
 * solver descriptor's own memory_limit_bytes takes precedence over @p bytes.
 *
 * @param bytes the limit in bytes; 0 restores the default (MemAvailable)
 * @retval FEA_ERR_INVALID_ARG for a NULL @p ctx.
 * @since 0.1.0
 */
FEA_API fea_status fea_context_set_memory_limit(fea_context *ctx, uint64_t bytes);

/**
 * @brief The memory budget of the next create or setup on @p ctx, in bytes.
 *
 * The figure fea_context_set_memory_limit() describes, read now (it moves
 * with the process's usage and the machine's MemAvailable).
 * @retval FEA_ERR_INVALID_ARG for a NULL @p ctx or @p bytes.
 * @since 0.1.0
 */
FEA_API fea_status fea_context_get_memory_limit(const fea_context *ctx, uint64_t *bytes);

/** Facts about a context; initialize with FEA_CONTEXT_INFO_INIT so that `.size` is set.
 * @since 0.1.0 */
typedef struct fea_context_info {
  size_t size;                  /**< sizeof(fea_context_info) as compiled by the caller */
  char backend[32];             /**< prefix of the backend that runs, e.g. "/cpu/threads" */
  char resource[128];           /**< the resource string as resolved, with its options */
  int num_threads;              /**< CPU threads used by this context */
  int bound;                    /**< 1 when threads are bound to cores */
  int num_cores;                /**< physical cores (hwloc) */
  int num_pus;                  /**< hardware threads (hwloc) */
  int num_numa_nodes;           /**< NUMA nodes (hwloc) */
  char cpu_model[128];          /**< CPU model name */
  char blas[128];               /**< BLAS library (-Dblas), version, "(kernels: NAME)" */
  char device_name[128];        /**< GPU name, "" on CPU backends */
  int device_id;                /**< CUDA device ordinal, -1 on CPU backends */
  int device_cc;                /**< compute capability as 10*major+minor, 0 on CPU */
  uint64_t device_memory_bytes; /**< total device memory, 0 on CPU backends */
  /** The BLAS's kernel set: OpenBLAS's core name ("Haswell", "Prescott"),
   * BLIS's sub-configuration ("zen3", "generic"); "" when the BLAS does not
   * say (MKL, FlexiBLAS on a backend other than OpenBLAS). @since 0.1.0 */
  char blas_kernels[32];
  /** The vector ISA of those kernels: "sse", "avx", "avx2", "avx512", or
   * "unknown" for a name the library does not know. @since 0.1.0 */
  char blas_isa[16];
  /** The CPU's vector ISA (CPUID, with the OS's consent), the same names;
   * "unknown" off x86. @since 0.1.0 */
  char cpu_isa[16];
  /** 1 when the BLAS runs kernels below the CPU's ISA (SSE or AVX kernels
   * on an AVX2 or AVX-512 CPU): dense products and factorizations run
   * several times slower than they could. AVX2 kernels on an AVX-512 CPU
   * are not counted. 0 otherwise, and when either ISA is unknown.
   * @since 0.1.0 */
  int blas_slow;
  /** The fix when blas_slow is 1, e.g. "set OPENBLAS_CORETYPE=Haswell in the
   * environment before the program starts ..."; "" otherwise. The same text
   * ends the warning the first log callback taking FEA_LOG_WARN receives
   * (once per process). @since 0.1.0 */
  char blas_advice[192];
} fea_context_info;

/** Initializer for fea_context_info. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_CONTEXT_INFO_INIT                                                                      \
  {                                                                                                \
    .size = sizeof(fea_context_info), .backend = "", .resource = "", .num_threads = 0, .bound = 0, \
    .num_cores = 0, .num_pus = 0, .num_numa_nodes = 0, .cpu_model = "", .blas = "",                \
    .device_name = "", .device_id = -1, .device_cc = 0, .device_memory_bytes = 0,                  \
    .blas_kernels = "", .blas_isa = "", .cpu_isa = "", .blas_slow = 0, .blas_advice = ""           \
  }
#else
#define FEA_CONTEXT_INFO_INIT \
  { sizeof(fea_context_info), "", "", 0, 0, 0, 0, 0, "", "", "", -1, 0, 0, "", "", "", 0, "" }
#endif

/**
 * @brief Fill @p info (whose `.size` the caller set) with facts about @p ctx.
 * Fields beyond the caller's `.size` are not written.
 * @retval FEA_ERR_INVALID_ARG for a NULL @p info or an `info->size` outside
 *         the sizes this library accepts
 * @retval FEA_ERR_BACKEND when hwloc could not load the machine topology
 * @since 0.1.0
 */
FEA_API fea_status fea_context_get_info(const fea_context *ctx, fea_context_info *info);

/** One backend as known to this build; initialize with FEA_BACKEND_INFO_INIT. @since 0.1.0 */
typedef struct fea_backend_info {
  size_t size;       /**< sizeof(fea_backend_info) as compiled by the caller */
  char prefix[32];   /**< "/cpu/ref", "/cpu/threads", "/gpu/cuda" */
  unsigned priority; /**< higher wins when the resource is NULL or a family */
  int built;         /**< 1 when compiled into this library */
  int usable;        /**< 1 when its probe succeeds on this machine now */
  char reason[256];  /**< why not built or not usable; "" when usable */
} fea_backend_info;

/** Initializer for fea_backend_info. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_BACKEND_INFO_INIT                                                               \
  {                                                                                         \
    .size = sizeof(fea_backend_info), .prefix = "", .priority = 0, .built = 0, .usable = 0, \
    .reason = ""                                                                            \
  }
#else
#define FEA_BACKEND_INFO_INIT \
  { sizeof(fea_backend_info), "", 0, 0, 0, "" }
#endif

/**
 * @brief List every backend libfeaccel knows, built or not, with whether it is usable.
 *
 * @param infos array of @p capacity entries, each initialized with
 *        FEA_BACKEND_INFO_INIT (the array stride is `infos[0].size`); may be
 *        NULL when @p capacity is 0, to ask only for the count.
 * @param[out] count the number of known backends (may exceed @p capacity;
 *        only the first @p capacity entries are written).
 * @retval FEA_ERR_INVALID_ARG for a NULL @p count, NULL @p infos with
 *         @p capacity > 0, an `infos[0].size` outside the accepted sizes, or
 *         an entry whose `.size` differs from `infos[0].size`; nothing is
 *         written then. No context exists: fea_context_last_error(NULL) says why.
 * @retval FEA_ERR_OUT_OF_MEMORY when @p capacity entries of `infos[0].size`
 *         bytes would span more than one array can (types.h); nothing is written.
 * @since 0.1.0
 */
FEA_API fea_status fea_backend_list(fea_backend_info *infos, size_t capacity, size_t *count);

FEA_END_DECLS

#endif /* FEACCEL_CONTEXT_H */
