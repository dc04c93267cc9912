/* The memory budget (src/base/memory-limit.c): the cgroup reader against
 * fake /proc/self/cgroup and /sys/fs/cgroup trees (v1, v2, a limit on an
 * ancestor, no limit), and the rlimit bound in a child process whose
 * RLIMIT_AS is lowered, against the figures the kernel reports. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <feaccel.h>

#include "base/memory-limit.h"

static char root[64];

static void put(const char *rel, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  /* mkdir -p of the parent */
  for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
    *s = '\0';
    mkdir(path, 0700);
    *s = '/';
  }
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

static uint64_t remaining(char *source, size_t len) {
  char proc[600], sys[600];
  snprintf(proc, sizeof proc, "%s/proc-cgroup", root);
  snprintf(sys, sizeof sys, "%s/sys", root);
  return fea_cgroup_remaining(proc, sys, source, len);
}

static void fresh_root(void) {
  snprintf(root, sizeof root, "/tmp/fea-cgroup-XXXXXX");
  cr_assert_not_null(mkdtemp(root));
}

static void drop_root(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  cr_assert_eq(system(cmd), 0);
}

Test(memory_limit, cgroup_v2_leaf_and_ancestor) {
  fresh_root();
  put("proc-cgroup", "0::/user.slice/job\n");
  put("sys/user.slice/job/memory.max", "max\n");
  put("sys/user.slice/job/memory.current", "1000\n");
  put("sys/user.slice/memory.max", "1000000\n");
  put("sys/user.slice/memory.current", "250000\n");
  char src[160] = "";
  cr_assert_eq(remaining(src, sizeof src), 750000);
  cr_assert(strstr(src, "user.slice/memory.max") != NULL, "%s", src);
  /* A tighter leaf wins. */
  put("sys/user.slice/job/memory.max", "5000\n");
  cr_assert_eq(remaining(src, sizeof src), 4000);
  /* Usage above the limit leaves nothing, not a wrapped-around figure. */
  put("sys/user.slice/job/memory.current", "9000\n");
  cr_assert_eq(remaining(src, sizeof src), 0);
  drop_root();
}

Test(memory_limit, cgroup_v1_memory_controller) {
  fresh_root();
  put("proc-cgroup", "5:cpu,cpuacct:/a\n4:memory:/process_api/x\n0::/\n");
  put("sys/memory/process_api/x/memory.limit_in_bytes", "9223372036854771712\n");
  put("sys/memory/process_api/x/memory.usage_in_bytes", "100\n");
  char src[160] = "";
  cr_assert_eq(remaining(src, sizeof src), UINT64_MAX, "2^63 rounded down means no limit");
  put("sys/memory/process_api/memory.limit_in_bytes", "4096\n");
  put("sys/memory/process_api/memory.usage_in_bytes", "96\n");
  cr_assert_eq(remaining(src, sizeof src), 4000);
  cr_assert(strstr(src, "memory.limit_in_bytes") != NULL, "%s", src);
  drop_root();
}

Test(memory_limit, no_cgroup_files) {
  fresh_root();
  put("proc-cgroup", "0::/nowhere\n");
  char src[160] = "";
  cr_assert_eq(remaining(src, sizeof src), UINT64_MAX);
  drop_root();
}

/* In a child with RLIMIT_AS lowered to 1 GiB above what it maps now, the
 * budget is at most that headroom and a 2 GiB vector is refused naming
 * RLIMIT_AS. Sanitizer builds map terabytes of shadow memory and cannot
 * run under an address-space limit: the test skips there. */
Test(memory_limit, rlimit_as_bounds_the_budget) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  cr_skip_test("sanitizers reserve address space that RLIMIT_AS would count");
#endif
  pid_t pid = fork();
  cr_assert_geq(pid, 0);
  if (pid == 0) {
    fea_context *ctx = NULL;
    if (fea_context_create("/cpu/ref", &ctx) != FEA_SUCCESS) _exit(10);
    fea_memory_budget before;
    fea_memory_budget_get(ctx, 0, &before);
    FILE *f = fopen("/proc/self/status", "r");
    unsigned long long vm_kb = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f))
      if (sscanf(line, "VmSize: %llu kB", &vm_kb) == 1) break;
    if (f) fclose(f);
    const uint64_t headroom = 1ull << 30, cap = vm_kb * 1024ull + headroom;
    struct rlimit rl = {cap, cap};
    if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(11);
    uint64_t limit = 0;
    if (fea_context_get_memory_limit(ctx, &limit) != FEA_SUCCESS) _exit(12);
    if (limit > headroom || limit < headroom / 2) _exit(13);
    fea_vector *v = NULL;
    if (fea_vector_create(ctx, (fea_index)1 << 28, FEA_F64, &v) != FEA_ERR_OUT_OF_MEMORY) _exit(14);
    if (!strstr(fea_context_last_error(ctx), "RLIMIT_AS")) _exit(15);
    fea_context_destroy(&ctx);
    _exit(0);
  }
  int status = 0;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed at check %d",
            WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* The context's limit replaces MemAvailable and is read back. */
Test(memory_limit, context_limit) {
  fea_context *ctx = NULL;
  cr_assert_eq(fea_context_create("/cpu/ref", &ctx), FEA_SUCCESS);
  cr_assert_eq(fea_context_set_memory_limit(ctx, 12345), FEA_SUCCESS);
  uint64_t limit = 0;
  cr_assert_eq(fea_context_get_memory_limit(ctx, &limit), FEA_SUCCESS);
  cr_assert_eq(limit, 12345);
  fea_vector *v = NULL;
  cr_assert_eq(fea_vector_create(ctx, 2000, FEA_F64, &v), FEA_ERR_OUT_OF_MEMORY);
  cr_assert(strstr(fea_context_last_error(ctx), "16000 bytes but the memory limit is 12345") !=
                NULL,
            "%s", fea_context_last_error(ctx));
  cr_assert_eq(fea_vector_create(ctx, 1000, FEA_F64, &v), FEA_SUCCESS);
  cr_assert_eq(fea_vector_destroy(&v), FEA_SUCCESS);
  cr_assert_eq(fea_context_set_memory_limit(ctx, 0), FEA_SUCCESS);
  cr_assert_eq(fea_context_get_memory_limit(ctx, &limit), FEA_SUCCESS);
  cr_assert_gt(limit, 12345);
  cr_assert_eq(fea_context_set_memory_limit(NULL, 1), FEA_ERR_INVALID_ARG);
  cr_assert_eq(fea_context_get_memory_limit(ctx, NULL), FEA_ERR_INVALID_ARG);
  cr_assert_eq(fea_context_destroy(&ctx), FEA_SUCCESS);
}
