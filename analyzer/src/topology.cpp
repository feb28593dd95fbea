#include "llamp/analyzer/topology.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <sstream>

#include "llamp/analyzer/curve.hpp"
#include "llamp/units.hpp"

namespace llamp::analyzer {

uint64_t Topology::capacity() const {
  if (kind == Kind::Dragonfly) return uint64_t{g} * a * p;
  uint64_t c = k;  // k·(k/2)^(tiers−1)
  for (uint32_t i = 1; i < tiers; ++i) c *= k / 2;
  return c;
}

Topology parse_topology(const std::string& spec) {
  auto colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  std::map<std::string, uint32_t> kv;
  if (colon != std::string::npos) {
    std::stringstream ss(spec.substr(colon + 1));
    for (std::string item; std::getline(ss, item, ',');) {
      auto eq = item.find('=');
      char* end = nullptr;
      unsigned long v = eq == std::string::npos ? 0 : std::strtoul(item.c_str() + eq + 1, &end, 10);
      if (eq == std::string::npos || end == item.c_str() + eq + 1 || *end != '\0' || v == 0 || v > 65536)
        throw Error(fmt::format("--topology '{}': '{}' should be name=positive integer", spec, item));
      kv[item.substr(0, eq)] = static_cast<uint32_t>(v);
    }
  }
  auto need = [&](const char* key) {
    auto it = kv.find(key);
    if (it == kv.end()) throw Error(fmt::format("--topology '{}': missing {}=", spec, key));
    uint32_t v = it->second;
    kv.erase(it);
    return v;
  };
  Topology t;
  if (kind == "fattree") {
    t.kind = Topology::Kind::FatTree;
    t.k = need("k");
    t.tiers = need("tiers");
    if (t.k < 2 || t.k % 2 || t.tiers < 1 || t.tiers > 6)
      throw Error(fmt::format("--topology '{}': k must be even ≥ 2 and tiers 1..6", spec));
    t.link_classes.push_back("terminal");
    for (uint32_t j = 1; j < t.tiers; ++j) t.link_classes.push_back(fmt::format("tier{}-{}", j, j + 1));
  } else if (kind == "dragonfly") {
    t.kind = Topology::Kind::Dragonfly;
    t.g = need("g");
    t.a = need("a");
    t.p = need("p");
    t.link_classes = {"terminal", "intra", "inter"};
  } else {
    throw Error(fmt::format("--topology '{}': use fattree:k=K,tiers=T or dragonfly:g=G,a=A,p=P", spec));
  }
  if (!kv.empty()) throw Error(fmt::format("--topology '{}': unknown parameter '{}'", spec, kv.begin()->first));
  return t;
}

TopoRoute topo_route(const Topology& t, uint32_t na, uint32_t nb) {
  TopoRoute r;
  r.wires.assign(t.link_classes.size(), 0);
  if (na == nb) return r;
  r.wires[0] = 2;  // node → first switch, last switch → node
  if (t.kind == Topology::Kind::FatTree) {
    // Lowest tier whose subtree holds both nodes: hosts under a tier-l switch group = (k/2)^l.
    const uint64_t half = t.k / 2;
    uint64_t span = half;
    uint32_t level = 1;
    while (level < t.tiers && na / span != nb / span) {
      span *= half;
      ++level;
    }
    for (uint32_t j = 1; j < level; ++j) r.wires[j] = 2;
    r.switches = 2 * level - 1;
    return r;
  }
  const uint32_t ra = na / t.p, rb = nb / t.p;  // routers
  if (ra == rb) {
    r.switches = 1;
    return r;
  }
  const uint32_t ga = ra / t.a, gb = rb / t.a;
  if (ga == gb) {
    r.wires[1] = 1;
    r.switches = 2;
    return r;
  }
  // Group i's global link to group j sits on router (j' mod a), j' = j if j < i else j − 1.
  auto gateway = [&](uint32_t from, uint32_t to) { return from * t.a + (to < from ? to : to - 1) % t.a; };
  const uint32_t out = gateway(ga, gb), in = gateway(gb, ga);
  r.wires[2] = 1;
  r.wires[1] = (ra != out) + (rb != in);
  r.switches = 2 + (ra != out) + (rb != in);
  return r;
}

NetworkModel topology_model(const LogGP& p, const Topology& t, const std::vector<uint32_t>& node_of_rank,
                            double wire_ns, double switch_ns, double L_intra, double G_intra) {
  uint32_t nodes = 0;
  for (uint32_t n : node_of_rank) nodes = std::max(nodes, n + 1);
  if (nodes > t.capacity())
    throw Error(fmt::format("the placement uses {} nodes, the topology holds {}", nodes, t.capacity()));
  if (nodes > 4096) throw Error(fmt::format("{} nodes: the topology model supports up to 4096", nodes));
  NetworkModel m;
  m.loggp = p;
  m.node_of_rank = node_of_rank;
  m.num_nodes = nodes;
  m.class_name = t.link_classes;
  m.class_name.push_back("switch");
  m.class_value.assign(t.link_classes.size(), wire_ns);
  m.class_value.push_back(switch_ns);
  // Route 0: within a node.
  m.L_const = {L_intra};
  m.L_coef = {1.0};
  m.G_const = {G_intra};
  m.G_coef = {1.0};
  m.route_name = {"intra-node"};
  m.class_count = {std::vector<double>(m.class_name.size(), 0.0)};
  std::map<TopoRoute, uint16_t> ids;
  m.route_of_node_pair.assign(uint64_t{nodes} * nodes, 0);
  for (uint32_t a = 0; a < nodes; ++a)
    for (uint32_t b = 0; b < nodes; ++b) {
      if (a == b) continue;
      TopoRoute r = topo_route(t, a, b);
      auto [it, fresh] = ids.emplace(r, static_cast<uint16_t>(m.L_const.size()));
      if (fresh) {
        double L = switch_ns * r.switches;
        std::vector<double> count;
        for (uint32_t w : r.wires) {
          L += w * wire_ns;
          count.push_back(w);
        }
        count.push_back(r.switches);
        m.L_const.push_back(L);
        m.L_coef.push_back(1.0);
        m.G_const.push_back(p.G_ns_per_byte);
        m.G_coef.push_back(1.0);
        m.route_name.push_back(fmt::format("{} switches", r.switches));
        m.class_count.push_back(count);
      }
      m.route_of_node_pair[uint64_t{a} * nodes + b] = it->second;
    }
  return m;
}

nlohmann::json topology_report(Engine& e, const Topology& t, const std::vector<double>& percents, double T0) {
  (void)t;
  const NetworkModel saved = e.model();
  const double bx = e.base_xL(), bg = e.base_xG();
  nlohmann::json classes = nlohmann::json::array();
  for (size_t c = 0; c < saved.class_name.size(); ++c) {
    NetworkModel& m = e.model();
    for (size_t r = 0; r < m.L_const.size(); ++r) {
      const double count = saved.class_count[r][c];
      m.L_const[r] = saved.L_const[r] + saved.L_coef[r] * bx - count * saved.class_value[c];
      m.L_coef[r] = count;
    }
    e.set_base(saved.class_value[c], bg);
    Point p = e.at_L(saved.class_value[c]);
    nlohmann::json entry{{"class", saved.class_name[c]}, {"value_ns", saved.class_value[c]}, {"sensitivity", p.slope}};
    nlohmann::json tol = nlohmann::json::array();
    for (double pct : percents) {
      auto mx = max_x_within(e, Sweep::L, saved.class_value[c], T0 * (1 + pct / 100));
      tol.push_back({{"percent", pct}, {"max_value_ns", mx ? nlohmann::json(*mx) : nlohmann::json(nullptr)}});
    }
    entry["tolerance"] = tol;
    classes.push_back(entry);
  }
  e.model() = saved;
  e.set_base(bx, bg);
  return {{"link_classes", classes}};
}

std::string topology_text(const nlohmann::json& report) {
  std::string s = "topology link classes (sensitivity = ∂T/∂latency of one link/switch of the class):\n";
  for (const auto& c : report["link_classes"]) {
    s += fmt::format("  {:<10} {:>10}  sensitivity {:<8g}", c["class"].get<std::string>(),
                     units::format_time_ns(c["value_ns"].get<double>()), c["sensitivity"].get<double>());
    for (const auto& t : c["tolerance"])
      s += fmt::format("  {:g}%: {}", t["percent"].get<double>(),
                       t["max_value_ns"].is_null() ? std::string("unbounded")
                                                   : units::format_time_ns(t["max_value_ns"].get<double>()));
    s += "\n";
  }
  return s;
}

}  // namespace llamp::analyzer
