// Runs tests/injector/inject_probe under the patched MPICH's mpiexec with a
// given environment and collects its "key=value" lines.
#pragma once

#include <map>
#include <string>

namespace llamp::inject_test {

struct ProbeResult {
  int exit_code = -1;
  std::string output;                         // stdout + stderr
  std::map<std::string, std::string> values;  // key=value lines

  double number(const std::string& key) const;  // throws if missing
};

// env: e.g. "LLAMP_DELTA_L=10us LLAMP_INJECT_STATS=1"; probe: path of the
// binary to run (patched or stock build); args: scenario and parameters.
ProbeResult run_probe(const std::string& env, int ranks, const std::string& args,
                      const std::string& probe = LLAMP_INJECT_PROBE,
                      const std::string& mpiexec = LLAMP_PATCHED_MPIEXEC);

}  // namespace llamp::inject_test
