// The LP route beside the native engine on generated MPI-like graphs (test_lp_graphs.hpp):
//   BM_Native        one native evaluation (T and λ_L)
//   BM_LpBuild       Algorithm 1: graph → LP
//   BM_LpSolve       one LP solve at L (crash basis + Clp factorization and optimality proof,
//                    reduced costs, primal ranging of l)
//   BM_LpColdSolve   Clp from scratch (presolve + dual simplex) — small graphs only: it grows
//                    about quadratically (150 k vertices took 71 s on the 2-vCPU VMs)
// Argument: number of operations placed over 16 ranks (≈1.5 vertices each); 660000 ≈ 1 M vertices.
// Counters: vertices, LP columns / rows.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "llamp/analyzer/engine.hpp"
#include "llamp/analyzer/lp_model.hpp"
#include "llamp/analyzer/lp_solver.hpp"
#include "test_lp_graphs.hpp"

namespace {

namespace lp = llamp::analyzer::lp;

llamp::LogGP bench_params() {
  llamp::LogGP p;
  p.L_ns = 3000;
  p.o_send_ns = p.o_recv_ns = 500;
  p.G_ns_per_byte = 0.018;
  p.S_bytes = 4096;
  return p;
}

const llamp::graph::Graph& graph_of(int64_t steps) {
  static std::map<int64_t, std::unique_ptr<llamp::graph::Graph>> cache;
  auto& g = cache[steps];
  if (!g) {
    llamp::lp_test::RandomGraphSpec spec;
    spec.ranks = 16;
    spec.steps = static_cast<uint32_t>(steps);
    g = std::make_unique<llamp::graph::Graph>(llamp::lp_test::random_graph(spec, 42));
  }
  return *g;
}

void BM_Native(benchmark::State& state) {
  const auto& g = graph_of(state.range(0));
  llamp::analyzer::Engine e(g, llamp::analyzer::homogeneous_model(bench_params()));
  for (auto _ : state) benchmark::DoNotOptimize(e.at_L(3000));
  state.counters["vertices"] = static_cast<double>(g.num_vertices());
}

void BM_LpBuild(benchmark::State& state) {
  const auto& g = graph_of(state.range(0));
  int64_t rows = 0, cols = 0;
  for (auto _ : state) {
    const lp::LpProblem problem = lp::build_lp(g, bench_params());
    rows = problem.num_rows();
    cols = problem.num_cols();
  }
  state.counters["vertices"] = static_cast<double>(g.num_vertices());
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["cols"] = static_cast<double>(cols);
}

void solve(benchmark::State& state, lp::LpStart start) {
  const auto& g = graph_of(state.range(0));
  const lp::LpProblem problem = lp::build_lp(g, bench_params());
  for (auto _ : state) {
    lp::LpSolver solver(problem, start);  // load into Clp included
    benchmark::DoNotOptimize(solver.solve_at(3000));
  }
  state.counters["vertices"] = static_cast<double>(g.num_vertices());
  state.counters["rows"] = static_cast<double>(problem.num_rows());
}

void BM_LpSolve(benchmark::State& state) { solve(state, lp::LpStart::CrashBasis); }
void BM_LpColdSolve(benchmark::State& state) { solve(state, lp::LpStart::Presolve); }

BENCHMARK(BM_Native)->Arg(6600)->Arg(66000)->Arg(660000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LpBuild)->Arg(6600)->Arg(66000)->Arg(660000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LpSolve)->Arg(6600)->Arg(66000)->Arg(660000)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_LpColdSolve)->Arg(6600)->Arg(20000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
