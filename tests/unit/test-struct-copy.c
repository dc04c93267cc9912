/* fea_struct_copy_in/_out (src/base/struct-copy.c) across versions, with a
 * struct that has grown: version 1 ends at `b`, version 2 appended `c`. A
 * caller built against version 1 gets c's default on copy-in and nothing
 * written past its b on copy-out; sizes outside [v1, v2] are refused. */
#include <stddef.h>
#include <string.h>

#include <criterion/criterion.h>

#include "base/struct-copy.h"

typedef struct grown {
  size_t size;
  int a;
  double b; /* last field of version 1 */
  int c;    /* appended in version 2 */
} grown;

#define GROWN_INIT \
  { sizeof(grown), 1, 2.0, 3 }

static const fea_struct_type grown_type = {"grown", "GROWN_INIT", FEA_SIZE_THROUGH(grown, b),
                                           sizeof(grown)};

Test(struct_copy, older_caller_copy_in_takes_defaults) {
  grown user = {FEA_SIZE_THROUGH(grown, b), 10, 20.0, 99};
  grown d = GROWN_INIT;
  cr_assert_eq(fea_struct_copy_in(NULL, &d, &user, "desc", &grown_type), FEA_SUCCESS);
  cr_assert_eq(d.size, sizeof d);
  cr_assert_eq(d.a, 10);
  cr_assert_eq(d.b, 20.0);
  cr_assert_eq(d.c, 3, "a field beyond the caller's size was read");
}

Test(struct_copy, null_keeps_defaults) {
  grown d = GROWN_INIT;
  cr_assert_eq(fea_struct_copy_in(NULL, &d, NULL, "desc", &grown_type), FEA_SUCCESS);
  cr_assert_eq(d.a, 1);
}

Test(struct_copy, older_caller_copy_out_writes_prefix_only) {
  grown full = {sizeof(grown), 7, 8.0, 9};
  grown out;
  memset(&out, 0x5a, sizeof out);
  out.size = FEA_SIZE_THROUGH(grown, b);
  cr_assert_eq(fea_struct_copy_out(NULL, &out, &full, "stats", &grown_type), FEA_SUCCESS);
  cr_assert_eq(out.size, FEA_SIZE_THROUGH(grown, b), "the caller's size changed");
  cr_assert_eq(out.a, 7);
  cr_assert_eq(out.b, 8.0);
  const unsigned char *p = (const unsigned char *)&out;
  for (size_t i = FEA_SIZE_THROUGH(grown, b); i < sizeof out; i++)
    cr_assert_eq(p[i], 0x5a, "byte %zu past the caller's size written", i);
}

Test(struct_copy, sizes_outside_the_range_refused) {
  const size_t bad[] = {0, FEA_SIZE_THROUGH(grown, b) - 1, sizeof(grown) + 1};
  for (int k = 0; k < 3; k++) {
    grown user = GROWN_INIT, d = GROWN_INIT;
    user.size = bad[k];
    user.a = 42;
    cr_assert_eq(fea_struct_copy_in(NULL, &d, &user, "desc", &grown_type), FEA_ERR_INVALID_ARG);
    cr_assert_eq(d.a, 1, "dst written by a refused copy-in");
    cr_assert_eq(d.size, sizeof d);
    grown out;
    memset(&out, 0x5a, sizeof out);
    out.size = bad[k];
    cr_assert_eq(fea_struct_copy_out(NULL, &out, &user, "stats", &grown_type), FEA_ERR_INVALID_ARG);
    cr_assert_eq(out.size, bad[k]);
    cr_assert_eq(out.a, 0x5a5a5a5a, "written by a refused copy-out");
  }
}
