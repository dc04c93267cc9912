/* The BLAS's kernel set against the CPU's vector ISA (blas-kernels.h).
 * Debian's OpenBLAS 0.3.21 (DYNAMIC_ARCH) takes its SSE3 "Prescott" kernels
 * on a CPU model it does not know, an AVX-512 Xeon among them: DGEMM then
 * runs at a fifth of its speed, and nothing says so. Debian's BLIS 0.9.0
 * does the same with its "generic" C kernels (an AMD Zen 5, family 1Ah). */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "blas-kernels.h"
#include "context.h"
#include "fea-config.h"
#include "internal/error.h"

#if FEA_BLAS == FEA_BLAS_BLIS
#include <blis.h>
#elif FEA_BLAS == FEA_BLAS_OPENBLAS
/* OpenBLAS's own queries (its cblas.h), declared here rather than by
 * including a cblas.h that another BLAS's headers may provide. */
char *openblas_get_corename(void);
char *openblas_get_config(void);
#endif

const char *fea_isa_name(fea_isa isa) {
  switch (isa) {
  case FEA_ISA_SSE: return "sse";
  case FEA_ISA_AVX: return "avx";
  case FEA_ISA_AVX2: return "avx2";
  case FEA_ISA_AVX512: return "avx512";
  default: return "unknown";
  }
}

/* OpenBLAS's x86 core names (driver/others/dynamic.c, corename[]; a build
 * without DYNAMIC_ARCH names its one target, in any case). A name absent here,
 * "Unknown" or a newer one, stays FEA_ISA_UNKNOWN and never raises a warning.
 * Steamroller and Excavator count as AVX2 although only Excavator has it: a
 * name is never placed below what OpenBLAS picks for a CPU it knows, so its
 * own right choice cannot read as a mismatch. */
static const struct {
  const char *name;
  fea_isa isa;
} cores[] = {
    {"Katmai", FEA_ISA_SSE},        {"Coppermine", FEA_ISA_SSE},
    {"Northwood", FEA_ISA_SSE},     {"Prescott", FEA_ISA_SSE},
    {"Banias", FEA_ISA_SSE},        {"Atom", FEA_ISA_SSE},
    {"Core2", FEA_ISA_SSE},         {"Penryn", FEA_ISA_SSE},
    {"Dunnington", FEA_ISA_SSE},    {"Nehalem", FEA_ISA_SSE},
    {"Athlon", FEA_ISA_SSE},        {"Opteron", FEA_ISA_SSE},
    {"Opteron_SSE3", FEA_ISA_SSE},  {"Barcelona", FEA_ISA_SSE},
    {"Nano", FEA_ISA_SSE},          {"Bobcat", FEA_ISA_SSE},
    {"Sandybridge", FEA_ISA_AVX},   {"Bulldozer", FEA_ISA_AVX},
    {"Piledriver", FEA_ISA_AVX},    {"Haswell", FEA_ISA_AVX2},
    {"Steamroller", FEA_ISA_AVX2},  {"Excavator", FEA_ISA_AVX2},
    {"Zen", FEA_ISA_AVX2},          {"SkylakeX", FEA_ISA_AVX512},
    {"Cooperlake", FEA_ISA_AVX512}, {"SapphireRapids", FEA_ISA_AVX512},
};

fea_isa fea_blas_kernels_isa(const char *core) {
  if (!core) return FEA_ISA_UNKNOWN;
  for (size_t i = 0; i < sizeof cores / sizeof cores[0]; i++)
    if (strcasecmp(core, cores[i].name) == 0) return cores[i].isa;
  return FEA_ISA_UNKNOWN;
}

/* BLIS's x86 sub-configurations (bli_arch_string: config/ of BLIS 0.9 and
 * later, zen4 and zen5 from 1.0). "generic" is portable C, compiled for the
 * x86-64 baseline: SSE2 at best. Steamroller has no AVX2, Piledriver and
 * Bulldozer only AVX with FMA4/FMA3 at 128 bits. */
static const struct {
  const char *name;
  fea_isa isa;
} blis_archs[] = {
    {"generic", FEA_ISA_SSE},    {"penryn", FEA_ISA_SSE},     {"sandybridge", FEA_ISA_AVX},
    {"bulldozer", FEA_ISA_AVX},  {"piledriver", FEA_ISA_AVX}, {"steamroller", FEA_ISA_AVX},
    {"excavator", FEA_ISA_AVX2}, {"haswell", FEA_ISA_AVX2},   {"zen", FEA_ISA_AVX2},
    {"zen2", FEA_ISA_AVX2},      {"zen3", FEA_ISA_AVX2},      {"skx", FEA_ISA_AVX512},
    {"knl", FEA_ISA_AVX512},     {"zen4", FEA_ISA_AVX512},    {"zen5", FEA_ISA_AVX512},
};

fea_isa fea_blis_kernels_isa(const char *arch) {
  if (!arch) return FEA_ISA_UNKNOWN;
  for (size_t i = 0; i < sizeof blis_archs / sizeof blis_archs[0]; i++)
    if (strcasecmp(arch, blis_archs[i].name) == 0) return blis_archs[i].isa;
  return FEA_ISA_UNKNOWN;
}

static fea_isa cpu_level(unsigned flags) {
  if (flags & FEA_CPU_AVX512F) return FEA_ISA_AVX512;
  if (flags & FEA_CPU_AVX2) return FEA_ISA_AVX2;
  if (flags & FEA_CPU_AVX) return FEA_ISA_AVX;
  if (flags & FEA_CPU_SSE) return FEA_ISA_SSE;
  return FEA_ISA_UNKNOWN;
}

/* The facts and the verdict, without the advice: kernels below the CPU.
 * AVX2 kernels on an AVX-512 CPU are no mismatch: OpenBLAS 0.3.21's SkylakeX
 * DGEMM is not always faster than its Haswell one (the AVX-512 units clock
 * lower, and some parts have one FMA port for 512 bits), so Haswell is a
 * choice a user may have made on purpose. Below AVX2 the kernels lack FMA
 * (Sandybridge) or 256-bit vectors (SSE): 2 to 5 times slower on one core. */
static int judge(const char *blas, const char *core, fea_isa blas_isa, unsigned cpu_flags,
                 fea_blas_kernels *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->blas, sizeof out->blas, "%s", blas);
  snprintf(out->name, sizeof out->name, "%s", core ? core : "");
  out->blas_isa = blas_isa;
  out->cpu_isa = cpu_level(cpu_flags);
  if (out->blas_isa == FEA_ISA_UNKNOWN || out->cpu_isa == FEA_ISA_UNKNOWN) return 0;
  if (out->blas_isa >= out->cpu_isa) return 0;
  if (out->blas_isa == FEA_ISA_AVX2 && out->cpu_isa == FEA_ISA_AVX512) return 0;
  out->slow = 1;
  return 1;
}

void fea_blis_kernels_judge(const char *arch, unsigned cpu_flags, fea_blas_kernels *out) {
  if (!judge("BLIS", arch, fea_blis_kernels_isa(arch), cpu_flags, out)) return;
  /* BLIS picks its sub-configuration from CPUID when it starts; a CPU it
   * does not know gets "generic" (BLIS 0.9.0 on AMD family 1Ah), and Debian's
   * build aborts on BLIS_ARCH_TYPE, so no variable fixes it: only another
   * BLIS or another BLAS. */
  snprintf(out->advice, sizeof out->advice,
           "BLIS does not know this CPU; build the library with -Dblas=openblas, or link a "
           "BLIS release that supports this CPU (configured for x86_64 or %s)",
           out->cpu_isa == FEA_ISA_AVX512 ? "skx/zen4"
           : out->cpu_isa == FEA_ISA_AVX2 ? "haswell/zen3"
                                          : "sandybridge");
}

void fea_blas_kernels_judge(const char *core, int dynamic_arch, unsigned cpu_flags,
                            fea_blas_kernels *out) {
  if (!judge("OpenBLAS", core, fea_blas_kernels_isa(core), cpu_flags, out)) return;
  /* The best kernels the CPU runs, by their OpenBLAS name (the CPU is at
   * least AVX here: it is above the kernels). */
  const char *want = out->cpu_isa == FEA_ISA_AVX512 ? "SkylakeX"
                     : out->cpu_isa == FEA_ISA_AVX2 ? "Haswell"
                                                    : "Sandybridge";
  /* OPENBLAS_CORETYPE chooses only among a DYNAMIC_ARCH build's kernels;
   * another build has its one target compiled in. */
  if (dynamic_arch)
    snprintf(out->advice, sizeof out->advice,
             "set OPENBLAS_CORETYPE=%s in the environment before the program starts (OpenBLAS "
             "reads it when it is loaded)",
             want);
  else /* make's TARGET takes the name in capitals */
    snprintf(out->advice, sizeof out->advice,
             "link an OpenBLAS built for this CPU (DYNAMIC_ARCH=1, or TARGET=%s)",
             out->cpu_isa == FEA_ISA_AVX512 ? "SKYLAKEX"
             : out->cpu_isa == FEA_ISA_AVX2 ? "HASWELL"
                                            : "SANDYBRIDGE");
}

unsigned fea_cpu_isa_flags(void) {
#if defined(__x86_64__) || defined(__i386__)
  /* GCC's and Clang's checks include the OS's consent (XCR0) for the AVX
   * and AVX-512 registers, as OpenBLAS's own do. */
  __builtin_cpu_init();
  unsigned flags = 0;
  if (__builtin_cpu_supports("sse2")) flags |= FEA_CPU_SSE;
  if (__builtin_cpu_supports("avx")) flags |= FEA_CPU_AVX;
  if (__builtin_cpu_supports("avx2")) flags |= FEA_CPU_AVX2;
  if (__builtin_cpu_supports("avx512f")) flags |= FEA_CPU_AVX512F;
  return flags;
#else
  return 0;
#endif
}

void fea_blas_kernels_detect(fea_blas_kernels *out) {
#if FEA_BLAS == FEA_BLAS_BLIS
  fea_blis_kernels_judge(bli_arch_string(bli_arch_query_id()), fea_cpu_isa_flags(), out);
#else
  const char *core = NULL, *cfg = NULL;
#if FEA_BLAS == FEA_BLAS_OPENBLAS
  /* The BLAS this library links: called directly, so that the answer holds
   * in a library loaded with RTLD_LOCAL too (Python's ctypes). */
  core = openblas_get_corename();
  cfg = openblas_get_config();
#else
  /* FlexiBLAS or MKL: OpenBLAS answers only when it is in the process's
   * global scope (FlexiBLAS's backend, or linked by the program); otherwise
   * the kernels are unknown and never raise a warning. */
  typedef char *(*name_fn)(void);
  name_fn corename, config;
  *(void **)&corename = dlsym(RTLD_DEFAULT, "openblas_get_corename");
  *(void **)&config = dlsym(RTLD_DEFAULT, "openblas_get_config");
  core = corename ? corename() : NULL;
  cfg = config ? config() : NULL;
#endif
  fea_blas_kernels_judge(core, cfg && strstr(cfg, "DYNAMIC_ARCH") != NULL, fea_cpu_isa_flags(),
                         out);
#endif
}

static atomic_int warned;

void fea_blas_kernels_warn_once(const fea_context *ctx) {
  if (!ctx || !ctx->log_fn || ctx->log_level < FEA_LOG_WARN || atomic_load(&warned)) return;
  fea_blas_kernels k;
  fea_blas_kernels_detect(&k);
  if (!k.slow || atomic_exchange(&warned, 1)) return;
  fea_log(ctx, FEA_LOG_WARN,
          "the BLAS runs %s's %s kernels (%s) on a CPU with %s: dense products and "
          "factorizations run several times slower than they could; %s",
          k.blas, k.name, fea_isa_name(k.blas_isa), fea_isa_name(k.cpu_isa), k.advice);
}
