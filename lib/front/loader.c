/* libfeaccel.so.0's front: loads libfeaccel-core.so.0, which holds the whole
 * library, the first time a program calls a function that needs it.
 *
 * Why a front: the core links OpenBLAS, LAPACKE, libgomp and hwloc, whose
 * load-time constructors start thread pools and map their tables before
 * main(). A program that links libfeaccel but does not use it on a run (a
 * simulation code whose libfeaccel path is one option of many) paid that on
 * every start: 4.4 ms and 8.4 MiB of peak resident memory against 0.7 ms
 * and 1.0 MiB for a program that links nothing (bench/startup.c; 0.8 ms and
 * 1.0 MiB through the front). The front maps none of it until a function
 * needs the core; the version functions and destroying a NULL handle never
 * do. Every other call costs one pthread_once check and an indirect call.
 *
 * The core is looked for beside the front (dladdr: a build tree, a bundle
 * and an installed libdir keep the two side by side), else through the
 * dynamic linker's search path, and loaded RTLD_LOCAL: its symbols do not
 * join the global scope, so the program's calls keep going through the
 * front, and the core (linked -Bsymbolic-functions) binds its own calls to
 * itself. RTLD_LAZY, as the dynamic linker binds a library a program links:
 * binding every call of the core at once (RTLD_NOW) made the first use 1 ms
 * slower (5.4 against 4.7 ms). It is never unloaded. */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "front.h"

#ifndef FEA_CORE_FILE
#error "FEA_CORE_FILE (the core's soname) is set by lib/meson.build"
#endif

static pthread_once_t core_once = PTHREAD_ONCE_INIT;
static int core_ready;
static char core_failure[768];

static int core_beside_front(char *path, size_t len) {
  Dl_info info;
  if (!dladdr((void *)&fea_front_load, &info) || !info.dli_fname) return 0;
  const char *slash = strrchr(info.dli_fname, '/');
  if (!slash) return 0;
  const int n = snprintf(path, len, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname,
                         FEA_CORE_FILE);
  return n > 0 && (size_t)n < len && access(path, F_OK) == 0;
}

static void load_core(void) {
  char path[4096];
  if (!core_beside_front(path, sizeof path)) snprintf(path, sizeof path, "%s", FEA_CORE_FILE);
  void *core = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (!core) {
    snprintf(core_failure, sizeof core_failure,
             "libfeaccel.so cannot load its core " FEA_CORE_FILE ": %s", dlerror());
    return;
  }
  for (int k = 0; k < fea_front_count; k++) {
    void *fn = dlsym(core, fea_front_names[k]);
    if (!fn) {
      snprintf(core_failure, sizeof core_failure,
               "libfeaccel.so: its core %.400s has no %s (a core from another version?)", path,
               fea_front_names[k]);
      return;
    }
    memcpy(&fea_front_fn[k], &fn, sizeof fn); /* POSIX: dlsym's pointer may be a function's */
  }
  core_ready = 1;
}

int fea_front_load(void) {
  pthread_once(&core_once, load_core);
  return core_ready;
}

const char *fea_front_failure(void) { return core_ready ? "" : core_failure; }
