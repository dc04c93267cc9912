/* diag(K_e) by sum factorization. With phi_i = prod_j psi_{i_j}(xi_j) and
 * tensor weights w_q = prod_j w_j(q_j),
 *   K_ii = sum_k c_k sum_q w_q (d_k phi_i(q))^2
 *        = sum_k c_k prod_j S_jk(i_j),  S_jk(a) = sum_{q_j} w_j(q_j) T_jk(q_j, a)^2,
 * T_jk = D_j when j = k, else B_j: the squares factor over the directions,
 * so the diagonal costs O(d (p+1) n_q) per direction plus O(d nb). Called
 * once per operator (Jacobi), so it stays scalar. */
#include "sumfact.h"

void sf_diagonal(const void *state, const fea_index *elems, int count, double *d,
                 double *scratch) {
  const sf_state *s = state;
  const int nb = s->nb;
  for (int e = 0; e < count; e++) {
    fea_index idx[3];
    double c[3], SB[3][SF_MAX_N], SD[3][SF_MAX_N];
    sf_element_index(s, elems[e], idx);
    sf_geometry_factors(s, idx, c);
    for (int k = 0; k < 3; k++) {
      if (k >= s->dim) { /* a unit factor keeps the product loop uniform */
        SB[k][0] = 1.0, SD[k][0] = 0.0;
        continue;
      }
      int n = s->n[k], nq = s->nq[k];
      const double *B = s->tab[k] + idx[k] * 2 * nq * n, *D = B + nq * n;
      for (int a = 0; a < n; a++) {
        double sb = 0.0, sd = 0.0;
        for (int q = 0; q < nq; q++) {
          sb += s->w1[k][q] * B[q * n + a] * B[q * n + a];
          sd += s->w1[k][q] * D[q * n + a] * D[q * n + a];
        }
        SB[k][a] = sb, SD[k][a] = sd;
      }
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
