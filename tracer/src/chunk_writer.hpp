#pragma once
// The bounded buffer between the application threads and the trace file.
//
// Each application thread encodes events into its own chunk (no lock). A full chunk is handed
// to one background thread that compresses it with zstd and appends it to the rank's file as
// one block, then recycles it. At most max_chunks chunks exist, so memory stays flat on long
// runs: when all are in use, the thread that needs a fresh one waits (back-pressure) instead
// of allocating more.
//
// When full chunks are written is the Flush policy. Compressing one 64 KiB chunk takes its rank's
// core for ~0.4 ms (zstd level 3; `mpiexec -bind-to core` puts the writer thread on the rank's
// core) and evicts the application's caches, time the trace cannot show and the traced run pays
// in its computation. So by default (kWhenFull) full chunks wait in memory and are written only
// when three quarters of the buffer are in use, or when the trace closes at MPI_Finalize: a run
// whose trace fits in the buffer is not disturbed by the writer at all, and a longer one pays
// what it paid before, from the moment its buffer fills. kEveryChunk writes each chunk at once: a
// crash (kill -9, a segmentation fault) then loses at most one chunk per thread instead of what
// the buffer held.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "llamp/trace_file.hpp"

namespace llamp::tracer {

struct Chunk {
  std::unique_ptr<uint8_t[]> data;
  size_t capacity = 0;
  size_t used = 0;
  uint32_t count = 0;
  uint32_t thread = 0;
  uint64_t base_ns = 0;
  bool oversized = false;  // a one-off chunk for a single huge event: freed after writing
};

enum class Flush { kWhenFull, kEveryChunk };

// What the writer did while the application ran (before close): blocks it wrote and the CPU time
// it took for them (its thread's CPU clock), for tracer-cost-NNNNN.json.
struct WriterActivity {
  uint64_t blocks = 0;
  uint64_t cpu_ns = 0;
};

class ChunkWriter {
 public:
  ChunkWriter(std::unique_ptr<trace::TraceFileWriter> file, uint32_t rank, size_t chunk_bytes, size_t max_chunks,
              Flush flush = Flush::kWhenFull);
  ~ChunkWriter();
  ChunkWriter(const ChunkWriter&) = delete;
  ChunkWriter& operator=(const ChunkWriter&) = delete;

  // Hands `full` (may be null or empty) to the writer and returns an empty chunk, waiting while
  // the buffer is exhausted.
  Chunk* exchange(Chunk* full);
  // Hands `full` to the writer (an empty one goes back to the pool).
  void submit(Chunk* full);
  // A chunk big enough for one event of `bytes`, outside the pool.
  Chunk* oversized(size_t bytes);
  // Writes everything queued, then the end block when `complete`, and stops the thread.
  void close(bool complete);

  size_t chunk_bytes() const { return chunk_bytes_; }
  uint64_t waits() const { return waits_; }
  // The blocks written before close() was called; read after close().
  WriterActivity during_run() const { return during_run_; }

 private:
  void run();
  // Whether the writer thread should write the oldest queued chunk now (mutex_ held).
  bool must_write() const;
  std::unique_ptr<trace::TraceFileWriter> file_;
  uint32_t rank_;
  size_t chunk_bytes_;
  size_t max_chunks_;
  Flush flush_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable chunk_free_;
  std::deque<Chunk*> queue_;
  std::vector<Chunk*> free_;
  std::vector<std::unique_ptr<Chunk>> all_;
  bool stopping_ = false;
  bool closed_ = false;
  bool write_failed_ = false;
  size_t oversized_queued_ = 0;
  uint64_t waits_ = 0;
  WriterActivity during_run_;
  std::thread thread_;
};

}  // namespace llamp::tracer
