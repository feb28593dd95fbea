#pragma once
// The analyzer's subcommands for the `llamp` program (cli/main.cpp calls register_cli).
#include <CLI/CLI.hpp>

namespace llamp::analyzer {

// Adds `analyze GRAPH [options]`: T, λ_L, ρ_L, λ_G, critical latencies, tolerance, critical path,
// heterogeneous/topology models, rank placement; text, --json, --csv and --plot output.
void register_cli(CLI::App& app);

}  // namespace llamp::analyzer
