#include "rank_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "llamp/error.hpp"

namespace llamp::schedgen {

using trace::Call;
using trace::Event;
using trace::Family;

RankBuilder::RankBuilder(uint32_t rank, GenerationContext& ctx, const TracerTime* tracer_time)
    : rank_(rank), ctx_(ctx), tracer_time_(tracer_time), sink_(ctx.sink) {}

// ---------------------------------------------------------------- time and calc vertices

// Each thread of a rank has its own chain: its computation is the gaps between its own calls, and
// its operations start after its own calcs. Merging the threads into one chain would order one
// thread's calls after another's Wait and, across ranks, can close a cycle through the messages.
// A thread seen for the first time was started from where the rank was: its chain begins after
// the rank's latest calc, and its first computation runs from the end of the rank's latest call
// (the trace does not say when the thread was created). Single-threaded traces never switch.
void RankBuilder::switch_thread(uint32_t thread, uint64_t start_ns) {
  if (thread == thread_) return;
  auto find = [&](uint32_t t) {
    return std::find_if(parked_.begin(), parked_.end(), [t](const ThreadChain& c) { return c.thread == t; });
  };
  auto park = find(thread_);
  if (park == parked_.end()) {
    parked_.emplace_back();
    parked_.back().thread = thread_;
    park = parked_.end() - 1;
  }
  std::swap(park->state, chain_);  // swaps keep the vectors' storage
  thread_ = thread;
  auto in = find(thread);
  if (in != parked_.end()) {
    std::swap(chain_, in->state);
    return;
  }
  chain_ = ChainState{};  // a thread seen for the first time
  chain_.have_time = rank_have_time_;
  // Another thread's call may still be running at this start; it is not this thread's time.
  chain_.last_end_ns = std::min(rank_last_end_ns_, start_ns);
  if (last_calc_ != kNone) chain_.pending_req.push_back(last_calc_);
}

// Computation is the time outside MPI: the gap between the end of the thread's previous call and
// the start of this one, less the tracer's encoding of the previous event, which happened there.
void RankBuilder::account_time(const Event& e) {
  switch_thread(e.thread, e.t_start_ns);
  rank_last_end_ns_ = rank_have_time_ ? std::max(rank_last_end_ns_, e.t_end_ns) : e.t_end_ns;
  rank_have_time_ = true;
  if (!chain_.have_time) {
    chain_.have_time = true;
    chain_.last_end_ns = e.t_end_ns;
    return;
  }
  uint64_t gap = 0;
  if (e.t_start_ns > chain_.last_end_ns) {
    gap = e.t_start_ns - chain_.last_end_ns;
    if (tracer_time_) [[unlikely]] {
      const uint64_t own = std::min(gap, tracer_time_->encode_ns);
      gap -= own;
      ctx_.stats.tracer_time_ns += own;
    }
    chain_.pending_calc_ns += gap;
  }
  if (chain_.failed_poll_ns > 0) [[unlikely]] {
    // The failed poll before this call: the rank's CPU in a loop that works between its polls; in
    // a loop that only polls, the polls are its wait, which the graph models itself.
    if (gap >= chain_.failed_poll_ns) {
      chain_.pending_calc_ns += chain_.failed_poll_ns;
      ++ctx_.stats.failed_poll_calls;
      ctx_.stats.failed_poll_ns += chain_.failed_poll_ns;
    }
    chain_.failed_poll_ns = 0;
  }
  chain_.last_end_ns = std::max(chain_.last_end_ns, e.t_end_ns);
}

// ---------------------------------------------------------------- polling
//
// A rank that polls (MPI_Test* or MPI_Iprobe/MPI_Improbe, with work between the calls) notices a
// completion at a poll after the completion happened, not at once. MPI_Test* progress the library
// before they look, so the first poll after an arrival sees it: on average half a polling period
// later when the arrival is not tied to the polling rhythm. MPI_Iprobe/MPI_Improbe look first
// and progress only when they found nothing (MPICH's MPID_Iprobe, Open MPI's ob1 alike): the first
// poll after an arrival pulls the message into MPI but has already missed it, and the second finds
// it, one and a half periods later on average. The trace shows the period (the time from the
// first failed poll to the one that found something, over the failed ones); the graph adds that
// expected lag between the completion and what waits for it. Without it, a rank whose polls wait
// for a late message is predicted to see it the instant it arrives, and every polled wait costs
// measured runs that lag more than predicted (docs/schedgen.md, "Polling").

namespace {
enum class Poll : uint8_t { none, failed, found };
Poll poll_outcome(const Event& e) {
  switch (e.call) {
    case Call::Test:
    case Call::Testany:
    case Call::Testsome:
    case Call::Testall:
    case Call::Improbe:
      return e.completions.empty() ? Poll::failed : Poll::found;
    case Call::Iprobe:
      return e.value != 0 ? Poll::found : Poll::failed;
    default:
      return Poll::none;
  }
}

// Polls that look for the message before they progress the library (see above).
bool probes_before_progress(Call c) { return c == Call::Iprobe || c == Call::Improbe; }

// Slot of a polling call in ChainState::poll_periods.
size_t poll_slot(Call c) {
  switch (c) {
    case Call::Test:
      return 0;
    case Call::Testany:
      return 1;
    case Call::Testsome:
      return 2;
    case Call::Testall:
      return 3;
    case Call::Improbe:
      return 4;
    default:
      return 5;  // Iprobe
  }
}

uint64_t expected_lag(Call c, uint64_t period) { return period / 2 + (probes_before_progress(c) ? period : 0); }
}  // namespace

// ---------------------------------------------------------------- calls that cannot wait
//
// A call that returns without waiting for another rank spends its whole time on this rank's CPU:
// MPICH's persistent-request start costs 1-3 us per MPI_Startall of four requests on this VM, where
// the graph charges no CPU time at all to a start (a nonblocking operation's o overlaps the
// computation that irequires it). That time belongs to the rank as surely as the gaps between
// calls, and dropping it made app_persistent's graph 10 % shorter than its own traced run. So does
// a poll that found nothing, in a loop that works between its polls: it returned after one
// progress pass, without waiting (37 800 failed MPI_Iprobe calls of ~100 ns were 3.7 ms of
// app_master_worker's master chain). Where the loop only polls (the gap after the poll shorter
// than the poll), the polls are the rank's wait. Blocking calls are not counted: their time is
// mostly waiting, which the graph models itself; except collectives over one rank, which have
// nobody to wait for.
namespace {
bool cannot_wait(const Event& e) {
  switch (trace::call_family(e.call)) {
    case Family::isend:
    case Family::irecv:
    case Family::send_init:
    case Family::recv_init:
    case Family::start:
    case Family::request_free:
    case Family::cancel:
    case Family::icollective:
    case Family::collective_init:
      return true;
    case Family::mrecv:
      return e.call == Call::Imrecv;
    default:
      return false;
  }
}
}  // namespace

uint64_t RankBuilder::time_inside(const Event& e) {
  if (e.t_end_ns <= e.t_start_ns) return 0;
  uint64_t d = e.t_end_ns - e.t_start_ns;
  if (tracer_time_) {
    const uint64_t own = std::min(d, tracer_build_ns(e));
    d -= own;  // the tracer building the event after the MPI library returned
    ctx_.stats.tracer_time_ns += own;
  }
  return d;
}

void RankBuilder::count_initiation_time(const Event& e, bool alone) {
  if (!ctx_.options.initiation_time || !(alone || cannot_wait(e)) || e.t_end_ns <= e.t_start_ns) return;
  const uint64_t d = time_inside(e);
  chain_.pending_calc_ns += d;  // after the operations the call started: they began at its entry
  ++ctx_.stats.initiation_calls;
  ctx_.stats.initiation_ns += d;
}

void RankBuilder::RecentPeriods::add(uint64_t period_ns) {
  last_[next_] = period_ns;
  next_ = static_cast<uint8_t>((next_ + 1) % last_.size());
  if (count_ < last_.size()) ++count_;
  std::array<uint64_t, 8> sorted = last_;
  std::nth_element(sorted.begin(), sorted.begin() + count_ / 2, sorted.begin() + count_);
  median_ns_ = sorted[count_ / 2];
}

void RankBuilder::track_polling(const Event& e) {
  found_lag_ns_ = 0;
  switch (poll_outcome(e)) {
    case Poll::failed:
      if (chain_.poll_fails == 0 && probes_before_progress(e.call)) {
        // The computation before an MPI_Iprobe/MPI_Improbe loop ends here; the loop's own is the
        // next calc, and the receive the loop finds counts as posted here (handle_recv,
        // handle_mprobe).
        chain_.probe_loop_calc = flush_calc();
        chain_.pending_req.push_back(chain_.probe_loop_calc);
      }
      if (chain_.poll_fails == 0) chain_.poll_first_ns = e.t_start_ns;
      ++chain_.poll_fails;
      return;
    case Poll::found: {
      if (!chain_.poll_periods) chain_.poll_periods = std::make_unique<std::array<RecentPeriods, 6>>();
      RecentPeriods& periods = (*chain_.poll_periods)[poll_slot(e.call)];
      if (chain_.poll_fails > 0 && e.t_start_ns > chain_.poll_first_ns) {
        // A loop stretched by a stall is not polled that slowly once the stall is gone: its lag
        // takes the recent median when that is shorter.
        const uint64_t period = (e.t_start_ns - chain_.poll_first_ns) / chain_.poll_fails;
        periods.add(period);
        found_lag_ns_ = expected_lag(e.call, std::min(period, periods.median_ns()));
      } else if (chain_.poll_fails == 0 && periods.median_ns() > 0) {
        // Found at the first poll: the message was there before the loop looked. Once added
        // latency moves it past that poll, the loop polls on, with the period the rank's recent
        // loops of the same call had; the lag's slack at L0 (the analyzer's resolution) is how
        // far it can move before that happens.
        found_lag_ns_ = expected_lag(e.call, periods.median_ns());
        ++ctx_.stats.first_poll_completions;
        if (e.call == Call::Iprobe) {
          // The loop began at this probe: the receive that follows counts as posted here.
          chain_.probe_loop_calc = flush_calc();
          chain_.pending_req.push_back(chain_.probe_loop_calc);
        }
      }
      chain_.poll_fails = 0;
      return;
    }
    case Poll::none:
      chain_.poll_fails = 0;
      return;
  }
}

void RankBuilder::wait_for(Ref r, uint64_t lag_ns) {
  hold(r);
  if (lag_ns == 0) {
    chain_.pending_req.push_back(r);
    return;
  }
  chain_.pending_lag.push_back(r);
  chain_.pending_lag_ns = lag_ns;
}

void RankBuilder::require_end(uint64_t waiter, Ref r, std::vector<uint64_t>& out) {
  if (!(r & kRecordBit)) {
    out.push_back(r);
    return;
  }
  RecvRecord& rec = records_[r & ~kRecordBit];
  if (rec.state == RecvRecord::State::Created)
    out.push_back(rec.vertex);
  else if (rec.state == RecvRecord::State::Dropped) {
    if (rec.pre_calc != kNone) out.push_back(rec.pre_calc);
  } else
    rec.req_waiters.push_back(waiter);  // the edge is added when the receive's vertex is created
}

uint64_t RankBuilder::make_lag_vertex() {
  const uint64_t v = sink_.poll_lag(rank_, chain_.pending_lag_ns);
  ++ctx_.stats.polled_completions;
  ctx_.stats.poll_lag_ns += chain_.pending_lag_ns;
  lag_scratch_.clear();
  for (Ref r : chain_.pending_lag) require_end(v, r, lag_scratch_);
  std::sort(lag_scratch_.begin(), lag_scratch_.end());
  lag_scratch_.erase(std::unique(lag_scratch_.begin(), lag_scratch_.end()), lag_scratch_.end());
  for (uint64_t b : lag_scratch_) sink_.requires_edge(rank_, v, b);
  for (Ref r : chain_.pending_lag) unhold(r);
  chain_.pending_lag.clear();
  chain_.pending_lag_ns = 0;
  return v;
}

// ---------------------------------------------------------------- calc vertices

// Creates the calc vertex for the computation accumulated since the last one and connects it to
// what it waits for: the end of blocking operations and completed requests (requires), the start
// of nonblocking operations begun by the previous call (irequires), and the noticing of polled
// completions (make_lag_vertex).
uint64_t RankBuilder::flush_calc() {
  const uint64_t lag = chain_.pending_lag.empty() ? kNone : make_lag_vertex();
  uint64_t v = sink_.calc(rank_, chain_.pending_calc_ns);
  chain_.pending_calc_ns = 0;
  last_calc_ = v;
  scratch_.clear();
  for (Ref r : chain_.pending_req) require_end(v, r, scratch_);
  // Waiting for a receive's start is waiting for the computation it was posted after: a receive
  // starts when that computation ends, and its message delays only its end. An irequires edge on
  // the receive vertex itself would put the message edge on the path and, in an exchange where
  // both ranks post receives before sending, close a cycle through the two messages.
  for (Ref r : chain_.pending_ireq) {
    if (!(r & kRecordBit)) continue;
    const RecvRecord& rec = records_[r & ~kRecordBit];
    if (rec.pre_calc != kNone) scratch_.push_back(rec.pre_calc);
  }
  if (lag != kNone) scratch_.push_back(lag);
  // A handful of entries: insertion sort, then drop duplicates. Shifting instead of swapping: GCC
  // turned the swaps into 16-byte loads that overlap the previous iteration's 16-byte store, a
  // store-forwarding stall that cost 40 % of this function (6 % of schedgen, perf).
  for (size_t i = 1; i < scratch_.size(); ++i) {
    const uint64_t x = scratch_[i];
    size_t j = i;
    for (; j > 0 && scratch_[j - 1] > x; --j) scratch_[j] = scratch_[j - 1];
    scratch_[j] = x;
  }
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  for (uint64_t b : scratch_) sink_.requires_edge(rank_, v, b);
  for (Ref r : chain_.pending_ireq) {
    if (r & kRecordBit) continue;  // receives: handled above
    if (!std::binary_search(scratch_.begin(), scratch_.end(), r)) sink_.irequires_edge(rank_, v, r);
  }
  for (Ref r : chain_.pending_req) unhold(r);
  for (Ref r : chain_.pending_ireq) unhold(r);
  chain_.pending_req.clear();
  chain_.pending_ireq.clear();
  return v;
}

// MPICH runs a nonblocking collective's schedule in its progress engine: the start issues the
// operations that wait for nothing, and an operation that waits for a receive (the next round of
// a recursive doubling, a binomial tree's forwarding) is issued by the first pass of the progress
// engine after that receive completed. Without an asynchronous progress thread such a pass is an
// MPI call of this rank: one pass in a call that returns at once (MPI_Test, MPI_Iprobe, another
// start), passes until it returns in one that can block (MPI_Wait, MPI_Recv, a blocking
// collective). So a collective started before a long computation runs its later rounds in the
// wait after it, each costing a full latency there (2 ranks, MPI_Iallreduce of 512 doubles, two
// rounds, then 200 µs of computation, then MPI_Wait: +103 µs per iteration at ΔL = 100 µs,
// against +2 µs for 1 double, one round). The graph starts an operation that waits for k
// receives in a row no earlier than the k-th call after the start, or the first one that can
// block: the earliest progress it can have (a pass that comes before its receive completed makes
// it wait for the next one, which the graph cannot know).
namespace {
bool returns_after_one_pass(const Event& e) {
  if (cannot_wait(e)) return true;
  switch (e.call) {
    case Call::Test:
    case Call::Testall:
    case Call::Testany:
    case Call::Testsome:
    case Call::Iprobe:
    case Call::Improbe:
      return true;
    default:
      return false;
  }
}
}  // namespace

void RankBuilder::release_progress_gates(const Event& e, uint64_t call_index) {
  receive_gate_ = kNone;
  copies_released_.clear();
  if (progress_gated_.empty() && awaiting_progress_.empty()) return;
  uint64_t v = kNone;
  // Receives above S: any call that enters the progress engine answers the requests-to-send that
  // arrived since they were posted. Calls that only start something (MPI_Isend, MPI_Irecv,
  // MPI_Start*, a nonblocking collective's start) do not run it.
  if (!awaiting_progress_.empty() && !cannot_wait(e)) {
    // The computation since the rank's previous MPI call, which the gate ends (Options::cold_handshake_ns).
    const bool cold = ctx_.options.cold_handshake_ns > 0 && !ctx_.options.completion_time &&
                      chain_.pending_calc_ns >= ctx_.options.cold_handshake_after_ns;
    for (auto [rec, seq] : awaiting_progress_) {
      RecvRecord& r = records_[rec];
      if (!r.in_use || r.post_seq != seq || r.state != RecvRecord::State::Posted) continue;  // freed or created
      if (v == kNone) v = flush_calc();
      r.progress_gate = v;
      r.cold_gate = cold;
      r.progress_ns = e.t_start_ns;
      receive_gate_ = v;
    }
    awaiting_progress_.clear();
  }
  // A poll that reports a completion saw the collective done: all its rounds ran by then (in this
  // thread's earlier calls or another thread's), and the completion must not wait for a later call.
  const bool one_pass = returns_after_one_pass(e) && e.completions.empty();
  for (GatedCollective& gc : progress_gated_) {
    // Not in the call that started it (the other collectives of one MPI_Startall), and the events
    // of one call (an MPI_Startall's collectives, then the start itself) are one pass.
    if (gc.last_call == call_index) continue;
    gc.last_call = call_index;
    if (gc.copies_waiting && !cannot_wait(e)) {
      if (v == kNone) v = flush_calc();
      for (uint64_t copy : gc.copies) sink_.requires_edge(rank_, copy, v);
      copies_released_.insert(copies_released_.end(), gc.copies.begin(), gc.copies.end());
      gc.copies_waiting = false;
    }
    for (size_t n = 0; gc.next < gc.levels.size() && (!one_pass || n < 1); ++n, ++gc.next) {
      if (v == kNone) v = flush_calc();
      for (uint64_t op : gc.levels[gc.next]) sink_.requires_edge(rank_, op, v);
      ctx_.stats.progress_gated_ops += gc.levels[gc.next].size();
    }
  }
  std::erase_if(progress_gated_,
                [](const GatedCollective& gc) { return gc.next == gc.levels.size() && !gc.copies_waiting; });
  std::sort(copies_released_.begin(), copies_released_.end());  // looked up by complete()
  if (v != kNone) chain_.pending_req.push_back(v);              // the call's own computation chain continues from here
}

// MPICH over UCX sends a message above S as a request-to-send; the receiver reads the data once it
// matched the request and acknowledges, and it matches only inside its progress engine. Without an
// asynchronous progress thread that is an MPI call, so a request that arrives while the rank
// computes waits for the rank's next call that progresses: after MPI_Irecv and MPI_Isend of 64 KiB,
// 400 µs of computation and MPI_Waitall, ΔL = 100 µs added 297 µs per iteration (three latencies
// in the MPI_Waitall: the read's two and the acknowledgement's), 4.5 µs for 4 KiB (eager). The
// graph starts such a receive no earlier than the rank's first progressing call after it was
// posted: the earliest its handshake can start when the request comes after the post, which is
// the case once added latency exceeds the ranks' skew. Not modelled: the acknowledgement too
// leaves only at a call after the read completed, so a poll halfway through the computation
// starts the handshake but still leaves one latency in the MPI_Waitall (measured +187 µs with
// 2 ms of computation, where the graph hides it all). With Options::eager_progress an eager
// receive is gated the same way: its message, arrived while the rank computed, waits in the
// transport's queue until a progressing call copies it out, and that copy is its o_r.
void RankBuilder::await_progress(uint32_t rec, uint64_t capacity) {
  if (ctx_.options.async_progress) return;
  if (capacity <= ctx_.options.rendezvous_above_bytes && !copies_in_progress()) return;
  awaiting_progress_.emplace_back(rec, records_[rec].post_seq);
}

// A rendezvous handshake started right after a long computation runs on cold caches (the
// library's state, the kernel's CMA path and page tables): on the AMD VM of stop 51, 3.1 us more
// for an 18 KiB message after 250 us of sweeping 4 MiB than after 250 us of spinning, once per call
// (one, two or four messages alike), also with the message buffers touched right before the call.
// The receives gated at one call wait for one extra calc after the gate, made once.
uint64_t RankBuilder::cold_handshake_after(uint64_t gate) {
  if (cold_gate_of_ != gate) {
    cold_extra_ = sink_.calc(rank_, ctx_.options.cold_handshake_ns);
    sink_.requires_edge(rank_, cold_extra_, gate);
    cold_gate_of_ = gate;
    ++ctx_.stats.cold_handshake_calls;
  }
  return cold_extra_;
}

void RankBuilder::hold(Ref r) {
  if (r & kRecordBit) ++records_[r & ~kRecordBit].refs;
}
void RankBuilder::unhold(Ref r) {
  if (!(r & kRecordBit)) return;
  uint32_t idx = static_cast<uint32_t>(r & ~kRecordBit);
  --records_[idx].refs;
  maybe_free(idx);
}

// ---------------------------------------------------------------- sends

RankBuilder::Ref RankBuilder::make_send(uint64_t comm, int32_t dst, int32_t tag, uint64_t bytes, uint64_t after,
                                        uint64_t call_index, bool sync, Ref* ack, bool in_call) {
  if (ack) *ack = kNone;
  if (dst < 0 || static_cast<uint32_t>(dst) >= ctx_.num_ranks)
    throw Error(fmt::format("rank {} call {}: send to rank {} outside the world of {} ranks", rank_, call_index, dst,
                            ctx_.num_ranks));
  uint64_t seq = op_seq_++;
  if (ctx_.dropped(rank_, seq)) {
    ++ctx_.stats.dropped_sends;
    return kNone;
  }
  uint64_t v = sink_.send(rank_, bytes, static_cast<uint32_t>(dst), ctx_.tags.p2p(comm, tag));
  if (after != kNone) sink_.requires_edge(rank_, v, after);
  PendingOp op{v, call_index, bytes, seq};
  op.sent_ns = event_end_ns_;
  op.completes_in_call = in_call;
  if (sync) {
    // Posted with the send and waiting only for the acknowledgement (generation_context.cpp), so
    // it needs no edge of its own: what completes the send requires it.
    op.ack_vertex = sink_.recv(rank_, 0, static_cast<uint32_t>(dst), ctx_.sync_ack_tag(comm, tag));
    if (ack) *ack = op.ack_vertex;
  }
  ctx_.matcher.add_send({comm, static_cast<int32_t>(rank_), dst, tag}, op);
  return v;
}

bool RankBuilder::is_synchronous(trace::Call c) {
  return c == trace::Call::Ssend || c == trace::Call::Issend || c == trace::Call::Ssend_init;
}

// ---------------------------------------------------------------- receives
//
// A receive's vertex is created once the source and tag it matched are known (from its completion
// status) and every receive posted before it that could have taken the same message is resolved
// too. Receives of one (communicator, source, tag) stream are therefore created, and matched, in
// posting order, which is MPI's ordering rule and the order GOAL readers pair in.

uint32_t RankBuilder::new_record(uint64_t comm, int32_t src_pattern, int32_t tag_pattern, uint64_t capacity,
                                 uint64_t pre_calc, uint64_t call_index) {
  uint32_t idx;
  if (!free_records_.empty()) {
    idx = free_records_.back();
    free_records_.pop_back();
  } else {
    idx = static_cast<uint32_t>(records_.size());
    records_.emplace_back();
  }
  RecvRecord& r = records_[idx];
  r.resolved = false;
  r.state = RecvRecord::State::Posted;
  r.vertex = kNone;
  r.refs = 0;
  r.req_waiters.clear();
  r.in_use = true;
  r.post_seq = post_seq_++;
  r.op_seq = op_seq_++;
  r.call_index = call_index;
  r.comm = comm;
  r.src_pattern = src_pattern;
  r.tag_pattern = tag_pattern;
  r.capacity = capacity;
  r.pre_calc = pre_calc;
  r.progress_gate = kNone;
  r.cold_gate = false;
  r.progress_ns = 0;
  posted_.push_back(idx);
  return idx;
}

void RankBuilder::resolve(uint32_t rec, int32_t src, int32_t tag, uint64_t bytes) {
  RecvRecord& r = records_[rec];
  if (src < 0 || static_cast<uint32_t>(src) >= ctx_.num_ranks)
    throw Error(fmt::format("rank {} call {}: receive completed from rank {} outside the world of {} ranks", rank_,
                            r.call_index, src, ctx_.num_ranks));
  r.resolved = true;
  r.src = src;
  r.tag = tag;
  r.bytes = bytes;
}

// The status of a completed receive, or (without one) the posted source and tag when they are
// not wildcards.
static bool status_of(const trace::Completion* c, int32_t src_pattern, int32_t tag_pattern, uint64_t capacity,
                      int32_t& src, int32_t& tag, uint64_t& bytes) {
  if (c && c->source >= 0) {
    src = c->source;
    tag = c->tag;
    bytes = c->bytes;
    return true;
  }
  if (src_pattern >= 0 && tag_pattern >= 0) {
    src = src_pattern;
    tag = tag_pattern;
    bytes = capacity;
    return true;
  }
  return false;
}

void RankBuilder::drop_record(uint32_t rec) {
  RecvRecord& r = records_[rec];
  auto it = std::find(posted_.begin(), posted_.end(), rec);
  if (it != posted_.end()) posted_.erase(it);
  r.state = RecvRecord::State::Dropped;
  // Computation that waited for it still follows what came before it.
  if (r.pre_calc != kNone)
    for (uint64_t w : r.req_waiters) sink_.requires_edge(rank_, w, r.pre_calc);
  r.req_waiters.clear();
  maybe_free(rec);
}

// A wildcard receive the trace never shows completing: nothing says which message it took.
void RankBuilder::lose_record(uint32_t rec) {
  const RecvRecord& r = records_[rec];
  ctx_.lost_recvs.push_back(UnmatchedOp{false, rank_, r.call_index, r.comm, r.src_pattern, r.tag_pattern, r.capacity});
  drop_record(rec);
}

void RankBuilder::create_recv_vertex(uint32_t rec) {
  RecvRecord& r = records_[rec];
  if (ctx_.dropped(rank_, r.op_seq)) {
    ++ctx_.stats.dropped_recvs;
    r.state = RecvRecord::State::Dropped;
    if (r.pre_calc != kNone)
      for (uint64_t w : r.req_waiters) sink_.requires_edge(rank_, w, r.pre_calc);
    r.req_waiters.clear();
    maybe_free(rec);
    return;
  }
  const bool rendezvous = r.bytes > ctx_.options.rendezvous_above_bytes;
  const bool gated = r.progress_gate != kNone && (rendezvous || copies_in_progress());
  const bool cold = gated && rendezvous && r.cold_gate;
  const uint64_t gate = cold ? cold_handshake_after(r.progress_gate) : r.progress_gate;
  uint64_t v = sink_.recv(rank_, r.bytes, static_cast<uint32_t>(r.src), ctx_.tags.p2p(r.comm, r.tag));
  if (r.pre_calc != kNone) sink_.requires_edge(rank_, v, r.pre_calc);
  if (gated) {
    sink_.requires_edge(rank_, v, gate);
    ++(rendezvous ? ctx_.stats.rendezvous_gated_recvs : ctx_.stats.eager_gated_recvs);
    if (cold) ++ctx_.stats.cold_handshake_recvs;
  }
  for (uint64_t w : r.req_waiters) sink_.requires_edge(rank_, w, v);
  r.req_waiters.clear();
  r.state = RecvRecord::State::Created;
  r.vertex = v;
  PendingOp op{v, r.call_index, r.bytes, r.op_seq};
  op.progress_ns = r.progress_ns;
  P2PKey key{r.comm, r.src, static_cast<int32_t>(rank_), r.tag};
  maybe_free(rec);  // before matching: the callback does not touch records
  ctx_.matcher.add_recv(key, op);
}

void RankBuilder::release_ready() {
  size_t kept = 0;
  for (size_t i = 0; i < posted_.size(); ++i) {
    uint32_t idx = posted_[i];
    const RecvRecord& r = records_[idx];
    bool release = r.resolved;
    for (size_t j = 0; release && j < kept; ++j) {
      const RecvRecord& u = records_[posted_[j]];
      if (u.resolved || u.comm != r.comm) continue;
      bool src_ok = u.src_pattern == trace::kAnySource || u.src_pattern == r.src;
      bool tag_ok = u.tag_pattern == trace::kAnyTag || u.tag_pattern == r.tag;
      if (src_ok && tag_ok) release = false;  // u was posted earlier and could take this message
    }
    if (release)
      create_recv_vertex(idx);
    else
      posted_[kept++] = idx;
  }
  posted_.resize(kept);
}

RankBuilder::Ref RankBuilder::ref_of(uint32_t rec) {
  const RecvRecord& r = records_[rec];
  if (r.state == RecvRecord::State::Created) return r.vertex;
  if (r.state == RecvRecord::State::Dropped) return r.pre_calc;
  return kRecordBit | rec;
}

void RankBuilder::maybe_free(uint32_t rec) {
  RecvRecord& r = records_[rec];
  if (!r.in_use || r.refs > 0 || r.state == RecvRecord::State::Posted) return;
  r.in_use = false;
  free_records_.push_back(rec);
}

// ---------------------------------------------------------------- requests

// Makes `q` the active instance of request `id`: the next computation starts once its operations
// have started, and the computation chain continues from `calc` for those not created yet.
void RankBuilder::start_nonblocking(uint64_t id, Request q, uint64_t calc) {
  bool all_created = !q.ops.empty();
  for (Ref r : q.ops) {
    if (r & kRecordBit) all_created = false;
    chain_.pending_ireq.push_back(r);
    hold(r);
    hold(r);  // the request's own reference
  }
  if (!all_created && calc != kNone) chain_.pending_req.push_back(calc);
  q.active = true;
  bool inserted;
  Request& slot = requests_.get_or_insert(id, inserted);
  if (!inserted) {
    // The tracer reuses an id only after the previous request finished; an id still active here
    // was never completed in the trace.
    if (slot.active) ++ctx_.stats.never_completed;
    for (Ref r : slot.ops) unhold(r);
  }
  slot = std::move(q);
}

void RankBuilder::complete(const Event& e, uint64_t call_index) {
  if (e.completions.empty()) return;  // a Test that found nothing: no dependency
  uint64_t c = flush_calc();
  chain_.pending_req.push_back(c);
  // Options::completion_time: the receives this call completed (records: resolved below), and
  // whether any of them cannot be timed (a receive left out or still waiting for an earlier
  // wildcard). Options::completion_floor: its rendezvous sends too; a collective or a synchronous
  // send, whose readiness the trace does not give here, leaves the call without a floor.
  const bool timed = ctx_.options.times_completions();
  const bool floor = floors_completions();
  bool untimed = false;
  std::vector<uint32_t>& done_records = done_records_;
  std::vector<uint64_t>& done_vertices = done_vertices_;
  done_records.clear();
  done_vertices.clear();
  copied_records_.clear();
  copies_completed_.clear();
  for (const trace::Completion& comp : e.completions) {
    Request* found = requests_.find(comp.request);
    if (!found) continue;  // a request we never saw started (e.g. tracing was paused)
    Request& q = *found;
    for (uint64_t copy : q.copies)
      if (std::binary_search(copies_released_.begin(), copies_released_.end(), copy)) copies_completed_.push_back(copy);
    q.copies.clear();
    // Without the option even a receive gated for a rendezvous that its message did not need is
    // not chained.
    if (receive_gate_ != kNone && copies_in_progress() && q.record >= 0 && !comp.cancelled)
      copied_records_.push_back(static_cast<uint32_t>(q.record));
    if (timed) {
      if (q.record >= 0) {
        if (!comp.cancelled) done_records.push_back(static_cast<uint32_t>(q.record));  // cancelled: no message
      } else if (floor) {  // no ops: MPI_PROC_NULL or a dropped send, no message
        if (!q.ops.empty() && (!q.is_send || q.ack != kNone))
          untimed = true;
        else if (q.bytes > ctx_.options.rendezvous_above_bytes && !comp.cancelled)  // eager: ready at once
          for (Ref r : q.ops) done_vertices.push_back(r);
      } else if (!q.is_send)  // a nonblocking collective: its receives among its last operations
        for (Ref r : q.ops)
          if (!(r & kRecordBit) && ctx_.sent_times[rank_].find(r)) done_vertices.push_back(r);
    }
    if (q.record >= 0) {
      uint32_t rec = static_cast<uint32_t>(q.record);
      RecvRecord& r = records_[rec];
      if (r.state == RecvRecord::State::Posted && !r.resolved) {
        int32_t src, tag;
        uint64_t bytes;
        if (comp.cancelled)
          drop_record(rec);
        else if (status_of(&comp, r.src_pattern, r.tag_pattern, r.capacity, src, tag, bytes)) {
          resolve(rec, src, tag, bytes);
          charge_first_use(src, bytes, false);
        } else
          throw Error(fmt::format("rank {} call {}: wildcard receive (posted in call {}) completed without a status",
                                  rank_, call_index, r.call_index));
      }
    } else if (q.is_send && comp.cancelled && !q.ops.empty()) {
      throw Error(fmt::format(
          "rank {}: a send request was cancelled (MPI_Cancel on a send); the graph cannot take a send back", rank_));
    }
    for (Ref r : q.ops) wait_for(r, found_lag_ns_);
    if (q.ack != kNone) wait_for(q.ack, found_lag_ns_);
    q.ack = kNone;
    for (Ref r : q.ops) unhold(r);
    q.ops.clear();
    q.record = -1;
    q.active = false;
    if (!q.persistent) requests_.erase(comp.request);
  }
  release_ready();
  if (!copied_records_.empty()) chain_eager_copies();
  chain_collective_copies();
  if (!timed) return;
  // Records are not reused before the next receive is posted, so their vertices are still here.
  for (uint32_t rec : done_records) {
    if (records_[rec].state == RecvRecord::State::Created)
      done_vertices.push_back(records_[rec].vertex);
    else
      untimed = true;
  }
  const bool blocking =
      e.call == Call::Wait || e.call == Call::Waitall || e.call == Call::Waitany || e.call == Call::Waitsome;
  if (!blocking || untimed) {
    // A poll's time is counted as a poll (or is the receive's o); its send times are not needed.
    for (uint64_t v : done_vertices) ctx_.sent_times[rank_].erase(v);
    if (blocking) ++ctx_.stats.completion_untimed;
    return;
  }
  note_completion(e, done_vertices, c);
}

// Options::eager_progress: the progress pass of a call that completes several eager receives whose
// o_r waited for this very call copies their messages out one after another, in the order the call
// reports them (a Waitall of two 4 KiB receives that had both arrived took 1.0-1.2 us in
// app_persistent's traces, o_recv 420 ns). Only receives this call completed: one it leaves open
// may wait for a message sent after this call returns. Records are not reused before the next
// receive is posted, so their vertices are still here.
void RankBuilder::chain_eager_copies() {
  uint64_t previous = kNone;
  for (uint32_t rec : copied_records_) {
    const RecvRecord& r = records_[rec];
    if (r.state != RecvRecord::State::Created || r.progress_gate != receive_gate_ ||
        r.bytes > ctx_.options.rendezvous_above_bytes)
      continue;
    if (previous != kNone) {
      sink_.requires_edge(rank_, r.vertex, previous);
      ++ctx_.stats.eager_chained_recvs;
    }
    previous = r.vertex;
  }
}

// The same for nonblocking collectives: the eager receives their starts issued, of the collectives
// this call completes, in the order it reports them, where this call released them (those an
// earlier poll released stay gated there, unchained). app_pcoll's MPI_Waitall completes a neighborhood
// collective's two receives and an MPI_Allreduce's one. Only collectives this call completed: one
// it leaves open may wait for a message sent after this call returns.
void RankBuilder::chain_collective_copies() {
  for (size_t i = 1; i < copies_completed_.size(); ++i) {
    sink_.requires_edge(rank_, copies_completed_[i], copies_completed_[i - 1]);
    ++ctx_.stats.eager_chained_recvs;
  }
}

// MPI_Request_free on an active request: the operation still happens, nothing waits for it.
void RankBuilder::free_requests(const Event& e) {
  std::vector<uint64_t> ids = e.requests;
  if (ids.empty() && e.request != 0) ids.push_back(e.request);
  for (uint64_t id : ids) {
    Request* found = requests_.find(id);
    if (!found) continue;
    Request& q = *found;
    if (q.active) ++ctx_.stats.never_completed;
    if (q.record >= 0) {
      uint32_t rec = static_cast<uint32_t>(q.record);
      const RecvRecord& r = records_[rec];
      if (r.state == RecvRecord::State::Posted && !r.resolved) {
        int32_t src, tag;
        uint64_t bytes;
        if (status_of(nullptr, r.src_pattern, r.tag_pattern, r.capacity, src, tag, bytes))
          resolve(rec, src, tag, bytes);
        else
          lose_record(rec);
      }
    }
    for (Ref r : q.ops) unhold(r);
    requests_.erase(id);
  }
  release_ready();
}

// A receive that completed inside the call that posted it (Recv, Sendrecv, Mprobe): its record
// is resolved at once from the call's status. Returns the record.
uint32_t RankBuilder::receive_completed(const Event& e, int32_t src_pattern, int32_t tag_pattern, uint64_t capacity,
                                        const trace::Completion* status, uint64_t pre_calc, uint64_t call_index) {
  uint32_t rec = new_record(e.comm, src_pattern, tag_pattern, capacity, pre_calc, call_index);
  records_[rec].progress_ns = e.t_start_ns;  // a blocking receive answers its request itself
  int32_t src, tag;
  uint64_t bytes;
  if (!status_of(status, src_pattern, tag_pattern, capacity, src, tag, bytes))
    throw Error(fmt::format("rank {} call {}: {} from a wildcard source or tag has no status in the trace", rank_,
                            call_index, trace::call_name(e.call)));
  resolve(rec, src, tag, bytes);
  charge_first_use(src, bytes, false);
  release_ready();
  return rec;
}

// ---------------------------------------------------------------- call families

void RankBuilder::handle_send(const Event& e, uint64_t call_index) {
  if (e.peer == trace::kProcNull) {
    ++ctx_.stats.proc_null_ops;
    return;
  }
  charge_first_use(e.peer, e.bytes, true);
  uint64_t c = flush_calc();
  Ref ack;
  Ref s = make_send(e.comm, e.peer, e.tag, e.bytes, c, call_index, is_synchronous(e.call), &ack, true);
  chain_.pending_req.push_back(s != kNone ? s : c);
  if (ack != kNone) chain_.pending_req.push_back(ack);
}

void RankBuilder::handle_recv(const Event& e, uint64_t call_index) {
  if (e.peer == trace::kProcNull) {
    ++ctx_.stats.proc_null_ops;
    return;
  }
  // After an MPI_Iprobe loop found the message, this receive takes it. It is posted where the loop
  // began, so the message may arrive during the loop as it did; the rank goes on once the loop
  // ended and it noticed the message (the probe's lag).
  const bool probed = chain_.probe_comm == e.comm && chain_.probe_lag_ns > 0 && chain_.probe_loop_calc != kNone;
  uint64_t c = flush_calc();
  const trace::Completion* st = e.completions.empty() ? nullptr : &e.completions[0];
  const uint32_t rec =
      receive_completed(e, e.peer, e.tag, e.bytes, st, probed ? chain_.probe_loop_calc : c, call_index);
  Ref r = ref_of(rec);
  if (r != kNone) wait_for(r, probed ? chain_.probe_lag_ns : 0);
  if (ctx_.options.times_completions() && !probed) note_blocking_receive(e, rec, c);
  if (probed) chain_.pending_req.push_back(c);
  if (chain_.after_blocking_probe) charge_probe_overhead();
}

void RankBuilder::handle_sendrecv(const Event& e, uint64_t call_index) {
  bool has_send = e.peer != trace::kProcNull, has_recv = e.peer2 != trace::kProcNull;
  ctx_.stats.proc_null_ops += !has_send + !has_recv;
  if (!has_send && !has_recv) return;
  if (has_send) charge_first_use(e.peer, e.bytes, true);
  uint64_t c = flush_calc();
  // Both halves start together; the call ends when both have.
  Ref s = has_send ? make_send(e.comm, e.peer, e.tag, e.bytes, c, call_index) : kNone;
  Ref r = kNone;
  if (has_recv) {
    const trace::Completion* st = e.completions.empty() ? nullptr : &e.completions[0];
    const uint32_t rec = receive_completed(e, e.peer2, e.tag2, e.bytes2, st, c, call_index);
    r = ref_of(rec);
    if (ctx_.options.times_completions())
      note_blocking_receive(e, rec, c, e.bytes > ctx_.options.rendezvous_above_bytes ? s : kNone);
  }
  for (Ref x : {s, r})
    if (x != kNone) {
      chain_.pending_req.push_back(x);
      hold(x);
    }
  if (chain_.pending_req.empty()) chain_.pending_req.push_back(c);
}

void RankBuilder::handle_isend_irecv(const Event& e, uint64_t call_index, bool is_send) {
  Request q;
  q.is_send = is_send;
  if (e.peer == trace::kProcNull) {
    ++ctx_.stats.proc_null_ops;
    start_nonblocking(e.request, std::move(q), kNone);  // completes later like any request
    return;
  }
  uint64_t c = flush_calc();
  if (is_send) {
    first_use(e.peer, e.bytes, true, false);  // its cost is inside the call, counted already
    Ref s = make_send(e.comm, e.peer, e.tag, e.bytes, c, call_index, is_synchronous(e.call), &q.ack);
    if (s != kNone) q.ops.push_back(s);
    q.bytes = e.bytes;
  } else {
    uint32_t rec = new_record(e.comm, e.peer, e.tag, e.bytes, c, call_index);
    q.record = rec;
    q.ops.push_back(kRecordBit | rec);
    await_progress(rec, e.bytes);
  }
  start_nonblocking(e.request, std::move(q), c);
}

// MPI_Start/Startall: each start is a new instance of the persistent operation.
void RankBuilder::handle_start(const Event& e, uint64_t call_index) {
  uint64_t c = kNone;
  std::vector<uint64_t> ids = e.requests;
  if (ids.empty() && e.request != 0) ids.push_back(e.request);
  for (uint64_t id : ids) {
    Request* found = requests_.find(id);
    if (!found || !found->persistent) continue;  // not created while tracing
    Request& tmpl = *found;
    if (tmpl.active) ++ctx_.stats.never_completed;
    for (Ref r : tmpl.ops) unhold(r);
    tmpl.ops.clear();
    tmpl.ack = kNone;
    tmpl.record = -1;
    tmpl.active = true;
    if (tmpl.peer == trace::kProcNull) {
      ++ctx_.stats.proc_null_ops;
      continue;
    }
    if (c == kNone) c = flush_calc();
    if (tmpl.is_send) {
      first_use(tmpl.peer, tmpl.bytes, true, false);  // its cost is inside the MPI_Start*, counted already
      Ref s = make_send(tmpl.comm, tmpl.peer, tmpl.tag, tmpl.bytes, c, call_index, tmpl.sync, &tmpl.ack);
      if (s != kNone) tmpl.ops.push_back(s);
    } else {
      uint32_t rec = new_record(tmpl.comm, tmpl.peer, tmpl.tag, tmpl.bytes, c, call_index);
      tmpl.record = rec;
      tmpl.ops.push_back(kRecordBit | rec);
      await_progress(rec, tmpl.bytes);
    }
    bool created = !tmpl.ops.empty() && !(tmpl.ops[0] & kRecordBit);
    for (Ref r : tmpl.ops) {
      chain_.pending_ireq.push_back(r);
      hold(r);
      hold(r);
    }
    if (!created) chain_.pending_req.push_back(c);
  }
}

// A matched probe takes its message off the queue: that is where the receive is posted and, since
// the probe returns only once the message is there, where the rank waits for it. Mrecv then only
// copies the data out.
void RankBuilder::handle_mprobe(const Event& e, uint64_t call_index) {
  if (e.completions.empty()) return;  // Improbe found nothing
  if (e.peer == trace::kProcNull || e.completions[0].source == trace::kProcNull) {
    ++ctx_.stats.proc_null_ops;
    return;
  }
  // An MPI_Improbe that found its message after failed polls: the receive is posted where the loop
  // began, so the message may arrive during the loop as it did, and the rank goes on once the loop
  // ended and it noticed the message (the lag). Posted after the loop instead, the lag followed the
  // loop's whole traced wait, had no slack at L0 and came in full at any added latency:
  // app_completions' MPI_Improbe phase alone was predicted 29.5 us per round slower at ΔL = 10 us,
  // and ran 10 us slower (stop 46).
  const bool looped = e.call == Call::Improbe && chain_.probe_loop_calc != kNone;
  uint64_t c = flush_calc();
  const trace::Completion& st = e.completions[0];
  Ref r = ref_of(receive_completed(e, e.peer, e.tag, st.bytes, &st, looped ? chain_.probe_loop_calc : c, call_index));
  if (r != kNone)
    wait_for(r, e.call == Call::Improbe ? found_lag_ns_ : (chain_.probe_comm == e.comm ? chain_.probe_lag_ns : 0));
  if (looped) chain_.pending_req.push_back(c);
  if (e.call == Call::Mprobe) charge_probe_overhead();
}

// A blocking probe returns once its message is there and has matched it in the unexpected queue;
// that matching is CPU time after the arrival, before the receive that follows (MPI_Recv) or the
// data copy (MPI_Mrecv). The trace cannot split it from the wait, so the measured o_probe stands in.
void RankBuilder::charge_probe_overhead() {
  if (ctx_.options.probe_overhead_ns <= 0) return;
  chain_.pending_calc_ns += static_cast<uint64_t>(std::llround(ctx_.options.probe_overhead_ns));
  ++ctx_.stats.probe_overhead_calls;
}

// The first messages of a pair of ranks at a size touch the transport's buffers for the first
// time: on the AMD VM of stop 48, 64 round trips at 512 B took over 10 us each against ~0.5 us
// later (page faults of UCX's shared-memory buffers), most of it inside MPI_Send. The trace holds
// it only inside calls whose time the graph models, so the graph charged the warm cost
// (app_pingpong's graph 6-15 % below its own traced runs); llamp-loggp measures the cost per band.
void RankBuilder::charge_first_use(int32_t peer, uint64_t bytes, bool send) {
  if (!send && ctx_.options.completion_time) return;
  const uint64_t ns = first_use(peer, bytes, send, true);
  chain_.pending_calc_ns += ns;
}

// Counts the message in the bands it reaches and returns the share of their cost that the graph
// charges (0 unless `charged`): a message warms the transport's buffers whether or not its cost is
// in the trace already (the time inside MPI_Isend is), so the pair's later messages are warm. A
// rank's messages to itself never reach the transport (MPICH copies them; app_nhalo's periodic
// neighbors include the rank itself).
uint64_t RankBuilder::first_use(int32_t peer, uint64_t bytes, bool send, bool charged) {
  const std::vector<FirstUseBand>& bands = ctx_.options.first_use;
  if (bands.empty() || peer == static_cast<int32_t>(rank_)) return 0;
  FirstUseCounts& counts = (send ? first_use_sent_ : first_use_received_)[peer];
  double cost = 0;
  const uint64_t s = ctx_.options.rendezvous_above_bytes;
  for (std::size_t i = 0; i < bands.size(); ++i) {
    if (i > 0 && bytes <= bands[i - 1].bytes) break;  // bands ascend: none further is reached
    // An eager message touches the eager bands' buffers, a rendezvous one (beyond its small
    // handshake, the first band) those of the rendezvous bands.
    if (i > 0 && (bytes > s) != (bands[i].bytes > s)) continue;
    if (counts[i] >= bands[i].messages) continue;
    ++counts[i];
    cost += send ? bands[i].send_ns : bands[i].recv_ns;
  }
  const uint64_t ns = charged ? static_cast<uint64_t>(std::llround(cost)) : 0;
  if (ns == 0) return 0;
  ++(send ? ctx_.stats.first_use_sends : ctx_.stats.first_use_recvs);
  ctx_.stats.first_use_ns += ns;
  return ns;
}

void RankBuilder::on_event(const Event& e, uint64_t call_index) {
  account_time(e);
  if (ctx_.options.times_completions()) {
    // An eager message of MPI_Sendrecv leaves at the call's entry; its end waits for the receive.
    event_end_ns_ =
        e.call == Call::Sendrecv && e.bytes <= ctx_.options.rendezvous_above_bytes ? e.t_start_ns : e.t_end_ns;
    if (!completions_.empty()) resolve_completions(false);
  }
  if (e.flags & trace::kFlagFailed) {
    ++ctx_.stats.failed_calls;
    return;
  }
  if (ctx_.options.poll_lag) track_polling(e);
  release_progress_gates(e, call_index);
  switch (trace::call_family(e.call)) {
    case Family::send:
      handle_send(e, call_index);
      break;
    case Family::recv:
      handle_recv(e, call_index);
      break;
    case Family::sendrecv:
      handle_sendrecv(e, call_index);
      break;
    case Family::isend:
      handle_isend_irecv(e, call_index, true);
      break;
    case Family::irecv:
      handle_isend_irecv(e, call_index, false);
      break;
    case Family::send_init:
    case Family::recv_init: {
      Request q;
      q.persistent = true;
      q.is_send = trace::call_family(e.call) == Family::send_init;
      q.comm = e.comm;
      q.peer = e.peer;
      q.tag = e.tag;
      q.bytes = e.bytes;
      q.sync = is_synchronous(e.call);
      bool inserted;
      Request& slot = requests_.get_or_insert(e.request, inserted);
      if (!inserted)
        for (Ref r : slot.ops) unhold(r);
      slot = std::move(q);
      break;
    }
    case Family::start:
      handle_start(e, call_index);
      break;
    case Family::request_free:
      free_requests(e);
      break;
    case Family::mprobe:
      handle_mprobe(e, call_index);
      break;
    case Family::mrecv:
      // Imrecv returns a request whose completion carries nothing new.
      if (e.call == Call::Imrecv && e.request != 0) start_nonblocking(e.request, Request{}, kNone);
      break;
    case Family::completion:
      complete(e, call_index);
      break;
    case Family::comm_create:
      if (e.new_comm != trace::kCommNull && !e.members.empty()) ctx_.comms[e.new_comm] = e.members;
      if (e.call == Call::Comm_idup && e.request != 0) start_nonblocking(e.request, Request{}, kNone);
      break;
    case Family::collective:
    case Family::icollective:
      throw Error(fmt::format("rank {} call {}: internal error: collective reached the point-to-point path", rank_,
                              call_index));
    // A persistent collective's init only sets it up; each start reaches on_collective as the
    // nonblocking collective (schedgen.cpp), and its completion is that collective's.
    case Family::collective_init:
    // Calls that move no application data; their time is neither computation nor communication.
    case Family::init:
    case Family::finalize:
    case Family::pcontrol:
    case Family::abort:
    case Family::probe:
    case Family::cancel:
    case Family::comm_free:
      break;
  }
  count_initiation_time(e);
  const bool failed_poll = poll_outcome(e) == Poll::failed;
  // Counted by account_time at the next call, if the loop works between its polls.
  if (failed_poll && ctx_.options.failed_poll_time) chain_.failed_poll_ns = time_inside(e);
  // An MPI_Iprobe that found its message hands its lag to the receive that takes it next.
  if (e.call == Call::Iprobe && e.value != 0) {
    chain_.probe_lag_ns = found_lag_ns_;
    chain_.probe_comm = e.comm;
  } else if (!failed_poll) {
    chain_.probe_lag_ns = 0;
    chain_.probe_loop_calc = kNone;
  }
  // An MPI_Probe hands its matching time to the receive that takes its message next.
  chain_.after_blocking_probe = e.call == Call::Probe;
}

void RankBuilder::on_collective(const Event& e, const RankSchedule& schedule, const std::vector<int32_t>& members,
                                int32_t tag, std::vector<uint64_t>& op_vertices, uint64_t call_index) {
  account_time(e);
  if (ctx_.options.times_completions() && !completions_.empty()) resolve_completions(false);
  release_progress_gates(e, call_index);
  chain_.poll_fails = 0;
  chain_.probe_lag_ns = 0;
  chain_.after_blocking_probe = false;
  chain_.probe_loop_calc = kNone;
  // A collective over one rank waits for nobody: all its time is this rank's (an MPI_Allreduce
  // over a one-rank row communicator copies and returns).
  const bool alone = members.size() == 1;
  const bool blocking = trace::call_family(e.call) == Family::collective;
  if (blocking && !alone && ctx_.options.collective_overhead_ns > 0) {
    // MPICH's own work in the call comes before the algorithm's first message.
    chain_.pending_calc_ns += static_cast<uint64_t>(std::llround(ctx_.options.collective_overhead_ns));
    ++ctx_.stats.collective_overhead_calls;
  }
  uint64_t c = flush_calc();
  const uint32_t n = static_cast<uint32_t>(schedule.ops.size());
  // Without an asynchronous progress thread, how many passes of the progress engine an operation
  // of a nonblocking collective waits for before it can start (release_progress_gates).
  const bool gated = !blocking && !alone && !ctx_.options.async_progress;
  std::vector<uint32_t>& level = coll_level_;
  level.assign(n, 0);
  if (gated)
    for (uint32_t k = 0; k < n; ++k) {
      const CollOp& op = schedule.ops[k];
      for (uint32_t d : schedule.deps_of(k))
        level[k] = std::max(level[k], level[d] + (schedule.ops[d].is_send ? 0 : 1));
      if (!op.is_send && op.bytes > ctx_.options.rendezvous_above_bytes) ++level[k];
    }
  // Where an operation's predecessors attach (entry) and what its successors wait for (exit): the
  // operation's vertex, or the calc of its share of the transport's first use before a send or
  // after a receive (Options::first_use). A nonblocking collective's first sends leave inside the
  // call that started it, whose time is computation already; its later sends leave in a pass of
  // the progress engine, like its receives' copies out, which the graph models with warm costs.
  // The receive's share is CPU time of the pass after its arrival, gated like what waits for it.
  // With --completion-time a collective's time after its messages comes from the trace.
  std::vector<uint64_t>& entry = coll_entry_;
  std::vector<uint64_t>& exit = coll_exit_;
  entry.assign(n, kNone);
  exit.assign(n, kNone);
  std::vector<std::pair<uint32_t, uint64_t>>& gated_copies = coll_gated_copies_;  // (level, calc)
  gated_copies.clear();
  const bool first_use_charged = !ctx_.options.completion_time;
  // Options::eager_progress: the eager receives a nonblocking collective's start issues are copied
  // out of the transport's queue by the rank's next call that runs the progress engine, as a
  // point-to-point MPI_Irecv's are (their o_r lands in that call instead of overlapping the
  // computation after the start), and those of the collectives one call completes one after
  // another (chain_collective_copies). A later round's receives are issued in such a pass already
  // (gated at their level). app_nhalo's and app_pcoll's graphs were 0.5-0.6 % below their own
  // traced runs without it, 0.1-0.2 % with it.
  const bool copies_gated = gated && copies_in_progress();
  const auto copied_in_a_pass = [&](uint32_t k) {
    const CollOp& op = schedule.ops[k];
    return copies_gated && !op.is_send && level[k] == 0 && op.bytes <= ctx_.options.rendezvous_above_bytes;
  };
  op_vertices.assign(n, kNone);
  for (uint32_t k = 0; k < n; ++k) {
    const CollOp& op = schedule.ops[k];
    const int32_t peer = members[op.peer];
    uint64_t v = op.is_send ? sink_.send(rank_, op.bytes, static_cast<uint32_t>(peer), tag)
                            : sink_.recv(rank_, op.bytes, static_cast<uint32_t>(peer), tag);
    op_vertices[k] = entry[k] = exit[k] = v;
    const uint64_t first_use_ns =
        first_use(peer, op.bytes, op.is_send, first_use_charged && (!op.is_send || blocking || level[k] > 0));
    if (first_use_ns > 0 && op.is_send) {
      entry[k] = sink_.calc(rank_, first_use_ns);
      sink_.requires_edge(rank_, v, entry[k]);
    } else if (first_use_ns > 0) {
      exit[k] = sink_.calc(rank_, first_use_ns);
      sink_.requires_edge(rank_, exit[k], v);
      if (gated) gated_copies.emplace_back(level[k] + 1, exit[k]);
    }
    auto deps = schedule.deps_of(k);
    if (deps.empty()) sink_.requires_edge(rank_, entry[k], c);
    for (uint32_t d : deps) sink_.requires_edge(rank_, entry[k], exit[d]);
  }
  std::vector<uint32_t> exits = schedule.exits();
  if (blocking) {
    for (uint32_t k : exits) chain_.pending_req.push_back(exit[k]);
    if (exits.empty()) chain_.pending_req.push_back(c);
    count_initiation_time(e, alone);
    return;
  }
  // Nonblocking: the next computation starts once the collective has started; the completion
  // waits for its last operations. What waits for one of its receives waits for progress too, and
  // so does a receive above S, whose handshake needs a pass after it was issued.
  Request q;
  if (gated) {
    GatedCollective gc;
    gc.last_call = call_index;
    const auto gate = [&gc](uint32_t at, uint64_t v) {
      if (gc.levels.size() < at) gc.levels.resize(at);
      gc.levels[at - 1].push_back(v);
    };
    for (uint32_t k = 0; k < n; ++k)
      if (level[k] > 0) gate(level[k], entry[k]);
    for (auto [at, v] : gated_copies) gate(at, v);
    for (uint32_t k = 0; k < n; ++k) {
      if (!copied_in_a_pass(k)) continue;
      gc.copies.push_back(op_vertices[k]);
      ++ctx_.stats.eager_gated_recvs;
    }
    q.copies = gc.copies;
    gc.copies_waiting = !gc.copies.empty();
    if (!gc.levels.empty() || gc.copies_waiting) progress_gated_.push_back(std::move(gc));
  }
  bool starts_later = false;  // an operation that waits for nothing of the collective but a later call
  for (uint32_t k = 0; k < schedule.ops.size(); ++k) {
    if (schedule.ops[k].dep_count != 0) continue;
    if (level[k] == 0 && !copied_in_a_pass(k))
      chain_.pending_ireq.push_back(entry[k]);
    else
      starts_later = true;  // waiting for its start would wait for the call that releases it: a cycle
  }
  if (chain_.pending_ireq.empty() || starts_later) chain_.pending_req.push_back(c);
  for (uint32_t k : exits) q.ops.push_back(exit[k]);
  if (q.ops.empty()) q.ops.push_back(c);
  q.active = true;
  bool inserted;
  requests_.get_or_insert(e.request, inserted) = std::move(q);
  count_initiation_time(e, alone);
}

void RankBuilder::end_of_stream() {
  // Nonblocking operations never completed in the trace still happened: receives with a known
  // source and tag are kept (nothing waits for them); wildcard ones cannot be placed.
  requests_.for_each([&](uint64_t, Request& q) {
    if (!q.active) return;
    ++ctx_.stats.never_completed;
    if (q.record < 0) return;
    uint32_t rec = static_cast<uint32_t>(q.record);
    const RecvRecord& r = records_[rec];
    if (r.state != RecvRecord::State::Posted || r.resolved) return;
    int32_t src, tag;
    uint64_t bytes;
    if (status_of(nullptr, r.src_pattern, r.tag_pattern, r.capacity, src, tag, bytes))
      resolve(rec, src, tag, bytes);
    else
      lose_record(rec);
  });
  // Anything still unresolved (cannot happen: every posted receive belongs to a request or was
  // resolved at once) would block the rest.
  for (uint32_t idx : std::vector<uint32_t>(posted_))
    if (!records_[idx].resolved) lose_record(idx);
  release_ready();
  if (!completions_.empty()) resolve_completions(false);
  if (chain_.pending_calc_ns > 0 || !chain_.pending_req.empty() || !chain_.pending_ireq.empty() ||
      !chain_.pending_lag.empty())
    flush_calc();
  // The other threads' final computations, in thread order (the chain that ended the trace first).
  std::vector<uint32_t> others;
  for (const ThreadChain& c : parked_)
    if (c.thread != thread_) others.push_back(c.thread);
  std::sort(others.begin(), others.end());
  for (uint32_t t : others) {
    switch_thread(t, 0);  // parked: the start is not used
    if (!completions_.empty()) resolve_completions(false);
    if (chain_.pending_calc_ns > 0 || !chain_.pending_req.empty() || !chain_.pending_ireq.empty() ||
        !chain_.pending_lag.empty())
      flush_calc();
  }
  if (!completions_.empty()) resolve_completions(true);
}

// ---------------------------------------------------------------- time inside completion calls
//
// A blocking call that completes receives waits until their messages are there and then works on
// them: MPICH's progress pass, completing the requests, copying eager data out, the rest of a
// collective's schedule. The graph models the wait, and charges each receive its o as it arrives,
// which overlaps whatever the rank computes before the call; the work after the arrival is on no
// chain. In the bundled apps on the VM an MPI_Waitall took 1-3 us that way, and every graph came
// out 0.3-1.5 % below its own traced run, by about the time inside the short blocking calls of its
// critical rank (docs/schedgen.md, "Time inside completion calls"). With
// Options::completion_time the part of the call after the last of its messages was sent counts
// as computation after the call. The send times come from the other ranks' events: while a
// completion waits for them, the driver reads this rank in start-time order (awaits_send_times),
// so they are all read by the time its next call is, apart from a rank held at a collective; a
// completion whose send times are not all known yet waits for a later call.

void RankBuilder::note_completion(const Event& e, const std::vector<uint64_t>& recvs, uint64_t entry) {
  if (recvs.empty() || e.t_end_ns <= e.t_start_ns) {
    for (uint64_t v : recvs) ctx_.sent_times[rank_].erase(v);
    return;
  }
  completions_.push_back(PendingCompletion{thread_, e.t_start_ns, e.t_end_ns, tracer_build_ns(e),
                                           static_cast<uint32_t>(completion_recvs_.size()),
                                           static_cast<uint32_t>(recvs.size()), entry});
  completion_recvs_.insert(completion_recvs_.end(), recvs.begin(), recvs.end());
}

void RankBuilder::note_blocking_receive(const Event& e, uint32_t rec, uint64_t entry, Ref send) {
  if (records_[rec].state != RecvRecord::State::Created) {
    ++ctx_.stats.completion_untimed;  // left out, or behind an earlier wildcard receive
    return;
  }
  std::vector<uint64_t> done{records_[rec].vertex};
  if (floors_completions() && send != kNone) done.push_back(send);
  note_completion(e, done, entry);
}

void RankBuilder::resolve_completions(bool at_end) {
  FlatIdMap<uint64_t>& sent = ctx_.sent_times[rank_];
  size_t kept = 0;
  uint32_t kept_recvs = 0;  // the kept completions' receives move to the front of the pool
  for (size_t i = 0; i < completions_.size(); ++i) {
    PendingCompletion pc = completions_[i];
    const uint64_t* recvs = completion_recvs_.data() + pc.first;
    bool known = pc.thread == thread_, untimed = false;
    uint64_t last_sent = 0;
    for (uint32_t k = 0; known && k < pc.count; ++k) {
      const uint64_t* ns = sent.find(recvs[k]);
      if (!ns)
        known = false;
      else if (*ns == kUntimed)
        untimed = true;
      else
        last_sent = std::max(last_sent, *ns);
    }
    if (!known && !untimed && !at_end) {
      std::copy(recvs, recvs + pc.count, completion_recvs_.begin() + kept_recvs);  // never forward
      pc.first = kept_recvs;
      kept_recvs += pc.count;
      completions_[kept++] = pc;
      continue;
    }
    for (uint32_t k = 0; k < pc.count; ++k) sent.erase(recvs[k]);
    if (!known || untimed) {
      ++ctx_.stats.completion_untimed;
      continue;
    }
    const uint64_t from = std::max(pc.entry_ns, last_sent);
    const uint64_t after = pc.exit_ns > from ? pc.exit_ns - from : 0;
    const uint64_t own = std::min(after, pc.own_ns);
    ctx_.stats.tracer_time_ns += own;
    ++ctx_.stats.completion_calls;
    ctx_.stats.completion_ns += after - own;
    if (!floors_completions()) {
      chain_.pending_calc_ns += after - own;
      continue;
    }
    // The floor: a calc from the call's entry that the next computation waits for, beside the
    // modelled wait. Resolved at a later call than the next one, it holds back a later computation.
    if (after > own && pc.entry_vertex != kNone) {
      const uint64_t f = sink_.calc(rank_, after - own);
      sink_.requires_edge(rank_, f, pc.entry_vertex);
      chain_.pending_req.push_back(f);
    }
  }
  completions_.resize(kept);
  completion_recvs_.resize(kept_recvs);
}

void RankBuilder::count_collective_completion(const Event& e, uint64_t peers_entry_ns) {
  const uint64_t from = std::max(e.t_start_ns, peers_entry_ns);
  uint64_t after = e.t_end_ns > from ? e.t_end_ns - from : 0;
  const uint64_t own = std::min(after, tracer_build_ns(e));
  ctx_.stats.tracer_time_ns += own;
  after -= own;
  // collective_overhead_ns stands for part of the same work and was charged at the call's start.
  const auto charged = static_cast<uint64_t>(std::llround(std::max(0.0, ctx_.options.collective_overhead_ns)));
  ++ctx_.stats.completion_calls;
  if (after <= charged) return;
  chain_.pending_calc_ns += after - charged;
  ctx_.stats.completion_ns += after - charged;
}

uint64_t RankBuilder::tracer_build_ns(const Event& e) const {
  return tracer_time_ ? tracer_time_->record_ns[static_cast<uint8_t>(e.call)] : 0;
}

}  // namespace llamp::schedgen
