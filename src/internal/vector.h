/* The vector object as the library sees it. */
#ifndef FEA_INTERNAL_VECTOR_H
#define FEA_INTERNAL_VECTOR_H

#include <feaccel/vector.h>

struct fea_vector {
  fea_context *ctx;   /* holds a reference */
  fea_index n;
  fea_precision prec;
  void *data;         /* n values of prec, in the backend's memory space */
};

#endif
