/* The reduced right-hand side of a matrix-free operator: load minus the
 * lifting of the Dirichlet values, element by element, without a global
 * matrix. The global sums are those of the reference assembly in its
 * order. Serial: it runs once per operator.
 *
 * Only an element with a Dirichlet DoF needs its stiffness matrix (for the
 * lifting); every other element forms its load vector alone. Forming Ke
 * everywhere was 60-80 % of a matrix-free multigrid setup (3D Q2, 275k
 * DoFs, one core: the finest level's load), for matrices thrown away.
 *
 * Where the built-in forms need no basis tables (fea_form_factors_suffice)
 * the element values are asked for the 1D factors only: B-spline elements
 * and axis-aligned Lagrange box elements then skip the tables, and the
 * forms sum-factorize. The tables and Jacobians were the next half of that
 * setup. B-spline elements take the same tensor sums as the reference
 * assembly, so their b is the reference's bit for bit; a Lagrange box
 * element's sums run in another order than the reference's point-by-point
 * ones, so its b agrees with the reference's to rounding (a relative
 * difference below 1e-14 in norm, tests/unit/test-lagrange-factors.c).
 * Systems (elasticity, a vector element form) take the element's vector
 * DoFs in the reference's order and so its sums. */
#include <stdlib.h>
#include <string.h>

#include "internal/error.h"
#include "operator.h"
#include "disc/space.h"

fea_status fea_operator_matfree_rhs(const fea_problem *pb, double *b) {
  const fea_space *s = pb->space;
  /* Systems: the element's vector DoFs (nb ncomp, interleaved), as the
   * reference assembly lists them. */
  const int nb = fea_space_element_size(s);
  memset(b, 0, (size_t)pb->num_free * sizeof *b);
  fea_element_values ev;
  FEA_CALL(fea_element_values_alloc(s, &pb->quad, &ev));
  ev.factors_only = fea_form_factors_suffice(pb);
  double *Ke = malloc((size_t)nb * nb * sizeof *Ke), *fe = malloc((size_t)nb * sizeof *fe);
  fea_index *ed = malloc((size_t)nb * sizeof *ed);
  fea_status st = Ke && fe && ed ? FEA_SUCCESS
                                 : FEA_ERROR(pb->ctx, FEA_ERR_OUT_OF_MEMORY,
                                             "no memory for an element system of %d DoFs", nb);
  for (fea_index e = 0; e < s->num_elements && st == FEA_SUCCESS; e++) {
    fea_space_element_vdofs(s, e, ed);
    int lifted = 0;
    for (int j = 0; j < nb && !lifted; j++) lifted = pb->free_index[ed[j]] < 0;
    st = s->ops->element_values(s, e, &pb->quad, &ev);
    if (st == FEA_SUCCESS) st = fea_form_element_system(pb, e, &ev, lifted ? Ke : NULL, fe);
    if (st != FEA_SUCCESS) break;
    if (!lifted) {
      for (int i = 0; i < nb; i++) b[pb->free_index[ed[i]]] += fe[i];
      continue;
    }
    for (int i = 0; i < nb; i++) {
      fea_index r = pb->free_index[ed[i]];
      if (r < 0) continue;
      b[r] += fe[i];
      for (int j = 0; j < nb; j++)
        if (pb->free_index[ed[j]] < 0) b[r] -= Ke[i * nb + j] * pb->dirichlet[ed[j]];
    }
  }
  free(Ke);
  free(fe);
  free(ed);
  fea_element_values_free(&ev);
  return st;
}
