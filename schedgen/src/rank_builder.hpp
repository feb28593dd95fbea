#pragma once
// Turns one rank's event stream into its part of the graph (docs/schedgen.md, "Graph semantics"):
// calc vertices for the time outside MPI, send/recv vertices for messages, requires/irequires
// edges for blocking chains, nonblocking starts and completions.
#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "flat_id_map.hpp"
#include "generation_context.hpp"
#include "tracer_time.hpp"
#include "llamp/schedgen/collectives.hpp"
#include "llamp/trace_event.hpp"

namespace llamp::schedgen {

class RankBuilder {
 public:
  // `tracer_time`: null unless --tracer-time (it outlives the builder).
  RankBuilder(uint32_t rank, GenerationContext& ctx, const TracerTime* tracer_time);

  // Every event except (i)collectives, which the driver gathers across members first.
  void on_event(const trace::Event& e, uint64_t call_index);
  // A collective's part for this rank. `peers` are world ranks of the communicator members.
  // `call_index`: the call that started it (MPI_Start/Startall for a persistent collective).
  void on_collective(const trace::Event& e, const RankSchedule& schedule, const std::vector<int32_t>& members,
                     int32_t tag, std::vector<uint64_t>& op_vertices, uint64_t call_index);
  // After the last event: final computation, receives still open.
  void end_of_stream();
  // Options::completion_time for a blocking collective `e` of this rank (after on_collective): the
  // time it spent after `peers_entry_ns`, the latest entry of the other members, is computation.
  void count_collective_completion(const trace::Event& e, uint64_t peers_entry_ns);

  uint32_t rank() const { return rank_; }
  // Options::completion_time/floor: a completion call of this rank waits for its messages' send times.
  bool awaits_send_times() const { return !completions_.empty(); }
  // Number of the next collective on `comm` this rank calls (0, 1, 2, ...).
  uint64_t next_collective_seq(uint64_t comm) { return coll_seq_[comm]++; }

 private:
  static constexpr uint64_t kNone = UINT64_MAX;
  static constexpr uint64_t kRecordBit = uint64_t{1} << 63;
  // A vertex id, or (with kRecordBit) a receive record whose vertex may not exist yet.
  using Ref = uint64_t;

  struct RecvRecord {
    uint64_t post_seq = 0, op_seq = 0, call_index = 0;
    uint64_t comm = 0;
    int32_t src_pattern = 0, tag_pattern = 0;
    uint64_t capacity = 0;
    bool resolved = false;
    int32_t src = 0, tag = 0;
    uint64_t bytes = 0;
    enum class State : uint8_t { Posted, Created, Dropped } state = State::Posted;
    uint64_t pre_calc = kNone;  // the calc before the call that posted it
    // A nonblocking receive above S (any, with Options::eager_progress): the calc before the rank's
    // first progressing call after the post, where its rendezvous handshake can start or its eager
    // message is copied out (kNone: none yet, or not gated).
    uint64_t progress_gate = kNone;
    // The computation before that call lasted at least Options::cold_handshake_after_ns: a
    // rendezvous handshake it starts runs on cold caches.
    bool cold_gate = false;
    // When that call began (a blocking receive: its own call; 0: none) (Options::completion_floor).
    uint64_t progress_ns = 0;
    uint64_t vertex = kNone;
    std::vector<uint64_t> req_waiters;  // calcs created before the vertex existed
    uint32_t refs = 0;
    bool in_use = false;
  };

  // The operations of one request: almost always one, a collective's exits may be more.
  class OpList {
   public:
    void push_back(Ref r) {
      if (n_ == 0)
        first_ = r;
      else
        rest_.push_back(r);
      ++n_;
    }
    bool empty() const { return n_ == 0; }
    size_t size() const { return n_; }
    Ref operator[](size_t i) const { return i == 0 ? first_ : rest_[i - 1]; }
    void clear() {
      n_ = 0;
      rest_.clear();
    }
    struct Iter {
      const OpList* list;
      size_t i;
      Ref operator*() const { return (*list)[i]; }
      Iter& operator++() {
        ++i;
        return *this;
      }
      bool operator!=(const Iter& o) const { return i != o.i; }
    };
    Iter begin() const { return {this, 0}; }
    Iter end() const { return {this, n_}; }

   private:
    Ref first_ = 0;
    size_t n_ = 0;
    std::vector<Ref> rest_;
  };

  struct Request {
    bool persistent = false;
    bool active = false;
    bool is_send = false;
    // persistent template
    uint64_t comm = 0;
    int32_t peer = 0, tag = 0;
    uint64_t bytes = 0;
    bool sync = false;  // MPI_Ssend_init
    // active instance
    OpList ops;
    Ref ack = kNone;      // synchronous send: the acknowledgement its completion also waits for (only
                          // its end: an irequires edge on it would wait for the receiver's match)
    int64_t record = -1;  // receive record of an active receive
    // A nonblocking collective's eager receives copied out in a progress pass (GatedCollective::copies).
    std::vector<uint64_t> copies;
  };

  // Makes `thread`'s chain the current one (docs/schedgen.md, "Threads").
  void switch_thread(uint32_t thread, uint64_t start_ns);
  void account_time(const trace::Event& e);
  // Adds the time inside a call that cannot wait (MPI_Isend, MPI_Startall, ...) to the computation
  // that follows it (Options::initiation_time); `alone`: a collective over one rank.
  void count_initiation_time(const trace::Event& e, bool alone = false);
  // The time inside a call, less the tracer's sampled time for building its event (--tracer-time).
  uint64_t time_inside(const trace::Event& e);
  // Polling loops (docs/schedgen.md, "Polling"): counts failed polls and, for a poll that found
  // something after failed ones, sets found_lag_ns_ to its expected lag (half a polling period, one and a half for
  // probes).
  void track_polling(const trace::Event& e);
  // Makes the next computation wait for `r`, noticed `lag_ns` after it completed (0: at once).
  void wait_for(Ref r, uint64_t lag_ns);
  // Makes `waiter` require the end of `r`: appends the vertex to `out` (a dropped receive: the
  // calc it was posted after), or, for a receive whose vertex does not exist yet, registers the
  // waiter with its record.
  void require_end(uint64_t waiter, Ref r, std::vector<uint64_t>& out);
  // The vertex that stands for noticing chain_.pending_lag: chain_.pending_lag_ns after all of it completed.
  uint64_t make_lag_vertex();
  uint64_t flush_calc();
  // At a call other than the one that started them, the next progress level of each nonblocking
  // collective in progress_gated_ (every level left if the call can block: it progresses
  // until it returns) starts no earlier than this call; so do the receives above S in
  // awaiting_progress_ if the call progresses at all.
  void release_progress_gates(const trace::Event& e, uint64_t call_index);
  // A nonblocking receive of up to `capacity` bytes was just posted as record `rec`: above S its
  // handshake waits for the rank's next progressing call (docs/schedgen.md, "Progress of
  // rendezvous receives").
  void await_progress(uint32_t rec, uint64_t capacity);
  // Options::eager_progress, unless completion_time takes the copies' time from the trace already.
  bool copies_in_progress() const { return ctx_.options.eager_progress && !ctx_.options.completion_time; }
  // Creates a send (or nothing for dropped ones) that starts after `after`; enters it for matching.
  // A synchronous send also gets the vertex that receives its acknowledgement, returned in *ack
  // (kNone otherwise): the operation completes when both have. `in_call`: a blocking MPI_Send*,
  // which no completion call waits for (Options::completion_floor needs no readiness for it).
  Ref make_send(uint64_t comm, int32_t dst, int32_t tag, uint64_t bytes, uint64_t after, uint64_t call_index,
                bool sync = false, Ref* ack = nullptr, bool in_call = false);
  static bool is_synchronous(trace::Call c);
  uint32_t new_record(uint64_t comm, int32_t src_pattern, int32_t tag_pattern, uint64_t capacity, uint64_t pre_calc,
                      uint64_t call_index);
  void resolve(uint32_t rec, int32_t src, int32_t tag, uint64_t bytes);
  uint32_t receive_completed(const trace::Event& e, int32_t src_pattern, int32_t tag_pattern, uint64_t capacity,
                             const trace::Completion* status, uint64_t pre_calc, uint64_t call_index);
  void drop_record(uint32_t rec);
  void release_ready();
  void create_recv_vertex(uint32_t rec);
  Ref ref_of(uint32_t rec);
  void hold(Ref r);
  void unhold(Ref r);
  void maybe_free(uint32_t rec);
  void start_nonblocking(uint64_t request, Request req, uint64_t calc);
  void complete(const trace::Event& e, uint64_t call_index);
  // Options::eager_progress: chains the eager receives of copied_records_ gated at this call.
  void chain_eager_copies();
  // ... and the nonblocking collectives' ones of copies_completed_.
  void chain_collective_copies();
  void free_requests(const trace::Event& e);
  void lose_record(uint32_t rec);

  // Options::completion_time: a blocking call that completed the receives `recvs` (vertices);
  // its time after the last of their messages was sent counts as computation once the trace has
  // given those send times (resolve_completions). Options::completion_floor: `recvs` also holds
  // its rendezvous sends, and `entry` is the calc before the call, where its floor starts.
  void note_completion(const trace::Event& e, const std::vector<uint64_t>& recvs, uint64_t entry);
  // note_completion for the receive record `rec` of a blocking MPI_Recv/MPI_Sendrecv (and, with
  // Options::completion_floor, its rendezvous send `send`, kNone: none).
  void note_blocking_receive(const trace::Event& e, uint32_t rec, uint64_t entry, Ref send = kNone);
  // Adds the time of every noted completion of the current thread whose send times are known to
  // the next computation (Options::completion_floor: as a floor beside the call that the next
  // computation waits for); `at_end`: the rest count as untimed.
  void resolve_completions(bool at_end);
  // Options::completion_floor and not completion_time (which wins where both are set).
  bool floors_completions() const { return ctx_.options.completion_floor && !ctx_.options.completion_time; }
  // The tracer's sampled time for building `e`'s event (--tracer-time), inside its stamps.
  uint64_t tracer_build_ns(const trace::Event& e) const;

  void handle_send(const trace::Event& e, uint64_t call_index);
  void handle_recv(const trace::Event& e, uint64_t call_index);
  void handle_sendrecv(const trace::Event& e, uint64_t call_index);
  void handle_isend_irecv(const trace::Event& e, uint64_t call_index, bool is_send);
  void handle_start(const trace::Event& e, uint64_t call_index);
  void handle_mprobe(const trace::Event& e, uint64_t call_index);
  void charge_probe_overhead();
  // Options::first_use: adds the sender's (send) or receiver's share of a message's first-use cost
  // to the pending computation, and counts the message in the bands it reaches.
  void charge_first_use(int32_t peer, uint64_t bytes, bool send);
  // Counts the message in the bands it reaches; returns the share of their cost that is charged
  // (0 unless `charged`), counted in the statistics.
  uint64_t first_use(int32_t peer, uint64_t bytes, bool send, bool charged);
  // Options::cold_handshake_ns: the calc of that cost after `gate` (made once per gate).
  uint64_t cold_handshake_after(uint64_t gate);

  uint32_t rank_;
  GenerationContext& ctx_;
  const TracerTime* tracer_time_;  // null: the trace's times stand
  CountingSink& sink_;             // the concrete (final) type, so calls into it are direct

  // The last few polling periods of one polling call and their median, which one loop stretched
  // by a stall (a 1 ms detour inside a loop of eight polls) does not move.
  class RecentPeriods {
   public:
    void add(uint64_t period_ns);
    uint64_t median_ns() const { return median_ns_; }

   private:
    std::array<uint64_t, 8> last_{};
    uint8_t count_ = 0, next_ = 0;
    uint64_t median_ns_ = 0;
  };

  // A started nonblocking collective's operations by progress level: level k waits for k
  // receives of the collective in a row (a receive above S counts once more: its own handshake),
  // so for k passes of the progress engine after the call that started it; levels[0] is level 1.
  struct GatedCollective {
    uint64_t last_call = 0;  // the call that started it or released its last level
    std::vector<std::vector<uint64_t>> levels;
    // Options::eager_progress: its start's eager receives, which wait for the first call after the
    // start that runs the progress engine (as point-to-point ones do; a start does not run it).
    std::vector<uint64_t> copies;
    bool copies_waiting = false;
    size_t next = 0;
  };

  // The chain of the thread whose event is being handled. Each thread of a rank has its own chain
  // of calc vertices (MPI_THREAD_MULTIPLE: the threads' calls are independent except through
  // requests, which belong to the rank); the others are parked in `parked_`.
  struct ChainState {
    bool have_time = false;
    uint64_t last_end_ns = 0, pending_calc_ns = 0;
    // The time inside the last call if it was a failed poll: computation once the gap after it
    // shows that the loop works between its polls (count_initiation_time).
    uint64_t failed_poll_ns = 0;
    std::vector<Ref> pending_req, pending_ireq;  // what the next calc waits for (end / start)
    std::vector<Ref> pending_lag;                // ... and what it notices pending_lag_ns late
    uint64_t pending_lag_ns = 0;
    // Polling: failed polls since the last other call and the start of the first one; an
    // MPI_Iprobe's lag for the receive that follows it on `probe_comm`, and the calc before the
    // MPI_Iprobe loop (that receive is modelled as posted there, so the message can arrive while
    // the loop runs, as it did).
    uint32_t poll_fails = 0;
    uint64_t poll_first_ns = 0, probe_lag_ns = 0, probe_comm = 0;
    uint64_t probe_loop_calc = kNone;
    bool after_blocking_probe = false;  // the last call was an MPI_Probe: the receive takes its message
    // The periods of the last polling loops (with failed polls) of each polling call, for the lag of
    // a completion found at a loop's first poll; made at the first such loop (most ranks never poll,
    // and the builders of all ranks stay small enough for the cache).
    std::unique_ptr<std::array<RecentPeriods, 6>> poll_periods;
  };
  uint32_t thread_ = 0;
  ChainState chain_;
  uint64_t found_lag_ns_ = 0;  // the current event's lag if it is a poll that found something

  struct ThreadChain {
    uint32_t thread = 0;
    ChainState state;
  };
  std::vector<ThreadChain> parked_;  // the other threads seen so far (a handful)
  // Rank-wide, for starting a thread's chain: the latest end of any call, the latest calc vertex.
  bool rank_have_time_ = false;
  uint64_t rank_last_end_ns_ = 0;
  uint64_t last_calc_ = kNone;

  // Nonblocking collectives with operations that wait for one of their receives, and so for the
  // progress engine (release_progress_gates). The rank's, not a thread's: any thread's MPI call
  // runs the progress engine for all of them.
  std::vector<GatedCollective> progress_gated_;
  // Nonblocking receives above S posted since the last progressing call: (record, its post_seq,
  // which tells a record reused since then).
  std::vector<std::pair<uint32_t, uint64_t>> awaiting_progress_;
  // The calc before the current call if it is the progress gate of receives (kNone otherwise), and
  // the receives the call completes, in its order (Options::eager_progress).
  uint64_t receive_gate_ = kNone;
  std::vector<uint32_t> copied_records_;
  // Options::eager_progress: the nonblocking collectives' eager receives this call's pass released
  // (release_progress_gates), and those of the collectives it completes (complete()'s scratch).
  std::vector<uint64_t> copies_released_, copies_completed_;
  // Options::cold_handshake_ns: the extra calc after the gate `cold_gate_of_` that the rendezvous
  // receives gated there wait for (one per call; kNone: none made yet).
  uint64_t cold_gate_of_ = kNone, cold_extra_ = kNone;

  FlatIdMap<Request> requests_;
  std::vector<RecvRecord> records_;
  std::vector<uint32_t> free_records_;
  std::vector<uint32_t> posted_;  // records not yet released for matching, in posting order
  uint64_t post_seq_ = 0, op_seq_ = 0;
  std::unordered_map<uint64_t, uint64_t> coll_seq_;
  // Options::first_use: messages counted per band, per peer sent to and received from.
  using FirstUseCounts = std::array<uint32_t, kMaxFirstUseBands>;
  std::unordered_map<int32_t, FirstUseCounts> first_use_sent_, first_use_received_;
  std::vector<uint64_t> scratch_, lag_scratch_;

  // Options::completion_time.
  uint64_t event_end_ns_ = 0;  // the end of the event being handled: when its sends left
  struct PendingCompletion {
    uint32_t thread = 0;
    uint64_t entry_ns = 0, exit_ns = 0, own_ns = 0;  // own_ns: the tracer's, inside the stamps
    uint32_t first = 0, count = 0;                   // its receive vertices in completion_recvs_
    uint64_t entry_vertex = kNone;                   // Options::completion_floor: the calc before it
  };
  std::vector<PendingCompletion> completions_;
  std::vector<uint64_t> completion_recvs_;
  std::vector<uint32_t> done_records_;  // complete()'s scratch
  std::vector<uint64_t> done_vertices_;
  // on_collective's scratch: each operation's progress level, entry and exit vertex, and the
  // gated calcs of the receives' first use (progress level, vertex).
  std::vector<uint32_t> coll_level_;
  std::vector<uint64_t> coll_entry_, coll_exit_;
  std::vector<std::pair<uint32_t, uint64_t>> coll_gated_copies_;
};

}  // namespace llamp::schedgen
