/* Run-time version, compiled from the same meson project version as the
 * FEA_VERSION_* macros in feaccel/version.h. */
#include <feaccel/version.h>

fea_status fea_version(int *major, int *minor, int *patch) {
  if (major) *major = FEA_VERSION_MAJOR;
  if (minor) *minor = FEA_VERSION_MINOR;
  if (patch) *patch = FEA_VERSION_PATCH;
  return FEA_SUCCESS;
}

const char *fea_version_string(void) { return FEA_VERSION_STRING; }
