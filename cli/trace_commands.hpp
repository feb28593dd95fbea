#pragma once
#include <CLI/CLI.hpp>

namespace llamp::cli {
// `llamp trace info DIR` and `llamp trace dump DIR`.
void register_trace_commands(CLI::App& app);
}  // namespace llamp::cli
