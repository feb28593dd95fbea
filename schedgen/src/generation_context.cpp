#include "generation_context.hpp"

#include <fmt/format.h>

#include "llamp/error.hpp"
#include "llamp/trace_event.hpp"

namespace llamp::schedgen {

int32_t TagSpace::p2p(uint64_t comm, int32_t tag) {
  if (comm == trace::kCommWorld && tag >= 0 && tag < kWorldLimit) return tag;
  auto [it, inserted] = mapped_.try_emplace({comm, tag}, 0);
  if (inserted) {
    if (mapped_.size() > static_cast<size_t>(kCollBase - kMappedBase))
      throw Error("more than 2^28 distinct (communicator, tag) pairs: graph tags exhausted");
    it->second = kMappedBase + static_cast<int32_t>(mapped_.size() - 1);
  }
  return it->second;
}

int32_t TagSpace::collective(uint64_t comm) {
  auto [it, inserted] = coll_.try_emplace(comm, 0);
  if (inserted) {
    if (coll_.size() > static_cast<size_t>(INT32_MAX - kCollBase))
      throw Error("too many communicators with collectives: graph tags exhausted");
    it->second = kCollBase + static_cast<int32_t>(coll_.size() - 1);
  }
  return it->second;
}

GenerationContext::GenerationContext(graph::GraphSink* target, const Options& opts, Stats& st, uint32_t ranks,
                                     const DropSet* drop_set)
    : sink(target, st, ranks),
      options(opts),
      stats(st),
      num_ranks(ranks),
      drop(drop_set),
      matcher([this](const P2PKey& key, const PendingOp& s, const PendingOp& r) {
        const auto src = static_cast<uint32_t>(key.src), dst = static_cast<uint32_t>(key.dst);
        sink.message(src, s.vertex, dst, r.vertex);
        ++stats.p2p_messages;
        const bool rendezvous = r.bytes > options.rendezvous_above_bytes;
        if (options.completion_time) {
          // Above S the data moves after the handshake, which the receiver answers in its call.
          set_sent_time(sent_times[dst], r.vertex, rendezvous ? kUntimed : s.sent_ns);
        } else if (options.completion_floor) {
          // A receive is ready once its request-to-send or data left; a rendezvous send once the
          // receiver's call that answers the request began (its data is read then).
          set_sent_time(sent_times[dst], r.vertex, s.sent_ns);
          if (rendezvous && !s.completes_in_call)
            set_sent_time(sent_times[src], s.vertex, r.progress_ns ? r.progress_ns : kUntimed);
        }
        if (s.bytes != r.bytes) ++size_mismatches;
        if (s.ack_vertex != PendingOp::kNoAck) {
          // A synchronous send completes only once its receive has matched: the receiver
          // acknowledges (MPICH over UCX: EAGER_SYNC_ACK; above the rendezvous threshold the ATS
          // arrives at the same time), one more latency back to the sender.
          uint64_t ack = sink.send(dst, 0, src, sync_ack_tag(key.comm, key.tag));
          sink.requires_edge(dst, ack, r.vertex);
          sink.message(dst, ack, src, s.ack_vertex);
          ++stats.sync_acks;
        }
      }) {
  if (opts.times_completions()) sent_times.resize(ranks);
}

std::vector<int32_t> GenerationContext::members(uint64_t comm, uint32_t rank, uint64_t call_index) const {
  if (comm == trace::kCommWorld) {
    std::vector<int32_t> all(num_ranks);
    for (uint32_t r = 0; r < num_ranks; ++r) all[r] = static_cast<int32_t>(r);
    return all;
  }
  if (comm == trace::comm_self_id(rank)) return {static_cast<int32_t>(rank)};
  auto it = comms.find(comm);
  if (it == comms.end())
    throw Error(
        fmt::format("rank {} call {}: communicator {:#x} was not created in the trace (was tracing paused "
                    "when it was made?)",
                    rank, call_index, comm));
  return it->second;
}

}  // namespace llamp::schedgen
