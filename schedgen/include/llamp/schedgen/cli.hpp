#pragma once
// `llamp schedgen TRACE_DIR -o app.goal|app.lgr [--algo COLL=ALGO]... [--allow-unmatched]
// [--allow-truncated] [--bcast-segment SIZE]`; docs/schedgen.md.
#include <CLI/CLI.hpp>

namespace llamp::schedgen {

void register_cli(CLI::App& app);

}  // namespace llamp::schedgen
