#pragma once
// Helpers for the tracer's end-to-end tests: run a program under mpiexec.mpich with the tracer
// preloaded, read the app's own call counts and the trace's.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../scratch_dir.hpp"
#include "llamp/trace_dir.hpp"

namespace llamp::tracer_test {

namespace fs = std::filesystem;
using Counts = std::map<std::string, long>;

inline std::string env_or(const char* name, const std::string& fallback = {}) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : fallback;
}

// A fresh, empty scratch directory for one test, removed at exit (tests/scratch_dir.hpp).
inline std::string scratch_dir(const std::string& name) { return test::scratch_dir("tracer-" + name).string(); }

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct RunResult {
  int exit_code = -1;
  std::string output;  // stdout + stderr
};

// Runs `mpiexec.mpich -n np program args` with the tracer preloaded (unless preload is false)
// and the given extra environment; output is captured.
inline RunResult run_mpi(int np, const std::string& program, const std::string& args,
                         const std::map<std::string, std::string>& env, const std::string& workdir,
                         bool preload = true) {
  std::string cmd = "cd " + shell_quote(workdir) + " && env";
  if (preload) cmd += " LD_PRELOAD=" + shell_quote(LLAMP_TRACER_LIB);
  for (const auto& [k, v] : env) cmd += " " + k + "=" + shell_quote(v);
  const std::string log = (fs::path(workdir) / "run.log").string();
  cmd += " timeout 240 " + std::string(LLAMP_MPIEXEC) + " -n " + std::to_string(np) + " " + shell_quote(program) + " " +
         args + " > " + shell_quote(log) + " 2>&1";
  RunResult r;
  int status = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  r.output = ss.str();
  return r;
}

inline Counts read_app_counts(const std::string& dir, int rank) {
  std::ifstream in(fs::path(dir) / ("counts-" + std::to_string(rank) + ".json"));
  Counts c;
  if (!in) return c;
  nlohmann::json j = nlohmann::json::parse(in);
  for (auto& [k, v] : j.items()) c[k] = v.get<long>();
  return c;
}

// Per rank: how many events of each traced call.
inline std::vector<Counts> trace_counts(trace::TraceDir& dir) {
  std::vector<Counts> out;
  for (auto& r : dir.ranks) {
    Counts c;
    r.rewind();
    while (const trace::Event* e = r.next()) ++c[std::string(trace::call_name(e->call))];
    out.push_back(c);
  }
  return out;
}

inline std::vector<std::vector<trace::Event>> all_events(trace::TraceDir& dir) {
  std::vector<std::vector<trace::Event>> out;
  for (auto& r : dir.ranks) {
    r.rewind();
    out.emplace_back();
    while (const trace::Event* e = r.next()) out.back().push_back(*e);
  }
  return out;
}

inline long count_of(const Counts& c, const std::string& name) {
  auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

}  // namespace llamp::tracer_test
