/* The memory readers of rss.h: one line of /proc/self/status each, and
 * glibc's malloc statistics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif

#include "rss.h"

/* The field ("VmRSS", "VmHWM") in bytes; -1 when absent or unreadable. */
static double status_bytes(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  double kib = -1;
  const size_t len = strlen(field);
  while (fgets(line, sizeof line, f))
    if (strncmp(line, field, len) == 0 && line[len] == ':') {
      kib = strtod(line + len + 1, NULL);
      break;
    }
  fclose(f);
  return kib < 0 ? -1 : kib * 1024.0;
}

double bench_rss_bytes(void) { return status_bytes("VmRSS"); }

double bench_rss_peak_bytes(void) { return status_bytes("VmHWM"); }

double bench_heap_bytes(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 m = mallinfo2();
  return (double)m.uordblks + (double)m.hblkhd;
#else
  return -1;
#endif
}
