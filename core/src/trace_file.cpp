#include "llamp/trace_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstring>

#include "llamp/error.hpp"
#include "llamp/trace_codec.hpp"

namespace llamp::trace {

std::string rank_file_name(uint32_t rank) { return fmt::format("rank-{:05d}.llt", rank); }

// ---------------------------------------------------------------- writing

TraceFileWriter::TraceFileWriter(const std::string& path, uint32_t rank, uint32_t world_size, int zstd_level)
    : path_(path), level_(zstd_level) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(fmt::format("{}: cannot create trace file: {}", path, std::strerror(errno)));
  cctx_ = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(cctx_), ZSTD_c_compressionLevel, level_);
  // The frame checksum lets the reader tell a damaged block from a good one.
  ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(cctx_), ZSTD_c_checksumFlag, 1);
  FileHeader h{};
  std::memcpy(h.magic, kFileMagic, sizeof h.magic);
  h.version = kFormatVersion;
  h.header_bytes = sizeof(FileHeader);
  h.rank = rank;
  h.world_size = world_size;
  write_all(&h, sizeof h);
}

TraceFileWriter::~TraceFileWriter() {
  if (fd_ >= 0) ::close(fd_);  // without the end block: readers will call it truncated
  ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_));
}

void TraceFileWriter::write_all(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("{}: write failed: {}", path_, std::strerror(errno)));
    }
    p += w;
    n -= static_cast<size_t>(w);
    file_bytes_ += static_cast<uint64_t>(w);
  }
}

void TraceFileWriter::write_block(uint32_t thread, uint64_t base_ns, uint32_t event_count,
                                  std::span<const uint8_t> raw) {
  if (raw.size() > kMaxBlockRawBytes) throw Error(fmt::format("{}: block too large", path_));
  compressed_.resize(ZSTD_compressBound(raw.size()) + sizeof(BlockHeader));
  size_t n = ZSTD_compress2(static_cast<ZSTD_CCtx*>(cctx_), compressed_.data() + sizeof(BlockHeader),
                            compressed_.size() - sizeof(BlockHeader), raw.data(), raw.size());
  if (ZSTD_isError(n)) throw Error(fmt::format("{}: zstd: {}", path_, ZSTD_getErrorName(n)));
  BlockHeader h{kBlockMagic, thread, event_count, static_cast<uint32_t>(raw.size()), static_cast<uint32_t>(n),
                0,           base_ns};
  std::memcpy(compressed_.data(), &h, sizeof h);
  // One write per block: a crash leaves whole blocks or a detectably short tail.
  write_all(compressed_.data(), sizeof h + n);
  raw_bytes_ += raw.size();
}

void TraceFileWriter::close() {
  if (fd_ < 0) return;
  BlockHeader end{kBlockMagic, 0, 0, 0, 0, kBlockFlagEnd, 0};
  write_all(&end, sizeof end);
  ::close(fd_);
  fd_ = -1;
}

EventFileWriter::EventFileWriter(const std::string& path, uint32_t rank, uint32_t world_size, size_t block_raw_bytes)
    : file_(path, rank, world_size), block_raw_bytes_(block_raw_bytes), raw_(block_raw_bytes + 4096) {}

void EventFileWriter::add(const Event& e) {
  size_t need = max_encoded_size(e);
  if (count_ > 0 && (used_ + need > block_raw_bytes_ || e.thread != thread_)) flush();
  if (used_ + need > raw_.size()) raw_.resize(used_ + need);
  if (count_ == 0) {
    base_ns_ = e.t_start_ns;
    state_ = BlockState{base_ns_, 0};
    thread_ = e.thread;
  }
  uint8_t* end = encode_event(raw_.data() + used_, e, state_);
  used_ = static_cast<size_t>(end - raw_.data());
  ++count_;
}

void EventFileWriter::flush() {
  if (count_ == 0) return;
  file_.write_block(thread_, base_ns_, count_, {raw_.data(), used_});
  used_ = 0;
  count_ = 0;
}

void EventFileWriter::close() {
  flush();
  file_.close();
}

// ---------------------------------------------------------------- reading

struct RankTraceReader::ThreadCursor {
  uint32_t thread;
  std::vector<size_t> block_indices;  // into blocks_, in file order
  size_t next_block = 0;
  std::vector<Event> events;
  uint32_t count = 0;
  uint32_t pos = 0;
  bool exhausted() const { return pos >= count; }
};

RankTraceReader::RankTraceReader(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw Error(fmt::format("{}: cannot open trace file: {}", path, std::strerror(errno)));
  struct stat st {};
  fstat(fileno(file_), &st);
  file_bytes_ = static_cast<uint64_t>(st.st_size);
  if (std::fread(&header_, sizeof header_, 1, file_) != 1)
    throw Error(fmt::format("{}: offset 0: file shorter than the {}-byte trace header", path, sizeof header_));
  if (std::memcmp(header_.magic, kFileMagic, sizeof kFileMagic) != 0)
    throw Error(fmt::format("{}: offset 0: not an llamp trace file (bad magic)", path));
  if (header_.version != kFormatVersion)
    throw Error(fmt::format("{}: offset 8: trace format version {} is not supported (this llamp reads {})", path,
                            header_.version, kFormatVersion));
  if (header_.header_bytes < sizeof header_ || header_.rank >= header_.world_size)
    throw Error(fmt::format("{}: offset 10: inconsistent header (header size {}, rank {}, world size {})", path,
                            header_.header_bytes, header_.rank, header_.world_size));

  // Index the blocks by reading their headers only.
  uint64_t offset = header_.header_bytes;
  bool ended = false;
  while (offset < file_bytes_) {
    BlockHeader b{};
    if (file_bytes_ - offset < sizeof b) {
      damage_ = FileDamage{offset, "incomplete block header at the end of the file"};
      break;
    }
    std::fseek(file_, static_cast<long>(offset), SEEK_SET);
    if (std::fread(&b, sizeof b, 1, file_) != 1) {
      damage_ = FileDamage{offset, "read error"};
      break;
    }
    if (b.magic != kBlockMagic) {
      damage_ = FileDamage{offset, "bad block magic (corrupt data)"};
      break;
    }
    if (b.flags & kBlockFlagEnd) {
      ended = true;
      if (offset + sizeof b != file_bytes_)
        damage_ = FileDamage{offset + sizeof b, "unexpected bytes after the end block"};
      break;
    }
    if (b.raw_bytes > kMaxBlockRawBytes || b.compressed_bytes > ZSTD_compressBound(b.raw_bytes) ||
        b.event_count > b.raw_bytes) {
      damage_ = FileDamage{offset, "implausible block sizes (corrupt header)"};
      break;
    }
    if (file_bytes_ - offset - sizeof b < b.compressed_bytes) {
      damage_ = FileDamage{offset, "block cut off by the end of the file"};
      break;
    }
    blocks_.push_back({offset, b});
    offset += sizeof b + b.compressed_bytes;
  }
  if (!ended && !damage_) damage_ = FileDamage{offset, "no end block (the rank did not finish tracing)"};
  dctx_ = ZSTD_createDCtx();
  rewind();
}

RankTraceReader::~RankTraceReader() {
  if (file_) std::fclose(file_);
  ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(dctx_));
}

RankTraceReader::RankTraceReader(RankTraceReader&& o) noexcept
    : path_(std::move(o.path_)),
      file_(o.file_),
      header_(o.header_),
      file_bytes_(o.file_bytes_),
      blocks_(std::move(o.blocks_)),
      damage_(std::move(o.damage_)),
      cursors_(std::move(o.cursors_)),
      dctx_(o.dctx_),
      compressed_(std::move(o.compressed_)),
      raw_(std::move(o.raw_)) {
  o.file_ = nullptr;
  o.dctx_ = nullptr;
}

uint64_t RankTraceReader::event_count() const {
  uint64_t n = 0;
  for (const auto& b : blocks_) n += b.header.event_count;
  return n;
}

uint64_t RankTraceReader::raw_bytes() const {
  uint64_t n = 0;
  for (const auto& b : blocks_) n += b.header.raw_bytes;
  return n;
}

void RankTraceReader::rewind() {
  cursors_.clear();
  for (size_t i = 0; i < blocks_.size(); ++i) {
    uint32_t t = blocks_[i].header.thread;
    ThreadCursor* c = nullptr;
    for (auto& existing : cursors_)
      if (existing->thread == t) c = existing.get();
    if (!c) {
      cursors_.push_back(std::make_unique<ThreadCursor>());
      c = cursors_.back().get();
      c->thread = t;
    }
    c->block_indices.push_back(i);
  }
}

bool RankTraceReader::load_next_block(ThreadCursor& c) {
  while (c.next_block < c.block_indices.size()) {
    const BlockInfo& b = blocks_[c.block_indices[c.next_block++]];
    const std::string where = fmt::format("{}: block at offset {}", path_, b.offset);
    compressed_.resize(b.header.compressed_bytes);
    std::fseek(file_, static_cast<long>(b.offset + sizeof(BlockHeader)), SEEK_SET);
    if (std::fread(compressed_.data(), 1, compressed_.size(), file_) != compressed_.size())
      throw Error(where + ": read error");
    raw_.resize(b.header.raw_bytes);
    size_t n = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(dctx_), raw_.data(), raw_.size(), compressed_.data(),
                                   compressed_.size());
    if (ZSTD_isError(n)) throw Error(fmt::format("{}: cannot decompress: {}", where, ZSTD_getErrorName(n)));
    if (n != b.header.raw_bytes)
      throw Error(fmt::format("{}: decompressed {} bytes, header says {}", where, n, b.header.raw_bytes));
    decode_events({raw_.data(), n}, b.header.event_count, b.header.base_ns, b.header.thread, c.events, where);
    c.count = b.header.event_count;
    c.pos = 0;
    if (c.count > 0) return true;
  }
  return false;
}

const Event* RankTraceReader::next() {
  ThreadCursor* best = nullptr;
  for (auto& c : cursors_) {
    if (c->exhausted() && !load_next_block(*c)) continue;
    if (!best || c->events[c->pos].t_start_ns < best->events[best->pos].t_start_ns) best = c.get();
  }
  if (!best) return nullptr;
  return &best->events[best->pos++];
}

}  // namespace llamp::trace
