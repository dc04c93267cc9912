/* The `assemble-reference` case: element integration throughput of the
 * reference path (basis values at the quadrature points, stiffness and load
 * per element) for every element family and order, and the time of the
 * whole serial reference assembly into CSR. This is the oracle, not a fast
 * path: its figures are the baseline later assembly strategies must beat. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discretization.h"
#include "disc/problem.h"
#include "report.h"
#include "disc/space.h"
#include "timing.h"

#define CASE_NAME "assemble-reference"

static const bench_family families[] = {
    {"Q", 2, 1},       {"Q", 2, 2},       {"Q", 2, 3},       {"Q", 2, 4},       {"P", 2, 1},
    {"P", 2, 2},       {"Q", 3, 1},       {"Q", 3, 2},       {"Q", 3, 3},       {"P", 3, 1},
    {"P", 3, 2},       {"bspline", 2, 1}, {"bspline", 2, 2}, {"bspline", 2, 3}, {"bspline", 2, 4},
    {"bspline", 2, 5}, {"bspline", 3, 1}, {"bspline", 3, 2}, {"bspline", 3, 3},
};

/* Integrate every element once; returns the seconds taken. */
static fea_status integrate_all(const fea_problem *pb, double *seconds, double *checksum) {
  const fea_space *s = pb->space;
  fea_element_values ev;
  fea_status st = fea_element_values_alloc(s, &pb->quad, &ev);
  if (st != FEA_SUCCESS) return st;
  int nb = s->dofs_per_element;
  double *Ke = malloc((size_t)nb * nb * sizeof *Ke), *fe = malloc((size_t)nb * sizeof *fe);
  double t0 = bench_now(), sum = 0;
  for (fea_index e = 0; e < s->num_elements && st == FEA_SUCCESS && Ke && fe; e++) {
    st = s->ops->element_values(s, e, &pb->quad, &ev);
    if (st == FEA_SUCCESS) st = fea_form_stiffness_load(pb, &ev, Ke, fe);
    sum += Ke[0] + fe[0]; /* keeps the work observable */
  }
  *seconds = bench_now() - t0;
  *checksum = sum;
  if (!Ke || !fe) st = FEA_ERR_OUT_OF_MEMORY;
  free(Ke);
  free(fe);
  fea_element_values_free(&ev);
  return st;
}

static int run(const bench_options *opts, int argc, char **argv) {
  long long target = 20000; /* elements per family */
  for (int i = 0; i < argc; i++) {
    const char *v;
    int got = bench_option_value(argc, argv, &i, "--elements", &v);
    if (got < 0) return BENCH_USAGE;
    if (got == 0) {
      fprintf(stderr, "feaccel-bench: %s: unknown option '%s'\n", CASE_NAME, argv[i]);
      return BENCH_USAGE;
    }
    if (bench_parse_ll(CASE_NAME, "--elements", v, 1, 100000000, &target) < 0) return BENCH_USAGE;
  }
  fea_context *ctx = NULL;
  fea_status st = fea_context_create(opts->backend ? opts->backend : "/cpu/ref", &ctx);
  if (st != FEA_SUCCESS) return bench_fail("fea_context_create", st);
  bench_report rep;
  bench_report_init(&rep, opts);
  int rc = BENCH_OK;
  for (size_t k = 0; k < sizeof families / sizeof families[0] && rc == BENCH_OK; k++) {
    const bench_family *f = &families[k];
    /* n per direction so that about `target` elements (cells) are integrated */
    double cells_per_box = strcmp(f->name, "P") ? 1 : (f->dim == 2 ? 2 : 6);
    fea_index n = (fea_index)(pow(target / cells_per_box, 1.0 / f->dim) + 0.5);
    if (n < 1) n = 1;
    fea_mesh *mesh = NULL;
    fea_space *space = NULL;
    fea_problem *pb = NULL;
    st = bench_make_space(ctx, f, n, &mesh, &space);
    if (st == FEA_SUCCESS) st = bench_make_sine_problem(space, f->dim, &pb);
    double *times = malloc((size_t)opts->reps * sizeof *times), check = 0, t = 0;
    for (int r = -1; r < opts->reps && st == FEA_SUCCESS; r++) {
      st = integrate_all(pb, &t, &check);
      if (r >= 0) times[r] = t;
    }
    fea_matrix *A = NULL;
    double assemble_s = 0;
    if (st == FEA_SUCCESS) {
      double *b = malloc((size_t)pb->num_free * sizeof *b + 1);
      double t0 = bench_now();
      st = fea_problem_assemble_reference(pb, b, &A);
      assemble_s = bench_now() - t0;
      free(b);
    }
    if (st != FEA_SUCCESS) {
      rc = bench_fail("building or assembling the problem", st);
    } else {
      fea_index nnz = 0;
      if (fea_matrix_get_size(A, NULL, NULL, &nnz) != FEA_SUCCESS) nnz = -1;
      double med = bench_median(times, opts->reps);
      int nb = space->dofs_per_element, nq = pb->quad.npts;
      /* stiffness: nq * nb(nb+1)/2 dot products of length dim, 2 flops each */
      double flops = (double)space->num_elements * nq * nb * (nb + 1) / 2.0 * 2.0 * f->dim;
      bench_record r;
      (void)bench_record_init(&r, CASE_NAME, ctx);
      bench_param_str(&r, "family", f->name);
      bench_param_int(&r, "dim", f->dim);
      bench_param_int(&r, "p", f->p);
      bench_param_int(&r, "n", n);
      bench_param_int(&r, "elements", space->num_elements);
      bench_param_int(&r, "dofs", space->num_dofs);
      bench_param_int(&r, "quad_points", nq);
      bench_metric(&r, "elements_per_s", space->num_elements / med);
      bench_metric(&r, "integrate_s", med);
      bench_metric(&r, "stiffness_gflops", flops / med * 1e-9);
      bench_metric(&r, "assemble_s", assemble_s);
      bench_metric(&r, "nnz", (double)nnz);
      bench_report_emit(&rep, &r);
    }
    free(times);
    fea_matrix_destroy(&A);
    fea_problem_destroy(&pb);
    fea_space_destroy(&space);
    fea_mesh_destroy(&mesh);
  }
  bench_report_note(
      &rep,
      "\nintegrate_s: median of %d passes over all elements (basis at the quadrature "
      "points, stiffness and load); assemble_s: one serial reference assembly into CSR "
      "(pattern included).",
      opts->reps);
  fea_context_destroy(&ctx);
  return rc;
}

const bench_case bench_case_assemble_reference = {
    .name = CASE_NAME,
    .description =
        "element integration throughput and reference CSR assembly, per element family and order",
    .usage = "options:\n  --elements N   about N elements per family (default 20000)\n",
    .run = run,
};
