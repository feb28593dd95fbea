// llamp-loggp: measures the LogGPS parameters of the MPI stack it runs on (run it with exactly
// two ranks, placed like the application's communicating ranks) and writes the parameter file
// `llamp analyze --params` reads. See docs/campaign.md for the method.
//
//   mpiexec.mpich -n 2 llamp-loggp -o params.json [--rounds 3] [--reps 50] [--max-size 1MiB]
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "llamp/error.hpp"
#include "llamp/units.hpp"
#include "measurement.hpp"
#include "mpi_tool_main.hpp"
#include "params_json.hpp"

extern char** environ;

namespace {

struct Options {
  std::string output = "-";
  int rounds = 3;
  int reps = 50;
  std::string max_size = "1MiB";
  std::string reference_size = "1B";
  std::string fit_from = "4KiB";
  int burst = 32;
  bool quiet = false;
};

// The variables that change which transport MPICH/UCX use or inject latency: recorded so a
// parameter file says what it was measured under.
nlohmann::json relevant_environment() {
  nlohmann::json env = nlohmann::json::object();
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    if (name.rfind("MPIR_CVAR_", 0) == 0 || name.rfind("UCX_", 0) == 0 || name.rfind("LLAMP_", 0) == 0)
      env[name] = entry.substr(eq + 1);
  }
  return env;
}

llamp::loggp::RunInfo run_info() {
  llamp::loggp::RunInfo info;
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  info.mpi_library = std::string(version, static_cast<std::size_t>(length));
  if (const auto newline = info.mpi_library.find('\n'); newline != std::string::npos) info.mpi_library.resize(newline);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  info.host = host;
  info.environment = relevant_environment();
  return info;
}

void print_summary(const llamp::loggp::Measurement& m) {
  using llamp::units::format_time_ns;
  const auto& p = m.params;
  for (const auto& point : m.pooled) {
    if (point.bytes != p.reference_bytes) continue;
    // Preemption shows as a wide spread of the small-message round trip: quartiles more than
    // a factor 2 apart mean the medians carry scheduler time, not network time.
    if (point.half_rtt_ns.p75 > 2 * point.half_rtt_ns.p25)
      std::fprintf(stderr,
                   "llamp-loggp: warning: %zu B half round trips spread from %s (p25) to %s (p75): the "
                   "machine is busy and L and o carry scheduling delays; measure on a quiet machine\n",
                   point.bytes, format_time_ns(point.half_rtt_ns.p25).c_str(),
                   format_time_ns(point.half_rtt_ns.p75).c_str());
  }
  if (p.G_fit.slope <= 0)
    std::fprintf(stderr,
                 "llamp-loggp: warning: the half round trip did not grow with the size between %zu and "
                 "%zu B (slope %.4g ns/B); G is set to 0 - rerun on a quieter machine or with more --reps\n",
                 p.G_fit_min_bytes, p.G_fit_max_bytes, p.G_fit.slope);
  std::fprintf(stderr,
               "llamp-loggp: L = %s (measured %s), o_send = %s, o_recv = %s, g = %s, G = %.5f ns/B, S = %llu B%s, "
               "o_rndv = %s\n",
               format_time_ns(p.L_ns).c_str(), format_time_ns(p.L_measured_ns).c_str(),
               format_time_ns(p.o_send_ns).c_str(), format_time_ns(p.o_recv_ns).c_str(), format_time_ns(p.g_ns).c_str(),
               p.G_ns_per_byte, static_cast<unsigned long long>(m.protocol.S_bytes),
               m.protocol.observed ? "" : " (no rendezvous seen up to the largest size)",
               format_time_ns(p.o_rndv_ns).c_str());
}

int run(int argc, char** argv, int rank, llamp::tools::ToolPhase& phase) {
  CLI::App app{"Measure LogGPS parameters (L, o, g, G, S) between two MPI ranks"};
  Options opt;
  app.add_option("-o,--output", opt.output, "parameter file to write ('-' = stdout)");
  app.add_option("--rounds", opt.rounds, "sweeps over all sizes; parameters are medians over rounds")
      ->check(CLI::Range(1, 100));
  app.add_option("--reps", opt.reps, "ping-pongs and overhead samples per size and round")
      ->check(CLI::Range(3, 100000));
  app.add_option("--max-size", opt.max_size, "largest message size; beyond ~1 MiB caches distort the G fit");
  app.add_option("--o-size", opt.reference_size,
                 "message size L and o are taken at (a power of two, eager; e.g. the application's "
                 "typical message size)");
  app.add_option("--fit-from", opt.fit_from, "smallest size used in the G fit");
  app.add_option("--burst", opt.burst, "messages per burst for g")->check(CLI::Range(2, 100000));
  app.add_flag("-q,--quiet", opt.quiet, "no summary on stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) return app.exit(e);
    return e.get_exit_code();
  }

  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2)
    throw llamp::Error(
        fmt::format("llamp-loggp measures between exactly two ranks; run it with "
                    "'mpiexec.mpich -n 2', not {} ranks",
                    size));

  llamp::loggp::MeasurementPlan plan;
  plan.sizes = llamp::loggp::power_of_two_sizes(llamp::units::parse_size_bytes(opt.max_size, "--max-size"));
  plan.rounds = opt.rounds;
  plan.reps = opt.reps;
  plan.burst = opt.burst;
  plan.reference_bytes = llamp::units::parse_size_bytes(opt.reference_size, "--o-size", "B");
  plan.min_fit_bytes = llamp::units::parse_size_bytes(opt.fit_from, "--fit-from", "B");
  if (plan.sizes.size() < 2) throw llamp::Error("--max-size must be at least 2 B");
  bool reference_probed = false;
  for (std::size_t s : plan.sizes) reference_probed |= s == plan.reference_bytes;
  if (!reference_probed)
    throw llamp::Error(
        fmt::format("--o-size {} B is not one of the probed sizes (powers of two up to "
                    "--max-size)",
                    plan.reference_bytes));

  llamp::loggp::ProbeBuffers buffers(plan.sizes.back());
  const llamp::loggp::ProbeContext ctx{MPI_COMM_WORLD, rank, &buffers};
  phase.communicating = true;
  const llamp::loggp::Measurement m = llamp::loggp::measure(ctx, plan);
  if (rank == 0) {
    llamp::loggp::write_json_file(llamp::loggp::to_json(m, plan, run_info()), opt.output);
    if (!opt.quiet) print_summary(m);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return llamp::tools::mpi_tool_main("llamp-loggp", argc, argv, run); }
