// The driver: reads all ranks' event streams in one merged start-time order (so messages are
// matched soon after they are sent and only in-flight ones are held), gathers each collective call
// from all its members before expanding it, and reports what could not be paired.
#include "llamp/schedgen/schedgen.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <span>
#include <unordered_map>

#include "collective_spec.hpp"
#include "generation_context.hpp"
#include "llamp/error.hpp"
#include "llamp/trace_dir.hpp"
#include "rank_builder.hpp"

namespace llamp::schedgen {

namespace {

using trace::Event;

struct Leftover {
  UnmatchedOp op;
  uint64_t op_seq;
};

// A collective call waiting for its members.
struct Instance {
  std::vector<int32_t> members;
  std::vector<Event> events;
  std::vector<uint64_t> call_index;
  std::vector<bool> arrived;
  uint32_t count = 0;
};

// MPI 4.0 persistent collectives of one rank: the init event of each live request, and the
// nonblocking collectives that starting them performs, read before the start itself.
struct PersistentCollectives {
  std::unordered_map<uint64_t, Event> inits;  // request id -> its MPI_X_init event
  std::deque<Event> queue;                    // the MPI_IX events a start performs, then the start itself; not read yet
  Event current;                              // the one being read
};

// A rank's events are taken in a burst while they start no later than kBurstNs after the next
// rank's: ranks in lockstep would otherwise switch at every event. Matching does not depend on the
// order; the window only bounds how far one rank runs ahead (and so the in-flight messages).
constexpr uint64_t kBurstNs = 1'000'000;

class Pass {
 public:
  Pass(trace::TraceDir& td, graph::GraphSink* target, const Options& opts, Stats& stats, const DropSet* drop)
      : td_(td), opts_(opts), stats_(stats), n_(td.meta.ranks), ctx_(target, opts, stats, n_, drop) {
    builders_.reserve(n_);
    if (opts.tracer_time)
      for (uint32_t r = 0; r < n_; ++r) tracer_times_.push_back(tracer_time(td.path, r));
    for (uint32_t r = 0; r < n_; ++r) builders_.emplace_back(r, ctx_, opts.tracer_time ? &tracer_times_[r] : nullptr);
    cur_.assign(n_, nullptr);
    call_index_.assign(n_, 0);
    stalled_.assign(n_, false);
    persistent_.resize(n_);
    if (opts.allow_truncated && !td.truncated_ranks().empty()) burst_ns_ = 0;
  }

  void run();
  std::vector<Leftover> leftovers() const;
  void finish() { ctx_.sink.finish(); }
  uint64_t size_mismatches() const { return ctx_.size_mismatches; }
  const std::vector<UnmatchedOp>& lost_recvs() const { return ctx_.lost_recvs; }

 private:
  struct HeapItem {
    uint64_t t;
    uint32_t rank;
    bool operator>(const HeapItem& o) const { return t != o.t ? t > o.t : rank > o.rank; }
  };
  void advance(uint32_t r);
  const Event* next_event(uint32_t r);
  bool track_persistent(uint32_t r, const Event& e);
  bool arrive(uint32_t r, const Event& e, uint64_t call_index);
  void expand(uint64_t comm, Instance& inst);
  uint64_t started_by(uint32_t r, const Event& e) const;
  [[noreturn]] void report_stalled();

  trace::TraceDir& td_;
  const Options& opts_;
  Stats& stats_;
  uint32_t n_;
  GenerationContext ctx_;
  std::vector<TracerTime> tracer_times_;  // per rank, with --tracer-time
  std::vector<RankBuilder> builders_;
  std::vector<const Event*> cur_;
  std::vector<uint64_t> call_index_;
  std::vector<bool> stalled_;
  std::vector<PersistentCollectives> persistent_;
  std::priority_queue<HeapItem, std::vector<HeapItem>, std::greater<>> heap_;
  std::map<std::pair<uint64_t, uint64_t>, Instance> instances_;
  bool cut_ = false;
  // With a truncation cut coming, ranks are read in exact start-time order so the cut is sharp.
  uint64_t burst_ns_ = kBurstNs;
  RankSchedule schedule_;
};

const Event* Pass::next_event(uint32_t r) {
  PersistentCollectives& p = persistent_[r];
  if (p.queue.empty()) return td_.ranks[r].next();
  p.current = std::move(p.queue.front());
  p.queue.pop_front();
  return &p.current;
}

// A persistent collective's start performs the nonblocking collective with the init's arguments
// (MPICH 4.0.2 builds it with that collective's algorithm selection, MPIR_I<coll>_sched_impl with
// is_persistent set). So a start of such requests is read as those MPI_IX calls, of zero duration
// at the start's entry, followed by the start itself: the start's own time then comes after the
// operations it started, as an MPI_IX call's does. Members match these calls in the order they
// start them, as MPI requires, among their other collectives. Returns true when the start was
// queued that way (read it again from the queue, not now).
bool Pass::track_persistent(uint32_t r, const Event& e) {
  PersistentCollectives& p = persistent_[r];
  const trace::Family f = trace::call_family(e.call);
  if ((e.flags & trace::kFlagFailed) || (p.inits.empty() && f != trace::Family::collective_init)) return false;
  // Start and Request_free list their requests; a single one may come as `request`.
  const std::span<const uint64_t> ids = e.requests.empty() && e.request != 0 ? std::span<const uint64_t>(&e.request, 1)
                                                                             : std::span<const uint64_t>(e.requests);
  switch (f) {
    case trace::Family::collective_init:
      if (e.request != 0) p.inits[e.request] = e;
      return false;
    case trace::Family::start: {
      const size_t before = p.queue.size();
      for (uint64_t id : ids) {
        auto it = p.inits.find(id);
        if (it == p.inits.end()) continue;  // a point-to-point request
        Event c = it->second;
        c.call = *trace::started_collective(c.call);
        c.t_start_ns = c.t_end_ns = e.t_start_ns;
        c.thread = e.thread;
        c.request = id;
        c.flags |= kFlagPersistentStart;
        p.queue.push_back(std::move(c));
      }
      if (p.queue.size() == before) return false;
      p.queue.push_back(e);  // the start's point-to-point requests and its own time
      return true;
    }
    case trace::Family::request_free:
      for (uint64_t id : ids) p.inits.erase(id);
      return false;
    default:
      return false;
  }
}

void Pass::advance(uint32_t r) {
  cur_[r] = next_event(r);
  if (cur_[r]) {
    heap_.push({cur_[r]->t_start_ns, r});
  } else if (td_.ranks[r].truncated() && opts_.allow_truncated) {
    // The first truncated rank to run out sets the cut: events are taken in start-time order, so
    // every rank has now been read up to this time and no further.
    cut_ = true;
  }
}

void Pass::run() {
  ctx_.sink.begin(n_);
  for (uint32_t r = 0; r < n_; ++r) advance(r);
  while (!heap_.empty() && !cut_) {
    uint32_t r = heap_.top().rank;
    heap_.pop();
    for (;;) {
      const Event* e = cur_[r];
      // A rank whose last completion call still needs its messages' send times (time inside
      // completion calls) goes on only in start-time order, so that by its next call the other
      // ranks have been read up to it. Reading every rank in that order all the time cost twice
      // the time in cache misses (16 ranks), and bursts without this, rescanning the calls left.
      const uint64_t burst = builders_[r].awaits_send_times() ? 0 : burst_ns_;
      if (!heap_.empty() && e->t_start_ns > heap_.top().t + burst) {
        heap_.push({e->t_start_ns, r});
        break;
      }
      // What the persistent queue holds (the collectives a start performs, then the start again)
      // takes the start's call index and is not counted as an event again.
      const bool queued = e == &persistent_[r].current;
      const uint64_t call_index = queued ? call_index_[r] - 1 : call_index_[r]++;
      if (!queued) ++stats_.events;
      trace::Family f = trace::call_family(e->call);
      if (!queued &&
          (f == trace::Family::collective_init || f == trace::Family::start || f == trace::Family::request_free) &&
          track_persistent(r, *e)) {
        // read again from the queue, after the collectives it started
      } else if ((f == trace::Family::collective || f == trace::Family::icollective) &&
                 !(e->flags & trace::kFlagFailed)) {
        if (!arrive(r, *e, call_index)) {
          stalled_[r] = true;  // resumes when the last member arrives
          break;
        }
      } else {
        builders_[r].on_event(*e, call_index);
      }
      if (cut_) break;
      cur_[r] = next_event(r);
      if (!cur_[r]) {
        if (td_.ranks[r].truncated() && opts_.allow_truncated) cut_ = true;
        break;
      }
    }
  }
  if (!cut_ && !instances_.empty()) report_stalled();
  stats_.dropped_collectives += instances_.size();
  for (auto& b : builders_) b.end_of_stream();
}

// Adds rank r's collective to its instance; expands the instance once every member is there.
// Returns true if r can go on.
bool Pass::arrive(uint32_t r, const Event& e, uint64_t ci) {
  uint64_t seq = builders_[r].next_collective_seq(e.comm);
  auto key = std::make_pair(e.comm, seq);
  auto it = instances_.find(key);
  if (it == instances_.end()) {
    Instance inst;
    inst.members = ctx_.members(e.comm, r, ci);
    inst.events.resize(inst.members.size());
    inst.call_index.resize(inst.members.size());
    inst.arrived.resize(inst.members.size());
    it = instances_.emplace(key, std::move(inst)).first;
  }
  Instance& inst = it->second;
  auto pos = std::find(inst.members.begin(), inst.members.end(), static_cast<int32_t>(r));
  if (pos == inst.members.end())
    throw Error(fmt::format("rank {} call {}: {} on communicator {:#x}, which does not include rank {}", r, ci,
                            trace::call_name(e.call), e.comm, r));
  size_t i = static_cast<size_t>(pos - inst.members.begin());
  inst.events[i] = e;
  inst.call_index[i] = ci;
  inst.arrived[i] = true;
  if (++inst.count < inst.members.size()) return false;
  Instance done = std::move(inst);
  instances_.erase(it);
  expand(e.comm, done);
  for (int32_t m : done.members)
    if (static_cast<uint32_t>(m) != r) {
      stalled_[m] = false;
      if (!cut_) advance(static_cast<uint32_t>(m));
    }
  return true;
}

void Pass::expand(uint64_t comm, Instance& inst) {
  const uint32_t p = static_cast<uint32_t>(inst.members.size());
  CollCall call{comm, inst.members, {}, inst.call_index};
  for (const Event& e : inst.events) call.events.push_back(&e);
  CollSpec spec = make_spec(call, opts_.bcast_segment_bytes);
  Algorithm algo = opts_.algorithms[spec.kind];
  int32_t tag = ctx_.tags.collective(comm);
  // Sends of each (sender, receiver) pair in order; the k-th pairs with the receiver's k-th receive.
  std::unordered_map<uint64_t, std::vector<uint64_t>> sends;
  std::vector<std::vector<uint64_t>> vertices(p);
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> recvs(p);  // (peer, op) per member
  const bool blocking = trace::call_family(inst.events[0].call) == trace::Family::collective;
  // Options::completion_time: sends made after a receive of the collective (a later round), and
  // the members that receive one of them or a message above S, whose arrival the trace cannot time
  // (a rendezvous receive's data moves after its handshake).
  std::unordered_map<uint64_t, std::vector<bool>> forwarded;
  std::vector<bool> untimed(p, false);
  std::vector<std::vector<bool>> is_exit(p);  // per member and operation: one of its last
  for (uint32_t i = 0; i < p; ++i) {
    build_schedule(algo, spec, i, schedule_);
    builders_[inst.members[i]].on_collective(inst.events[i], schedule_, inst.members, tag, vertices[i],
                                             inst.call_index[i]);
    if (opts_.completion_time) {
      is_exit[i].assign(schedule_.ops.size(), false);
      for (uint32_t k : schedule_.exits()) is_exit[i][k] = true;
    }
    for (uint32_t k = 0; k < schedule_.ops.size(); ++k) {
      const CollOp& op = schedule_.ops[k];
      if (op.is_send) {
        sends[(uint64_t{i} << 32) | op.peer].push_back(vertices[i][k]);
        if (opts_.completion_time) {
          // Sent after one of the collective's receives: when, the trace does not say.
          bool after_recv = false;
          for (uint32_t d : schedule_.deps_of(k)) after_recv = after_recv || !schedule_.ops[d].is_send;
          forwarded[(uint64_t{i} << 32) | op.peer].push_back(after_recv);
        }
      } else {
        recvs[i].emplace_back(op.peer, k);
        if (opts_.completion_time && op.bytes > opts_.rendezvous_above_bytes) untimed[i] = true;
      }
    }
  }
  std::unordered_map<uint64_t, size_t> used;
  uint64_t messages = 0;
  for (uint32_t i = 0; i < p; ++i)
    for (auto [peer, k] : recvs[i]) {
      uint64_t key = (uint64_t{peer} << 32) | i;
      auto& list = sends[key];
      size_t& pos = used[key];
      if (pos >= list.size())
        throw Error(
            fmt::format("internal error: {} algorithm '{}' has rank {} receive more messages from rank {} than "
                        "it sends",
                        coll_kind_name(spec.kind), algorithm_name(algo), i, peer));
      if (opts_.completion_time && forwarded[key][pos]) untimed[i] = true;
      ctx_.sink.message(static_cast<uint32_t>(inst.members[peer]), list[pos++], static_cast<uint32_t>(inst.members[i]),
                        vertices[i][k]);
      ++messages;
      // A nonblocking collective's first-round message leaves during the call that started it on
      // its sender. Only its last operations are what a completion call waits for.
      if (opts_.completion_time && !blocking && is_exit[i][k])
        set_sent_time(ctx_.sent_times[static_cast<uint32_t>(inst.members[i])], vertices[i][k],
                      untimed[i] ? kUntimed : started_by(static_cast<uint32_t>(inst.members[peer]), inst.events[peer]));
    }
  for (auto& [key, list] : sends)
    if (used[key] != list.size())
      throw Error(fmt::format("internal error: {} algorithm '{}' leaves sends of rank {} to rank {} unreceived",
                              coll_kind_name(spec.kind), algorithm_name(algo), key >> 32, key & 0xffffffffu));
  // A blocking collective: each member's time after the last other member entered.
  if (opts_.completion_time && blocking && p > 1)
    for (uint32_t i = 0; i < p; ++i) {
      if (untimed[i]) {
        ++stats_.completion_untimed;
        continue;
      }
      uint64_t peers_entry = 0;
      for (uint32_t j = 0; j < p; ++j)
        if (j != i) peers_entry = std::max(peers_entry, inst.events[j].t_start_ns);
      builders_[inst.members[i]].count_collective_completion(inst.events[i], peers_entry);
    }
  ++stats_.collectives;
  stats_.collective_messages += messages;
}

// When member `r`'s call that started the nonblocking collective `e` ended. A persistent
// collective's event is a copy made at its MPI_Start/MPI_Startall's entry (track_persistent); the
// start itself is still at the back of the rank's persistent queue while its collectives are read.
uint64_t Pass::started_by(uint32_t r, const Event& e) const {
  const std::deque<Event>& q = persistent_[r].queue;
  if (!q.empty() && trace::call_family(q.back().call) == trace::Family::start && q.back().t_start_ns == e.t_start_ns)
    return q.back().t_end_ns;
  return e.t_end_ns;
}

void Pass::report_stalled() {
  std::string list;
  uint32_t shown = 0;
  for (const auto& [key, inst] : instances_) {
    if (shown++ == opts_.max_listed) break;
    std::string waiting, missing;
    for (size_t i = 0; i < inst.members.size(); ++i) {
      if (inst.arrived[i])
        waiting += fmt::format("{}rank {} (call {}, {})", waiting.empty() ? "" : ", ", inst.members[i],
                               inst.call_index[i], collective_label(inst.events[i]));
      else
        missing += fmt::format("{}{}", missing.empty() ? "" : ", ", inst.members[i]);
    }
    list += fmt::format("\n  collective #{} on communicator {:#x}: {} wait for rank(s) {}", key.second, key.first,
                        waiting, missing);
  }
  throw Error(fmt::format(
      "{} collective call(s) never completed: not every member of the communicator called them (in the same "
      "order){}",
      instances_.size(), list));
}

std::vector<Leftover> Pass::leftovers() const {
  std::vector<Leftover> out;
  ctx_.matcher.for_each_unmatched([&](const P2PKey& k, const PendingOp& op, bool is_send) {
    uint32_t rank = static_cast<uint32_t>(is_send ? k.src : k.dst);
    out.push_back(
        {UnmatchedOp{is_send, rank, op.call_index, k.comm, is_send ? k.dst : k.src, k.tag, op.bytes}, op.op_seq});
  });
  std::sort(out.begin(), out.end(), [](const Leftover& a, const Leftover& b) {
    return std::tie(a.op.call_index, a.op.rank) < std::tie(b.op.call_index, b.op.rank);
  });
  return out;
}

std::string describe(const UnmatchedOp& u) {
  if (u.is_send)
    return fmt::format("rank {} call {}: send to rank {}, comm {:#x}, tag {}, {} bytes", u.rank, u.call_index, u.peer,
                       u.comm, u.tag, u.bytes);
  return fmt::format("rank {} call {}: receive from {}, comm {:#x}, tag {}, {} bytes", u.rank, u.call_index,
                     u.peer == trace::kAnySource ? std::string("ANY_SOURCE") : fmt::format("rank {}", u.peer), u.comm,
                     u.tag == trace::kAnyTag ? std::string("ANY_TAG") : std::to_string(u.tag), u.bytes);
}

[[noreturn]] void throw_unmatched(const std::vector<Leftover>& left, const std::vector<UnmatchedOp>& lost,
                                  uint32_t max_listed) {
  uint64_t sends = 0, recvs = lost.size();
  for (const auto& l : left) (l.op.is_send ? sends : recvs)++;
  std::string list;
  uint32_t shown = 0;
  for (const auto& l : left) {
    if (shown++ == max_listed) break;
    list += "\n  " + describe(l.op);
  }
  for (const auto& u : lost) {
    if (shown++ >= max_listed) break;
    list += "\n  " + describe(u) + " (never completed: which message it took is unknown)";
  }
  throw Error(
      fmt::format("{} send(s) and {} receive(s) have no partner; the first ones:{}\n"
                  "A trace with these cannot be turned into a complete graph; --allow-unmatched drops them "
                  "(and counts them).",
                  sends, recvs, list));
}

// Calls the tracer only counted leave their communication out of the graph: an error, or with
// allow_untraced_calls a warning.
void check_untraced_calls(const trace::TraceDir& td, const Options& opts, Stats& stats) {
  std::string list;
  uint32_t count = 0;
  for (uint32_t r = 0; r < td.meta.ranks; ++r) {
    const auto calls = trace::read_untraced_calls(td.path, r);
    if (calls.empty()) continue;
    if (count++ < opts.max_listed) list += fmt::format("\n  rank {}: {}", r, trace::describe_untraced_calls(calls));
  }
  if (count == 0) return;
  const std::string what = fmt::format(
      "{}: {} rank(s) made MPI calls llamp does not trace (docs/tracer.md); the graph would lack their "
      "communication:{}",
      td.path, count, list);
  if (!opts.allow_untraced_calls)
    throw Error(what + "\n--allow-untraced-calls builds it anyway (their time counts as computation).");
  stats.warnings.push_back(what);
}

void check_truncation(const trace::TraceDir& td, const Options& opts) {
  std::string list;
  uint32_t count = 0;
  for (const auto& r : td.ranks) {
    if (!r.truncated()) continue;
    if (count++ < opts.max_listed)
      list += fmt::format("\n  rank {}: {}: offset {}: {}", r.rank(), r.path(), r.damage()->offset, r.damage()->reason);
  }
  if (count && !opts.allow_truncated)
    throw Error(
        fmt::format("{} rank trace(s) are truncated:{}\n--allow-truncated cuts every rank where the first "
                    "truncated one ends and drops the messages crossing the cut.",
                    count, list));
}

}  // namespace

Stats generate(const std::string& trace_dir, graph::GraphSink& sink, const Options& options) {
  trace::TraceDir td = trace::TraceDir::open(trace_dir);
  check_truncation(td, options);
  Stats stats;
  stats.ranks = td.meta.ranks;
  check_untraced_calls(td, options, stats);
  auto note_mismatches = [&](const Pass& pass) {
    if (pass.size_mismatches())
      stats.warnings.push_back(
          fmt::format("{} message(s) were received with a byte count other than the one sent; "
                      "the graph uses the sent size",
                      pass.size_mismatches()));
  };
  if (!options.allow_unmatched && !options.allow_truncated) {
    Pass pass(td, &sink, options, stats, nullptr);
    pass.run();
    auto left = pass.leftovers();
    if (!left.empty() || !pass.lost_recvs().empty()) throw_unmatched(left, pass.lost_recvs(), options.max_listed);
    pass.finish();
    note_mismatches(pass);
    return stats;
  }
  // First pass: find what has no partner, writing nothing; the second leaves those out.
  DropSet drop;
  {
    Stats probe;
    Pass pass(td, nullptr, options, probe, nullptr);
    pass.run();
    for (const auto& l : pass.leftovers()) drop.add(l.op.rank, l.op_seq);
  }
  for (auto& r : td.ranks) r.rewind();
  Pass pass(td, &sink, options, stats, &drop);
  pass.run();
  if (!pass.leftovers().empty())
    throw Error("internal error: the second pass left messages unpaired that the first pass paired");
  pass.finish();
  note_mismatches(pass);
  stats.dropped_recvs += pass.lost_recvs().size();
  if (stats.dropped_sends + stats.dropped_recvs)
    stats.warnings.push_back(fmt::format("dropped {} send(s) and {} receive(s) without a partner", stats.dropped_sends,
                                         stats.dropped_recvs));
  if (stats.dropped_collectives)
    stats.warnings.push_back(
        fmt::format("dropped {} collective call(s) cut off by the truncation", stats.dropped_collectives));
  return stats;
}

}  // namespace llamp::schedgen
