#pragma once
// The whole llamp-loggp experiment: the transport's first use (first_use_bytes, before anything
// else larger than a few bytes has crossed), the protocol switch, then `rounds` sweeps over all sizes
// (ping-pong, send/receive overhead, burst gap), each sweep in its own shuffled size order so
// slow drift of a shared machine spreads over all sizes instead of biasing the large ones.
// Parameters are derived per round; the result is their median, the spread their range.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "loggp_model.hpp"
#include "probes.hpp"
#include "protocol_switch.hpp"

namespace llamp::loggp {

struct MeasurementPlan {
  std::vector<std::size_t> sizes;  // ascending, powers of two from 1 B up
  int rounds = 3;
  int reps = 50;                            // repetitions per size and round for sizes up to reps_full_bytes
  std::size_t reps_full_bytes = 64 * 1024;  // above this, repetitions shrink with the size
  int min_reps = 5;
  int warmup = 3;
  int burst = 32;
  int collective_block = 20;             // calls per timed block of the collective-overhead probe
  double busy_wait_ns = 100'000;         // the machine's busy-wait overrun: length of one wait
  int busy_waits = 5'000;                // and how many (0.5 s per rank)
  std::size_t cold_copy_bytes = 16'384;  // cold_copies: a working set inside L1 + L2,
  double cold_copy_wait_ns = 1'000'000;  // the wait before each cold copy (as at ΔL = 1 ms),
  int cold_copy_reps = 100;              // and how many of each (0.1 s)
  // cold_handshakes: at the smallest probed size above S, after this much computation (sweeping
  // this much memory, larger than L2), this many times each way (0.05 s).
  double cold_handshake_compute_ns = 100'000;
  std::size_t cold_handshake_sweep_bytes = 4 << 20;
  int cold_handshake_reps = 200;
  // first_uses: ping-pongs at these sizes (ascending) on the fresh pair of ranks, `first_use_trips`
  // round trips each; the first half is compared with the second half's median.
  std::vector<std::size_t> first_use_bytes = {64, 512, 4096, 32768, 262144};
  int first_use_trips = 200;
  int protocol_reps = 5;
  int protocol_test_calls = 10'000;
  std::size_t reference_bytes = 1;
  std::size_t min_fit_bytes = 4096;
  unsigned shuffle_seed = 12345;
};

// What the first round trips at one size cost beyond the warm ones (first_uses).
struct FirstUse {
  std::size_t bytes = 0;
  int trips = 0;            // round trips timed; the first half is "first", the second half warm
  double first_rtt_ns = 0;  // the very first round trip
  double warm_rtt_ns = 0;   // median of the second half
  double excess_ns = 0;     // sum over the first half of max(0, round trip - warm_rtt_ns)
  int slow_trips = 0;       // round trips of the first half above 3 x warm_rtt_ns
  // The senders' share of excess_ns: the sum over the first half of max(0, time inside the two
  // ranks' MPI_Send - its warm median). The rest of the excess is the receivers'.
  double send_excess_ns = 0;
};

struct RoundResult {
  std::vector<SizePoint> points;  // per size, this round's samples summarised
  Summary gap_ns;
  Summary probe_ns;              // this round's probe_overheads samples (o_probe is their median)
  Summary collective_excess_ns;  // this round's collective-overhead samples (o_coll is their median, floored at 0)
  Parameters params;
};

struct Measurement {
  ProtocolSwitch protocol;
  double clock_overhead_ns = 0;  // subtracted from every sample (see clock_read_overhead_ns)
  std::vector<RoundResult> rounds;
  std::vector<SizePoint> pooled;          // per size, all rounds' samples together
  Parameters params;                      // per-parameter median over rounds
  Parameters spread_min, spread_max;      // per-parameter extremes over rounds
  std::vector<double> busy_wait_overrun;  // per rank: a busy wait's mean overrun / its length
  std::vector<double> cold_copy_ns;       // per rank: a copy's median hot, then after a wait (cold_copies)
  std::vector<FirstUse> first_use;        // per first_use_bytes size
  // cold_handshakes at cold_handshake_bytes: {after spinning, after sweeping}; empty without a
  // rendezvous size probed. params.o_rndv_cold_ns is their difference.
  std::size_t cold_handshake_bytes = 0;
  std::vector<double> cold_handshake_ns;
};

// Collective over the two ranks of ctx.comm; the full result is on rank 0.
Measurement measure(const ProbeContext& ctx, const MeasurementPlan& plan);

// Powers of two from 1 B up to max_bytes (inclusive if a power of two, else the next lower).
std::vector<std::size_t> power_of_two_sizes(std::size_t max_bytes);

}  // namespace llamp::loggp
