// bench_cold_resume: the CPU time of a fixed block of work right after the rank spun on the clock
// for a while, as a rank does that waits out an injected latency. No message is involved (the MPI
// calls are collectives over MPI_COMM_SELF, the copy is a memcpy), so any growth with the spin is
// the machine's: on the 2-vCPU VM the MPI block takes 1.0-1.1 us hot and 0.7-6.5 us more after a
// 1 ms spin (three launches), which is why an application's calls after long waits run slower
// under large ΔL than in its trace (docs/campaign.md, "Stop 18"). The copy shows why: its 32 KiB
// fit the core's caches, yet after a spin they come from further away (on an AMD EPYC VM 0.43 us
// hot, 0.64 us after 100 us, 1.32 us after 1 ms: what else ran on the core meanwhile emptied
// them; docs/injector.md, "Waiting CPUs come back cold"). Both ranks spin and work in step, like
// two ranks waiting out ΔL.
//
// Counters per spin length: median and mean ns of the block, and the mean's excess over the
// block without a spin before it (the first benchmark of each kind).
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstring>
#include <vector>

#include "mpi_bench_support.hpp"
#include "resume_block.hpp"

namespace {

using llamp::bench::median;
using llamp::bench::now_ns;

int g_rank = 0;

// 16 KiB copied, as a rendezvous receive does: a working set well inside L1 + L2.
constexpr size_t kCopyBytes = 16384;
// Page-aligned: two heap blocks a few bytes apart modulo 4 KiB made the hot copy 8 us instead of
// 0.4 us here (`rep movsb` with source and destination 4K-aliased), which would hide the effect.
alignas(4096) char g_copy_from[kCopyBytes];
alignas(4096) char g_copy_to[kCopyBytes];

void copy_block() {
  std::memcpy(g_copy_to, g_copy_from, kCopyBytes);
  benchmark::DoNotOptimize(g_copy_to);
  benchmark::ClobberMemory();
}

// Times `block` after each spin of state.range(0) ns; hot_mean_ns is set by the run without a spin.
template <typename Block>
void time_after_spin(benchmark::State& state, Block block, double& hot_mean_ns) {
  const uint64_t spin_ns = static_cast<uint64_t>(state.range(0));
  std::vector<double> times;
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    for (const uint64_t t0 = now_ns(); now_ns() - t0 < spin_ns;) {
    }
    const uint64_t t0 = now_ns();
    block();
    times.push_back(static_cast<double>(now_ns() - t0));
  }
  double sum = 0;
  for (double t : times) sum += t;
  const double mean = times.empty() ? 0.0 : sum / static_cast<double>(times.size());
  if (spin_ns == 0) hot_mean_ns = mean;
  state.counters["block_median_ns"] = median(times);
  state.counters["block_mean_ns"] = mean;
  state.counters["excess_mean_ns"] = mean - hot_mean_ns;
}

double g_calls_hot_mean_ns = 0;
double g_copy_hot_mean_ns = 0;

void BM_CallsAfterSpin(benchmark::State& state) {
  double a[32] = {}, b[64] = {};
  time_after_spin(
      state, [&] { llamp::tools::resume_block(a, b); }, g_calls_hot_mean_ns);
}
void BM_CopyAfterSpin(benchmark::State& state) { time_after_spin(state, copy_block, g_copy_hot_mean_ns); }

BENCHMARK(BM_CallsAfterSpin)->Arg(0)->Iterations(2000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CallsAfterSpin)->Arg(20000)->Arg(100000)->Iterations(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CallsAfterSpin)->Arg(1000000)->Arg(3000000)->Iterations(200)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CopyAfterSpin)->Arg(0)->Iterations(2000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CopyAfterSpin)->Arg(20000)->Arg(100000)->Iterations(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CopyAfterSpin)->Arg(1000000)->Arg(3000000)->Iterations(200)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) { return llamp::bench::run_on_every_rank(argc, argv, g_rank, "bench_cold_resume"); }
