#pragma once
// Network topologies (paper 000, Appendix H): a message between nodes a and b crosses
// `switches` switches and a number of wires of each link class; its latency is
//     Σ_c wires_c · l_wire + switches · d_switch          (ΔL, the injected latency, added on top)
// Fat tree (k-port switches, T tiers): classes "terminal" (node↔leaf) and "tier j-(j+1)".
// Dragonfly (g groups of a routers with p nodes each, groups fully connected, one global link
// between each pair of groups, minimal routing): classes "terminal", "intra", "inter".
// Per link class the report gives the sensitivity ∂T/∂l_c (wires of that class on the critical
// path) and the tolerance: the largest l_c with T ≤ (1+x%)·T0, the other classes fixed.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llamp/analyzer/engine.hpp"

namespace llamp::analyzer {

struct Topology {
  enum class Kind { FatTree, Dragonfly } kind = Kind::FatTree;
  uint32_t k = 0, tiers = 0;     // fat tree
  uint32_t g = 0, a = 0, p = 0;  // dragonfly
  std::vector<std::string> link_classes;
  uint64_t capacity() const;  // nodes it can hold
};

// "fattree:k=8,tiers=3" or "dragonfly:g=9,a=4,p=2".
Topology parse_topology(const std::string& spec);

struct TopoRoute {
  std::vector<uint32_t> wires;  // per link class
  uint32_t switches = 0;
  bool operator<(const TopoRoute& o) const { return wires != o.wires ? wires < o.wires : switches < o.switches; }
};
TopoRoute topo_route(const Topology& t, uint32_t node_a, uint32_t node_b);

// Messages within a node use (L_intra, G_intra); between nodes the topology's latency with the
// given wire latency and switch delay, and the model's G. The sweep variable xL is ΔL.
NetworkModel topology_model(const LogGP& p, const Topology& t, const std::vector<uint32_t>& node_of_rank,
                            double wire_ns, double switch_ns, double L_intra, double G_intra);

// Sensitivity and tolerance per link class (restores the engine's model afterwards).
nlohmann::json topology_report(Engine& e, const Topology& t, const std::vector<double>& percents, double T0);
std::string topology_text(const nlohmann::json& report);

}  // namespace llamp::analyzer
