#include "llamp/analyzer/analysis.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <thread>

#include "llamp/units.hpp"

namespace llamp::analyzer {

namespace {
// MemAvailable from /proc/meminfo in bytes; 0 when unknown.
uint64_t available_memory() {
  uint64_t available = 0;
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %" SCNu64 " kB", &available) == 1) {
        available *= 1024;
        break;
      }
    std::fclose(f);
  }
  return available;
}
}  // namespace

CurvePlan curve_plan(const Engine& e, unsigned requested) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned threads = requested > 0 ? requested : hw;
  const uint64_t budget = available_memory() / 2;
  // Without /proc/meminfo: lanes and one engine per hardware thread.
  if (budget == 0 || e.lane_bytes() == 0) return CurvePlan{threads, Engine::kLanes};
  if (budget / e.lane_bytes() >= threads) return CurvePlan{threads, Engine::kLanes};
  if (requested == 0 && budget / e.lane_bytes() >= 1)
    return CurvePlan{static_cast<unsigned>(budget / e.lane_bytes()), Engine::kLanes};
  if (requested > 0) return CurvePlan{requested, 1};
  const uint64_t fit = 1 + budget / std::max<uint64_t>(1, e.twin_bytes());
  return CurvePlan{static_cast<unsigned>(std::min<uint64_t>(hw, fit)), 1};
}

Analysis analyze(Engine& e, const AnalyzeOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t evals0 = e.evaluations();
  const graph::Graph& g = e.graph();
  Analysis a;
  a.ranks = g.num_ranks;
  a.vertices = g.num_vertices();
  a.edges = g.num_edges();
  a.messages = g.num_messages();
  a.source = g.source;
  a.homogeneous = e.model().homogeneous();
  a.loggp = e.model().loggp;
  a.L0 = e.base_xL();
  a.G0 = e.base_xG();
  if (!(opt.x_max >= opt.x_min) || opt.x_min < 0)
    throw Error(fmt::format("--range {}:{} must satisfy 0 ≤ min ≤ max", opt.x_min, opt.x_max));

  // The base point: λ_G first, then λ_L last so the critical path reflects an L evaluation.
  Point pg = e.at_G(a.G0);
  a.lambda_G = pg.slope;
  Point pl = e.at_L(a.L0);
  a.T = pl.T;
  a.lambda_L = pl.slope;
  if (opt.critical_path) a.path = critical_path(e, opt.top);
  if (a.T > 0) {
    // ρ: the share of T spent in latency (bandwidth) terms on the critical path.
    a.rho_L = a.homogeneous ? a.L0 * a.lambda_L / a.T : (a.path ? a.path->latency_ns / a.T : 0.0);
    a.rho_G = a.homogeneous ? a.G0 * a.lambda_G / a.T : (a.path ? a.path->bandwidth_ns / a.T : 0.0);
  }

  const uint64_t before_curve = e.evaluations();
  a.curve = opt.step > 0 ? stepped_curve(e, Sweep::L, opt.x_min, opt.x_max, opt.step) : [&] {
    const CurvePlan plan = curve_plan(e, opt.threads);
    return exact_curve(e, Sweep::L, opt.x_min, opt.x_max, plan.threads, plan.lanes);
  }();
  // The curve's evaluations include those its other engines made.
  const uint64_t by_twins = a.curve.evaluations - (e.evaluations() - before_curve);
  for (double pct : opt.tolerance_percent) {
    if (!(pct >= 0)) throw Error(fmt::format("--tolerance {}: percentages must be non-negative", pct));
    Tolerance t;
    t.percent = pct;
    t.T_bound = a.T * (1 + pct / 100);
    // On the curve's range the exact curve answers without evaluating again.
    const std::optional<double> on_curve = a.L0 >= opt.x_min ? x_reaching(a.curve, t.T_bound) : std::nullopt;
    t.max_L = on_curve ? on_curve : max_x_within(e, Sweep::L, a.L0, t.T_bound);
    t.max_G = max_x_within(e, Sweep::G, a.G0, t.T_bound);
    a.tolerance.push_back(t);
  }
  a.evaluations = e.evaluations() - evals0 + by_twins;
  a.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return a;
}

namespace {

template <typename... Args>
void append(std::string& s, fmt::format_string<Args...> f, Args&&... args) {
  s += fmt::format(f, std::forward<Args>(args)...);
}

nlohmann::json opt_number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json to_json(const Analysis& a, const graph::Graph& g) {
  using nlohmann::json;
  json j;
  j["format"] = "llamp-analysis";
  j["version"] = 1;
  j["graph"] = {
      {"source", a.source}, {"ranks", a.ranks}, {"vertices", a.vertices}, {"edges", a.edges}, {"messages", a.messages}};
  j["params"] = {
      {"L_ns", a.loggp.L_ns},       {"o_send_ns", a.loggp.o_send_ns},         {"o_recv_ns", a.loggp.o_recv_ns},
      {"g_ns", a.loggp.g_ns},       {"G_ns_per_byte", a.loggp.G_ns_per_byte}, {"O_ns_per_byte", a.loggp.O_ns_per_byte},
      {"S_bytes", a.loggp.S_bytes}, {"o_rndv_ns", a.loggp.o_rndv_ns}};
  j["latency_variable"] = a.homogeneous ? "L" : "delta_L";
  j["L0_ns"] = a.L0;
  j["G0_ns_per_byte"] = a.G0;
  j["runtime_ns"] = a.T;
  j["lambda_L"] = a.lambda_L;
  j["rho_L"] = a.rho_L;
  j["lambda_G"] = a.lambda_G;
  j["rho_G"] = a.rho_G;
  j["critical_latencies_ns"] = a.curve.breakpoints;
  json curve = json::array();
  for (const Segment& s : a.curve.segments)
    curve.push_back({{"L_begin_ns", s.x_begin},
                     {"L_end_ns", s.x_end},
                     {"T_begin_ns", s.T_begin},
                     {"T_end_ns", s.T_end},
                     {"lambda_L", s.slope}});
  j["curve"] = curve;
  json tol = json::array();
  for (const Tolerance& t : a.tolerance) {
    json e{{"percent", t.percent},
           {"runtime_bound_ns", t.T_bound},
           {"max_L_ns", opt_number(t.max_L)},
           {"max_G_ns_per_byte", opt_number(t.max_G)}};
    e["delta_L_ns"] = t.max_L ? json(*t.max_L - a.L0) : json(nullptr);
    e["min_bandwidth_GB_per_s"] = t.max_G && *t.max_G > 0 ? json(1.0 / *t.max_G) : json(nullptr);
    tol.push_back(e);
  }
  j["tolerance"] = tol;
  if (a.path) {
    const CriticalPath& p = *a.path;
    json cp;
    cp["vertices"] = p.vertices.size();
    cp["latency_ns"] = p.latency_ns;
    cp["bandwidth_ns"] = p.bandwidth_ns;
    cp["latency_terms"] = p.latency_terms;
    cp["gap_bytes"] = p.gap_bytes;
    json ranks = json::array();
    for (uint32_t r = 0; r < p.rank_ns.size(); ++r)
      if (p.rank_ns[r] > 0)
        ranks.push_back({{"rank", r}, {"ns", p.rank_ns[r]}, {"share", a.T > 0 ? p.rank_ns[r] / a.T : 0}});
    cp["ranks"] = ranks;
    json pairs = json::array();
    for (auto& [k, v] : p.pairs)
      pairs.push_back({{"src", k.first},
                       {"dst", k.second},
                       {"messages", v.messages},
                       {"lambda_L", v.latency_terms},
                       {"lambda_G", v.gap_bytes}});
    cp["pairs"] = pairs;
    json top = json::array();
    for (auto& [v, ns] : p.top_vertices)
      top.push_back(
          {{"rank", g.rank_of(v)}, {"vertex", g.local_id(v)}, {"kind", graph::kind_name(g.kind[v])}, {"ns", ns}});
    cp["top_vertices"] = top;
    j["critical_path"] = cp;
  }
  j["evaluations"] = a.evaluations;
  j["seconds"] = a.seconds;
  return j;
}

std::string to_text(const Analysis& a, const graph::Graph& g) {
  using units::format_time_ns;
  std::string s;
  append(s, "graph      {}: {} ranks, {} vertices, {} edges, {} messages\n", a.source, a.ranks, a.vertices, a.edges,
         a.messages);
  append(s, "model      LogGPS  L={} o_send={} o_recv={} G={:.6g} ns/B  S={} B{}{}\n", format_time_ns(a.loggp.L_ns),
         format_time_ns(a.loggp.o_send_ns), format_time_ns(a.loggp.o_recv_ns), a.loggp.G_ns_per_byte,
         a.loggp.S_bytes == UINT64_MAX ? std::string("inf") : std::to_string(a.loggp.S_bytes),
         a.loggp.o_rndv_ns > 0 ? "  o_rndv=" + format_time_ns(a.loggp.o_rndv_ns) : std::string(),
         a.homogeneous ? "" : "  (heterogeneous: latencies per rank pair, sweep variable ΔL)");
  append(s, "runtime    T = {}\n", format_time_ns(a.T));
  append(s, "latency    λ_L = {:g}   ρ_L = {:.4f}\n", a.lambda_L, a.rho_L);
  append(s, "bandwidth  λ_G = {:g} B  ρ_G = {:.4f}\n", a.lambda_G, a.rho_G);
  if (!a.curve.segments.empty()) {
    append(s, "critical latencies in [{}, {}]: ", format_time_ns(a.curve.segments.front().x_begin),
           format_time_ns(a.curve.segments.back().x_end));
    if (a.curve.breakpoints.empty()) append(s, "none\n");
    for (size_t i = 0; i < a.curve.breakpoints.size(); ++i)
      append(s, "{}{}", format_time_ns(a.curve.breakpoints[i]), i + 1 < a.curve.breakpoints.size() ? ", " : "\n");
    for (const Segment& seg : a.curve.segments)
      append(s, "  L {:>12} .. {:>12}   λ_L = {:<6g} T = {} .. {}\n", format_time_ns(seg.x_begin),
             format_time_ns(seg.x_end), seg.slope, format_time_ns(seg.T_begin), format_time_ns(seg.T_end));
  }
  for (const Tolerance& t : a.tolerance) {
    append(s, "tolerance {:g}%: T ≤ {}:  L ≤ {}", t.percent, format_time_ns(t.T_bound),
           t.max_L ? format_time_ns(*t.max_L) : std::string("unbounded"));
    if (t.max_L) append(s, " (ΔL = {})", format_time_ns(*t.max_L - a.L0));
    append(s, ",  G ≤ {}\n", t.max_G ? fmt::format("{:.6g} ns/B", *t.max_G) : std::string("unbounded"));
  }
  if (a.path) {
    const CriticalPath& p = *a.path;
    append(s, "critical path: {} vertices, latency {} ({} L terms), bandwidth {}\n", p.vertices.size(),
           format_time_ns(p.latency_ns), p.latency_terms, format_time_ns(p.bandwidth_ns));
    std::vector<std::pair<double, uint32_t>> ranks;
    for (uint32_t r = 0; r < p.rank_ns.size(); ++r)
      if (p.rank_ns[r] > 0) ranks.emplace_back(p.rank_ns[r], r);
    std::sort(ranks.rbegin(), ranks.rend());
    for (size_t i = 0; i < ranks.size() && i < 8; ++i)
      append(s, "  rank {:<6} {:>12}  {:5.1f}%\n", ranks[i].second, format_time_ns(ranks[i].first),
             a.T > 0 ? 100 * ranks[i].first / a.T : 0.0);
    std::vector<std::pair<uint64_t, std::pair<uint32_t, uint32_t>>> pairs;
    for (auto& [k, v] : p.pairs) pairs.emplace_back(v.latency_terms, k);
    std::sort(pairs.rbegin(), pairs.rend());
    for (size_t i = 0; i < pairs.size() && i < 8; ++i)
      append(s, "  messages {} → {}: {} ({} L terms)\n", pairs[i].second.first, pairs[i].second.second,
             p.pairs.at(pairs[i].second).messages, pairs[i].first);
    for (auto& [v, ns] : p.top_vertices) append(s, "  top: {}  {}\n", graph::describe_vertex(g, v), format_time_ns(ns));
  }
  append(s, "({} evaluations, {:.3f} s)\n", a.evaluations, a.seconds);
  return s;
}

std::string curve_csv(const Analysis& a) {
  std::string s = "L_ns,delta_L_ns,T_ns,lambda_L,rho_L\n";
  auto row = [&](double x, double T, double slope) {
    double L = a.homogeneous ? x : a.loggp.L_ns + x;
    s += fmt::format("{},{},{},{},{}\n", x, x - a.L0, T, slope, T > 0 ? L * slope / T : 0.0);
  };
  for (const Segment& seg : a.curve.segments) row(seg.x_begin, seg.T_begin, seg.slope);
  if (!a.curve.segments.empty()) {
    const Segment& last = a.curve.segments.back();
    row(last.x_end, last.T_end, last.slope);
  }
  return s;
}

}  // namespace llamp::analyzer
