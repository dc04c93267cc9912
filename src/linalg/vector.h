/* The vector object as the library sees it. */
#ifndef FEA_INTERNAL_VECTOR_H
#define FEA_INTERNAL_VECTOR_H

#include <feaccel/vector.h>

#include "internal/object.h"

struct fea_vector {
  FEA_OBJECT_HEADER;
  fea_index n;
  fea_precision prec;
  void *data; /* n values of prec, in the backend's memory space */
};

/* The vector object and its operations on checked arguments (same
 * context, lengths and precisions as the public functions require), in
 * src/linalg/vector.c; fea_object_release frees a vector. */
fea_status fea_vec_create(fea_context *ctx, fea_index n, fea_precision prec, fea_vector **out);
fea_status fea_vec_write(fea_vector *v, fea_precision host_prec, const void *host);
fea_status fea_vec_read(const fea_vector *v, fea_precision host_prec, void *host);
fea_status fea_vec_set_all(fea_vector *v, double alpha);
fea_status fea_vec_copy(const fea_vector *x, fea_vector *y);
fea_status fea_vec_axpy(fea_vector *y, double alpha, const fea_vector *x);
fea_status fea_vec_scale(fea_vector *x, double alpha);
fea_status fea_vec_dot(const fea_vector *x, const fea_vector *y, double *result);
fea_status fea_vec_nrm2(const fea_vector *x, double *result);

#endif
