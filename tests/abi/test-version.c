/* The headers a program is compiled with and the library it runs with agree. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <feaccel.h>

Test(version, run_time_matches_compile_time) {
  int major = -1, minor = -1, patch = -1;
  cr_assert_eq(fea_version(&major, &minor, &patch), FEA_SUCCESS);
  cr_expect_eq(major, FEA_VERSION_MAJOR);
  cr_expect_eq(minor, FEA_VERSION_MINOR);
  cr_expect_eq(patch, FEA_VERSION_PATCH);
  cr_expect_str_eq(fea_version_string(), FEA_VERSION_STRING);
  cr_expect_eq(FEA_VERSION_NUMBER, major * 10000 + minor * 100 + patch);
}

Test(version, string_is_the_three_numbers) {
  char expected[64];
  snprintf(expected, sizeof expected, "%d.%d.%d", FEA_VERSION_MAJOR, FEA_VERSION_MINOR,
           FEA_VERSION_PATCH);
  cr_expect_str_eq(fea_version_string(), expected);
}

Test(version, null_outputs_are_allowed) {
  int minor = -1;
  cr_assert_eq(fea_version(NULL, &minor, NULL), FEA_SUCCESS);
  cr_expect_eq(minor, FEA_VERSION_MINOR);
}
