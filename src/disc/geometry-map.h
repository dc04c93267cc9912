/* The geometry map of one B-spline patch: x(xi) = sum_i R_i(xi) P_i over
 * the patch's own knot vectors, with R_i = N_i w_i / W for a NURBS map
 * (W = sum_j N_j w_j) and R_i = N_i for a B-spline map. Spaces that refine
 * the geometry evaluate it at their quadrature and Greville points. */
#ifndef FEA_INTERNAL_GEOMETRY_MAP_H
#define FEA_INTERNAL_GEOMETRY_MAP_H

#include <feaccel/space.h>

#include "bspline.h"
#include "internal/object.h"

typedef struct fea_geometry_map {
  int dim;
  fea_knots knots[3];
  fea_index n[3];  /* functions per direction (1 beyond dim) */
  double *points;  /* n0 n1 n2 x dim */
  double *weights; /* n0 n1 n2, or NULL (a B-spline map) */
} fea_geometry_map;

/* A map of dimension dim from the caller's descriptor (already copied in at
 * the library's size): every field checked, messages name the direction,
 * the point or the weight. */
fea_status fea_geometry_map_create(const fea_context *ctx, int dim, const fea_geometry_desc *d,
                                   fea_geometry_map **out);
fea_status fea_geometry_map_copy(const fea_context *ctx, const fea_geometry_map *g,
                                 fea_geometry_map **out);
void fea_geometry_map_free(fea_geometry_map *g);

/* Whether a and b (either may be NULL: the box) are the same map: both
 * NULL, or equal knots, points and weights. */
int fea_geometry_map_equal(const fea_geometry_map *a, const fea_geometry_map *b);

/* FEA_ERR_INVALID_ARG unless the space knots[0 .. dim) refine the map's. */
fea_status fea_geometry_map_check_refines(const fea_context *ctx, const fea_geometry_map *g,
                                          const fea_knots *knots);

/* The map at parameter xi: the point x (dim), the Jacobian J (J[a * dim + k]
 * = dx_a / dxi_k), the weight function W and its parameter gradient dW (1
 * and 0 for a B-spline map). span[k] is the map's knot span holding xi[k]
 * (fea_knots_find_span of knots[k]). */
void fea_geometry_map_eval(const fea_geometry_map *g, const fea_index span[3], const double xi[3],
                           double *x, double *J, double *W, double *dW);

/* A G+Smo XML file's patches (fea_geometry_file_read): each patch's arrays
 * are owned here, and desc points into them. */
typedef struct fea_geometry_patch {
  int dim;
  int id;                 /* the Geometry element's id attribute (-1 without) */
  double *knots[3];       /* owned */
  double *points;         /* owned: num_control_points x dim */
  double *weights;        /* owned, or NULL */
  fea_geometry_desc desc; /* complete, pointing into the arrays above */
} fea_geometry_patch;

/* One boundary side of a MultiPatch: patch is a position in the file's
 * patch list, side 0-based; name points into the file's names (or NULL). */
typedef struct fea_geometry_boundary_side {
  int patch;
  fea_patch_side side;
  const char *name;
} fea_geometry_boundary_side;

struct fea_geometry_file {
  FEA_OBJECT_HEADER;
  int count;
  fea_geometry_patch *patches;
  /* The first MultiPatch element's topology (all zero/NULL without one). */
  int num_members;
  int *members; /* its patches, positions in patches[], in its order */
  int num_interfaces;
  fea_geometry_interface *interfaces; /* full size, 0-based, positions */
  int num_boundary;
  fea_geometry_boundary_side *boundary;
  int num_names;
  char **names; /* owned: the name attributes of the boundary elements */
};

/* Parse the G+Smo XML text of `name` (data, size bytes) into file->patches
 * and the topology fields (src/disc/geometry-gismo.c); messages name `name`,
 * the patch or element and line. On failure nothing is left allocated. */
fea_status fea_geometry_gismo_parse(fea_context *ctx, const char *name, const char *data,
                                    size_t size, fea_geometry_file *file);
void fea_geometry_file_release(fea_geometry_file *file);

#endif
