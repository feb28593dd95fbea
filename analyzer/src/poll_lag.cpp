#include "llamp/analyzer/poll_lag.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "llamp/error.hpp"

namespace llamp::analyzer {

PollLagResolution resolve_poll_lags(graph::Graph& g, Engine& e) {
  PollLagResolution r;
  r.lags = g.poll_lags.size();
  if (g.poll_lags.empty()) return r;
  std::vector<uint64_t>& cap = r.cap;
  cap.resize(g.poll_lags.size());
  for (size_t i = 0; i < g.poll_lags.size(); ++i) {
    cap[i] = g.value[g.poll_lags[i]];
    r.cap_ns += cap[i];
    g.value[g.poll_lags[i]] = 0;
  }
  if (&e.graph() != &g) throw Error("resolve_poll_lags: the engine is built on another graph");
  e.evaluate(e.base_xL(), e.base_xG(), Sweep::L);

  // The slack of a lag: the start of each vertex that requires it minus the lag's own start.
  std::vector<double> slack(g.poll_lags.size(), std::numeric_limits<double>::infinity());
  for (graph::VertexId v = 0; v < g.num_vertices(); ++v)
    for (uint32_t entry : g.preds(v)) {
      if (graph::Graph::pred_is_irequires(entry)) continue;
      const graph::VertexId p = graph::Graph::pred_vertex(entry);
      auto it = std::lower_bound(g.poll_lags.begin(), g.poll_lags.end(), p);
      if (it == g.poll_lags.end() || *it != p) continue;
      const size_t i = static_cast<size_t>(it - g.poll_lags.begin());
      slack[i] = std::min(slack[i], e.start_value(v) - e.start_value(p));
    }
  for (size_t i = 0; i < g.poll_lags.size(); ++i) {
    // A lag nothing waits for changes nothing: keep the cap.
    const double s = std::isinf(slack[i]) ? static_cast<double>(cap[i]) : std::max(0.0, slack[i]);
    const uint64_t lag = std::min(cap[i], static_cast<uint64_t>(std::floor(s)));
    g.value[g.poll_lags[i]] = lag;
    r.resolved.push_back(lag);
    r.resolved_ns += lag;
    r.capped += lag == cap[i];
  }
  return r;
}

void set_poll_lags(graph::Graph& g, const std::vector<uint64_t>& values) {
  if (values.size() != g.poll_lags.size()) throw Error("set_poll_lags: one value per polling lag expected");
  for (size_t i = 0; i < values.size(); ++i) g.value[g.poll_lags[i]] = values[i];
}

}  // namespace llamp::analyzer
