#include "llamp/analyzer/placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "llamp/analyzer/critical_path.hpp"
#include "llamp/units.hpp"

namespace llamp::analyzer {

nlohmann::json pairwise_sensitivity(Engine& e, size_t top) {
  e.at_L(e.base_xL());
  CriticalPath cp = critical_path(e, 0);
  std::vector<std::pair<std::pair<uint32_t, uint32_t>, PairTraffic>> pairs(cp.pairs.begin(), cp.pairs.end());
  std::sort(pairs.begin(), pairs.end(), [](auto& a, auto& b) {
    return a.second.latency_terms != b.second.latency_terms ? a.second.latency_terms > b.second.latency_terms
                                                            : a.second.gap_bytes > b.second.gap_bytes;
  });
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < pairs.size() && i < top; ++i)
    out.push_back({{"src", pairs[i].first.first},
                   {"dst", pairs[i].first.second},
                   {"lambda_L", pairs[i].second.latency_terms},
                   {"lambda_G", pairs[i].second.gap_bytes},
                   {"route", e.model().route_name[e.model().route_of(pairs[i].first.first, pairs[i].first.second)]}});
  return out;
}

namespace {

// Network cost of the critical path's traffic between ranks i and j under a placement.
double pair_cost(const NetworkModel& m, const std::vector<uint32_t>& node, uint32_t i, uint32_t j, const PairTraffic& t,
                 double xL, double xG) {
  const uint64_t n = m.num_nodes;
  const uint32_t r = m.route_of_node_pair[uint64_t{node[i]} * n + node[j]];
  return static_cast<double>(t.latency_terms) * (m.L_const[r] + m.L_coef[r] * xL) +
         t.gap_bytes * (m.G_const[r] + m.G_coef[r] * xG);
}

}  // namespace

PlacementResult optimize_placement(Engine& e, const NodeMap& /*nodes*/, uint32_t max_iterations) {
  NetworkModel& m = e.model();
  const uint32_t P = e.graph().num_ranks;
  PlacementResult res;
  Point p = e.at_L(e.base_xL());
  res.T_before = res.T_after = p.T;
  for (uint32_t it = 0; it < max_iterations; ++it) {
    res.iterations = it + 1;
    CriticalPath cp = critical_path(e, 0);
    // Critical traffic per rank: which pairs each rank takes part in.
    std::vector<std::vector<std::pair<uint32_t, const PairTraffic*>>> touching(P);
    for (auto& [k, t] : cp.pairs) {
      touching[k.first].emplace_back(k.second, &t);
      if (k.second != k.first) touching[k.second].emplace_back(k.first, &t);
    }
    std::vector<uint32_t> candidates;
    for (uint32_t r = 0; r < P; ++r)
      if (!touching[r].empty()) candidates.push_back(r);
    auto cost_of = [&](const std::vector<uint32_t>& node, uint32_t r) {
      double c = 0;
      for (auto& [other, t] : touching[r]) c += pair_cost(m, node, r, other, *t, e.base_xL(), e.base_xG());
      return c;
    };
    double best_gain = 0;
    std::pair<uint32_t, uint32_t> best{0, 0};
    std::vector<uint32_t>& node = m.node_of_rank;
    for (uint32_t i : candidates)
      for (uint32_t j = 0; j < P; ++j) {
        if (node[i] == node[j]) continue;
        double before = cost_of(node, i) + cost_of(node, j);
        std::swap(node[i], node[j]);
        double after = cost_of(node, i) + cost_of(node, j);
        std::swap(node[i], node[j]);
        if (before - after > best_gain + 1e-9) {
          best_gain = before - after;
          best = {i, j};
        }
      }
    if (best_gain <= 0) break;
    std::swap(node[best.first], node[best.second]);
    Point q = e.at_L(e.base_xL());
    if (q.T < res.T_after) {
      res.T_after = q.T;
      res.swaps.push_back(best);
    } else {
      std::swap(node[best.first], node[best.second]);  // revert and stop (Algorithm 3, line 12)
      e.at_L(e.base_xL());
      break;
    }
  }
  res.node_of_rank = m.node_of_rank;
  return res;
}

std::string machine_file(const PlacementResult& r, const NodeMap& nodes) {
  std::string s;
  for (uint32_t node : r.node_of_rank) s += fmt::format("{}:1\n", nodes.node_names.at(node));
  return s;
}

nlohmann::json to_json(const PlacementResult& r) {
  nlohmann::json swaps = nlohmann::json::array();
  for (auto& [a, b] : r.swaps) swaps.push_back({a, b});
  return {{"runtime_before_ns", r.T_before},
          {"runtime_after_ns", r.T_after},
          {"swaps", swaps},
          {"iterations", r.iterations},
          {"node_of_rank", r.node_of_rank}};
}

std::string placement_text(const nlohmann::json& j, const std::string& path) {
  double before = j["runtime_before_ns"], after = j["runtime_after_ns"];
  return fmt::format("placement: T {} → {} ({:+.3f}%) after {} swaps; machine file {}\n", units::format_time_ns(before),
                     units::format_time_ns(after), before > 0 ? 100 * (after - before) / before : 0.0,
                     j["swaps"].size(), path);
}

}  // namespace llamp::analyzer
