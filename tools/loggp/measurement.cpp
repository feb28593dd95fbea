#include "measurement.hpp"

#include <algorithm>
#include <map>
#include <random>

namespace llamp::loggp {
namespace {

int reps_for(const MeasurementPlan& plan, std::size_t bytes) {
  if (bytes <= plan.reps_full_bytes) return plan.reps;
  const double scaled =
      static_cast<double>(plan.reps) * static_cast<double>(plan.reps_full_bytes) / static_cast<double>(bytes);
  return std::max(plan.min_reps, static_cast<int>(scaled));
}

struct Samples {
  std::vector<double> half_rtt, o_send, o_recv;
};

SizePoint summarise_point(std::size_t bytes, const Samples& s, bool rendezvous) {
  SizePoint p;
  p.bytes = bytes;
  p.half_rtt_ns = summarize(s.half_rtt);
  p.o_send_ns = summarize(s.o_send);
  p.o_recv_ns = summarize(s.o_recv);
  p.rendezvous = rendezvous;
  return p;
}

bool is_rendezvous(const ProtocolSwitch& protocol, std::size_t bytes) {
  return protocol.observed && bytes > protocol.S_bytes;
}

// Field-wise median / min / max of the per-round parameters.
void combine_rounds(Measurement& m) {
  auto pick = [&](auto member) {
    std::vector<double> values;
    for (const RoundResult& r : m.rounds) values.push_back(r.params.*member);
    const Summary s = summarize(values);
    m.params.*member = s.median;
    m.spread_min.*member = s.min;
    m.spread_max.*member = s.max;
  };
  pick(&Parameters::L_ns);
  pick(&Parameters::L_measured_ns);
  pick(&Parameters::o_send_ns);
  pick(&Parameters::o_recv_ns);
  pick(&Parameters::o_ns);
  pick(&Parameters::g_ns);
  pick(&Parameters::G_ns_per_byte);
  pick(&Parameters::o_coll_ns);
  pick(&Parameters::o_probe_ns);
  pick(&Parameters::o_rndv_ns);
}

// The transport's first use: on the development AMD VM a pair of ranks' first 64 round trips at
// 512 B took over 10 us each (the first five 47-94 us) against ~0.5 us later, and ~56 more did at
// 4096 B: 164 and 224 minor page faults of the two ranks, 15-17 us each, as the shared-memory
// transport's buffers are touched for the first time; 0 and 64 B messages, which travel in the
// queue's own slots, had none. Every run of an application pays that once per pair of ranks and
// size; the campaign has the graph charge it (llamp schedgen --first-use). Measured first, before any larger message
// has crossed, sizes in ascending order.
std::vector<FirstUse> first_uses(const ProbeContext& ctx, const MeasurementPlan& plan) {
  std::vector<FirstUse> result;
  const std::size_t largest = plan.sizes.empty() ? 0 : plan.sizes.back();  // the probe buffers' size
  for (std::size_t bytes : plan.first_use_bytes) {
    if (bytes > largest || plan.first_use_trips < 2) continue;
    const PingPongCalls calls = ping_pong_calls(ctx, bytes, plan.first_use_trips);
    if (ctx.rank != 0) continue;
    const std::vector<double>& trips = calls.round_trip_ns;
    const std::size_t first = trips.size() / 2;
    const auto warm_median = [first](const std::vector<double>& v) {
      return summarize(std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(first), v.end())).median;
    };
    FirstUse f;
    f.bytes = bytes;
    f.trips = static_cast<int>(trips.size());
    f.first_rtt_ns = trips.front();
    f.warm_rtt_ns = warm_median(trips);
    const double warm_send_ns = warm_median(calls.send_ns);
    for (std::size_t i = 0; i < first; ++i) {
      f.excess_ns += std::max(0.0, trips[i] - f.warm_rtt_ns);
      if (trips[i] > 3 * f.warm_rtt_ns) ++f.slow_trips;
      f.send_excess_ns += std::max(0.0, calls.send_ns[i] - warm_send_ns);
    }
    // A send cannot take longer than its round trip: clamp the share where noise crossed them.
    f.send_excess_ns = std::min(f.send_excess_ns, f.excess_ns);
    result.push_back(f);
  }
  return result;
}

}  // namespace

std::vector<std::size_t> power_of_two_sizes(std::size_t max_bytes) {
  std::vector<std::size_t> sizes;
  for (std::size_t s = 1; s <= max_bytes; s *= 2) sizes.push_back(s);
  return sizes;
}

Measurement measure(const ProbeContext& ctx, const MeasurementPlan& plan) {
  Measurement m;
  m.first_use = first_uses(ctx, plan);
  m.protocol = find_protocol_switch(ctx, plan.sizes, plan.protocol_reps, plan.protocol_test_calls);

  m.clock_overhead_ns = share_from_client(ctx, clock_read_overhead_ns());
  m.busy_wait_overrun = busy_wait_overruns(ctx, plan.busy_wait_ns, plan.busy_waits);
  m.cold_copy_ns = cold_copies(ctx, plan.cold_copy_bytes, plan.cold_copy_wait_ns, plan.cold_copy_reps);
  for (std::size_t bytes : plan.sizes) {
    if (!is_rendezvous(m.protocol, bytes)) continue;
    m.cold_handshake_bytes = bytes;
    m.cold_handshake_ns = cold_handshakes(ctx, bytes, plan.cold_handshake_compute_ns, plan.cold_handshake_sweep_bytes,
                                          plan.cold_handshake_reps);
    break;
  }
  // A timed interval contains one clock read; a half round trip half of one.
  auto corrected = [&](std::vector<double> samples, double share) {
    for (double& v : samples) v -= share * m.clock_overhead_ns;
    return samples;
  };

  std::map<std::size_t, Samples> pooled;
  std::mt19937 shuffle(plan.shuffle_seed);
  for (int round = 0; round < plan.rounds; ++round) {
    std::vector<std::size_t> order = plan.sizes;
    std::shuffle(order.begin(), order.end(), shuffle);  // same seed on both ranks: same order
    std::map<std::size_t, Samples> samples;
    double reference_delay = 0;
    // The receiver's delay in the overhead probe must cover the ack's trip and the data's trip;
    // the 0-byte half round trip is measured first in every round for that purpose.
    const std::vector<double> zero_trips = half_round_trips(ctx, 0, plan.reps, plan.warmup);
    const double zero_half_rtt = share_from_client(ctx, ctx.rank == 0 ? summarize(zero_trips).median : 0.0);
    for (std::size_t bytes : order) {
      const int reps = reps_for(plan, bytes);
      Samples& s = samples[bytes];
      s.half_rtt = corrected(half_round_trips(ctx, bytes, reps, plan.warmup), 0.5);
      const double half_rtt = share_from_client(ctx, ctx.rank == 0 ? summarize(s.half_rtt).median : 0.0);
      const double delay = 2 * (zero_half_rtt + half_rtt) + 5'000;
      if (bytes == plan.reference_bytes) reference_delay = delay;
      OverheadSamples o = overheads(ctx, bytes, reps, plan.warmup, delay);
      s.o_send = corrected(std::move(o.send_ns), 1.0);
      s.o_recv = corrected(std::move(o.recv_ns), 1.0);
    }
    const std::vector<double> gaps = burst_gaps(ctx, plan.reference_bytes, plan.burst, plan.reps / 5 + 3);
    const std::vector<double> coll = collective_overheads(ctx, plan.reps / 5 + 3, plan.collective_block);
    const std::vector<double> probe =
        probe_overheads(ctx, plan.reference_bytes, plan.reps, plan.warmup, reference_delay);
    if (ctx.rank != 0) continue;

    RoundResult result;
    for (std::size_t bytes : plan.sizes) {
      const Samples& s = samples[bytes];
      result.points.push_back(summarise_point(bytes, s, is_rendezvous(m.protocol, bytes)));
      Samples& all = pooled[bytes];
      all.half_rtt.insert(all.half_rtt.end(), s.half_rtt.begin(), s.half_rtt.end());
      all.o_send.insert(all.o_send.end(), s.o_send.begin(), s.o_send.end());
      all.o_recv.insert(all.o_recv.end(), s.o_recv.begin(), s.o_recv.end());
    }
    result.gap_ns = summarize(gaps);
    result.params = derive_parameters(result.points, plan.reference_bytes, result.gap_ns.median, plan.min_fit_bytes);
    result.collective_excess_ns = summarize(coll);
    // A difference of two timings: on a noisy machine it can come out below 0, which is no cost.
    result.params.o_coll_ns = std::max(0.0, result.collective_excess_ns.median);
    result.probe_ns = summarize(corrected(probe, 1.0));
    result.params.o_probe_ns = std::max(0.0, result.probe_ns.median);
    m.rounds.push_back(std::move(result));
  }
  if (ctx.rank != 0) return m;

  for (std::size_t bytes : plan.sizes)
    m.pooled.push_back(summarise_point(bytes, pooled[bytes], is_rendezvous(m.protocol, bytes)));
  // Fit details (sizes used, R²) come from the pooled table; the numbers from the round medians.
  m.params = derive_parameters(m.pooled, plan.reference_bytes, 0, plan.min_fit_bytes);
  m.spread_min = m.params;
  m.spread_max = m.params;
  combine_rounds(m);
  return m;
}

}  // namespace llamp::loggp
