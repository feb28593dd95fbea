// What the MPI benchmarks (bench_tracer, bench_injector) share: a monotonic clock, the median of
// batch figures, and a main that runs every benchmark on every rank in lockstep (fixed iteration
// counts) with rank 0 reporting.
#pragma once

#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <vector>

namespace llamp::bench {

inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// MPI_Init, the benchmarks on every rank (rank 0's output only), MPI_Finalize; `rank` is set
// before any benchmark runs. Warns on rank 0 when fewer than 2 ranks run.
inline int run_on_every_rank(int argc, char** argv, int& rank, const char* name) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  benchmark::Initialize(&argc, argv);
  if (size < 2 && rank == 0) std::fprintf(stderr, "%s: run with 2 ranks\n", name);
  struct Silent : benchmark::BenchmarkReporter {
    bool ReportContext(const Context&) override { return true; }
    void ReportRuns(const std::vector<Run>&) override {}
  } silent;
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    benchmark::RunSpecifiedBenchmarks(&silent);
  }
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}

}  // namespace llamp::bench
