/* feaccel-bench: named benchmark cases of libfeaccel.
 *
 *   feaccel-bench [--json] [--backend RESOURCE] [--threads N] [--reps R] CASE [case options]
 *   feaccel-bench --list
 *
 * Exit status: 0 success, 1 a libfeaccel call failed, 2 usage error. */
#include <stdio.h>
#include <string.h>

#include "report.h"

/* The case table. Adding a case: write bench/case-<name>.c defining
 * `const bench_case bench_case_<name>`, add X(<name>) here, and add the file
 * to bench/meson.build. */
#define BENCH_CASES(X)  \
  X(limits)             \
  X(assemble_reference) \
  X(export)             \
  X(iga_direct)         \
  X(assembly)           \
  X(updates)            \
  X(operator)           \
  X(prehandled)         \
  X(capacity)           \
  X(multigrid)          \
  X(multipatch)         \
  X(contention)         \
  X(progress)

#define DECLARE_CASE(name) extern const bench_case bench_case_##name;
BENCH_CASES(DECLARE_CASE)
#undef DECLARE_CASE

#define LIST_CASE(name) &bench_case_##name,
static const bench_case *const cases[] = {BENCH_CASES(LIST_CASE)};
#undef LIST_CASE

#define NUM_CASES (sizeof cases / sizeof cases[0])

static void usage(FILE *f) {
  fputs(
      "usage: feaccel-bench [--json] [--backend RESOURCE] [--threads N] [--reps R] CASE "
      "[case options]\n"
      "       feaccel-bench --list\n"
      "       feaccel-bench CASE --help\n"
      "\n"
      "  --json              one JSON object per line and measurement, instead of a table\n"
      "  --backend RESOURCE  measure only on this libfeaccel resource (/cpu/ref,\n"
      "                      /cpu/threads:threads=4, /gpu/cuda:device=1, ...);\n"
      "                      default: the case's own set of backends\n"
      "  --threads N         thread count of the CPU contexts that take one\n"
      "  --reps R            timed repetitions after one warm-up; figures are their\n"
      "                      median (default 5)\n"
      "  --list              name every case with a one-line description\n"
      "  --help              this text\n"
      "\n"
      "Exit status: 0 success, 1 a libfeaccel call failed, 2 usage error.\n",
      f);
}

static void list_cases(FILE *f) {
  for (size_t k = 0; k < NUM_CASES; k++)
    fprintf(f, "%-12s %s\n", cases[k]->name, cases[k]->description);
}

static const bench_case *find_case(const char *name) {
  for (size_t k = 0; k < NUM_CASES; k++)
    if (strcmp(cases[k]->name, name) == 0) return cases[k];
  return NULL;
}

int main(int argc, char **argv) {
  bench_options opts = {.json = 0, .backend = NULL, .threads = 0, .reps = 5, .out = stdout};
  int i = 1;
  for (; i < argc; i++) {
    const char *arg = argv[i], *value = NULL;
    long long v;
    int got;
    if (arg[0] != '-') break;
    if (strcmp(arg, "--") == 0) {
      i++;
      break;
    }
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(stdout);
      return BENCH_OK;
    }
    if (strcmp(arg, "--list") == 0) {
      list_cases(stdout);
      return BENCH_OK;
    }
    if (strcmp(arg, "--json") == 0) {
      opts.json = 1;
    } else if ((got = bench_option_value(argc, argv, &i, "--backend", &value)) != 0) {
      if (got < 0) return BENCH_USAGE;
      if (!*value) {
        fprintf(stderr, "feaccel-bench: --backend needs a resource such as /cpu/threads\n");
        return BENCH_USAGE;
      }
      opts.backend = value;
    } else if ((got = bench_option_value(argc, argv, &i, "--threads", &value)) != 0) {
      if (got < 0 || bench_parse_ll(NULL, "--threads", value, 1, 1024, &v) < 0) return BENCH_USAGE;
      opts.threads = (int)v;
    } else if ((got = bench_option_value(argc, argv, &i, "--reps", &value)) != 0) {
      if (got < 0 || bench_parse_ll(NULL, "--reps", value, 1, 100000, &v) < 0) return BENCH_USAGE;
      opts.reps = (int)v;
    } else {
      fprintf(stderr, "feaccel-bench: unknown option '%s' (see feaccel-bench --help)\n", arg);
      return BENCH_USAGE;
    }
  }
  if (i >= argc) {
    fprintf(stderr, "feaccel-bench: no case given\n");
    usage(stderr);
    return BENCH_USAGE;
  }
  const bench_case *c = find_case(argv[i]);
  if (!c) {
    fprintf(stderr, "feaccel-bench: unknown case '%s'; the cases are:\n", argv[i]);
    list_cases(stderr);
    return BENCH_USAGE;
  }
  for (int k = i + 1; k < argc; k++) {
    if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0) {
      fprintf(stdout, "feaccel-bench %s: %s\n\n%s", c->name, c->description, c->usage);
      return BENCH_OK;
    }
  }
  return c->run(&opts, argc - i - 1, argv + i + 1);
}
