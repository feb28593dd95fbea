#include "runtime.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>

#include "llamp/trace_codec.hpp"

namespace llamp::tracer {

thread_local CostSample tls_cost_sample __attribute__((tls_model("initial-exec")));
std::atomic<bool> g_tracing{false};
std::atomic<bool> g_initialized{false};
bool g_thread_multiple = false;
bool g_counters_on = false;

Runtime& runtime() {
  static Runtime* r = new Runtime();  // leaked on purpose: wrappers may run during exit
  return *r;
}

namespace {

struct Threads {
  std::mutex mutex;
  std::vector<std::unique_ptr<ThreadState>> all;
  uint32_t next_id = 0;
};
Threads& threads() {
  static Threads* t = new Threads();
  return *t;
}

// initial-exec: the library is loaded with the program (LD_PRELOAD or linked), so its TLS is in the
// static block and every call reads the pointer at a fixed offset instead of via __tls_get_addr.
thread_local ThreadState* tls_state __attribute__((tls_model("initial-exec"))) = nullptr;

[[gnu::noinline]] ThreadState* new_thread_state() {
  Threads& t = threads();
  std::lock_guard lock(t.mutex);
  t.all.push_back(std::make_unique<ThreadState>());
  ThreadState* ts = t.all.back().get();
  ts->id = t.next_id++;
  return ts;
}

}  // namespace

ThreadState& thread_state() {
  if (!tls_state) [[unlikely]]
    tls_state = new_thread_state();
  return *tls_state;
}

// The slow paths of start_event and emit, out of line: the flattened wrappers (gen_wrappers.py
// FLATTEN) inline everything else they call, and these would bring the vectors' and the writer's
// code into each of them.
[[gnu::noinline]] static void copy_counters(ThreadState& ts) {
  ts.event.counters.assign(ts.counters_delta.begin(), ts.counters_delta.end());
}

// An event larger than a chunk (an Alltoallv on a huge communicator) goes into a block of its own.
[[gnu::noinline]] static void emit_oversized(ThreadState& ts, ChunkWriter* w, size_t need) {
  const trace::Event& e = ts.event;
  w->submit(ts.chunk);
  ts.chunk = nullptr;
  Chunk* big = w->oversized(need);
  big->thread = ts.id;
  big->base_ns = e.t_start_ns;
  trace::BlockState state{big->base_ns, 0};
  big->used = static_cast<size_t>(trace::encode_event(big->data.get(), e, state) - big->data.get());
  big->count = 1;
  w->submit(big);
}

[[gnu::noinline]] static Chunk* next_chunk(ThreadState& ts, ChunkWriter* w) { return ts.chunk = w->exchange(ts.chunk); }

trace::Event& start_event(ThreadState& ts, trace::Call call, uint64_t t0, uint64_t t1, int rc) {
  trace::Event& e = ts.event;
  ++ts.events_started;
  e.call = call;
  e.thread = ts.id;
  e.t_start_ns = t0;
  e.t_end_ns = t1;
  e.comm = trace::kCommWorld;
  e.peer = e.tag = e.root = e.peer2 = e.tag2 = trace::kNoRank;
  e.bytes = e.bytes2 = e.request = 0;
  e.requests.clear();
  e.completions.clear();
  e.send_counts.clear();
  e.recv_counts.clear();
  e.new_comm = trace::kCommNull;
  e.members.clear();
  e.remote_members.clear();
  e.sources.clear();
  e.destinations.clear();
  e.counters.clear();
  if (g_counters_on && !ts.counters_failed) [[unlikely]]
    copy_counters(ts);
  e.flags = rc == MPI_SUCCESS ? 0u : static_cast<uint32_t>(trace::kFlagFailed);
  if (ts.large_count) [[unlikely]] {
    e.flags |= trace::kFlagLargeCount;
    ts.large_count = false;
  }
  e.value = 0;
  return e;
}

void finish_event(ThreadState& ts, uint64_t t1, int rc) {
  trace::Event& e = ts.event;
  e.t_end_ns = t1;
  if (rc != MPI_SUCCESS) e.flags |= trace::kFlagFailed;
}

std::vector<trace::UntracedCall> untraced_calls_made() {
  std::vector<trace::UntracedCall> out;
  for (size_t i = 0; i < kNumUntraced; ++i)
    if (uint64_t n = g_untraced_counts[i].load(std::memory_order_relaxed))
      out.push_back({kUntracedNames[i].name, kUntracedNames[i].what, n});
  return out;
}

[[gnu::noinline]] void sample_cost() {
  CostSample& c = tls_cost_sample;
  c.random ^= c.random << 13;
  c.random ^= c.random >> 17;
  c.random ^= c.random << 5;
  c.countdown = 33 + (c.random & 63);
  c.returned_ns = now_ns();
}

// A sampled call (CostSample): its cost, measured from the library's return and from the end stamp.
[[gnu::noinline]] static void note_cost_sample(ThreadState& ts, uint64_t stamped) {
  const uint64_t returned = tls_cost_sample.returned_ns;
  tls_cost_sample.returned_ns = 0;
  // A sample left by a call that recorded nothing (tracing paused) is older than this call.
  if (returned < ts.event.t_start_ns || returned > stamped) return;
  ++ts.cost.samples;
  ts.cost.encode_ns += now_ns() - stamped;
  ts.cost.record_ns[static_cast<uint8_t>(ts.event.call)] += stamped - returned;
  ++ts.cost.record_samples[static_cast<uint8_t>(ts.event.call)];
}

void emit(ThreadState& ts) {
  const uint64_t stamped = now_ns();
  ts.event.t_end_ns = std::max(ts.event.t_end_ns, stamped);
  const trace::Event& e = ts.event;
  ChunkWriter* w = runtime().writer.get();
  if (!w) return;
  const size_t need = trace::max_encoded_size(e);
  Chunk* c = ts.chunk;
  if (need > w->chunk_bytes()) [[unlikely]] {
    emit_oversized(ts, w, need);
    return;
  }
  if (!c || c->used + need > c->capacity) [[unlikely]] {
    c = next_chunk(ts, w);
    if (!c) return;  // writer closed
  }
  if (c->count == 0) {
    c->thread = ts.id;
    c->base_ns = e.t_start_ns;
    ts.block = trace::BlockState{c->base_ns, 0};
  }
  c->used = static_cast<size_t>(trace::encode_event(c->data.get() + c->used, e, ts.block) - c->data.get());
  ++c->count;
  if (tls_cost_sample.returned_ns != 0) [[unlikely]]
    note_cost_sample(ts, stamped);
}

trace::TracerCost tracer_cost() {
  CostTotals sum;
  {
    Threads& t = threads();
    std::lock_guard lock(t.mutex);
    for (const auto& ts : t.all) {
      sum.samples += ts->cost.samples;
      sum.encode_ns += ts->cost.encode_ns;
      for (size_t c = 0; c < sum.record_ns.size(); ++c) {
        sum.record_ns[c] += ts->cost.record_ns[c];
        sum.record_samples[c] += ts->cost.record_samples[c];
      }
    }
  }
  trace::TracerCost cost;
  cost.samples = sum.samples;
  if (sum.samples) cost.encode_ns = static_cast<double>(sum.encode_ns) / static_cast<double>(sum.samples);
  for (size_t c = 0; c < sum.record_ns.size(); ++c)
    if (sum.record_samples[c])
      cost.record_ns[std::string(trace::call_name(static_cast<trace::Call>(c)))] =
          static_cast<double>(sum.record_ns[c]) / static_cast<double>(sum.record_samples[c]);
  return cost;
}

void flush_all_threads() {
  ChunkWriter* w = runtime().writer.get();
  if (!w) return;
  Threads& t = threads();
  std::lock_guard lock(t.mutex);
  for (auto& ts : t.all) {
    w->submit(ts->chunk);
    ts->chunk = nullptr;
  }
}

namespace {
// The outstanding requests behind MPICH's shared built-in handles, oldest first per handle. MPICH
// has only a few such handles (a completed send, MPI_PROC_NULL), so a short array is searched
// instead of a hash map, and requests usually complete in order, so the oldest is taken from the
// front. Every eager MPI_Isend that completes at once passes here twice, so this is the hot path
// of small-message codes: the lock is taken only under MPI_THREAD_MULTIPLE, where two threads may
// be inside MPI at once (at other levels the application serializes its calls).
struct SharedHandleRequests {
  // Oldest first from `head`: a vector, not a std::deque, because pushing onto a deque stores to
  // several of its bookkeeping words, right after an eager send where every store waits for a
  // free store-buffer slot (docs/tracer.md, "Stores after the call").
  struct Fifo {
    uint64_t key;
    std::vector<HandleTable::Value> items;
    size_t head = 0;
    size_t size() const { return items.size() - head; }
    void drop(size_t i) {  // i counts from head
      if (i == 0) {
        if (++head == items.size()) items.clear(), head = 0;
      } else {
        items.erase(items.begin() + static_cast<std::ptrdiff_t>(head + i));
      }
      // Keep the dead front from growing without bound when requests outlive many newer ones.
      if (head > 64 && head * 2 > items.size()) {
        items.erase(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(head));
        head = 0;
      }
    }
  };
  std::mutex mutex;
  std::vector<Fifo> fifos;

  Fifo* find(uint64_t key) {
    for (Fifo& f : fifos)
      if (f.key == key) return &f;
    return nullptr;
  }
  std::unique_lock<std::mutex> lock() {
    return g_thread_multiple ? std::unique_lock(mutex) : std::unique_lock<std::mutex>();
  }
};
SharedHandleRequests& shared_handle_requests() {
  static SharedHandleRequests* p = new SharedHandleRequests();
  return *p;
}
}  // namespace

static void push_shared_request(uint64_t key, uint64_t id, uint64_t aux) {
  SharedHandleRequests& p = shared_handle_requests();
  const auto lock = p.lock();
  SharedHandleRequests::Fifo* q = p.find(key);
  if (!q) q = &p.fifos.emplace_back(SharedHandleRequests::Fifo{key, {}, 0});
  // Field by field: GCC stages a whole Value's copy through the stack as two 8-byte stores and
  // one 16-byte load, which cannot be forwarded and so waits for every older store to reach the
  // cache, right after an eager MPI_Isend has queued its copy into the peer's shared memory
  // ("Ids without an atomic per call", docs/tracer.md).
  HandleTable::Value& v = q->items.emplace_back();
  v.id = id;
  v.aux = aux;
}

uint64_t add_request(MPI_Request r, const void* comm_info, uint64_t bits) {
  Runtime& rt = runtime();
  const uint64_t id = thread_state().request_ids.take(rt.next_request);
  const uint64_t key = handle_key(r);
  const uint64_t aux = reinterpret_cast<uint64_t>(comm_info) | bits;
  if (bits & kReqSharedHandle) push_shared_request(key, id, aux);
  rt.requests.put(key, {id, aux});
  return id;
}

HandleTable::Value shared_request(uint64_t key, size_t occurrence) {
  SharedHandleRequests& p = shared_handle_requests();
  const auto lock = p.lock();
  const SharedHandleRequests::Fifo* q = p.find(key);
  if (!q || occurrence >= q->size()) return {};
  return q->items[q->head + occurrence];
}

void shared_request_done(uint64_t key, uint64_t id) {
  SharedHandleRequests& p = shared_handle_requests();
  const auto lock = p.lock();
  SharedHandleRequests::Fifo* q = p.find(key);
  if (!q) return;
  for (size_t i = 0; i < q->size(); ++i)
    if (q->items[q->head + i].id == id) {
      q->drop(i);
      return;
    }
}

bool g_builtin_type_sizes = false;

void check_builtin_type_sizes() {
  if constexpr (std::is_integral_v<MPI_Datatype>) {
    // The predefined types an application passes most, and some of every size.
    const MPI_Datatype types[] = {MPI_CHAR,   MPI_SIGNED_CHAR,      MPI_UNSIGNED_CHAR, MPI_BYTE,      MPI_SHORT,
                                  MPI_INT,    MPI_UNSIGNED,         MPI_LONG,          MPI_LONG_LONG, MPI_FLOAT,
                                  MPI_DOUBLE, MPI_LONG_DOUBLE,      MPI_INT8_T,        MPI_INT32_T,   MPI_UINT64_T,
                                  MPI_C_BOOL, MPI_C_DOUBLE_COMPLEX, MPI_AINT,          MPI_COUNT,     MPI_PACKED};
    size_t builtin = 0;
    for (MPI_Datatype t : types) {
      const auto handle = static_cast<uint32_t>(t);
      if (!is_builtin_handle(handle)) continue;  // not a built-in handle here: bytes_of asks MPI
      MPI_Count size = -1;
      if (PMPI_Type_size_x(t, &size) != MPI_SUCCESS || size != static_cast<MPI_Count>(builtin_type_size(handle)))
        return;
      ++builtin;
    }
    g_builtin_type_sizes = builtin > 0;
  }
}

uint64_t bytes_of_slow(MPI_Count count, MPI_Datatype type) {
  if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
  MPI_Count size = 0;
  if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0) return 0;
  return static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
}

uint64_t received_bytes(const MPI_Status& st) {
  if (st.MPI_SOURCE == MPI_PROC_NULL) return 0;
  int n = 0;
  if (PMPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS) return 0;
  if (n != MPI_UNDEFINED) return n > 0 ? static_cast<uint64_t>(n) : 0;
  // 2^31 bytes or more (a large-count receive): only the 64-bit query holds them. Not asked
  // first: MPICH answers it in 11 ns where MPI_Get_count takes 6, on every receive.
  MPI_Count large = 0;
  return PMPI_Get_elements_x(&st, MPI_BYTE, &large) == MPI_SUCCESS && large > 0 ? static_cast<uint64_t>(large) : 0;
}

int32_t tag_of(int tag) { return tag == MPI_ANY_TAG ? trace::kAnyTag : tag; }

MPI_Status* statuses_or(MPI_Status* given, int count) {
  if (given != MPI_STATUSES_IGNORE) return given;
  if (!g_tracing.load(std::memory_order_relaxed)) return given;
  ThreadState& ts = thread_state();
  if (count > 0 && ts.statuses.size() < static_cast<size_t>(count)) ts.statuses.resize(static_cast<size_t>(count));
  return ts.statuses.empty() ? given : ts.statuses.data();
}

std::atomic<bool> g_broken{false};

void internal_error(const char* what) noexcept {
  static std::atomic<bool> reported{false};
  g_broken.store(true);
  g_tracing.store(false);
  if (!reported.exchange(true))
    std::fprintf(stderr,
                 "llamptrace: rank %d: internal error (%s); tracing stops on this rank, the application "
                 "continues\n",
                 runtime().world_rank, what);
}

}  // namespace llamp::tracer
