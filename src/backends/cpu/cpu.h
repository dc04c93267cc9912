/* Ops tables shared between the CPU backends. */
#ifndef FEA_BACKENDS_CPU_H
#define FEA_BACKENDS_CPU_H

#include "backend.h"

extern const struct fea_vector_ops fea_cpu_ref_vec_ops;
extern const struct fea_dense_ops fea_cpu_ref_dense_ops;
extern const struct fea_vector_ops fea_cpu_threads_vec_ops;

/* Values of one vector element size. */
size_t fea_cpu_elem_size(fea_precision prec);

#endif
