#pragma once
// Schedgen: an llamp trace directory → an MPI execution graph (paper 000, Sec. II-A), written
// through a streaming GraphSink. Semantics and conventions: docs/schedgen.md.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "llamp/graph_sink.hpp"
#include "llamp/schedgen/collectives.hpp"

namespace llamp::schedgen {

// The transport's first use in one size band (llamp-loggp's measurement.first_use): the first
// `messages` messages of a directed pair of ranks that reach into the band cost their sender
// `send_ns` and their receiver `recv_ns` more than warm ones (docs/schedgen.md, "The transport's
// first use").
struct FirstUseBand {
  uint64_t bytes = 0;  // the band's upper edge; it begins above the previous band's
  uint32_t messages = 0;
  double send_ns = 0;
  double recv_ns = 0;
};
constexpr std::size_t kMaxFirstUseBands = 8;

struct Options {
  AlgorithmChoice algorithms;               // per collective; Auto = MPICH 4.0.2's choice
  uint64_t bcast_segment_bytes = 64 << 10;  // pipelined_ring bcast segments
  bool allow_unmatched = false;             // drop sends/receives without a partner (counted) instead of failing
  bool allow_truncated = false;             // cut every rank where the first truncated rank ends
  // Build the graph although ranks made MPI calls the tracer does not trace (untraced-NNNNN.json:
  // one-sided, partitioned, ...): their communication is then missing (a warning).
  bool allow_untraced_calls = false;
  uint32_t max_listed = 10;  // how many offending operations an error lists
  // A completion found by polling (MPI_Test*, MPI_Iprobe, MPI_Improbe after at least one failed
  // poll) is noticed on average half a polling period after it happened (one and a half for the
  // probes, which look before they progress): the graph adds that lag
  // (docs/schedgen.md, "Polling"). Off: the completion is noticed the instant it happens.
  bool poll_lag = true;
  // The time inside calls that return without waiting for another rank (MPI_Isend, MPI_Irecv,
  // MPI_Start*, *_init, MPI_Request_free, MPI_Cancel, MPI_Imrecv, nonblocking collectives' start,
  // collectives over one rank) is the rank's own CPU time, and counts as computation (docs/schedgen.md, "Computation").
  // Off (with failed_poll_time off too): only the gaps between calls do, as in LogGOPSim's Schedgen.
  bool initiation_time = true;
  // A poll that finds nothing (MPI_Test* without a completion, MPI_Iprobe/MPI_Improbe without a
  // message) returns at once after one pass of the library's progress: its whole time is the
  // rank's CPU, like a call that cannot wait, and counts as computation (docs/schedgen.md,
  // "Computation"). Off: the polling loop's chain has only the gaps between its polls.
  bool failed_poll_time = true;
  // CPU time a blocking collective call costs beyond the point-to-point messages of its algorithm
  // (MPICH's argument checks, algorithm selection, buffers, reduction set-up; llamp-loggp measures
  // it as o_coll). Added as computation at the start of every blocking collective over two or more
  // ranks; nonblocking ones have their start counted by initiation_time already.
  double collective_overhead_ns = 0;
  // CPU time of a blocking MPI_Probe / MPI_Mprobe once its message is there (matching it in
  // MPICH's unexpected queue; llamp-loggp measures it as o_probe). The probe's own record is mostly
  // the wait for that message, which the receive it hands over to models, so the graph had no time
  // for it at all. Added as computation after the probed receive (docs/schedgen.md, "Probes").
  double probe_overhead_ns = 0;
  // The tracer's own time that its stamps cannot leave out (the sample in the trace's
  // tracer-cost-NNNNN.json): encoding each event, after the call's end stamp, is taken off the gap
  // that follows; building the event, after the MPI library returned, off the time inside a call
  // counted as computation (docs/schedgen.md, "The tracer's own time"). Off by default: on five
  // call-heavy apps the graphs were already below the untraced runs at L0 (MPI's own costs in an
  // application run on cold caches exceed the hot-loop o the graph charges), and taking the tracer
  // off lowered them further (RRMSE +0.06 to +0.41 points).
  bool tracer_time = false;
  // A nonblocking (or persistent) collective's later rounds progress only inside MPI calls, as in
  // MPICH without an asynchronous progress thread (its default, MPIR_CVAR_ASYNC_PROGRESS=0): an
  // operation of the schedule that waits for a receive of it starts no earlier than the rank's
  // next MPI call after the one that started the collective (docs/schedgen.md, "Progress of
  // nonblocking collectives"). On: they progress the moment their messages arrive (LogGOPSim's
  // assumption; an MPI with asynchronous progress or offloaded collectives).
  bool async_progress = false;
  // The rendezvous threshold (llamp-loggp's S): a nonblocking receive of more than this many bytes
  // (MPI_Irecv, a persistent receive's start, a nonblocking collective's receive) takes its message
  // with a handshake that MPICH runs in its progress engine: the request-to-send that arrives while
  // the rank computes is answered at the rank's next MPI call that progresses, so the receive
  // starts no earlier than that call (docs/schedgen.md, "Progress of rendezvous receives").
  // UINT64_MAX (the default, no S given): every handshake starts when its request arrives
  // (LogGOPSim's assumption). --async-progress turns this off too.
  uint64_t rendezvous_above_bytes = UINT64_MAX;
  // An eager message that arrives while the rank computes stays in the transport's queue until the
  // rank's progress engine copies it out, inside an MPI call (MPICH over UCX's shared memory
  // without an asynchronous progress thread): a nonblocking receive's o_r is paid no earlier than
  // the rank's first MPI call that progresses after the post, and the eager receives one call
  // completes are copied out one after another (docs/schedgen.md, "Progress of eager receives").
  // Off (the default, LogGOPSim's assumption): a receive's o_r starts when its message arrives and
  // overlaps the computation before the completion call. --async-progress turns this off too, and
  // so does completion_time, whose time from the trace holds the copies already.
  bool eager_progress = false;
  // The time a blocking completion call (MPI_Wait*, MPI_Recv, MPI_Sendrecv's receive, a blocking
  // collective) spent after the last message it completes had been sent is the rank's CPU:
  // MPICH's progress pass, completing the requests, copying eager data out, a collective's
  // schedule; 1-3 us per MPI_Waitall in the bundled apps on cold caches, where the graph charges
  // that CPU nothing (a receive's o overlaps the computation before the wait). On: that time,
  // exit - max(entry, latest send), counts as computation after the call, the send times taken
  // from the trace (the sender's call end; a nonblocking collective's peers' start ends; a
  // blocking collective's peers' entries, less collective_overhead_ns). Ranks must share a clock
  // (one node, or synchronised clocks); a message the trace shows sent after the call ended adds
  // nothing. docs/schedgen.md, "Time inside completion calls".
  bool completion_time = false;
  // A floor under a blocking point-to-point completion call (MPI_Wait*, MPI_Recv, MPI_Sendrecv):
  // it ends no earlier than its traced time after the last of its messages was ready, from its
  // entry, beside the modelled wait and messages (the later of the two counts, so nothing is
  // charged twice). Ready: a receive once its send's call ended, a rendezvous send once the
  // receiver's call that answers it began, an eager send at once. What the floor holds is the
  // rank's own time inside the call that the model's fast-state constants leave out, such as a
  // host's slow spell. Calls that complete a collective or a synchronous send are left out
  // (completion_untimed). Ignored with completion_time. docs/schedgen.md, "A floor under
  // completion calls".
  bool completion_floor = false;
  // Whether completion calls are timed against their messages from the trace (either option).
  bool times_completions() const { return completion_time || completion_floor; }
  // The transport's first use, ascending by bytes (at most kMaxFirstUseBands). A message reaches
  // into the first band and into every band on its side of S that begins below its size: an eager
  // message touches the transport's buffers up to its size; a rendezvous one sends a small
  // handshake (the first band) and its data by the rendezvous protocol (the bands above S). The sender's
  // share is charged to blocking sends only, as computation before the send: the time inside a
  // nonblocking send is counted already (initiation_time). The receiver's share is computation
  // after the call that completed the receive; not with completion_time, which counts that time
  // from the trace. Empty: warm costs only.
  std::vector<FirstUseBand> first_use;
  // A rendezvous handshake that a progressing call starts right after the application computed
  // for a while runs on cold caches: MPICH's and UCX's state, the kernel's CMA path and the page
  // tables it walks were evicted by the computation. On the AMD VM of stop 51 the handshake of an
  // 18 KiB message took 3.1 us longer after 250 us of sweeping 4 MiB than after 250 us of spinning,
  // once per call whatever the number of messages, and re-touching the message buffers did not
  // help. llamp-loggp measures the excess (o_rndv_cold_ns, after computing
  // cold_handshake_after_ns). A nonblocking receive above S gated at a call (rendezvous_above_bytes)
  // whose computation before it, since the rank's previous MPI call, lasted at least
  // cold_handshake_after_ns starts that much later: once per call, since all such receives of
  // the call wait for one extra calc. 0: warm handshakes only (docs/schedgen.md, "Cold
  // handshakes"). Not with completion_time, whose time from the trace holds it.
  uint64_t cold_handshake_ns = 0;
  uint64_t cold_handshake_after_ns = 0;
};

// One send or receive without a partner, as named in errors.
struct UnmatchedOp {
  bool is_send = false;
  uint32_t rank = 0;        // world rank that called it
  uint64_t call_index = 0;  // position of the MPI call in that rank's trace (0-based)
  uint64_t comm = 0;
  int32_t peer = 0;  // destination (send) or actual/posted source (receive), world rank
  int32_t tag = 0;   // user tag (-1: ANY_TAG never resolved)
  uint64_t bytes = 0;
};

struct Stats {
  uint32_t ranks = 0;
  uint64_t events = 0;  // trace events processed
  uint64_t calc_vertices = 0;
  uint64_t send_vertices = 0;  // all sends in the graph (point-to-point + collective)
  uint64_t recv_vertices = 0;
  uint64_t edges = 0;
  uint64_t p2p_messages = 0;               // matched application send/receive pairs
  uint64_t sync_acks = 0;                  // acknowledgements added for synchronous sends (MPI_Ssend ...)
  uint64_t polled_completions = 0;         // completions found by a polling loop, with their detection lag
  uint64_t first_poll_completions = 0;     // ... of them found at the loop's first poll
  uint64_t tracer_time_ns = 0;             // the tracer's own time taken off the computation
  uint64_t poll_lag_ns = 0;                // the sum of those lags (their caps)
  uint64_t initiation_calls = 0;           // calls that cannot wait whose time counts as computation
  uint64_t initiation_ns = 0;              // the time inside them (all ranks)
  uint64_t failed_poll_calls = 0;          // polls that found nothing, whose time counts as computation
  uint64_t failed_poll_ns = 0;             // the time inside them (all ranks)
  uint64_t completion_calls = 0;           // completion_time/floor: blocking calls timed (time after their messages)
  uint64_t completion_ns = 0;              // that time (all ranks; completion_floor: the floors' total)
  uint64_t completion_untimed = 0;         // ... calls whose messages' send times the trace did not give
  uint64_t collective_overhead_calls = 0;  // blocking collective calls charged collective_overhead_ns (per rank)
  uint64_t probe_overhead_calls = 0;       // blocking probes charged probe_overhead_ns
  uint64_t first_use_sends = 0;            // sends charged a first use of the transport (blocking, collectives')
  uint64_t first_use_recvs = 0;            // receives charged one
  uint64_t first_use_ns = 0;               // what they were charged (all ranks)
  uint64_t progress_gated_ops = 0;         // nonblocking collectives' operations that wait for the next MPI call
  uint64_t rendezvous_gated_recvs = 0;     // receives above S whose handshake waits for a progressing call
  uint64_t eager_gated_recvs = 0;          // eager receives whose o_r waits for a progressing call
  uint64_t eager_chained_recvs = 0;        // ... copied out after another one the same call completed
  uint64_t cold_handshake_calls = 0;       // calls whose rendezvous handshakes start cold (cold_handshake_ns)
  uint64_t cold_handshake_recvs = 0;       // ... the gated receives above S that wait for it
  uint64_t collective_messages = 0;
  uint64_t collectives = 0;    // collective calls (instances, not per rank)
  uint64_t dropped_sends = 0;  // --allow-unmatched
  uint64_t dropped_recvs = 0;
  uint64_t dropped_collectives = 0;  // incomplete at a truncation cut
  uint64_t proc_null_ops = 0;        // MPI_PROC_NULL operations (no vertex)
  uint64_t failed_calls = 0;         // calls that returned an error (skipped)
  uint64_t never_completed = 0;      // nonblocking operations whose completion is not in the trace
  std::vector<std::string> warnings;
};

// Reads the trace directory and writes the graph into `sink` (begin ... finish). Throws llamp::Error
// for truncated ranks (unless allow_truncated), corrupt files (file and offset), unmatched messages
// (unless allow_unmatched; the message lists the first ones) and inconsistent collectives.
// With allow_unmatched/allow_truncated the trace is read twice: once to find what has no partner,
// once to write the graph without it.
Stats generate(const std::string& trace_dir, graph::GraphSink& sink, const Options& options);

}  // namespace llamp::schedgen
