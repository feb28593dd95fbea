#pragma once
// State shared by all ranks during one pass over a trace: the output sink, message matching,
// communicators, graph tags and the set of operations to leave out.
#include <cstdint>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "llamp/graph_sink.hpp"
#include "llamp/schedgen/schedgen.hpp"
#include "flat_id_map.hpp"
#include "message_matcher.hpp"

namespace llamp::schedgen {

// A receive in GenerationContext::sent_times whose message's send time the trace does not give.
inline constexpr uint64_t kUntimed = UINT64_MAX;
// Records the send time of receive vertex `v` of one rank.
inline void set_sent_time(FlatIdMap<uint64_t>& map, uint64_t v, uint64_t ns) {
  bool inserted;
  map.get_or_insert(v, inserted) = ns;
}

// Graph tags. LogGOPSim (and GOAL readers) match by (source, destination, tag) only, so every
// (communicator, user tag) pair needs its own graph tag, and collective-internal messages need tags
// no user tag can take:
//   [0, 2^28)         MPI_COMM_WORLD user tags, unchanged
//   [2^28, 2^29)      other (communicator, user tag) pairs, numbered in order of first use
//   [2^29, 2^31)      collective-internal messages, one tag per communicator
class TagSpace {
 public:
  static constexpr int32_t kWorldLimit = 1 << 28;
  static constexpr int32_t kMappedBase = 1 << 28;
  static constexpr int32_t kCollBase = 1 << 29;

  int32_t p2p(uint64_t comm, int32_t tag);
  int32_t collective(uint64_t comm);

 private:
  struct PairHash {
    size_t operator()(const std::pair<uint64_t, int32_t>& p) const {
      return std::hash<uint64_t>()(p.first * 31 + static_cast<uint32_t>(p.second));
    }
  };
  std::unordered_map<std::pair<uint64_t, int32_t>, int32_t, PairHash> mapped_;
  std::unordered_map<uint64_t, int32_t> coll_;
};

// Operations to leave out in the second pass (--allow-unmatched / --allow-truncated).
class DropSet {
 public:
  static uint64_t key(uint32_t rank, uint64_t op_seq) { return (uint64_t{rank} << 42) | op_seq; }
  void add(uint32_t rank, uint64_t op_seq) { set_.insert(key(rank, op_seq)); }
  bool contains(uint32_t rank, uint64_t op_seq) const { return !set_.empty() && set_.count(key(rank, op_seq)); }
  size_t size() const { return set_.size(); }

 private:
  std::unordered_set<uint64_t> set_;
};

// Forwards to the real sink and counts what passes through.
class CountingSink final : public graph::GraphSink {
 public:
  CountingSink(graph::GraphSink* target, Stats& stats, uint32_t ranks)
      : target_(target), stats_(stats), next_(ranks, 0) {}
  void begin(uint32_t n) override {
    if (target_) target_->begin(n);
  }
  uint64_t calc(uint32_t r, uint64_t ns) override {
    ++stats_.calc_vertices;
    return target_ ? target_->calc(r, ns) : next_[r]++;
  }
  uint64_t poll_lag(uint32_t r, uint64_t cap_ns) override {
    ++stats_.calc_vertices;
    return target_ ? target_->poll_lag(r, cap_ns) : next_[r]++;
  }
  uint64_t send(uint32_t r, uint64_t bytes, uint32_t dst, int32_t tag) override {
    ++stats_.send_vertices;
    return target_ ? target_->send(r, bytes, dst, tag) : next_[r]++;
  }
  uint64_t recv(uint32_t r, uint64_t bytes, uint32_t src, int32_t tag) override {
    ++stats_.recv_vertices;
    return target_ ? target_->recv(r, bytes, src, tag) : next_[r]++;
  }
  void requires_edge(uint32_t r, uint64_t a, uint64_t b) override {
    ++stats_.edges;
    if (target_) target_->requires_edge(r, a, b);
  }
  void irequires_edge(uint32_t r, uint64_t a, uint64_t b) override {
    ++stats_.edges;
    if (target_) target_->irequires_edge(r, a, b);
  }
  void message(uint32_t s, uint64_t sv, uint32_t d, uint64_t rv) override {
    if (target_) target_->message(s, sv, d, rv);
  }
  void finish() override {
    if (target_) target_->finish();
  }

 private:
  graph::GraphSink* target_;  // null: count only (the first of two passes)
  Stats& stats_;
  std::vector<uint64_t> next_;
};

struct GenerationContext {
  GenerationContext(graph::GraphSink* target, const Options& opts, Stats& stats, uint32_t ranks, const DropSet* drop);

  CountingSink sink;
  const Options& options;
  Stats& stats;
  uint32_t num_ranks;
  const DropSet* drop;  // may be null
  TagSpace tags;
  MessageMatcher matcher;
  // Communicator members (world ranks in communicator rank order); world and self are implicit.
  std::unordered_map<uint64_t, std::vector<int32_t>> comms;
  std::vector<UnmatchedOp> lost_recvs;
  // Options::completion_time: per receiving rank, receive vertex -> when its message was sent
  // (matched point-to-point messages, nonblocking collectives' receives); taken out when a
  // completion call uses it. Options::completion_floor: the same for point-to-point receives, and
  // per sending rank, rendezvous send vertex -> when the receiver's call that answers it began.
  std::vector<FlatIdMap<uint64_t>> sent_times;
  uint64_t size_mismatches = 0;

  bool dropped(uint32_t rank, uint64_t op_seq) const { return drop && drop->contains(rank, op_seq); }
  // Graph tag of the acknowledgements of synchronous sends on (comm, tag): a stream of its own,
  // so acknowledgements pair in the order their messages matched.
  int32_t sync_ack_tag(uint64_t comm, int32_t tag) { return tags.p2p(comm ^ (uint64_t{1} << 63), tag); }
  // Members of `comm` as seen by world rank `rank`; throws if the trace never created it.
  std::vector<int32_t> members(uint64_t comm, uint32_t rank, uint64_t call_index) const;
};

}  // namespace llamp::schedgen
