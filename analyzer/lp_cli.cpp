// `llamp lp`: export the LP of an execution graph in CPLEX LP or MPS format.
#include "llamp/analyzer/lp_cli.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <string>

#include "llamp/analyzer/lp_export.hpp"
#include "llamp/analyzer/lp_model.hpp"
#include "llamp/analyzer/engine.hpp"
#include "llamp/analyzer/network.hpp"
#include "llamp/analyzer/poll_lag.hpp"
#include "llamp/graph_io.hpp"
#include "llamp/loggp_params.hpp"

namespace llamp::analyzer {
namespace {

struct LpArgs {
  std::string graph, output, params;
  std::map<std::string, std::string> flags;  // LogGP flag → value, as `llamp analyze` takes them
};

void run_lp(const LpArgs& a) {
  // Check the output name before the (possibly long) graph load.
  lp::lp_format_for_path(a.output);
  LogGPParams params = a.params.empty() ? LogGPParams{} : read_loggp_params(a.params);
  for (const auto& [flag, value] : a.flags) set_loggp_flag(params, flag, value);
  const LogGP p = resolve(params);
  note_parameters_outside_the_path_model(p);
  graph::Graph g = graph::load_graph(a.graph);
  if (!g.poll_lags.empty()) {
    Engine engine(g, homogeneous_model(p));
    resolve_poll_lags(g, engine);  // the same graph `llamp analyze` solves
  }
  const lp::LpProblem problem = lp::build_lp(g, p);
  lp::write_lp_file(g, problem, a.output);
  fmt::print("{}: {} columns, {} rows, {} nonzeros (min t; l >= {} ns, g >= {} ns/B) -> {}\n", a.graph,
             problem.num_cols(), problem.num_rows(), problem.num_nonzeros(), p.L_ns, p.G_ns_per_byte, a.output);
}

}  // namespace

void register_lp_cli(CLI::App& app) {
  auto args = std::make_shared<LpArgs>();
  CLI::App* sub = app.add_subcommand(
      "lp", "Write the execution graph's linear program (paper 000, Algorithm 1) as CPLEX LP or MPS");
  sub->add_option("graph", args->graph, "execution graph (GOAL text or llamp binary)")->required();
  sub->add_option("-o,--output", args->output, "output file: NAME.lp (CPLEX LP) or NAME.mps (MPS)")->required();
  sub->add_option("--params", args->params, "LogGP parameter file (llamp-loggp JSON); flags override it");
  for (const char* f : {"L", "o", "g", "G", "S", "o-send", "o-recv", "O", "o-rndv"}) {
    const std::string name = f;
    const std::string help = name == "S"                    ? "rendezvous threshold with unit (256KiB) or inf"
                             : (name == "G" || name == "O") ? "time per byte with unit (0.018ns)"
                                                            : "time with unit (3us)";
    sub->add_option_function<std::string>(
        fmt::format("--{}", f), [args, name](const std::string& v) { args->flags[name] = v; }, help);
  }
  sub->callback([args] { run_lp(*args); });
}

}  // namespace llamp::analyzer
