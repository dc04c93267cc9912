/* Which values are the library's own statuses (src/base/names.c), for the
 * boundaries where a status comes from the user's code. */
#ifndef FEA_INTERNAL_NAMES_H
#define FEA_INTERNAL_NAMES_H

#include <feaccel/types.h>

/* Whether status is a value of the fea_status enum (fea_status_string()
 * has a name for it), not some other int. */
int fea_status_is_named(fea_status status);

#endif
