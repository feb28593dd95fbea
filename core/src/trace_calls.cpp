#include <array>
#include <string>

#include "llamp/trace_event.hpp"

namespace llamp::trace {
namespace {

constexpr std::array<std::string_view, kNumCalls> kNames = {
#define LLAMP_CALL(name, family) "MPI_" #name,
#include "llamp/mpi_calls.def"
#undef LLAMP_CALL
};

// MPI_X_init -> MPI_Ix (MPI_Neighbor_alltoall_init -> MPI_Ineighbor_alltoall), by name, once.
std::array<std::optional<Call>, kNumCalls> make_started_collectives() {
  std::array<std::optional<Call>, kNumCalls> out{};
  for (size_t i = 0; i < kNumCalls; ++i) {
    if (call_family(static_cast<Call>(i)) != Family::collective_init) continue;
    std::string base(kNames[i].substr(4, kNames[i].size() - 4 - 5));  // "Allreduce" of "MPI_Allreduce_init"
    base[0] = static_cast<char>(base[0] - 'A' + 'a');
    out[i] = call_from_name("I" + base);
  }
  return out;
}

}  // namespace

std::optional<Call> started_collective(Call init) {
  static const std::array<std::optional<Call>, kNumCalls> table = make_started_collectives();
  return table[static_cast<size_t>(init)];
}

std::string_view call_name(Call c) { return kNames.at(static_cast<size_t>(c)); }

std::optional<Call> call_from_name(std::string_view name) {
  for (size_t i = 0; i < kNumCalls; ++i) {
    std::string_view full = kNames[i];
    if (name == full || name == full.substr(4)) return static_cast<Call>(i);
  }
  return std::nullopt;
}

}  // namespace llamp::trace
