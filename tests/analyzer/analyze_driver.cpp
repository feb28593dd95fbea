// Test driver: the analyzer's CLI on its own (the same register_cli the `llamp` program calls), so
// the subcommand is tested even while other stages of the program are being built.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "llamp/analyzer/cli.hpp"
#include "llamp/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"llamp analyzer test driver"};
  app.require_subcommand(1);
  llamp::analyzer::register_cli(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const llamp::Error& e) {
    std::fflush(stdout);
    fmt::print(stderr, "llamp: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
