/* Whether the BLAS runs kernels below the CPU's vector ISA (OpenBLAS's
 * DYNAMIC_ARCH falls back to its SSE3 "Prescott" kernels on a CPU model it
 * does not know, BLIS to its "generic" C kernels), and the fix to name when
 * it does. */
#ifndef FEA_INTERNAL_BLAS_KERNELS_H
#define FEA_INTERNAL_BLAS_KERNELS_H

#include <stddef.h>

#include <feaccel/context.h>

/* The values of FEA_BLAS (fea-config.h, blas/meson.build): the BLAS the
 * library was built with. */
#define FEA_BLAS_OPENBLAS 1
#define FEA_BLAS_BLIS 2
#define FEA_BLAS_FLEXIBLAS 3
#define FEA_BLAS_MKL 4

/* Vector ISA levels, ordered: a higher level runs every lower one's code. */
typedef enum fea_isa {
  FEA_ISA_UNKNOWN = 0, /* not an x86 CPU, or a kernel name we do not know */
  FEA_ISA_SSE,
  FEA_ISA_AVX,
  FEA_ISA_AVX2,
  FEA_ISA_AVX512
} fea_isa;

/* CPU feature bits for fea_blas_kernels_judge (what CPUID and the OS allow). */
enum { FEA_CPU_SSE = 1, FEA_CPU_AVX = 2, FEA_CPU_AVX2 = 4, FEA_CPU_AVX512F = 8 };

typedef struct fea_blas_kernels {
  char blas[16];    /* whose kernel names these are: "OpenBLAS", "BLIS"; "" when unknown */
  char name[32];    /* OpenBLAS's core name ("Haswell"), BLIS's sub-configuration
                       ("zen3"); "" when the BLAS does not say */
  fea_isa blas_isa; /* the kernels' ISA, FEA_ISA_UNKNOWN for a name not in our table */
  fea_isa cpu_isa;
  int slow;         /* 1: kernels below the CPU, worth a warning */
  char advice[192]; /* the fix when slow, else "" */
} fea_blas_kernels;

/* "sse", "avx", "avx2", "avx512", "unknown". */
const char *fea_isa_name(fea_isa isa);

/* The ISA of an OpenBLAS core name (any case); FEA_ISA_UNKNOWN when NULL or
 * not one of OpenBLAS's x86 names. */
fea_isa fea_blas_kernels_isa(const char *core);

/* The judgement on given facts, so that a test can inject them: core is
 * openblas_get_corename()'s answer (NULL: not OpenBLAS), dynamic_arch whether
 * OpenBLAS was built with DYNAMIC_ARCH (only then does OPENBLAS_CORETYPE
 * choose its kernels), cpu_flags the FEA_CPU_* bits of the CPU. */
void fea_blas_kernels_judge(const char *core, int dynamic_arch, unsigned cpu_flags,
                            fea_blas_kernels *out);

/* The ISA of a BLIS sub-configuration name ("haswell", "skx", "generic");
 * FEA_ISA_UNKNOWN when NULL or not an x86 one. */
fea_isa fea_blis_kernels_isa(const char *arch);

/* The judgement for BLIS: arch is bli_arch_string(bli_arch_query_id()). */
void fea_blis_kernels_judge(const char *arch, unsigned cpu_flags, fea_blas_kernels *out);

/* The FEA_CPU_* bits of this CPU (0 off x86). */
unsigned fea_cpu_isa_flags(void);

/* The judgement on this process: the BLAS the library was built with
 * (FEA_BLAS), asked directly for OpenBLAS and BLIS; with FlexiBLAS or MKL,
 * OpenBLAS looked up by name when it is in the process, else unknown. */
void fea_blas_kernels_detect(fea_blas_kernels *out);

/* When the BLAS is slow here, hand the warning and its fix to ctx's log
 * callback, once per process: only a context whose callback takes warnings
 * uses up the once, so that the warning is not spent on a context that
 * cannot deliver it. */
void fea_blas_kernels_warn_once(const fea_context *ctx);

#endif
