#include "graph_spool.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "llamp/error.hpp"

namespace llamp::graph::detail {

void write_all_at(int fd, const void* data, uint64_t size, uint64_t offset, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t w = ::pwrite(fd, p, size, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("{}: write failed at offset {}: {}", path, offset, std::strerror(errno)));
    }
    p += w;
    size -= static_cast<uint64_t>(w);
    offset += static_cast<uint64_t>(w);
  }
}

int open_output(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  return fd;
}

void close_output(int fd, const std::string& path) {
  if (::close(fd) != 0) throw Error(fmt::format("{}: close failed: {}", path, std::strerror(errno)));
}

RankSpool::RankSpool(uint32_t num_ranks, const std::string& near_path, uint64_t budget_bytes)
    : buffer_(num_ranks), total_(num_ranks, 0), budget_(budget_bytes) {
  auto dir = std::filesystem::path(near_path).parent_path();
  if (dir.empty()) dir = ".";
  tmp_name_ = (dir / ".llamp-graph-spool-XXXXXX").string();
  tmp_fd_ = ::mkstemp(tmp_name_.data());
  if (tmp_fd_ < 0)
    throw Error(fmt::format("{}: cannot create a temporary spool file in {}: {}", near_path, dir.string(),
                            std::strerror(errno)));
  ::unlink(tmp_name_.c_str());  // nothing is left behind, whatever happens
}

RankSpool::~RankSpool() {
  if (tmp_fd_ >= 0) ::close(tmp_fd_);
}

uint64_t RankSpool::total_bytes() const {
  uint64_t t = 0;
  for (uint64_t b : total_) t += b;
  return t;
}

void RankSpool::append(uint32_t rank, std::string_view bytes) {
  buffer_[rank].append(bytes);
  total_[rank] += bytes.size();
  buffered_ += bytes.size();
  if (buffered_ > budget_) spill();
}

void RankSpool::spill() {
  std::string chunk;
  for (uint32_t r = 0; r < buffer_.size(); ++r) {
    std::string& b = buffer_[r];
    if (b.empty()) continue;
    uint64_t header[2] = {r, b.size()};
    chunk.assign(reinterpret_cast<const char*>(header), sizeof header);
    write_all_at(tmp_fd_, chunk.data(), chunk.size(), tmp_size_, tmp_name_);
    tmp_size_ += chunk.size();
    write_all_at(tmp_fd_, b.data(), b.size(), tmp_size_, tmp_name_);
    tmp_size_ += b.size();
    std::string().swap(b);
  }
  buffered_ = 0;
}

void RankSpool::write_grouped(int fd, const std::vector<uint64_t>& offset) {
  std::vector<uint64_t> cursor(offset);
  std::string data;
  for (uint64_t pos = 0; pos < tmp_size_;) {
    uint64_t header[2];
    if (::pread(tmp_fd_, header, sizeof header, static_cast<off_t>(pos)) != sizeof header)
      throw Error(fmt::format("{}: spool file read failed", tmp_name_));
    pos += sizeof header;
    data.resize(header[1]);
    for (uint64_t got = 0; got < header[1];) {
      ssize_t n = ::pread(tmp_fd_, data.data() + got, header[1] - got, static_cast<off_t>(pos + got));
      if (n <= 0) throw Error(fmt::format("{}: spool file read failed", tmp_name_));
      got += static_cast<uint64_t>(n);
    }
    pos += header[1];
    write_all_at(fd, data.data(), data.size(), cursor[header[0]], "graph output");
    cursor[header[0]] += data.size();
  }
  for (uint32_t r = 0; r < buffer_.size(); ++r) {
    write_all_at(fd, buffer_[r].data(), buffer_[r].size(), cursor[r], "graph output");
    std::string().swap(buffer_[r]);
  }
  ::close(tmp_fd_);
  tmp_fd_ = -1;
}

}  // namespace llamp::graph::detail
