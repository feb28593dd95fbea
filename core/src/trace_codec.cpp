#include "llamp/trace_codec.hpp"

#include <fmt/format.h>

#include "llamp/error.hpp"
#include "llamp/varint.hpp"

namespace llamp::trace {
namespace {

uint32_t field_mask(const Event& e) {
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

// Bounds-checked reader over one block's raw bytes.
class Cursor {
 public:
  Cursor(std::span<const uint8_t> raw, const std::string& where)
      : begin_(raw.data()), p_(raw.data()), end_(raw.data() + raw.size()), where_(where) {}

  uint64_t u() {
    uint64_t v;
    const uint8_t* next = get_varint(p_, end_, v);
    if (!next) fail("truncated or overlong varint");
    p_ = next;
    return v;
  }
  int64_t s() { return unzigzag(u()); }
  int32_t s32() {
    int64_t v = s();
    if (v < INT32_MIN || v > INT32_MAX) fail("rank/tag value out of range");
    return static_cast<int32_t>(v);
  }
  uint8_t byte() {
    if (p_ >= end_) fail("unexpected end of block");
    return *p_++;
  }
  // Array lengths are bounded by the bytes left: each element takes >= 1 byte.
  size_t length() {
    uint64_t n = u();
    if (n > static_cast<uint64_t>(end_ - p_)) fail(fmt::format("array length {} exceeds block", n));
    return static_cast<size_t>(n);
  }
  // A length-prefixed list of ranks (zigzag each).
  void ranks(std::vector<int32_t>& out) {
    out.resize(length());
    for (auto& r : out) r = s32();
  }
  bool done() const { return p_ == end_; }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: corrupt event data at byte {} of the block: {}", where_, p_ - begin_, what));
  }

 private:
  const uint8_t* begin_;
  const uint8_t* p_;
  const uint8_t* end_;
  const std::string& where_;
};

// A length-prefixed list of ranks, the layout Cursor::ranks reads.
uint8_t* put_ranks(uint8_t* p, const std::vector<int32_t>& ranks) {
  p = put_varint(p, ranks.size());
  for (int32_t r : ranks) p = put_varint(p, zigzag(r));
  return p;
}

}  // namespace

size_t max_encoded_size(const Event& e) {
  size_t n = 1 + 5 + 10 + 10 + 17 * 10;
  n += 10 + 10 * e.requests.size();
  n += 10 + e.completions.size() * (10 * 5 + 1);
  n += 20 + 10 * (e.send_counts.size() + e.recv_counts.size());
  n += 20 + 10 * (e.members.size() + e.remote_members.size());
  n += 10 + 10 * e.counters.size();
  n += 20 + 10 * (e.sources.size() + e.destinations.size());
  return n;
}

uint8_t* encode_event(uint8_t* p, const Event& e, BlockState& state) {
  const uint32_t mask = field_mask(e);
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
    p = put_ranks(p, e.members);
    p = put_ranks(p, e.remote_members);
  }
  if (has(kFieldCounters)) {
    p = put_varint(p, e.counters.size());
    for (int64_t c : e.counters) p = put_varint(p, zigzag(c));
  }
  if (has(kFieldFlags)) p = put_varint(p, e.flags);
  if (has(kFieldValue)) p = put_varint(p, zigzag(e.value));
  if (has(kFieldNeighbors)) {
    p = put_ranks(p, e.sources);
    p = put_ranks(p, e.destinations);
  }
  if (has(kFieldRequest)) state.last_request = e.request;
  return p;
}

void decode_events(std::span<const uint8_t> raw, uint32_t count, uint64_t base_ns, uint32_t thread,
                   std::vector<Event>& out, const std::string& where) {
  Cursor in(raw, where);
  if (out.size() < count) out.resize(count);
  uint64_t prev_end = base_ns;
  uint64_t last_request = 0;
  auto request = [&in, &last_request] { return last_request + static_cast<uint64_t>(in.s()); };
  for (uint32_t i = 0; i < count; ++i) {
    Event& e = out[i];
    uint8_t call = in.byte();
    if (call >= kNumCalls) in.fail(fmt::format("unknown call id {}", call));
    uint64_t mask = in.u();
    if (mask >> kNumFields) in.fail(fmt::format("unknown fields in mask {:#x} (newer trace format?)", mask));
    auto has = [mask](FieldBit b) { return (mask >> b) & 1u; };
    e.call = static_cast<Call>(call);
    e.t_start_ns = prev_end + static_cast<uint64_t>(in.s());
    e.t_end_ns = e.t_start_ns + in.u();
    prev_end = e.t_end_ns;
    e.thread = has(kFieldThread) ? static_cast<uint32_t>(in.u()) : thread;
    e.comm = has(kFieldComm) ? in.u() : kCommWorld;
    e.peer = has(kFieldPeer) ? in.s32() : kNoRank;
    e.tag = has(kFieldTag) ? in.s32() : kNoRank;
    e.bytes = has(kFieldBytes) ? in.u() : 0;
    e.root = has(kFieldRoot) ? in.s32() : kNoRank;
    e.peer2 = has(kFieldPeer2) ? in.s32() : kNoRank;
    e.tag2 = has(kFieldTag2) ? in.s32() : kNoRank;
    e.bytes2 = has(kFieldBytes2) ? in.u() : 0;
    e.request = has(kFieldRequest) ? request() : 0;
    e.requests.clear();
    if (has(kFieldRequests)) {
      size_t n = in.length();
      e.requests.resize(n);
      for (auto& r : e.requests) r = request();
    }
    e.completions.clear();
    if (has(kFieldCompletions)) {
      size_t n = in.length();
      e.completions.resize(n);
      for (Completion& c : e.completions) {
        c.index = static_cast<uint32_t>(in.u());
        c.request = request();
        c.source = in.s32();
        c.tag = in.s32();
        c.bytes = in.u();
        c.cancelled = in.byte() != 0;
      }
    }
    e.send_counts.clear();
    e.recv_counts.clear();
    if (has(kFieldCounts)) {
      e.send_counts.resize(in.length());
      for (auto& b : e.send_counts) b = in.u();
      e.recv_counts.resize(in.length());
      for (auto& b : e.recv_counts) b = in.u();
    }
    e.new_comm = kCommNull;
    e.members.clear();
    e.remote_members.clear();
    if (has(kFieldNewComm)) {
      e.new_comm = in.u();
      in.ranks(e.members);
      in.ranks(e.remote_members);
    }
    e.counters.clear();
    if (has(kFieldCounters)) {
      e.counters.resize(in.length());
      for (auto& c : e.counters) c = in.s();
    }
    e.flags = has(kFieldFlags) ? static_cast<uint32_t>(in.u()) : 0;
    e.value = has(kFieldValue) ? in.s() : 0;
    e.sources.clear();
    e.destinations.clear();
    if (has(kFieldNeighbors)) {
      in.ranks(e.sources);
      in.ranks(e.destinations);
    }
    if (has(kFieldRequest)) last_request = e.request;
  }
  if (!in.done()) in.fail("bytes left over after the block's last event");
}

}  // namespace llamp::trace
