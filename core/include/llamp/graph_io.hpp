#pragma once
// Graph files: LogGOPSim's GOAL text and llamp's binary graph (both described in docs/FORMATS.md,
// "Graph formats"). Writers are GraphSinks with memory bounded independently of the graph size;
// readers return a validated in-memory Graph.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "llamp/graph.hpp"
#include "llamp/graph_sink.hpp"

namespace llamp::graph {

namespace detail {
class RankSpool;
}

// Writes GOAL text: "num_ranks N", then one "rank r { ... }" block per rank in rank order, each
// vertex as "l<id>: calc|send|recv ..." and edges as "l<a> requires l<b>" / "l<a> irequires l<b>".
// Calc costs are written in ns (run LogGOPSim with its parameters in ns too).
//
// GOAL has no explicit message pairs: readers pair the k-th send of a (src, dst, tag) stream with
// the k-th receive of that stream. The writer checks that every message() it is given follows that
// rule (same stream, same position in it) and that every send and receive is paired by finish();
// anything else throws llamp::Error (a producer that pairs otherwise must use BinaryGraphWriter,
// which stores pairs explicitly). For the check it remembers each send/receive until its message()
// call, so its memory is bounded by the number of not-yet-paired operations, not the graph size.
class GoalTextWriter final : public GraphSink {
 public:
  explicit GoalTextWriter(std::string path);
  ~GoalTextWriter() override;
  void begin(uint32_t num_ranks) override;
  uint64_t calc(uint32_t rank, uint64_t cost_ns) override;
  uint64_t poll_lag(uint32_t rank, uint64_t cap_ns) override;
  uint64_t send(uint32_t rank, uint64_t bytes, uint32_t dst, int32_t tag) override;
  uint64_t recv(uint32_t rank, uint64_t bytes, uint32_t src, int32_t tag) override;
  void requires_edge(uint32_t rank, uint64_t after, uint64_t before) override;
  void irequires_edge(uint32_t rank, uint64_t after, uint64_t before) override;
  void message(uint32_t src_rank, uint64_t send_id, uint32_t dst_rank, uint64_t recv_id) override;
  void finish() override;

 private:
  struct Pending {
    int32_t tag;
    uint32_t peer_rank;
    uint64_t position;  // index in its (src, dst, tag) stream
    bool is_send;
  };
  uint64_t add_comm(uint32_t rank, bool is_send, uint32_t peer_rank, int32_t tag);
  uint64_t next_id(uint32_t rank);
  std::string path_;
  uint32_t num_ranks_ = 0;
  std::unique_ptr<detail::RankSpool> spool_;
  std::vector<uint64_t> next_local_;
  // Per (src, dst, tag) stream: how many sends and receives were written so far.
  std::map<std::tuple<uint32_t, uint32_t, int32_t>, std::pair<uint64_t, uint64_t>> streams_;
  std::map<std::pair<uint32_t, uint64_t>, Pending> pending_;  // (rank, local id) → unpaired op
  bool finished_ = false;
};

// The comment that marks a GOAL calc as a polling lag (GraphSink::poll_lag); it must follow the
// calc's time on the same line.
inline constexpr const char* kGoalPollLagMarker = "// llamp:poll-lag";

// Reads LogGOPSim GOAL text from any producer (llamp, LLAMP's or LogGOPSim's Schedgen): comments,
// labels, wildcard (-1) sources and tags (matched as InMemoryGraphBuilder::match_fifo documents),
// and cpu/nic fields (accepted, not modelled). Malformed input throws llamp::Error "path:line: ...".
Graph read_goal(const std::string& path);
// The same from a string (tests, fuzzing); `name` stands for the file name in errors.
Graph parse_goal(std::string_view text, const std::string& name);

// Binary graph, version 1 (layout in docs/FORMATS.md). All integers little-endian.
inline constexpr char kBinaryGraphMagic[8] = {'L', 'L', 'A', 'M', 'P', 'G', 'R', 'F'};
inline constexpr uint32_t kBinaryGraphVersion = 1;

class BinaryGraphWriter final : public GraphSink {
 public:
  explicit BinaryGraphWriter(std::string path);
  ~BinaryGraphWriter() override;
  void begin(uint32_t num_ranks) override;
  uint64_t calc(uint32_t rank, uint64_t cost_ns) override;
  uint64_t poll_lag(uint32_t rank, uint64_t cap_ns) override;
  uint64_t send(uint32_t rank, uint64_t bytes, uint32_t dst, int32_t tag) override;
  uint64_t recv(uint32_t rank, uint64_t bytes, uint32_t src, int32_t tag) override;
  void requires_edge(uint32_t rank, uint64_t after, uint64_t before) override;
  void irequires_edge(uint32_t rank, uint64_t after, uint64_t before) override;
  void message(uint32_t src_rank, uint64_t send_id, uint32_t dst_rank, uint64_t recv_id) override;
  void finish() override;

 private:
  uint64_t add_vertex(uint32_t rank, uint32_t kind, uint64_t value, uint32_t peer_rank, int32_t tag);
  void add_edge(uint32_t rank, uint64_t after, uint64_t before, bool irequires);
  std::string path_;
  uint32_t num_ranks_ = 0;
  std::unique_ptr<detail::RankSpool> vertices_, edges_, messages_;
  std::vector<uint64_t> num_vertices_, num_edges_;
  uint64_t num_messages_ = 0;
  bool finished_ = false;
};

// Maps a binary graph file and converts it into a Graph; every count, offset and id is checked
// against the file, so corrupt input throws llamp::Error "path: offset N: ...".
Graph load_binary(const std::string& path);

// Reads either format, chosen by the file's first bytes (binary magic, else GOAL text).
Graph load_graph(const std::string& path);

// Replays a Graph into a sink (convert between formats, write test graphs).
void write_graph(const Graph& g, GraphSink& sink);

}  // namespace llamp::graph
