#include "tracer_time.hpp"

#include <cmath>

#include "llamp/trace_dir.hpp"
#include "llamp/trace_event.hpp"

namespace llamp::schedgen {

TracerTime tracer_time(const std::string& trace_dir, uint32_t rank) {
  TracerTime t;
  const auto cost = trace::read_tracer_cost(trace_dir, rank);
  if (!cost) return t;
  t.encode_ns = static_cast<uint64_t>(std::llround(cost->encode_ns));
  for (const auto& [name, ns] : cost->record_ns)
    if (const auto call = trace::call_from_name(name); call && ns > 0)
      t.record_ns[static_cast<uint8_t>(*call)] = static_cast<uint32_t>(std::llround(ns));
  return t;
}

}  // namespace llamp::schedgen
