/* The Poisson problem object and the element forms. */
#ifndef FEA_INTERNAL_PROBLEM_H
#define FEA_INTERNAL_PROBLEM_H

#include <feaccel/problem.h>

#include "internal/object.h"
#include "quadrature.h"
#include "space.h"

struct fea_problem {
  FEA_OBJECT_HEADER;
  fea_space *space;      /* holds a reference */
  fea_problem_desc desc; /* complete: fields the caller's struct lacked take defaults */
  fea_quadrature quad;   /* element rule for the forms */
  fea_index num_free;
  fea_index *free_index; /* per DoF: its row in the reduced system, or -1 on the boundary;
                                 rows in DoF order (operator-matfree.c's runs rely on it) */
  double *dirichlet;     /* per DoF: the interpolant of g (used on boundary DoFs only) */
  /* Neumann and Robin sides: bit s of face_sides for side s (bit 6: a part
   * of a Gmsh mesh's boundary, desc.parts); B-spline rules have degree + 1
   * points in each direction along the side. */
  unsigned face_sides, robin_sides;
  fea_quadrature face_quad[3]; /* per fixed direction k: the rule over the other directions */
  /* Lagrange spaces: the facets with a natural condition (lagrange-faces.h),
   * NULL without any; and the problem's own copy of desc.parts (desc.parts
   * points to it, names resolved to tags), so that the caller's array may go. */
  struct fea_lagrange_faces *lfaces;
  fea_boundary_part *parts;
  /* Elasticity problems (fea_problem_create_elasticity): the problem's own
   * complete copy of the descriptor, its parts (if any) copied behind it in
   * the same block, parts[i] the condition of this problem's parts[i];
   * NULL for Poisson problems. Their element systems are forms-elastic.c's,
   * and face_sides marks the sides (bit 6: parts) with a traction,
   * pressure or spring, robin_sides those with a spring (a face term in the
   * matrix, which consumers that know only the scalar Robin terms refuse). */
  fea_elasticity_desc *elastic;
};

static inline int fea_problem_has_reaction(const fea_problem *pb) {
  return pb->desc.reaction_fn != NULL || pb->desc.reaction != 0.0;
}
static inline int fea_problem_has_faces(const fea_problem *pb) { return pb->face_sides != 0; }
static inline int fea_problem_has_robin(const fea_problem *pb) { return pb->robin_sides != 0; }

/* The problem on space with the complete, checked descriptor d (every
 * field present, .size = sizeof *d): src/disc/problem.c. Internal callers
 * copy a problem with fea_problem_build(pb->space, &pb->desc, &copy). */
fea_status fea_problem_build(fea_space *space, const fea_problem_desc *d, fea_problem **out);
/* The elasticity problem on space (ncomp = dim) with the complete, checked
 * descriptor e: d carries its rule (quad_points) and marks the loaded sides
 * Neumann (src/disc/problem.c). DoF (i, c) is fixed where a DISPLACEMENT
 * side holding function i fixes component c. */
fea_status fea_problem_build_elastic(fea_space *space, const fea_problem_desc *d,
                                     const fea_elasticity_desc *e, fea_problem **out);
/* fea_problem_create_elasticity()'s checks for the multipatch elasticity
 * problem (src/interface/api-elasticity.c): the caller's descriptor copied
 * into *d (defaults where it is shorter), the material for dimension dim,
 * one side's condition on space (`what` names it in the message). */
fea_status fea_elasticity_desc_copy_in(fea_context *ctx, const fea_elasticity_desc *desc,
                                       const char *what, fea_elasticity_desc *d);
fea_status fea_elasticity_check_material(fea_context *ctx, const fea_elasticity_desc *d, int dim);
fea_status fea_elasticity_check_condition(const fea_space *space, const fea_elastic_condition *bc,
                                          const char *what);
/* Element e's elasticity system ((nb ncomp)^2 and nb ncomp, interleaved)
 * at ev: the stiffness, the body force and the loads of its faces on
 * traction and pressure sides (src/disc/forms-elastic.c). */
fea_status fea_form_elastic_system(const fea_problem *pb, fea_index e, const fea_element_values *ev,
                                   double *Ke, double *fe);
/* lambda and mu at x (plane stress applied), checked: FEA_ERR_INVALID_ARG
 * naming x for a material that is not admissible there. */
fea_status fea_form_elastic_lame(const fea_problem *pb, const double *x, double *lambda,
                                 double *mu);
/* Voigt entries of a strain or stress: 6 in 3D (xx, yy, zz, yz, xz, xy), 3 in 2D (xx, yy, xy). */
#define FEA_VOIGT(dim) ((dim) == 3 ? 6 : 3)
/* Coordinate `which` (0 or 1) of Voigt entry k's pair in dim: xy is (0, 1). */
int fea_form_elastic_voigt_pair(int dim, int k, int which);
/* The Voigt elasticity tensor at x (FEA_VOIGT(dim)^2, row-major, engineering
 * shears): the user's C_fn, checked finite, symmetric and positive definite
 * (FEA_ERR_INVALID_ARG naming x), or the isotropic one of lambda and mu. */
fea_status fea_form_elastic_tensor(const fea_problem *pb, const double *x, double *C);
/* G (the rigid-body modes' Gram matrix on the spring sides: translations,
 * then rotations as api-elasticity.c orders them) = sum over the spring
 * faces of int k v_m . v_n ds; k checked at each point. Zero without springs. */
fea_status fea_form_elastic_spring_gram(const fea_problem *pb, double G[6][6]);
/* Names of the rigid-body modes (3 in 2D, 6 in 3D) that neither G (the modes'
 * Gram matrix at the fixed DoFs) nor S (the springs') removes, into
 * free_modes ("" when none is free); src/disc/forms-elastic.c. */
void fea_elastic_free_modes(int dim, const double G[6][6], const double S[6][6], char *free_modes,
                            size_t len);

/* Element forms at prepared basis values (ev from element_values on the
 * problem's rule). Ke row-major nb x nb; fe nb. sigma and f are checked:
 * a non-positive or non-finite sigma, or a non-finite f, is an error naming x. */
fea_status fea_form_stiffness_load(const fea_problem *pb, const fea_element_values *ev, double *Ke,
                                   double *fe);
/* Whether fea_form_element_system needs no basis tables where the space
 * fills the 1D factors, so that a caller of element_values may set
 * factors_only: the built-in forms of a 2D or 3D problem without a tensor
 * sigma, a reaction term or face terms (those still take the tables). */
int fea_form_factors_suffice(const fea_problem *pb);
/* The whole element system of element e: fea_form_stiffness_load at ev
 * (element_values of e on the problem's rule), then the Robin (alpha u v)
 * and Neumann / Robin load (h v) integrals of e's faces on such sides. Every
 * consumer of element systems calls this one. */
fea_status fea_form_element_system(const fea_problem *pb, fea_index e, const fea_element_values *ev,
                                   double *Ke, double *fe);
/* W[q] = w_q sigma(x_q), the stiffness weights of the isotropic Laplacian
 * at ev's points, sigma checked as fea_form_stiffness_load checks it: what
 * a device integrates from (the multifrontal solver's leaves on a GPU). */
fea_status fea_form_stiffness_weights(const fea_problem *pb, const fea_element_values *ev,
                                      double *W);
/* Ke (nb x nb) = the Robin terms alpha u v of element e's faces alone: zero
 * for an element without a face on a Robin side. */
fea_status fea_form_face_matrix(const fea_problem *pb, fea_index e, int nb, double *Ke);
fea_status fea_form_mass(const fea_element_values *ev, double *Me);
/* The coefficients at x, checked as the forms check them: A (dim x dim,
 * row-major: sigma I, sigma(x) I or the tensor A(x)) and the reaction c. */
fea_status fea_form_coefficients_at(const fea_problem *pb, const double *x, double *A, double *c);

/* The rule for a space: per direction degree + 1 + extra points (boxes), or
 * the simplex rule exact for the mass matrix plus extra. */
fea_status fea_problem_rule(const fea_space *s, int points, int extra, fea_quadrature *q);

/* On checked arguments (src/disc/problem-evaluate.c): element e's
 * stiffness and load (Ke, fe) and mass (Me) on the problem's rule, each
 * skipped when NULL; the full-DoF vector of a reduced solution; the L2
 * error and H1 seminorm error (unless h1_semi is NULL) of u_full. */
fea_status fea_problem_element_forms(const fea_problem *pb, fea_index e, double *Ke, double *fe,
                                     double *Me);
void fea_problem_expand(const fea_problem *pb, const double *u_free, double *u_full);
/* fea_problem_assemble_reference on checked arguments (src/disc/assemble-reference.c). */
fea_status fea_problem_reference_system(const fea_problem *pb, double *b, struct fea_matrix **A);
/* Make the DoFs with fixed[i] set Dirichlet as well, with the values
 * values[i], and number the free DoFs again in order (a patch of a
 * multipatch domain whose DoFs lie on a neighbour's Dirichlet side). */
void fea_problem_fix_dofs(fea_problem *pb, const unsigned char *fixed, const double *values);
/* The coefficient checks of fea_problem_create_poisson (sigma, quadrature,
 * reaction) on a complete descriptor (src/interface/api-problem.c). */
fea_status fea_problem_check_coefficients(fea_context *ctx, const fea_problem_desc *d);
/* The parts of d checked against the space's mesh boundary, by tag or name
 * (src/interface/api-problem.c): *resolved (malloc'ed, NULL without parts)
 * names each by tag. */
fea_status fea_problem_check_parts(const fea_space *space, const fea_problem_desc *d,
                                   fea_boundary_part **resolved);
/* The checks of one boundary condition; *robin = 1 for a Robin one. */
fea_status fea_problem_check_condition(fea_context *ctx, const fea_boundary_condition *bc,
                                       const char *what, int *robin);
fea_status fea_problem_norms(const fea_problem *problem, const double *u_full, fea_scalar_fn exact,
                             fea_gradient_fn exact_grad, void *user, double *l2, double *h1_semi);
/* Per component and together (ncomp + 1 entries each), on checked arguments. */
fea_status fea_problem_norms_vector(const fea_problem *problem, const double *u_full,
                                    fea_vector_fn exact, fea_vector_fn exact_grad, void *user,
                                    double *l2, double *h1_semi);

#endif
