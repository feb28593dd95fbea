#include "clock.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace llamp::tracer {

TscClock g_tsc;

namespace {
uint64_t start_tsc = 0, start_ns = 0;

// The kernel's own verdict: it only uses the TSC as clocksource when it is invariant and
// synchronized across CPUs.
bool tsc_trusted() {
  const char* mode = std::getenv("LLAMP_TRACE_CLOCK");
  if (mode && std::strcmp(mode, "monotonic") == 0) return false;
  std::ifstream src("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  std::string source;
  if (!(src >> source) || source != "tsc") return false;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0)
      return line.find(" constant_tsc") != std::string::npos && line.find(" nonstop_tsc") != std::string::npos;
  return false;
}

// (tsc, ns) read as close together as possible: the pair with the shortest bracket of 5.
void sample(uint64_t& tsc, uint64_t& ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    const uint64_t a = __rdtsc();
    const uint64_t t = monotonic_ns();
    const uint64_t b = __rdtsc();
    if (b - a < best) {
      best = b - a;
      tsc = a + (b - a) / 2;
      ns = t;
    }
  }
}
}  // namespace

void tsc_calibration_start() { sample(start_tsc, start_ns); }

const char* tsc_calibration_finish() {
  if (!tsc_trusted()) return "CLOCK_MONOTONIC";
  uint64_t tsc = 0, ns = 0;
  sample(tsc, ns);
  if (ns - start_ns < 50000000) {
    usleep(static_cast<useconds_t>((50000000 - (ns - start_ns)) / 1000 + 1));
    sample(tsc, ns);
  }
  if (tsc <= start_tsc) return "CLOCK_MONOTONIC";
  g_tsc.ns_per_tick = static_cast<double>(ns - start_ns) / static_cast<double>(tsc - start_tsc);
  g_tsc.anchor_tsc = tsc;
  g_tsc.anchor_ns = ns;
  g_tsc.ready.store(true, std::memory_order_release);
  return "CLOCK_MONOTONIC (TSC calibrated against it at MPI_Init)";
}

}  // namespace llamp::tracer
