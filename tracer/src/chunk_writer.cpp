#include "chunk_writer.hpp"

#include <cstdio>

namespace llamp::tracer {

ChunkWriter::ChunkWriter(std::unique_ptr<trace::TraceFileWriter> file, uint32_t rank, size_t chunk_bytes,
                         size_t max_chunks)
    : file_(std::move(file)), rank_(rank), chunk_bytes_(chunk_bytes), max_chunks_(max_chunks) {
  thread_ = std::thread([this] { run(); });
}

ChunkWriter::~ChunkWriter() { close(false); }

void ChunkWriter::submit(Chunk* full) {
  if (!full) return;
  std::lock_guard lock(mutex_);
  if (closed_) {
    if (full->oversized) delete full;
    return;
  }
  if (full->count > 0 || full->oversized) {
    queue_.push_back(full);
    work_ready_.notify_one();
  } else {
    free_.push_back(full);
  }
}

Chunk* ChunkWriter::exchange(Chunk* full) {
  submit(full);
  std::unique_lock lock(mutex_);
  if (closed_) return nullptr;
  if (free_.empty() && all_.size() < max_chunks_) {
    auto c = std::make_unique<Chunk>();
    c->data.reset(new uint8_t[chunk_bytes_]);
    c->capacity = chunk_bytes_;
    all_.push_back(std::move(c));
    free_.push_back(all_.back().get());
  }
  if (free_.empty()) {
    ++waits_;
    chunk_free_.wait(lock, [this] { return !free_.empty() || closed_; });
    if (closed_) return nullptr;
  }
  Chunk* c = free_.back();
  free_.pop_back();
  c->used = 0;
  c->count = 0;
  return c;
}

Chunk* ChunkWriter::oversized(size_t bytes) {
  auto* c = new Chunk();
  c->data.reset(new uint8_t[bytes]);
  c->capacity = bytes;
  c->oversized = true;
  return c;
}

void ChunkWriter::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) return;
    Chunk* c = queue_.front();
    queue_.pop_front();
    lock.unlock();
    if (!write_failed_ && c->count > 0) {
      try {
        file_->write_block(c->thread, c->base_ns, c->count, {c->data.get(), c->used});
      } catch (const std::exception& e) {
        // Keep the application running; this rank's trace ends at its last good block.
        std::fprintf(stderr, "llamptrace: rank %u: %s; the trace of this rank stops here\n", rank_, e.what());
        write_failed_ = true;
      }
    }
    lock.lock();
    if (c->oversized) {
      delete c;
    } else {
      free_.push_back(c);
      chunk_free_.notify_one();
    }
  }
}

void ChunkWriter::close(bool complete) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    stopping_ = true;
    work_ready_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    chunk_free_.notify_all();
  }
  if (complete && !write_failed_) {
    try {
      file_->close();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "llamptrace: rank %u: %s\n", rank_, e.what());
    }
  }
}

}  // namespace llamp::tracer
