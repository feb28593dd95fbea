#pragma once
// Event <-> bytes, the raw (uncompressed) payload of a trace block.
// Layout per event (docs/FORMATS.md, "Event encoding"):
//   u8 call | varint field mask | zigzag gap_ns | varint duration_ns | fields present in mask, in bit order
// gap_ns = t_start - previous event's t_end in the same block (the block header
// carries the reference time for the first event).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "llamp/trace_event.hpp"

namespace llamp::trace {

enum FieldBit : unsigned {
  kFieldThread = 0,
  kFieldComm,
  kFieldPeer,
  kFieldTag,
  kFieldBytes,
  kFieldRoot,
  kFieldPeer2,
  kFieldTag2,
  kFieldBytes2,
  kFieldRequest,
  kFieldRequests,
  kFieldCompletions,
  kFieldCounts,
  kFieldNewComm,
  kFieldCounters,
  kFieldFlags,
  kFieldValue,
  kNumFields
};

// Upper bound of encode()'s output for this event.
size_t max_encoded_size(const Event& e);

// Appends e at p (which must have max_encoded_size(e) bytes free); returns the
// end. prev_end_ns is the reference for the gap and is updated to e.t_end_ns.
uint8_t* encode_event(uint8_t* p, const Event& e, uint64_t& prev_end_ns);

// Decodes exactly `count` events from raw. Reuses the elements of `out`
// (and their vectors' capacity). Throws llamp::Error naming `where` and the
// byte offset inside the block on malformed input.
void decode_events(std::span<const uint8_t> raw, uint32_t count, uint64_t base_ns, uint32_t thread,
                   std::vector<Event>& out, const std::string& where);

}  // namespace llamp::trace
