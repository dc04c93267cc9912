/* fea_backend_list(): what was built and what is usable here. */
#include <stdio.h>

#include "internal/backend.h"
#include "internal/error.h"
#include "base/size-checks.h"
#include "base/struct-copy.h"

fea_status fea_backend_list(fea_backend_info *infos, size_t capacity, size_t *count) {
  FEA_ENTRY();
  FEA_CHECK_NULL(count, NULL);
  FEA_CHECK(infos || capacity == 0, NULL, FEA_ERR_INVALID_ARG, "infos is NULL but capacity is %zu",
            capacity);
  size_t n;
  const fea_backend_entry *e = fea_backend_entries(&n);
  size_t stride = capacity ? infos[0].size : 0;
  if (capacity) FEA_CALL(fea_struct_check(NULL, infos, "infos[0]", &fea_struct_backend_info));
  /* capacity entries stride bytes apart must be one array, as everywhere a
   * count and a stride describe one (size-checks.h). */
  if (capacity)
    FEA_CALL(fea_size_check_span(NULL, "infos", "capacity * infos[0].size", (uint64_t)capacity,
                                 (uint64_t)stride, 0, 1, NULL));
  for (size_t i = 1; i < capacity && i < n; i++) {
    const fea_backend_info *bi = (const fea_backend_info *)((const char *)infos + i * stride);
    FEA_CHECK(bi->size == stride, NULL, FEA_ERR_INVALID_ARG,
              "infos[%zu].size is %zu but infos[0].size is %zu", i, bi->size, stride);
  }
  for (size_t i = 0; i < capacity && i < n; i++) {
    fea_backend_info full = FEA_BACKEND_INFO_INIT;
    snprintf(full.prefix, sizeof full.prefix, "%s", e[i].prefix);
    const struct fea_backend *b;
    const char *why;
    fea_status st = fea_backend_resolve(&e[i], &b, &why);
    /* A module that cannot be loaded was built but is not usable here. */
    full.built = st != FEA_ERR_UNSUPPORTED;
    if (!b) {
      snprintf(full.reason, sizeof full.reason, "%s", why);
    } else {
      full.priority = b->priority;
      full.usable = !b->probe || b->probe(full.reason, sizeof full.reason) == FEA_SUCCESS;
      if (full.usable) full.reason[0] = '\0';
    }
    fea_backend_info *out = (fea_backend_info *)((char *)infos + i * stride);
    (void)fea_struct_copy_out(NULL, out, &full, "infos[i]", &fea_struct_backend_info);
  }
  *count = n;
  return FEA_SUCCESS;
}
