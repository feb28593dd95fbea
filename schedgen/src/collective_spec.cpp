// From the trace events of all members of one collective call to the CollSpec its algorithm needs.
// Each member records its own view (its send and receive counts); the spec takes every quantity
// from the rank that states it authoritatively (the sender's count for what it sends, the root's
// counts for what the root sends).
#include "collective_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "llamp/error.hpp"

namespace llamp::schedgen {

using trace::Call;

CollKind coll_kind_of(Call c) {
  switch (c) {
    case Call::Barrier:
    case Call::Ibarrier:
      return CollKind::Barrier;
    case Call::Bcast:
    case Call::Ibcast:
      return CollKind::Bcast;
    case Call::Reduce:
    case Call::Ireduce:
      return CollKind::Reduce;
    case Call::Allreduce:
    case Call::Iallreduce:
      return CollKind::Allreduce;
    case Call::Gather:
    case Call::Igather:
      return CollKind::Gather;
    case Call::Gatherv:
    case Call::Igatherv:
      return CollKind::Gatherv;
    case Call::Scatter:
    case Call::Iscatter:
      return CollKind::Scatter;
    case Call::Scatterv:
    case Call::Iscatterv:
      return CollKind::Scatterv;
    case Call::Allgather:
    case Call::Iallgather:
      return CollKind::Allgather;
    case Call::Allgatherv:
    case Call::Iallgatherv:
      return CollKind::Allgatherv;
    case Call::Alltoall:
    case Call::Ialltoall:
      return CollKind::Alltoall;
    case Call::Alltoallv:
    case Call::Ialltoallv:
      return CollKind::Alltoallv;
    case Call::Alltoallw:
    case Call::Ialltoallw:
      return CollKind::Alltoallw;
    case Call::Reduce_scatter:
    case Call::Ireduce_scatter:
      return CollKind::ReduceScatter;
    case Call::Reduce_scatter_block:
    case Call::Ireduce_scatter_block:
      return CollKind::ReduceScatterBlock;
    case Call::Scan:
    case Call::Iscan:
      return CollKind::Scan;
    case Call::Exscan:
    case Call::Iexscan:
      return CollKind::Exscan;
    case Call::Neighbor_allgather:
    case Call::Ineighbor_allgather:
      return CollKind::NeighborAllgather;
    case Call::Neighbor_allgatherv:
    case Call::Ineighbor_allgatherv:
      return CollKind::NeighborAllgatherv;
    case Call::Neighbor_alltoall:
    case Call::Ineighbor_alltoall:
      return CollKind::NeighborAlltoall;
    case Call::Neighbor_alltoallv:
    case Call::Ineighbor_alltoallv:
      return CollKind::NeighborAlltoallv;
    case Call::Neighbor_alltoallw:
    case Call::Ineighbor_alltoallw:
      return CollKind::NeighborAlltoallw;
    default:
      break;
  }
  throw Error(fmt::format("{} is not a collective", trace::call_name(c)));
}

bool is_nonblocking_collective(Call c) {
  switch (c) {
    case Call::Ibarrier:
    case Call::Ibcast:
    case Call::Ireduce:
    case Call::Iallreduce:
    case Call::Igather:
    case Call::Igatherv:
    case Call::Iscatter:
    case Call::Iscatterv:
    case Call::Iallgather:
    case Call::Iallgatherv:
    case Call::Ialltoall:
    case Call::Ialltoallv:
    case Call::Ialltoallw:
    case Call::Ireduce_scatter:
    case Call::Ireduce_scatter_block:
    case Call::Iscan:
    case Call::Iexscan:
    case Call::Ineighbor_allgather:
    case Call::Ineighbor_allgatherv:
    case Call::Ineighbor_alltoall:
    case Call::Ineighbor_alltoallv:
    case Call::Ineighbor_alltoallw:
      return true;
    default:
      return false;
  }
}

namespace {

// Each member's sends from its own counts, then each receive paired with the sender's next send
// to that member: MPICH matches a pair's messages in posting order (one tag), and posts the
// receives of neighbor_alltoall(v/w) in reverse source order (so that a neighbor that is both the
// -1 and the +1 one of a periodic dimension of size 2 fills the right blocks).
void neighbor_spec(const CollCall& call, CollSpec& s, const std::function<std::string(uint32_t)>& where) {
  const auto& ev = call.events;
  const uint32_t p = s.size;
  // World rank -> communicator rank, built once: a call has p members with a few neighbors each.
  int32_t max_world = 0;
  for (int32_t m : call.members) max_world = std::max(max_world, m);
  std::vector<int64_t> comm_of_world(static_cast<size_t>(max_world) + 1, -1);
  for (uint32_t r = 0; r < p; ++r) comm_of_world[static_cast<size_t>(call.members[r])] = r;
  auto comm_rank = [&](int32_t world, uint32_t i) -> std::optional<uint32_t> {
    if (world == trace::kProcNull) return std::nullopt;
    if (world < 0 || world > max_world || comm_of_world[static_cast<size_t>(world)] < 0)
      throw Error(where(i) + fmt::format(": neighbor {} is not a member of the communicator", world));
    const auto r = static_cast<uint32_t>(comm_of_world[static_cast<size_t>(world)]);
    if (r == i) return std::nullopt;  // a rank that is its own neighbor copies locally
    return r;
  };
  const bool alltoall = s.kind == CollKind::NeighborAlltoall || s.kind == CollKind::NeighborAlltoallv ||
                        s.kind == CollKind::NeighborAlltoallw;
  const bool per_destination = s.kind == CollKind::NeighborAlltoallv || s.kind == CollKind::NeighborAlltoallw;
  s.neighbor_sends.assign(p, {});
  s.neighbor_recvs.assign(p, {});
  // Pending sends per (sender, receiver), consumed in order by the receiver's receives.
  std::map<std::pair<uint32_t, uint32_t>, std::deque<uint64_t>> pending;
  for (uint32_t i = 0; i < p; ++i) {
    const trace::Event& e = *ev[i];
    if (per_destination && e.send_counts.size() != e.destinations.size())
      throw Error(where(i) +
                  fmt::format(": {} send counts for {} destinations", e.send_counts.size(), e.destinations.size()));
    for (size_t k = 0; k < e.destinations.size(); ++k) {
      auto to = comm_rank(e.destinations[k], i);
      if (!to) continue;
      const uint64_t bytes = per_destination ? e.send_counts[k] : e.bytes;
      s.neighbor_sends[i].push_back({*to, bytes});
      pending[{i, *to}].push_back(bytes);
    }
  }
  for (uint32_t j = 0; j < p; ++j) {
    const auto& sources = ev[j]->sources;
    for (size_t n = 0; n < sources.size(); ++n) {
      auto from = comm_rank(sources[alltoall ? sources.size() - 1 - n : n], j);
      if (!from) continue;
      auto& queue = pending[{*from, j}];
      if (queue.empty())
        throw Error(where(j) + fmt::format(": receives from rank {} more often than rank {} sends to it (the "
                                           "ranks' neighbor lists disagree)",
                                           call.members[*from], call.members[*from]));
      s.neighbor_recvs[j].push_back({*from, queue.front()});
      queue.pop_front();
    }
  }
  for (const auto& [pair, queue] : pending)
    if (!queue.empty())
      throw Error(where(pair.first) + fmt::format(": sends {} block(s) to rank {} that it does not receive (the ranks' "
                                                  "neighbor lists disagree)",
                                                  queue.size(), call.members[pair.second]));
}

}  // namespace

std::string collective_label(const trace::Event& e) {
  std::string label(trace::call_name(e.call));
  if (e.flags & kFlagPersistentStart) label += ", started by MPI_Start/MPI_Startall of a persistent request";
  return label;
}

CollSpec make_spec(const CollCall& call, uint64_t segment_bytes) {
  const auto& ev = call.events;
  const uint32_t p = static_cast<uint32_t>(call.members.size());
  auto where = [&](uint32_t i) {
    return fmt::format("rank {} call {} ({})", call.members[i], call.call_index[i], collective_label(*ev[i]));
  };
  CollSpec s;
  s.kind = coll_kind_of(ev[0]->call);
  s.nonblocking = is_nonblocking_collective(ev[0]->call);
  s.size = p;
  s.segment_bytes = segment_bytes;
  for (uint32_t i = 0; i < p; ++i) {
    if (ev[i]->flags & trace::kFlagIntercomm)
      throw Error(where(i) + ": collectives on intercommunicators are not supported");
    if (coll_kind_of(ev[i]->call) != s.kind)
      throw Error(fmt::format("collective mismatch on communicator {:#x}: {} but {}", call.comm, where(0), where(i)));
    if (ev[i]->flags & trace::kFlagInPlace) s.in_place = true;
  }
  if (is_rooted(s.kind)) {
    auto comm_rank_of = [&](int32_t world) -> int64_t {
      auto it = std::find(call.members.begin(), call.members.end(), world);
      return it == call.members.end() ? -1 : it - call.members.begin();
    };
    int64_t root = comm_rank_of(ev[0]->root);
    if (root < 0) throw Error(where(0) + fmt::format(": root {} is not a member of the communicator", ev[0]->root));
    for (uint32_t i = 1; i < p; ++i)
      if (ev[i]->root != ev[0]->root)
        throw Error(fmt::format("root mismatch: {} names root {}, {} names root {}", where(0), ev[0]->root, where(i),
                                ev[i]->root));
    s.root = static_cast<uint32_t>(root);
  }
  if (is_neighbor(s.kind)) {
    neighbor_spec(call, s, where);
    return s;
  }
  const trace::Event& root_ev = *ev[s.root];
  auto max_over = [&](auto field) {
    uint64_t m = 0;
    for (uint32_t i = 0; i < p; ++i) m = std::max(m, field(*ev[i], i));
    return m;
  };
  auto counts_from = [&](const std::vector<uint64_t>& v, uint32_t i) -> const std::vector<uint64_t>& {
    if (v.size() != p)
      throw Error(where(i) + fmt::format(": {} per-rank counts for a communicator of {}", v.size(), p));
    return v;
  };
  switch (s.kind) {
    case CollKind::Barrier:
      break;
    case CollKind::Bcast:
    case CollKind::Reduce:
    case CollKind::Allreduce:
    case CollKind::Scan:
    case CollKind::Exscan:
    case CollKind::Allgather:
    case CollKind::Alltoall:
      s.bytes = max_over([](const trace::Event& e, uint32_t) { return std::max(e.bytes, e.bytes2); });
      break;
    case CollKind::ReduceScatterBlock:
      s.bytes = max_over([](const trace::Event& e, uint32_t) { return e.bytes2 ? e.bytes2 : e.bytes; });
      break;
    case CollKind::Gather:  // the root's receive block, or what the others send
      s.bytes = max_over([&](const trace::Event& e, uint32_t i) { return i == s.root ? e.bytes2 : e.bytes; });
      break;
    case CollKind::Scatter:
      s.bytes = max_over([&](const trace::Event& e, uint32_t i) { return i == s.root ? e.bytes : e.bytes2; });
      break;
    case CollKind::Gatherv:
      // What each rank sends; the root's own block never travels.
      s.counts.resize(p);
      for (uint32_t i = 0; i < p; ++i) s.counts[i] = i == s.root ? 0 : ev[i]->bytes;
      break;
    case CollKind::Scatterv:
      if (!root_ev.send_counts.empty())
        s.counts = counts_from(root_ev.send_counts, s.root);
      else {
        s.counts.resize(p);
        for (uint32_t i = 0; i < p; ++i) s.counts[i] = ev[i]->bytes2;
      }
      break;
    case CollKind::Allgatherv:
      s.counts.resize(p);
      for (uint32_t i = 0; i < p; ++i) {
        const trace::Event& e = *ev[i];
        s.counts[i] = (e.flags & trace::kFlagInPlace) || e.bytes == 0
                          ? (e.recv_counts.size() == p ? e.recv_counts[i] : 0)
                          : e.bytes;
      }
      break;
    case CollKind::Alltoallv:
    case CollKind::Alltoallw:
      s.matrix.assign(uint64_t{p} * p, 0);
      for (uint32_t i = 0; i < p; ++i) {
        const trace::Event& e = *ev[i];
        if (!(e.flags & trace::kFlagInPlace) && !e.send_counts.empty()) {
          const auto& c = counts_from(e.send_counts, i);
          for (uint32_t j = 0; j < p; ++j) s.matrix[uint64_t{i} * p + j] = c[j];
        } else {  // in place: what i receives from j is what j sends to i
          const auto& c = counts_from(e.recv_counts, i);
          for (uint32_t j = 0; j < p; ++j) s.matrix[uint64_t{j} * p + i] = c[j];
        }
      }
      break;
    case CollKind::ReduceScatter:
      s.counts = counts_from(ev[0]->recv_counts, 0);
      break;
    default:  // neighbor collectives: above
      break;
  }
  return s;
}

}  // namespace llamp::schedgen
