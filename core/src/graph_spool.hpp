#pragma once
// Private to the graph writers: collects byte streams for many ranks in bounded memory and writes
// them grouped by rank. Producers may interleave ranks arbitrarily; when the buffers exceed the
// budget they go, as (rank, length, bytes) chunks, to an unlinked temporary file next to the output.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llamp::graph::detail {

class RankSpool {
 public:
  // `near_path`: the output file; the temporary file is created in its directory.
  RankSpool(uint32_t num_ranks, const std::string& near_path, uint64_t budget_bytes = 32ull << 20);
  ~RankSpool();
  RankSpool(const RankSpool&) = delete;
  RankSpool& operator=(const RankSpool&) = delete;

  void append(uint32_t rank, std::string_view bytes);
  uint64_t rank_bytes(uint32_t rank) const { return total_[rank]; }
  uint64_t total_bytes() const;

  // Writes every rank's bytes, in append order, to fd at offset[rank] (offsets are chosen by the
  // caller, usually consecutive). Ends the spool.
  void write_grouped(int fd, const std::vector<uint64_t>& offset);

 private:
  void spill();
  std::vector<std::string> buffer_;
  std::vector<uint64_t> total_;
  uint64_t buffered_ = 0, budget_;
  int tmp_fd_ = -1;
  std::string tmp_name_;
  uint64_t tmp_size_ = 0;
};

// write(2)/pwrite(2) loops that throw llamp::Error naming `path` on failure.
void write_all_at(int fd, const void* data, uint64_t size, uint64_t offset, const std::string& path);
int open_output(const std::string& path);
void close_output(int fd, const std::string& path);

}  // namespace llamp::graph::detail
