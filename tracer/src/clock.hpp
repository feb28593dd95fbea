#pragma once
// The trace clock: nanoseconds on CLOCK_MONOTONIC's scale.
//
// Reading CLOCK_MONOTONIC (vDSO) costs ~24 ns here, rdtsc ~10 ns (bench_tracer's BM_ClockMonotonic
// and BM_Rdtsc), and a traced call reads the clock twice. So when the kernel itself trusts the
// TSC (invariant TSC, clocksource "tsc"), timestamps are rdtsc scaled by a rate calibrated
// against CLOCK_MONOTONIC over MPI_Init (>= 50 ms: rate error ~1e-6) and anchored at its end.
// LLAMP_TRACE_CLOCK=monotonic turns this off. Before calibration, clock_gettime is used.
#include <time.h>
#include <x86intrin.h>

#include <atomic>
#include <cstdint>

namespace llamp::tracer {

inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

struct TscClock {
  std::atomic<bool> ready{false};
  uint64_t anchor_tsc = 0;
  uint64_t anchor_ns = 0;
  double ns_per_tick = 0;
};
extern TscClock g_tsc;

inline uint64_t now_ns() {
  if (g_tsc.ready.load(std::memory_order_acquire)) {
    const int64_t ticks = static_cast<int64_t>(__rdtsc() - g_tsc.anchor_tsc);
    return g_tsc.anchor_ns +
           static_cast<uint64_t>(static_cast<int64_t>(static_cast<double>(ticks) * g_tsc.ns_per_tick));
  }
  return monotonic_ns();
}

// Calibration: start() early in init, finish() at its end (waits until 50 ms have passed).
// finish() returns the clock's description for meta.json.
void tsc_calibration_start();
const char* tsc_calibration_finish();

}  // namespace llamp::tracer
