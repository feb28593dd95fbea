#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "llamp/schedgen/collectives.hpp"
#include "llamp/trace_event.hpp"

namespace llamp::schedgen {

// One collective call as every member recorded it, in communicator rank order.
struct CollCall {
  uint64_t comm = 0;
  std::vector<int32_t> members;             // world ranks
  std::vector<const trace::Event*> events;  // per member
  std::vector<uint64_t> call_index;         // per member
};

// Set only on the nonblocking collectives schedgen makes from a persistent collective's start
// (schedgen.cpp); never in a trace file, whose flags stop far below it.
inline constexpr uint32_t kFlagPersistentStart = 1u << 31;

// The call as errors name it: "MPI_Iallreduce", or for a persistent collective's start
// "MPI_Iallreduce, started by MPI_Start/MPI_Startall of a persistent request".
std::string collective_label(const trace::Event& e);

CollKind coll_kind_of(trace::Call c);
// Throws llamp::Error naming ranks and calls when members disagree (kind, root, counts).
CollSpec make_spec(const CollCall& call, uint64_t segment_bytes);

}  // namespace llamp::schedgen
