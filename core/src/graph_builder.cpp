#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "llamp/graph_sink.hpp"

namespace llamp::graph {

GraphSink::~GraphSink() = default;

namespace {
constexpr uint64_t kUnpaired = std::numeric_limits<uint64_t>::max();
}

struct InMemoryGraphBuilder::Impl {
  struct Rank {
    std::vector<VertexKind> kind;
    std::vector<uint64_t> value;
    std::vector<int32_t> tag;
    std::vector<uint32_t> peer_rank;   // Send: dst; Recv: src (may be kAnySource)
    std::vector<uint64_t> peer_local;  // the partner's local id once paired
    std::vector<uint32_t> line;
    std::vector<std::pair<uint64_t, uint64_t>> edges;  // (after, before | irequires flag)
    std::vector<uint64_t> poll_lags;                   // local ids of polling-lag calcs
  };
  static constexpr uint64_t kIRequiresFlag = uint64_t{1} << 63;

  uint32_t num_ranks = 0;
  bool begun = false, finished = false;
  std::vector<Rank> ranks;
  std::string source;
  uint64_t total_vertices = 0;

  std::string where(uint32_t rank, uint64_t local) const {
    const Rank& rk = ranks[rank];
    std::string at;
    if (local < rk.line.size() && rk.line[local] != 0) at = fmt::format(" ({}:{})", source, rk.line[local]);
    return fmt::format("rank {} vertex {}{}", rank, local, at);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("{}: {}", source.empty() ? "graph builder" : source, what));
  }
  Rank& rank_checked(uint32_t rank) {
    if (!begun) fail("begin() must be called before adding vertices");
    if (finished) fail("the graph is already finished");
    if (rank >= num_ranks) fail(fmt::format("rank {} out of range (the graph has {} ranks)", rank, num_ranks));
    return ranks[rank];
  }
  uint64_t add(uint32_t rank, VertexKind kind, uint64_t value, uint32_t peer_rank, int32_t tag) {
    Rank& rk = rank_checked(rank);
    if (++total_vertices > kMaxVertices)
      fail(fmt::format("more than {} vertices: too large for one in-memory graph", kMaxVertices));
    rk.kind.push_back(kind);
    rk.value.push_back(value);
    rk.tag.push_back(tag);
    rk.peer_rank.push_back(peer_rank);
    rk.peer_local.push_back(kUnpaired);
    if (!rk.line.empty()) rk.line.push_back(0);
    return rk.kind.size() - 1;
  }
  void edge(uint32_t rank, uint64_t after, uint64_t before, bool irequires) {
    Rank& rk = rank_checked(rank);
    uint64_t n = rk.kind.size();
    if (after >= n || before >= n)
      fail(fmt::format("edge on rank {} refers to vertex {} which does not exist yet", rank,
                       after >= n ? after : before));
    if (after == before) fail(where(rank, after) + " cannot depend on itself");
    rk.edges.emplace_back(after, before | (irequires ? kIRequiresFlag : 0));
  }
};

InMemoryGraphBuilder::InMemoryGraphBuilder() : impl_(std::make_unique<Impl>()) {}
InMemoryGraphBuilder::~InMemoryGraphBuilder() = default;

void InMemoryGraphBuilder::begin(uint32_t num_ranks) {
  if (impl_->begun) impl_->fail("begin() called twice");
  if (num_ranks == 0 || num_ranks > kMaxRanks)
    impl_->fail(fmt::format("number of ranks {} must be between 1 and {}", num_ranks, kMaxRanks));
  impl_->num_ranks = num_ranks;
  impl_->ranks.resize(num_ranks);
  impl_->begun = true;
}

uint64_t InMemoryGraphBuilder::calc(uint32_t rank, uint64_t cost_ns) {
  return impl_->add(rank, VertexKind::Calc, cost_ns, kAnySource, 0);
}

uint64_t InMemoryGraphBuilder::poll_lag(uint32_t rank, uint64_t cap_ns) {
  const uint64_t id = calc(rank, cap_ns);
  impl_->ranks[rank].poll_lags.push_back(id);
  return id;
}

uint64_t InMemoryGraphBuilder::send(uint32_t rank, uint64_t bytes, uint32_t dst, int32_t tag) {
  if (impl_->begun && dst >= impl_->num_ranks)
    impl_->fail(fmt::format("send on rank {} to rank {} out of range", rank, dst));
  if (tag < 0) impl_->fail(fmt::format("send on rank {} has negative tag {}", rank, tag));
  return impl_->add(rank, VertexKind::Send, bytes, dst, tag);
}

uint64_t InMemoryGraphBuilder::recv(uint32_t rank, uint64_t bytes, uint32_t src, int32_t tag) {
  if (impl_->begun && src >= impl_->num_ranks)
    impl_->fail(fmt::format("recv on rank {} from rank {} out of range", rank, src));
  if (tag < 0) impl_->fail(fmt::format("recv on rank {} has negative tag {}", rank, tag));
  return impl_->add(rank, VertexKind::Recv, bytes, src, tag);
}

uint64_t InMemoryGraphBuilder::recv_wildcard(uint32_t rank, uint64_t bytes, uint32_t src, int32_t tag) {
  if (impl_->begun && src != kAnySource && src >= impl_->num_ranks)
    impl_->fail(fmt::format("recv on rank {} from rank {} out of range", rank, src));
  if (tag < kAnyTag) impl_->fail(fmt::format("recv on rank {} has invalid tag {}", rank, tag));
  return impl_->add(rank, VertexKind::Recv, bytes, src, tag);
}

void InMemoryGraphBuilder::requires_edge(uint32_t rank, uint64_t after, uint64_t before) {
  impl_->edge(rank, after, before, false);
}
void InMemoryGraphBuilder::irequires_edge(uint32_t rank, uint64_t after, uint64_t before) {
  impl_->edge(rank, after, before, true);
}

void InMemoryGraphBuilder::message(uint32_t src_rank, uint64_t send_id, uint32_t dst_rank, uint64_t recv_id) {
  auto& I = *impl_;
  Impl::Rank& s = I.rank_checked(src_rank);
  Impl::Rank& d = I.rank_checked(dst_rank);
  if (send_id >= s.kind.size() || s.kind[send_id] != VertexKind::Send)
    I.fail(fmt::format("message from rank {} vertex {}: not a send", src_rank, send_id));
  if (recv_id >= d.kind.size() || d.kind[recv_id] != VertexKind::Recv)
    I.fail(fmt::format("message to rank {} vertex {}: not a recv", dst_rank, recv_id));
  if (s.peer_local[send_id] != kUnpaired) I.fail(I.where(src_rank, send_id) + ": send paired twice");
  if (d.peer_local[recv_id] != kUnpaired) I.fail(I.where(dst_rank, recv_id) + ": recv paired twice");
  if (s.peer_rank[send_id] != dst_rank)
    I.fail(fmt::format("{}: send to rank {} paired with a recv on rank {}", I.where(src_rank, send_id),
                       s.peer_rank[send_id], dst_rank));
  if (d.peer_rank[recv_id] != src_rank && d.peer_rank[recv_id] != kAnySource)
    I.fail(fmt::format("{}: recv from rank {} paired with a send on rank {}", I.where(dst_rank, recv_id),
                       d.peer_rank[recv_id], src_rank));
  if (d.tag[recv_id] != kAnyTag && d.tag[recv_id] != s.tag[send_id])
    I.fail(fmt::format("{}: recv tag {} paired with send tag {}", I.where(dst_rank, recv_id), d.tag[recv_id],
                       s.tag[send_id]));
  s.peer_local[send_id] = recv_id;
  d.peer_local[recv_id] = send_id;
  d.peer_rank[recv_id] = src_rank;
  d.tag[recv_id] = s.tag[send_id];
}

void InMemoryGraphBuilder::set_source(std::string source) { impl_->source = std::move(source); }

void InMemoryGraphBuilder::set_line_of_last(uint32_t rank, uint32_t line) {
  Impl::Rank& rk = impl_->rank_checked(rank);
  if (rk.kind.empty()) return;
  if (rk.line.empty()) rk.line.assign(rk.kind.size(), 0);
  rk.line.back() = line;
}

void InMemoryGraphBuilder::match_fifo() {
  auto& I = *impl_;
  // Unpaired sends per (dst, src, tag) stream, in the sender's local order.
  using Key = std::tuple<uint32_t, uint32_t, int32_t>;
  std::map<Key, std::vector<uint64_t>> streams;
  for (uint32_t src = 0; src < I.num_ranks; ++src) {
    const Impl::Rank& rk = I.ranks[src];
    for (uint64_t v = 0; v < rk.kind.size(); ++v)
      if (rk.kind[v] == VertexKind::Send && rk.peer_local[v] == kUnpaired)
        streams[{rk.peer_rank[v], src, rk.tag[v]}].push_back(v);
  }
  std::map<Key, size_t> head;  // next unpaired position per stream
  for (uint32_t dst = 0; dst < I.num_ranks; ++dst) {
    Impl::Rank& rk = I.ranks[dst];
    for (uint64_t v = 0; v < rk.kind.size(); ++v) {
      if (rk.kind[v] != VertexKind::Recv || rk.peer_local[v] != kUnpaired) continue;
      uint32_t want_src = rk.peer_rank[v];
      int32_t want_tag = rk.tag[v];
      // Candidates: streams to dst, restricted by source and tag unless they are wildcards.
      auto lo = streams.lower_bound({dst, want_src == kAnySource ? 0 : want_src, std::numeric_limits<int32_t>::min()});
      const Key* best = nullptr;
      uint64_t best_local = 0;
      for (auto it = lo; it != streams.end(); ++it) {
        auto [sdst, ssrc, stag] = it->first;
        if (sdst != dst || (want_src != kAnySource && ssrc != want_src)) break;
        if (best && ssrc != std::get<1>(*best)) break;  // lowest source rank with a candidate wins
        if (want_tag != kAnyTag && stag != want_tag) continue;
        size_t h = head[it->first];
        if (h >= it->second.size()) continue;
        if (!best || it->second[h] < best_local) {
          best = &it->first;
          best_local = it->second[h];
        }
      }
      if (!best)
        I.fail(fmt::format("{}: recv from {} tag {} has no matching send", I.where(dst, v),
                           want_src == kAnySource ? std::string("any rank") : std::to_string(want_src),
                           want_tag == kAnyTag ? std::string("any") : std::to_string(want_tag)));
      ++head[*best];
      message(std::get<1>(*best), best_local, dst, v);
    }
  }
}

void InMemoryGraphBuilder::finish() {
  auto& I = *impl_;
  if (!I.begun) I.fail("finish() without begin()");
  if (I.finished) I.fail("finish() called twice");
  match_fifo();
  for (uint32_t r = 0; r < I.num_ranks; ++r) {
    const Impl::Rank& rk = I.ranks[r];
    for (uint64_t v = 0; v < rk.kind.size(); ++v)
      if (rk.kind[v] == VertexKind::Send && rk.peer_local[v] == kUnpaired)
        I.fail(fmt::format("{}: send to rank {} tag {} is never received", I.where(r, v), rk.peer_rank[v], rk.tag[v]));
  }
  I.finished = true;
}

Graph InMemoryGraphBuilder::take() {
  auto& I = *impl_;
  if (!I.finished) I.fail("take() before finish()");
  Graph g;
  g.num_ranks = I.num_ranks;
  g.source = I.source;
  g.rank_begin.resize(I.num_ranks + 1, 0);
  uint64_t edges = 0;
  bool any_lines = false;
  for (uint32_t r = 0; r < I.num_ranks; ++r) {
    g.rank_begin[r + 1] = g.rank_begin[r] + I.ranks[r].kind.size();
    edges += I.ranks[r].edges.size();
    any_lines = any_lines || !I.ranks[r].line.empty();
  }
  const uint64_t n = g.rank_begin.back();
  if (edges > kMaxEdges) I.fail(fmt::format("{} edges exceed the limit of {}", edges, kMaxEdges));
  g.kind.reserve(n);
  g.value.reserve(n);
  g.tag.reserve(n);
  g.peer.reserve(n);
  if (any_lines) g.source_line.reserve(n);
  g.pred_begin.assign(n + 1, 0);
  g.pred.resize(edges);
  for (uint32_t r = 0; r < I.num_ranks; ++r) {
    Impl::Rank& rk = I.ranks[r];
    const uint64_t base = g.rank_begin[r];
    for (uint64_t v = 0; v < rk.kind.size(); ++v) {
      g.kind.push_back(rk.kind[v]);
      g.value.push_back(rk.value[v]);
      g.tag.push_back(rk.kind[v] == VertexKind::Calc ? 0 : rk.tag[v]);
      g.peer.push_back(rk.kind[v] == VertexKind::Calc
                           ? kNoVertex
                           : static_cast<VertexId>(g.rank_begin[rk.peer_rank[v]] + rk.peer_local[v]));
      if (any_lines) g.source_line.push_back(rk.line.empty() ? 0 : rk.line[v]);
    }
    for (auto& [after, before] : rk.edges) ++g.pred_begin[base + after + 1];
    for (uint64_t v : rk.poll_lags) g.poll_lags.push_back(static_cast<VertexId>(base + v));
    // Free rank data as we go so peak memory stays near one copy of the graph.
    std::vector<VertexKind>().swap(rk.kind);
    std::vector<uint64_t>().swap(rk.value);
    std::vector<int32_t>().swap(rk.tag);
    std::vector<uint32_t>().swap(rk.line);
  }
  for (uint64_t v = 0; v < n; ++v) g.pred_begin[v + 1] += g.pred_begin[v];
  std::vector<uint32_t> fill(g.pred_begin.begin(), g.pred_begin.end() - 1);
  for (uint32_t r = 0; r < I.num_ranks; ++r) {
    const uint64_t base = g.rank_begin[r];
    for (auto& [after, before] : I.ranks[r].edges) {
      bool irequires = (before & Impl::kIRequiresFlag) != 0;
      uint64_t b = before & ~Impl::kIRequiresFlag;
      g.pred[fill[base + after]++] = static_cast<uint32_t>(base + b) | (irequires ? kIRequiresBit : 0);
    }
  }
  I.ranks.clear();
  validate(g);
  return g;
}

}  // namespace llamp::graph
