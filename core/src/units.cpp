#include "llamp/units.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "llamp/error.hpp"

namespace llamp::units {
namespace {

struct Split {
  double value;
  std::string_view unit;
};

Split split_number(std::string_view text, std::string_view what) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data())
    throw Error(fmt::format("{}: '{}' is not a number with a unit", what, text));
  std::string_view unit(end, text.data() + text.size() - end);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  if (!std::isfinite(value) || value < 0)
    throw Error(fmt::format("{}: '{}' must be a non-negative finite value", what, text));
  return {value, unit};
}

std::optional<double> time_factor(std::string_view unit) {
  if (unit == "ns") return 1.0;
  if (unit == "us" || unit == "µs") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  return std::nullopt;
}

std::optional<double> size_factor(std::string_view unit) {
  if (unit == "B" || unit == "b") return 1.0;
  if (unit == "KB" || unit == "kB") return 1e3;
  if (unit == "MB") return 1e6;
  if (unit == "GB") return 1e9;
  if (unit == "KiB") return 1024.0;
  if (unit == "MiB") return 1024.0 * 1024;
  if (unit == "GiB") return 1024.0 * 1024 * 1024;
  return std::nullopt;
}

}  // namespace

double parse_time_ns(std::string_view text, std::string_view what, std::optional<std::string_view> default_unit) {
  auto [value, unit] = split_number(text, what);
  if (unit.empty()) {
    if (!default_unit) throw Error(fmt::format("{}: '{}' needs a time unit (ns, us, ms or s), e.g. '3us'", what, text));
    unit = *default_unit;
  }
  auto factor = time_factor(unit);
  if (!factor) throw Error(fmt::format("{}: unknown time unit '{}' in '{}' (use ns, us, ms or s)", what, unit, text));
  return value * *factor;
}

uint64_t parse_size_bytes(std::string_view text, std::string_view what, std::optional<std::string_view> default_unit) {
  auto [value, unit] = split_number(text, what);
  if (unit.empty()) {
    if (!default_unit)
      throw Error(fmt::format("{}: '{}' needs a size unit (B, KiB, MiB, GiB, KB, MB, GB)", what, text));
    unit = *default_unit;
  }
  auto factor = size_factor(unit);
  if (!factor)
    throw Error(fmt::format("{}: unknown size unit '{}' in '{}' (use B, KiB, MiB, GiB, KB, MB, GB)", what, unit, text));
  double bytes = value * *factor;
  if (bytes != std::floor(bytes) || bytes > 1.8e19)
    throw Error(fmt::format("{}: '{}' is not a whole number of bytes", what, text));
  return static_cast<uint64_t>(bytes);
}

std::string format_time_ns(double ns) {
  double a = std::fabs(ns);
  if (a >= 1e9) return fmt::format("{:.4g} s", ns / 1e9);
  if (a >= 1e6) return fmt::format("{:.4g} ms", ns / 1e6);
  if (a >= 1e3) return fmt::format("{:.4g} µs", ns / 1e3);
  return fmt::format("{:.4g} ns", ns);
}

std::string format_bytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024));
  if (bytes >= 1024.0 * 1024) return fmt::format("{:.2f} MiB", bytes / (1024.0 * 1024));
  if (bytes >= 1024.0) return fmt::format("{:.2f} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

}  // namespace llamp::units
