/**
 * @file assembly.h
 * @brief Element-parallel assembly of the reduced Poisson system with a
 * concurrent-update strategy chosen at run time.
 *
 * Threads integrate different elements and add their element matrices into
 * one shared global matrix; entries shared between elements are updated
 * concurrently. How those updates are kept correct is the strategy:
 * serial, mesh coloring, compare-and-swap, striped locks, private row
 * ownership, private copies of the target, or hardware transactions (Intel
 * RTM). See docs/assembly.md.
 *
 * The matrix pattern is built once (fea_matrix_create_pattern) and reused
 * by every assembly into it.
 *
 * @par The problem's callbacks
 * Assembly calls the problem's sigma_fn, sigma_tensor, reaction_fn, source,
 * flux and element_form callbacks from the context's threads, several at
 * once, and each again on every assembly and wherever else the problem's
 * element systems are computed: they must be thread-safe and give the same
 * value for the same point every time (problem.h, "Callbacks: threads and
 * repeated calls").
 *
 * @par Errors common to this header
 * Every function here that returns fea_status returns FEA_SUCCESS when it did
 * its job, and FEA_ERR_INVALID_ARG when the problem, matrix or an output
 * pointer it needs is NULL. The other codes are listed under each function.
 */
#ifndef FEACCEL_ASSEMBLY_H
#define FEACCEL_ASSEMBLY_H

#include <stddef.h>
#include <stdint.h>

#include <feaccel/export.h>
#include <feaccel/matrix.h>
#include <feaccel/problem.h>
#include <feaccel/types.h>

FEA_BEGIN_DECLS

/** How concurrent updates of shared matrix entries are handled. @since 0.1.0 */
typedef enum fea_update_strategy {
  FEA_UPDATE_SERIAL = 0,     /**< one thread, element order: the reference's result bit for bit */
  FEA_UPDATE_COLORING = 1,   /**< colors one after another, elements of a color in parallel */
  FEA_UPDATE_ATOMIC_CAS = 2, /**< compare-and-swap loop on the bits of each double */
  FEA_UPDATE_MUTEX = 3,      /**< striped locks (spin or pthread mutex) */
  FEA_UPDATE_PRIVATE_BUFFERS = 4, /**< row ownership: each thread owns rows and adds only into
                                       them, recomputing the elements its rows share */
  FEA_UPDATE_TSX = 5,             /**< Intel RTM transactions with a fallback lock */
  FEA_UPDATE_AUTO = 6,            /**< the library picks (never TSX) and reports its pick */
  /** The thesis's private buffers: each thread adds into its own copy of the whole target,
   * summed into it at the end (memory: threads - 1 copies). @since 0.1.0 */
  FEA_UPDATE_PRIVATE_COPIES = 7
} fea_update_strategy;

/** Options of an assembly; initialize with FEA_ASSEMBLY_DESC_INIT. @since 0.1.0 */
typedef struct fea_assembly_desc {
  size_t size;                  /**< sizeof(fea_assembly_desc) as compiled by the caller */
  fea_update_strategy strategy; /**< default FEA_UPDATE_AUTO */
  int threads;                  /**< >= 1, or 0 for the context's thread count */
  int lock_stripe;              /**< MUTEX: consecutive target entries per lock, >= 1 (default 8) */
  int spin;        /**< MUTEX: 1 spin locks (atomic_flag), 0 pthread mutexes (default 0) */
  int tsx_batch;   /**< TSX: updates per transaction, 1..64 (default 8) */
  int backoff;     /**< CAS and TSX: 1 randomized exponential backoff after a failure (default 1) */
  int tsx_retries; /**< TSX: transaction attempts before the fallback lock, 1..64 (default 8) */
} fea_assembly_desc;

/** Initializer: AUTO, the context's threads, 8 entries per lock, pthread
 * mutexes, 8 updates per transaction, backoff on, 8 attempts.
 * @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_ASSEMBLY_DESC_INIT                                                    \
  {                                                                               \
    .size = sizeof(fea_assembly_desc), .strategy = FEA_UPDATE_AUTO, .threads = 0, \
    .lock_stripe = 8, .spin = 0, .tsx_batch = 8, .backoff = 1, .tsx_retries = 8   \
  }
#else
#define FEA_ASSEMBLY_DESC_INIT \
  { sizeof(fea_assembly_desc), FEA_UPDATE_AUTO, 0, 8, 0, 8, 1, 8 }
#endif

/** What an assembly did; set .size (FEA_ASSEMBLY_STATS_INIT) before the call. @since 0.1.0 */
typedef struct fea_assembly_stats {
  size_t size;                      /**< sizeof(fea_assembly_stats) as compiled by the caller */
  fea_update_strategy strategy_run; /**< the strategy that ran (AUTO's pick) */
  int threads;                      /**< threads that ran */
  double time_s;                    /**< wall time of the call after the argument checks */
  double updates_per_s;             /**< updates / time_s */
  uint64_t updates;                 /**< matrix and right-hand-side additions made */
  uint64_t retries;                 /**< CAS: failed compare-and-swaps; TSX: repeated attempts */
  uint64_t aborts_conflict;         /**< TSX aborts: another thread touched the data */
  uint64_t aborts_capacity;         /**< TSX aborts: the transaction did not fit the cache */
  uint64_t aborts_explicit;         /**< TSX aborts: _xabort, i.e. the fallback lock was held */
  uint64_t aborts_other;        /**< TSX aborts with no cause bit (interrupts, faults, forced) */
  uint64_t tx_started;          /**< TSX transactions attempted */
  uint64_t tx_committed;        /**< TSX transactions committed */
  uint64_t tx_fallback;         /**< TSX batches applied under the fallback lock */
  uint64_t lock_contended;      /**< MUTEX: acquisitions that found the lock held */
  int colors;                   /**< COLORING: colors processed; else 0 */
  uint64_t elements_recomputed; /**< PRIVATE_BUFFERS: element integrations beyond one per element */
} fea_assembly_stats;

/** Initializer for fea_assembly_stats. @since 0.1.0 */
#if FEA_DESIGNATED_INITIALIZERS
#define FEA_ASSEMBLY_STATS_INIT                                                            \
  {                                                                                        \
    .size = sizeof(fea_assembly_stats), .strategy_run = FEA_UPDATE_SERIAL, .threads = 0,   \
    .time_s = 0.0, .updates_per_s = 0.0, .updates = 0, .retries = 0, .aborts_conflict = 0, \
    .aborts_capacity = 0, .aborts_explicit = 0, .aborts_other = 0, .tx_started = 0,        \
    .tx_committed = 0, .tx_fallback = 0, .lock_contended = 0, .colors = 0,                 \
    .elements_recomputed = 0                                                               \
  }
#else
#define FEA_ASSEMBLY_STATS_INIT \
  { sizeof(fea_assembly_stats), FEA_UPDATE_SERIAL, 0, 0.0, 0.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
#endif

/**
 * @brief The CSR pattern of the reduced system of @p problem, values zero.
 *
 * Rows and columns run over the free DoFs; each row holds the sorted free
 * columns of the elements around it (the reference assembly's pattern).
 * Build it once and assemble into it as often as needed.
 * @retval FEA_ERR_OUT_OF_MEMORY when an allocation fails, or when the
 *         pattern exceeds the memory budget (fea_context_set_memory_limit()):
 *         at once when a lower bound of its entries, from the knots or the
 *         element-DoF table, does (naming the bound and the limit), else
 *         once its rows are counted.
 * @since 0.1.0
 */
FEA_API fea_status fea_matrix_create_pattern(const fea_problem *problem, fea_matrix **A);

/**
 * @brief Assemble the reduced system A u = b of @p problem into @p A's pattern.
 *
 * The values of A are overwritten (not added to). A must have num_free_dofs
 * rows and columns (else FEA_ERR_DIMENSION) and its pattern must hold every
 * coupling of the problem (else FEA_ERR_INVALID_ARG naming the missing entry):
 * a pattern from fea_matrix_create_pattern or fea_problem_assemble_reference
 * of the same problem does. Elements are integrated concurrently: the
 * problem's sigma_fn, sigma_tensor, reaction_fn, source, flux and
 * element_form callbacks are called from several threads at once (for
 * different elements) and must be safe to; each is called at every
 * quadrature point of every element here, again by every other consumer of
 * the problem (problem.h, "Callbacks: threads and repeated calls"), so it
 * must give the same value for the same point on every call.
 *
 * On failure A's values and b are left as they were: the call assembles into
 * scratch storage and installs it only on success.
 * @param b num_free_dofs right-hand-side values (load minus lifting)
 * @param desc options, or NULL for FEA_ASSEMBLY_DESC_INIT
 * @param stats what ran and its counters, or NULL
 * @retval FEA_ERR_INVALID_ARG for a `desc->size` or `stats->size` outside the
 *         accepted sizes, an unknown strategy, threads outside 0..1024,
 *         lock_stripe below 1, tsx_batch or tsx_retries outside 1..64, spin or
 *         backoff not 0 or 1, a NULL @p b when there are free DoFs, a pattern
 *         that lacks an entry the problem couples, or sigma or f not
 *         admissible at a quadrature point
 * @retval FEA_ERR_DIMENSION when A is not num_free_dofs x num_free_dofs
 * @retval FEA_ERR_UNSUPPORTED for TSX where the CPU has no usable RTM, or a
 *         space with several components (fea_space_set_num_components(); the
 *         reference assembly takes them)
 * @retval FEA_ERR_OUT_OF_MEMORY when the scratch storage or a thread's
 *         buffers cannot be allocated
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_assemble(const fea_problem *problem, fea_matrix *A, double *b,
                                        const fea_assembly_desc *desc, fea_assembly_stats *stats);

/**
 * @brief Assemble the reduced matrix densely: A_dense[r * ld + c] (row-major).
 *
 * The thesis's dense-matrix experiment: no pattern is needed and shared
 * entries spread over memory. Entries outside the pattern are set to zero.
 * Same strategies, checks and failure guarantee as fea_problem_assemble.
 * @param ld leading dimension, >= num_free_dofs
 * @retval FEA_ERR_INVALID_ARG as fea_problem_assemble(), and for a NULL
 *         @p A_dense when there are free DoFs
 * @retval FEA_ERR_DIMENSION when @p ld is below num_free_dofs (or below 1)
 * @retval FEA_ERR_UNSUPPORTED for TSX where the CPU has no usable RTM, or a
 *         space with several components
 * @retval FEA_ERR_OUT_OF_MEMORY when scratch storage cannot be allocated
 * @since 0.1.0
 */
FEA_API fea_status fea_problem_assemble_dense(const fea_problem *problem, double *A_dense,
                                              fea_index ld, double *b,
                                              const fea_assembly_desc *desc,
                                              fea_assembly_stats *stats);

/** @brief Name of a strategy ("serial", "coloring", "atomic-cas", "mutex",
 * "private-buffers", "tsx", "auto", "private-copies"); NULL if @p strategy is
 * unknown.
 * @since 0.1.0 */
FEA_EXPORT const char *fea_update_strategy_name(fea_update_strategy strategy);

/**
 * @brief Whether the TSX strategy can run here, and why (or why not).
 *
 * Available means: built with -mrtm for x86, CPUID reports RTM (leaf 7, EBX
 * bit 11) and not RTM_ALWAYS_ABORT (leaf 7, EDX bit 11).
 * @param[out] available 1 or 0
 * @param reason a sentence (may be NULL); @p len its capacity
 * @retval FEA_ERR_INVALID_ARG for a NULL @p available.
 * @since 0.1.0
 */
FEA_API fea_status fea_tsx_available(int *available, char *reason, size_t len);

FEA_END_DECLS

#endif /* FEACCEL_ASSEMBLY_H */
