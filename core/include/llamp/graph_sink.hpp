#pragma once
// The streaming interface producers (schedgen, the GOAL reader, tests) write graphs through, and
// the in-memory builder behind it. Writers to files (graph_goal.hpp, graph_binary.hpp) implement
// the same interface with memory that does not grow with the graph.
//
// Call protocol: begin(P) once; then any interleaving of calc/send/recv (each returns the new
// vertex's rank-local id: 0, 1, 2, ... per rank), requires_edge/irequires_edge between two
// existing vertices of one rank, and message(send → recv) once per send; then finish() once.
// Tags given to send/recv are MPI tags ≥ 0 (wildcards are the producer's to resolve).
#include <cstdint>
#include <memory>
#include <vector>

#include "llamp/graph.hpp"

namespace llamp::graph {

class GraphSink {
 public:
  virtual ~GraphSink();
  virtual void begin(uint32_t num_ranks) = 0;
  virtual uint64_t calc(uint32_t rank, uint64_t cost_ns) = 0;
  // A calc that stands for noticing a polled completion late (schedgen, "Polling"): at most
  // `cap_ns`, resolved by the analyzer against the model's slack at L0 (docs/analyzer.md,
  // "Polling lag"). Formats without the notion store a plain calc of cap_ns.
  virtual uint64_t poll_lag(uint32_t rank, uint64_t cap_ns) { return calc(rank, cap_ns); }
  virtual uint64_t send(uint32_t rank, uint64_t bytes, uint32_t dst, int32_t tag) = 0;
  virtual uint64_t recv(uint32_t rank, uint64_t bytes, uint32_t src, int32_t tag) = 0;
  // `after` starts when `before` ends.
  virtual void requires_edge(uint32_t rank, uint64_t after, uint64_t before) = 0;
  // `after` starts when `before` starts.
  virtual void irequires_edge(uint32_t rank, uint64_t after, uint64_t before) = 0;
  virtual void message(uint32_t src_rank, uint64_t send_id, uint32_t dst_rank, uint64_t recv_id) = 0;
  virtual void finish() = 0;
};

// Collects a graph in memory. After finish(), take() returns the validated Graph.
// Receives without a message() call are paired by match_fifo() (called by finish()).
class InMemoryGraphBuilder final : public GraphSink {
 public:
  InMemoryGraphBuilder();
  ~InMemoryGraphBuilder() override;
  void begin(uint32_t num_ranks) override;
  uint64_t calc(uint32_t rank, uint64_t cost_ns) override;
  uint64_t poll_lag(uint32_t rank, uint64_t cap_ns) override;
  uint64_t send(uint32_t rank, uint64_t bytes, uint32_t dst, int32_t tag) override;
  uint64_t recv(uint32_t rank, uint64_t bytes, uint32_t src, int32_t tag) override;
  void requires_edge(uint32_t rank, uint64_t after, uint64_t before) override;
  void irequires_edge(uint32_t rank, uint64_t after, uint64_t before) override;
  void message(uint32_t src_rank, uint64_t send_id, uint32_t dst_rank, uint64_t recv_id) override;
  void finish() override;

  // For readers of formats whose receives may carry wildcards (GOAL): src may be kAnySource and
  // tag kAnyTag; such receives are resolved by match_fifo().
  uint64_t recv_wildcard(uint32_t rank, uint64_t bytes, uint32_t src, int32_t tag);
  // Records where the last created vertex of `rank` came from (for error messages).
  void set_source(std::string source);
  void set_line_of_last(uint32_t rank, uint32_t line);

  // Pairs every still-unpaired receive with a send, LogGOPSim/MPI style: receives of a rank are
  // taken in local-id order; each takes the earliest unpaired send (sender's local-id order) of
  // the matching (src, dst, tag) stream. A wildcard receive takes, among all unpaired sends it
  // matches, the one with the lowest (source rank, sender local id): MPI's non-overtaking order
  // within one source, and the lowest rank across sources (a timing-independent choice where MPI
  // leaves it to timing). Leftover sends or receives are an error naming one of them.
  void match_fifo();

  Graph take();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llamp::graph
