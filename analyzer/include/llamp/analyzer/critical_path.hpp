#pragma once
// The critical path at the engine's last evaluation point: walked back from the vertex that ends
// last through the terms that attain each max() (ties: the larger slope, as in the evaluation).
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "llamp/analyzer/engine.hpp"

namespace llamp::analyzer {

struct PairTraffic {
  uint64_t messages = 0;       // messages of this rank pair on the path
  uint64_t latency_terms = 0;  // L terms they contribute (eager 1; rendezvous 1–4, docs/analyzer.md)
  double gap_bytes = 0;        // Σ (s−1) over them: the G coefficient
};

struct CriticalPath {
  double T = 0;
  std::vector<graph::VertexId> vertices;                         // first to last
  std::vector<double> rank_ns;                                   // per rank: calc and CPU overhead time on the path
  double latency_ns = 0, bandwidth_ns = 0;                       // L terms and (s−1)G terms on the path
  uint64_t latency_terms = 0;                                    // = λ_L for homogeneous L
  double gap_bytes = 0;                                          // = λ_G
  std::map<std::pair<uint32_t, uint32_t>, PairTraffic> pairs;    // (src rank, dst rank)
  std::vector<std::pair<graph::VertexId, double>> top_vertices;  // largest costs on the path
};

// Walks the path of the last evaluate() of `e` (call it right after evaluating).
CriticalPath critical_path(const Engine& e, size_t top = 10);

}  // namespace llamp::analyzer
