/* Groups of similar macro cells (Ruda et al. 2022, eq. (25)): two P1 macro
 * triangles have the same interior block C_i when their element stiffness
 * matrices agree up to a vertex permutation. The 2D P1 stiffness depends on
 * the angles only (K_ij = e_i . e_j / (4 area), e_i the edge opposite vertex
 * i), so similar triangles, mirror images included, match; the permutation
 * tells which vertex of a cell plays which vertex of its group's first
 * cell, and so the local order of its interior nodes. */
#include <math.h>

#include "macro-mesh.h"

void fea_ph_p1_stiffness(const double x[6], double k[9]) {
  double e[3][2];
  for (int i = 0; i < 3; i++) { /* edge opposite vertex i: from i + 1 to i + 2 */
    const int a = (i + 1) % 3, b = (i + 2) % 3;
    e[i][0] = x[2 * b] - x[2 * a];
    e[i][1] = x[2 * b + 1] - x[2 * a + 1];
  }
  const double area2 = fabs(e[2][0] * e[1][1] - e[2][1] * e[1][0]); /* |(x1 - x0) x (x2 - x0)| */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      k[3 * i + j] = (e[i][0] * e[j][0] + e[i][1] * e[j][1]) / (2 * area2);
}

int fea_ph_p1_match(const double k[9], const double ref[9], double tol, int perm[3]) {
  static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int p = 0; p < 6; p++) {
    double diff = 0;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++)
        diff = fmax(diff, fabs(k[3 * perms[p][i] + perms[p][j]] - ref[3 * i + j]));
    if (diff <= tol) {
      for (int i = 0; i < 3; i++) perm[i] = perms[p][i];
      return 1;
    }
  }
  return 0;
}
