#pragma once
// The trace clock: CLOCK_MONOTONIC in ns. On these machines the kernel clocksource is the TSC,
// so clock_gettime runs in the vDSO without a system call; bench_tracer measures its cost
// next to a raw rdtsc (BM_ClockMonotonic / BM_Rdtsc) to justify not calibrating a TSC clock.
#include <time.h>

#include <cstdint>

namespace llamp::tracer {

inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace llamp::tracer
