#pragma once
// Quantities with units on the command line and in environment variables:
// "3us", "0.018ns", "256KiB". A bare number is rejected unless the caller
// names a default unit explicitly (LLAMP_DELTA_L: plain number = µs).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace llamp::units {

// Parses "<number><ns|us|µs|ms|s>" into nanoseconds (fractional values allowed).
// `what` names the flag or variable for the error message. If `default_unit`
// is set, a bare number is read in that unit (e.g. "us").
double parse_time_ns(std::string_view text, std::string_view what,
                     std::optional<std::string_view> default_unit = std::nullopt);

// Parses "<number><B|KB|MB|GB|KiB|MiB|GiB>" into bytes (must be integral).
uint64_t parse_size_bytes(std::string_view text, std::string_view what,
                          std::optional<std::string_view> default_unit = std::nullopt);

// "1.234 µs", "56 ns", "2.5 ms": for human-readable output.
std::string format_time_ns(double ns);
// "12 B", "4.0 KiB", "1.5 MiB".
std::string format_bytes(double bytes);

}  // namespace llamp::units
