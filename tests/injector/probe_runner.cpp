#include "probe_runner.h"

#include <sys/wait.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace llamp::inject_test {

double ProbeResult::number(const std::string& key) const {
  auto it = values.find(key);
  if (it == values.end()) {
    throw std::runtime_error("probe printed no '" + key + "'; output:\n" + output);
  }
  return std::stod(it->second);
}

ProbeResult run_probe(const std::string& env, int ranks, const std::string& args, const std::string& probe,
                      const std::string& mpiexec) {
  // LD_LIBRARY_PATH selects the patched libmpich/libucp for the patched probe;
  // the stock probe has no such libraries in that folder to pick up wrongly
  // (it links libmpich.so.12 from /usr, which the prefix also provides, so the
  // stock run clears the variable).
  std::string ld = probe == LLAMP_INJECT_PROBE ? std::string("LD_LIBRARY_PATH=") + LLAMP_PATCHED_LIBDIR + " "
                                               : std::string("LD_LIBRARY_PATH= ");
  std::string cmd =
      "env " + ld + env + " " + mpiexec + " -n " + std::to_string(ranks) + " " + probe + " " + args + " 2>&1";
  ProbeResult result;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    throw std::runtime_error("cannot run: " + cmd);
  }
  char line[4096];
  while (fgets(line, sizeof line, pipe) != nullptr) {
    result.output += line;
  }
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream lines(result.output);
  std::string text;
  while (std::getline(lines, text)) {
    auto eq = text.find('=');
    if (eq != std::string::npos && text.find(' ') == std::string::npos) {
      result.values[text.substr(0, eq)] = text.substr(eq + 1);
    }
  }
  return result;
}

}  // namespace llamp::inject_test
