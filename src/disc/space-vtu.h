/* Sampling a B-spline function for ParaView with fields computed per sample
 * (src/disc/space-vtu.c): what fea_space_write_vtu() writes, plus the
 * node fields a caller derives from the element's values there (the
 * stresses of an elasticity solution). */
#ifndef FEA_INTERNAL_SPACE_VTU_H
#define FEA_INTERNAL_SPACE_VTU_H

#include "space.h"

#define FEA_VTU_MAX_EXTRA 4

/* num_fields node fields beyond the function: names[f] with components[f]
 * values per sample, which sample() writes one after the other into out
 * (their sum) at point i of ev (tables filled) from the element's local
 * coefficients (local[c + ncomp j]). */
typedef struct fea_vtu_sampler {
  int num_fields;
  const char *names[FEA_VTU_MAX_EXTRA];
  int components[FEA_VTU_MAX_EXTRA];
  fea_status (*sample)(void *user, const fea_element_values *ev, int i, const double *local,
                       double *out);
  void *user;
} fea_vtu_sampler;

/* coeffs (num_dofs ncomp, interleaved) on B-spline space s (or a Lagrange
 * space of quadrilaterals or hexahedra: only the reference cell [0, 1]^d
 * and the element interface are used) sampled at
 * samples^dim points per element (2..16) into a VTU file of linear cells:
 * the node field `name` (ncomp components; 2 padded to 3 with a zero, so that
 * ParaView takes it as a vector), then the sampler's fields (extra may be
 * NULL). */
fea_status fea_space_bspline_write_vtu_fields(fea_space *s, const double *coeffs, int samples,
                                              const char *path, const char *name,
                                              const fea_vtu_sampler *extra);

#endif
