#pragma once
// Communicator ids that are the same on every member rank, and the translation of
// communicator ranks into world ranks.
#include <mpi.h>

#include <atomic>
#include <mutex>
#include <cstdint>
#include <vector>

#include "llamp/trace_event.hpp"

namespace llamp::tracer {

struct alignas(32) CommInfo {  // 32: request bits live in the low 5 bits of its address
  uint64_t id = trace::kCommWorld;
  bool inter = false;
  std::vector<int32_t> local;           // world rank of each rank of the (local) group
  std::vector<int32_t> remote;          // intercommunicators: world rank of each remote rank
  std::atomic<uint64_t> idup_count{0};  // Comm_idup calls on this communicator (ids of the copies)
  // A topology never changes: neighbor collectives ask it once (neighbors.cpp).
  mutable std::once_flag neighbors_once;
  mutable std::vector<int32_t> neighbor_sources, neighbor_destinations;

  // A point-to-point peer (dest/source) as a world rank: the remote group for intercomms.
  int32_t peer_world(int r) const {
    if (r == MPI_PROC_NULL) return trace::kProcNull;
    if (r == MPI_ANY_SOURCE) return trace::kAnySource;
    const auto& g = inter ? remote : local;
    return r >= 0 && static_cast<size_t>(r) < g.size() ? g[static_cast<size_t>(r)] : trace::kNoRank;
  }
  // A collective root as a world rank (MPI_ROOT / MPI_PROC_NULL on intercomms).
  int32_t root_world(int r) const {
    if (r == MPI_ROOT) return trace::kRootLocal;
    return peer_world(r);
  }
  // Ranks a collective exchanges blocks with (the remote group on intercomms).
  size_t peers() const { return inter ? remote.size() : local.size(); }
};

// Called once at init (after PMPI_Init) with the world size and rank.
void comm_registry_init(int world_rank, int world_size);

// The info of a communicator the application passes in. Communicators the tracer did not see
// being created (made by calls outside mpi_calls.def) are registered on first use with a
// rank-local id (bit 61 set): they cannot be matched across ranks.
const CommInfo* comm_info(MPI_Comm c);

// For a communicator just returned by a constructor: agrees on an id with all its members
// (collective over the new communicator, using PMPI only) and registers it.
const CommInfo* comm_register_new(MPI_Comm c);
// Comm_idup: the copy cannot be used before the request completes, so its id is derived from
// the parent's id and the number of idups on the parent (a collective sequence on all members).
const CommInfo* comm_register_idup(MPI_Comm parent, MPI_Comm copy);
// Comm_free: the handle may be recycled; the info stays alive for requests still pending on it.
void comm_forget(MPI_Comm c);

uint64_t comm_id_of(MPI_Comm c);

}  // namespace llamp::tracer
