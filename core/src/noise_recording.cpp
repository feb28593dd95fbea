#include "llamp/noise_recording.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "json_document.hpp"
#include "llamp/error.hpp"

namespace llamp {
namespace {

constexpr const char* kFormat = "llamp-noise";
constexpr int kVersion = 1;

uint64_t whole(const nlohmann::json& j, const char* key, const std::string& where) {
  if (!j.contains(key)) throw Error(fmt::format("{}: required key \"{}\" is missing", where, key));
  const auto& v = j.at(key);
  if (!v.is_number_unsigned())
    throw Error(fmt::format("{}: \"{}\" must be a whole number ≥ 0, got {}", where, key, v.dump()));
  return v.get<uint64_t>();
}

// Entry i of the list `name`: a pair of whole numbers, [first, second] as the error names them.
std::pair<uint64_t, uint64_t> whole_pair(const nlohmann::json& list, size_t i, const std::string& where,
                                         const char* name, const char* first, const char* second) {
  const auto& p = list[i];
  if (!p.is_array() || p.size() != 2 || !p[0].is_number_unsigned() || !p[1].is_number_unsigned())
    throw Error(
        fmt::format("{}: {}[{}]: expected [{}, {}] (whole numbers), got {}", where, name, i, first, second, p.dump()));
  return {p[0].get<uint64_t>(), p[1].get<uint64_t>()};
}

ThroughputSlices parse_throughput(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw Error(fmt::format("{}: expected an object", where));
  ThroughputSlices t;
  t.slices = whole(j, "slices", where);
  t.base_ns = whole(j, "base_ns", where);
  t.median_ns = whole(j, "median_ns", where);
  t.mean_ns = whole(j, "mean_ns", where);
  if (!j.contains("slow_fraction") || !j["slow_fraction"].is_number())
    throw Error(fmt::format("{}: \"slow_fraction\" must be a number", where));
  t.slow_fraction = j["slow_fraction"].get<double>();
  if (t.slices == 0 || t.base_ns == 0)
    throw Error(fmt::format("{}: \"slices\" and \"base_ns\" must be positive", where));
  if (t.median_ns < t.base_ns)
    throw Error(fmt::format("{}: \"median_ns\" ({}) is below \"base_ns\" ({}), its 10th percentile", where, t.median_ns,
                            t.base_ns));
  if (!(t.slow_fraction >= 0 && t.slow_fraction <= 1))
    throw Error(fmt::format("{}: \"slow_fraction\" must lie in [0, 1], got {}", where, t.slow_fraction));
  return t;
}

// [spin_ns, mean_ns] pairs, spin 0 first and strictly ascending.
std::vector<std::pair<uint64_t, uint64_t>> parse_spin_means(const nlohmann::json& j, const std::string& where,
                                                            const char* key) {
  if (!j.contains(key) || !j[key].is_array() || j[key].empty())
    throw Error(fmt::format("{}: \"{}\" must be a non-empty array of [spin_ns, mean_ns]", where, key));
  const auto& list = j[key];
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const auto [spin, mean] = whole_pair(list, i, where, key, "spin_ns", "mean_ns");
    if (i == 0 && spin != 0)
      throw Error(
          fmt::format("{}: {}[0] is after a spin of {} ns; the first must be the hot block (0)", where, key, spin));
    if (i > 0 && spin <= out.back().first)
      throw Error(fmt::format("{}: {}[{}]: spin {} ns is not above the previous one ({} ns)", where, key, i, spin,
                              out.back().first));
    out.emplace_back(spin, mean);
  }
  return out;
}

ResumeCost parse_resume(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw Error(fmt::format("{}: expected an object", where));
  ResumeCost r;
  r.reps = whole(j, "reps", where);
  if (r.reps == 0) throw Error(fmt::format("{}: \"reps\" must be positive", where));
  r.after_ns = parse_spin_means(j, where, "after_ns");
  if (j.contains("following_ns")) {
    r.following_ns = parse_spin_means(j, where, "following_ns");
    if (r.following_ns.front().second == 0)
      throw Error(fmt::format("{}: following_ns[0]: the hot work after the block took 0 ns", where));
  }
  return r;
}

RankNoise parse_rank(const nlohmann::json& j, const NoiseRecording& rec, size_t index, const std::string& name) {
  const std::string where = fmt::format("{}: ranks[{}]", name, index);
  if (!j.is_object()) throw Error(fmt::format("{}: expected an object", where));
  RankNoise r;
  r.rank = static_cast<uint32_t>(whole(j, "rank", where));
  if (r.rank != index)
    throw Error(fmt::format("{}: \"rank\" is {}, expected {} (ranks in order)", where, r.rank, index));
  if (j.contains("host")) {
    if (!j["host"].is_string()) throw Error(fmt::format("{}: \"host\" must be a string", where));
    r.host = j["host"].get<std::string>();
  }
  if (j.contains("cpu")) {
    if (!j["cpu"].is_number_integer()) throw Error(fmt::format("{}: \"cpu\" must be an integer", where));
    r.cpu = j["cpu"].get<int64_t>();
  }
  if (j.contains("dropped")) r.dropped = whole(j, "dropped", where);
  if (!j.contains("detours") || !j["detours"].is_array())
    throw Error(fmt::format("{}: \"detours\" must be an array of [start_ns, length_ns]", where));
  const auto& list = j["detours"];
  r.detours.reserve(list.size());
  uint64_t free_from = 0;  // where the previous detour ended
  for (size_t i = 0; i < list.size(); ++i) {
    const auto [start, length] = whole_pair(list, i, where, "detours", "start_ns", "length_ns");
    if (start < free_from)
      throw Error(fmt::format("{}: detours[{}] starts at {} ns, before the previous one ends ({} ns)", where, i, start,
                              free_from));
    if (start >= rec.duration_ns)
      throw Error(fmt::format("{}: detours[{}] starts at {} ns, not inside the recording's {} ns", where, i, start,
                              rec.duration_ns));
    if (length == 0) throw Error(fmt::format("{}: detours[{}] has length 0", where, i));
    r.detours.emplace_back(start, length);
    free_from = start + length;
  }
  if (j.contains("throughput")) r.throughput = parse_throughput(j["throughput"], where + ": throughput");
  if (j.contains("resume")) r.resume = parse_resume(j["resume"], where + ": resume");
  return r;
}

}  // namespace

NoiseRecording parse_noise_recording(std::string_view text, const std::string& name) {
  const nlohmann::json j = detail::parse_document(text, name, kFormat, kVersion, "an llamp-noise recording");
  for (auto& [key, value] : j.items())
    if (key != "format" && key != "version" && key != "duration_ns" && key != "threshold_ns" && key != "method" &&
        key != "ranks" && key != "throughput_duration_ns")
      throw Error(fmt::format("{}: unknown key \"{}\"", name, key));
  NoiseRecording rec;
  rec.duration_ns = whole(j, "duration_ns", name);
  if (rec.duration_ns == 0) throw Error(fmt::format("{}: \"duration_ns\" must be positive", name));
  rec.threshold_ns = whole(j, "threshold_ns", name);
  if (j.contains("throughput_duration_ns")) rec.throughput_duration_ns = whole(j, "throughput_duration_ns", name);
  if (j.contains("method")) {
    if (!j["method"].is_string()) throw Error(fmt::format("{}: \"method\" must be a string", name));
    rec.method = j["method"].get<std::string>();
  }
  if (!j.contains("ranks") || !j["ranks"].is_array() || j["ranks"].empty())
    throw Error(fmt::format("{}: \"ranks\" must be a non-empty array", name));
  for (size_t i = 0; i < j["ranks"].size(); ++i) rec.ranks.push_back(parse_rank(j["ranks"][i], rec, i, name));
  return rec;
}

NoiseRecording read_noise_recording(const std::string& path) {
  return parse_noise_recording(detail::read_document(path, "noise recording"), path);
}

nlohmann::json to_json(const NoiseRecording& r) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankNoise& n : r.ranks) {
    nlohmann::json detours = nlohmann::json::array();
    for (auto [start, length] : n.detours) detours.push_back({start, length});
    nlohmann::json rank = {
        {"rank", n.rank}, {"host", n.host}, {"cpu", n.cpu}, {"dropped", n.dropped}, {"detours", detours}};
    if (const auto& t = n.throughput)
      rank["throughput"] = {{"slices", t->slices},
                            {"base_ns", t->base_ns},
                            {"median_ns", t->median_ns},
                            {"mean_ns", t->mean_ns},
                            {"slow_fraction", t->slow_fraction}};
    if (const auto& c = n.resume) {
      nlohmann::json after = nlohmann::json::array();
      for (auto [spin, mean] : c->after_ns) after.push_back({spin, mean});
      rank["resume"] = {{"reps", c->reps}, {"after_ns", after}};
      if (!c->following_ns.empty()) {
        nlohmann::json following = nlohmann::json::array();
        for (auto [spin, mean] : c->following_ns) following.push_back({spin, mean});
        rank["resume"]["following_ns"] = following;
      }
    }
    ranks.push_back(std::move(rank));
  }
  nlohmann::json j = {
      {"format", kFormat},  {"version", kVersion}, {"duration_ns", r.duration_ns}, {"threshold_ns", r.threshold_ns},
      {"method", r.method}, {"ranks", ranks}};
  if (r.throughput_duration_ns) j["throughput_duration_ns"] = r.throughput_duration_ns;
  return j;
}

ThroughputSlices summarize_slices(std::vector<uint64_t> slice_ns) {
  if (slice_ns.empty()) throw Error("summarize_slices: no slices");
  ThroughputSlices t;
  t.slices = slice_ns.size();
  std::sort(slice_ns.begin(), slice_ns.end());
  t.base_ns = slice_ns[(slice_ns.size() - 1) / 10];
  t.median_ns = slice_ns[(slice_ns.size() - 1) / 2];
  t.mean_ns = std::accumulate(slice_ns.begin(), slice_ns.end(), uint64_t{0}) / slice_ns.size();
  const auto slow_from = static_cast<double>(t.base_ns) * kSlowSliceFactor;
  const auto fast = std::lower_bound(slice_ns.begin(), slice_ns.end(), slow_from,
                                     [](uint64_t v, double bound) { return static_cast<double>(v) < bound; });
  t.slow_fraction = static_cast<double>(slice_ns.end() - fast) / static_cast<double>(slice_ns.size());
  return t;
}

double ResumeCost::extra_ns(double w) const {
  if (after_ns.empty() || w <= 0) return 0.0;
  return std::max(0.0, polyline_at(after_ns, w) - static_cast<double>(after_ns.front().second));
}

double ResumeCost::following_slowdown(double w) const {
  if (following_ns.empty() || w <= 0) return 0.0;
  return std::max(0.0, polyline_at(following_ns, w) / following_hot_ns() - 1.0);
}

double noise_fraction(const RankNoise& r, uint64_t duration_ns) {
  double total = 0;
  for (auto [start, length] : r.detours) total += static_cast<double>(length);
  return duration_ns ? total / static_cast<double>(duration_ns) : 0.0;
}

double noise_mean_residual_ns(const RankNoise& r, uint64_t duration_ns) {
  double squares = 0;
  for (auto [start, length] : r.detours) squares += static_cast<double>(length) * static_cast<double>(length);
  return duration_ns ? squares / (2.0 * static_cast<double>(duration_ns)) : 0.0;
}

}  // namespace llamp
