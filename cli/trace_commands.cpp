#include "trace_commands.hpp"

#include <fmt/format.h>

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "llamp/error.hpp"
#include "llamp/trace_dir.hpp"
#include "llamp/units.hpp"

namespace llamp::cli {
namespace {

using nlohmann::json;
using trace::Call;
using trace::Event;

// Bytes this event puts on the wire as a point-to-point send (collectives excluded:
// their traffic depends on the algorithm schedgen picks).
uint64_t p2p_bytes_sent(const Event& e) {
  switch (trace::call_family(e.call)) {
    case trace::Family::send:
    case trace::Family::isend:
    case trace::Family::sendrecv:
      return e.peer >= 0 ? e.bytes : 0;
    default:
      return 0;
  }
}

struct RankSummary {
  uint32_t rank = 0;
  uint64_t events = 0;
  std::array<uint64_t, trace::kNumCalls> calls{};
  uint64_t p2p_bytes = 0;
  uint64_t first_ns = 0, last_ns = 0;
  uint64_t file_bytes = 0, raw_bytes = 0;
  std::optional<std::string> problem;  // truncation or corruption, with offset
};

RankSummary summarize(trace::RankTraceReader& r) {
  RankSummary s;
  s.rank = r.rank();
  s.file_bytes = r.file_bytes();
  s.raw_bytes = r.raw_bytes();
  if (r.damage()) s.problem = fmt::format("truncated at offset {}: {}", r.damage()->offset, r.damage()->reason);
  try {
    while (const Event* e = r.next()) {
      if (s.events == 0) s.first_ns = e->t_start_ns;
      ++s.events;
      ++s.calls[static_cast<size_t>(e->call)];
      s.p2p_bytes += p2p_bytes_sent(*e);
      s.last_ns = std::max(s.last_ns, e->t_end_ns);
    }
  } catch (const Error& err) {
    s.problem = err.what();
  }
  return s;
}

json calls_json(const std::array<uint64_t, trace::kNumCalls>& calls) {
  json j = json::object();
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i]) j[std::string(trace::call_name(static_cast<Call>(i)))] = calls[i];
  return j;
}

void run_info(const std::string& dir, bool as_json) {
  auto t = trace::TraceDir::open(dir);
  std::vector<RankSummary> ranks;
  for (auto& r : t.ranks) ranks.push_back(summarize(r));

  std::array<uint64_t, trace::kNumCalls> total{};
  uint64_t events = 0, file_bytes = 0, raw_bytes = 0, p2p = 0, first = UINT64_MAX, last = 0;
  std::vector<uint32_t> damaged;
  for (const auto& s : ranks) {
    for (size_t i = 0; i < total.size(); ++i) total[i] += s.calls[i];
    events += s.events;
    file_bytes += s.file_bytes;
    raw_bytes += s.raw_bytes;
    p2p += s.p2p_bytes;
    if (s.events) first = std::min(first, s.first_ns), last = std::max(last, s.last_ns);
    if (s.problem) damaged.push_back(s.rank);
  }
  const double duration = events ? double(last - first) : 0.0;
  std::vector<std::pair<uint32_t, std::vector<trace::UntracedCall>>> untraced;
  for (uint32_t r = 0; r < t.meta.ranks; ++r)
    if (auto calls = trace::read_untraced_calls(dir, r); !calls.empty()) untraced.emplace_back(r, std::move(calls));

  if (as_json) {
    json j = {{"trace_dir", dir},
              {"ranks", t.meta.ranks},
              {"events", events},
              {"duration_ns", duration},
              {"p2p_bytes_sent", p2p},
              {"file_bytes", file_bytes},
              {"raw_bytes", raw_bytes},
              {"compression_ratio", file_bytes ? double(raw_bytes) / double(file_bytes) : 0.0},
              {"bytes_per_event", events ? double(file_bytes) / double(events) : 0.0},
              {"truncated_ranks", damaged},
              {"calls", calls_json(total)},
              {"hosts", t.meta.hosts},
              {"command", t.meta.command},
              {"mpi_library", t.meta.mpi_library},
              {"counters", t.meta.counters}};
    json per_rank = json::array();
    for (const auto& s : ranks) {
      json r = {{"rank", s.rank},
                {"events", s.events},
                {"duration_ns", s.events ? s.last_ns - s.first_ns : 0},
                {"p2p_bytes_sent", s.p2p_bytes},
                {"file_bytes", s.file_bytes},
                {"calls", calls_json(s.calls)}};
      if (s.problem) r["problem"] = *s.problem;
      per_rank.push_back(r);
    }
    j["per_rank"] = per_rank;
    json untraced_json = json::array();
    for (const auto& [rank, calls] : untraced)
      for (const auto& c : calls)
        untraced_json.push_back({{"rank", rank}, {"name", c.name}, {"what", c.what}, {"count", c.count}});
    j["untraced_calls"] = untraced_json;
    fmt::print("{}\n", j.dump(2));
    return;
  }

  fmt::print("trace {}\n", dir);
  if (!t.meta.command.empty()) {
    std::string cmd;
    for (const auto& a : t.meta.command) cmd += (cmd.empty() ? "" : " ") + a;
    fmt::print("  command    {}\n", cmd);
  }
  fmt::print("  ranks      {}\n", t.meta.ranks);
  fmt::print("  events     {}\n", events);
  fmt::print("  duration   {}\n", units::format_time_ns(duration));
  fmt::print("  p2p sent   {}\n", units::format_bytes(double(p2p)));
  fmt::print("  size       {} on disk, {} encoded, compression {:.1f}x, {:.2f} bytes/event\n",
             units::format_bytes(double(file_bytes)), units::format_bytes(double(raw_bytes)),
             file_bytes ? double(raw_bytes) / double(file_bytes) : 0.0,
             events ? double(file_bytes) / double(events) : 0.0);
  if (!t.meta.counters.empty()) {
    std::string names;
    for (const auto& c : t.meta.counters) names += (names.empty() ? "" : ", ") + c;
    fmt::print("  counters   {}\n", names);
  }
  fmt::print("  calls (all ranks; per rank min..max):\n");
  for (size_t i = 0; i < total.size(); ++i) {
    if (!total[i]) continue;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& s : ranks) lo = std::min(lo, s.calls[i]), hi = std::max(hi, s.calls[i]);
    fmt::print("    {:<28} {:>10}   {}..{}\n", trace::call_name(static_cast<Call>(i)), total[i], lo, hi);
  }
  if (damaged.empty()) {
    fmt::print("  all ranks complete\n");
  } else {
    for (const auto& s : ranks)
      if (s.problem) fmt::print("  rank {} is TRUNCATED: {} ({} events readable)\n", s.rank, *s.problem, s.events);
  }
  for (const auto& [rank, calls] : untraced)
    fmt::print("  rank {} made calls llamp does not trace: {}\n", rank, trace::describe_untraced_calls(calls));
}

std::string join_u64(const std::vector<uint64_t>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ";") + std::to_string(x);
  return s;
}
std::string join_i32(const std::vector<int32_t>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ";") + std::to_string(x);
  return s;
}
std::string join_i64(const std::vector<int64_t>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ";") + std::to_string(x);
  return s;
}
std::string completions_text(const Event& e) {
  std::string s;
  for (const auto& c : e.completions)
    s += fmt::format("{}{}:{}:{}:{}:{}{}", s.empty() ? "" : ";", c.index, c.request, c.source, c.tag, c.bytes,
                     c.cancelled ? ":cancelled" : "");
  return s;
}

json event_json(uint32_t rank, const Event& e) {
  json j = {{"rank", rank}, {"call", trace::call_name(e.call)}, {"t_start_ns", e.t_start_ns}, {"t_end_ns", e.t_end_ns}};
  if (e.thread) j["thread"] = e.thread;
  if (e.comm != trace::kCommWorld) j["comm"] = e.comm;
  if (e.peer != trace::kNoRank) j["peer"] = e.peer;
  if (e.tag != trace::kNoRank) j["tag"] = e.tag;
  if (e.bytes) j["bytes"] = e.bytes;
  if (e.root != trace::kNoRank) j["root"] = e.root;
  if (e.peer2 != trace::kNoRank) j["peer2"] = e.peer2;
  if (e.tag2 != trace::kNoRank) j["tag2"] = e.tag2;
  if (e.bytes2) j["bytes2"] = e.bytes2;
  if (e.request) j["request"] = e.request;
  if (!e.requests.empty()) j["requests"] = e.requests;
  if (!e.completions.empty()) {
    json cs = json::array();
    for (const auto& c : e.completions)
      cs.push_back({{"index", c.index},
                    {"request", c.request},
                    {"source", c.source},
                    {"tag", c.tag},
                    {"bytes", c.bytes},
                    {"cancelled", c.cancelled}});
    j["completions"] = cs;
  }
  if (!e.send_counts.empty()) j["send_counts"] = e.send_counts;
  if (!e.recv_counts.empty()) j["recv_counts"] = e.recv_counts;
  if (e.new_comm != trace::kCommNull) j["new_comm"] = e.new_comm;
  if (!e.members.empty()) j["members"] = e.members;
  if (!e.remote_members.empty()) j["remote_members"] = e.remote_members;
  if (!e.counters.empty()) j["counters"] = e.counters;
  if (e.flags) j["flags"] = e.flags;
  if (e.value) j["value"] = e.value;
  if (!e.sources.empty()) j["sources"] = e.sources;
  if (!e.destinations.empty()) j["destinations"] = e.destinations;
  return j;
}

void print_event(const std::string& format, uint32_t rank, const Event& e) {
  if (format == "json") {
    fmt::print("{}\n", event_json(rank, e).dump());
  } else if (format == "csv") {
    fmt::print("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", rank,
               trace::call_name(e.call), e.t_start_ns, e.t_end_ns, e.thread, e.comm, e.peer, e.tag, e.bytes, e.root,
               e.peer2, e.tag2, e.bytes2, e.request, join_u64(e.requests), completions_text(e), join_u64(e.send_counts),
               join_u64(e.recv_counts), e.new_comm == trace::kCommNull ? std::string() : std::to_string(e.new_comm),
               join_i32(e.members), join_i32(e.remote_members), join_i64(e.counters), e.flags, e.value,
               join_i32(e.sources), join_i32(e.destinations));
  } else {
    std::string line = fmt::format("{:>4} {:>16} {:>8} {:<24}", rank, e.t_start_ns, e.t_end_ns - e.t_start_ns,
                                   trace::call_name(e.call));
    json j = event_json(rank, e);
    for (const char* k : {"rank", "call", "t_start_ns", "t_end_ns"}) j.erase(k);
    if (!j.empty()) line += " " + j.dump();
    fmt::print("{}\n", line);
  }
}

void run_dump(const std::string& dir, std::optional<uint32_t> only_rank, const std::string& format) {
  auto t = trace::TraceDir::open(dir);
  if (only_rank && *only_rank >= t.meta.ranks)
    throw Error(fmt::format("--rank {}: the trace has ranks 0..{}", *only_rank, t.meta.ranks - 1));
  if (format == "csv")
    fmt::print(
        "rank,call,t_start_ns,t_end_ns,thread,comm,peer,tag,bytes,root,peer2,tag2,bytes2,request,requests,"
        "completions,send_counts,recv_counts,new_comm,members,remote_members,counters,flags,value,sources,"
        "destinations\n");
  else if (format == "text")
    fmt::print("rank     t_start_ns  dur_ns call                     fields\n");
  for (auto& r : t.ranks) {
    if (only_rank && r.rank() != *only_rank) continue;
    while (const Event* e = r.next()) print_event(format, r.rank(), *e);
    if (r.damage())
      fmt::print(stderr, "llamp: warning: {}: truncated at offset {}: {}\n", r.path(), r.damage()->offset,
                 r.damage()->reason);
  }
}

}  // namespace

void register_trace_commands(CLI::App& app) {
  auto* trace_cmd = app.add_subcommand("trace", "Inspect a trace directory written by libllamptrace.so");
  trace_cmd->require_subcommand(1);

  auto* info = trace_cmd->add_subcommand("info", "Ranks, events, per-call counts, bytes, duration, truncation");
  static std::string info_dir;
  static bool info_json = false;
  info->add_option("DIR", info_dir, "Trace directory")->required()->check(CLI::ExistingDirectory);
  info->add_flag("--json", info_json, "Machine-readable output");
  info->callback([] { run_info(info_dir, info_json); });

  auto* dump = trace_cmd->add_subcommand("dump", "Print every event");
  static std::string dump_dir;
  static std::optional<uint32_t> dump_rank;
  static std::string dump_format = "text";
  dump->add_option("DIR", dump_dir, "Trace directory")->required()->check(CLI::ExistingDirectory);
  dump->add_option("--rank", dump_rank, "Only this rank");
  dump->add_option("--format", dump_format, "text, csv or json (one object per line)")
      ->check(CLI::IsMember({"text", "csv", "json"}));
  dump->callback([] { run_dump(dump_dir, dump_rank, dump_format); });
}

}  // namespace llamp::cli
