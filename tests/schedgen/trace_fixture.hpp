#pragma once
// Hand-made traces for schedgen tests: per-rank event lists with explicit timestamps, written
// with core's EventFileWriter + write_meta, plus helpers to read the resulting graph.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "llamp/graph.hpp"
#include "llamp/graph_sink.hpp"
#include "llamp/schedgen/schedgen.hpp"
#include "llamp/trace_dir.hpp"
#include "llamp/trace_file.hpp"
#include "../scratch_dir.hpp"

namespace llamp::schedgen::test {

using trace::Call;
using trace::Completion;
using trace::Event;

// A fresh, empty directory for one trace, removed at exit (tests/scratch_dir.hpp).
inline std::string fresh_dir(const std::string& name) { return llamp::test::scratch_dir("schedgen-" + name).string(); }

// Builds one rank's events; `at(t)` moves the clock, each call takes `dur` ns.
class RankEvents {
 public:
  std::vector<Event> events;
  uint64_t now = 0;

  Event& add(Call c, uint64_t dur = 10) {
    Event e;
    e.call = c;
    e.t_start_ns = now;
    e.t_end_ns = now + dur;
    now += dur;
    events.push_back(e);
    return events.back();
  }
  RankEvents& compute(uint64_t ns) {
    now += ns;
    return *this;
  }
  Event& send(int32_t peer, int32_t tag, uint64_t bytes, uint64_t comm = trace::kCommWorld, Call c = Call::Send) {
    Event& e = add(c);
    e.peer = peer;
    e.tag = tag;
    e.bytes = bytes;
    e.comm = comm;
    return e;
  }
  // Blocking receive; the status says where the message came from.
  Event& recv(int32_t peer, int32_t tag, uint64_t bytes, int32_t actual_src, int32_t actual_tag,
              uint64_t comm = trace::kCommWorld) {
    Event& e = add(Call::Recv);
    e.peer = peer;
    e.tag = tag;
    e.bytes = bytes;
    e.comm = comm;
    e.completions.push_back(Completion{0, 0, actual_src, actual_tag, bytes, false});
    return e;
  }
  Event& isend(int32_t peer, int32_t tag, uint64_t bytes, uint64_t request, uint64_t comm = trace::kCommWorld) {
    Event& e = send(peer, tag, bytes, comm, Call::Isend);
    e.request = request;
    return e;
  }
  Event& irecv(int32_t peer, int32_t tag, uint64_t bytes, uint64_t request, uint64_t comm = trace::kCommWorld) {
    Event& e = add(Call::Irecv);
    e.peer = peer;
    e.tag = tag;
    e.bytes = bytes;
    e.comm = comm;
    e.request = request;
    return e;
  }
  // Wait/Waitall that finished `done` (request id, actual source, actual tag, bytes; source -1000
  // for sends).
  struct Done {
    uint64_t request;
    int32_t source = trace::kNoRank;
    int32_t tag = trace::kAnyTag;
    uint64_t bytes = 0;
  };
  Event& wait(Call c, std::vector<uint64_t> passed, std::vector<Done> done, uint64_t dur = 10) {
    Event& e = add(c, dur);
    e.requests = std::move(passed);
    uint32_t i = 0;
    for (const auto& d : done) e.completions.push_back(Completion{i++, d.request, d.source, d.tag, d.bytes, false});
    return e;
  }
  Event& coll(Call c, uint64_t bytes, int32_t root = trace::kNoRank, uint64_t comm = trace::kCommWorld) {
    Event& e = add(c);
    e.bytes = bytes;
    e.bytes2 = bytes;
    e.root = root;
    e.comm = comm;
    return e;
  }
};

struct TraceSpec {
  std::vector<RankEvents> ranks;
  explicit TraceSpec(uint32_t n) : ranks(n) {
    for (auto& r : ranks) r.add(Call::Init);
  }
  RankEvents& operator[](uint32_t r) { return ranks[r]; }
  // Writes meta.json and one file per rank (Finalize appended to every rank).
  std::string write(const std::string& name) {
    std::string dir = fresh_dir(name);
    trace::TraceMeta meta;
    meta.ranks = static_cast<uint32_t>(ranks.size());
    trace::write_meta(dir, meta);
    for (uint32_t r = 0; r < ranks.size(); ++r) {
      ranks[r].add(Call::Finalize);
      trace::EventFileWriter w((std::filesystem::path(dir) / trace::rank_file_name(r)).string(), r,
                               static_cast<uint32_t>(ranks.size()), 4096);
      for (const auto& e : ranks[r].events) w.add(e);
      w.close();
    }
    return dir;
  }
};

// halo3d's idiom with 4 KiB messages (rendezvous above S = 1000 B): both ranks post MPI_Irecv and
// MPI_Isend at [10, 30], compute, and MPI_Waitall. Rank 0 enters at 130 and waits for rank 1, which
// enters at 300 and spends `late_ns` inside; rank 0 returns 40 ns after rank 1 entered
// (Options::completion_floor).
inline TraceSpec rendezvous_exchange(uint64_t late_ns) {
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) {
    t[r].irecv(1 - r, 0, 4096, 1);  // [10, 20]
    t[r].isend(1 - r, 0, 4096, 2);  // [20, 30]
  }
  t[0].compute(100).wait(Call::Waitall, {1, 2}, {{1, 1, 0, 4096}, {2}}, 210);      // [130, 340]
  t[1].compute(270).wait(Call::Waitall, {1, 2}, {{1, 0, 0, 4096}, {2}}, late_ns);  // [300, 300 + late_ns]
  return t;
}

inline graph::Graph build_graph(const std::string& dir, const Options& opts = {}, Stats* stats = nullptr) {
  graph::InMemoryGraphBuilder b;
  Stats s = generate(dir, b, opts);
  if (stats) *stats = s;
  return b.take();
}

// The graph of `dir` with `opts` and with the default options, for an option that only adds
// computation: the test compares the two vertex by vertex.
struct WithAndWithout {
  graph::Graph with, plain;
  Stats stats;  // of `with`
};
inline WithAndWithout build_with_and_without(const std::string& dir, const Options& opts) {
  WithAndWithout r;
  r.with = build_graph(dir, opts, &r.stats);
  r.plain = build_graph(dir);
  return r;
}

// Vertex kinds of one rank, in local id order: "c s c r c".
// The options under which --eager-progress's copies must not appear: the rule off, with
// --async-progress (a progress thread copies as messages arrive), and with --completion-time (the
// traced time of the completion call holds the copies). Named for the assertions' messages.
inline std::vector<std::pair<std::string, Options>> without_eager_copies(const Options& base) {
  std::vector<std::pair<std::string, Options>> out;
  for (const char* name : {"off", "async-progress", "completion-time"}) {
    Options o = base;
    o.eager_progress = std::string(name) != "off";
    o.async_progress = std::string(name) == "async-progress";
    o.completion_time = std::string(name) == "completion-time";
    out.emplace_back(name, o);
  }
  return out;
}

inline std::string kinds_of(const graph::Graph& g, uint32_t rank) {
  std::string out;
  for (uint64_t v = g.rank_begin[rank]; v < g.rank_begin[rank + 1]; ++v) {
    if (!out.empty()) out += ' ';
    out += g.kind[v] == graph::VertexKind::Calc ? 'c' : g.kind[v] == graph::VertexKind::Send ? 's' : 'r';
  }
  return out;
}

// Predecessors of (rank, local) as sorted "R<local>" / "I<local>" strings (R = requires).
inline std::vector<std::string> preds_of(const graph::Graph& g, uint32_t rank, uint64_t local) {
  std::vector<std::string> out;
  for (uint32_t p : g.preds(g.global_id(rank, local))) {
    auto v = graph::Graph::pred_vertex(p);
    out.push_back((graph::Graph::pred_is_irequires(p) ? "I" : "R") + std::to_string(g.local_id(v)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Communication rounds of a graph: a send happens one round after everything it depends on, a
// receive in the round its message was sent and after the operations it depends on (so a rank
// sends one message per round and receives one per round; an exchange is one round).
inline uint64_t rounds(const graph::Graph& g) {
  std::vector<uint64_t> round(g.num_vertices(), 0);
  uint64_t best = 0;
  for (graph::VertexId v : graph::topological_order(g)) {
    uint64_t base = 0;
    for (uint32_t p : g.preds(v)) base = std::max(base, round[graph::Graph::pred_vertex(p)]);
    if (g.kind[v] == graph::VertexKind::Send) base += 1;
    if (g.kind[v] == graph::VertexKind::Recv) base = std::max(base + 1, round[g.peer[v]]);
    round[v] = base;
    best = std::max(best, base);
  }
  return best;
}

inline uint64_t total_message_bytes(const graph::Graph& g) {
  uint64_t sum = 0;
  for (uint64_t v = 0; v < g.num_vertices(); ++v)
    if (g.kind[v] == graph::VertexKind::Send) sum += g.value[v];
  return sum;
}

}  // namespace llamp::schedgen::test
