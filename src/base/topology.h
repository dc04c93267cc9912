/* Machine topology from hwloc, and thread binding. */
#ifndef FEA_INTERNAL_TOPOLOGY_H
#define FEA_INTERNAL_TOPOLOGY_H

#include <feaccel/context.h>

#include "internal/private-export.h"

typedef struct fea_topology {
  int cores, pus, numa_nodes;
  char cpu_model[128];
} fea_topology;

/* Facts are read once per process and cached; they do not change. */
FEA_PRIVATE_EXPORT fea_status fea_topology_get(fea_topology *topo);

/* Bind OpenMP thread i of a team of nthreads to core i (round robin over cores).
 * Binding is a property of the process's OpenMP threads, not of the context. */
fea_status fea_topology_bind_omp_threads(const fea_context *ctx, int nthreads);

/* Undo fea_topology_bind_omp_threads: let the threads run on every allowed PU. */
fea_status fea_topology_unbind_omp_threads(const fea_context *ctx, int nthreads);

#endif
