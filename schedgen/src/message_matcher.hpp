#pragma once
// Pairs application sends with receives by MPI's ordering rule: within one (communicator, source,
// destination, tag) stream the k-th send matches the k-th receive, where receives are counted in
// the order they were posted and carry the source/tag that actually matched (wildcards resolved
// from the completion status). Only in-flight operations are held, so memory follows the number
// of messages sent but not yet received (or the reverse), not the trace length.
#include <cstdint>
#include <algorithm>
#include <functional>
#include <vector>

namespace llamp::schedgen {

struct P2PKey {
  uint64_t comm;
  int32_t src, dst, tag;  // world ranks, user tag
  bool operator==(const P2PKey&) const = default;
};

struct P2PKeyHash {
  size_t operator()(const P2PKey& k) const {
    uint64_t h = k.comm * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t(uint32_t(k.src)) << 32 | uint32_t(k.dst)) + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
    h ^= uint64_t(uint32_t(k.tag)) * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

// One operation waiting for its partner.
struct PendingOp {
  uint64_t vertex;      // rank-local vertex id
  uint64_t call_index;  // for error messages
  uint64_t bytes;
  uint64_t op_seq;  // per-rank operation number (what --allow-unmatched drops by)
  // Synchronous sends (MPI_Ssend, MPI_Issend, MPI_Ssend_init): the sender's vertex that receives
  // the receiver's acknowledgement; kNoAck for every other operation.
  uint64_t ack_vertex = kNoAck;
  static constexpr uint64_t kNoAck = UINT64_MAX;
  // Sends: when the sender's call that sent it ended (Options::completion_time).
  uint64_t sent_ns = 0;
  // Sends: a blocking send, complete when its call returns (Options::completion_floor: no call
  // waits for its readiness, so none is kept for it).
  bool completes_in_call = false;
  // Receives: when the receiver's call that answers a rendezvous request began (0: none known)
  // (Options::completion_floor).
  uint64_t progress_ns = 0;
};

// A first-in first-out queue that reuses its storage (most streams hold zero or one entry).
class OpFifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  void push(const PendingOp& op) { items_.push_back(op); }
  PendingOp pop() {
    PendingOp op = items_[head_++];
    if (head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ > 32 && head_ * 2 > items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<ptrdiff_t>(head_));
      head_ = 0;
    }
    return op;
  }
  template <class F>
  void for_each(F&& f) const {
    for (size_t i = head_; i < items_.size(); ++i) f(items_[i]);
  }

 private:
  std::vector<PendingOp> items_;
  size_t head_ = 0;
};

class MessageMatcher {
 public:
  // Called with (key, send, recv) for every pair, as soon as both sides are known.
  using OnPair = std::function<void(const P2PKey&, const PendingOp& send, const PendingOp& recv)>;
  explicit MessageMatcher(OnPair on_pair) : on_pair_(std::move(on_pair)) {}

  void add_send(const P2PKey& key, const PendingOp& op) {
    Stream& s = stream(key);
    if (!s.recvs.empty()) {
      PendingOp r = s.recvs.pop();
      --in_flight_;
      on_pair_(key, op, r);
    } else {
      s.sends.push(op);
      ++in_flight_;
    }
  }
  void add_recv(const P2PKey& key, const PendingOp& op) {
    Stream& s = stream(key);
    if (!s.sends.empty()) {
      PendingOp snd = s.sends.pop();
      --in_flight_;
      on_pair_(key, snd, op);
    } else {
      s.recvs.push(op);
      ++in_flight_;
    }
  }
  uint64_t in_flight() const { return in_flight_; }

  // Everything still unpaired: f(key, op, is_send).
  template <class F>
  void for_each_unmatched(F&& f) const {
    for (const Stream& s : streams_) {
      s.sends.for_each([&](const PendingOp& op) { f(s.key, op, true); });
      s.recvs.for_each([&](const PendingOp& op) { f(s.key, op, false); });
    }
  }

 private:
  struct Stream {
    P2PKey key;
    OpFifo sends, recvs;
  };
  // Streams are never removed (there are as many as distinct (comm, src, dst, tag) in the trace);
  // an open-addressing index over them avoids a node allocation and pointer chase per message.
  Stream& stream(const P2PKey& key) {
    if ((streams_.size() + 1) * 2 > index_.size()) grow();
    size_t mask = index_.size() - 1;
    for (size_t i = P2PKeyHash()(key) & mask;; i = (i + 1) & mask) {
      uint32_t slot = index_[i];
      if (slot == kEmpty) {
        index_[i] = static_cast<uint32_t>(streams_.size());
        streams_.push_back(Stream{key, {}, {}});
        return streams_.back();
      }
      if (streams_[slot].key == key) return streams_[slot];
    }
  }
  void grow() {
    std::vector<uint32_t> bigger(std::max<size_t>(64, index_.size() * 2), kEmpty);
    size_t mask = bigger.size() - 1;
    for (uint32_t s = 0; s < streams_.size(); ++s) {
      size_t i = P2PKeyHash()(streams_[s].key) & mask;
      while (bigger[i] != kEmpty) i = (i + 1) & mask;
      bigger[i] = s;
    }
    index_.swap(bigger);
  }
  static constexpr uint32_t kEmpty = UINT32_MAX;
  std::vector<Stream> streams_;  // references do not outlive one add_send/add_recv call
  std::vector<uint32_t> index_;
  OnPair on_pair_;
  uint64_t in_flight_ = 0;
};

}  // namespace llamp::schedgen
