/* Resource strings: "/family/name" plus optional ":key=value,key=value"
 * (the grammar: src/base/resource.c, docs/backends.md). */
#ifndef FEA_INTERNAL_RESOURCE_H
#define FEA_INTERNAL_RESOURCE_H

#include "internal/backend.h"

/* Split resource into its base ("/cpu/threads") and options; on
 * FEA_ERR_INVALID_ARG base is untouched and opts holds no option. */
fea_status fea_resource_parse(const char *resource, char *base, size_t base_len,
                              fea_resource_opts *opts);
/* The options against a backend's NULL-terminated list of specs (its
 * fea_backend.options): "key" takes any value, "key=a|b" one of the words,
 * "key=LO..HI" an integer in range, "key=LO.." one of at least LO.
 * FEA_ERR_INVALID_ARG naming the first key not listed, or the first option
 * whose value does not meet its spec. */
fea_status fea_resource_check_keys(const fea_resource_opts *opts, const char *prefix,
                                   const char *const *accepted);
/* Whether every key of opts is in the list (values not looked at). */
int fea_resource_knows_keys(const fea_resource_opts *opts, const char *const *accepted);
/* Integer option in [lo, hi]; *value untouched when the key is absent. */
fea_status fea_resource_opt_int(const fea_resource_opts *opts, const char *key, long lo, long hi,
                                long *value);

#endif
