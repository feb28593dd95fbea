#pragma once
// The tracer's own time inside a trace's timestamps (docs/schedgen.md, "The tracer's own time").
#include <array>
#include <cstdint>
#include <string>

namespace llamp::schedgen {

// What one rank's tracer spent where its stamps cannot leave it out, from the sample the tracer
// wrote at MPI_Finalize (tracer-cost-NNNNN.json).
struct TracerTime {
  uint64_t encode_ns = 0;                 // per event, in the gap after the call
  std::array<uint32_t, 256> record_ns{};  // per call id, inside the call, after the MPI library returned
};

// Zeros when the trace has no cost file for the rank (older traces, a rank that did not finalize);
// throws llamp::Error when the file is malformed.
TracerTime tracer_time(const std::string& trace_dir, uint32_t rank);

}  // namespace llamp::schedgen
