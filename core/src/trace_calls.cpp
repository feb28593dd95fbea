#include <array>

#include "llamp/trace_event.hpp"

namespace llamp::trace {
namespace {

constexpr std::array<std::string_view, kNumCalls> kNames = {
#define LLAMP_CALL(name, family) "MPI_" #name,
#include "llamp/mpi_calls.def"
#undef LLAMP_CALL
};

}  // namespace

std::string_view call_name(Call c) { return kNames.at(static_cast<size_t>(c)); }

std::optional<Call> call_from_name(std::string_view name) {
  for (size_t i = 0; i < kNumCalls; ++i) {
    std::string_view full = kNames[i];
    if (name == full || name == full.substr(4)) return static_cast<Call>(i);
  }
  return std::nullopt;
}

}  // namespace llamp::trace
