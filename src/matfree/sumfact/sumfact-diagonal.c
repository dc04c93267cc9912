/* diag(K_e) by sum factorization. K_e = sum_k c_k (x)_j T_jk with T_jk = S_j
 * (1D stiffness) when j = k, else M_j (1D mass), so
 *   K_ii = sum_k c_k prod_j T_jk(i_j, i_j):
 * the diagonals of the 1D matrices, O(d nb). Called once per operator
 * (Jacobi), so it stays scalar. */
#include "sumfact.h"

void fea_sf_diagonal(const void *state, const fea_index *elems, int count, double *d,
                     double *scratch) {
  const fea_sf_state *s = state;
  const int nb = s->nb;
  for (int e = 0; e < count; e++) {
    fea_index idx[3];
    double c[3], SB[3][SF_MAX_N], SD[3][SF_MAX_N];
    fea_sf_element_index(s, elems[e], idx);
    fea_sf_geometry_factors(s, idx, c);
    for (int k = 0; k < 3; k++) {
      if (k >= s->dim) { /* a unit factor keeps the product loop uniform */
        SB[k][0] = 1.0, SD[k][0] = 0.0;
        continue;
      }
      int n = s->n[k];
      const double *M = s->tab[k] + idx[k] * 2 * n * n, *S = M + n * n;
      for (int a = 0; a < n; a++) SB[k][a] = M[a * n + a], SD[k][a] = S[a * n + a];
    }
    double *de = d + (size_t)e * nb;
    int i = 0;
    for (int a2 = 0; a2 < s->n[2]; a2++)
      for (int a1 = 0; a1 < s->n[1]; a1++)
        for (int a0 = 0; a0 < s->n[0]; a0++, i++) {
          double v = c[0] * SD[0][a0] * SB[1][a1] * SB[2][a2];
          if (s->dim > 1) v += c[1] * SB[0][a0] * SD[1][a1] * SB[2][a2];
          if (s->dim > 2) v += c[2] * SB[0][a0] * SB[1][a1] * SD[2][a2];
          de[i] = v;
        }
  }
}
