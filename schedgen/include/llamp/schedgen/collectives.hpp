#pragma once
// Collective operations decomposed into point-to-point schedules (docs/schedgen.md, "Collectives").
//
// A schedule is built for one member of a communicator at a time, in communicator ranks; the
// caller translates peers to world ranks. Each operation lists the earlier operations of the same
// member it waits for (a "requires" edge); operations without dependencies start when the
// collective is called. Every algorithm emits, for each (sender, receiver) pair, its sends and the
// receiver's receives in the same order, so the k-th send pairs with the k-th receive.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace llamp::schedgen {

enum class CollKind : uint8_t {
  Barrier,
  Bcast,
  Reduce,
  Allreduce,
  Gather,
  Gatherv,
  Scatter,
  Scatterv,
  Allgather,
  Allgatherv,
  Alltoall,
  Alltoallv,
  Alltoallw,
  ReduceScatter,
  ReduceScatterBlock,
  Scan,
  Exscan,
  NeighborAllgather,  // the neighbor collectives: blocks to and from a process topology's neighbors
  NeighborAllgatherv,
  NeighborAlltoall,
  NeighborAlltoallv,
  NeighborAlltoallw,
  Count_
};
inline constexpr unsigned kNumCollKinds = static_cast<unsigned>(CollKind::Count_);

enum class Algorithm : uint8_t {
  Auto,                  // MPICH 4.0's size-based choice (choose_default)
  Dissemination,         // barrier
  Binomial,              // bcast, reduce, gather(v), scatter(v)
  ScatterRingAllgather,  // bcast: binomial scatter + ring allgather (van de Geijn)
  ScatterRdAllgather,    // bcast: binomial scatter + recursive-doubling allgather
  PipelinedRing,         // bcast: segments forwarded along a chain
  RecursiveDoubling,     // allreduce, allgather(v), scan, exscan
  Ring,                  // allreduce (reduce-scatter ring + allgather ring), allgather(v)
  Rabenseifner,          // allreduce: recursive halving reduce-scatter + recursive doubling allgather
  ReduceBcast,           // allreduce: binomial reduce to 0 + binomial bcast
  Bruck,                 // allgather(v), alltoall(v/w)
  Pairwise,              // alltoall(v/w), reduce_scatter(_block)
  Linear,                // alltoall(v/w) (all isend/irecv at once), gather(v), scatter(v), neighbor_*
  RecursiveHalving,      // reduce_scatter(_block)
  Count_
};

std::string_view coll_kind_name(CollKind k);  // "allreduce"
std::optional<CollKind> coll_kind_from_name(std::string_view name);
std::string_view algorithm_name(Algorithm a);  // "recursive_doubling"
std::optional<Algorithm> algorithm_from_name(std::string_view name);
// The algorithms selectable for a collective (Auto not included).
std::span<const Algorithm> algorithms_for(CollKind k);
bool is_rooted(CollKind k);
bool is_neighbor(CollKind k);

// One message of a neighbor collective, seen from one member: the peer (communicator rank) and
// the bytes (the sender's count).
struct NeighborOp {
  uint32_t peer = 0;
  uint64_t bytes = 0;
  friend bool operator==(const NeighborOp&, const NeighborOp&) = default;
};

// What one collective call moves, in communicator ranks. Byte counts are exact message sizes.
struct CollSpec {
  CollKind kind = CollKind::Barrier;
  uint32_t size = 1;  // communicator size p
  uint32_t root = 0;  // communicator rank (rooted collectives)
  // Barrier: 0. Bcast/Reduce/Allreduce/Scan/Exscan: the message. Gather/Scatter/Allgather/
  // Alltoall/Reduce_scatter_block: the block per rank.
  uint64_t bytes = 0;
  // Per communicator rank, for v variants and Reduce_scatter: Gatherv: bytes each rank sends to the
  // root; Scatterv: bytes the root sends to each rank; Allgatherv: each rank's block;
  // Reduce_scatter: each rank's result block. Empty: every entry is `bytes`.
  std::vector<uint64_t> counts;
  // Alltoallv/w: bytes from rank i to rank j at [i * size + j]. Empty: every entry is `bytes`.
  std::vector<uint64_t> matrix;
  // Neighbor collectives, per member: its sends in destination order and its receives in the
  // order MPICH posts them (MPI_PROC_NULL and the member itself left out).
  std::vector<std::vector<NeighborOp>> neighbor_sends, neighbor_recvs;
  bool in_place = false;              // MPI_IN_PLACE (MPICH's default choices depend on it)
  bool nonblocking = false;           // MPI_I...: MPICH selects some of these differently
  uint64_t segment_bytes = 64 << 10;  // pipelined ring bcast segment size

  uint64_t count(uint32_t r) const { return counts.empty() ? bytes : counts[r]; }
  uint64_t cell(uint32_t i, uint32_t j) const { return matrix.empty() ? bytes : matrix[uint64_t{i} * size + j]; }
};

struct CollOp {
  bool is_send = false;
  uint32_t peer = 0;  // communicator rank
  uint64_t bytes = 0;
  uint32_t dep_begin = 0, dep_count = 0;  // into RankSchedule::deps
};

// One member's part of a collective.
struct RankSchedule {
  std::vector<CollOp> ops;
  std::vector<uint32_t> deps;  // flattened dependency lists (indices into ops)

  std::span<const uint32_t> deps_of(uint32_t op) const { return {deps.data() + ops[op].dep_begin, ops[op].dep_count}; }
  void clear() {
    ops.clear();
    deps.clear();
  }
  uint32_t add(bool is_send, uint32_t peer, uint64_t bytes, std::span<const uint32_t> after);
  // Ops nothing else in the schedule waits for (what the caller's next step must wait for).
  std::vector<uint32_t> exits() const;
};

// MPICH 4.0.2's default algorithm for this call (docs/schedgen.md lists the rules).
Algorithm choose_default(const CollSpec& spec);

// Builds member `me`'s schedule (cleared first). Auto is resolved with choose_default. Throws
// llamp::Error if the algorithm does not implement the collective or the spec is inconsistent.
void build_schedule(Algorithm algo, const CollSpec& spec, uint32_t me, RankSchedule& out);

// Per-collective choice, as given by `--algo allreduce=ring` (nonblocking variants share it).
struct AlgorithmChoice {
  Algorithm by_kind[kNumCollKinds] = {};  // all Auto
  // Parses "name=algorithm"; throws llamp::Error listing the valid names on a bad value.
  void set(std::string_view assignment);
  Algorithm operator[](CollKind k) const { return by_kind[static_cast<unsigned>(k)]; }
};

}  // namespace llamp::schedgen
