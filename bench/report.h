/* What every feaccel-bench case shares: the global options it runs under, its
 * entry in the case table, the records it measures (with the machine facts a
 * figure depends on), and the writers that print them as a readable table or
 * as JSON lines (docs/benchmarks.md, "Output schema"). */
#ifndef FEA_BENCH_REPORT_H
#define FEA_BENCH_REPORT_H

#include <stdio.h>

#include <feaccel.h>

/* Exit status of the program and of a case's run function. */
enum {
  BENCH_OK = 0,
  BENCH_FAILED = 1, /* a libfeaccel call (or an allocation) failed */
  BENCH_USAGE = 2   /* unknown case, unknown option, bad option value */
};

/* ------------------------------------------------------------------------ */
/* Options and cases                                                         */

/* The options before the case name. */
typedef struct bench_options {
  int json;            /* 1: JSON lines instead of the table */
  const char *backend; /* --backend: the one resource to measure; NULL: the case's default set */
  int threads;         /* --threads: thread count for CPU contexts; 0: the backend's default */
  int reps;            /* --reps: timed repetitions, each figure is their median */
  FILE *out;           /* where records go (stdout); messages go to stderr */
} bench_options;

/* One benchmark case: a file bench/case-<name>.c defines
 * `const bench_case bench_case_<name>` and main.c lists it in its table. */
typedef struct bench_case {
  const char *name;        /* the CASE argument */
  const char *description; /* one line, for --list */
  const char *usage;       /* the case's own options, for `CASE --help` */
  /* argv holds the arguments after the case name; returns a BENCH_* status. */
  int (*run)(const bench_options *opts, int argc, char **argv);
} bench_case;

/* If argv[*i] is `--name VALUE` or `--name=VALUE`, set *value (advancing *i
 * past a separate value) and return 1; return 0 if it is another argument;
 * print a message and return -1 when the value is missing. */
int bench_option_value(int argc, char **argv, int *i, const char *name, const char **value);

/* Parse a whole decimal integer in [min, max] into *out; otherwise print
 * "feaccel-bench: <who>: <opt> ..." (who may be NULL) on stderr and return -1. */
int bench_parse_ll(const char *who, const char *opt, const char *text, long long min, long long max,
                   long long *out);

/* Open the context a case runs on: --backend, else default_resource, with
 * --threads applied. Returns BENCH_OK, or BENCH_USAGE for a resource or
 * thread count the library rejects as invalid, else BENCH_FAILED (message
 * printed either way, *ctx NULL). */
int bench_open_context(const bench_options *opts, const char *default_resource, fea_context **ctx);

/* Print "feaccel-bench: WHAT failed (STATUS): <fea_context_last_error(NULL)>"
 * on stderr and return BENCH_FAILED. */
int bench_fail(const char *what, fea_status status);

/* ------------------------------------------------------------------------ */
/* Records                                                                   */

/* The machine facts every record carries (from fea_context_get_info). */
typedef struct bench_machine {
  char cpu_model[128];
  int cores, pus;
  char blas[128]; /* library, version and kernel type in use */
  char gpu[128];  /* device name; "" when no GPU is used */
} bench_machine;

/* Fill *m from the context's facts. */
fea_status bench_machine_get(const fea_context *ctx, bench_machine *m);

#define BENCH_MAX_FIELDS 24
#define BENCH_MAX_PEERS 6

typedef enum bench_kind { BENCH_INT, BENCH_NUM, BENCH_STR } bench_kind;

typedef struct bench_field {
  const char *key; /* a string literal: snake_case, metrics end in their unit */
  bench_kind kind;
  long long i;
  double d;
  const char *s; /* points into the record's own string storage */
} bench_field;

typedef struct bench_fields {
  int count;
  bench_field f[BENCH_MAX_FIELDS];
} bench_fields;

/* One measurement: one JSON line, one table row. */
typedef struct bench_record {
  const char *case_name;
  char backend[32];
  int threads;
  bench_fields params;  /* what was measured: kernel, sizes, repetitions */
  bench_fields metrics; /* what came out: gflops, gbytes_per_s, time_s, ... */
  int npeers;
  const char *peer_name[BENCH_MAX_PEERS];
  bench_fields peer[BENCH_MAX_PEERS];
  bench_machine machine;
  char strings[1024]; /* storage for string values */
  size_t strings_used;
} bench_record;

/* Start a record for work done on ctx: backend, threads and machine facts. */
fea_status bench_record_init(bench_record *r, const char *case_name, const fea_context *ctx);
/* Start a record with the facts given explicitly. */
void bench_record_init_with(bench_record *r, const char *case_name, const char *backend,
                            int threads, const bench_machine *m);

void bench_param_int(bench_record *r, const char *key, long long value);
void bench_param_str(bench_record *r, const char *key, const char *value); /* copied */
void bench_metric(bench_record *r, const char *key, double value);
/* Add a peer (e.g. "cholmod") and return its index for bench_peer_metric. */
int bench_peer(bench_record *r, const char *name);
void bench_peer_metric(bench_record *r, int peer, const char *key, double value);

/* ------------------------------------------------------------------------ */
/* Writers                                                                   */

typedef struct bench_report {
  FILE *out;
  int json;
  int header_done;     /* table: machine facts and column names printed */
  char shown_gpu[128]; /* table: last GPU name printed */
} bench_report;

void bench_report_init(bench_report *rep, const bench_options *opts);

/* Write one record: a JSON line, or a table row (the table's header with the
 * machine facts comes before the first row). Flushes, so progress shows. */
void bench_report_emit(bench_report *rep, const bench_record *r);

/* Record that the figures of `backend` were not measured, and why: a table
 * line, or a JSON line with params {"skipped": why} and empty metrics. */
void bench_report_skip(bench_report *rep, const char *case_name, const char *backend,
                       const char *why, const bench_machine *m);

/* A line of explanation under the table; nothing in JSON mode. */
void bench_report_note(bench_report *rep, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
