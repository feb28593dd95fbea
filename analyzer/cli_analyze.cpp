// `llamp analyze GRAPH [options]`: the native engine on a GOAL or binary graph.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "llamp/analyzer/analysis.hpp"
#include "llamp/analyzer/cli.hpp"
#include "llamp/analyzer/lp_analysis.hpp"
#include "llamp/analyzer/lp_cli.hpp"
#include "llamp/analyzer/noise.hpp"
#include "llamp/analyzer/placement.hpp"
#include "llamp/analyzer/poll_lag.hpp"
#include "llamp/analyzer/polling_phase.hpp"
#include "llamp/analyzer/topology.hpp"
#include "llamp/error.hpp"
#include "llamp/graph_io.hpp"
#include "llamp/loggp_params.hpp"
#include "llamp/units.hpp"

namespace llamp::analyzer {
namespace {

struct AnalyzeArgs {
  std::string graph, params, json, csv, plot, measured;
  std::map<std::string, std::string> flags;  // LogGP flag → value
  std::string range = "0:100us", step, tolerance = "1,2,5";
  bool no_path = false;
  std::string solver = "native";   // native | clp (the LP route, lp_analysis.hpp)
  std::string poll_lag = "phase";  // phase | resolved | cap (poll_lag.hpp, polling_phase.hpp)
  size_t top = 10;
  unsigned threads = 0;  // 0: auto
  // Heterogeneous models.
  std::string node_map, L_intra, G_intra, L_matrix, G_matrix;
  uint32_t ranks_per_node = 0;
  // Topology.
  std::string topology, wire_latency, switch_delay, topology_report;
  // Placement.
  std::string place_out;
  // Machine noise (noise.hpp).
  std::vector<std::string> noise;
  unsigned noise_samples = 32;
  uint64_t noise_seed = 1;
  std::string noise_at;
  std::string noise_terms = "all";
};

void write_text(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  std::ofstream out(path);
  if (!out) throw Error(fmt::format("{}: cannot write", path));
  out << text;
  if (!out.flush()) throw Error(fmt::format("{}: write failed", path));
}

std::pair<double, double> parse_range(const std::string& s) {
  auto colon = s.find(':');
  if (colon == std::string::npos) throw Error(fmt::format("--range '{}': expected MIN:MAX, e.g. 0:100us", s));
  std::string lo = s.substr(0, colon), hi = s.substr(colon + 1);
  // "0:100us": a bare 0 is unambiguous.
  double a = lo == "0" ? 0.0 : units::parse_time_ns(lo, "--range (min)");
  double b = units::parse_time_ns(hi, "--range (max)");
  if (b < a) throw Error(fmt::format("--range '{}': max is below min", s));
  return {a, b};
}

std::vector<double> parse_percents(const std::string& s) {
  std::vector<double> v;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    double x = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !(x >= 0) || x > 1e6)
      throw Error(fmt::format("--tolerance '{}': expected percentages like 1,2,5", s));
    v.push_back(x);
  }
  return v;
}

// The plot script sits next to the binary (build tree and install tree); LLAMP_PLOT_SCRIPT overrides.
std::string plot_script() {
  if (const char* env = std::getenv("LLAMP_PLOT_SCRIPT")) return env;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto p = exe.parent_path() / "llamp-plot-curve.py";
    if (std::filesystem::exists(p)) return p.string();
  }
  throw Error("llamp-plot-curve.py not found next to the llamp binary (set LLAMP_PLOT_SCRIPT)");
}

void run_plot(const nlohmann::json& report, const std::string& png, const std::string& measured) {
  std::string tmp = png + ".analysis.json";
  write_text(tmp, report.dump());
  std::string cmd = fmt::format("/usr/bin/python3 '{}' --analysis '{}' --out '{}'", plot_script(), tmp, png);
  if (!measured.empty()) cmd += fmt::format(" --measured '{}'", measured);
  int rc = std::system(cmd.c_str());
  std::filesystem::remove(tmp);
  if (rc != 0) throw Error(fmt::format("plotting failed (exit status {}): {}", rc, cmd));
}

// --noise-at: latencies with units, comma-separated; default 11 points evenly over the range.
std::vector<double> noise_points(const std::string& list, double x_min, double x_max) {
  std::vector<double> xs;
  if (list.empty()) {
    for (int k = 0; k <= 10; ++k) xs.push_back(x_min + (x_max - x_min) * k / 10);
    return xs;
  }
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    const double x = item == "0" ? 0.0 : units::parse_time_ns(item, "--noise-at");
    if (x < x_min - 0.5 || x > x_max + 0.5)
      throw Error(fmt::format("--noise-at {}: outside --range ({} to {} ns)", item, x_min, x_max));
    xs.push_back(x);
  }
  return xs;
}

std::string noise_text(const nlohmann::json& noise) {
  std::string terms;
  if (noise.contains("terms") && noise["terms"].size() < 3)
    terms = fmt::format(", only {}", fmt::join(noise["terms"].get<std::vector<std::string>>(), " + "));
  std::string text =
      fmt::format("\nWith the recorded machine noise ({} samples{}; docs/analyzer.md, 'Machine noise'):\n",
                  noise["samples"].get<unsigned>(), terms);
  text += fmt::format("  {:>12}  {:>14}  {:>14}  {:>10}\n", "L", "T model", "T with noise", "noise");  // medians
  for (const auto& p : noise["points"])
    text += fmt::format("  {:>12}  {:>14}  {:>14}  {:>9.3f}%\n", units::format_time_ns(p["L_ns"].get<double>()),
                        units::format_time_ns(p["T_model_ns"].get<double>()),
                        units::format_time_ns(p["T_noise_median_ns"].get<double>()),
                        100 * p["noise_ns"].get<double>() / p["T_model_ns"].get<double>());
  return text;
}

NetworkModel build_model(const AnalyzeArgs& a, const LogGP& p, const graph::Graph& g, NodeMap* nodes_out) {
  const bool two_level = !a.node_map.empty() || a.ranks_per_node > 0;
  if (!a.L_matrix.empty()) {
    if (two_level || !a.topology.empty())
      throw Error("--L-matrix cannot be combined with --node-map/--ranks-per-node/--topology");
    return matrix_model(p, a.L_matrix, a.G_matrix, g.num_ranks);
  }
  if (!a.G_matrix.empty()) throw Error("--G-matrix needs --L-matrix");
  if (!two_level) {
    if (!a.topology.empty()) throw Error("--topology needs a rank placement: --node-map or --ranks-per-node");
    return homogeneous_model(p);
  }
  if (!a.node_map.empty() && a.ranks_per_node > 0) throw Error("give either --node-map or --ranks-per-node");
  NodeMap nodes =
      a.node_map.empty() ? block_node_map(g.num_ranks, a.ranks_per_node) : read_node_map(a.node_map, g.num_ranks);
  if (nodes_out) *nodes_out = nodes;
  double L_intra = a.L_intra.empty() ? p.L_ns : units::parse_time_ns(a.L_intra, "--L-intra");
  double G_intra = a.G_intra.empty() ? p.G_ns_per_byte : units::parse_time_ns(a.G_intra, "--G-intra (time per byte)");
  if (!a.topology.empty()) {
    Topology topo = parse_topology(a.topology);
    double wire = a.wire_latency.empty() ? 0.0 : units::parse_time_ns(a.wire_latency, "--wire-latency");
    double sw = a.switch_delay.empty() ? 0.0 : units::parse_time_ns(a.switch_delay, "--switch-delay");
    return topology_model(p, topo, nodes.node_of_rank, wire, sw, L_intra, G_intra);
  }
  return two_level_model(p, nodes.node_of_rank, L_intra, G_intra, p.L_ns, p.G_ns_per_byte);
}

void run_analyze(const AnalyzeArgs& a) {
  LogGPParams params = a.params.empty() ? LogGPParams{} : read_loggp_params(a.params);
  for (auto& [flag, value] : a.flags) set_loggp_flag(params, flag, value);
  const LogGP p = resolve(params);
  note_parameters_outside_the_path_model(p);

  graph::Graph g = graph::load_graph(a.graph);
  graph::release_tags(g);  // paired at load; the analysis reads no tags (4 bytes per vertex)
  NodeMap nodes;
  NetworkModel model = build_model(a, p, g, &nodes);
  Engine engine(g, std::move(model));
  if (a.poll_lag != "phase" && a.poll_lag != "resolved" && a.poll_lag != "cap")
    throw Error(fmt::format("--poll-lag {}: expected 'phase', 'resolved' or 'cap'", a.poll_lag));
  const bool resolve = a.poll_lag != "cap";
  const PollLagResolution lags = resolve ? resolve_poll_lags(g, engine) : PollLagResolution{};

  AnalyzeOptions opt;
  std::tie(opt.x_min, opt.x_max) = parse_range(a.range);
  if (!a.step.empty()) opt.step = units::parse_time_ns(a.step, "--step");
  if (!a.step.empty() && !(opt.step > 0)) throw Error("--step must be positive");
  opt.tolerance_percent = parse_percents(a.tolerance);
  opt.critical_path = !a.no_path;
  opt.top = a.top;
  opt.threads = a.threads;

  auto run = [&](const AnalyzeOptions& o) {
    return a.solver == "clp" ? analyze_lp(g, engine.model(), o) : analyze(engine, o);
  };
  const bool phase = a.poll_lag == "phase" && !g.poll_lags.empty();
  Analysis result;
  if (!phase) {
    result = run(opt);
  } else {
    // The composed curve (polling_phase.hpp): the resolved graph's exact curve only below L0, the
    // capped graph's only past the ramp (none when the ramp reaches past the range), the ramp
    // sampled between. The resolved lags go back for what follows (critical path, topology,
    // placement: the base point).
    const double L0 = engine.base_xL(), ramp_end = polling_phase_end(L0, lags);
    AnalyzeOptions below = opt;
    below.x_max = std::max(opt.x_min, std::min(L0, opt.x_max));
    result = run(below);
    set_poll_lags(g, lags.cap);
    Analysis at_cap;
    if (ramp_end < opt.x_max) {
      AnalyzeOptions above = opt;
      above.x_min = std::max(ramp_end, opt.x_min);
      above.critical_path = false;
      at_cap = run(above);
    }
    result = compose_polling_phase(result, at_cap, engine, g, lags, opt.x_min, opt.x_max);
    set_poll_lags(g, lags.resolved);
  }
  nlohmann::json noise;
  if (!a.noise.empty()) {
    // Each point on the graph the curve used there (phase: the ramp's lags), then the base lags back.
    std::vector<NoiseRecording> recordings;
    for (const std::string& path : a.noise) recordings.push_back(read_noise_recording(path));
    const NoiseTerms terms = parse_noise_terms(a.noise_terms);
    keep_noise_terms(recordings, terms);
    const NoiseTimeline timeline(recordings, g.num_ranks);
    NoiseOptions no;
    no.samples = a.noise_samples;
    no.seed = a.noise_seed;
    no.threads = a.threads;
    const double L0 = engine.base_xL();
    auto model_at = [&](double x) { return phase ? polling_phase_runtime(engine, g, lags, L0, x) : engine.at_L(x).T; };
    const auto points =
        predict_with_noise(engine, timeline, noise_points(a.noise_at, opt.x_min, opt.x_max), no, model_at);
    if (phase) set_poll_lags(g, lags.resolved);
    noise = noise_json(points, timeline, no);
    noise["files"] = a.noise;
    noise["terms"] = noise_term_names(terms);
    engine.at_L(L0);  // the base point's start times again, for what reads them below
  }
  nlohmann::json report = to_json(result, g);
  if (!noise.is_null()) report["noise"] = noise;
  if (!g.poll_lags.empty()) {
    uint64_t lag_ns = 0;  // the lags at the base point: resolved, or the caps with --poll-lag cap
    for (graph::VertexId v : g.poll_lags) lag_ns += g.value[v];
    report["poll_lags"] = {{"mode", a.poll_lag}, {"vertices", g.poll_lags.size()}, {"lag_ns", lag_ns}};
    if (resolve) {
      report["poll_lags"]["cap_ns"] = lags.cap_ns;
      report["poll_lags"]["at_cap"] = lags.capped;
    }
    if (phase) report["poll_lags"]["phase_end_ns"] = polling_phase_end(result.L0, lags);
  }

  if (!a.topology.empty())
    report["topology"] = topology_report(engine, parse_topology(a.topology), opt.tolerance_percent, result.T);
  if (!engine.model().homogeneous()) report["pairwise"] = pairwise_sensitivity(engine, opt.top);
  if (!a.place_out.empty()) {
    if (engine.model().homogeneous())
      throw Error("--place needs a heterogeneous model (--node-map or --ranks-per-node)");
    PlacementResult pr = optimize_placement(engine, nodes);
    write_text(a.place_out, machine_file(pr, nodes));
    report["placement"] = to_json(pr);
  }

  const bool json_to_stdout = a.json == "-";
  if (!json_to_stdout) {
    std::string text = to_text(result, g);
    if (report.contains("topology")) text += topology_text(report["topology"]);
    if (report.contains("placement")) text += placement_text(report["placement"], a.place_out);
    if (report.contains("noise")) text += noise_text(report["noise"]);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  if (!a.json.empty()) write_text(a.json, report.dump(2) + "\n");
  if (!a.csv.empty()) write_text(a.csv, curve_csv(result));
  if (!a.plot.empty()) run_plot(report, a.plot, a.measured);
}

}  // namespace

void register_cli(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* sub = app.add_subcommand(
      "analyze",
      "Runtime, latency/bandwidth sensitivity (λ, ρ), critical latencies and tolerance of an execution graph");
  sub->add_option("graph", args->graph, "execution graph (GOAL text or llamp binary)")->required();
  sub->add_option("--params", args->params, "LogGP parameter file (llamp-loggp JSON); flags override it");
  for (const char* f : {"L", "o", "g", "G", "S", "o-send", "o-recv", "O", "o-rndv"}) {
    std::string flag = fmt::format("--{}", f);
    std::string help = std::string(f) == "S" ? "rendezvous threshold with unit (256KiB) or inf"
                       : (std::string(f) == "G" || std::string(f) == "O") ? "time per byte with unit (0.018ns)"
                                                                          : "time with unit (3us)";
    sub->add_option_function<std::string>(
        flag, [args, f](const std::string& v) { args->flags[f] = v; }, help);
  }
  sub->add_option("--range", args->range,
                  "latency range MIN:MAX for critical latencies and the curve (default 0:100us)");
  sub->add_option("--step", args->step, "Algorithm 2 style sweep with this resolution (e.g. 1us); default: exact");
  sub->add_option("--tolerance", args->tolerance, "tolerance percentages (default 1,2,5)");
  sub->add_option("--json", args->json, "write the JSON report to FILE ('-': stdout, no text summary)");
  sub->add_option("--csv", args->csv, "write the T(L) curve as CSV to FILE ('-': stdout)");
  sub->add_option("--plot", args->plot,
                  "plot T and λ_L/ρ_L against ΔL to a PNG (needs /usr/bin/python3 with matplotlib)");
  sub->add_option("--measured", args->measured,
                  "CSV of measured runtimes (delta_L_ns,T_ns) to overlay on --plot (RRMSE)");
  sub->add_flag("--no-path", args->no_path, "skip the critical path report");
  sub->add_option("--poll-lag", args->poll_lag,
                  "polled completions (schedgen, 'Polling'): 'phase' (default) the traced polling phase at L0, "
                  "lost over the next polling period of added latency (the curve blends from 'resolved' to 'cap'); "
                  "'resolved' lags each by min(its cap, its slack at L0), exact at L0; 'cap' by the cap everywhere "
                  "(half the polling period, 1.5 periods for MPI_Iprobe/MPI_Improbe loops)");
  sub->add_option("--solver", args->solver, "native (default) or clp: the paper's LP route solved by COIN-OR Clp")
      ->check(CLI::IsMember({"native", "clp"}));
  sub->add_option("--top", args->top, "how many vertices / pairs to list (default 10)");
  sub->add_option("--threads", args->threads,
                  "engines evaluating the exact curve at once (default: one per hardware thread); each evaluates 4 "
                  "points per pass where half the available memory holds 64 bytes per vertex per engine, else single "
                  "points (12 bytes per vertex per extra engine)");
  sub->add_option("--node-map", args->node_map, "rank → node map (one node name per line, or 'rank node')");
  sub->add_option("--ranks-per-node", args->ranks_per_node, "block placement with N ranks per node");
  sub->add_option("--L-intra", args->L_intra, "latency between ranks of one node (default: --L)");
  sub->add_option("--G-intra", args->G_intra, "G between ranks of one node (default: --G)");
  sub->add_option("--L-matrix", args->L_matrix, "P×P latency matrix in ns (heterogeneous LogGP)");
  sub->add_option("--G-matrix", args->G_matrix, "P×P G matrix in ns/byte (with --L-matrix)");
  sub->add_option("--topology", args->topology, "fattree:k=K,tiers=T or dragonfly:g=G,a=A,p=P (with a node map)");
  sub->add_option("--wire-latency", args->wire_latency, "latency of one wire (topology model)");
  sub->add_option("--switch-delay", args->switch_delay, "delay of one switch (topology model)");
  sub->add_option("--place", args->place_out,
                  "optimise the rank placement (Algorithm 3) and write an MPICH machine file");
  sub->add_option("--noise", args->noise,
                  "machine noise recording (llamp-noise; repeat to lay several end to end): also predict T with "
                  "the recorded detours (docs/analyzer.md, 'Machine noise')");
  sub->add_option("--noise-samples", args->noise_samples, "phases of the recording averaged per point (default 32)");
  sub->add_option("--noise-seed", args->noise_seed, "seed of the phases (default 1)");
  sub->add_option("--noise-at", args->noise_at,
                  "latencies to predict with noise at, e.g. 16ns,20us (default: 11 points over --range)");
  sub->add_option(
      "--noise-terms", args->noise_terms,
      "which of the replay's terms to charge: any of detours,resume,following (following needs "
      "resume), or all (default); each alone shows what it adds (docs/analyzer.md, \"The replay's terms\")");
  sub->callback([args] { run_analyze(*args); });
  register_lp_cli(app);
}

}  // namespace llamp::analyzer
