// The collective families. bytes = what this rank sends per peer block, bytes2 = what it
// receives per block; the v/w variants (and Reduce_scatter) list per comm-rank bytes instead.
// Counts that MPI declares "significant only at root" are read only at the root. Neighbor
// collectives also carry the rank's sources and destinations, and their v/w counts follow them.
#include "comm_registry.hpp"
#include "neighbors.hpp"
#include "wrapper_support.hpp"

namespace llamp::tracer {
namespace {

// The blocking call with the same arguments as `c` (a nonblocking or persistent collective).
Call blocking_of(Call c) {
  // MPI_Allreduce_init -> MPI_Iallreduce. The family test first: it folds away in a wrapper, the
  // table's lookup (a guarded static, out of line) does not.
  if (trace::call_family(c) == trace::Family::collective_init)
    if (const auto started = trace::started_collective(c)) c = *started;
  switch (c) {
    case Call::Ibarrier:
      return Call::Barrier;
    case Call::Ibcast:
      return Call::Bcast;
    case Call::Igather:
      return Call::Gather;
    case Call::Igatherv:
      return Call::Gatherv;
    case Call::Iscatter:
      return Call::Scatter;
    case Call::Iscatterv:
      return Call::Scatterv;
    case Call::Iallgather:
      return Call::Allgather;
    case Call::Iallgatherv:
      return Call::Allgatherv;
    case Call::Ialltoall:
      return Call::Alltoall;
    case Call::Ialltoallv:
      return Call::Alltoallv;
    case Call::Ialltoallw:
      return Call::Alltoallw;
    case Call::Ireduce:
      return Call::Reduce;
    case Call::Iallreduce:
      return Call::Allreduce;
    case Call::Ireduce_scatter:
      return Call::Reduce_scatter;
    case Call::Ireduce_scatter_block:
      return Call::Reduce_scatter_block;
    case Call::Iscan:
      return Call::Scan;
    case Call::Iexscan:
      return Call::Exscan;
    case Call::Ineighbor_allgather:
      return Call::Neighbor_allgather;
    case Call::Ineighbor_allgatherv:
      return Call::Neighbor_allgatherv;
    case Call::Ineighbor_alltoall:
      return Call::Neighbor_alltoall;
    case Call::Ineighbor_alltoallv:
      return Call::Neighbor_alltoallv;
    case Call::Ineighbor_alltoallw:
      return Call::Neighbor_alltoallw;
    default:
      return c;
  }
}

// The per-rank lists and the neighbor lists out of line: the flattened wrappers (gen_wrappers.py
// FLATTEN) inline the rest of fill_collective, one case of its switch per call.
template <typename Count>
[[gnu::noinline]] void per_rank_of(std::vector<uint64_t>& out, const Count* counts, MPI_Datatype type, size_t n) {
  const uint64_t size = bytes_of(1, type);
  out.resize(n);
  for (size_t i = 0; i < n; ++i) out[i] = counts[i] > 0 ? static_cast<uint64_t>(counts[i]) * size : 0;
}

// Bytes per rank from a count array: the int one, or the large-count variant's.
void per_rank(std::vector<uint64_t>& out, const int* counts, const MPI_Count* counts_c, MPI_Datatype type, size_t n) {
  if (counts) per_rank_of(out, counts, type, n);
  if (counts_c) per_rank_of(out, counts_c, type, n);
}

[[gnu::noinline]] void per_rank_w(std::vector<uint64_t>& out, const int* counts, const MPI_Count* counts_c,
                                  const MPI_Datatype* types, size_t n) {
  if ((!counts && !counts_c) || !types) return;
  out.resize(n);
  for (size_t i = 0; i < n; ++i) out[i] = bytes_of(counts ? counts[i] : counts_c[i], types[i]);
}

bool is_neighbor(Call blocking) {
  switch (blocking) {
    case Call::Neighbor_allgather:
    case Call::Neighbor_allgatherv:
    case Call::Neighbor_alltoall:
    case Call::Neighbor_alltoallv:
    case Call::Neighbor_alltoallw:
      return true;
    default:
      return false;
  }
}

// Neighbor collectives: MPI forbids MPI_IN_PLACE here, and the blocks go to and come from the
// neighbors only.
[[gnu::noinline]] void fill_neighbor(trace::Event& e, Call blocking, const CollArgs& a, const CommInfo& ci) {
  topology_neighbors(a.comm, ci, e.sources, e.destinations);
  const size_t in = e.sources.size(), out = e.destinations.size();
  switch (blocking) {
    case Call::Neighbor_allgather:
    case Call::Neighbor_alltoall:
      e.bytes = bytes_of(a.sendcount, a.sendtype);
      e.bytes2 = bytes_of(a.recvcount, a.recvtype);
      break;
    case Call::Neighbor_allgatherv:
      e.bytes = bytes_of(a.sendcount, a.sendtype);
      per_rank(e.recv_counts, a.recvcounts, a.recvcounts_c, a.recvtype, in);
      break;
    case Call::Neighbor_alltoallv:
      per_rank(e.send_counts, a.sendcounts, a.sendcounts_c, a.sendtype, out);
      per_rank(e.recv_counts, a.recvcounts, a.recvcounts_c, a.recvtype, in);
      break;
    case Call::Neighbor_alltoallw:
      per_rank_w(e.send_counts, a.sendcounts, a.sendcounts_c, a.sendtypes, out);
      per_rank_w(e.recv_counts, a.recvcounts, a.recvcounts_c, a.recvtypes, in);
      break;
    default:
      break;
  }
}

const CommInfo* fill_collective(trace::Event& e, Call c, const CollArgs& a) {
  const CommInfo* ci = comm_info(a.comm);
  e.comm = ci->id;
  const Call blocking = blocking_of(c);  // a constant in the flattened wrappers
  if (is_neighbor(blocking)) {
    fill_neighbor(e, blocking, a, *ci);
    return ci;
  }
  if (ci->inter) e.flags |= trace::kFlagIntercomm;
  const bool in_place = a.sendbuf == MPI_IN_PLACE || a.recvbuf == MPI_IN_PLACE;
  if (in_place) e.flags |= trace::kFlagInPlace;
  bool at_root = false;
  if (a.root != kNoRootArg) {
    e.root = ci->root_world(a.root);
    if (ci->inter) {
      at_root = a.root == MPI_ROOT;
    } else {
      int me = 0;
      PMPI_Comm_rank(a.comm, &me);
      at_root = me == a.root;
    }
  }
  const size_t n = ci->peers();
  const uint64_t send_block = bytes_of(a.sendcount, a.sendtype);
  const uint64_t recv_block = bytes_of(a.recvcount, a.recvtype);
  switch (blocking) {
    case Call::Barrier:
      break;
    case Call::Bcast:
    case Call::Reduce:
    case Call::Allreduce:
    case Call::Scan:
    case Call::Exscan:
      e.bytes = e.bytes2 = bytes_of(a.count, a.datatype);
      break;
    case Call::Gather:
      e.bytes = a.sendbuf == MPI_IN_PLACE ? recv_block : send_block;
      e.bytes2 = at_root ? recv_block : 0;
      break;
    case Call::Scatter:
      e.bytes = at_root ? send_block : 0;
      e.bytes2 = a.recvbuf == MPI_IN_PLACE ? send_block : recv_block;
      break;
    case Call::Allgather:
    case Call::Alltoall:
      e.bytes = a.sendbuf == MPI_IN_PLACE ? recv_block : send_block;
      e.bytes2 = recv_block;
      break;
    case Call::Gatherv:
      e.bytes = send_block;
      if (at_root) per_rank(e.recv_counts, a.recvcounts, a.recvcounts_c, a.recvtype, n);
      break;
    case Call::Scatterv:
      e.bytes2 = recv_block;
      if (at_root) per_rank(e.send_counts, a.sendcounts, a.sendcounts_c, a.sendtype, n);
      break;
    case Call::Allgatherv:
      e.bytes = send_block;
      per_rank(e.recv_counts, a.recvcounts, a.recvcounts_c, a.recvtype, n);
      break;
    case Call::Alltoallv:
      if (a.sendbuf == MPI_IN_PLACE) {
        per_rank(e.send_counts, a.recvcounts, a.recvcounts_c, a.recvtype, n);
      } else {
        per_rank(e.send_counts, a.sendcounts, a.sendcounts_c, a.sendtype, n);
      }
      per_rank(e.recv_counts, a.recvcounts, a.recvcounts_c, a.recvtype, n);
      break;
    case Call::Alltoallw:
      if (a.sendbuf == MPI_IN_PLACE) {
        per_rank_w(e.send_counts, a.recvcounts, a.recvcounts_c, a.recvtypes, n);
      } else {
        per_rank_w(e.send_counts, a.sendcounts, a.sendcounts_c, a.sendtypes, n);
      }
      per_rank_w(e.recv_counts, a.recvcounts, a.recvcounts_c, a.recvtypes, n);
      break;
    case Call::Reduce_scatter: {
      // Each rank contributes the whole vector and gets back its own block.
      per_rank(e.recv_counts, a.recvcounts, a.recvcounts_c, a.datatype, ci->local.size());
      uint64_t total = 0;
      for (uint64_t b : e.recv_counts) total += b;
      e.bytes = total;
      int me = 0;
      PMPI_Comm_rank(a.comm, &me);
      if (me >= 0 && static_cast<size_t>(me) < e.recv_counts.size()) e.bytes2 = e.recv_counts[static_cast<size_t>(me)];
      break;
    }
    case Call::Reduce_scatter_block:
      e.bytes2 = bytes_of(a.recvcount, a.datatype);
      e.bytes = e.bytes2 * ci->local.size();
      break;
    default:
      break;
  }
  return ci;
}

trace::Event& collective_event(ThreadState& ts, Call c, uint64_t t0, uint64_t t1, int rc, const CollArgs& a,
                               const CommInfo*& ci) {
  return prepared_event(ts, c, t0, t1, rc, a, ci, [&a, c](trace::Event& e) { return fill_collective(e, c, a); });
}

}  // namespace

void prepare_collective(Call c, uint64_t t0, CollArgs& a) {
  prepare_event(c, t0, a, [&a, c](trace::Event& e) { return fill_collective(e, c, a); });
}

void record_collective(Call c, uint64_t t0, uint64_t t1, int rc, const CollArgs& a) {
  ThreadState& ts = thread_state();
  const CommInfo* ci;
  collective_event(ts, c, t0, t1, rc, a, ci);
  emit(ts);
}

void record_icollective(Call c, uint64_t t0, uint64_t t1, int rc, const CollArgs& a) {
  ThreadState& ts = thread_state();
  const CommInfo* ci;
  trace::Event& e = collective_event(ts, c, t0, t1, rc, a, ci);
  if (rc == MPI_SUCCESS) e.request = add_request(*a.request, ci, shared_handle_bits(*a.request));
  emit(ts);
}

// A persistent collective's request is the application's own until MPI_Request_free: its id stays
// the same across every MPI_Start, as a persistent point-to-point request's does.
void record_collective_init(Call c, uint64_t t0, uint64_t t1, int rc, const CollArgs& a) {
  ThreadState& ts = thread_state();
  const CommInfo* ci;
  trace::Event& e = collective_event(ts, c, t0, t1, rc, a, ci);
  if (rc == MPI_SUCCESS) e.request = add_request(*a.request, ci, kReqPersistent);
  emit(ts);
}

}  // namespace llamp::tracer
