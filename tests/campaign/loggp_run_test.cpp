// llamp-loggp on the real MPICH stack at -n 2: the file it writes must be one `llamp analyze`
// accepts (core's reader), with positive, plausible values, and it must refuse other rank counts.
// A second test measures under the latency injector, where L must grow by the injected ΔL; it
// runs only where scripts/build-patched-mpich.sh has built the patched stack.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "command_helpers.hpp"
#include "llamp/loggp_params.hpp"

namespace fs = std::filesystem;
using llamp::test::run;
using llamp::test::temp_file;

namespace {

// Small settings keep the test short; the method is the same as the default run.
const char* kQuick = " --rounds 1 --reps 20 --max-size 256KiB -q";

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(LoggpRun, TwoRanksWriteAValidPlausibleParameterFile) {
  const std::string out = temp_file("llamp-loggp");
  ASSERT_EQ(run(std::string(LLAMP_TEST_MPIEXEC) + " -n 2 " + LLAMP_TEST_LOGGP + kQuick + " -o " + out), 0);

  // The analyzer's own reader accepts the file and finds every parameter it needs.
  const llamp::LogGPParams params = llamp::read_loggp_params(out);
  const llamp::LogGP p = llamp::resolve(params);
  EXPECT_GE(p.L_ns, 0);
  EXPECT_GT(p.o_send_ns, 0);
  EXPECT_GT(p.o_recv_ns, 0);
  // G is the fitted slope of median round trips, which a heavily loaded machine can flatten to 0
  // (the tool warns); it is never negative.
  EXPECT_GE(p.G_ns_per_byte, 0);
  EXPECT_GT(p.S_bytes, 0u);

  const nlohmann::json doc = read_json(out);
  EXPECT_EQ(doc["format"], "llamp-loggp");
  EXPECT_EQ(doc["version"], 1);
  const auto& m = doc["measurement"];
  ASSERT_TRUE(m["per_size"].is_array());
  EXPECT_EQ(m["per_size"].size(), 19u);  // 1 B .. 256 KiB
  for (const auto& row : m["per_size"]) {
    EXPECT_GT(row["half_rtt_ns"]["median"].get<double>(), 0) << row.dump();
    EXPECT_LE(row["half_rtt_ns"]["p25"].get<double>(), row["half_rtt_ns"]["p75"].get<double>());
  }
  // Moving 256 KiB takes longer than moving 1 B: compared on the fastest sample of each size,
  // which preemption on a loaded machine cannot make faster than the transfer itself.
  EXPECT_GT(m["per_size"].back()["half_rtt_ns"]["min"].get<double>(),
            m["per_size"].front()["half_rtt_ns"]["min"].get<double>());
  // The protocol switch was probed and S lies below the largest size (MPICH's eager limit is a
  // few KiB here) or is reported as not observed.
  EXPECT_FALSE(m["protocol_probes"].empty());
  // The file is consistent with its own table (one round: the round's values are the medians):
  // L = half RTT - o_send - o_recv at the 1 B reference size, floored at 0.
  const auto& one_byte = m["per_size"].front();
  ASSERT_EQ(one_byte["bytes"], 1);
  EXPECT_DOUBLE_EQ(p.o_send_ns, one_byte["o_send_ns"]["median"].get<double>());
  EXPECT_DOUBLE_EQ(p.o_recv_ns, one_byte["o_recv_ns"]["median"].get<double>());
  const double L_measured = one_byte["half_rtt_ns"]["median"].get<double>() - p.o_send_ns - p.o_recv_ns;
  EXPECT_NEAR(m["medians"]["L_measured_ns"].get<double>(), L_measured, 1e-6);
  EXPECT_NEAR(p.L_ns, std::max(0.0, L_measured), 1e-6);
  EXPECT_TRUE(m["spreads"].contains("L_ns"));
  // The collective overhead: the round's median excess of MPI_Allreduce/MPI_Barrier over their
  // exchange, floored at 0 (one round: the round's value is the file's).
  ASSERT_TRUE(doc.contains("o_coll_ns"));
  EXPECT_DOUBLE_EQ(p.o_coll_ns, doc["o_coll_ns"].get<double>());
  ASSERT_EQ(m["rounds"].size(), 1u);
  EXPECT_NEAR(p.o_coll_ns, std::max(0.0, m["rounds"][0]["collective_excess_ns"]["median"].get<double>()), 1e-6);
  EXPECT_FALSE(m["method"]["o_coll"].get<std::string>().empty());
  // o_probe: a blocking MPI_Probe with its message there (one round: the round's median); some
  // CPU time, far below the delay the receiver waited before probing.
  ASSERT_TRUE(doc.contains("o_probe_ns"));
  EXPECT_DOUBLE_EQ(p.o_probe_ns, doc["o_probe_ns"].get<double>());
  EXPECT_GT(doc["o_probe_ns"].get<double>(), 0);
  EXPECT_LT(doc["o_probe_ns"].get<double>(), 100000);
  EXPECT_NEAR(m["rounds"][0]["o_probe_ns"].get<double>(), m["rounds"][0]["probe_ns"]["median"].get<double>(), 1e-6);
  EXPECT_FALSE(m["method"]["o_probe"].get<std::string>().empty());
  // o_rndv: consistent with the G fit's intercept (one round: the round's value is the file's), 0
  // when the fit is over eager sizes.
  ASSERT_TRUE(doc.contains("o_rndv_ns"));
  EXPECT_DOUBLE_EQ(p.o_rndv_ns, doc["o_rndv_ns"].get<double>());
  const auto& fit = m["G_fit"];
  if (fit["protocol"] == "rendezvous")
    EXPECT_NEAR(doc["o_rndv_ns"].get<double>(),
                std::max(0.0, fit["intercept_ns"].get<double>() + fit["slope_ns_per_byte"].get<double>() - p.o_send_ns -
                                  p.o_recv_ns - 3 * p.L_ns),
                1e-6);
  else
    EXPECT_EQ(doc["o_rndv_ns"].get<double>(), 0);
  EXPECT_FALSE(m["method"]["o_rndv"].get<std::string>().empty());
  // The machine's busy-wait overrun, per rank: a fraction of the wait, never negative.
  ASSERT_EQ(m["busy_wait_overrun"]["per_rank"].size(), 2u);
  for (const auto& v : m["busy_wait_overrun"]["per_rank"]) EXPECT_GE(v.get<double>(), 0);
  EXPECT_GE(m["busy_wait_overrun"]["mean"].get<double>(), 0);
  // What a 16 KiB copy costs hot and right after a 1 ms wait, per rank: positive times whose
  // means are the two ranks' means.
  const auto& cold = m["cold_copy"];
  EXPECT_EQ(cold["bytes"].get<int>(), 16384);
  EXPECT_EQ(cold["wait_ns"].get<double>(), 1e6);
  ASSERT_EQ(cold["per_rank"].size(), 2u);
  double hot_sum = 0, after_sum = 0;
  for (const auto& r : cold["per_rank"]) {
    EXPECT_GT(r["hot_ns"].get<double>(), 0);
    EXPECT_GT(r["after_wait_ns"].get<double>(), 0);
    hot_sum += r["hot_ns"].get<double>();
    after_sum += r["after_wait_ns"].get<double>();
  }
  EXPECT_DOUBLE_EQ(cold["hot_ns"].get<double>(), hot_sum / 2);
  EXPECT_DOUBLE_EQ(cold["after_wait_ns"].get<double>(), after_sum / 2);
  // A rendezvous handshake after a computation that swept memory against one after spinning, at
  // the smallest probed size above S (the overlap idiom, the later rank's MPI_Waitall): o_rndv_cold
  // is their difference, floored at 0; nothing measured without a rendezvous size.
  const auto& handshake = m["cold_handshake"];
  ASSERT_TRUE(doc.contains("o_rndv_cold_ns"));
  EXPECT_DOUBLE_EQ(p.o_rndv_cold_ns, doc["o_rndv_cold_ns"].get<double>());
  EXPECT_EQ(handshake["compute_ns"].get<double>(), 100000.0);
  EXPECT_FALSE(handshake["method"].get<std::string>().empty());
  if (m["S_observed"].get<bool>() && doc["S_bytes"].get<double>() < 262144) {
    ASSERT_TRUE(handshake["measured"].get<bool>());
    EXPECT_GT(handshake["bytes"].get<double>(), doc["S_bytes"].get<double>());
    EXPECT_LE(handshake["bytes"].get<double>(), 2 * doc["S_bytes"].get<double>() + 2);
    EXPECT_GT(handshake["after_spin_ns"].get<double>(), 0);
    EXPECT_GT(handshake["after_sweep_ns"].get<double>(), 0);
    EXPECT_DOUBLE_EQ(p.o_rndv_cold_ns, std::max(0.0, handshake["after_sweep_ns"].get<double>() -
                                                         handshake["after_spin_ns"].get<double>()));
  } else {
    EXPECT_FALSE(handshake["measured"].get<bool>());
    EXPECT_EQ(p.o_rndv_cold_ns, 0);
  }
  // The transport's first use, measured first on the fresh pair: per size (ascending) the first
  // half of the round trips against the second half's median; the excess is never negative and
  // only the first half's slow round trips are counted. Up to --max-size 256KiB all five sizes.
  // The senders' share of the excess (time inside MPI_Send) is part of it.
  const auto& first = m["first_use"];
  EXPECT_EQ(first["trips"].get<int>(), 200);
  ASSERT_EQ(first["sizes"].size(), 5u);
  std::size_t previous = 0;
  for (const auto& f : first["sizes"]) {
    EXPECT_GT(f["bytes"].get<std::size_t>(), previous);
    previous = f["bytes"].get<std::size_t>();
    EXPECT_EQ(f["trips"].get<int>(), 200);
    EXPECT_GT(f["warm_rtt_ns"].get<double>(), 0);
    EXPECT_GT(f["first_rtt_ns"].get<double>(), 0);
    EXPECT_GE(f["excess_ns"].get<double>(), 0);
    EXPECT_GE(f["slow_trips"].get<int>(), 0);
    EXPECT_LE(f["slow_trips"].get<int>(), 100);
    // Each slow round trip alone exceeds the warm one by twice its length.
    EXPECT_GE(f["excess_ns"].get<double>(), 2 * f["warm_rtt_ns"].get<double>() * f["slow_trips"].get<int>());
    EXPECT_GE(f["send_excess_ns"].get<double>(), 0);
    EXPECT_LE(f["send_excess_ns"].get<double>(), f["excess_ns"].get<double>());
  }
  EXPECT_FALSE(first["method"].get<std::string>().empty());
  EXPECT_FALSE(m["method"]["L"].get<std::string>().empty());
  // The file says how G was taken: the one-buffer ping-pong (Netgauge's), which costs an echoed
  // rendezvous message twice what separate buffers do on the development VM.
  EXPECT_NE(m["method"]["G"].get<std::string>().find("one buffer"), std::string::npos);
  fs::remove(out);
}

TEST(LoggpRun, RefusesAnythingButTwoRanks) {
  const std::string out = temp_file("llamp-loggp-3"), log = temp_file("llamp-loggp-3-err");
  EXPECT_NE(run(std::string(LLAMP_TEST_MPIEXEC) + " -n 3 " + LLAMP_TEST_LOGGP + kQuick + " -o " + out + " 2>" + log),
            0);
  EXPECT_FALSE(fs::exists(out));
  // The reason reaches the user once (rank 0 reports it; the job is not aborted mid-message).
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("exactly two ranks"), std::string::npos) << text;
  EXPECT_EQ(text.find("exactly two ranks"), text.rfind("exactly two ranks")) << text;
  fs::remove(log);
}

// The patched MPICH + UCX stack, if built: $LLAMP_PATCHED_MPICH_PREFIX, else the build script's
// cache ($LLAMP_CACHE_DIR or /var/cache/llamp).
std::string patched_prefix() {
  if (const char* p = std::getenv("LLAMP_PATCHED_MPICH_PREFIX"); p && *p) return p;
  const char* cache = std::getenv("LLAMP_CACHE_DIR");
  return std::string(cache && *cache ? cache : "/var/cache/llamp") + "/mpich-ucx-llamp/prefix";
}

nlohmann::json measure_injected(const std::string& prefix, const std::string& delta) {
  const std::string out = temp_file("llamp-loggp-inject-" + delta);
  const std::string cmd = "bash -c 'source " + prefix + "/llamp-env.sh && MPIR_CVAR_NOLOCAL=1 LLAMP_DELTA_L=" + delta +
                          " " + LLAMP_TEST_MPIEXEC + " -n 2 " + LLAMP_TEST_LOGGP + kQuick + " -o " + out + "'";
  EXPECT_EQ(run(cmd), 0) << cmd;
  nlohmann::json doc = read_json(out);
  fs::remove(out);
  return doc;
}

double fastest_one_byte_trip(const nlohmann::json& doc) {
  return doc["measurement"]["per_size"].front()["half_rtt_ns"]["min"].get<double>();
}

TEST(LoggpRun, InjectedLatencyAddsToL) {
  const std::string prefix = patched_prefix();
  // llamp-loggp is built against Debian's MPICH and loads libmpich.so.12: the prefix must offer
  // that name for LD_LIBRARY_PATH to switch it to the patched library.
  if (!fs::exists(prefix + "/llamp-env.sh") || !fs::exists(prefix + "/lib/libmpich.so.12"))
    GTEST_SKIP() << "no patched MPICH with libmpich.so.12 at " << prefix << " (run scripts/build-patched-mpich.sh)";
  const nlohmann::json base = measure_injected(prefix, "0");
  const nlohmann::json injected = measure_injected(prefix, "50us");
  // Every message is held back by ΔL, so even the fastest 1 B trip is at least 50 us slower.
  // (Minima: preemption on a loaded machine can only lengthen a trip, never shorten it.)
  EXPECT_GE(fastest_one_byte_trip(injected) - fastest_one_byte_trip(base), 45'000);
  // L = half round trip - o_s - o_r grows by ΔL, not more, where two polling ranks and the
  // injector's delay thread each have a core (16 cores: +47.2 us). With fewer cores the delay
  // thread waits for time slices and releases messages milliseconds late (2 loaded cores: +4 ms),
  // and the medians L is made of are dominated by preemption.
  if (std::thread::hardware_concurrency() < 4) return;
  const double L0 = base["L_ns"].get<double>(), L50 = injected["L_ns"].get<double>();
  EXPECT_NEAR(L50 - L0, 50'000, 10'000) << "L0 = " << L0 << " ns, L(ΔL = 50 us) = " << L50 << " ns";
}

}  // namespace
