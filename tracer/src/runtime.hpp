#pragma once
// The tracer's per-process and per-thread state, and the one routine that turns a filled
// Event into bytes in the calling thread's chunk.
#include <mpi.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "chunk_writer.hpp"
#include "clock.hpp"
#include "handle_table.hpp"
#include "llamp/trace_codec.hpp"
#include "llamp/trace_dir.hpp"
#include "llamp/trace_event.hpp"

namespace llamp::tracer {

// Tracing is on: initialized, files open, not paused by MPI_Pcontrol(0), not broken.
extern std::atomic<bool> g_tracing;
// Set by a successful init on every rank (they agree) until finalize; communicator ids are
// agreed while this is set, even when paused, so all members take part in the agreement.
extern std::atomic<bool> g_initialized;
// An internal error stopped recording on this rank for good (Pcontrol cannot resume it).
extern std::atomic<bool> g_broken;
// The application runs at MPI_THREAD_MULTIPLE: tables without their own atomics need a lock.
// Set in MPI_Init before tracing starts, never changed after.
extern bool g_thread_multiple;
// LLAMP_TRACE_PAPI named at least one usable counter.
extern bool g_counters_on;

inline bool tracing() { return g_tracing.load(std::memory_order_relaxed); }

// The tracer's own cost, sampled (docs/tracer.md, "The tracer's own time"): about one call in 64
// per thread reads the clock once more, when the MPI library returns, and emit measures from there
// to its end stamp (building the event, inside the call) and from that stamp to the encoded event
// (inside the gap after the call, where no timestamp can exclude it). The gaps between samples
// are random (33 to 96 calls): a fixed period aliases with an application's loop, and app_subcomm
// (24 calls per iteration) had only 3 of its calls sampled, its heaviest. One in 16 cost 5 ns per
// call in bench_tracer's Isend/Waitall loop, one in 64 3 ns.
struct CostSample {
  uint32_t countdown = 64;        // calls until the next sample
  uint32_t random = 2463534242u;  // xorshift32 state
  uint64_t returned_ns = 0;       // the sampled call's return from the MPI library; 0: none pending
};
// initial-exec: one %fs-relative access on the hot path (the library is preloaded, so its TLS is
// static), where the default model calls __tls_get_addr.
extern thread_local CostSample tls_cost_sample __attribute__((tls_model("initial-exec")));

struct CostTotals {
  uint64_t samples = 0, encode_ns = 0;
  std::array<uint64_t, 256> record_ns{}, record_samples{};  // by call id
};

// Ids handed out by one thread without an atomic per call: a locked read-modify-write waits for
// the core's store buffer to drain, and right after an eager MPI_Isend that buffer holds the
// message's copy into the peer's shared-memory queue (~250 ns here, docs/tracer.md "Ids without
// an atomic per call"). A thread takes kIdBlock ids at a time from the process-wide counter, so
// a single-threaded rank numbers 1, 2, 3, ... as before.
struct IdBlock {
  static constexpr uint64_t kIdBlock = uint64_t{1} << 20;
  uint64_t next = 0, end = 0;
  uint64_t take(std::atomic<uint64_t>& source) {
    if (next == end) [[unlikely]] {
      next = source.fetch_add(kIdBlock, std::memory_order_relaxed);
      end = next + kIdBlock;
    }
    return next++;
  }
};

struct ThreadState {
  uint32_t id = 0;
  IdBlock request_ids, message_ids;
  Chunk* chunk = nullptr;
  trace::BlockState block;  // codec state of the chunk being filled
  trace::Event event;
  uint64_t events_started = 0;       // start_event calls: tells a prepared event from a newer one
  bool large_count = false;          // set by an MPI_X_c wrapper for the event it records next
  std::vector<MPI_Status> statuses;  // stands in for MPI_STATUSES_IGNORE
  // Completion calls: what each request was before the call replaced it.
  struct Snapshot {
    uint64_t key = 0;  // 0: MPI_REQUEST_NULL
    HandleTable::Value value;
  };
  std::vector<Snapshot> snapshot;
  // Counters (PAPI): per-thread event set, value at the end of the previous call, delta now.
  int eventset = -1;
  bool counters_failed = false;
  std::vector<long long> counters_end;
  std::vector<long long> counters_now;
  std::vector<int64_t> counters_delta;
  // Last: 4 KiB that only sampled calls touch, kept away from the fields every call uses.
  CostTotals cost;
};

// The calling thread's state; the first thread to ask after init is MPI_Init's thread (id 0).
ThreadState& thread_state();

struct Runtime {
  int world_rank = 0;
  int world_size = 1;
  std::unique_ptr<ChunkWriter> writer;
  std::string dir;
  HandleTable requests{14};
  HandleTable messages{10};
  // Where the threads' IdBlocks come from.
  std::atomic<uint64_t> next_request{1};
  std::atomic<uint64_t> next_message{1};
};
Runtime& runtime();

// Resets the thread's event for a new call and fills the fields every event has.
trace::Event& start_event(ThreadState& ts, trace::Call call, uint64_t t0, uint64_t t1, int rc);
// Completes an event start_event began before the MPI call (with rc MPI_SUCCESS and no end):
// the call's end stamp and its return code. The counters' deltas are taken at call_begin, so the
// early start already holds them.
void finish_event(ThreadState& ts, uint64_t t1, int rc);
// Stamps the event's end (now: the tracer's work for the call is inside it) and encodes it into
// the thread's chunk (handing full chunks to the writer).
void emit(ThreadState& ts);
// Hands every thread's partial chunk to the writer (finalize, abort, exit).
void flush_all_threads();
// The sampled cost of all threads, as the trace directory keeps it.
trace::TracerCost tracer_cost();

// Request kinds, kept in the low bits of a request's aux word (CommInfo is 16-aligned).
// kReqActive: a persistent request between its Start and its completion.
// kReqSharedHandle: MPICH returns one shared built-in request handle for every nonblocking
// operation that is complete when it returns: all operations on MPI_PROC_NULL (whose statuses
// it leaves unwritten) and eager sends finished at once ("lightweight" requests). Several of
// them can be outstanding under the same handle, so their ids are kept in a per-handle FIFO
// instead of the handle table.
enum RequestBits : uint64_t {
  kReqRecv = 1,
  kReqPersistent = 2,
  kReqCancelled = 4,
  kReqActive = 8,
  kReqSharedHandle = 16,
  kReqBitsMask = 31
};
uint64_t add_request(MPI_Request r, const void* comm_info, uint64_t bits);
// MPICH's built-in handles (predefined datatypes, the pre-completed shared requests) have kind 1 in
// bits 30-31.
inline bool is_builtin_handle(uint32_t handle) { return (handle >> 30) == 1u; }
inline bool is_builtin_request(MPI_Request r) { return is_builtin_handle(static_cast<uint32_t>(r)); }
// The size in bytes MPICH writes into a built-in datatype's handle (bits 8-15).
inline uint64_t builtin_type_size(uint32_t handle) { return (handle >> 8) & 0xffu; }
// The bits a request completed inside its call needs: MPICH hands such requests its shared built-in
// handle (an operation over one rank, MPI_PROC_NULL), so they go through the per-handle FIFO.
inline uint64_t shared_handle_bits(MPI_Request r) { return is_builtin_request(r) ? uint64_t{kReqSharedHandle} : 0; }
// The outstanding requests behind a shared handle, oldest first.
HandleTable::Value shared_request(uint64_t key, size_t occurrence);
void shared_request_done(uint64_t key, uint64_t id);

// MPICH writes a predefined datatype's size into its handle: kind 1 (built-in) in bits 30-31,
// the size in bytes in bits 8-15 (MPI_INT is 0x4c000405). Reading it there saves a
// PMPI_Type_size_x call (~33 instructions) per count on every traced call; the collectives ask up
// to three times. check_builtin_type_sizes() compares it with PMPI_Type_size_x at MPI_Init and
// turns it off where any predefined type disagrees (another MPI, another ABI).
extern bool g_builtin_type_sizes;
void check_builtin_type_sizes();
uint64_t bytes_of_slow(MPI_Count count, MPI_Datatype type);
inline uint64_t bytes_of(MPI_Count count, MPI_Datatype type) {
  if constexpr (std::is_integral_v<MPI_Datatype>) {
    const auto handle = static_cast<uint32_t>(type);
    if (g_builtin_type_sizes && is_builtin_handle(handle))
      return count > 0 ? static_cast<uint64_t>(count) * builtin_type_size(handle) : 0;
  }
  return bytes_of_slow(count, type);
}
// The bytes a completed receive's status says arrived (0 for MPI_PROC_NULL or none).
uint64_t received_bytes(const MPI_Status& st);
int32_t tag_of(int tag);

// A status array the application may have passed as MPI_STATUSES_IGNORE.
MPI_Status* statuses_or(MPI_Status* given, int count);

// Counters: read at the start and end of every traced call when enabled.
void counters_begin(ThreadState& ts);
void counters_end(ThreadState& ts);

// Takes the sample's first stamp and draws the gap to the next (out of line: the wrappers keep
// only the countdown).
void sample_cost();

inline uint64_t call_begin() {
  if (g_counters_on) counters_begin(thread_state());
  return now_ns();
}
// The call's end is stamped later, when its event is encoded (emit), so that the tracer's own
// recording counts as time inside the call, not as the application's computation after it.
// Returns 0 ("not stamped yet") unless counters read the call's end here.
inline uint64_t call_end() {
  if (--tls_cost_sample.countdown == 0) [[unlikely]]
    sample_cost();
  if (!g_counters_on) return 0;
  const uint64_t t = now_ns();
  counters_end(thread_state());
  return t;
}

// Reports an internal failure once and stops recording on this rank. The application goes on.
void internal_error(const char* what) noexcept;

// Calls llamp does not trace (gen_wrappers.py's UNTRACED and their large-count variants): the generated
// wrappers only count them, and MPI_Finalize writes untraced-NNNNN.json.
struct UntracedName {
  const char* name;  // "MPI_Put"
  const char* what;  // "one-sided communication"
};
extern const UntracedName kUntracedNames[];
extern const size_t kNumUntraced;
extern std::atomic<uint64_t> g_untraced_counts[];
inline void count_untraced(unsigned i) { g_untraced_counts[i].fetch_add(1, std::memory_order_relaxed); }
// The calls made so far, with their counts (empty if none).
std::vector<trace::UntracedCall> untraced_calls_made();

}  // namespace llamp::tracer
