#include "neighbors.hpp"

#include <vector>

namespace llamp::tracer {
namespace {

void to_world(const CommInfo& ci, const std::vector<int>& ranks, std::vector<int32_t>& out) {
  out.resize(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) out[i] = ci.peer_world(ranks[i]);
}

// Asks MPI; leaves both empty when the communicator has no topology.
void ask_topology(MPI_Comm comm, const CommInfo& ci, std::vector<int32_t>& sources,
                  std::vector<int32_t>& destinations) {
  int kind = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &kind) != MPI_SUCCESS) return;
  std::vector<int> in, out;
  if (kind == MPI_CART) {
    // Each dimension's -1 neighbor, then its +1 neighbor; sources and destinations alike.
    int ndims = 0;
    PMPI_Cartdim_get(comm, &ndims);
    for (int d = 0; d < ndims; ++d) {
      int minus = MPI_PROC_NULL, plus = MPI_PROC_NULL;
      PMPI_Cart_shift(comm, d, 1, &minus, &plus);
      in.push_back(minus);
      in.push_back(plus);
    }
    out = in;
  } else if (kind == MPI_GRAPH) {
    int me = 0, n = 0;
    PMPI_Comm_rank(comm, &me);
    PMPI_Graph_neighbors_count(comm, me, &n);
    in.resize(static_cast<size_t>(n));
    if (n > 0) PMPI_Graph_neighbors(comm, me, n, in.data());
    out = in;
  } else if (kind == MPI_DIST_GRAPH) {
    int indegree = 0, outdegree = 0, weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &indegree, &outdegree, &weighted);
    // One element more than needed: MPI may refuse a null array even for a degree of 0. A weighted
    // graph hands back its weights, which must have room; an unweighted one takes MPI_UNWEIGHTED.
    in.resize(static_cast<size_t>(indegree) + 1);
    out.resize(static_cast<size_t>(outdegree) + 1);
    std::vector<int> in_w(weighted ? in.size() : 0), out_w(weighted ? out.size() : 0);
    PMPI_Dist_graph_neighbors(comm, indegree, in.data(), weighted ? in_w.data() : MPI_UNWEIGHTED, outdegree, out.data(),
                              weighted ? out_w.data() : MPI_UNWEIGHTED);
    in.resize(static_cast<size_t>(indegree));
    out.resize(static_cast<size_t>(outdegree));
  } else {
    return;
  }
  to_world(ci, in, sources);
  to_world(ci, out, destinations);
}

}  // namespace

void topology_neighbors(MPI_Comm comm, const CommInfo& ci, std::vector<int32_t>& sources,
                        std::vector<int32_t>& destinations) {
  std::call_once(ci.neighbors_once, [&] { ask_topology(comm, ci, ci.neighbor_sources, ci.neighbor_destinations); });
  sources = ci.neighbor_sources;
  destinations = ci.neighbor_destinations;
}

}  // namespace llamp::tracer
