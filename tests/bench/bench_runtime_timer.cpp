// bench_runtime_timer: the time the runtime timer's generated wrappers add to an MPI call. The
// binary is linked against libllamp_runtime_timer.so, so MPI_Iprobe is the timer's wrapper and
// PMPI_Iprobe the library's call without it. Interleaved batches of both in ONE run, medians of
// many batch pairs, so drift on a shared machine hits both sides alike. MPI_Iprobe on a tag no
// one sends is about the cheapest call there is: the figure is the wrapper's, not MPI's.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "mpi_bench_support.hpp"

namespace {

using llamp::bench::median;
using llamp::bench::now_ns;

int g_rank = 0;

bool wrappers_are_the_timers() {
  Dl_info info{};
  void* sym = dlsym(RTLD_DEFAULT, "MPI_Iprobe");
  return sym && dladdr(sym, &info) && info.dli_fname &&
         std::string(info.dli_fname).find("llamp_runtime_timer") != std::string::npos;
}

template <typename Probe>
double per_call_ns(int calls, Probe probe) {
  int flag = 0;
  const uint64_t t0 = now_ns();
  for (int i = 0; i < calls; ++i) probe(&flag);
  benchmark::DoNotOptimize(flag);
  return static_cast<double>(now_ns() - t0) / calls;
}

void BM_WrapperAddedPerCall(benchmark::State& state) {
  if (!wrappers_are_the_timers()) {
    state.SkipWithError("MPI_Iprobe does not resolve to libllamp_runtime_timer.so");
    return;
  }
  constexpr int kCalls = 20000;
  std::vector<double> direct, wrapped;
  for (auto _ : state) {
    direct.push_back(per_call_ns(
        kCalls, [](int* flag) { PMPI_Iprobe(MPI_ANY_SOURCE, 4711, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE); }));
    wrapped.push_back(per_call_ns(
        kCalls, [](int* flag) { MPI_Iprobe(MPI_ANY_SOURCE, 4711, MPI_COMM_WORLD, flag, MPI_STATUS_IGNORE); }));
  }
  std::vector<double> added(direct.size());
  for (size_t i = 0; i < direct.size(); ++i) added[i] = wrapped[i] - direct[i];
  state.counters["direct_ns"] = median(direct);
  state.counters["wrapped_ns"] = median(wrapped);
  state.counters["added_ns"] = median(added);
}
BENCHMARK(BM_WrapperAddedPerCall)->Iterations(200)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) { return llamp::bench::run_on_every_rank(argc, argv, g_rank, "bench_runtime_timer"); }
