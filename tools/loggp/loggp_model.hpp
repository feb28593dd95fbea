#pragma once
// From per-size measurements to LogGPS parameters. Pure arithmetic, no MPI, so it is unit-tested
// on hand-made tables. The model (paper 000, Eq. 2; LogGOPSim) is:
//   half round trip(s) = o_s + L + (s - 1) G + o_r      (eager, s >= 1)
// so with o_s and o_r measured separately, L is what remains of the half round trip at the
// reference size, and G is the slope of the half round trip over large sizes of one protocol.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stats.hpp"

namespace llamp::loggp {

struct SizePoint {
  std::size_t bytes = 0;
  Summary half_rtt_ns;
  Summary o_send_ns;
  Summary o_recv_ns;
  bool rendezvous = false;
};

struct Parameters {
  double L_ns = 0;           // max(0, L_measured_ns): the model needs a latency >= 0
  double L_measured_ns = 0;  // half round trip - o_s - o_r - (s-1)G; can dip below 0 on shared
                             // memory, where a pre-posted receive costs less than o_r
  double o_send_ns = 0;
  double o_recv_ns = 0;
  double o_ns = 0;  // (o_s + o_r) / 2: the single o of LogGPS; o_s + o_r is what a message costs
  double g_ns = 0;
  double G_ns_per_byte = 0;
  double o_coll_ns = 0;   // a collective call's own CPU time beyond its messages (collective_overheads), >= 0
  double o_probe_ns = 0;  // a blocking probe's time with its message already there (probe_overheads)
  // A rendezvous transfer's handshake beyond the model's latency terms: the rendezvous fit's half
  // round trip at s B is o_s + o_r + 3L + (s-1)G + o_rndv (the receive waits posted: request-to-
  // send, read request, data; docs/analyzer.md), so o_rndv = intercept + G - o_s - o_r - 3L, >= 0.
  // 0 when the fit is over eager sizes (no rendezvous measured).
  double o_rndv_ns = 0;
  LineFit G_fit;
  std::size_t G_fit_min_bytes = 0;
  std::size_t G_fit_max_bytes = 0;
  std::string G_fit_protocol;       // "eager" or "rendezvous"
  std::size_t reference_bytes = 0;  // the size L and o are taken at
};

// Chooses the sizes G is fitted on: those using the same protocol as the largest size, at
// least `min_fit_bytes`, and (for rendezvous) above the threshold; falls back to every size of
// at least 1 KiB when fewer than three qualify. Throws llamp::Error when fewer than two remain.
std::vector<const SizePoint*> sizes_for_bandwidth_fit(const std::vector<SizePoint>& points, std::size_t min_fit_bytes);

// Derives the parameters; `points` sorted by size, `reference_bytes` must be one of the sizes and
// use the eager protocol; `gap_ns` is the burst gap (max(o_s, g)).
Parameters derive_parameters(const std::vector<SizePoint>& points, std::size_t reference_bytes, double gap_ns,
                             std::size_t min_fit_bytes);

}  // namespace llamp::loggp
