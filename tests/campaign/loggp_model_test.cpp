// llamp-loggp's arithmetic on hand-made tables: the parameters `llamp analyze` will run with must
// come out of the per-size medians exactly as docs/campaign.md says.
#include <gtest/gtest.h>

#include <vector>

#include "llamp/error.hpp"
#include "loggp_model.hpp"
#include "stats.hpp"

namespace llamp::loggp {
namespace {

Summary constant(double v) { return summarize({v, v, v}); }

// Half round trips of an ideal LogGPS network: o_s + L + (s-1)G + o_r for eager messages, and above
// the threshold o_s + 3L + (s-1)G + o_r + o_rndv (request-to-send, read request, data, and a
// handshake of 5 us, which must not leak into G).
std::vector<SizePoint> ideal_table(double L, double os, double orecv, double G, std::size_t S) {
  std::vector<SizePoint> points;
  for (std::size_t s = 1; s <= (1u << 20); s *= 2) {
    SizePoint p;
    p.bytes = s;
    p.rendezvous = s > S;
    const double handshake = p.rendezvous ? 2 * L + 5000 : 0;
    p.half_rtt_ns = constant(os + L + static_cast<double>(s - 1) * G + orecv + handshake);
    p.o_send_ns = constant(os);
    p.o_recv_ns = constant(orecv);
    points.push_back(p);
  }
  return points;
}

TEST(LoggpStats, MedianAndQuartilesOfUnsortedSamples) {
  const Summary s = summarize({9, 1, 5, 3, 7});
  EXPECT_DOUBLE_EQ(s.median, 5);
  EXPECT_DOUBLE_EQ(s.p25, 3);
  EXPECT_DOUBLE_EQ(s.p75, 7);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.relative_iqr(), 0.8);
  EXPECT_THROW(summarize({}), Error);
}

TEST(LoggpStats, LineFitRecoversSlopeAndIntercept) {
  const std::vector<double> x{1, 2, 3, 4}, y{5, 7, 9, 11};
  const LineFit f = fit_line(x, y);
  EXPECT_DOUBLE_EQ(f.slope, 2);
  EXPECT_DOUBLE_EQ(f.intercept, 3);
  EXPECT_DOUBLE_EQ(f.r_squared, 1);
  const std::vector<double> same_x{2, 2};
  EXPECT_THROW(fit_line(same_x, same_x), Error);
}

TEST(LoggpModel, IdealNetworkGivesBackItsParameters) {
  const auto table = ideal_table(/*L=*/900, /*os=*/300, /*or=*/200, /*G=*/0.1, /*S=*/8192);
  const Parameters p = derive_parameters(table, 1, /*gap=*/150, 4096);
  EXPECT_NEAR(p.L_ns, 900, 1e-6);
  EXPECT_DOUBLE_EQ(p.o_send_ns, 300);
  EXPECT_DOUBLE_EQ(p.o_recv_ns, 200);
  EXPECT_DOUBLE_EQ(p.o_ns, 250);
  EXPECT_NEAR(p.G_ns_per_byte, 0.1, 1e-9);
  EXPECT_EQ(p.G_fit_protocol, "rendezvous");
  EXPECT_EQ(p.G_fit_min_bytes, 16384u);  // only sizes above S: the handshake offset stays out
  EXPECT_DOUBLE_EQ(p.g_ns, 150);
  EXPECT_NEAR(p.o_rndv_ns, 5000, 1e-6);
}

TEST(LoggpModel, ReferenceSizeSubtractsItsBandwidthTerm) {
  const auto table = ideal_table(900, 300, 200, 0.1, 1u << 30);  // all eager
  const Parameters p = derive_parameters(table, 1024, 0, 4096);
  EXPECT_NEAR(p.L_ns, 900, 1e-6);
  EXPECT_EQ(p.G_fit_protocol, "eager");
  EXPECT_DOUBLE_EQ(p.o_rndv_ns, 0);  // no rendezvous measured
}

TEST(LoggpModel, NegativeLatencyIsFlooredButKept) {
  auto table = ideal_table(0, 100, 100, 0.1, 8192);
  table[0].half_rtt_ns = constant(180);  // faster than o_s + o_r, as on shared memory
  const Parameters p = derive_parameters(table, 1, 0, 4096);
  EXPECT_DOUBLE_EQ(p.L_ns, 0);
  EXPECT_DOUBLE_EQ(p.L_measured_ns, -20);
  // the floored L (0), not the measured one, is what the model charges a rendezvous
  EXPECT_NEAR(p.o_rndv_ns, 5000, 1e-6);
}

TEST(LoggpModel, RendezvousReferenceSizeIsRejected) {
  const auto table = ideal_table(900, 300, 200, 0.1, 8192);
  EXPECT_THROW(derive_parameters(table, 16384, 0, 4096), Error);
  EXPECT_THROW(derive_parameters(table, 3, 0, 4096), Error);  // not measured
}

}  // namespace
}  // namespace llamp::loggp
