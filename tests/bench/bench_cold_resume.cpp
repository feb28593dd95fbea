// bench_cold_resume: the CPU time of a fixed block of MPI calls right after the rank spun on the
// clock for a while, as a rank does that waits out an injected latency. No message is involved
// (the calls are collectives over MPI_COMM_SELF), so any growth with the spin is the machine's:
// on the 2-vCPU VM the block takes 1.0-1.1 us hot and 0.7-6.5 us more after a 1 ms spin (three
// launches), which is why an application's calls after long waits run slower under large ΔL than
// in its trace (docs/campaign.md, "Stop 18"). Both ranks spin and call in step, like two ranks
// waiting out ΔL.
//
// Counters per spin length: median and mean ns of the block, and the mean's excess over the
// block without a spin before it (the first benchmark).
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <vector>

#include "mpi_bench_support.hpp"

namespace {

using llamp::bench::median;
using llamp::bench::now_ns;

int g_rank = 0;
double g_hot_mean_ns = 0;

// Eight calls into MPICH that touch its collective, datatype and copy paths but wait for nobody.
void call_block(double* a, double* b) {
  for (int i = 0; i < 2; ++i) {
    MPI_Bcast(a, 32, MPI_DOUBLE, 0, MPI_COMM_SELF);
    MPI_Allreduce(MPI_IN_PLACE, a, 32, MPI_DOUBLE, MPI_MAX, MPI_COMM_SELF);
    MPI_Allgather(a, 32, MPI_DOUBLE, b, 32, MPI_DOUBLE, MPI_COMM_SELF);
    MPI_Alltoall(a, 16, MPI_DOUBLE, b, 16, MPI_DOUBLE, MPI_COMM_SELF);
  }
}

void BM_CallsAfterSpin(benchmark::State& state) {
  const uint64_t spin_ns = static_cast<uint64_t>(state.range(0));
  double a[32] = {}, b[64] = {};
  std::vector<double> block;
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    for (const uint64_t t0 = now_ns(); now_ns() - t0 < spin_ns;) {
    }
    const uint64_t t0 = now_ns();
    call_block(a, b);
    block.push_back(static_cast<double>(now_ns() - t0));
  }
  double sum = 0;
  for (double t : block) sum += t;
  const double mean = block.empty() ? 0.0 : sum / static_cast<double>(block.size());
  if (spin_ns == 0) g_hot_mean_ns = mean;
  state.counters["block_median_ns"] = median(block);
  state.counters["block_mean_ns"] = mean;
  state.counters["excess_mean_ns"] = mean - g_hot_mean_ns;
}
BENCHMARK(BM_CallsAfterSpin)->Arg(0)->Iterations(2000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CallsAfterSpin)->Arg(20000)->Arg(100000)->Iterations(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CallsAfterSpin)->Arg(1000000)->Arg(3000000)->Iterations(200)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) { return llamp::bench::run_on_every_rank(argc, argv, g_rank, "bench_cold_resume"); }
