/* Q at one quadrature point (qp.h) from J = dx/dr, the NURBS weight W and its
 * gradient dW = dW/dr, the coefficient A (row-major, symmetric), the
 * reaction c and the rule's weight wq. Written once for any arithmetic
 * type: the includer defines
 *   QPM_T     double, or a lane vector type
 *   QPM_FN(f) the name to give this instance
 *   QPM_ATTR  the function's attributes (static inline, a target)
 * and includes this file; every operation is elementwise, so one body
 * serves the setup's doubles and the kernels' lanes. */
QPM_ATTR void QPM_FN(fea_sf_qp_metric)(int dim, int value, const QPM_T *J, const QPM_T *Wp,
                                       const QPM_T *dW, const QPM_T *A, const QPM_T *cp,
                                       const QPM_T *wqp, QPM_T *Q, QPM_T *det_out) {
  /* The scalars by address: a lane vector passed by value would take
   * another calling convention in a file built without AVX. */
  const QPM_T W = *Wp, c = *cp, wq = *wqp;
  QPM_T Ji[9], det;
  if (dim == 1) {
    det = J[0];
    Ji[0] = 1.0 / det;
  } else if (dim == 2) {
    det = J[0] * J[3] - J[1] * J[2];
    const QPM_T r = 1.0 / det;
    Ji[0] = J[3] * r, Ji[1] = -J[1] * r, Ji[2] = -J[2] * r, Ji[3] = J[0] * r;
  } else {
    const QPM_T c0 = J[4] * J[8] - J[5] * J[7], c1 = J[5] * J[6] - J[3] * J[8],
                c2 = J[3] * J[7] - J[4] * J[6];
    det = J[0] * c0 + J[1] * c1 + J[2] * c2;
    const QPM_T r = 1.0 / det;
    Ji[0] = c0 * r, Ji[1] = (J[2] * J[7] - J[1] * J[8]) * r;
    Ji[2] = (J[1] * J[5] - J[2] * J[4]) * r, Ji[3] = c1 * r;
    Ji[4] = (J[0] * J[8] - J[2] * J[6]) * r, Ji[5] = (J[2] * J[3] - J[0] * J[5]) * r;
    Ji[6] = c2 * r, Ji[7] = (J[1] * J[6] - J[0] * J[7]) * r;
    Ji[8] = (J[0] * J[4] - J[1] * J[3]) * r;
  }
  *det_out = det;
  const QPM_T wd = wq * det;
  /* G = J^-1 A J^-T w det: B = J^-1 A first (row a of J^-1 times A). */
  QPM_T B[9], G[9];
  for (int a = 0; a < dim; a++)
    for (int j = 0; j < dim; j++) {
      QPM_T s = Ji[a * dim] * A[j];
      for (int i = 1; i < dim; i++) s += Ji[a * dim + i] * A[i * dim + j];
      B[a * dim + j] = s;
    }
  for (int a = 0; a < dim; a++)
    for (int b = a; b < dim; b++) {
      QPM_T s = B[a * dim] * Ji[b * dim];
      for (int j = 1; j < dim; j++) s += B[a * dim + j] * Ji[b * dim + j];
      G[a * dim + b] = s * wd;
    }
  if (!value) {
    int k = 0;
    for (int a = 0; a < dim; a++)
      for (int b = a; b < dim; b++) Q[k++] = G[a * dim + b];
    return;
  }
  const QPM_T r = 1.0 / W, r2 = r * r;
  QPM_T Gd[3], dGd = 0.0 * W;
  for (int a = 0; a < dim; a++) {
    QPM_T s = 0.0 * W;
    for (int b = 0; b < dim; b++) s += G[a <= b ? a * dim + b : b * dim + a] * dW[b];
    Gd[a] = s;
    dGd += s * dW[a];
  }
  int k = 0;
  Q[k++] = (dGd * r2 + c * wd) * r2;
  for (int a = 0; a < dim; a++) Q[k++] = -Gd[a] * r2 * r;
  for (int a = 0; a < dim; a++)
    for (int b = a; b < dim; b++) Q[k++] = G[a * dim + b] * r2;
}
