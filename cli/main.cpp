// llamp: one command for the offline tools (trace inspection, schedgen, analysis).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

#include "llamp/error.hpp"
#include "trace_commands.hpp"
#ifdef LLAMP_HAVE_SCHEDGEN
#include "llamp/schedgen/cli.hpp"
#endif
#ifdef LLAMP_HAVE_ANALYZER
#include "llamp/analyzer/cli.hpp"
#endif

int main(int argc, char** argv) {
  CLI::App app{"llamp: how much network latency does an MPI application tolerate?"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "llamp 0.1.0");
  llamp::cli::register_trace_commands(app);
#ifdef LLAMP_HAVE_SCHEDGEN
  llamp::schedgen::register_cli(app);
#endif
#ifdef LLAMP_HAVE_ANALYZER
  llamp::analyzer::register_cli(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const llamp::Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "llamp: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "llamp: internal error: {}\n", e.what());
    return 2;
  }
  return 0;
}
