#include "loggp_model.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "llamp/error.hpp"

namespace llamp::loggp {

std::vector<const SizePoint*> sizes_for_bandwidth_fit(const std::vector<SizePoint>& points, std::size_t min_fit_bytes) {
  if (points.empty()) throw Error("no message sizes were measured");
  const bool largest_protocol = points.back().rendezvous;
  std::size_t threshold = 0;  // largest eager size below the first rendezvous size
  for (const SizePoint& p : points) {
    if (p.rendezvous) break;
    threshold = p.bytes;
  }
  std::vector<const SizePoint*> chosen;
  for (const SizePoint& p : points) {
    if (p.rendezvous != largest_protocol || p.bytes < min_fit_bytes) continue;
    if (largest_protocol && p.bytes <= threshold) continue;
    chosen.push_back(&p);
  }
  if (chosen.size() < 3) {
    chosen.clear();
    for (const SizePoint& p : points)
      if (p.bytes >= 1024) chosen.push_back(&p);
  }
  if (chosen.size() < 2)
    throw Error(
        fmt::format("need at least two message sizes of 1 KiB or more to fit G; got {} "
                    "(raise --max-size)",
                    chosen.size()));
  return chosen;
}

Parameters derive_parameters(const std::vector<SizePoint>& points, std::size_t reference_bytes, double gap_ns,
                             std::size_t min_fit_bytes) {
  const auto reference =
      std::find_if(points.begin(), points.end(), [&](const SizePoint& p) { return p.bytes == reference_bytes; });
  if (reference == points.end()) throw Error(fmt::format("reference size {} B was not measured", reference_bytes));
  if (reference->rendezvous)
    throw Error(
        fmt::format("reference size {} B uses the rendezvous protocol; o and L are defined "
                    "on eager messages, choose a smaller --o-size",
                    reference_bytes));

  Parameters params;
  params.reference_bytes = reference_bytes;

  const std::vector<const SizePoint*> fit_points = sizes_for_bandwidth_fit(points, min_fit_bytes);
  std::vector<double> x, y;
  for (const SizePoint* p : fit_points) {
    x.push_back(static_cast<double>(p->bytes));
    y.push_back(p->half_rtt_ns.median);
  }
  params.G_fit = fit_line(x, y);
  params.G_fit_min_bytes = fit_points.front()->bytes;
  params.G_fit_max_bytes = fit_points.back()->bytes;
  params.G_fit_protocol = fit_points.back()->rendezvous ? "rendezvous" : "eager";
  params.G_ns_per_byte = std::max(0.0, params.G_fit.slope);

  params.o_send_ns = reference->o_send_ns.median;
  params.o_recv_ns = reference->o_recv_ns.median;
  params.o_ns = (params.o_send_ns + params.o_recv_ns) / 2;
  const double size_term = reference_bytes > 0 ? static_cast<double>(reference_bytes - 1) * params.G_ns_per_byte : 0.0;
  params.L_measured_ns = reference->half_rtt_ns.median - params.o_send_ns - params.o_recv_ns - size_term;
  params.L_ns = std::max(0.0, params.L_measured_ns);
  params.g_ns = std::max(0.0, gap_ns);
  // On one node a rendezvous costs ~1.9 us more than o_s + o_r + 3L with L ~ 0 (2026-11-26,
  // MPICH 4.0.2 / UCX: the fit's intercept 2.42 us, o_s + o_r 0.49 us): without it the model put
  // app_pingpong's 256 KiB round trips 3.9 us short of the traced ones.
  if (params.G_fit_protocol == "rendezvous")
    params.o_rndv_ns = std::max(
        0.0, params.G_fit.intercept + params.G_ns_per_byte - params.o_send_ns - params.o_recv_ns - 3 * params.L_ns);
  return params;
}

}  // namespace llamp::loggp
