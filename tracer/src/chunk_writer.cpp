#include "chunk_writer.hpp"

#include <cstdio>
#include <cstring>
#include <ctime>

namespace llamp::tracer {

namespace {
uint64_t thread_cpu_ns() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}
}  // namespace

ChunkWriter::ChunkWriter(std::unique_ptr<trace::TraceFileWriter> file, uint32_t rank, size_t chunk_bytes,
                         size_t max_chunks, Flush flush)
    : file_(std::move(file)), rank_(rank), chunk_bytes_(chunk_bytes), max_chunks_(max_chunks), flush_(flush) {
  if (flush_ == Flush::kWhenFull) {
    // Chunks wait in memory now, so a run uses up to the whole buffer; allocating and touching it
    // here, inside MPI_Init, keeps its page faults out of the application's run.
    for (size_t i = 0; i < max_chunks_; ++i) {
      auto c = std::make_unique<Chunk>();
      c->data.reset(new uint8_t[chunk_bytes_]);
      std::memset(c->data.get(), 0, chunk_bytes_);
      c->capacity = chunk_bytes_;
      free_.push_back(c.get());
      all_.push_back(std::move(c));
    }
  }
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
    if (full->oversized) ++oversized_queued_;
    if (must_write()) work_ready_.notify_one();
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
  if (must_write()) work_ready_.notify_one();  // the buffer just crossed three quarters in use
  return c;
}

bool ChunkWriter::must_write() const {
  if (queue_.empty()) return false;
  if (stopping_ || flush_ == Flush::kEveryChunk || oversized_queued_ > 0) return true;
  // Chunks a thread can still get without waiting: the free ones and those not allocated yet.
  const size_t available = free_.size() + (max_chunks_ - all_.size());
  return available <= max_chunks_ / 4;
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
    work_ready_.wait(lock, [this] { return must_write() || (stopping_ && queue_.empty()); });
    if (queue_.empty()) return;
    Chunk* c = queue_.front();
    queue_.pop_front();
    if (c->oversized) --oversized_queued_;
    const bool during_run = !stopping_;
    lock.unlock();
    if (!write_failed_ && c->count > 0) {
      try {
        const uint64_t cpu_start = during_run ? thread_cpu_ns() : 0;
        file_->write_block(c->thread, c->base_ns, c->count, {c->data.get(), c->used});
        if (during_run) {
          ++during_run_.blocks;
          during_run_.cpu_ns += thread_cpu_ns() - cpu_start;
        }
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
