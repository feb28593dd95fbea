// llamp-coreprobe: how long one cache line takes from one CPU to another, for the CPUs an MPI job's
// ranks are pinned to. The validation campaign runs it before and after every launch.
//
// Why: on a VM the host places the vCPUs. On the 2-vCPU machine this project is developed on, the
// two vCPUs sometimes share a cache (a line moves in ~27 ns) and sometimes do not (~160 ns), a state
// that changes between jobs; every on-node message is 2-3x slower in the second state (app_pingpong
// 0.24 s against 0.47 s; docs/campaign.md, "Core hand-off"). A run in the slow state measures the
// host's placement, not the latency response, so the campaign repeats it.
//
// Method (hand_off.h, shared with the runtime timer's probe inside a job): two threads pinned to
// CPU a and CPU b pass a counter back and forth through one cache line; the median of the timed
// blocks' one-way times is the figure.
//
//   llamp-coreprobe [--cpus N] [--blocks 30] [--round-trips 500]   → JSON on stdout
#include <pthread.h>
#include <sched.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "hand_off.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <thread>
#include <vector>

namespace {

llamp_hand_off_line hand_off_line;  // static: see hand_off.h

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// The CPUs this process may run on, in order: the ones Hydra's `-bind-to core` gives ranks 0, 1, ...
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

struct PairResult {
  std::vector<double> block_one_way_ns;  // sorted
  double median() const { return block_one_way_ns[block_one_way_ns.size() / 2]; }
};

PairResult probe_pair(int cpu_a, int cpu_b, int blocks, int round_trips) {
  constexpr int64_t kNoTimeout = INT64_MAX / 2;  // both parties are this process's threads
  hand_off_line.counter = 0;
  std::thread pong([=] {
    pin_to(cpu_b);
    llamp_hand_off_pong(&hand_off_line, blocks, round_trips, kNoTimeout);
  });
  pin_to(cpu_a);
  PairResult r;
  r.block_one_way_ns.resize(static_cast<size_t>(blocks));
  llamp_hand_off_ping(&hand_off_line, blocks, round_trips, kNoTimeout, r.block_one_way_ns.data());
  pong.join();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Time a cache line's hand-off between the first CPU this process may use and each of the next N-1 "
      "(the CPUs `mpiexec -bind-to core -n N` pins ranks to). Prints JSON: one-way ns per pair (median "
      "block) and their maximum."};
  int cpus_wanted = 2;
  int blocks = 30;
  int round_trips = 500;
  app.add_option("--cpus", cpus_wanted, "CPUs to probe: the first N of this process's affinity mask (default 2)")
      ->check(CLI::PositiveNumber);
  app.add_option("--blocks", blocks, "timed blocks per pair; the median block is reported (default 30)")
      ->check(CLI::PositiveNumber);
  app.add_option("--round-trips", round_trips, "round trips per block (default 500)")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  std::vector<int> cpus = allowed_cpus();
  if (static_cast<int>(cpus.size()) > cpus_wanted) cpus.resize(static_cast<size_t>(cpus_wanted));
  nlohmann::json out;
  out["cpus"] = cpus;
  out["pairs"] = nlohmann::json::array();
  double worst = 0.0;
  // With one CPU there is no hand-off to time: an empty list, and max_one_way_ns 0.
  for (size_t j = 1; j < cpus.size(); ++j) {
    const PairResult r = probe_pair(cpus[0], cpus[j], blocks, round_trips);
    worst = std::max(worst, r.median());
    out["pairs"].push_back({{"cpus", {cpus[0], cpus[j]}},
                            {"one_way_ns", r.median()},
                            {"fastest_block_ns", r.block_one_way_ns.front()},
                            {"slowest_block_ns", r.block_one_way_ns.back()}});
  }
  out["max_one_way_ns"] = worst;
  std::cout << out.dump() << "\n";
  return 0;
}
