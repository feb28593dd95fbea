// llamp-coreprobe: how long one cache line takes from one CPU to another, for the CPUs an MPI job's
// ranks are pinned to. The validation campaign runs it before and after every launch.
//
// Why: on a VM the host places the vCPUs. On the 2-vCPU machine this project is developed on, the
// two vCPUs sometimes share a cache (a line moves in ~27 ns) and sometimes do not (~160 ns), a state
// that changes between jobs; every on-node message is 2-3x slower in the second state (app_pingpong
// 0.24 s against 0.47 s; docs/campaign.md, "Core hand-off"). A run in the slow state measures the
// host's placement, not the latency response, so the campaign repeats it.
//
// Method: two threads pinned to CPU a and CPU b pass a counter back and forth through one cache line
// (release store, acquire spin). After a warm-up block (a vCPU that was idle takes time to run), it
// times `blocks` blocks of `round_trips` round trips each; a block's one-way time is its time /
// (2 × round trips). The median block is the figure: it ignores the blocks a preemption spoils.
//
//   llamp-coreprobe [--cpus N] [--blocks 30] [--round-trips 500]   → JSON on stdout
#include <pthread.h>
#include <sched.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>
#include <vector>

namespace {

// Alone in a 128-byte block and outside any stack: CPUs fetch lines in adjacent pairs, and a
// neighbour one thread writes would be timed too (the line on the pinging thread's stack measured
// 50 ns where a static one measures 27 ns).
struct alignas(128) HandOffLine {
  std::atomic<int64_t> counter{0};
};
HandOffLine hand_off_line;

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
  HandOffLine& line = hand_off_line;
  line.counter.store(0);
  const int64_t total = static_cast<int64_t>(blocks + 1) * round_trips;  // + the warm-up block
  // The pong thread gets its bounds by value: a reference into this frame would add that line's traffic.
  std::thread pong([total, cpu_b] {
    HandOffLine& line = hand_off_line;
    pin_to(cpu_b);
    for (int64_t i = 0; i < total; ++i) {
      while (line.counter.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.counter.store(2 * i + 2, std::memory_order_release);
    }
  });
  pin_to(cpu_a);
  PairResult r;
  int64_t i = 0;
  for (int b = 0; b <= blocks; ++b) {
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < round_trips; ++k, ++i) {
      line.counter.store(2 * i + 1, std::memory_order_release);
      while (line.counter.load(std::memory_order_acquire) != 2 * i + 2) {
      }
    }
    const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
    if (b > 0) r.block_one_way_ns.push_back(elapsed.count() / (2.0 * round_trips));
  }
  pong.join();
  std::sort(r.block_one_way_ns.begin(), r.block_one_way_ns.end());
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
