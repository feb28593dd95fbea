#pragma once
#include <cstdint>
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

CollKind coll_kind_of(trace::Call c);
// Throws llamp::Error naming ranks and calls when members disagree (kind, root, counts).
CollSpec make_spec(const CollCall& call, uint64_t segment_bytes);

}  // namespace llamp::schedgen
