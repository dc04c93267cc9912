/* The memory a create or setup may use. Two kinds of bound:
 *
 * - hard ones, which the kernel enforces and which make malloc fail or the
 *   process be killed: RLIMIT_AS (minus the address space in use),
 *   RLIMIT_DATA (minus the data segment in use) and the cgroup memory limits
 *   of the process's cgroup and its ancestors (minus their usage);
 * - a soft one: the object's or the context's limit when the user set one,
 *   else MemAvailable, the kernel's estimate of what can be allocated
 *   without swapping (the machine's physical memory, which this used to be,
 *   counts what other processes hold).
 *
 * The budget is the least of them; a user limit above MemAvailable is
 * honoured (swap, memory about to be freed), one above a hard limit is not.
 * Every figure is read when a call needs it, not cached: usage changes. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "context.h"
#include "internal/error.h"
#include "memory-limit.h"

/* Values this large mean "no limit" (cgroup v1 writes 2^63 rounded to a page). */
#define UNLIMITED_FROM ((uint64_t)1 << 62)

static int read_u64_file(const char *path, uint64_t *v) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char buf[64] = "";
  int ok = fgets(buf, sizeof buf, f) != NULL;
  fclose(f);
  if (!ok) return 0;
  if (strncmp(buf, "max", 3) == 0) {
    *v = UINT64_MAX;
    return 1;
  }
  return sscanf(buf, "%" SCNu64, v) == 1;
}

/* A "Key:   N kB" line of a /proc status file, in bytes. */
static int read_kb_field(const char *path, const char *key, uint64_t *bytes) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char line[256];
  size_t klen = strlen(key);
  int found = 0;
  while (!found && fgets(line, sizeof line, f)) {
    uint64_t kb;
    if (strncmp(line, key, klen) == 0 && line[klen] == ':' &&
        sscanf(line + klen + 1, "%" SCNu64, &kb) == 1) {
      *bytes = kb * 1024u;
      found = 1;
    }
  }
  fclose(f);
  return found;
}

/* Walk dir/path and its ancestors up to dir; at each level limit_file minus
 * usage_file bounds what is left. */
static void walk_cgroup(const char *dir, const char *path, const char *limit_file,
                        const char *usage_file, uint64_t *best, char *source, size_t len) {
  char rel[1024];
  snprintf(rel, sizeof rel, "%s", path);
  for (;;) {
    char lim_path[1400], use_path[1400];
    snprintf(lim_path, sizeof lim_path, "%s%s/%s", dir, rel, limit_file);
    snprintf(use_path, sizeof use_path, "%s%s/%s", dir, rel, usage_file);
    uint64_t lim, use = 0;
    if (read_u64_file(lim_path, &lim) && lim < UNLIMITED_FROM) {
      read_u64_file(use_path, &use);
      uint64_t left = use < lim ? lim - use : 0;
      if (left < *best) {
        *best = left;
        if (source)
          snprintf(source, len, "%s: %" PRIu64 " bytes, %" PRIu64 " in use", lim_path, lim, use);
      }
    }
    char *slash = strrchr(rel, '/');
    if (!slash || rel[0] == '\0') break;
    *slash = '\0'; /* "/a/b" -> "/a" -> "" (the mount's root) */
  }
}

uint64_t fea_cgroup_remaining(const char *proc_cgroup, const char *sysfs, char *source,
                              size_t len) {
  uint64_t best = UINT64_MAX;
  FILE *f = fopen(proc_cgroup, "r");
  if (!f) return best;
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = '\0';
    /* "ID:CONTROLLERS:PATH"; cgroup v2 is "0::PATH". */
    char *c1 = strchr(line, ':');
    char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) continue;
    *c2 = '\0';
    const char *controllers = c1 + 1, *path = c2 + 1;
    if (strcmp(path, "/") == 0) path = "";
    char dir[1100];
    if (controllers[0] == '\0') {
      /* v2: the unified hierarchy, mounted alone or beside v1 ones. */
      const char *mounts[] = {"", "/unified"};
      for (int m = 0; m < 2; m++) {
        snprintf(dir, sizeof dir, "%s%s", sysfs, mounts[m]);
        walk_cgroup(dir, path, "memory.max", "memory.current", &best, source, len);
      }
    } else {
      /* v1: the memory controller, alone or co-mounted ("memory" in a list). */
      char list[256];
      snprintf(list, sizeof list, ",%s,", controllers);
      if (!strstr(list, ",memory,")) continue;
      snprintf(dir, sizeof dir, "%s/memory", sysfs);
      walk_cgroup(dir, path, "memory.limit_in_bytes", "memory.usage_in_bytes", &best, source, len);
    }
  }
  fclose(f);
  return best;
}

/* A soft rlimit minus what the process already uses of it. */
static void rlimit_bound(int resource, const char *name, const char *status_key,
                         fea_memory_budget *b) {
  struct rlimit rl;
  if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return;
  uint64_t used = 0;
  read_kb_field("/proc/self/status", status_key, &used);
  uint64_t lim = (uint64_t)rl.rlim_cur, left = used < lim ? lim - used : 0;
  if (left < b->bytes) {
    b->bytes = left;
    snprintf(b->source, sizeof b->source, "%s: %" PRIu64 " bytes, %" PRIu64 " in use", name, lim,
             used);
  }
}

void fea_memory_budget_get(const fea_context *ctx, uint64_t own_limit, fea_memory_budget *b) {
  uint64_t avail = 0;
  if (own_limit) {
    b->bytes = own_limit;
    snprintf(b->source, sizeof b->source, "the object's memory_limit_bytes");
  } else if (ctx && ctx->memory_limit) {
    b->bytes = ctx->memory_limit;
    snprintf(b->source, sizeof b->source, "fea_context_set_memory_limit()");
  } else if (read_kb_field("/proc/meminfo", "MemAvailable", &avail)) {
    b->bytes = avail;
    snprintf(b->source, sizeof b->source, "MemAvailable in /proc/meminfo");
  } else {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    b->bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
    snprintf(b->source, sizeof b->source, "the physical memory");
  }
  rlimit_bound(RLIMIT_AS, "RLIMIT_AS", "VmSize", b);
  rlimit_bound(RLIMIT_DATA, "RLIMIT_DATA", "VmData", b);
  char cg[sizeof b->source] = "";
  uint64_t left = fea_cgroup_remaining("/proc/self/cgroup", "/sys/fs/cgroup", cg, sizeof cg);
  if (left < b->bytes) {
    b->bytes = left;
    snprintf(b->source, sizeof b->source, "%s", cg);
  }
}

/* Reading the limits costs 20-40 us (/proc/meminfo, /proc/self/status, the
 * cgroup files; measured on the 2-core development VM), more than creating a
 * small vector. Requests below this size skip them: they cannot be the
 * sizes this budget exists to refuse, and a failing malloc still answers
 * FEA_ERR_OUT_OF_MEMORY. A limit the user set is compared with every request. */
#define READ_LIMITS_FROM (16.0 * 1024 * 1024)

fea_status fea_memory_require(const fea_context *ctx, uint64_t own_limit, double need,
                              const char *what) {
  const uint64_t user = own_limit ? own_limit : ctx ? ctx->memory_limit : 0;
  if (need < READ_LIMITS_FROM && (!user || need <= (double)user)) return FEA_SUCCESS;
  fea_memory_budget b;
  fea_memory_budget_get(ctx, own_limit, &b);
  FEA_CHECK(need <= (double)b.bytes, ctx, FEA_ERR_OUT_OF_MEMORY,
            "%s needs %.0f bytes but the memory limit is %" PRIu64 " bytes (%s)", what, need,
            b.bytes, b.source);
  return FEA_SUCCESS;
}
