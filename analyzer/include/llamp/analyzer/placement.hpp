#pragma once
// Rank placement (paper 000, Appendix J, Algorithm 3): starting from the given rank → node map,
// repeatedly read the pairwise sensitivities of the critical path (messages and bytes per rank
// pair, i.e. λ_L^{ij} and λ_G^{ij}), estimate for every swap of two ranks on different nodes the
// change of the critical path's network cost, apply the best positive one, and keep it only if
// the re-evaluated runtime improves. Stops when no swap is estimated to help or T got worse.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llamp/analyzer/engine.hpp"

namespace llamp::analyzer {

struct PlacementResult {
  double T_before = 0, T_after = 0;
  std::vector<uint32_t> node_of_rank;                // the final placement
  std::vector<std::pair<uint32_t, uint32_t>> swaps;  // accepted swaps of ranks, in order
  uint32_t iterations = 0;
};

// Pairwise λ_L^{ij} / λ_G^{ij} at the engine's base point, largest first (at most `top`).
nlohmann::json pairwise_sensitivity(Engine& e, size_t top);

// Algorithm 3 on a heterogeneous engine; the engine's model ends with the final placement.
PlacementResult optimize_placement(Engine& e, const NodeMap& nodes, uint32_t max_iterations = 100);

// An MPICH (Hydra) machine file: line i = "node:1" for rank i, so `mpiexec.mpich -f FILE` places
// rank i on that node.
std::string machine_file(const PlacementResult& r, const NodeMap& nodes);
nlohmann::json to_json(const PlacementResult& r);
std::string placement_text(const nlohmann::json& report, const std::string& machine_file_path);

}  // namespace llamp::analyzer
