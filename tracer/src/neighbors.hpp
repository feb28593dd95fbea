#pragma once
// The neighborhood of the calling rank on a communicator with a process topology, as the
// neighbor collectives see it (MPI 4.0, Sec. 8.6): sources and destinations in MPI's order.
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "comm_registry.hpp"

namespace llamp::tracer {

// Fills world ranks (trace::kProcNull for MPI_PROC_NULL), asking the topology on the first call
// for a communicator only (the queries cost about 1 us, inside a call whose time is otherwise the
// application's). Both stay empty when the communicator has no topology (the call then fails in
// MPI).
void topology_neighbors(MPI_Comm comm, const CommInfo& ci, std::vector<int32_t>& sources,
                        std::vector<int32_t>& destinations);

}  // namespace llamp::tracer
