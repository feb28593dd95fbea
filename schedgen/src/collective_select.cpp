// Collective and algorithm names, which algorithms each collective offers, and MPICH 4.0.2's
// default choices (the thresholds of its built-in selection; docs/schedgen.md).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "llamp/error.hpp"
#include "llamp/schedgen/collectives.hpp"

namespace llamp::schedgen {

namespace {

constexpr std::array<std::string_view, kNumCollKinds> kKindNames = {"barrier",
                                                                    "bcast",
                                                                    "reduce",
                                                                    "allreduce",
                                                                    "gather",
                                                                    "gatherv",
                                                                    "scatter",
                                                                    "scatterv",
                                                                    "allgather",
                                                                    "allgatherv",
                                                                    "alltoall",
                                                                    "alltoallv",
                                                                    "alltoallw",
                                                                    "reduce_scatter",
                                                                    "reduce_scatter_block",
                                                                    "scan",
                                                                    "exscan",
                                                                    "neighbor_allgather",
                                                                    "neighbor_allgatherv",
                                                                    "neighbor_alltoall",
                                                                    "neighbor_alltoallv",
                                                                    "neighbor_alltoallw"};

constexpr std::array<std::string_view, static_cast<size_t>(Algorithm::Count_)> kAlgoNames = {
    "auto",           "dissemination",      "binomial", "scatter_ring_allgather", "scatter_rd_allgather",
    "pipelined_ring", "recursive_doubling", "ring",     "rabenseifner",           "reduce_bcast",
    "bruck",          "pairwise",           "linear",   "recursive_halving"};

using A = Algorithm;
constexpr A kBarrier[] = {A::Dissemination};
constexpr A kBcast[] = {A::Binomial, A::ScatterRingAllgather, A::ScatterRdAllgather, A::PipelinedRing};
constexpr A kReduce[] = {A::Binomial};
constexpr A kAllreduce[] = {A::RecursiveDoubling, A::Ring, A::Rabenseifner, A::ReduceBcast};
constexpr A kRooted[] = {A::Binomial, A::Linear};
constexpr A kAllgather[] = {A::Ring, A::RecursiveDoubling, A::Bruck};
constexpr A kAlltoall[] = {A::Pairwise, A::Linear, A::Bruck};
constexpr A kReduceScatter[] = {A::RecursiveHalving, A::Pairwise};
constexpr A kScan[] = {A::RecursiveDoubling};
constexpr A kNeighbor[] = {A::Linear};

// MPICH 4.0.2 defaults of the thresholds its size-based selection uses.
// MPICH 4.0.2 does not use MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE (2048 B) any more: its built-in
// selection (maint/tuning/coll/mpir/generic.json) takes recursive doubling up to 8 bytes, and
// for built-in operations reduce-scatter + allgather once count >= pof2. Measured with the
// injector at 2 ranks: 1 latency term per MPI_Allreduce of 1 double, 2 terms from 2 doubles on.
constexpr uint64_t kAllreduceShort = 8;
// ... while MPI_Iallreduce keeps 2048 bytes (mpir/generic.json, collective=iallreduce).
constexpr uint64_t kIallreduceShort = 2048;
// The trace has bytes, not element counts: reductions are taken to be on 8-byte elements
// (double, int64), the common case; `--algo allreduce=...` overrides.
constexpr uint64_t kReductionElementBytes = 8;
constexpr uint64_t kBcastShort = 12288;          // MPIR_CVAR_BCAST_SHORT_MSG_SIZE
constexpr uint64_t kBcastLong = 524288;          // MPIR_CVAR_BCAST_LONG_MSG_SIZE
constexpr uint32_t kBcastMinProcs = 8;           // MPIR_CVAR_BCAST_MIN_PROCS
constexpr uint64_t kAllgatherShort = 81920;      // MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE
constexpr uint64_t kAllgatherLong = 524288;      // MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE
constexpr uint64_t kAlltoallShort = 256;         // MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE
constexpr uint64_t kAlltoallMedium = 32768;      // MPIR_CVAR_ALLTOALL_MEDIUM_MSG_SIZE
constexpr uint64_t kReduceScatterLong = 524288;  // MPIR_CVAR_REDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE

bool pof2(uint32_t p) { return (p & (p - 1)) == 0; }

}  // namespace

std::string_view coll_kind_name(CollKind k) { return kKindNames.at(static_cast<size_t>(k)); }

std::optional<CollKind> coll_kind_from_name(std::string_view name) {
  for (size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == name) return static_cast<CollKind>(i);
  return std::nullopt;
}

std::string_view algorithm_name(Algorithm a) { return kAlgoNames.at(static_cast<size_t>(a)); }

std::optional<Algorithm> algorithm_from_name(std::string_view name) {
  for (size_t i = 0; i < kAlgoNames.size(); ++i)
    if (kAlgoNames[i] == name) return static_cast<Algorithm>(i);
  return std::nullopt;
}

std::span<const Algorithm> algorithms_for(CollKind k) {
  switch (k) {
    case CollKind::Barrier:
      return kBarrier;
    case CollKind::Bcast:
      return kBcast;
    case CollKind::Reduce:
      return kReduce;
    case CollKind::Allreduce:
      return kAllreduce;
    case CollKind::Gather:
    case CollKind::Gatherv:
    case CollKind::Scatter:
    case CollKind::Scatterv:
      return kRooted;
    case CollKind::Allgather:
    case CollKind::Allgatherv:
      return kAllgather;
    case CollKind::Alltoall:
    case CollKind::Alltoallv:
    case CollKind::Alltoallw:
      return kAlltoall;
    case CollKind::ReduceScatter:
    case CollKind::ReduceScatterBlock:
      return kReduceScatter;
    case CollKind::Scan:
    case CollKind::Exscan:
      return kScan;
    case CollKind::NeighborAllgather:
    case CollKind::NeighborAllgatherv:
    case CollKind::NeighborAlltoall:
    case CollKind::NeighborAlltoallv:
    case CollKind::NeighborAlltoallw:
      return kNeighbor;
    case CollKind::Count_:
      break;
  }
  return {};
}

bool is_neighbor(CollKind k) {
  return k == CollKind::NeighborAllgather || k == CollKind::NeighborAllgatherv || k == CollKind::NeighborAlltoall ||
         k == CollKind::NeighborAlltoallv || k == CollKind::NeighborAlltoallw;
}

bool is_rooted(CollKind k) {
  return k == CollKind::Bcast || k == CollKind::Reduce || k == CollKind::Gather || k == CollKind::Gatherv ||
         k == CollKind::Scatter || k == CollKind::Scatterv;
}

Algorithm choose_default(const CollSpec& s) {
  uint32_t p = s.size;
  switch (s.kind) {
    case CollKind::Barrier:
      return A::Dissemination;
    case CollKind::Bcast:
      if (s.bytes < kBcastShort || p < kBcastMinProcs) return A::Binomial;
      if (s.bytes < kBcastLong && pof2(p)) return A::ScatterRdAllgather;
      return A::ScatterRingAllgather;
    case CollKind::Reduce:
      return A::Binomial;
    case CollKind::Allreduce:
      return s.bytes <= (s.nonblocking ? kIallreduceShort : kAllreduceShort) ||
                     s.bytes / kReductionElementBytes < (uint64_t{1} << (31 - __builtin_clz(p)))
                 ? A::RecursiveDoubling
                 : A::Rabenseifner;
    case CollKind::Gather:
    case CollKind::Scatter:
      return A::Binomial;
    case CollKind::Gatherv:
    case CollKind::Scatterv:
      return A::Linear;
    case CollKind::Allgather:
    case CollKind::Allgatherv: {
      uint64_t total = 0;
      for (uint32_t i = 0; i < p; ++i) total += s.count(i);
      if (total < kAllgatherLong && pof2(p)) return A::RecursiveDoubling;
      if (total < kAllgatherShort) return A::Bruck;
      return A::Ring;
    }
    case CollKind::Alltoall:
      if (s.in_place) return A::Pairwise;
      if (s.bytes <= kAlltoallShort && p >= 8) return A::Bruck;
      if (s.bytes <= kAlltoallMedium) return A::Linear;
      return A::Pairwise;
    case CollKind::Alltoallv:
    case CollKind::Alltoallw:
      return s.in_place ? A::Pairwise : A::Linear;
    case CollKind::ReduceScatter:
    case CollKind::ReduceScatterBlock: {
      uint64_t total = 0;
      for (uint32_t i = 0; i < p; ++i) total += s.count(i);
      return total < kReduceScatterLong ? A::RecursiveHalving : A::Pairwise;
    }
    case CollKind::Scan:
    case CollKind::Exscan:
      return A::RecursiveDoubling;
    case CollKind::NeighborAllgather:
    case CollKind::NeighborAllgatherv:
    case CollKind::NeighborAlltoall:
    case CollKind::NeighborAlltoallv:
    case CollKind::NeighborAlltoallw:
      return A::Linear;  // MPICH 4.0.2 has no other (MPIR_Ineighbor_*_allcomm_sched_linear)
    case CollKind::Count_:
      break;
  }
  return A::Auto;
}

void AlgorithmChoice::set(std::string_view assignment) {
  auto eq = assignment.find('=');
  auto list_kinds = [] {
    std::string out;
    for (auto n : kKindNames) out += fmt::format("{}{}", out.empty() ? "" : ", ", n);
    return out;
  };
  if (eq == std::string_view::npos)
    throw Error(fmt::format("--algo '{}': expected COLLECTIVE=ALGORITHM, e.g. allreduce=ring", assignment));
  std::string_view kname = assignment.substr(0, eq), aname = assignment.substr(eq + 1);
  auto kind = coll_kind_from_name(kname);
  if (!kind)
    throw Error(fmt::format("--algo '{}': unknown collective '{}' (one of: {})", assignment, kname, list_kinds()));
  auto algo = algorithm_from_name(aname);
  auto allowed = algorithms_for(*kind);
  bool ok = algo && (*algo == A::Auto || std::find(allowed.begin(), allowed.end(), *algo) != allowed.end());
  if (!ok) {
    std::string names = "auto";
    for (auto a : allowed) names += fmt::format(", {}", algorithm_name(a));
    throw Error(fmt::format("--algo '{}': {} has no algorithm '{}' (one of: {})", assignment, kname, aname, names));
  }
  by_kind[static_cast<unsigned>(*kind)] = *algo;
}

}  // namespace llamp::schedgen
