#include <fmt/format.h>
#include <unistd.h>

#include "graph_spool.hpp"
#include "llamp/graph_io.hpp"

namespace llamp::graph {

GoalTextWriter::GoalTextWriter(std::string path) : path_(std::move(path)) {}
GoalTextWriter::~GoalTextWriter() = default;

void GoalTextWriter::begin(uint32_t num_ranks) {
  if (spool_) throw Error(path_ + ": begin() called twice");
  if (num_ranks == 0 || num_ranks > kMaxRanks)
    throw Error(fmt::format("{}: number of ranks {} must be between 1 and {}", path_, num_ranks, kMaxRanks));
  num_ranks_ = num_ranks;
  spool_ = std::make_unique<detail::RankSpool>(num_ranks, path_);
  next_local_.assign(num_ranks, 0);
  for (uint32_t r = 0; r < num_ranks; ++r) spool_->append(r, fmt::format("rank {} {{\n", r));
}

uint64_t GoalTextWriter::next_id(uint32_t rank) {
  if (!spool_ || finished_) throw Error(path_ + ": vertex added outside begin()/finish()");
  if (rank >= num_ranks_) throw Error(fmt::format("{}: rank {} out of range ({} ranks)", path_, rank, num_ranks_));
  return next_local_[rank]++;
}

uint64_t GoalTextWriter::calc(uint32_t rank, uint64_t cost_ns) {
  uint64_t id = next_id(rank);
  spool_->append(rank, fmt::format("l{}: calc {}\n", id, cost_ns));
  return id;
}

// GOAL has no polling lag: a plain calc of the cap (what LogGOPSim will use), marked by a
// trailing comment that llamp's reader turns back into a polling lag (docs/FORMATS.md).
uint64_t GoalTextWriter::poll_lag(uint32_t rank, uint64_t cap_ns) {
  uint64_t id = next_id(rank);
  spool_->append(rank, fmt::format("l{}: calc {} {}\n", id, cap_ns, kGoalPollLagMarker));
  return id;
}

uint64_t GoalTextWriter::add_comm(uint32_t rank, bool is_send, uint32_t peer_rank, int32_t tag) {
  if (peer_rank >= num_ranks_)
    throw Error(
        fmt::format("{}: {} on rank {} names rank {} out of range", path_, is_send ? "send" : "recv", rank, peer_rank));
  if (tag < 0) throw Error(fmt::format("{}: negative tag {} on rank {}", path_, tag, rank));
  uint64_t id = next_id(rank);
  auto& counts = streams_[is_send ? std::tuple{rank, peer_rank, tag} : std::tuple{peer_rank, rank, tag}];
  uint64_t position = is_send ? counts.first++ : counts.second++;
  pending_[{rank, id}] = Pending{tag, peer_rank, position, is_send};
  return id;
}

uint64_t GoalTextWriter::send(uint32_t rank, uint64_t bytes, uint32_t dst, int32_t tag) {
  uint64_t id = add_comm(rank, true, dst, tag);
  spool_->append(rank, fmt::format("l{}: send {}b to {} tag {}\n", id, bytes, dst, tag));
  return id;
}

uint64_t GoalTextWriter::recv(uint32_t rank, uint64_t bytes, uint32_t src, int32_t tag) {
  uint64_t id = add_comm(rank, false, src, tag);
  spool_->append(rank, fmt::format("l{}: recv {}b from {} tag {}\n", id, bytes, src, tag));
  return id;
}

void GoalTextWriter::requires_edge(uint32_t rank, uint64_t after, uint64_t before) {
  if (rank >= num_ranks_ || after >= next_local_[rank] || before >= next_local_[rank] || after == before)
    throw Error(fmt::format("{}: invalid edge l{} requires l{} on rank {}", path_, after, before, rank));
  spool_->append(rank, fmt::format("l{} requires l{}\n", after, before));
}

void GoalTextWriter::irequires_edge(uint32_t rank, uint64_t after, uint64_t before) {
  if (rank >= num_ranks_ || after >= next_local_[rank] || before >= next_local_[rank] || after == before)
    throw Error(fmt::format("{}: invalid edge l{} irequires l{} on rank {}", path_, after, before, rank));
  spool_->append(rank, fmt::format("l{} irequires l{}\n", after, before));
}

void GoalTextWriter::message(uint32_t src_rank, uint64_t send_id, uint32_t dst_rank, uint64_t recv_id) {
  auto s = pending_.find({src_rank, send_id});
  auto r = pending_.find({dst_rank, recv_id});
  auto name = [](uint32_t rank, uint64_t id) { return fmt::format("rank {} l{}", rank, id); };
  if (s == pending_.end() || !s->second.is_send)
    throw Error(fmt::format("{}: message from {}: not an unpaired send", path_, name(src_rank, send_id)));
  if (r == pending_.end() || r->second.is_send)
    throw Error(fmt::format("{}: message to {}: not an unpaired recv", path_, name(dst_rank, recv_id)));
  const Pending& sp = s->second;
  const Pending& rp = r->second;
  if (sp.peer_rank != dst_rank || rp.peer_rank != src_rank || sp.tag != rp.tag)
    throw Error(fmt::format("{}: message {} → {} joins different streams (send to {} tag {}, recv from {} tag {})",
                            path_, name(src_rank, send_id), name(dst_rank, recv_id), sp.peer_rank, sp.tag, rp.peer_rank,
                            rp.tag));
  if (sp.position != rp.position)
    throw Error(fmt::format(
        "{}: message {} → {} pairs send #{} with recv #{} of stream ({} → {}, tag {}); GOAL pairs in order, "
        "so write this graph in the binary format instead",
        path_, name(src_rank, send_id), name(dst_rank, recv_id), sp.position, rp.position, src_rank, dst_rank, sp.tag));
  pending_.erase(s);
  pending_.erase(r);
}

void GoalTextWriter::finish() {
  if (!spool_ || finished_) throw Error(path_ + ": finish() without begin() or called twice");
  if (!pending_.empty()) {
    auto& [key, p] = *pending_.begin();
    throw Error(fmt::format("{}: rank {} l{} ({} rank {} tag {}) has no message() pairing", path_, key.first,
                            key.second, p.is_send ? "send to" : "recv from", p.peer_rank, p.tag));
  }
  finished_ = true;
  for (uint32_t r = 0; r < num_ranks_; ++r) spool_->append(r, "}\n");
  const std::string header = fmt::format("num_ranks {}\n\n", num_ranks_);
  std::vector<uint64_t> offset(num_ranks_);
  uint64_t pos = header.size();
  for (uint32_t r = 0; r < num_ranks_; ++r) {
    offset[r] = pos;
    pos += spool_->rank_bytes(r);
  }
  int fd = detail::open_output(path_);
  try {
    detail::write_all_at(fd, header.data(), header.size(), 0, path_);
    spool_->write_grouped(fd, offset);
  } catch (...) {
    ::close(fd);
    throw;
  }
  detail::close_output(fd, path_);
  spool_.reset();
}

}  // namespace llamp::graph
