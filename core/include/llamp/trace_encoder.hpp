#pragma once
// The trace encoder, inline: the tracer's wrappers inline it (flatten) so that encoding an event
// right after the MPI call returns pushes no registers of its own onto the stack. Right after an
// eager send every store waits for a slot in a store buffer full of the message's copy
// (docs/tracer.md, "Stores after the call"). Declared and documented in trace_codec.hpp.
#include <cstdint>
#include <vector>

#include "llamp/trace_codec.hpp"  // FieldBit, BlockState; it includes this file at its end
#include "llamp/trace_event.hpp"
#include "llamp/varint.hpp"

namespace llamp::trace {
namespace encoder_detail {

inline uint32_t field_mask(const Event& e) {
  uint32_t m = 0;
  auto set = [&m](bool present, FieldBit bit) { m |= static_cast<uint32_t>(present) << bit; };
  set(e.thread != 0, kFieldThread);
  set(e.comm != kCommWorld, kFieldComm);
  set(e.peer != kNoRank, kFieldPeer);
  set(e.tag != kNoRank, kFieldTag);
  set(e.bytes != 0, kFieldBytes);
  set(e.root != kNoRank, kFieldRoot);
  set(e.peer2 != kNoRank, kFieldPeer2);
  set(e.tag2 != kNoRank, kFieldTag2);
  set(e.bytes2 != 0, kFieldBytes2);
  set(e.request != 0, kFieldRequest);
  set(!e.requests.empty(), kFieldRequests);
  set(!e.completions.empty(), kFieldCompletions);
  set(!e.send_counts.empty() || !e.recv_counts.empty(), kFieldCounts);
  set(e.new_comm != kCommNull || !e.members.empty() || !e.remote_members.empty(), kFieldNewComm);
  set(!e.counters.empty(), kFieldCounters);
  set(e.flags != 0, kFieldFlags);
  set(e.value != 0, kFieldValue);
  set(!e.sources.empty() || !e.destinations.empty(), kFieldNeighbors);
  return m;
}

// A length-prefixed list of ranks, the layout the decoder (trace_codec.cpp, Cursor::ranks) reads.
inline uint8_t* put_ranks(uint8_t* p, const std::vector<int32_t>& ranks) {
  p = put_varint(p, ranks.size());
  for (int32_t r : ranks) p = put_varint(p, zigzag(r));
  return p;
}

}  // namespace encoder_detail

inline uint8_t* encode_event(uint8_t* p, const Event& e, BlockState& state) {
  const uint32_t mask = encoder_detail::field_mask(e);
  *p++ = static_cast<uint8_t>(e.call);
  p = put_varint(p, mask);
  p = put_varint(p, zigzag(static_cast<int64_t>(e.t_start_ns - state.prev_end_ns)));
  p = put_varint(p, e.t_end_ns - e.t_start_ns);
  state.prev_end_ns = e.t_end_ns;
  const uint64_t last = state.last_request;
  auto request_delta = [last](uint64_t id) { return zigzag(static_cast<int64_t>(id - last)); };
  auto has = [mask](FieldBit b) { return (mask >> b) & 1u; };
  if (has(kFieldThread)) p = put_varint(p, e.thread);
  if (has(kFieldComm)) p = put_varint(p, e.comm);
  if (has(kFieldPeer)) p = put_varint(p, zigzag(e.peer));
  if (has(kFieldTag)) p = put_varint(p, zigzag(e.tag));
  if (has(kFieldBytes)) p = put_varint(p, e.bytes);
  if (has(kFieldRoot)) p = put_varint(p, zigzag(e.root));
  if (has(kFieldPeer2)) p = put_varint(p, zigzag(e.peer2));
  if (has(kFieldTag2)) p = put_varint(p, zigzag(e.tag2));
  if (has(kFieldBytes2)) p = put_varint(p, e.bytes2);
  if (has(kFieldRequest)) p = put_varint(p, request_delta(e.request));
  if (has(kFieldRequests)) {
    p = put_varint(p, e.requests.size());
    for (uint64_t r : e.requests) p = put_varint(p, request_delta(r));
  }
  if (has(kFieldCompletions)) {
    p = put_varint(p, e.completions.size());
    for (const Completion& c : e.completions) {
      p = put_varint(p, c.index);
      p = put_varint(p, request_delta(c.request));
      p = put_varint(p, zigzag(c.source));
      p = put_varint(p, zigzag(c.tag));
      p = put_varint(p, c.bytes);
      *p++ = c.cancelled ? 1 : 0;
    }
  }
  if (has(kFieldCounts)) {
    p = put_varint(p, e.send_counts.size());
    for (uint64_t b : e.send_counts) p = put_varint(p, b);
    p = put_varint(p, e.recv_counts.size());
    for (uint64_t b : e.recv_counts) p = put_varint(p, b);
  }
  if (has(kFieldNewComm)) {
    p = put_varint(p, e.new_comm);
    p = encoder_detail::put_ranks(p, e.members);
    p = encoder_detail::put_ranks(p, e.remote_members);
  }
  if (has(kFieldCounters)) {
    p = put_varint(p, e.counters.size());
    for (int64_t c : e.counters) p = put_varint(p, zigzag(c));
  }
  if (has(kFieldFlags)) p = put_varint(p, e.flags);
  if (has(kFieldValue)) p = put_varint(p, zigzag(e.value));
  if (has(kFieldNeighbors)) {
    p = encoder_detail::put_ranks(p, e.sources);
    p = encoder_detail::put_ranks(p, e.destinations);
  }
  if (has(kFieldRequest)) state.last_request = e.request;
  return p;
}

}  // namespace llamp::trace
