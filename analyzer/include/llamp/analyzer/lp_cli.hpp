#pragma once
// `llamp lp GRAPH -o app.lp|app.mps [--params FILE] [--L ..] [--o ..] [--G ..] [--S ..] ...`:
// writes the LP route's model (lp_model.hpp) for an external solver. Called by register_cli.
#include <CLI/CLI.hpp>

namespace llamp::analyzer {

void register_lp_cli(CLI::App& app);

}  // namespace llamp::analyzer
