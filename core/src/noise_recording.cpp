#include "llamp/noise_recording.hpp"

#include <fmt/format.h>

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
    const auto& d = list[i];
    if (!d.is_array() || d.size() != 2 || !d[0].is_number_unsigned() || !d[1].is_number_unsigned())
      throw Error(
          fmt::format("{}: detours[{}]: expected [start_ns, length_ns] (whole numbers), got {}", where, i, d.dump()));
    const uint64_t start = d[0].get<uint64_t>(), length = d[1].get<uint64_t>();
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
  return r;
}

}  // namespace

NoiseRecording parse_noise_recording(std::string_view text, const std::string& name) {
  const nlohmann::json j = detail::parse_document(text, name, kFormat, kVersion, "an llamp-noise recording");
  for (auto& [key, value] : j.items())
    if (key != "format" && key != "version" && key != "duration_ns" && key != "threshold_ns" && key != "method" &&
        key != "ranks")
      throw Error(fmt::format("{}: unknown key \"{}\"", name, key));
  NoiseRecording rec;
  rec.duration_ns = whole(j, "duration_ns", name);
  if (rec.duration_ns == 0) throw Error(fmt::format("{}: \"duration_ns\" must be positive", name));
  rec.threshold_ns = whole(j, "threshold_ns", name);
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
    ranks.push_back({{"rank", n.rank}, {"host", n.host}, {"cpu", n.cpu}, {"dropped", n.dropped}, {"detours", detours}});
  }
  return {{"format", kFormat},  {"version", kVersion}, {"duration_ns", r.duration_ns}, {"threshold_ns", r.threshold_ns},
          {"method", r.method}, {"ranks", ranks}};
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
