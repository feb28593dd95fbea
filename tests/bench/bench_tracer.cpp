// bench_tracer: what the tracer adds to an MPI application. Run with 2 ranks under
// mpiexec.mpich (tests/bench/run_bench_tracer.sh does it and also traces the halo app).
//
// The binary is linked against libllamptrace.so, so MPI_* are the tracer's wrappers. Added
// time per call is measured in ONE run as a difference of interleaved batches: tracing paused
// with MPI_Pcontrol(0) (the wrapper just forwards) vs. tracing on (MPI_Pcontrol(1)). Medians of
// many batch pairs, so drift on a shared machine hits both sides alike.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <mpi.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "llamp/trace_codec.hpp"
#include "llamp/trace_dir.hpp"

#include "mpi_bench_support.hpp"

namespace {

using llamp::bench::median;
using llamp::bench::now_ns;

int g_rank = 0;

bool wrappers_are_the_tracers() {
  Dl_info info{};
  void* sym = dlsym(RTLD_DEFAULT, "MPI_Isend");
  return sym && dladdr(sym, &info) && info.dli_fname &&
         std::string(info.dli_fname).find("llamptrace") != std::string::npos;
}

// Runs `batch` (calls_per_round MPI calls per round, `rounds` rounds) alternately paused and
// traced; reports per-call medians and their difference.
template <typename Batch>
void paired_batches(benchmark::State& state, int calls_per_round, Batch batch) {
  if (!wrappers_are_the_tracers()) {
    state.SkipWithError("MPI_Isend does not resolve to libllamptrace.so");
    return;
  }
  constexpr int kRounds = 200;
  std::vector<double> paused, traced;
  for (auto _ : state) {
    for (int traced_batch = 0; traced_batch < 2; ++traced_batch) {
      MPI_Pcontrol(traced_batch);
      MPI_Barrier(MPI_COMM_WORLD);
      const uint64_t t0 = now_ns();
      batch(kRounds);
      const double per_call = static_cast<double>(now_ns() - t0) / (kRounds * calls_per_round);
      (traced_batch ? traced : paused).push_back(per_call);
    }
  }
  MPI_Pcontrol(1);
  std::vector<double> added(paused.size());
  for (size_t i = 0; i < paused.size(); ++i) added[i] = traced[i] - paused[i];
  state.counters["paused_ns_per_call"] = median(paused);
  state.counters["traced_ns_per_call"] = median(traced);
  state.counters["added_ns_per_call"] = median(added);
  state.counters["traced_over_paused"] = median(traced) / median(paused);
}

// Irecv + Isend to self + Waitall: 3 intercepted calls per round, no other rank involved.
void BM_AddedPerCall_IsendWaitSelf(benchmark::State& state) {
  char out = 1, in = 0;
  paired_batches(state, 3, [&](int rounds) {
    for (int i = 0; i < rounds; ++i) {
      MPI_Request rq[2];
      MPI_Irecv(&in, 1, MPI_CHAR, g_rank, 0, MPI_COMM_WORLD, &rq[0]);
      MPI_Isend(&out, 1, MPI_CHAR, g_rank, 0, MPI_COMM_WORLD, &rq[1]);
      MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
  });
}
BENCHMARK(BM_AddedPerCall_IsendWaitSelf)->Iterations(200)->Unit(benchmark::kMillisecond);

// 0-byte ping-pong between ranks 0 and 1: a round trip has 4 intercepted calls on its critical
// path (Send and Recv on each side); "per call" = round trip / 4.
void BM_AddedPerCall_PingPong(benchmark::State& state) {
  char b = 0;
  paired_batches(state, 4, [&](int rounds) {
    for (int i = 0; i < rounds; ++i) {
      if (g_rank == 0) {
        MPI_Send(&b, 0, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(&b, 0, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (g_rank == 1) {
        MPI_Recv(&b, 0, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&b, 0, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
    }
  });
}
BENCHMARK(BM_AddedPerCall_PingPong)->Iterations(100)->Unit(benchmark::kMillisecond);

// 8 B MPI_Allreduce over both ranks: one intercepted call per round, its messages on the
// critical path, as in a solver's dot products.
void BM_AddedPerCall_Allreduce(benchmark::State& state) {
  double in = 1.0, out = 0.0;
  paired_batches(state, 1, [&](int rounds) {
    for (int i = 0; i < rounds; ++i) MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  });
}
BENCHMARK(BM_AddedPerCall_Allreduce)->Iterations(100)->Unit(benchmark::kMillisecond);

// MPI_Alltoallv with one double per peer: a v-collective, whose event lists bytes per rank.
void BM_AddedPerCall_Alltoallv(benchmark::State& state) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<double> in(static_cast<size_t>(size), 1.0), out(static_cast<size_t>(size));
  std::vector<int> counts(static_cast<size_t>(size), 1), displs(static_cast<size_t>(size));
  for (int j = 0; j < size; ++j) displs[static_cast<size_t>(j)] = j;
  paired_batches(state, 1, [&](int rounds) {
    for (int i = 0; i < rounds; ++i)
      MPI_Alltoallv(in.data(), counts.data(), displs.data(), MPI_DOUBLE, out.data(), counts.data(), displs.data(),
                    MPI_DOUBLE, MPI_COMM_WORLD);
  });
}
BENCHMARK(BM_AddedPerCall_Alltoallv)->Iterations(100)->Unit(benchmark::kMillisecond);

// The codec alone: one halo-like Isend event encoded into a block buffer.
void BM_EncodeIsendEvent(benchmark::State& state) {
  llamp::trace::Event e;
  e.call = llamp::trace::Call::Isend;
  e.comm = (uint64_t{0} << 32) | 1;
  e.peer = 1;
  e.tag = 11;
  e.bytes = 1024;
  std::vector<uint8_t> buf(64 << 10);
  uint8_t* p = buf.data();
  llamp::trace::BlockState block;
  uint64_t t = 1000;
  for (auto _ : state) {
    if (static_cast<size_t>(p - buf.data()) + llamp::trace::max_encoded_size(e) > buf.size()) p = buf.data();
    e.t_start_ns = t += 700;
    e.t_end_ns = t += 150;
    ++e.request;
    p = llamp::trace::encode_event(p, e, block);
    benchmark::DoNotOptimize(p);
  }
  state.counters["ns_per_event"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_EncodeIsendEvent)->Iterations(2000000);

// The two clock candidates for timestamps.
void BM_ClockMonotonic(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(now_ns());
}
BENCHMARK(BM_ClockMonotonic)->Iterations(5000000);

void BM_Rdtsc(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(__rdtsc());
}
BENCHMARK(BM_Rdtsc)->Iterations(5000000);

// Trace size of the halo app, traced beforehand by run_bench_tracer.sh (LLAMP_BENCH_HALO_TRACE).
void BM_HaloTraceBytesPerEvent(benchmark::State& state) {
  const char* dir = std::getenv("LLAMP_BENCH_HALO_TRACE");
  if (!dir) {
    state.SkipWithError("LLAMP_BENCH_HALO_TRACE not set (run tests/bench/run_bench_tracer.sh)");
    return;
  }
  uint64_t events = 0, file_bytes = 0, raw_bytes = 0;
  for (auto _ : state) {
    auto trace = llamp::trace::TraceDir::open(dir);
    events = file_bytes = raw_bytes = 0;
    for (auto& r : trace.ranks) {
      events += r.event_count();
      file_bytes += r.file_bytes();
      raw_bytes += r.raw_bytes();
    }
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["file_bytes_per_event"] = static_cast<double>(file_bytes) / static_cast<double>(events);
  state.counters["raw_bytes_per_event"] = static_cast<double>(raw_bytes) / static_cast<double>(events);
}
BENCHMARK(BM_HaloTraceBytesPerEvent)->Iterations(1);

}  // namespace

int main(int argc, char** argv) { return llamp::bench::run_on_every_rank(argc, argv, g_rank, "bench_tracer"); }
