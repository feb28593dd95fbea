#pragma once
// Polling lags (docs/analyzer.md, "Polling lag"): schedgen marks the calc vertex that stands for
// noticing a polled completion late with a cap, the expected lag (half the loop's polling period,
// one and a half for MPI_Iprobe/MPI_Improbe loops). Here each one becomes min(cap, its slack at the
// model's base point): exact at L0, where the trace already holds the real detection, and up to
// the cap late once latency pushes the arrival past the traced loop.
#include <cstdint>
#include <vector>

#include "llamp/analyzer/engine.hpp"
#include "llamp/graph.hpp"

namespace llamp::analyzer {

struct PollLagResolution {
  uint64_t lags = 0;               // polling-lag vertices in the graph
  uint64_t capped = 0;             // those left at their cap (slack at L0 at least the cap)
  uint64_t cap_ns = 0;             // sum of the caps
  uint64_t resolved_ns = 0;        // sum of the resolved lags
  std::vector<uint64_t> cap;       // per lag, in g.poll_lags order
  std::vector<uint64_t> resolved;  // per lag: min(cap, slack at L0)
};

// Sets g.value of every vertex in g.poll_lags to min(cap, slack): slack is how long after the
// lag vertex starts (its completion, at the model's base point with every lag at 0) the vertex
// after it starts anyway (the polling loop's end in the trace). One evaluation with `engine`,
// which must be built on `g` (its order does not depend on calc costs, so the caller keeps using
// it afterwards).
PollLagResolution resolve_poll_lags(graph::Graph& g, Engine& engine);

// Sets g.value of the polling lags to `values` (one per lag, g.poll_lags order).
void set_poll_lags(graph::Graph& g, const std::vector<uint64_t>& values);

}  // namespace llamp::analyzer
