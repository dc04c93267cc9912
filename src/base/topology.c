/* Topology facts and OpenMP thread binding through hwloc. */
#include <hwloc.h>
#include <omp.h>
#include <pthread.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal/error.h"
#include "topology.h"

static pthread_once_t topo_once = PTHREAD_ONCE_INIT;
static fea_topology topo_facts;
static int topo_error; /* hwloc errno when loading failed */

static void load_facts(void) {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) != 0) {
    topo_error = 1;
    return;
  }
  if (hwloc_topology_load(t) != 0) {
    topo_error = 1;
    hwloc_topology_destroy(t);
    return;
  }
  topo_facts.cores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  topo_facts.pus = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  topo_facts.numa_nodes = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  if (topo_facts.cores <= 0) topo_facts.cores = topo_facts.pus;
  if (topo_facts.numa_nodes <= 0) topo_facts.numa_nodes = 1;
  hwloc_obj_t pkg = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, 0);
  const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;
  if (!model) model = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t), "CPUModel");
  snprintf(topo_facts.cpu_model, sizeof topo_facts.cpu_model, "%s", model ? model : "unknown");
  hwloc_topology_destroy(t);
}

fea_status fea_topology_get(fea_topology *topo) {
  pthread_once(&topo_once, load_facts);
  FEA_CHECK(!topo_error, NULL, FEA_ERR_BACKEND, "hwloc could not load the machine topology");
  *topo = topo_facts;
  return FEA_SUCCESS;
}

/* Binds each thread of an OpenMP team; core < 0 means "every allowed PU". */
static fea_status bind_team(const fea_context *ctx, int nthreads, int unbind) {
  hwloc_topology_t t;
  FEA_CHECK(hwloc_topology_init(&t) == 0, ctx, FEA_ERR_BACKEND, "hwloc_topology_init failed");
  if (hwloc_topology_load(t) != 0) {
    hwloc_topology_destroy(t);
    return FEA_ERROR(ctx, FEA_ERR_BACKEND, "hwloc_topology_load failed");
  }
  int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
  hwloc_obj_type_t unit = ncores > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  if (ncores <= 0) ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
  hwloc_const_cpuset_t all = hwloc_topology_get_allowed_cpuset(t);
  int failed = 0, failed_errno = 0;
#pragma omp parallel num_threads(nthreads) reduction(+ : failed) reduction(max : failed_errno)
  {
    int me = omp_get_thread_num();
    hwloc_obj_t core = hwloc_get_obj_by_type(t, unit, (unsigned)(me % ncores));
    hwloc_const_cpuset_t set = unbind || !core ? all : core->cpuset;
    if (hwloc_set_cpubind(t, set, HWLOC_CPUBIND_THREAD) != 0) {
      failed += 1;
      failed_errno = errno;
    }
  }
  hwloc_topology_destroy(t);
  FEA_CHECK(!failed, ctx, FEA_ERR_BACKEND, "hwloc_set_cpubind failed for %d of %d threads: %s",
            failed, nthreads, strerror(failed_errno));
  return FEA_SUCCESS;
}

fea_status fea_topology_bind_omp_threads(const fea_context *ctx, int nthreads) {
  return bind_team(ctx, nthreads, 0);
}

fea_status fea_topology_unbind_omp_threads(const fea_context *ctx, int nthreads) {
  return bind_team(ctx, nthreads, 1);
}
