#pragma once
// Event <-> bytes, the raw (uncompressed) payload of a trace block.
// Layout per event (docs/FORMATS.md, "Event encoding"):
//   u8 call | varint field mask | zigzag gap_ns | varint duration_ns | fields present in mask, in bit order
// gap_ns = t_start - previous event's t_end in the same block (the block header
// carries the reference time for the first event). Request ids are coded as
// differences to the last request id the block created, so the ever-growing ids
// of a regular loop become small constants that compress to almost nothing.
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
  kFieldNeighbors,
  kNumFields
};

// What the encoder and decoder carry from one event of a block to the next.
struct BlockState {
  uint64_t prev_end_ns = 0;   // starts at the block's base time
  uint64_t last_request = 0;  // starts at 0
};

// Upper bound of encode()'s output for this event.
size_t max_encoded_size(const Event& e);

// Appends e at p (which must have max_encoded_size(e) bytes free); returns the
// end. `state` belongs to the block being written and is updated.
inline uint8_t* encode_event(uint8_t* p, const Event& e, BlockState& state);

// Decodes exactly `count` events from raw. Reuses the elements of `out`
// (and their vectors' capacity). Throws llamp::Error naming `where` and the
// byte offset inside the block on malformed input.
void decode_events(std::span<const uint8_t> raw, uint32_t count, uint64_t base_ns, uint32_t thread,
                   std::vector<Event>& out, const std::string& where);

}  // namespace llamp::trace

#include "llamp/trace_encoder.hpp"  // encode_event, inline
