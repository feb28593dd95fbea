#pragma once
// Per-message network costs for the native engine. A message from rank i to rank j follows a
// *route* r = route_of(i, j); its latency and per-byte gap are affine in two sweep variables:
//     L_msg = L_const[r] + L_coef[r] · xL          G_msg = G_const[r] + G_coef[r] · xG
// Homogeneous LogGPS (one route, L_const = G_const = 0, coefs 1) makes xL = L and xG = G.
// Heterogeneous LogGP (paper 000, Appendix I) gives each rank pair its own route with L_const =
// L_ij, and xL = ΔL added to every message (what the latency injector does). Topologies
// (Appendix H) make L_const the cost of all other link classes and L_coef the number of links of
// the swept class on the route (topology.hpp builds those).
#include <cstdint>
#include <string>
#include <vector>

#include "llamp/loggp_params.hpp"

namespace llamp::analyzer {

struct NetworkModel {
  LogGP loggp;  // o, O, S (and the homogeneous L, G the defaults come from)

  // Routes. Homogeneous when node_of_rank is empty: one route 0.
  std::vector<double> L_const, L_coef, G_const, G_coef;
  std::vector<std::string> route_name;  // for reports ("intra-node", "inter-node", "rank 3→5")

  // Heterogeneous: rank → node, and per ordered node pair its route (num_nodes² entries).
  std::vector<uint32_t> node_of_rank;
  uint32_t num_nodes = 0;
  std::vector<uint16_t> route_of_node_pair;

  // Optional latency classes (topology link classes): route r contains class_count[r][c] units of
  // class c, each of latency class_value[c], already included in L_const[r].
  std::vector<std::string> class_name;
  std::vector<double> class_value;
  std::vector<std::vector<double>> class_count;

  bool homogeneous() const { return node_of_rank.empty(); }
  uint32_t route_of(uint32_t src_rank, uint32_t dst_rank) const {
    return homogeneous() ? 0
                         : route_of_node_pair[uint64_t{node_of_rank[src_rank]} * num_nodes + node_of_rank[dst_rank]];
  }
};

// The homogeneous model: xL is L, xG is G.
NetworkModel homogeneous_model(const LogGP& p);

// Prints a note on stderr for each given parameter the path model does not use: g (as in LLAMP's
// LP) and o_coll (llamp schedgen puts it into the graph).
void note_parameters_outside_the_path_model(const LogGP& p);

// Intra/inter-node model from a rank → node map: messages between ranks of one node use L_intra,
// G_intra, others L_inter, G_inter; xL is ΔL added to both (xG likewise).
NetworkModel two_level_model(const LogGP& p, std::vector<uint32_t> node_of_rank, double L_intra, double G_intra,
                             double L_inter, double G_inter);

// Reads a rank → node map: one line per rank, "node-name" or "rank node-name" (# comments).
// Returns node ids 0.. in order of first appearance; names are kept for machine files.
struct NodeMap {
  std::vector<uint32_t> node_of_rank;
  std::vector<std::string> node_names;
};
NodeMap read_node_map(const std::string& path, uint32_t num_ranks);
NodeMap block_node_map(uint32_t num_ranks, uint32_t ranks_per_node);

// A P×P matrix of latencies in ns (whitespace-separated, # comments), optionally a second one of
// G in ns/byte; every rank pair becomes its own route (P ≤ 256, so routes fit 16 bits).
NetworkModel matrix_model(const LogGP& p, const std::string& L_matrix_path, const std::string& G_matrix_path,
                          uint32_t num_ranks);

}  // namespace llamp::analyzer
