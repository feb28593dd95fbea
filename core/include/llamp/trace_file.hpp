#pragma once
// Per-rank trace files: a fixed header, then independently decodable
// zstd-compressed blocks, then an end block when the rank finished cleanly.
// A file cut off by a crash is readable up to its last complete block.
// Byte layout: docs/FORMATS.md ("Trace format").
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "llamp/trace_codec.hpp"
#include "llamp/trace_event.hpp"

namespace llamp::trace {

inline constexpr char kFileMagic[8] = {'L', 'L', 'A', 'M', 'P', 'T', 'R', 'C'};
inline constexpr uint16_t kFormatVersion = 1;
inline constexpr uint32_t kBlockMagic = 0x4b424c4c;  // "LLBK" little-endian
inline constexpr uint32_t kBlockFlagEnd = 1;         // end-of-trace marker, no payload
inline constexpr uint32_t kMaxBlockRawBytes = 64u << 20;

#pragma pack(push, 1)
struct FileHeader {
  char magic[8];
  uint16_t version;
  uint16_t header_bytes;  // sizeof(FileHeader); lets later versions grow it
  uint32_t rank;
  uint32_t world_size;
  uint32_t flags;
  uint64_t reserved;
};
struct BlockHeader {
  uint32_t magic;
  uint32_t thread;
  uint32_t event_count;
  uint32_t raw_bytes;
  uint32_t compressed_bytes;
  uint32_t flags;
  uint64_t base_ns;  // reference time for the first event's gap
};
#pragma pack(pop)
static_assert(sizeof(FileHeader) == 32 && sizeof(BlockHeader) == 32);

// Writes one rank's file. Not thread-safe: the tracer calls it from its writer
// thread only.
class TraceFileWriter {
 public:
  TraceFileWriter(const std::string& path, uint32_t rank, uint32_t world_size, int zstd_level = 3);
  ~TraceFileWriter();
  TraceFileWriter(const TraceFileWriter&) = delete;
  TraceFileWriter& operator=(const TraceFileWriter&) = delete;

  // Compresses raw (the encoding of event_count events) and appends it as one block.
  void write_block(uint32_t thread, uint64_t base_ns, uint32_t event_count, std::span<const uint8_t> raw);
  // Writes the end marker and closes the file.
  void close();

  uint64_t raw_bytes() const { return raw_bytes_; }
  uint64_t file_bytes() const { return file_bytes_; }

 private:
  void write_all(const void* data, size_t n);
  std::string path_;
  int fd_ = -1;
  void* cctx_ = nullptr;
  int level_;
  std::vector<uint8_t> compressed_;
  uint64_t raw_bytes_ = 0;
  uint64_t file_bytes_ = 0;
};

// Convenience for tests and generators: encodes events of one thread into
// blocks of about block_raw_bytes and writes them.
class EventFileWriter {
 public:
  EventFileWriter(const std::string& path, uint32_t rank, uint32_t world_size, size_t block_raw_bytes = 256 << 10);
  void add(const Event& e);
  void close();

 private:
  void flush();
  TraceFileWriter file_;
  size_t block_raw_bytes_;
  std::vector<uint8_t> raw_;
  size_t used_ = 0;
  uint32_t count_ = 0;
  uint64_t base_ns_ = 0;
  BlockState state_;
  uint32_t thread_ = 0;
  bool have_thread_ = false;
};

struct BlockInfo {
  uint64_t offset;  // of the block header
  BlockHeader header;
};

// What is wrong with a file, if anything: a cut-off tail or damage from some offset on.
struct FileDamage {
  uint64_t offset;
  std::string reason;
};

// Reads one rank's file: events of all threads merged by start time.
class RankTraceReader {
 public:
  explicit RankTraceReader(const std::string& path);
  ~RankTraceReader();
  RankTraceReader(RankTraceReader&&) noexcept;

  uint32_t rank() const { return header_.rank; }
  uint32_t world_size() const { return header_.world_size; }
  const std::string& path() const { return path_; }
  // True when the file has no end block (the rank crashed, was killed, or the file was cut).
  bool truncated() const { return damage_.has_value(); }
  const std::optional<FileDamage>& damage() const { return damage_; }
  const std::vector<BlockInfo>& blocks() const { return blocks_; }
  uint64_t event_count() const;  // events in complete blocks
  uint64_t file_bytes() const { return file_bytes_; }
  uint64_t raw_bytes() const;  // sum of uncompressed block sizes

  // Next event in start-time order (threads merged); nullptr at the end. The
  // pointer is valid until the next call. Throws llamp::Error with file and
  // offset if a block's payload is corrupt.
  const Event* next();
  // Restart from the first event.
  void rewind();

 private:
  struct ThreadCursor;
  bool load_next_block(ThreadCursor& c);
  std::string path_;
  std::FILE* file_ = nullptr;
  FileHeader header_{};
  uint64_t file_bytes_ = 0;
  std::vector<BlockInfo> blocks_;
  std::optional<FileDamage> damage_;
  std::vector<std::unique_ptr<ThreadCursor>> cursors_;
  void* dctx_ = nullptr;
  std::vector<uint8_t> compressed_;
  std::vector<uint8_t> raw_;
};

// File name of a rank inside a trace directory: "rank-00042.llt".
std::string rank_file_name(uint32_t rank);

}  // namespace llamp::trace
