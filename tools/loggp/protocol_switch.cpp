#include "protocol_switch.hpp"

#include "stats.hpp"

namespace llamp::loggp {
namespace {

ProtocolProbe classify(const ProbeContext& ctx, std::size_t bytes, int reps, double extra_delay_ns) {
  // The receiver's base delay must cover the message's own trip, which grows with size and with
  // any injected latency: derive it from a quick ping-pong at this size.
  const std::vector<double> trips = half_round_trips(ctx, bytes, 3, 1);
  const double half_rtt = ctx.rank == 0 ? summarize(trips).median : 0.0;
  const double base_delay = share_from_client(ctx, 4 * half_rtt + 20'000);
  ProtocolProbe probe;
  probe.bytes = bytes;
  probe.send_wait_increase_ns = send_wait_increase(ctx, bytes, reps, base_delay, extra_delay_ns);
  // Rank 0 decides; rank 1 must follow the same bisection path.
  probe.rendezvous = share_from_client(ctx, probe.send_wait_increase_ns > extra_delay_ns / 2 ? 1.0 : 0.0) > 0.5;
  probe.send_wait_increase_ns = share_from_client(ctx, probe.send_wait_increase_ns);
  return probe;
}

}  // namespace

ProtocolSwitch find_protocol_switch(const ProbeContext& ctx, const std::vector<std::size_t>& sizes,
                                    int reps, double extra_delay_ns) {
  ProtocolSwitch result;
  result.extra_delay_ns = extra_delay_ns;
  std::size_t last_eager = 0;
  std::size_t first_rendezvous = 0;
  for (std::size_t bytes : sizes) {
    const ProtocolProbe probe = classify(ctx, bytes, reps, extra_delay_ns);
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
    const ProtocolProbe probe = classify(ctx, middle, reps, extra_delay_ns);
    result.probes.push_back(probe);
    (probe.rendezvous ? first_rendezvous : last_eager) = middle;
  }
  result.S_bytes = last_eager;
  return result;
}

}  // namespace llamp::loggp
