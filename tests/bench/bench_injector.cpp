// bench_injector: what the latency injector costs an application besides the latency it
// injects. The injector is chosen at MPI_Init (LLAMP_DELTA_L), so one launch measures one
// setting; tests/bench/run_bench_injector.sh alternates launches without the injector and with
// it armed at 1 ns (every message held and released at once) and prints the difference, the
// injector's own CPU cost per message, which a campaign sees as a step when injection turns on.
//
// Each benchmark reports the median over batches of the time per operation; with
// LLAMP_DELTA_L set, the ping-pong also reports its excess over the injected latency.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "duration.h"
#include "mpi_bench_support.hpp"

namespace {

using llamp::bench::median;
using llamp::bench::now_ns;

int g_rank = 0;

// LLAMP_DELTA_L in ns, read as the injector reads it; 0 when unset, off or malformed (then the
// injector itself stopped MPI_Init).
double injected_ns() {
  const char* v = std::getenv("LLAMP_DELTA_L");
  int64_t ns = 0;
  char why[160];
  if (v == nullptr || *v == '\0' || llamp_parse_duration_ns(v, &ns, why, sizeof why) != 0) return 0.0;
  return static_cast<double>(ns);
}

// Times `rounds` operations per batch, one batch per benchmark iteration, all ranks in step.
template <typename Batch>
std::vector<double> per_op_batches(benchmark::State& state, int rounds, Batch batch) {
  std::vector<double> per_op;
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const uint64_t t0 = now_ns();
    batch(rounds);
    per_op.push_back(static_cast<double>(now_ns() - t0) / rounds);
  }
  return per_op;
}

// 8-byte ping-pong between ranks 0 and 1: two messages, four MPI calls per round trip.
void BM_PingPong8B(benchmark::State& state) {
  char b[8] = {};
  auto rt = per_op_batches(state, 500, [&](int rounds) {
    for (int i = 0; i < rounds; ++i) {
      if (g_rank == 0) {
        MPI_Send(b, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(b, 8, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (g_rank == 1) {
        MPI_Recv(b, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(b, 8, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
    }
  });
  state.counters["ns_per_round_trip"] = median(rt);
  state.counters["excess_ns_per_message"] = (median(rt) - 2 * injected_ns()) / 2;
}
BENCHMARK(BM_PingPong8B)->Iterations(60)->Unit(benchmark::kMillisecond);

// One 8-byte MPI_Allreduce: MPICH's small-message algorithm, its internal messages only.
void BM_Allreduce8B(benchmark::State& state) {
  double x = g_rank, y = 0;
  auto t = per_op_batches(state, 500, [&](int rounds) {
    for (int i = 0; i < rounds; ++i) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  });
  state.counters["ns_per_allreduce"] = median(t);
}
BENCHMARK(BM_Allreduce8B)->Iterations(60)->Unit(benchmark::kMillisecond);

// A call that sends nothing: what entering and leaving MPI costs.
void BM_CommRank(benchmark::State& state) {
  int r = 0;
  auto t = per_op_batches(state, 20000, [&](int rounds) {
    for (int i = 0; i < rounds; ++i) MPI_Comm_rank(MPI_COMM_WORLD, &r);
  });
  state.counters["ns_per_comm_rank"] = median(t);
}
BENCHMARK(BM_CommRank)->Iterations(30)->Unit(benchmark::kMillisecond);

// A call that only polls (MPI_Iprobe with nothing to find): one empty progress pass.
void BM_EmptyIprobe(benchmark::State& state) {
  int flag = 0;
  auto t = per_op_batches(state, 20000, [&](int rounds) {
    for (int i = 0; i < rounds; ++i) {
      MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
  });
  state.counters["ns_per_empty_iprobe"] = median(t);
}
BENCHMARK(BM_EmptyIprobe)->Iterations(30)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) { return llamp::bench::run_on_every_rank(argc, argv, g_rank, "bench_injector"); }
