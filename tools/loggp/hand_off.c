#include "hand_off.h"

#include <stdlib.h>
#include <time.h>

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Spins until the line holds `want`; 0, or -1 once timeout_ns passed (the clock is read every
 * 1 Ki spins, ~1 us, so a party that answers at once is timed without it, and a short timeout
 * holds to within a microsecond). */
static int wait_for(int64_t *counter, int64_t want, int64_t timeout_ns) {
  const int64_t deadline = monotonic_ns() + timeout_ns;
  unsigned spins = 0;
  while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) != want) {
    if (++spins == 1024u) {
      spins = 0;
      if (monotonic_ns() > deadline) return -1;
    }
  }
  return 0;
}

static int compare_doubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double llamp_hand_off_ping(llamp_hand_off_line *line, int blocks, int round_trips, int64_t timeout_ns,
                           double *block_ns) {
  int64_t i = 0;
  for (int b = 0; b <= blocks; ++b) {
    const int64_t start = monotonic_ns();
    for (int k = 0; k < round_trips; ++k, ++i) {
      __atomic_store_n(&line->counter, 2 * i + 1, __ATOMIC_RELEASE);
      if (wait_for(&line->counter, 2 * i + 2, timeout_ns) != 0) return -1;
    }
    if (b > 0) block_ns[b - 1] = (double)(monotonic_ns() - start) / (2.0 * round_trips);
  }
  qsort(block_ns, (size_t)blocks, sizeof block_ns[0], compare_doubles);
  return block_ns[blocks / 2];
}

int llamp_hand_off_pong(llamp_hand_off_line *line, int blocks, int round_trips, int64_t timeout_ns) {
  const int64_t total = (int64_t)(blocks + 1) * round_trips;
  for (int64_t i = 0; i < total; ++i) {
    if (wait_for(&line->counter, 2 * i + 1, timeout_ns) != 0) return -1;
    __atomic_store_n(&line->counter, 2 * i + 2, __ATOMIC_RELEASE);
  }
  return 0;
}
