#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "llamp/graph_io.hpp"

namespace llamp::graph {

Graph load_graph(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  char magic[sizeof kBinaryGraphMagic] = {};
  in.read(magic, sizeof magic);
  if (in.gcount() == sizeof magic && std::memcmp(magic, kBinaryGraphMagic, sizeof magic) == 0) return load_binary(path);
  return read_goal(path);
}

void write_graph(const Graph& g, GraphSink& sink) {
  if (g.tag.empty() && g.num_vertices() > 0)
    throw Error(
        fmt::format("{}: cannot write a graph whose tags were released", g.source.empty() ? "graph" : g.source));
  sink.begin(g.num_ranks);
  for (uint32_t r = 0; r < g.num_ranks; ++r) {
    const uint64_t base = g.rank_begin[r];
    for (uint64_t v = base; v < g.rank_begin[r + 1]; ++v) {
      // Edges are written after their later endpoint, so sinks that need labels defined before
      // use (GOAL) are satisfied whatever order the producer used.
      switch (g.kind[v]) {
        case VertexKind::Calc:
          if (std::binary_search(g.poll_lags.begin(), g.poll_lags.end(), static_cast<VertexId>(v)))
            sink.poll_lag(r, g.value[v]);
          else
            sink.calc(r, g.value[v]);
          break;
        case VertexKind::Send:
          sink.send(r, g.value[v], g.rank_of(g.peer[v]), g.tag[v]);
          break;
        case VertexKind::Recv:
          sink.recv(r, g.value[v], g.rank_of(g.peer[v]), g.tag[v]);
          break;
      }
      const auto id = static_cast<VertexId>(v);
      for (uint32_t e : g.preds(id)) {
        VertexId p = Graph::pred_vertex(e);
        if (p > id) continue;  // written when p is
        if (Graph::pred_is_irequires(e))
          sink.irequires_edge(r, v - base, p - base);
        else
          sink.requires_edge(r, v - base, p - base);
      }
    }
  }
  // Predecessors with a higher id than their successor: emit them once both exist.
  for (uint32_t r = 0; r < g.num_ranks; ++r) {
    const uint64_t base = g.rank_begin[r];
    for (uint64_t v = base; v < g.rank_begin[r + 1]; ++v)
      for (uint32_t e : g.preds(static_cast<VertexId>(v))) {
        VertexId p = Graph::pred_vertex(e);
        if (p <= v) continue;
        if (Graph::pred_is_irequires(e))
          sink.irequires_edge(r, v - base, p - base);
        else
          sink.requires_edge(r, v - base, p - base);
      }
  }
  // Messages in stream order (sends in global order), which is what GOAL writers require.
  for (uint64_t v = 0; v < g.num_vertices(); ++v)
    if (g.kind[v] == VertexKind::Send) {
      VertexId d = g.peer[v];
      uint32_t sr = g.rank_of(static_cast<VertexId>(v)), dr = g.rank_of(d);
      sink.message(sr, v - g.rank_begin[sr], dr, d - g.rank_begin[dr]);
    }
  sink.finish();
}

}  // namespace llamp::graph
