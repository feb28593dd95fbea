#include "protocol_switch.hpp"

namespace llamp::loggp {
namespace {

ProtocolProbe classify(const ProbeContext& ctx, std::size_t bytes, int reps, int test_calls) {
  ProtocolProbe probe;
  probe.bytes = bytes;
  probe.tries = reps;
  for (int i = 0; i < reps; ++i) probe.completed_unmatched += send_completes_unmatched(ctx, bytes, test_calls);
  // Rank 0 decides; rank 1 must follow the same bisection path.
  probe.completed_unmatched = static_cast<int>(share_from_client(ctx, probe.completed_unmatched));
  probe.rendezvous = 2 * probe.completed_unmatched < reps;
  return probe;
}

}  // namespace

ProtocolSwitch find_protocol_switch(const ProbeContext& ctx, const std::vector<std::size_t>& sizes, int reps,
                                    int test_calls) {
  ProtocolSwitch result;
  result.test_calls = test_calls;
  std::size_t last_eager = 0;
  std::size_t first_rendezvous = 0;
  for (std::size_t bytes : sizes) {
    const ProtocolProbe probe = classify(ctx, bytes, reps, test_calls);
    result.probes.push_back(probe);
    if (probe.rendezvous) {
      first_rendezvous = bytes;
      break;
    }
    last_eager = bytes;
  }
  if (first_rendezvous == 0) {
    result.S_bytes = sizes.empty() ? 0 : sizes.back();
    return result;
  }
  result.observed = true;
  // Invariant: last_eager is eager, first_rendezvous is rendezvous.
  while (first_rendezvous - last_eager > 1) {
    const std::size_t middle = last_eager + (first_rendezvous - last_eager) / 2;
    const ProtocolProbe probe = classify(ctx, middle, reps, test_calls);
    result.probes.push_back(probe);
    (probe.rendezvous ? first_rendezvous : last_eager) = middle;
  }
  result.S_bytes = last_eager;
  return result;
}

}  // namespace llamp::loggp
