/* The BLAS kernel check (src/base/blas-kernels.c) on injected facts: a table
 * of OpenBLAS core names against CPU vector ISAs, the exception of AVX2
 * kernels on AVX-512, unknown names that must never warn, and the fix named
 * for a DYNAMIC_ARCH build and for another; the same for BLIS's
 * sub-configuration names. Then the live answer on this machine from the
 * BLAS the build chose (-Dblas), under any OPENBLAS_CORETYPE the test
 * environment sets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <criterion/criterion.h>

#include "base/blas-kernels.h"
#include "fea-config.h"
#include "linalg/blas.h"

#define SSE FEA_CPU_SSE
#define AVX (SSE | FEA_CPU_AVX)
#define AVX2 (AVX | FEA_CPU_AVX2)
#define AVX512 (AVX2 | FEA_CPU_AVX512F)

static const struct row {
  const char *core;
  int dynamic;
  unsigned cpu;
  fea_isa blas_isa, cpu_isa;
  int slow;
  const char *advice; /* a part of it; NULL: empty */
} rows[] = {
    /* The case of issue #41: Prescott on an AVX-512 Xeon. */
    {"Prescott", 1, AVX512, FEA_ISA_SSE, FEA_ISA_AVX512, 1, "OPENBLAS_CORETYPE=SkylakeX"},
    {"Prescott", 1, AVX2, FEA_ISA_SSE, FEA_ISA_AVX2, 1, "OPENBLAS_CORETYPE=Haswell"},
    {"Prescott", 1, AVX, FEA_ISA_SSE, FEA_ISA_AVX, 1, "OPENBLAS_CORETYPE=Sandybridge"},
    {"Prescott", 1, SSE, FEA_ISA_SSE, FEA_ISA_SSE, 0, NULL},
    {"Core2", 1, AVX2, FEA_ISA_SSE, FEA_ISA_AVX2, 1, "OPENBLAS_CORETYPE=Haswell"},
    {"Penryn", 1, AVX512, FEA_ISA_SSE, FEA_ISA_AVX512, 1, "SkylakeX"},
    {"Dunnington", 1, AVX2, FEA_ISA_SSE, FEA_ISA_AVX2, 1, "Haswell"},
    {"Nehalem", 1, AVX2, FEA_ISA_SSE, FEA_ISA_AVX2, 1, "Haswell"},
    {"Atom", 1, AVX2, FEA_ISA_SSE, FEA_ISA_AVX2, 1, "Haswell"},
    {"Barcelona", 1, AVX2, FEA_ISA_SSE, FEA_ISA_AVX2, 1, "Haswell"},
    {"Opteron", 1, AVX2, FEA_ISA_SSE, FEA_ISA_AVX2, 1, "Haswell"},
    {"Opteron_SSE3", 1, AVX, FEA_ISA_SSE, FEA_ISA_AVX, 1, "Sandybridge"},
    /* AVX kernels without FMA below AVX2 hardware. */
    {"Sandybridge", 1, AVX2, FEA_ISA_AVX, FEA_ISA_AVX2, 1, "OPENBLAS_CORETYPE=Haswell"},
    {"Sandybridge", 1, AVX512, FEA_ISA_AVX, FEA_ISA_AVX512, 1, "SkylakeX"},
    {"Sandybridge", 1, AVX, FEA_ISA_AVX, FEA_ISA_AVX, 0, NULL},
    {"Bulldozer", 1, AVX, FEA_ISA_AVX, FEA_ISA_AVX, 0, NULL},
    {"Piledriver", 1, AVX, FEA_ISA_AVX, FEA_ISA_AVX, 0, NULL},
    /* OpenBLAS's own right choices. */
    {"Haswell", 1, AVX2, FEA_ISA_AVX2, FEA_ISA_AVX2, 0, NULL},
    {"Zen", 1, AVX2, FEA_ISA_AVX2, FEA_ISA_AVX2, 0, NULL},
    {"Excavator", 1, AVX2, FEA_ISA_AVX2, FEA_ISA_AVX2, 0, NULL},
    {"Steamroller", 1, AVX, FEA_ISA_AVX2, FEA_ISA_AVX, 0, NULL},
    {"SkylakeX", 1, AVX512, FEA_ISA_AVX512, FEA_ISA_AVX512, 0, NULL},
    {"Cooperlake", 1, AVX512, FEA_ISA_AVX512, FEA_ISA_AVX512, 0, NULL},
    {"SapphireRapids", 1, AVX512, FEA_ISA_AVX512, FEA_ISA_AVX512, 0, NULL},
    /* AVX2 kernels on AVX-512: not a mismatch worth a warning. */
    {"Haswell", 1, AVX512, FEA_ISA_AVX2, FEA_ISA_AVX512, 0, NULL},
    {"Zen", 1, AVX512, FEA_ISA_AVX2, FEA_ISA_AVX512, 0, NULL},
    /* Kernels above the CPU (a forced OPENBLAS_CORETYPE): not slow. */
    {"SkylakeX", 1, AVX2, FEA_ISA_AVX512, FEA_ISA_AVX2, 0, NULL},
    /* Unknown names, no OpenBLAS, no x86: never an alarm. */
    {"Unknown", 1, AVX512, FEA_ISA_UNKNOWN, FEA_ISA_AVX512, 0, NULL},
    {"Zen9", 1, AVX512, FEA_ISA_UNKNOWN, FEA_ISA_AVX512, 0, NULL},
    {"", 1, AVX512, FEA_ISA_UNKNOWN, FEA_ISA_AVX512, 0, NULL},
    {NULL, 0, AVX512, FEA_ISA_UNKNOWN, FEA_ISA_AVX512, 0, NULL},
    {"Prescott", 1, 0, FEA_ISA_SSE, FEA_ISA_UNKNOWN, 0, NULL},
    /* A build without DYNAMIC_ARCH names its target in any case, and
     * OPENBLAS_CORETYPE cannot change it: the fix is another build. */
    {"prescott", 0, AVX2, FEA_ISA_SSE, FEA_ISA_AVX2, 1, "TARGET=HASWELL"},
    {"HASWELL", 0, AVX2, FEA_ISA_AVX2, FEA_ISA_AVX2, 0, NULL},
};

Test(blas_kernels, table_of_names_and_isas) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const struct row *r = &rows[i];
    const char *core = r->core ? r->core : "(null)";
    fea_blas_kernels k;
    memset(&k, 0x5a, sizeof k);
    fea_blas_kernels_judge(r->core, r->dynamic, r->cpu, &k);
    cr_expect_str_eq(k.name, r->core ? r->core : "", "row %zu", i);
    cr_expect_eq(k.blas_isa, r->blas_isa, "%s: kernels %s, expected %s", core,
                 fea_isa_name(k.blas_isa), fea_isa_name(r->blas_isa));
    cr_expect_eq(k.cpu_isa, r->cpu_isa, "%s on cpu flags %u: %s, expected %s", core, r->cpu,
                 fea_isa_name(k.cpu_isa), fea_isa_name(r->cpu_isa));
    cr_expect_eq(k.slow, r->slow, "%s on %s: slow %d", core, fea_isa_name(r->cpu_isa), k.slow);
    if (r->advice)
      cr_expect(strstr(k.advice, r->advice) != NULL, "%s on %s: advice \"%s\" lacks \"%s\"", core,
                fea_isa_name(r->cpu_isa), k.advice, r->advice);
    else
      cr_expect_str_eq(k.advice, "", "%s on %s: advice without a mismatch", core,
                       fea_isa_name(r->cpu_isa));
  }
}

/* Every known name on every CPU level: slow exactly when the kernels are
 * below the CPU, except AVX2 on AVX-512, and then always with a fix. */
Test(blas_kernels, every_name_on_every_cpu) {
  static const char *names[] = {"Katmai",       "Coppermine",    "Northwood",  "Prescott",
                                "Banias",       "Atom",          "Core2",      "Penryn",
                                "Dunnington",   "Nehalem",       "Athlon",     "Opteron",
                                "Opteron_SSE3", "Barcelona",     "Nano",       "Bobcat",
                                "Sandybridge",  "Bulldozer",     "Piledriver", "Haswell",
                                "Steamroller",  "Excavator",     "Zen",        "SkylakeX",
                                "Cooperlake",   "SapphireRapids"};
  static const unsigned cpus[] = {0, SSE, AVX, AVX2, AVX512};
  for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
    fea_isa b = fea_blas_kernels_isa(names[n]);
    cr_expect_neq(b, FEA_ISA_UNKNOWN, "%s is one of OpenBLAS's names", names[n]);
    for (size_t c = 0; c < sizeof cpus / sizeof cpus[0]; c++) {
      fea_blas_kernels k;
      fea_blas_kernels_judge(names[n], 1, cpus[c], &k);
      int want = k.cpu_isa != FEA_ISA_UNKNOWN && b < k.cpu_isa &&
                 !(b == FEA_ISA_AVX2 && k.cpu_isa == FEA_ISA_AVX512);
      cr_expect_eq(k.slow, want, "%s on %s", names[n], fea_isa_name(k.cpu_isa));
      cr_expect_eq(k.advice[0] != '\0', want, "%s on %s: advice \"%s\"", names[n],
                   fea_isa_name(k.cpu_isa), k.advice);
    }
  }
}

/* BLIS's names: "generic" (BLIS 0.9.0 on a CPU it does not know, an AMD
 * Zen 5) is below any AVX CPU, and the fix is another BLIS or OpenBLAS (no
 * variable changes Debian's BLIS's choice); its right choices never warn. */
static const struct blis_row {
  const char *arch;
  unsigned cpu;
  fea_isa blas_isa;
  int slow;
  const char *advice;
} blis_rows[] = {
    {"generic", AVX512, FEA_ISA_SSE, 1, "-Dblas=openblas"},
    {"generic", AVX2, FEA_ISA_SSE, 1, "haswell/zen3"},
    {"generic", AVX, FEA_ISA_SSE, 1, "sandybridge"},
    {"generic", SSE, FEA_ISA_SSE, 0, NULL},
    {"penryn", AVX2, FEA_ISA_SSE, 1, "BLIS"},
    {"sandybridge", AVX2, FEA_ISA_AVX, 1, "haswell/zen3"},
    {"steamroller", AVX, FEA_ISA_AVX, 0, NULL},
    {"haswell", AVX2, FEA_ISA_AVX2, 0, NULL},
    {"zen3", AVX2, FEA_ISA_AVX2, 0, NULL},
    {"ZEN2", AVX2, FEA_ISA_AVX2, 0, NULL},
    {"zen3", AVX512, FEA_ISA_AVX2, 0, NULL}, /* AVX2 on AVX-512: no warning */
    {"skx", AVX512, FEA_ISA_AVX512, 0, NULL},
    {"zen4", AVX512, FEA_ISA_AVX512, 0, NULL},
    {"knl", AVX512, FEA_ISA_AVX512, 0, NULL},
    {"skx", AVX2, FEA_ISA_AVX512, 0, NULL},
    {"cortexa57", AVX512, FEA_ISA_UNKNOWN, 0, NULL},
    {"Prescott", AVX512, FEA_ISA_UNKNOWN, 0, NULL}, /* OpenBLAS's name, not BLIS's */
    {"", AVX512, FEA_ISA_UNKNOWN, 0, NULL},
    {NULL, AVX512, FEA_ISA_UNKNOWN, 0, NULL},
    {"generic", 0, FEA_ISA_SSE, 0, NULL},
};

Test(blas_kernels, blis_names) {
  for (size_t i = 0; i < sizeof blis_rows / sizeof blis_rows[0]; i++) {
    const struct blis_row *r = &blis_rows[i];
    const char *arch = r->arch ? r->arch : "(null)";
    fea_blas_kernels k;
    memset(&k, 0x5a, sizeof k);
    fea_blis_kernels_judge(r->arch, r->cpu, &k);
    cr_expect_str_eq(k.blas, "BLIS", "row %zu", i);
    cr_expect_str_eq(k.name, r->arch ? r->arch : "", "row %zu", i);
    cr_expect_eq(k.blas_isa, r->blas_isa, "%s: kernels %s, expected %s", arch,
                 fea_isa_name(k.blas_isa), fea_isa_name(r->blas_isa));
    cr_expect_eq(k.slow, r->slow, "%s on cpu flags %u: slow %d", arch, r->cpu, k.slow);
    if (r->advice)
      cr_expect(strstr(k.advice, r->advice) != NULL, "%s: advice \"%s\" lacks \"%s\"", arch,
                k.advice, r->advice);
    else
      cr_expect_str_eq(k.advice, "", "%s on cpu flags %u: advice without a mismatch", arch, r->cpu);
    /* BLIS's advice never names OpenBLAS's variable, which would do nothing. */
    cr_expect(strstr(k.advice, "OPENBLAS_CORETYPE") == NULL, "%s: %s", arch, k.advice);
  }
  /* And OpenBLAS's judgement names its own BLAS. */
  fea_blas_kernels k;
  fea_blas_kernels_judge("Prescott", 1, AVX512, &k);
  cr_expect_str_eq(k.blas, "OpenBLAS");
}

Test(blas_kernels, isa_names) {
  cr_expect_str_eq(fea_isa_name(FEA_ISA_SSE), "sse");
  cr_expect_str_eq(fea_isa_name(FEA_ISA_AVX), "avx");
  cr_expect_str_eq(fea_isa_name(FEA_ISA_AVX2), "avx2");
  cr_expect_str_eq(fea_isa_name(FEA_ISA_AVX512), "avx512");
  cr_expect_str_eq(fea_isa_name(FEA_ISA_UNKNOWN), "unknown");
  cr_expect_str_eq(fea_isa_name((fea_isa)42), "unknown");
}

/* This process: the kernel name of the BLAS the build chose is the one the
 * BLAS's description names; with OpenBLAS, a forced OPENBLAS_CORETYPE is the
 * one that runs. */
Test(blas_kernels, this_machine) {
  char described[256];
  fea_blas_describe(described, sizeof described);
  fea_blas_kernels k;
  fea_blas_kernels_detect(&k);
#if FEA_BLAS == FEA_BLAS_OPENBLAS || FEA_BLAS == FEA_BLAS_BLIS
  cr_assert_neq(k.name[0], '\0', "the BLAS's kernel name was not found (BLAS: %s)", described);
  cr_expect_str_eq(k.blas, FEA_BLAS == FEA_BLAS_BLIS ? "BLIS" : "OpenBLAS");
  cr_expect(strncmp(described, k.blas, strlen(k.blas)) == 0, "\"%s\" does not start with %s",
            described, k.blas);
#else
  if (!k.name[0]) {
    cr_expect(strstr(described, "(kernels: unknown)") != NULL, "%s", described);
    return;
  }
#endif
  char named[64];
  snprintf(named, sizeof named, "(kernels: %s)", k.name);
  cr_expect(strstr(described, named) != NULL, "%s does not name %s", described, k.name);
  unsigned flags = fea_cpu_isa_flags();
#if defined(__x86_64__)
  cr_expect(flags & FEA_CPU_SSE, "an x86-64 CPU without SSE2");
  cr_expect_eq(!!(flags & FEA_CPU_AVX2), !!__builtin_cpu_supports("avx2"));
  cr_expect_eq(!!(flags & FEA_CPU_AVX512F), !!__builtin_cpu_supports("avx512f"));
  cr_expect_neq(k.cpu_isa, FEA_ISA_UNKNOWN);
#else
  cr_expect_eq(flags, 0u);
#endif
  if (strcmp(k.blas, "OpenBLAS") != 0) return; /* OPENBLAS_CORETYPE is OpenBLAS's */
  const char *forced = getenv("OPENBLAS_CORETYPE");
  if (forced && *forced)
    cr_expect(strcasecmp(k.name, forced) == 0, "%s runs, not %s", k.name, forced);
  if (forced && strcasecmp(forced, "Haswell") == 0 && k.cpu_isa >= FEA_ISA_AVX2)
    cr_expect_eq(k.slow, 0, "Haswell kernels on %s flagged: %s", fea_isa_name(k.cpu_isa), k.advice);
}
