#include "llamp/trace_codec.hpp"

#include <fmt/format.h>

#include "llamp/error.hpp"
#include "llamp/varint.hpp"

namespace llamp::trace {
namespace {

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
