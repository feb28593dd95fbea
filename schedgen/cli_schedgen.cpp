// The `llamp schedgen` subcommand: options → schedgen::Options, the output format from the file
// name, and a summary of what was written. The graph goes to "<out>.partial" first and is renamed
// only when complete, so a failed run never leaves a plausible-looking graph behind.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>

#include "llamp/error.hpp"
#include "llamp/graph_io.hpp"
#include "llamp/schedgen/cli.hpp"
#include "llamp/schedgen/schedgen.hpp"
#include "llamp/units.hpp"

namespace llamp::schedgen {

namespace {

struct CliArgs {
  std::string trace_dir;
  std::string output;
  std::vector<std::string> algos;
  std::string bcast_segment = "64KiB";
  bool allow_unmatched = false;
  bool allow_truncated = false;
  bool allow_untraced_calls = false;
  bool no_poll_lag = false;
  bool no_initiation_time = false;
  bool no_failed_poll_time = false;
  bool tracer_time = false;
  bool completion_time = false;
  bool completion_floor = false;
  bool async_progress = false;
  bool eager_progress = false;
  std::string collective_overhead = "0ns";
  std::string probe_overhead = "0ns";
  std::string rendezvous_threshold = "inf";
  std::vector<std::string> first_use;
  std::string cold_handshake = "0ns:0ns";
};

// One --first-use band: BYTES:MESSAGES:SEND:RECV, e.g. 512B:64:27us:4us.
FirstUseBand parse_first_use_band(const std::string& text) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  const std::string what = fmt::format("--first-use {}", text);
  if (parts.size() != 4) throw Error(fmt::format("{}: expected BYTES:MESSAGES:SEND:RECV, e.g. 512B:64:27us:4us", what));
  FirstUseBand band;
  band.bytes = units::parse_size_bytes(parts[0], what);
  std::size_t used = 0;
  long messages = -1;
  try {
    messages = std::stol(parts[1], &used);
  } catch (const std::exception&) {
  }
  if (messages < 0 || used != parts[1].size() || messages > std::numeric_limits<uint32_t>::max())
    throw Error(fmt::format("{}: MESSAGES '{}' is not a count", what, parts[1]));
  band.messages = static_cast<uint32_t>(messages);
  band.send_ns = units::parse_time_ns(parts[2], what);
  band.recv_ns = units::parse_time_ns(parts[3], what);
  if (band.send_ns < 0 || band.recv_ns < 0) throw Error(fmt::format("{}: costs must not be negative", what));
  return band;
}

// --cold-handshake EXTRA:AFTER, e.g. 3.1us:100us.
void parse_cold_handshake(const std::string& text, Options& opts) {
  const std::string what = fmt::format("--cold-handshake {}", text);
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
    throw Error(fmt::format("{}: expected EXTRA:AFTER, e.g. 3.1us:100us", what));
  const double extra = units::parse_time_ns(text.substr(0, colon), what);
  const double after = units::parse_time_ns(text.substr(colon + 1), what);
  if (extra < 0 || after < 0) throw Error(fmt::format("{}: times must not be negative", what));
  opts.cold_handshake_ns = static_cast<uint64_t>(std::llround(extra));
  opts.cold_handshake_after_ns = static_cast<uint64_t>(std::llround(after));
}

void run(const CliArgs& a) {
  Options opts;
  for (const auto& s : a.algos) opts.algorithms.set(s);
  opts.bcast_segment_bytes = units::parse_size_bytes(a.bcast_segment, "--bcast-segment");
  if (opts.bcast_segment_bytes == 0) throw Error("--bcast-segment must be at least 1 byte");
  opts.allow_unmatched = a.allow_unmatched;
  opts.allow_truncated = a.allow_truncated;
  opts.allow_untraced_calls = a.allow_untraced_calls;
  opts.poll_lag = !a.no_poll_lag;
  opts.initiation_time = !a.no_initiation_time;
  opts.failed_poll_time = !a.no_failed_poll_time;
  opts.tracer_time = a.tracer_time;
  opts.completion_time = a.completion_time;
  opts.completion_floor = a.completion_floor;
  opts.async_progress = a.async_progress;
  opts.eager_progress = a.eager_progress;
  opts.collective_overhead_ns = units::parse_time_ns(a.collective_overhead, "--collective-overhead");
  opts.probe_overhead_ns = units::parse_time_ns(a.probe_overhead, "--probe-overhead");
  if (opts.collective_overhead_ns < 0 || opts.probe_overhead_ns < 0)
    throw Error("--collective-overhead and --probe-overhead must not be negative");
  opts.rendezvous_above_bytes = a.rendezvous_threshold == "inf"
                                    ? std::numeric_limits<uint64_t>::max()
                                    : units::parse_size_bytes(a.rendezvous_threshold, "--S");
  for (const std::string& band : a.first_use) {
    opts.first_use.push_back(parse_first_use_band(band));
    if (opts.first_use.size() > 1 && opts.first_use.back().bytes <= opts.first_use[opts.first_use.size() - 2].bytes)
      throw Error(fmt::format("--first-use {}: bands must be given in ascending order of bytes", band));
  }
  if (opts.first_use.size() > kMaxFirstUseBands)
    throw Error(fmt::format("--first-use: at most {} bands", kMaxFirstUseBands));
  parse_cold_handshake(a.cold_handshake, opts);

  namespace fs = std::filesystem;
  const std::string ext = fs::path(a.output).extension().string();
  if (ext != ".goal" && ext != ".lgr")
    throw Error(fmt::format("-o {}: the output name must end in .goal (GOAL text) or .lgr (binary graph)", a.output));
  const std::string partial = a.output + ".partial";
  std::unique_ptr<graph::GraphSink> sink;
  if (ext == ".goal")
    sink = std::make_unique<graph::GoalTextWriter>(partial);
  else
    sink = std::make_unique<graph::BinaryGraphWriter>(partial);

  auto t0 = std::chrono::steady_clock::now();
  Stats st;
  try {
    st = generate(a.trace_dir, *sink, opts);
    sink.reset();
    fs::rename(partial, a.output);
  } catch (...) {
    sink.reset();
    std::error_code ec;
    fs::remove(partial, ec);
    throw;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{}: {} ranks, {} events -> {} calc, {} send, {} recv vertices, {} edges\n", a.output, st.ranks, st.events,
             st.calc_vertices, st.send_vertices, st.recv_vertices, st.edges);
  fmt::print("  messages: {} point-to-point, {} inside {} collective calls; {:.2f} s ({:.1f} M events/s)\n",
             st.p2p_messages, st.collective_messages, st.collectives, secs,
             secs > 0 ? static_cast<double>(st.events) / secs / 1e6 : 0.0);
  if (st.sync_acks) fmt::print("  {} acknowledgement(s) of synchronous sends added\n", st.sync_acks);
  if (st.polled_completions)
    fmt::print(
        "  {} completion(s) found by polling: lag vertices capped at the expected lag (half a polling period, 1.5 for "
        "MPI_Iprobe/MPI_Improbe), {:.2f} us on "
        "average (llamp analyze resolves them at L0); {} of them found at the loop's first poll\n",
        st.polled_completions, static_cast<double>(st.poll_lag_ns) / 1e3 / st.polled_completions,
        st.first_poll_completions);
  if (st.initiation_calls)
    fmt::print(
        "  {} call(s) that return without waiting (MPI_Isend, MPI_Startall, ...): {:.3f} ms inside them counted "
        "as computation\n",
        st.initiation_calls, static_cast<double>(st.initiation_ns) / 1e6);
  if (st.failed_poll_calls)
    fmt::print("  {} poll(s) that found nothing: {:.3f} ms inside them counted as computation\n", st.failed_poll_calls,
               static_cast<double>(st.failed_poll_ns) / 1e6);
  if (st.completion_calls || st.completion_untimed)
    fmt::print(
        fmt::runtime(
            opts.completion_time
                ? "  {} blocking completion call(s) timed: {:.3f} ms inside them after their last message was sent "
                  "counted as computation; {} call(s) whose send times the trace did not give\n"
                : "  {} blocking completion call(s) floored: {:.3f} ms inside them after their messages were ready, "
                  "each beside its modelled wait; {} call(s) without a floor (a collective, a synchronous send, or "
                  "readiness the trace did not give)\n"),
        st.completion_calls, static_cast<double>(st.completion_ns) / 1e6, st.completion_untimed);
  if (st.tracer_time_ns)
    fmt::print("  {:.3f} ms of the tracer's own time (sampled, tracer-cost-*.json) taken off the computation\n",
               static_cast<double>(st.tracer_time_ns) / 1e6);
  if (st.collective_overhead_calls)
    fmt::print("  {} blocking collective call(s) over several ranks: {} ns of computation added at the start of each\n",
               st.collective_overhead_calls, opts.collective_overhead_ns);
  if (st.progress_gated_ops)
    fmt::print("  {} operation(s) of nonblocking collectives start at the next MPI call (progress)\n",
               st.progress_gated_ops);
  if (st.rendezvous_gated_recvs)
    fmt::print("  {} nonblocking receive(s) above S = {} B start their handshake at the next progressing MPI call\n",
               st.rendezvous_gated_recvs, opts.rendezvous_above_bytes);
  if (st.eager_gated_recvs)
    fmt::print(
        "  {} nonblocking eager receive(s) copied out at the next progressing MPI call, {} after another one "
        "the same call completed\n",
        st.eager_gated_recvs, st.eager_chained_recvs);
  if (st.cold_handshake_calls)
    fmt::print(
        "  {} call(s) started rendezvous handshakes after at least {} ns of computation: their {} receive(s) "
        "start {} ns later (cold caches)\n",
        st.cold_handshake_calls, opts.cold_handshake_after_ns, st.cold_handshake_recvs, opts.cold_handshake_ns);
  if (st.probe_overhead_calls)
    fmt::print("  {} blocking probe(s): {} ns of computation added after each probed message's arrival\n",
               st.probe_overhead_calls, opts.probe_overhead_ns);
  if (st.first_use_sends || st.first_use_recvs)
    fmt::print("  the transport's first use: {} send(s) and {} receive(s) charged {:.3f} ms of computation\n",
               st.first_use_sends, st.first_use_recvs, static_cast<double>(st.first_use_ns) / 1e6);
  if (st.proc_null_ops) fmt::print("  {} MPI_PROC_NULL operation(s) left out\n", st.proc_null_ops);
  if (st.failed_calls) fmt::print("  {} call(s) that returned an MPI error skipped\n", st.failed_calls);
  if (st.never_completed)
    fmt::print("  {} nonblocking operation(s) never completed in the trace (kept, nothing waits for them)\n",
               st.never_completed);
  for (const auto& w : st.warnings) fmt::print(stderr, "llamp schedgen: warning: {}\n", w);
}

}  // namespace

void register_cli(CLI::App& app) {
  auto args = std::make_shared<CliArgs>();
  CLI::App* sub = app.add_subcommand(
      "schedgen", "Turn a trace directory into an MPI execution graph (GOAL text or llamp's binary graph)");
  sub->add_option("trace_dir", args->trace_dir, "Trace directory written by the tracer (meta.json + rank files)")
      ->required();
  sub->add_option("-o,--output", args->output, "Output graph: NAME.goal (GOAL text) or NAME.lgr (binary)")->required();
  sub->add_option("--algo", args->algos,
                  "Collective algorithm, COLLECTIVE=ALGORITHM, repeatable (e.g. allreduce=ring bcast=binomial); "
                  "see docs/schedgen.md for the names and MPICH 4.0's defaults");
  sub->add_option("--bcast-segment", args->bcast_segment, "Segment size of the pipelined_ring bcast (default 64KiB)");
  sub->add_flag("--allow-unmatched", args->allow_unmatched,
                "Drop sends/receives without a partner (counted) instead of failing");
  sub->add_flag("--allow-truncated", args->allow_truncated,
                "Accept truncated rank traces: cut every rank where the first truncated one ends");
  sub->add_flag("--allow-untraced-calls", args->allow_untraced_calls,
                "Build the graph although ranks made MPI calls llamp does not trace (one-sided, partitioned; "
                "untraced-NNNNN.json): their communication is "
                "missing and their time counts as computation");
  sub->add_flag("--async-progress", args->async_progress,
                "Nonblocking and persistent collectives progress on their own (an asynchronous progress thread, "
                "offloaded collectives): a round starts the moment the previous one's messages arrive, instead of "
                "at the rank's next MPI call after the collective's start (MPICH's default)");
  sub->add_flag("--eager-progress,!--no-eager-progress", args->eager_progress,
                "A nonblocking eager receive's o_r (a nonblocking or persistent collective's first-round ones too) is "
                "paid no earlier than the rank's next MPI call that progresses after the post, and the eager receives "
                "one call completes are copied out one after another (MPICH "
                "without an asynchronous progress thread); default: o_r starts when the message arrives, overlapping "
                "the computation before the wait, as in LogGOPSim. Off with --async-progress and --completion-time "
                "(its time from the trace holds the copies)");
  sub->add_flag("--no-poll-lag", args->no_poll_lag,
                "Completions found by polling loops (MPI_Test*, MPI_Iprobe, MPI_Improbe) are noticed the instant "
                "they happen, instead of half a polling period later (1.5 for MPI_Iprobe/MPI_Improbe; a lag llamp "
                "analyze resolves at L0)");
  sub->add_flag("--no-initiation-time", args->no_initiation_time,
                "Do not count the time inside calls that return without waiting (MPI_Isend, MPI_Irecv, MPI_Startall, "
                "*_init, MPI_Request_free, nonblocking collectives' start, collectives over one rank) as computation: "
                "only the gaps between "
                "calls (with --no-failed-poll-time too), as LogGOPSim's Schedgen does");
  sub->add_flag("--no-failed-poll-time", args->no_failed_poll_time,
                "Do not count the time inside polls that found nothing (MPI_Test* without a completion, "
                "MPI_Iprobe/MPI_Improbe without a message) as computation");
  sub->add_flag("--tracer-time", args->tracer_time,
                "Take the tracer's own time off the computation: the sampled time it spends encoding each event "
                "(in the gap after the call) and building it (inside calls counted as computation), from the "
                "trace's tracer-cost-*.json");
  sub->add_flag("--completion-time", args->completion_time,
                "Count the time a blocking completion call (MPI_Wait*, MPI_Recv, MPI_Sendrecv, a blocking "
                "collective) spent after the last message it completes was sent as computation after it (the "
                "send times from the other ranks' events: ranks must share a clock)");
  sub->add_flag("--completion-floor", args->completion_floor,
                "A blocking point-to-point completion call (MPI_Wait*, MPI_Recv, MPI_Sendrecv) ends no earlier, "
                "from its entry, than its traced time after its messages were ready (a receive's send sent, a "
                "rendezvous send's receiver in its answering call), beside the modelled wait: the later counts. "
                "Ranks must share a clock")
      ->excludes("--completion-time");
  sub->add_option("--collective-overhead", args->collective_overhead,
                  "CPU time of a blocking collective call beyond the messages of its algorithm (o_coll of "
                  "llamp-loggp's params.json, e.g. 400ns), added as computation at the start of every blocking "
                  "collective over two or more ranks (default 0ns)");
  sub->add_option("--S", args->rendezvous_threshold,
                  "Rendezvous threshold (S of llamp-loggp's params.json, e.g. 8255B, or inf): a nonblocking "
                  "receive of more than S bytes starts its handshake no earlier than the rank's next MPI call "
                  "that runs the progress engine (MPICH without an asynchronous progress thread; off with "
                  "--async-progress). Default inf: handshakes start when the request arrives, as in LogGOPSim");
  sub->add_option("--probe-overhead", args->probe_overhead,
                  "CPU time of a blocking MPI_Probe/MPI_Mprobe once its message is there (o_probe of llamp-loggp's "
                  "params.json, e.g. 150ns), added as computation after the probed message is received (default "
                  "0ns)");
  sub->add_option("--first-use", args->first_use,
                  "The transport's first use, one size band per option in ascending order, BYTES:MESSAGES:SEND:RECV "
                  "(from llamp-loggp's measurement.first_use, e.g. 512B:64:27us:4us): the first MESSAGES messages of "
                  "each pair of ranks that reach into the band cost the sender (blocking sends only) and the "
                  "receiver that much more computation. A message reaches the first band and every band on its side "
                  "of --S that begins below its size")
      ->allow_extra_args(false);
  sub->add_option("--cold-handshake", args->cold_handshake,
                  "EXTRA:AFTER (o_rndv_cold of llamp-loggp's params.json and the computation it was measured after, "
                  "e.g. 3.1us:100us): a call that starts rendezvous handshakes (a gate of --S) after at least AFTER "
                  "of computation runs them on cold caches, and its receives above S start EXTRA later, once per "
                  "call. Default 0ns:0ns (warm handshakes); not with --completion-time, whose time from the trace "
                  "holds it");
  sub->callback([args] { run(*args); });
}

}  // namespace llamp::schedgen
