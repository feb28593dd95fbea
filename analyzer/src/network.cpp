#include "llamp/analyzer/network.hpp"

#include <fmt/format.h>

#include <cstdio>

#include <fstream>
#include <sstream>
#include <unordered_map>

#include "llamp/error.hpp"

namespace llamp::analyzer {

void note_parameters_outside_the_path_model(const LogGP& p) {
  if (p.g_ns > 0)
    fmt::print(stderr, "llamp: note: g = {} ns is not part of the path model (as in LLAMP's LP); it is ignored\n",
               p.g_ns);
  if (p.o_coll_ns > 0)
    fmt::print(stderr,
               "llamp: note: o_coll = {} ns is not part of the path model; `llamp schedgen --collective-overhead` "
               "puts it into the graph\n",
               p.o_coll_ns);
  if (p.o_probe_ns > 0)
    fmt::print(stderr,
               "llamp: note: o_probe = {} ns is not part of the path model; `llamp schedgen --probe-overhead` puts "
               "it into the graph\n",
               p.o_probe_ns);
  if (p.o_rndv_cold_ns > 0)
    fmt::print(stderr,
               "llamp: note: o_rndv_cold = {} ns is not part of the path model; `llamp schedgen --cold-handshake` "
               "puts it into the graph\n",
               p.o_rndv_cold_ns);
}

NetworkModel homogeneous_model(const LogGP& p) {
  NetworkModel m;
  m.loggp = p;
  m.L_const = {0.0};
  m.L_coef = {1.0};
  m.G_const = {0.0};
  m.G_coef = {1.0};
  m.route_name = {"all"};
  return m;
}

NetworkModel two_level_model(const LogGP& p, std::vector<uint32_t> node_of_rank, double L_intra, double G_intra,
                             double L_inter, double G_inter) {
  NetworkModel m;
  m.loggp = p;
  m.L_const = {L_intra, L_inter};
  m.L_coef = {1.0, 1.0};
  m.G_const = {G_intra, G_inter};
  m.G_coef = {1.0, 1.0};
  m.route_name = {"intra-node", "inter-node"};
  uint32_t nodes = 0;
  for (uint32_t n : node_of_rank) nodes = std::max(nodes, n + 1);
  if (nodes > 16384) throw Error(fmt::format("{} nodes: more than this model's 16384", nodes));
  m.node_of_rank = std::move(node_of_rank);
  m.num_nodes = nodes;
  m.route_of_node_pair.assign(uint64_t{nodes} * nodes, 1);
  for (uint32_t n = 0; n < nodes; ++n) m.route_of_node_pair[uint64_t{n} * nodes + n] = 0;
  return m;
}

NodeMap read_node_map(const std::string& path, uint32_t num_ranks) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: cannot open rank → node map", path));
  NodeMap map;
  std::unordered_map<std::string, uint32_t> ids;
  std::string line;
  uint32_t lineno = 0;
  std::vector<bool> seen(num_ranks, false);
  map.node_of_rank.assign(num_ranks, 0);
  uint32_t next_rank = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream ss(line);
    std::vector<std::string> words;
    for (std::string w; ss >> w;) words.push_back(w);
    if (words.empty()) continue;
    uint32_t rank = next_rank;
    std::string node = words.back();
    if (words.size() == 2) {
      try {
        size_t used = 0;
        unsigned long r = std::stoul(words[0], &used);
        if (used != words[0].size()) throw std::invalid_argument("");
        rank = static_cast<uint32_t>(r);
      } catch (const std::exception&) {
        throw Error(fmt::format("{}:{}: expected 'rank node', got '{}'", path, lineno, line));
      }
    } else if (words.size() != 1) {
      throw Error(fmt::format("{}:{}: expected 'node' or 'rank node'", path, lineno));
    }
    if (rank >= num_ranks)
      throw Error(fmt::format("{}:{}: rank {} out of range (the graph has {} ranks)", path, lineno, rank, num_ranks));
    if (seen[rank]) throw Error(fmt::format("{}:{}: rank {} placed twice", path, lineno, rank));
    seen[rank] = true;
    auto [it, fresh] = ids.emplace(node, static_cast<uint32_t>(map.node_names.size()));
    if (fresh) map.node_names.push_back(node);
    map.node_of_rank[rank] = it->second;
    next_rank = rank + 1;
  }
  for (uint32_t r = 0; r < num_ranks; ++r)
    if (!seen[r]) throw Error(fmt::format("{}: rank {} has no node", path, r));
  return map;
}

NodeMap block_node_map(uint32_t num_ranks, uint32_t ranks_per_node) {
  if (ranks_per_node == 0) throw Error("--ranks-per-node must be at least 1");
  NodeMap map;
  for (uint32_t r = 0; r < num_ranks; ++r) map.node_of_rank.push_back(r / ranks_per_node);
  for (uint32_t n = 0; n <= (num_ranks - 1) / ranks_per_node; ++n) map.node_names.push_back(fmt::format("node{}", n));
  return map;
}

namespace {

std::vector<double> read_matrix(const std::string& path, uint32_t n) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: cannot open matrix file", path));
  std::vector<double> m;
  std::string line;
  uint32_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream ss(line);
    for (std::string w; ss >> w;) {
      char* end = nullptr;
      double v = std::strtod(w.c_str(), &end);
      if (end != w.c_str() + w.size() || !(v >= 0) || v > 1e18)
        throw Error(fmt::format("{}:{}: '{}' is not a non-negative number", path, lineno, w));
      m.push_back(v);
    }
  }
  if (m.size() != uint64_t{n} * n)
    throw Error(
        fmt::format("{}: expected a {}×{} matrix ({} numbers), found {}", path, n, n, uint64_t{n} * n, m.size()));
  return m;
}

}  // namespace

NetworkModel matrix_model(const LogGP& p, const std::string& L_path, const std::string& G_path, uint32_t n) {
  if (n > 256) throw Error(fmt::format("latency matrices support up to 256 ranks (the graph has {})", n));
  std::vector<double> L = read_matrix(L_path, n);
  std::vector<double> G =
      G_path.empty() ? std::vector<double>(uint64_t{n} * n, p.G_ns_per_byte) : read_matrix(G_path, n);
  NetworkModel m;
  m.loggp = p;
  m.num_nodes = n;
  for (uint32_t r = 0; r < n; ++r) m.node_of_rank.push_back(r);
  m.route_of_node_pair.resize(uint64_t{n} * n);
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t j = 0; j < n; ++j) {
      m.route_of_node_pair[uint64_t{i} * n + j] = static_cast<uint16_t>(m.L_const.size());
      m.L_const.push_back(L[uint64_t{i} * n + j]);
      m.L_coef.push_back(1.0);
      m.G_const.push_back(G[uint64_t{i} * n + j]);
      m.G_coef.push_back(1.0);
      m.route_name.push_back(fmt::format("{}→{}", i, j));
    }
  return m;
}

}  // namespace llamp::analyzer
