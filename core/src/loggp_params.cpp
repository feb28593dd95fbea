#include "llamp/loggp_params.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "json_document.hpp"
#include "llamp/error.hpp"
#include "llamp/units.hpp"

namespace llamp {
namespace {

constexpr const char* kFormat = "llamp-loggp";
constexpr int kVersion = 1;

double number(const nlohmann::json& j, const std::string& key, const std::string& name) {
  const auto& v = j.at(key);
  if (!v.is_number()) throw Error(fmt::format("{}: \"{}\" must be a number, got {}", name, key, v.dump()));
  double d = v.get<double>();
  if (!std::isfinite(d) || d < 0)
    throw Error(fmt::format("{}: \"{}\" must be a finite non-negative number, got {}", name, key, v.dump()));
  return d;
}

}  // namespace

LogGPParams parse_loggp_params(std::string_view text, const std::string& name) {
  const nlohmann::json j = detail::parse_document(text, name, kFormat, kVersion, "a LogGP parameter file");
  static const char* known[] = {"format",        "version",    "L_ns",      "o_ns",           "g_ns",
                                "G_ns_per_byte", "S_bytes",    "o_send_ns", "o_recv_ns",      "O_ns_per_byte",
                                "o_coll_ns",     "o_probe_ns", "o_rndv_ns", "o_rndv_cold_ns", "measurement"};
  for (auto& [key, value] : j.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) throw Error(fmt::format("{}: unknown key \"{}\"", name, key));
  }
  LogGPParams p;
  for (const char* key : {"L_ns", "o_ns", "g_ns", "G_ns_per_byte", "S_bytes"})
    if (!j.contains(key)) throw Error(fmt::format("{}: required key \"{}\" is missing", name, key));
  p.L_ns = number(j, "L_ns", name);
  p.o_ns = number(j, "o_ns", name);
  p.g_ns = number(j, "g_ns", name);
  p.G_ns_per_byte = number(j, "G_ns_per_byte", name);
  double S = number(j, "S_bytes", name);
  if (S != std::floor(S) || S > 1.8e19)
    throw Error(fmt::format("{}: \"S_bytes\" must be a whole number of bytes, got {}", name, j["S_bytes"].dump()));
  p.S_bytes = static_cast<uint64_t>(S);
  if (j.contains("o_send_ns")) p.o_send_ns = number(j, "o_send_ns", name);
  if (j.contains("o_recv_ns")) p.o_recv_ns = number(j, "o_recv_ns", name);
  if (j.contains("O_ns_per_byte")) p.O_ns_per_byte = number(j, "O_ns_per_byte", name);
  if (j.contains("o_coll_ns")) p.o_coll_ns = number(j, "o_coll_ns", name);
  if (j.contains("o_probe_ns")) p.o_probe_ns = number(j, "o_probe_ns", name);
  if (j.contains("o_rndv_ns")) p.o_rndv_ns = number(j, "o_rndv_ns", name);
  if (j.contains("o_rndv_cold_ns")) p.o_rndv_cold_ns = number(j, "o_rndv_cold_ns", name);
  if (j.contains("measurement")) {
    if (!j["measurement"].is_object()) throw Error(fmt::format("{}: \"measurement\" must be an object", name));
    p.measurement = j["measurement"];
  }
  return p;
}

LogGPParams read_loggp_params(const std::string& path) {
  return parse_loggp_params(detail::read_document(path, "LogGP parameter file"), path);
}

nlohmann::json to_json(const LogGPParams& p) {
  nlohmann::json j{{"format", kFormat}, {"version", kVersion}};
  if (p.L_ns) j["L_ns"] = *p.L_ns;
  if (p.o_ns) j["o_ns"] = *p.o_ns;
  if (p.g_ns) j["g_ns"] = *p.g_ns;
  if (p.G_ns_per_byte) j["G_ns_per_byte"] = *p.G_ns_per_byte;
  if (p.S_bytes) j["S_bytes"] = *p.S_bytes;
  if (p.o_send_ns) j["o_send_ns"] = *p.o_send_ns;
  if (p.o_recv_ns) j["o_recv_ns"] = *p.o_recv_ns;
  if (p.O_ns_per_byte) j["O_ns_per_byte"] = *p.O_ns_per_byte;
  if (p.o_coll_ns) j["o_coll_ns"] = *p.o_coll_ns;
  if (p.o_probe_ns) j["o_probe_ns"] = *p.o_probe_ns;
  if (p.o_rndv_ns) j["o_rndv_ns"] = *p.o_rndv_ns;
  if (p.o_rndv_cold_ns) j["o_rndv_cold_ns"] = *p.o_rndv_cold_ns;
  if (!p.measurement.is_null()) j["measurement"] = p.measurement;
  return j;
}

void set_loggp_flag(LogGPParams& p, std::string_view flag, std::string_view value) {
  while (!flag.empty() && flag.front() == '-') flag.remove_prefix(1);
  std::string f(flag);
  for (char& c : f)
    if (c == '-') c = '_';
  const std::string what = "--" + std::string(flag);
  if (f == "L")
    p.L_ns = units::parse_time_ns(value, what);
  else if (f == "o")
    p.o_ns = units::parse_time_ns(value, what);
  else if (f == "g")
    p.g_ns = units::parse_time_ns(value, what);
  else if (f == "G")
    p.G_ns_per_byte = units::parse_time_ns(value, what + " (time per byte)");
  else if (f == "O")
    p.O_ns_per_byte = units::parse_time_ns(value, what + " (time per byte)");
  else if (f == "o_send")
    p.o_send_ns = units::parse_time_ns(value, what);
  else if (f == "o_recv")
    p.o_recv_ns = units::parse_time_ns(value, what);
  else if (f == "o_coll")
    p.o_coll_ns = units::parse_time_ns(value, what);
  else if (f == "o_probe")
    p.o_probe_ns = units::parse_time_ns(value, what);
  else if (f == "o_rndv")
    p.o_rndv_ns = units::parse_time_ns(value, what);
  else if (f == "o_rndv_cold")
    p.o_rndv_cold_ns = units::parse_time_ns(value, what);
  else if (f == "S")
    p.S_bytes = (value == "inf") ? std::numeric_limits<uint64_t>::max() : units::parse_size_bytes(value, what);
  else
    throw Error(fmt::format(
        "unknown LogGP parameter '{}' (use L, o, g, G, S, o_send, o_recv, O, o_coll, o_probe, o_rndv, o_rndv_cold)",
        flag));
}

LogGP resolve(const LogGPParams& p) {
  auto need = [](const auto& v, const char* flag, const char* key) {
    if (!v)
      throw Error(
          fmt::format("LogGP parameter {} is missing: give --{} or a --params file with \"{}\"", flag, flag, key));
    return *v;
  };
  LogGP r;
  r.L_ns = need(p.L_ns, "L", "L_ns");
  double o = p.o_send_ns && p.o_recv_ns ? 0.0 : need(p.o_ns, "o", "o_ns");
  r.o_send_ns = p.o_send_ns.value_or(o);
  r.o_recv_ns = p.o_recv_ns.value_or(o);
  r.G_ns_per_byte = need(p.G_ns_per_byte, "G", "G_ns_per_byte");
  r.S_bytes = need(p.S_bytes, "S", "S_bytes");
  r.g_ns = p.g_ns.value_or(0.0);
  r.O_ns_per_byte = p.O_ns_per_byte.value_or(0.0);
  r.o_coll_ns = p.o_coll_ns.value_or(0.0);
  r.o_probe_ns = p.o_probe_ns.value_or(0.0);
  r.o_rndv_ns = p.o_rndv_ns.value_or(0.0);
  r.o_rndv_cold_ns = p.o_rndv_cold_ns.value_or(0.0);
  for (double v : {r.L_ns, r.o_send_ns, r.o_recv_ns, r.g_ns, r.G_ns_per_byte, r.O_ns_per_byte, r.o_coll_ns,
                   r.o_probe_ns, r.o_rndv_ns, r.o_rndv_cold_ns})
    if (!std::isfinite(v) || v < 0) throw Error("LogGP parameters must be finite and non-negative");
  return r;
}

}  // namespace llamp
