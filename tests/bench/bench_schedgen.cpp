// Schedgen throughput: trace events per second on one core, and memory, on a generated trace
// shaped like a halo exchange (Irecv×2, Isend×2, Waitall per iteration, an Allreduce every 50
// iterations) on a ring of ranks. Sizes: LLAMP_BENCH_SCHEDGEN_RANKS (64) and
// LLAMP_BENCH_SCHEDGEN_EVENTS per rank (1000000); the trace is generated once into the build
// tree (LLAMP_BENCH_CACHE) and reused.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "llamp/graph_io.hpp"
#include "llamp/schedgen/schedgen.hpp"
#include "llamp/trace_dir.hpp"
#include "llamp/trace_file.hpp"
#include "../scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using llamp::trace::Call;
using llamp::trace::Completion;
using llamp::trace::Event;

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Writes (once) and returns the trace directory.
std::string bench_trace() {
  const uint32_t P = static_cast<uint32_t>(env_u64("LLAMP_BENCH_SCHEDGEN_RANKS", 64));
  const uint64_t per_rank = env_u64("LLAMP_BENCH_SCHEDGEN_EVENTS", 1000000);
  fs::path dir = fs::path(LLAMP_BENCH_CACHE) / fmt::format("schedgen-trace-{}x{}", P, per_rank);
  if (fs::exists(dir / "complete")) return dir.string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  llamp::trace::TraceMeta meta;
  meta.ranks = P;
  llamp::trace::write_meta(dir.string(), meta);
  for (uint32_t r = 0; r < P; ++r) {
    llamp::trace::EventFileWriter w((dir / llamp::trace::rank_file_name(r)).string(), r, P);
    const int32_t left = static_cast<int32_t>((r + P - 1) % P), right = static_cast<int32_t>((r + 1) % P);
    uint64_t t = 1000, events = 0, iter = 0;
    auto emit = [&](Event& e, uint64_t dur) {
      e.t_start_ns = t;
      e.t_end_ns = t + dur;
      t += dur;
      w.add(e);
      ++events;
    };
    Event e;
    e.call = Call::Init;
    emit(e, 1000);
    while (events + 6 < per_rank) {
      t += 10000;  // computation
      uint64_t base = iter * 4 + 1;
      // Receive tag 0 from the left and tag 1 from the right; send tag 0 right and tag 1 left.
      const int32_t peers[4] = {left, right, right, left};
      for (int k = 0; k < 4; ++k) {
        Event x;
        x.call = k >= 2 ? Call::Isend : Call::Irecv;
        x.peer = peers[k];
        x.tag = k % 2;
        x.bytes = 4096;
        x.request = base + k;
        emit(x, 300);
      }
      Event wait;
      wait.call = Call::Waitall;
      wait.requests = {base, base + 1, base + 2, base + 3};
      wait.completions = {Completion{0, base, left, 0, 4096, false}, Completion{1, base + 1, right, 1, 4096, false},
                          Completion{2, base + 2}, Completion{3, base + 3}};
      emit(wait, 2000);
      if (++iter % 50 == 0) {
        Event ar;
        ar.call = Call::Allreduce;
        ar.bytes = ar.bytes2 = 8;
        emit(ar, 5000);
      }
    }
    Event fin;
    fin.call = Call::Finalize;
    emit(fin, 1000);
    w.close();
  }
  std::FILE* f = std::fopen((dir / "complete").c_str(), "w");
  if (f) std::fclose(f);
  return dir.string();
}

// Counts only: what schedgen itself costs.
class NullSink final : public llamp::graph::GraphSink {
 public:
  void begin(uint32_t n) override { next_.assign(n, 0); }
  uint64_t calc(uint32_t r, uint64_t) override { return next_[r]++; }
  uint64_t send(uint32_t r, uint64_t, uint32_t, int32_t) override { return next_[r]++; }
  uint64_t recv(uint32_t r, uint64_t, uint32_t, int32_t) override { return next_[r]++; }
  void requires_edge(uint32_t, uint64_t, uint64_t) override {}
  void irequires_edge(uint32_t, uint64_t, uint64_t) override {}
  void message(uint32_t, uint64_t, uint32_t, uint64_t) override {}
  void finish() override {}

 private:
  std::vector<uint64_t> next_;
};

void report(benchmark::State& state, const llamp::schedgen::Stats& st) {
  state.counters["events"] = static_cast<double>(st.events);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(st.events) * state.iterations(), benchmark::Counter::kIsRate);
  state.counters["vertices"] = static_cast<double>(st.calc_vertices + st.send_vertices + st.recv_vertices);
  state.counters["messages"] = static_cast<double>(st.p2p_messages + st.collective_messages);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  state.counters["maxrss_MiB"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
}

// Arg: 1 with the time inside completion calls (Options::completion_time: a send time per message,
// and a rank read in start-time order while one of its completion calls waits for them), 2 with
// the floor under them (Options::completion_floor) and every message a rendezvous one (each send
// also waits for its receiver's answering call), 0 without.
void BM_SchedgenCountOnly(benchmark::State& state) {
  std::string dir = bench_trace();
  llamp::schedgen::Options opts;
  opts.completion_time = state.range(0) == 1;
  opts.completion_floor = state.range(0) == 2;
  if (opts.completion_floor) opts.rendezvous_above_bytes = 0;
  llamp::schedgen::Stats st;
  for (auto _ : state) {
    NullSink sink;
    st = llamp::schedgen::generate(dir, sink, opts);
  }
  report(state, st);
}

void BM_SchedgenToBinaryGraph(benchmark::State& state) {
  std::string dir = bench_trace();
  std::string out = llamp::test::scratch_file("bench_schedgen.lgr").string();
  llamp::schedgen::Stats st;
  for (auto _ : state) {
    llamp::graph::BinaryGraphWriter sink(out);
    st = llamp::schedgen::generate(dir, sink, {});
  }
  fs::remove(out);
  report(state, st);
}

// The trace reader alone (decompression + decoding), the floor under schedgen's time.
void BM_ReadTraceOnly(benchmark::State& state) {
  std::string dir = bench_trace();
  llamp::schedgen::Stats st;
  for (auto _ : state) {
    auto td = llamp::trace::TraceDir::open(dir);
    st.events = 0;
    for (auto& r : td.ranks)
      while (r.next()) ++st.events;
  }
  report(state, st);
}

BENCHMARK(BM_ReadTraceOnly)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_SchedgenCountOnly)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->UseRealTime();
BENCHMARK(BM_SchedgenToBinaryGraph)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
