/* Randomized exponential backoff, shared by CAS and TSX: after the k-th
 * consecutive failure wait a random number of pauses below 2^min(k+2, 12),
 * so that threads that collided do not collide again in lockstep. */
#include "assembly/conc.h"

void fea_conc_backoff(uint64_t *rng, int k) {
  /* xorshift64: per-thread state, no shared generator to contend on */
  uint64_t x = *rng ? *rng : 0x9e3779b97f4a7c15u;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  *rng = x;
  int shift = k + 2 < 12 ? k + 2 : 12;
  uint64_t n = x & ((UINT64_C(1) << shift) - 1);
  for (uint64_t i = 0; i < n; i++) fea_conc_pause();
}
