/* Resource strings: "/family/name" plus optional ":key=value,key=value". */
#ifndef FEA_INTERNAL_RESOURCE_H
#define FEA_INTERNAL_RESOURCE_H

#include "internal/backend.h"

/* Split resource into its base ("/cpu/threads") and options. */
fea_status fea_resource_parse(const char *resource, char *base, size_t base_len,
                              fea_resource_opts *opts);
/* FEA_ERR_INVALID_ARG naming the first key not in the NULL-terminated list. */
fea_status fea_resource_check_keys(const fea_resource_opts *opts, const char *prefix,
                                   const char *const *accepted);
/* Integer option in [lo, hi]; *value untouched when the key is absent. */
fea_status fea_resource_opt_int(const fea_resource_opts *opts, const char *key, long lo, long hi,
                                long *value);

#endif
