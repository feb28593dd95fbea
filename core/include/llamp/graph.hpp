#pragma once
// MPI execution graphs (paper 000, Sec. II-A): the in-memory form every analysis reads.
//
// A graph has P ranks. Each rank owns a sequence of vertices numbered 0, 1, 2, ... in the order
// they were created (the rank-local id); in memory every vertex also has a global id
//     global = rank_begin[rank] + local
// so the vertices of rank r are the contiguous range [rank_begin[r], rank_begin[r+1]).
//
// Vertex kinds:
//   Calc(cost ns)                 computation on the rank's CPU
//   Send(bytes, dst, tag)         a point-to-point send
//   Recv(bytes, src, tag)         a point-to-point receive
// Edges (always between two vertices of the same rank):
//   Requires(after, before)       `after` starts when `before` ends
//   IRequires(after, before)      `after` starts when `before` starts
// Messages pair each Send with exactly one Recv (peer[] below); the message size used by models is
// the Send's byte count (a receive buffer may be larger than what arrives).
//
// Storage is struct-of-arrays with the predecessors in CSR form, about 21 B per vertex plus 4 B per
// edge. Engines evaluate in topological order pulling from predecessors; `topological_order()`
// computes an order for a given rendezvous threshold, because a rendezvous send ends only after
// its receive has started (the "virtual edge" of Appendix B) and that adds dependencies.
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "llamp/error.hpp"

namespace llamp::graph {

enum class VertexKind : uint8_t { Calc = 0, Send = 1, Recv = 2 };

const char* kind_name(VertexKind kind);

// Global vertex ids are 31-bit: the top bit of a predecessor entry marks an IRequires edge.
using VertexId = uint32_t;
inline constexpr uint64_t kMaxVertices = (uint64_t{1} << 31) - 1;
// Edges are indexed by 32-bit offsets (pred_begin), 4 bytes per vertex less than 64-bit ones: at
// about 1.5 edges per vertex that is more than any graph of kMaxVertices needs.
inline constexpr uint64_t kMaxEdges = (uint64_t{1} << 32) - 1;
inline constexpr uint32_t kIRequiresBit = uint32_t{1} << 31;
inline constexpr VertexId kNoVertex = std::numeric_limits<VertexId>::max();
// Wildcards a GOAL receive may carry before matching resolves them (MPI_ANY_SOURCE / MPI_ANY_TAG).
inline constexpr uint32_t kAnySource = std::numeric_limits<uint32_t>::max();
inline constexpr int32_t kAnyTag = -1;
// More ranks than this is treated as malformed input rather than allocated.
inline constexpr uint32_t kMaxRanks = uint32_t{1} << 22;

// Thrown when the dependencies form a cycle; `vertex` lies on the cycle.
class CycleError : public Error {
 public:
  CycleError(const std::string& what, VertexId vertex) : Error(what), vertex(vertex) {}
  VertexId vertex;
};

struct Graph {
  uint32_t num_ranks = 0;
  // rank_begin[r] is the global id of rank r's vertex 0; size num_ranks + 1.
  std::vector<uint64_t> rank_begin;

  // Per vertex, indexed by global id.
  std::vector<VertexKind> kind;
  std::vector<uint64_t> value;  // Calc: cost in ns; Send/Recv: bytes
  std::vector<int32_t> tag;     // Send/Recv: MPI tag (resolved, never a wildcard); Calc: 0. Empty
                                // after release_tags(): messages are paired, analyses need no tags
  std::vector<VertexId> peer;   // Send: its Recv; Recv: its Send; Calc: kNoVertex

  // Predecessors of vertex v: pred[pred_begin[v] .. pred_begin[v+1]), each a global id with
  // kIRequiresBit set for IRequires edges. Size num_vertices + 1 / num_edges.
  std::vector<uint32_t> pred_begin;
  std::vector<uint32_t> pred;

  // Calc vertices that stand for noticing a polled completion late (schedgen, "Polling"), in id
  // order: their value is a cap, resolved by the analyzer at L0 (resolve_poll_lags).
  std::vector<VertexId> poll_lags;

  // Where the graph came from, for error messages ("app.goal", "app.lgr").
  std::string source;
  // Optional: the line each vertex was defined on (GOAL input); empty otherwise.
  std::vector<uint32_t> source_line;

  uint64_t num_vertices() const { return kind.size(); }
  uint64_t num_edges() const { return pred.size(); }
  uint64_t num_messages() const;  // number of Send vertices

  uint32_t rank_of(VertexId v) const;  // O(log P)
  uint64_t local_id(VertexId v) const { return v - rank_begin[rank_of(v)]; }
  VertexId global_id(uint32_t rank, uint64_t local) const { return static_cast<VertexId>(rank_begin[rank] + local); }
  std::span<const uint32_t> preds(VertexId v) const {
    return {pred.data() + pred_begin[v], pred.data() + pred_begin[v + 1]};
  }
  static VertexId pred_vertex(uint32_t entry) { return entry & ~kIRequiresBit; }
  static bool pred_is_irequires(uint32_t entry) { return (entry & kIRequiresBit) != 0; }

  // Message size of a Send or Recv vertex (the Send's byte count).
  uint64_t message_bytes(VertexId v) const { return kind[v] == VertexKind::Send ? value[v] : value[peer[v]]; }

  // Bytes of memory held by the arrays above (for the ≤ 40 B/event budget).
  uint64_t memory_bytes() const;
};

// "rank 1 vertex 5 (recv, app.goal:12)": how errors and reports name a vertex.
std::string describe_vertex(const Graph& g, VertexId v);

// Frees the tags of a loaded graph (4 bytes per vertex) for analyses, which read only the
// pairing; writing the graph (write_graph) needs them and refuses a graph without.
void release_tags(Graph& g);

// Checks the invariants listed above (sizes, ranges, same-rank edges, no self-edges, message
// pairing symmetric and kind-correct). Throws llamp::Error naming the first offending vertex.
// Loaders call it; code that fills a Graph by hand should too.
void validate(const Graph& g);

// A topological order of all vertices for a model in which sends of more than
// `rendezvous_above_bytes` use the rendezvous protocol (UINT64_MAX: all eager). Dependencies:
//   Requires(a, b): a after b, and if b is a rendezvous send, a after b's Recv;
//   IRequires(a, b): a after b;  message: Recv after its Send.
// The order keeps runs of one rank together where it can (cache locality for engines).
// Throws CycleError naming a vertex on a cycle; with rendezvous that is usually a deadlock
// (two ranks both blocked in a large send to each other).
std::vector<VertexId> topological_order(const Graph& g,
                                        uint64_t rendezvous_above_bytes = std::numeric_limits<uint64_t>::max());

}  // namespace llamp::graph
