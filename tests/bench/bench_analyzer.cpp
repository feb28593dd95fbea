// Native analyzer benchmarks on generated graphs: halo exchange, allreduce-heavy (recursive
// doubling) and linear all-to-all. Counters: events/s of one evaluation, bytes per event (graph +
// engine working set), evaluations of the exact curve.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "llamp/analyzer/analysis.hpp"
#include "llamp/analyzer/noise.hpp"
#include "llamp/graph_sink.hpp"

using namespace llamp;
using namespace llamp::analyzer;

namespace {

// Deterministic "noise" in compute costs so the critical path moves between ranks.
uint64_t cost(uint32_t r, uint64_t it, uint64_t base) { return base + (r * 7919u + it * 104729u) % (base / 2 + 1); }

// 2-D halo: per iteration and rank a compute phase, 4 receives and 4 sends, a wait (calc 0).
graph::Graph halo(uint32_t P, uint64_t events) {
  uint32_t side = 1;
  while (side * side < P) ++side;
  graph::InMemoryGraphBuilder b;
  b.begin(P);
  const uint64_t iters = events / (10ull * P);
  std::vector<uint64_t> last(P);
  for (uint32_t r = 0; r < P; ++r) last[r] = b.calc(r, 1);
  for (uint64_t it = 0; it < iters; ++it)
    for (uint32_t r = 0; r < P; ++r) {
      uint32_t x = r % side, y = r / side;
      uint32_t nb[4] = {y * side + (x + 1) % side, y * side + (x + side - 1) % side, ((y + 1) % side) * side + x,
                        ((y + side - 1) % side) * side + x};
      uint64_t c = b.calc(r, cost(r, it, 20000));
      b.requires_edge(r, c, last[r]);
      uint64_t w = b.calc(r, 0);
      for (int k = 0; k < 4; ++k) {
        uint32_t q = nb[k] < P ? nb[k] : r;
        uint64_t rv = b.recv(r, 8192, q, k ^ 1);
        b.requires_edge(r, rv, last[r]);
        b.requires_edge(r, w, rv);
      }
      for (int k = 0; k < 4; ++k) {
        uint32_t q = nb[k] < P ? nb[k] : r;
        uint64_t s = b.send(r, 8192, q, k);
        b.requires_edge(r, s, c);
        b.requires_edge(r, w, s);
      }
      last[r] = w;
    }
  b.finish();
  return b.take();
}

// Recursive-doubling allreduces with a little compute in between (P a power of two).
graph::Graph allreduce(uint32_t P, uint64_t events) {
  uint32_t rounds = 0;
  while ((1u << rounds) < P) ++rounds;
  graph::InMemoryGraphBuilder b;
  b.begin(P);
  const uint64_t iters = events / (uint64_t{P} * (1 + 3 * rounds));
  std::vector<uint64_t> last(P);
  for (uint32_t r = 0; r < P; ++r) last[r] = b.calc(r, 1);
  for (uint64_t it = 0; it < iters; ++it)
    for (uint32_t r = 0; r < P; ++r) {
      uint64_t c = b.calc(r, cost(r, it, 5000));
      b.requires_edge(r, c, last[r]);
      uint64_t prev = c;
      for (uint32_t k = 0; k < rounds; ++k) {
        uint32_t q = r ^ (1u << k);
        uint64_t s = b.send(r, 64, q, static_cast<int32_t>(k));
        uint64_t rv = b.recv(r, 64, q, static_cast<int32_t>(k));
        uint64_t red = b.calc(r, 50);
        b.requires_edge(r, s, prev);
        b.requires_edge(r, rv, prev);
        b.requires_edge(r, red, rv);
        b.requires_edge(r, red, s);
        prev = red;
      }
      last[r] = prev;
    }
  b.finish();
  return b.take();
}

// Linear all-to-all: rank r sends to r+k and receives from r−k for k = 1..P−1, processing each
// received block; a final vertex waits for everything (~3 P² events).
graph::Graph alltoall(uint32_t P) {
  graph::InMemoryGraphBuilder b;
  b.begin(P);
  for (uint32_t r = 0; r < P; ++r) {
    uint64_t start = b.calc(r, 1000), prev = start;
    std::vector<uint64_t> done;
    for (uint32_t k = 1; k < P; ++k) {
      uint64_t s = b.send(r, 4096, (r + k) % P, 0);
      uint64_t rv = b.recv(r, 4096, (r + P - k) % P, 0);
      uint64_t c = b.calc(r, 200);
      b.requires_edge(r, s, start);
      b.requires_edge(r, rv, start);
      b.requires_edge(r, c, rv);
      b.requires_edge(r, c, prev);
      prev = c;
      done.push_back(s);
    }
    uint64_t end = b.calc(r, 0);
    b.requires_edge(r, end, prev);
    for (uint64_t s : done) b.requires_edge(r, end, s);
  }
  b.finish();
  return b.take();
}

LogGP params() {
  LogGP p;
  p.L_ns = 3000;
  p.o_send_ns = p.o_recv_ns = 500;
  p.G_ns_per_byte = 0.1;
  p.S_bytes = 65536;
  return p;
}

// Graphs are built once per process and kept (building 10 M events takes seconds).
const graph::Graph& cached(const std::string& name) {
  static std::map<std::string, std::unique_ptr<graph::Graph>> cache;
  auto& g = cache[name];
  if (!g) {
    if (name == "halo1M") g = std::make_unique<graph::Graph>(halo(64, 1'000'000));
    if (name == "halo10M") g = std::make_unique<graph::Graph>(halo(256, 10'000'000));
    if (name == "allreduce1M") g = std::make_unique<graph::Graph>(allreduce(64, 1'000'000));
    if (name == "allreduce10M") g = std::make_unique<graph::Graph>(allreduce(256, 10'000'000));
    if (name == "alltoall1024") g = std::make_unique<graph::Graph>(alltoall(1024));
    graph::release_tags(*g);  // as llamp analyze does after loading
  }
  return *g;
}

// As llamp analyze holds them: the graph without its tags (release_tags), the engine's state.
void memory_counters(benchmark::State& state, const graph::Graph& g, const Engine& e) {
  const double n = static_cast<double>(g.num_vertices());
  state.counters["events"] = n;
  state.counters["graph_B_per_event"] = static_cast<double>(g.memory_bytes()) / n;
  state.counters["total_B_per_event"] = static_cast<double>(g.memory_bytes() + e.memory_bytes()) / n;
}

void BM_Evaluate(benchmark::State& state, const std::string& name) {
  const graph::Graph& g = cached(name);
  Engine e(g, homogeneous_model(params()));
  for (auto _ : state) benchmark::DoNotOptimize(e.at_L(3000).T);
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(g.num_vertices()), benchmark::Counter::kIsIterationInvariantRate);
  memory_counters(state, g, e);
}

// Args: engines evaluating at once (1: the serial bisection; llamp analyze's default is one per
// hardware thread) and points per pass (1, or Engine::kLanes: llamp analyze's default where
// memory allows). {0, 0}: what `llamp analyze` runs by default (curve_plan), so the figure follows
// the machine it is measured on.
void BM_ExactCurve(benchmark::State& state, const std::string& name) {
  const graph::Graph& g = cached(name);
  Engine e(g, homogeneous_model(params()));
  unsigned threads = static_cast<unsigned>(state.range(0));
  unsigned lanes = static_cast<unsigned>(state.range(1));
  if (threads == 0) {
    const CurvePlan plan = curve_plan(e, 0);
    threads = plan.threads;
    lanes = plan.lanes;
  }
  Curve c;
  for (auto _ : state) c = exact_curve(e, Sweep::L, 0, 100000, threads, lanes);
  state.counters["breakpoints"] = static_cast<double>(c.breakpoints.size());
  state.counters["evaluations"] = static_cast<double>(c.evaluations);
  state.counters["threads"] = threads;
  state.counters["lanes"] = lanes;
  memory_counters(state, g, e);
}

void BM_Analyze(benchmark::State& state, const std::string& name) {
  const graph::Graph& g = cached(name);
  Engine e(g, homogeneous_model(params()));
  Analysis a;
  for (auto _ : state) a = analyze(e, AnalyzeOptions{});
  state.counters["evaluations"] = static_cast<double>(a.evaluations);
  state.counters["breakpoints"] = static_cast<double>(a.curve.breakpoints.size());
  memory_counters(state, g, e);
}

// One noisy pass (llamp analyze --noise): the clean pass plus a binary search in the rank's
// detours at every wait that ends on a remote arrival. 2000 detours per second per rank of 20 µs,
// about this VM's rate.
void BM_EvaluateNoisy(benchmark::State& state, const std::string& name) {
  const graph::Graph& g = cached(name);
  Engine e(g, homogeneous_model(params()));
  NoiseRecording rec;
  rec.duration_ns = 2'000'000'000;
  RankNoise lane;
  for (uint64_t t = 0; t < rec.duration_ns; t += 500'000) lane.detours.emplace_back(t, 20'000);
  for (uint32_t r = 0; r < 16; ++r) {
    lane.rank = r;
    rec.ranks.push_back(lane);
  }
  const NoiseTimeline timeline({rec}, g.num_ranks);
  double phase = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(e.evaluate_noisy(3000, e.base_xG(), NoiseShift{&timeline, phase}));
    phase += 1e6;
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(g.num_vertices()), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TopologicalOrder(benchmark::State& state, const std::string& name) {
  const graph::Graph& g = cached(name);
  for (auto _ : state) benchmark::DoNotOptimize(graph::topological_order(g, 65536).size());
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(g.num_vertices()), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Evaluate, halo1M, std::string("halo1M"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Evaluate, allreduce1M, std::string("allreduce1M"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Evaluate, alltoall1024, std::string("alltoall1024"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Evaluate, halo10M, std::string("halo10M"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Evaluate, allreduce10M, std::string("allreduce10M"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EvaluateNoisy, halo1M, std::string("halo1M"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EvaluateNoisy, allreduce1M, std::string("allreduce1M"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_EvaluateNoisy, halo10M, std::string("halo10M"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_TopologicalOrder, halo10M, std::string("halo10M"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ExactCurve, halo10M, std::string("halo10M"))
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({2, Engine::kLanes})
    ->Args({0, 0})
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_ExactCurve, allreduce10M, std::string("allreduce10M"))
    ->Unit(benchmark::kSecond)
    ->Iterations(1)
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({1, Engine::kLanes})
    ->Args({2, Engine::kLanes})
    ->Args({0, 0})
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Analyze, alltoall1024, std::string("alltoall1024"))->Unit(benchmark::kSecond)->Iterations(1);

BENCHMARK_MAIN();
