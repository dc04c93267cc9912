/* The accuracy report of a direct solve (docs/multifrontal.md, "Accuracy"):
 * the pivot range of a factor, the rule that judges it, and the residual
 * of a solve against the assembled system. The multifrontal solver kind and
 * the multipatch solver (which adds its interface system's pivots) call it.
 *
 * Why pivots. A Cholesky pivot d_j = L_jj^2 is the Schur complement of its
 * DoF after the ones eliminated before it, so it lies between the extreme
 * eigenvalues of the matrix: lambda_min <= d_j <= lambda_max, and
 * max d / min d is a lower bound of the condition number, free once the
 * backends have folded each front's diagonal (CHOLMOD's rcond is the same
 * figure). It is a lower bound only: the last pivots of a nested-dissection
 * order see a near-null space spread over the whole domain, diluted by the
 * DoF count. The 1D Laplacian on n elements (Dirichlet ends, the tree
 * splitting at the middle) has pivots 2n (a leaf's first) down to 4 (the
 * root's, whose neighbours are eliminated), ratio 2/n, where its condition
 * number is cot^2(pi / 2n) ~ 0.4 n^2. All-Neumann -Laplace u + c u on a
 * unit box has its last pivot near c (the constant function's energy),
 * ratio about c / max a_ii, where its condition number is about that times
 * the DoF count.
 *
 * The rule. Rounding leaves each entry of a Schur complement an absolute
 * error of some eps times the magnitudes that were subtracted, which the
 * largest pivot bounds, accumulated over the eliminations before it: for
 * the constant near-null vector of an all-Neumann problem the last pivot
 * sums every row of the matrix, and its floor measured at 0.5 - 1 n eps of
 * the largest pivot (2D p = 3 with 121 - 4489 DoFs, 3D p = 2 with 512 -
 * 1728, c = 1e-20). With ratio = min d / max d, n the eliminated DoFs:
 *   - a pivot that is not positive, or NaN, was refused by potrf (the
 *     backends name it) or is refused here: FEA_ERR_NOT_POSDEF;
 *   - ratio < eps: the smallest pivot is below one rounding error of the
 *     largest, positive by chance, and the condition number exceeds 1/eps:
 *     singular to working precision, FEA_ERR_NOT_POSDEF as a negative pivot
 *     (and CG's p.Ap on the same system) would be;
 *   - ratio < max(sqrt(eps), n eps): the condition number exceeds
 *     1/sqrt(eps), so the solution may have lost more than half its digits,
 *     or the smallest pivot is within the rounding error n eliminations
 *     accumulate and may have none: a warning at FEA_LOG_WARN and
 *     stats.ill_conditioned. The setup succeeds: whether the digits are
 *     lost depends on the load (a smooth solution of a badly conditioned
 *     system may be fine). A pivot at the rounding floor (n eps) is
 *     positive or negative by chance, so such a system is refused or
 *     warned depending on the rounding of the BLAS in use.
 * Ordinary problems stay far from it: 2D and 3D Dirichlet problems keep a
 * ratio of 0.01 - 0.7 at every size (p = 1 .. 8); a 1D p = 1 problem
 * warns from 1.3e8 elements (2/n < sqrt(eps)).
 *
 * The residual. With desc.check_residual the solver multiplies the
 * solution by the reference assembled matrix (CSR, kept from setup): a
 * check independent of the factor. It reports the relative residual
 * ||b - A x||_2 / ||b||_2, which a backward-stable solve leaves near
 * eps ||A|| ||x|| / ||b|| <= eps cond(A): large for a badly conditioned
 * system even when the solve did all it could (the 1D p = 1 Laplacian:
 * 2.8e-11 at n = 1024, 1.2e-7 at n = 65536, growing like n^2), and the
 * normwise backward error ||b - A x||_inf / (||A||_inf ||x||_inf +
 * ||b||_inf), the smallest relative change of A and b that x solves
 * exactly, which a stable solve keeps near eps whatever the conditioning.
 * The backward error judges the solve: above sqrt(eps) it is logged at
 * FEA_LOG_WARN (the factor or a sweep went wrong); the conditioning is the
 * pivots' to judge. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal/error.h"
#include "internal/etree.h"
#include "internal/multifrontal.h"
#include "linalg/matrix.h"
#include "multifrontal-solver.h"

void fea_multifrontal_pivot_range_of(const fea_etree *t, const double *pivots,
                                     fea_multifrontal_pivot_range *r) {
  r->min = INFINITY;
  r->max = -INFINITY;
  r->min_node = -1;
  r->count = 0;
  for (fea_index n = 0; n < t->num_nodes; n++) {
    if (t->nodes[n].q == 0) continue;
    const double before = r->min;
    fea_multifrontal_pivots_merge(&r->min, &r->max, pivots[2 * n], pivots[2 * n + 1]);
    /* The first node that lowered it (or made it NaN) holds it. */
    if (r->min_node < 0 || (before == before && !(r->min == before))) r->min_node = n;
    r->count += t->nodes[n].q;
  }
}

void fea_multifrontal_node_name(const fea_etree *t, fea_index n, char *buf, size_t len) {
  const fea_etree_node *nd = &t->nodes[n];
  size_t u = (size_t)snprintf(buf, len, "tree node %lld (level %d, elements ", (long long)n,
                              nd->level);
  for (int k = 0; k < t->dim && u < len; k++)
    u += (size_t)snprintf(buf + u, len - u, "%s[%lld, %lld)", k ? " x " : "", (long long)nd->lo[k],
                          (long long)nd->hi[k]);
  if (u < len)
    snprintf(buf + u, len - u, ", q = %lld, r = %lld)", (long long)nd->q, (long long)nd->r);
}

double fea_multifrontal_warn_ratio(double count) {
  return fmax(sqrt(DBL_EPSILON), count * DBL_EPSILON);
}

fea_status fea_multifrontal_pivot_rule(fea_context *ctx, double min, double max, double count,
                                       const char *where, int *warned) {
  *warned = 0;
  if (count <= 0) return FEA_SUCCESS;
  FEA_CHECK(min > 0 && isfinite(max), ctx, FEA_ERR_NOT_POSDEF,
            "the factor is not positive definite: its smallest pivot L_jj^2 is %g, at %s", min,
            where);
  const double ratio = min / max, warn = fea_multifrontal_warn_ratio(count);
  FEA_CHECK(ratio >= DBL_EPSILON, ctx, FEA_ERR_NOT_POSDEF,
            "the factor is singular to working precision: its smallest pivot L_jj^2 = %.3g, at "
            "%s, is below one rounding error (DBL_EPSILON = %.3g) of its largest, %.3g (pivot "
            "ratio %.3g), so it is positive by chance: is some part of the domain without a "
            "Dirichlet or Robin side, its reaction term too small for double precision?",
            min, where, DBL_EPSILON, max, ratio);
  if (ratio < warn) {
    *warned = 1;
    fea_log(ctx, FEA_LOG_WARN,
            "the factor is ill-conditioned: its pivot ratio %.3g (smallest pivot %.3g at %s, "
            "largest %.3g) is below max(sqrt(DBL_EPSILON), %.0f eliminated DoFs x DBL_EPSILON) "
            "= %.3g: the condition number is at least %.3g, so the solution may have lost more "
            "than half its digits, or all of them where the smallest pivot is rounding error",
            ratio, min, where, max, count, warn, 1.0 / ratio);
  }
  return FEA_SUCCESS;
}

double fea_multifrontal_norm_inf(const fea_matrix *A) {
  double worst = 0;
  for (fea_index i = 0; i < A->rows; i++) {
    double row = 0;
    for (fea_index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; k++) row += fabs(A->values[k]);
    if (!(row <= worst)) worst = row;
  }
  return worst;
}

void fea_multifrontal_residual(const fea_matrix *A, double norm_a, fea_index nrhs, const double *b,
                               fea_index ldb, const double *x, fea_index ldx, double *R,
                               double *relative, double *backward) {
  const fea_index n = A->rows;
  *relative = *backward = 0;
  for (fea_index j = 0; j < nrhs; j++) {
    double *r = R + j * n;
    const double *bj = b + j * ldb, *xj = x + j * ldx;
    fea_csr_multiply_vector(A, xj, r);
    double rr = 0, bb = 0, rmax = 0, bmax = 0, xmax = 0;
    for (fea_index i = 0; i < n; i++) {
      r[i] = bj[i] - r[i];
      rr += r[i] * r[i];
      bb += bj[i] * bj[i];
      rmax = fmax(rmax, fabs(r[i]));
      bmax = fmax(bmax, fabs(bj[i]));
      xmax = fmax(xmax, fabs(xj[i]));
    }
    /* b = 0 has the solution 0: its absolute residual then. */
    double rel = bb > 0 ? sqrt(rr / bb) : sqrt(rr);
    double den = norm_a * xmax + bmax, bw = den > 0 ? rmax / den : rmax;
    if (!isfinite(rr) || !isfinite(xmax)) rel = bw = NAN; /* fmax drops a NaN */
    if (!(rel <= *relative)) *relative = rel;             /* a NaN stays */
    if (!(bw <= *backward)) *backward = bw;
  }
}

void fea_multifrontal_residual_rule(fea_context *ctx, double relative, double backward,
                                    int refined) {
  if (backward <= sqrt(DBL_EPSILON)) return;
  fea_log(ctx, FEA_LOG_WARN,
          "the solve is not backward stable: the solution's normwise backward error "
          "||b - A x|| / (||A|| ||x|| + ||b||) is %.3g%s (relative residual %.3g), above "
          "sqrt(DBL_EPSILON) = %.3g, so the factor or a substitution went wrong",
          backward, refined ? " after a step of iterative refinement" : "", relative,
          sqrt(DBL_EPSILON));
}

/* Hager's estimator with Higham's refinements (LAPACK's dlacon / dlacn2),
 * for a symmetric A: A^-T = A^-1, so one solve serves both directions. */
static double norm1(const double *v, fea_index n) {
  double s = 0;
  for (fea_index i = 0; i < n; i++) s += fabs(v[i]);
  return s;
}

static fea_index argmax_abs(const double *v, fea_index n) {
  fea_index j = 0;
  for (fea_index i = 1; i < n; i++)
    if (fabs(v[i]) > fabs(v[j])) j = i;
  return j;
}

/* xi := sign(y) (+1 at 0); whether it was that already. */
static int signs(const double *y, double *xi, fea_index n) {
  int same = 1;
  for (fea_index i = 0; i < n; i++) {
    const double s = y[i] >= 0 ? 1.0 : -1.0;
    same &= xi[i] == s;
    xi[i] = s;
  }
  return same;
}

fea_status fea_multifrontal_inverse_norm1(fea_index n, fea_multifrontal_solve_fn solve, void *data,
                                          double *work, double *est, int *solves) {
  double *x = work, *xi = work + n;
  *est = 0;
  *solves = 0;
  if (n == 0) return FEA_SUCCESS;
  for (fea_index i = 0; i < n; i++) x[i] = 1.0 / (double)n, xi[i] = 0;
  FEA_CALL(solve(data, x));
  ++*solves;
  *est = norm1(x, n);
  if (n == 1) return FEA_SUCCESS;
  signs(x, xi, n);
  memcpy(x, xi, (size_t)n * sizeof *x);
  FEA_CALL(solve(data, x));
  ++*solves;
  fea_index j = argmax_abs(x, n);
  for (int iter = 2; iter <= 5; iter++) {
    memset(x, 0, (size_t)n * sizeof *x);
    x[j] = 1.0;
    FEA_CALL(solve(data, x));
    ++*solves;
    const double old = *est;
    *est = norm1(x, n);
    if (signs(x, xi, n) || *est <= old) {
      if (*est < old) *est = old;
      break;
    }
    memcpy(x, xi, (size_t)n * sizeof *x);
    FEA_CALL(solve(data, x));
    ++*solves;
    const fea_index jold = j;
    j = argmax_abs(x, n);
    if (x[jold] == fabs(x[j])) break; /* dlacn2's test: no better column */
  }
  /* Higham's alternative vector, against the cases that fool the above. */
  for (fea_index i = 0; i < n; i++)
    x[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + (double)i / (double)(n - 1));
  FEA_CALL(solve(data, x));
  ++*solves;
  const double alt = 2.0 * norm1(x, n) / (3.0 * (double)n);
  if (alt > *est) *est = alt;
  return FEA_SUCCESS;
}

void fea_multifrontal_condition_rule(fea_context *ctx, double condition, int *warned) {
  if (!(condition > 1.0 / sqrt(DBL_EPSILON))) return;
  *warned = 1;
  fea_log(ctx, FEA_LOG_WARN,
          "the system is ill-conditioned: its 1-norm condition number is about %.3g (estimated "
          "from the factor), above 1 / sqrt(DBL_EPSILON) = %.3g, so the solution may have lost "
          "more than half its digits (about %.3g relative error at worst)",
          condition, 1.0 / sqrt(DBL_EPSILON), condition * DBL_EPSILON);
}
