#include <gtest/gtest.h>

#include <random>

#include "llamp/error.hpp"
#include "llamp/trace_codec.hpp"
#include "llamp/varint.hpp"

using namespace llamp::trace;

namespace {

Event full_event() {
  Event e;
  e.call = Call::Alltoallw;
  e.thread = 3;
  e.t_start_ns = 1'000'000'123;
  e.t_end_ns = 1'000'004'567;
  e.comm = (7ull << 32) | 2;
  e.peer = 5;
  e.tag = -1;
  e.bytes = 1ull << 40;
  e.root = 0;
  e.peer2 = kAnySource;
  e.tag2 = 99;
  e.bytes2 = 12;
  e.request = 42;
  e.requests = {1, 0, 77};
  e.completions = {{0, 1, 3, 7, 128, false}, {2, 77, kNoRank, kAnyTag, 0, true}};
  e.send_counts = {0, 8, 16};
  e.recv_counts = {24, 0, 1};
  e.new_comm = 99;
  e.members = {0, 2, 4};
  e.remote_members = {1, 3};
  e.counters = {123456, -5};
  e.flags = kFlagInPlace | kFlagIntercomm;
  e.value = -17;
  e.sources = {2, kProcNull, 0};
  e.destinations = {1};
  return e;
}

std::vector<uint8_t> encode_all(const std::vector<Event>& events, uint64_t base) {
  size_t cap = 0;
  for (const auto& e : events) cap += max_encoded_size(e);
  std::vector<uint8_t> buf(cap);
  uint8_t* p = buf.data();
  BlockState state{base, 0};
  for (const auto& e : events) p = encode_event(p, e, state);
  buf.resize(static_cast<size_t>(p - buf.data()));
  return buf;
}

}  // namespace

TEST(Varint, RoundTripsEdgeValues) {
  for (uint64_t v : {0ull, 1ull, 127ull, 128ull, 16383ull, 16384ull, ~0ull}) {
    uint8_t buf[10];
    uint8_t* end = llamp::put_varint(buf, v);
    uint64_t out = 0;
    ASSERT_EQ(llamp::get_varint(buf, end, out), end);
    EXPECT_EQ(out, v);
  }
  for (int64_t v : std::initializer_list<int64_t>{0, -1, 1, INT64_MIN, INT64_MAX})
    EXPECT_EQ(llamp::unzigzag(llamp::zigzag(v)), v);
}

TEST(TraceCodec, EveryFieldRoundTrips) {
  Event minimal;
  minimal.call = Call::Barrier;
  minimal.t_start_ns = 1'000'005'000;
  minimal.t_end_ns = 1'000'006'000;
  std::vector<Event> in = {full_event(), minimal};
  in[1].thread = 3;  // same thread as the block
  auto raw = encode_all(in, in[0].t_start_ns);
  std::vector<Event> out;
  decode_events(raw, 2, in[0].t_start_ns, 3, out, "test");
  ASSERT_GE(out.size(), 2u);
  EXPECT_EQ(out[0], in[0]);
  EXPECT_EQ(out[1], in[1]);
}

TEST(TraceCodec, SmallEventsAreSmall) {
  // An Isend to a neighbour on MPI_COMM_WORLD: the hot case must stay a few bytes.
  Event e;
  e.call = Call::Isend;
  e.t_start_ns = 1000;
  e.t_end_ns = 1300;
  e.peer = 1;
  e.tag = 0;
  e.bytes = 8;
  e.request = 5;
  BlockState state{900, 4};
  uint8_t buf[256];
  EXPECT_LE(encode_event(buf, e, state) - buf, 11);  // request id: one byte, not a growing varint
}

TEST(TraceCodec, TruncatedInputIsAnErrorNotACrash) {
  auto raw = encode_all({full_event()}, full_event().t_start_ns);
  std::vector<Event> out;
  for (size_t cut = 0; cut < raw.size(); ++cut) {
    std::span<const uint8_t> part(raw.data(), cut);
    EXPECT_THROW(decode_events(part, 1, 0, 0, out, "cut"), llamp::Error) << "cut at " << cut;
  }
}

TEST(TraceCodec, RandomBytesNeverCrash) {
  std::mt19937_64 rng(1234);
  auto good = encode_all({full_event(), full_event()}, 0);
  std::vector<Event> out;
  for (int i = 0; i < 20000; ++i) {
    auto raw = good;
    for (int k = 0; k < 3; ++k) raw[rng() % raw.size()] = static_cast<uint8_t>(rng());
    try {
      decode_events(raw, 2, 0, 0, out, "fuzz");
    } catch (const llamp::Error&) {
    }
  }
  SUCCEED();
}

TEST(TraceCalls, NamesRoundTrip) {
  for (unsigned i = 0; i < kNumCalls; ++i) {
    auto c = static_cast<Call>(i);
    EXPECT_EQ(call_from_name(call_name(c)), c);
  }
  EXPECT_EQ(call_name(Call::Isend), "MPI_Isend");
  EXPECT_EQ(call_family(Call::Waitsome), Family::completion);
  EXPECT_FALSE(call_from_name("MPI_Nonsense"));
}
