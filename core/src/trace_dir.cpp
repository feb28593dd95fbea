#include "llamp/trace_dir.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "llamp/error.hpp"

namespace llamp::trace {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Writes beside and renames, so a crash never leaves half a file; `what` names it in errors.
void write_json_atomically(const std::string& path, const json& j, const char* what) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw Error(fmt::format("{}: cannot write {}", tmp, what));
    out << j.dump(2) << '\n';
  }
  fs::rename(tmp, path);
}

}  // namespace

void write_meta(const std::string& dir, const TraceMeta& m) {
  json j = {{"format", "llamp-trace"},
            {"version", m.version},
            {"ranks", m.ranks},
            {"hosts", m.hosts},
            {"command", m.command},
            {"mpi_library", m.mpi_library},
            {"clock", m.clock},
            {"start_unix_ns", m.start_unix_ns},
            {"thread_level", m.thread_level},
            {"counters", m.counters},
            {"job_id", m.job_id}};
  write_json_atomically((fs::path(dir) / kMetaFileName).string(), j, "trace metadata");
}

std::string tracer_cost_file_name(uint32_t rank) { return fmt::format("tracer-cost-{:05d}.json", rank); }

void write_tracer_cost(const std::string& dir, uint32_t rank, const TracerCost& cost) {
  json record = json::object();
  for (const auto& [call, ns] : cost.record_ns) record[call] = ns;
  const json j = {{"format", "llamp-tracer-cost"},
                  {"rank", rank},
                  {"samples", cost.samples},
                  {"encode_ns", cost.encode_ns},
                  {"record_ns", record},
                  {"blocks_written_during_run", cost.blocks_written_during_run},
                  {"write_cpu_ns_during_run", cost.write_cpu_ns_during_run}};
  write_json_atomically((fs::path(dir) / tracer_cost_file_name(rank)).string(), j, "the tracer's cost");
}

std::optional<TracerCost> read_tracer_cost(const std::string& dir, uint32_t rank) {
  const std::string path = (fs::path(dir) / tracer_cost_file_name(rank)).string();
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    const json j = json::parse(in);
    if (j.at("format") != "llamp-tracer-cost") throw Error(fmt::format("{}: not an llamp tracer cost file", path));
    TracerCost c;
    c.samples = j.at("samples").get<uint64_t>();
    c.encode_ns = j.at("encode_ns").get<double>();
    for (const auto& [call, ns] : j.at("record_ns").items()) c.record_ns[call] = ns.get<double>();
    c.blocks_written_during_run = j.value("blocks_written_during_run", uint64_t{0});
    c.write_cpu_ns_during_run = j.value("write_cpu_ns_during_run", uint64_t{0});
    if (c.encode_ns < 0) throw Error(fmt::format("{}: negative encode_ns", path));
    return c;
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: malformed tracer cost: {}", path, e.what()));
  }
}

std::string untraced_calls_file_name(uint32_t rank) { return fmt::format("untraced-{:05d}.json", rank); }

void write_untraced_calls(const std::string& dir, uint32_t rank, const std::vector<UntracedCall>& calls) {
  json list = json::array();
  for (const auto& c : calls) list.push_back({{"name", c.name}, {"what", c.what}, {"count", c.count}});
  const json j = {{"format", "llamp-untraced-calls"}, {"rank", rank}, {"calls", list}};
  write_json_atomically((fs::path(dir) / untraced_calls_file_name(rank)).string(), j, "the untraced calls");
}

std::vector<UntracedCall> read_untraced_calls(const std::string& dir, uint32_t rank) {
  const std::string path = (fs::path(dir) / untraced_calls_file_name(rank)).string();
  std::ifstream in(path);
  if (!in) return {};
  try {
    const json j = json::parse(in);
    if (j.at("format") != "llamp-untraced-calls")
      throw Error(fmt::format("{}: not an llamp untraced-calls file", path));
    std::vector<UntracedCall> out;
    for (const auto& c : j.at("calls"))
      out.push_back({c.at("name").get<std::string>(), c.at("what").get<std::string>(), c.at("count").get<uint64_t>()});
    return out;
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: malformed untraced-calls file: {}", path, e.what()));
  }
}

std::string describe_untraced_calls(const std::vector<UntracedCall>& calls) {
  // Grouped by what they are, in order of first appearance.
  std::vector<std::string> groups;
  for (const auto& c : calls)
    if (std::find(groups.begin(), groups.end(), c.what) == groups.end()) groups.push_back(c.what);
  std::string out;
  for (const auto& g : groups) {
    std::string names;
    for (const auto& c : calls)
      if (c.what == g) names += fmt::format("{}{} x{}", names.empty() ? "" : ", ", c.name, c.count);
    out += fmt::format("{}{} ({})", out.empty() ? "" : "; ", names, g);
  }
  return out;
}

TraceMeta read_meta(const std::string& dir) {
  const std::string path = (fs::path(dir) / kMetaFileName).string();
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: missing; is '{}' an llamp trace directory?", path, dir));
  json j;
  try {
    j = json::parse(in);
    if (j.at("format") != "llamp-trace") throw Error(fmt::format("{}: not llamp trace metadata", path));
    TraceMeta m;
    m.version = j.at("version").get<uint32_t>();
    if (m.version != kFormatVersion)
      throw Error(fmt::format("{}: trace format version {} is not supported", path, m.version));
    m.ranks = j.at("ranks").get<uint32_t>();
    m.hosts = j.value("hosts", std::vector<std::string>{});
    m.command = j.value("command", std::vector<std::string>{});
    m.mpi_library = j.value("mpi_library", "");
    m.clock = j.value("clock", "CLOCK_MONOTONIC");
    m.start_unix_ns = j.value("start_unix_ns", uint64_t{0});
    m.thread_level = j.value("thread_level", "");
    m.counters = j.value("counters", std::vector<std::string>{});
    m.job_id = j.value("job_id", "");
    return m;
  } catch (const json::exception& e) {
    throw Error(fmt::format("{}: malformed trace metadata: {}", path, e.what()));
  }
}

TraceDir TraceDir::open(const std::string& dir) {
  TraceDir t;
  t.path = dir;
  t.meta = read_meta(dir);
  t.ranks.reserve(t.meta.ranks);
  for (uint32_t r = 0; r < t.meta.ranks; ++r) {
    const std::string file = (fs::path(dir) / rank_file_name(r)).string();
    if (!fs::exists(file))
      throw Error(fmt::format("{}: missing (meta.json says {} ranks; rank {} wrote no trace)", file, t.meta.ranks, r));
    t.ranks.emplace_back(file);
    if (t.ranks.back().rank() != r || t.ranks.back().world_size() != t.meta.ranks)
      throw Error(fmt::format("{}: header says rank {} of {}, expected rank {} of {}", file, t.ranks.back().rank(),
                              t.ranks.back().world_size(), r, t.meta.ranks));
  }
  return t;
}

std::vector<uint32_t> TraceDir::truncated_ranks() const {
  std::vector<uint32_t> out;
  for (const auto& r : ranks)
    if (r.truncated()) out.push_back(r.rank());
  return out;
}

}  // namespace llamp::trace
