/* Stresses of an elasticity solution: the stress tensor and the von Mises
 * stress at points of the space's elements, at points a caller names, and
 * sampled into a VTU file with the displacement (src/disc/elastic-stress.c). */
#ifndef FEA_INTERNAL_ELASTIC_STRESS_H
#define FEA_INTERNAL_ELASTIC_STRESS_H

#include "problem.h"

/* Values per point of a stress: xx, yy, zz, yz, xz, xy (Voigt order). */
#define FEA_STRESS_COMPONENTS 6

/* At point i of ev (element values with tables) with the element's local
 * coefficients (local[c + ncomp j]): the displacement (dim values, unless
 * NULL), the stress (6, Voigt; in 2D zz from the model, yz = xz = 0) and
 * the von Mises stress (unless NULL). The material is checked at the point
 * as the forms check it. */
fea_status fea_elastic_stress_at(const fea_problem *pb, const fea_element_values *ev, int i,
                                 const double *local, double *u, double *stress, double *vm);

/* fea_problem_evaluate_stress() on checked arguments: points are the
 * patch's parameters on B-spline spaces, physical coordinates on Lagrange
 * spaces. */
fea_status fea_elastic_stress_points(const fea_problem *pb, const double *u_full, fea_index npts,
                                     const double *points, double *x, double *u, double *stress,
                                     double *vm);

/* fea_problem_write_vtu() of an elasticity problem on a B-spline space or
 * a Lagrange space of quadrilaterals or hexahedra: the displacement (3 components), the stress (6, ParaView's order) and
 * the von Mises stress at the samples. */
fea_status fea_elastic_write_vtu(const fea_problem *pb, const double *u_full, int samples,
                                 const char *path);

#endif
