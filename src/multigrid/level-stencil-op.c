/* The matrix-free operator of a multigrid level on a structured box mesh of
 * quadrilaterals or hexahedra (Q1, constant sigma, Dirichlet data on the
 * whole boundary): every free row is an interior vertex with the same 3^dim
 * weights (level-stencil.c), so y = A x is the stencil swept over the grid
 * of interior vertices, neighbours on the boundary dropped.
 *
 * Why: the CSR level matrix moves 12 bytes per nonzero, 9 or 27 per row
 * (about 120 and 340 bytes per row with the vectors), and the smoother and
 * residual sweeps are bound by that traffic; the stencil reads x and writes
 * y (16 bytes per row; the neighbour lines stay in cache) for 2 x 3^dim
 * flops. The free rows are the interior vertices in grid order (the
 * problem numbers its free DoFs in DoF order), so a grid line of interior
 * vertices is a contiguous run of x and y.
 *
 * A row of a line reads the 3^(dim-1) neighbouring lines at offsets -1, 0,
 * +1 along it: the line's ends are done apart, the rest is a loop without
 * branches over the line, which the compiler vectorizes; lines go to the
 * context's threads whole. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/context.h"
#include "internal/error.h"
#include "disc/mesh.h"
#include "multigrid-impl.h"

typedef struct stencil_op {
  int dim, nthreads;
  fea_index m[3]; /* interior vertices per direction (1 beyond dim) */
  double w[27];   /* by offset, direction 0 fastest */
} stencil_op;

/* Below this many rows one thread does it (a team costs more than it saves). */
#define STENCIL_PARALLEL_MIN 20000
#define STENCIL_PI 3.14159265358979323846

/* y (+)= the line (j, k) of A x. */
static void line_apply(const stencil_op *so, const double *x, double *y, fea_index j, fea_index k,
                       int add) {
  const fea_index m0 = so->m[0], m1 = so->m[1], m2 = so->m[2];
  double *yl = y + (k * m1 + j) * m0;
  if (!add) memset(yl, 0, (size_t)m0 * sizeof *yl);
  const int planes = so->dim == 3 ? 3 : 1;
  for (int dz = 0; dz < planes; dz++) {
    const fea_index kk = so->dim == 3 ? k + dz - 1 : 0;
    if (kk < 0 || kk >= m2) continue;
    for (int dy = 0; dy < 3; dy++) {
      const fea_index jj = j + dy - 1;
      if (jj < 0 || jj >= m1) continue;
      const double *xl = x + (kk * m1 + jj) * m0;
      const double *w = so->w + 9 * dz + 3 * dy;
      const double wm = w[0], w0 = w[1], wp = w[2];
      if (m0 == 1) {
        yl[0] += w0 * xl[0];
        continue;
      }
      yl[0] += w0 * xl[0] + wp * xl[1];
      for (fea_index i = 1; i < m0 - 1; i++) yl[i] += wm * xl[i - 1] + w0 * xl[i] + wp * xl[i + 1];
      yl[m0 - 1] += wm * xl[m0 - 2] + w0 * xl[m0 - 1];
    }
  }
}

static fea_status stencil_apply(fea_operator *op, const double *x, double *y, int add) {
  const stencil_op *so = op->data;
  const fea_index lines = so->m[1] * so->m[2];
  const int parallel = op->num_free >= STENCIL_PARALLEL_MIN && so->nthreads > 1;
#pragma omp parallel for schedule(static) num_threads(so->nthreads) if (parallel)
  for (fea_index l = 0; l < lines; l++) line_apply(so, x, y, l % so->m[1], l / so->m[1], add);
  return FEA_SUCCESS;
}

static fea_status stencil_diagonal(const fea_operator *op, double *d) {
  const stencil_op *so = op->data;
  const double centre = so->w[so->dim == 3 ? 13 : 4];
  for (fea_index r = 0; r < op->num_free; r++) d[r] = centre;
  return FEA_SUCCESS;
}

static const fea_operator_impl stencil_impl = {
    .apply = stencil_apply,
    .diagonal = stencil_diagonal,
    .destroy = free,
};

/* The stencil's eigenvectors are the discrete sines prod_k sin(pi j_k i_k /
 * (m_k + 1)) (the weights are symmetric along each direction on a box), with
 * the eigenvalues sum_t w_t prod_k c_k^|d_k(t)|, c_k = cos(pi j_k / (m_k + 1)):
 * multilinear in the c_k, so the largest lies at a corner of the box of the
 * c_k's extremes +-cos(pi / (m_k + 1)), which the frequencies j_k = 1 and m_k
 * reach. 2^dim evaluations instead of a Lanczos run over the level. */
int fea_mg_stencil_operator_lambda_max(const fea_operator *op, int scaled, double *lambda_max) {
  if (op->impl != &stencil_impl) return 0;
  const stencil_op *so = op->data;
  const int T = so->dim == 3 ? 27 : 9;
  double best = -INFINITY;
  for (int corner = 0; corner < 1 << so->dim; corner++) {
    double c[3];
    for (int k = 0; k < so->dim; k++)
      c[k] = (corner >> k & 1 ? -1.0 : 1.0) * cos(STENCIL_PI / (double)(so->m[k] + 1));
    double lambda = 0.0;
    for (int t = 0; t < T; t++) {
      double f = so->w[t];
      for (int k = 0, r = t; k < so->dim; k++, r /= 3)
        if (r % 3 != 1) f *= c[k];
      lambda += f;
    }
    best = fmax(best, lambda);
  }
  *lambda_max = scaled ? best / so->w[T / 2] : best;
  return 1;
}

fea_status fea_mg_stencil_operator(fea_context *ctx, const fea_problem *pb, const double w[27],
                                   const double *rhs, fea_operator **out) {
  const fea_mesh *m = pb->space->mesh;
  stencil_op *so = calloc(1, sizeof *so);
  FEA_CHECK(so, ctx, FEA_ERR_OUT_OF_MEMORY, "no memory for a stencil operator");
  so->dim = m->dim;
  so->nthreads = ctx->nthreads > 0 ? ctx->nthreads : 1;
  const int T = m->dim == 3 ? 27 : 9;
  for (int k = 0; k < 3; k++) so->m[k] = k < m->dim ? m->n[k] - 1 : 1;
  memcpy(so->w, w, (size_t)T * sizeof *w);
  FEA_CALL(fea_operator_build_from_impl(ctx, pb, &stencil_impl, so, rhs, out));
  fea_operator_info *info = &(*out)->info;
  info->kind_run = FEA_OPERATOR_MATFREE_SUMFACT;
  info->strategy_run = FEA_UPDATE_SERIAL;
  snprintf(info->kernel, sizeof info->kernel,
           "multigrid stencil: %d-point Q1, %lld x %lld x %lld interior vertices", T,
           (long long)so->m[0], (long long)so->m[1], (long long)so->m[2]);
  info->memory_bytes += sizeof *so;
  info->flops_per_apply = 2.0 * T * (double)(*out)->num_free;
  info->bytes_per_apply = 16.0 * (double)(*out)->num_free;
  return FEA_SUCCESS;
}
