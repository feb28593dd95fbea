// Binary graph format, version 1 (docs/FORMATS.md, "Binary graph"):
//   header (80 B) | rank table (16 B per rank) | vertex records (16 B) grouped by rank |
//   edge records (16 B) grouped by rank | message records (24 B)
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "graph_spool.hpp"
#include "llamp/graph_io.hpp"

namespace llamp::graph {
namespace {

constexpr uint64_t kHeaderBytes = 80;
constexpr uint64_t kRankRecord = 16, kVertexRecord = 16, kEdgeRecord = 16, kMessageRecord = 24;
constexpr uint64_t kIRequiresFlag = uint64_t{1} << 63;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t num_ranks;
  uint64_t num_vertices, num_edges, num_messages;
  uint64_t rank_table_offset, vertices_offset, edges_offset, messages_offset, file_size;
};
static_assert(sizeof(Header) == kHeaderBytes);

template <typename T>
std::string_view bytes_of(const T& v) {
  return {reinterpret_cast<const char*>(&v), sizeof v};
}

}  // namespace

BinaryGraphWriter::BinaryGraphWriter(std::string path) : path_(std::move(path)) {}
BinaryGraphWriter::~BinaryGraphWriter() = default;

void BinaryGraphWriter::begin(uint32_t num_ranks) {
  if (vertices_) throw Error(path_ + ": begin() called twice");
  if (num_ranks == 0 || num_ranks > kMaxRanks)
    throw Error(fmt::format("{}: number of ranks {} must be between 1 and {}", path_, num_ranks, kMaxRanks));
  num_ranks_ = num_ranks;
  vertices_ = std::make_unique<detail::RankSpool>(num_ranks, path_, 16ull << 20);
  edges_ = std::make_unique<detail::RankSpool>(num_ranks, path_, 16ull << 20);
  messages_ = std::make_unique<detail::RankSpool>(1, path_, 8ull << 20);
  num_vertices_.assign(num_ranks, 0);
  num_edges_.assign(num_ranks, 0);
}

uint64_t BinaryGraphWriter::add_vertex(uint32_t rank, uint32_t kind, uint64_t value, uint32_t peer_rank, int32_t tag) {
  if (!vertices_ || finished_) throw Error(path_ + ": vertex added outside begin()/finish()");
  if (rank >= num_ranks_ || (kind != 0 && peer_rank >= num_ranks_))
    throw Error(fmt::format("{}: rank {} / peer {} out of range ({} ranks)", path_, rank, peer_rank, num_ranks_));
  if (tag < 0) throw Error(fmt::format("{}: negative tag {} on rank {}", path_, tag, rank));
  char rec[kVertexRecord];
  std::memcpy(rec, &value, 8);
  std::memcpy(rec + 8, &tag, 4);
  std::memcpy(rec + 12, &kind, 4);
  vertices_->append(rank, {rec, sizeof rec});
  return num_vertices_[rank]++;
}

uint64_t BinaryGraphWriter::calc(uint32_t rank, uint64_t cost_ns) { return add_vertex(rank, 0, cost_ns, 0, 0); }
uint64_t BinaryGraphWriter::poll_lag(uint32_t rank, uint64_t cap_ns) { return add_vertex(rank, 3, cap_ns, 0, 0); }
uint64_t BinaryGraphWriter::send(uint32_t rank, uint64_t bytes, uint32_t dst, int32_t tag) {
  return add_vertex(rank, 1, bytes, dst, tag);
}
uint64_t BinaryGraphWriter::recv(uint32_t rank, uint64_t bytes, uint32_t src, int32_t tag) {
  return add_vertex(rank, 2, bytes, src, tag);
}

void BinaryGraphWriter::add_edge(uint32_t rank, uint64_t after, uint64_t before, bool irequires) {
  if (!edges_ || finished_ || rank >= num_ranks_ || after >= num_vertices_[rank] || before >= num_vertices_[rank] ||
      after == before)
    throw Error(fmt::format("{}: invalid edge {} → {} on rank {}", path_, before, after, rank));
  uint64_t rec[2] = {after, before | (irequires ? kIRequiresFlag : 0)};
  edges_->append(rank, {reinterpret_cast<const char*>(rec), sizeof rec});
  ++num_edges_[rank];
}

void BinaryGraphWriter::requires_edge(uint32_t rank, uint64_t after, uint64_t before) {
  add_edge(rank, after, before, false);
}
void BinaryGraphWriter::irequires_edge(uint32_t rank, uint64_t after, uint64_t before) {
  add_edge(rank, after, before, true);
}

void BinaryGraphWriter::message(uint32_t src_rank, uint64_t send_id, uint32_t dst_rank, uint64_t recv_id) {
  if (!messages_ || finished_ || src_rank >= num_ranks_ || dst_rank >= num_ranks_ ||
      send_id >= num_vertices_[src_rank] || recv_id >= num_vertices_[dst_rank])
    throw Error(fmt::format("{}: invalid message rank {} vertex {} → rank {} vertex {}", path_, src_rank, send_id,
                            dst_rank, recv_id));
  char rec[kMessageRecord];
  std::memcpy(rec, &src_rank, 4);
  std::memcpy(rec + 4, &dst_rank, 4);
  std::memcpy(rec + 8, &send_id, 8);
  std::memcpy(rec + 16, &recv_id, 8);
  messages_->append(0, {rec, sizeof rec});
  ++num_messages_;
}

void BinaryGraphWriter::finish() {
  if (!vertices_ || finished_) throw Error(path_ + ": finish() without begin() or called twice");
  finished_ = true;
  Header h{};
  std::memcpy(h.magic, kBinaryGraphMagic, 8);
  h.version = kBinaryGraphVersion;
  h.num_ranks = num_ranks_;
  for (uint32_t r = 0; r < num_ranks_; ++r) {
    h.num_vertices += num_vertices_[r];
    h.num_edges += num_edges_[r];
  }
  h.num_messages = num_messages_;
  h.rank_table_offset = kHeaderBytes;
  h.vertices_offset = h.rank_table_offset + kRankRecord * num_ranks_;
  h.edges_offset = h.vertices_offset + kVertexRecord * h.num_vertices;
  h.messages_offset = h.edges_offset + kEdgeRecord * h.num_edges;
  h.file_size = h.messages_offset + kMessageRecord * h.num_messages;

  std::string table;
  table.reserve(kRankRecord * num_ranks_);
  std::vector<uint64_t> voff(num_ranks_), eoff(num_ranks_);
  uint64_t vpos = h.vertices_offset, epos = h.edges_offset;
  for (uint32_t r = 0; r < num_ranks_; ++r) {
    table.append(bytes_of(num_vertices_[r]));
    table.append(bytes_of(num_edges_[r]));
    voff[r] = vpos;
    eoff[r] = epos;
    vpos += kVertexRecord * num_vertices_[r];
    epos += kEdgeRecord * num_edges_[r];
  }
  int fd = detail::open_output(path_);
  try {
    detail::write_all_at(fd, &h, sizeof h, 0, path_);
    detail::write_all_at(fd, table.data(), table.size(), h.rank_table_offset, path_);
    vertices_->write_grouped(fd, voff);
    edges_->write_grouped(fd, eoff);
    messages_->write_grouped(fd, {h.messages_offset});
  } catch (...) {
    ::close(fd);
    throw;
  }
  detail::close_output(fd, path_);
  vertices_.reset();
  edges_.reset();
  messages_.reset();
}

namespace {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path) : path_(path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw Error(fmt::format("{}: not a regular file", path));
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ > 0) {
      void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (m == MAP_FAILED) {
        ::close(fd);
        throw Error(fmt::format("{}: cannot map: {}", path, std::strerror(errno)));
      }
      data_ = static_cast<const char*>(m);
      ::madvise(m, size_, MADV_SEQUENTIAL);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
  }
  const char* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  std::string path_;
  const char* data_ = nullptr;
  uint64_t size_ = 0;
};

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

Graph load_binary(const std::string& path) {
  MappedFile file(path);
  auto fail = [&](uint64_t offset, const std::string& what) -> void {
    throw Error(fmt::format("{}: offset {}: {}", path, offset, what));
  };
  if (file.size() < kHeaderBytes) fail(0, fmt::format("file of {} bytes is too short for a graph header", file.size()));
  const Header h = load<Header>(file.data());
  if (std::memcmp(h.magic, kBinaryGraphMagic, 8) != 0) fail(0, "not an llamp binary graph (bad magic)");
  if (h.version != kBinaryGraphVersion)
    fail(8, fmt::format("unsupported binary graph version {} (this llamp reads version {})", h.version,
                        kBinaryGraphVersion));
  if (h.num_ranks == 0 || h.num_ranks > kMaxRanks) fail(12, fmt::format("invalid number of ranks {}", h.num_ranks));
  if (h.num_vertices > kMaxVertices)
    fail(16, fmt::format("{} vertices exceed the limit of {}", h.num_vertices, kMaxVertices));
  if (h.num_edges > (uint64_t{1} << 40) || h.num_messages > h.num_vertices)
    fail(24, "edge or message count is implausible");
  if (h.num_edges > kMaxEdges) fail(24, fmt::format("{} edges exceed the limit of {}", h.num_edges, kMaxEdges));
  if (h.file_size != file.size()) fail(72, fmt::format("header says {} bytes, file has {}", h.file_size, file.size()));
  // Sections must follow each other exactly (counts are bounded above, so no overflow).
  if (h.rank_table_offset != kHeaderBytes || h.vertices_offset != h.rank_table_offset + kRankRecord * h.num_ranks ||
      h.edges_offset != h.vertices_offset + kVertexRecord * h.num_vertices ||
      h.messages_offset != h.edges_offset + kEdgeRecord * h.num_edges ||
      h.file_size != h.messages_offset + kMessageRecord * h.num_messages)
    fail(40, "section offsets do not match the counts");

  Graph g;
  g.source = path;
  g.num_ranks = h.num_ranks;
  g.rank_begin.assign(h.num_ranks + 1, 0);
  std::vector<uint64_t> rank_edges(h.num_ranks);
  uint64_t edge_sum = 0;
  for (uint32_t r = 0; r < h.num_ranks; ++r) {
    const char* rec = file.data() + h.rank_table_offset + kRankRecord * r;
    uint64_t nv = load<uint64_t>(rec), ne = load<uint64_t>(rec + 8);
    if (nv > h.num_vertices - g.rank_begin[r] || ne > h.num_edges - edge_sum)
      fail(h.rank_table_offset + kRankRecord * r, fmt::format("rank {} counts exceed the totals", r));
    g.rank_begin[r + 1] = g.rank_begin[r] + nv;
    rank_edges[r] = ne;
    edge_sum += ne;
  }
  if (g.rank_begin.back() != h.num_vertices || edge_sum != h.num_edges)
    fail(h.rank_table_offset, "rank table does not add up to the totals");

  const uint64_t n = h.num_vertices;
  g.kind.resize(n);
  g.value.resize(n);
  g.tag.resize(n);
  g.peer.assign(n, kNoVertex);
  for (uint64_t v = 0; v < n; ++v) {
    const uint64_t off = h.vertices_offset + kVertexRecord * v;
    const char* rec = file.data() + off;
    uint32_t kind = load<uint32_t>(rec + 12);
    if (kind > 3) fail(off + 12, fmt::format("vertex {} has unknown kind {}", v, kind));
    if (kind == 3) {  // a calc standing for a polling lag (docs/FORMATS.md)
      g.poll_lags.push_back(static_cast<VertexId>(v));
      kind = 0;
    }
    g.kind[v] = static_cast<VertexKind>(kind);
    g.value[v] = load<uint64_t>(rec);
    g.tag[v] = load<int32_t>(rec + 8);
  }

  g.pred_begin.assign(n + 1, 0);
  g.pred.resize(h.num_edges);
  uint64_t e = 0;
  for (uint32_t r = 0; r < h.num_ranks; ++r) {
    const uint64_t base = g.rank_begin[r], count = g.rank_begin[r + 1] - base;
    for (uint64_t i = 0; i < rank_edges[r]; ++i, ++e) {
      const uint64_t off = h.edges_offset + kEdgeRecord * e;
      uint64_t after = load<uint64_t>(file.data() + off);
      uint64_t before = load<uint64_t>(file.data() + off + 8) & ~kIRequiresFlag;
      if (after >= count || before >= count || after == before)
        fail(off, fmt::format("edge {} → {} of rank {} is invalid (rank has {} vertices)", before, after, r, count));
      ++g.pred_begin[base + after + 1];
    }
  }
  for (uint64_t v = 0; v < n; ++v) g.pred_begin[v + 1] += g.pred_begin[v];
  {
    std::vector<uint32_t> fill(g.pred_begin.begin(), g.pred_begin.end() - 1);
    e = 0;
    for (uint32_t r = 0; r < h.num_ranks; ++r) {
      const uint64_t base = g.rank_begin[r];
      for (uint64_t i = 0; i < rank_edges[r]; ++i, ++e) {
        const char* rec = file.data() + h.edges_offset + kEdgeRecord * e;
        uint64_t after = load<uint64_t>(rec), before_raw = load<uint64_t>(rec + 8);
        uint32_t entry = static_cast<uint32_t>(base + (before_raw & ~kIRequiresFlag));
        if (before_raw & kIRequiresFlag) entry |= kIRequiresBit;
        g.pred[fill[base + after]++] = entry;
      }
    }
  }

  for (uint64_t m = 0; m < h.num_messages; ++m) {
    const uint64_t off = h.messages_offset + kMessageRecord * m;
    const char* rec = file.data() + off;
    uint32_t src = load<uint32_t>(rec), dst = load<uint32_t>(rec + 4);
    uint64_t s = load<uint64_t>(rec + 8), d = load<uint64_t>(rec + 16);
    if (src >= h.num_ranks || dst >= h.num_ranks || s >= g.rank_begin[src + 1] - g.rank_begin[src] ||
        d >= g.rank_begin[dst + 1] - g.rank_begin[dst])
      fail(off, fmt::format("message {} names a vertex out of range", m));
    VertexId sv = g.global_id(src, s), dv = g.global_id(dst, d);
    if (g.kind[sv] != VertexKind::Send || g.kind[dv] != VertexKind::Recv)
      fail(off, fmt::format("message {} does not join a send to a recv", m));
    if (g.peer[sv] != kNoVertex || g.peer[dv] != kNoVertex)
      fail(off, fmt::format("message {} pairs an already paired send or recv", m));
    if (g.tag[sv] != g.tag[dv]) fail(off, fmt::format("message {} joins different tags", m));
    g.peer[sv] = dv;
    g.peer[dv] = sv;
  }
  validate(g);
  return g;
}

}  // namespace llamp::graph
