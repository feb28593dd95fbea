// Observable behaviour of the latency injector in the patched MPICH + UCX,
// measured by tests/injector/inject_probe under mpiexec (label mpi).
// Timing checks use medians and the tolerances of the injector's contract
// (docs/injector.md); the reference is always measured in the same test.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>
#include <map>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "probe_runner.h"

namespace llamp::inject_test {
namespace {

// The contract is per latency term: every L on the path becomes L + delta L
// within max(0.5 us, 2 % of delta L).  A check that adds up `terms` terms
// allows that error per term.
double tolerance_us(int terms, double delta_us) { return terms * std::max(0.5, 0.02 * delta_us); }

std::string delta(double us) { return "LLAMP_DELTA_L=" + std::to_string(us) + "us"; }

// The reference for "added latency" is stock MPICH on the same transport:
// injection routes on-node messages through UCX (as MPIR_CVAR_NOLOCAL=1
// does), so the reference must too, or rendezvous sizes would compare UCX's
// CMA get with MPICH's own shared-memory copy.
const std::string kReference = "MPIR_CVAR_NOLOCAL=1";

// The machine these tests run on may be shared (2 cores): a rank then loses
// its core for whole scheduler ticks (4 ms) now and then, which no latency
// injector can hide.  So every timing check measures the reference and the
// injected run alternately in the same attempt (drift cancels), takes
// medians over repetitions inside each run and over the runs, and gets a few
// attempts; a failure prints every attempt and the load average so it can
// be told apart from an injector bug.  Retries come after a pause: the VM
// also has disturbed spells of about half a minute (a campaign saw halo2d
// runs take 2.9 s instead of 1.0 s, and this test add 311 instead of
// 300 +- 6 us three times in a row), which back-to-back retries stay in.
constexpr int kAttempts = 5;
void pause_before_retry(int attempt) {
  if (attempt > 1) std::this_thread::sleep_for(std::chrono::seconds(3));
}
constexpr int kRounds = 5;  // reference/injected pairs per attempt

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string line;
  std::getline(in, line);
  return "load average: " + line;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string join(const std::vector<double>& v) {
  std::ostringstream out;
  for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  return out.str();
}

// Runs `args` alternately without and with injection (kRounds pairs, the
// order swapped every round) and returns, per key, the medians of the runs.
struct Paired {
  std::map<std::string, std::vector<double>> ref, inj;
  double added(const std::string& key) const { return median(inj.at(key)) - median(ref.at(key)); }
};

// One side of a paired measurement: its environment and the probe's arguments.
struct Leg {
  std::string env, args;
};

// Runs the two legs alternately (`rounds` pairs, the order swapped every
// round) and returns, per key, the values of every run.
Paired run_legs(const Leg& reference, const Leg& injected, const std::vector<std::string>& keys,
                std::ostringstream& log, int rounds = kRounds) {
  Paired p;
  for (int round = 0; round < rounds; ++round) {
    for (int leg = 0; leg < 2; ++leg) {
      bool is_injected = (leg + round) % 2 == 1;
      const Leg& l = is_injected ? injected : reference;
      auto r = run_probe(l.env, 2, l.args);
      if (r.exit_code != 0) {
        log << "run failed (" << l.env << " " << l.args << "):\n" << r.output;
        throw std::runtime_error(log.str());
      }
      for (const auto& k : keys) (is_injected ? p.inj : p.ref)[k].push_back(r.number(k));
    }
  }
  return p;
}

// Stock MPICH on the same transport against delta L; reference_args: the
// reference run's arguments where they differ from the injected run's.
Paired run_paired(double delta_us, const std::string& args, const std::vector<std::string>& keys,
                  std::ostringstream& log, const std::string& reference_args = "") {
  return run_legs({kReference, reference_args.empty() ? args : reference_args}, {delta(delta_us), args}, keys, log);
}

// The one-way time of a blocking ping-pong message (send start to receive
// end, from a send stamp in the message; one node shares CLOCK_MONOTONIC)
// grows by terms * delta L: 1 for eager messages; 3 for rendezvous (the
// receive is posted before the RTS arrives, "sender late": RTS + read
// request + read data, docs/analyzer.md).
//
// The reference waits as long as the injected run: its rank 1 computes
// (terms + 1) delta L before each reply, the time rank 0 spends waiting for
// the reply's first message in the injected run (the ping's terms, then the
// reply's first). A CPU of a shared VM comes back slow from a long wait, its
// caches emptied by whatever else ran on its core meanwhile (a 16 KiB memcpy:
// 0.43 us hot, 1.32 us after a 1 ms spin; docs/injector.md, "Waiting CPUs come
// back cold"), and an injected run waits where a plain one does not. With a
// reference that does not wait, that cost counted as injected latency:
// 16 KiB rendezvous at delta L = 1 ms added 3022-3060 us on an AMD EPYC VM;
// against a waiting reference 2976-3019 us (five pairs).
void expect_pingpong_grows_by(int bytes, int terms, double delta_us, int reps) {
  const std::string args = "pingpong " + std::to_string(bytes) + " " + std::to_string(reps);
  const std::string waiting_reference = args + " " + std::to_string((terms + 1) * delta_us);
  const std::string key = "oneway_median_us";
  const double expected = terms * delta_us;
  const double tolerance = tolerance_us(terms, delta_us);
  std::ostringstream log;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    pause_before_retry(attempt);
    Paired p = run_paired(delta_us, args, {key}, log, waiting_reference);
    double added = p.added(key);
    log << "attempt " << attempt << ": reference runs [" << join(p.ref[key]) << "] us, injected runs ["
        << join(p.inj[key]) << "] us, added " << added << " us (" << load_average() << ")\n";
    if (std::abs(added - expected) <= tolerance) {
      // A pass after retries says how close the machine came to failing it (ctest -V shows it).
      if (attempt > 1) std::cout << bytes << " B, delta L " << delta_us << " us, passed after retries:\n" << log.str();
      return;
    }
  }
  ADD_FAILURE() << bytes << " B, delta L " << delta_us << " us: one-way time did not grow by " << expected << " +- "
                << tolerance << " us in " << kAttempts << " attempts\n"
                << log.str();
}

// Just above UCX's on-node rendezvous threshold (8 KiB eager here): the CMA
// copy is short (~5-10 us), so the reference is as steady as an eager one.
// A 1 MiB copy takes 0.1-0.5 ms and is what a busy machine interrupts.
constexpr int kRendezvousBytes = 16384;

TEST(InjectorPingPong, EagerOneWayGrowsByDeltaL) {
  expect_pingpong_grows_by(8, 1, 1, 1000);
  expect_pingpong_grows_by(8, 1, 10, 500);
  expect_pingpong_grows_by(8, 1, 100, 200);
  expect_pingpong_grows_by(8, 1, 1000, 40);
}

TEST(InjectorPingPong, RendezvousOneWayGrowsByThreeDeltaL) {
  expect_pingpong_grows_by(kRendezvousBytes, 3, 1, 1000);
  expect_pingpong_grows_by(kRendezvousBytes, 3, 10, 500);
  expect_pingpong_grows_by(kRendezvousBytes, 3, 100, 100);
  expect_pingpong_grows_by(kRendezvousBytes, 3, 1000, 20);
}

// The analyzer's term table (docs/analyzer.md): sender late, the receive
// ends 3 latencies and the send 4 after the send started; receiver late,
// 2 and 3 after the receive is posted.  A term count is a slope, dT/dL, so
// the test compares two injected runs, delta L = 100 and 300 us: a 16 KiB
// rendezvous then spins before each protocol step in both, and the cold-CPU
// cost after those spins (docs/injector.md, "Waiting CPUs come back cold")
// mostly cancels.  Against stock MPICH it did not: on a 2-vCPU AMD EPYC VM
// sender late added 306-307 instead of 300 +- 6 us in five attempts, while
// on a VM of the same type the 300 - 100 us slope measured 597-613 against
// 600 +- 12 (five pairs).  That the terms start from the stock latency (the intercept) is
// InjectorPingPong's check, against a reference that waits as long.
//
// A run's median moves by +-8 us from one launch to the next here (receiver
// late, 16 KiB, stock MPICH: 6-17 us; also with -bind-to core), at every
// delta L; two legs double that, so this test takes 7 pairs, not 5.
constexpr int kSlopeRounds = 7;
TEST(InjectorRendezvous, LatencyTermsMatchTheAnalyzerModel) {
  const double low = 100, high = 300, step = high - low;
  const std::string bytes = std::to_string(kRendezvousBytes);
  struct Case {
    const char* name;
    std::string args;
    const char* recv_key;
    const char* send_key;
    int recv_terms, send_terms;
  } cases[] = {
      {"sender late", "rndvterms " + bytes + " 30 0 0", "recv_end_from_send_median_us", "send_end_from_send_median_us",
       3, 4},
      // The receiver computes delta L + 400 us after the barrier: the RTS
      // arrives while it computes, with its sender's stamp, so it is due
      // before the post and released in it (docs/injector.md).  A trial counts when the post came
      // more than delta L + 50 us after the send started.  Both legs use
      // the larger delta L's timing.
      {"receiver late", "rndvterms " + bytes + " 30 " + std::to_string(high + 400) + " " + std::to_string(high + 50),
       "recv_end_from_post_median_us", "send_end_from_post_median_us", 2, 3},
  };
  for (const auto& c : cases) {
    std::ostringstream log;
    bool passed = false;
    for (int attempt = 1; attempt <= kAttempts && !passed; ++attempt) {
      pause_before_retry(attempt);
      Paired p = run_legs({delta(low), c.args}, {delta(high), c.args}, {c.recv_key, c.send_key, "valid_trials"}, log,
                          kSlopeRounds);
      double recv = p.added(c.recv_key), send = p.added(c.send_key);
      log << c.name << " attempt " << attempt << ": receive +" << recv << " us (runs " << join(p.inj[c.recv_key])
          << " vs " << join(p.ref[c.recv_key]) << "), send +" << send << " us (runs " << join(p.inj[c.send_key])
          << " vs " << join(p.ref[c.send_key]) << "), valid trials " << join(p.ref["valid_trials"]) << " / "
          << join(p.inj["valid_trials"]) << " (" << load_average() << ")\n";
      passed = std::abs(recv - c.recv_terms * step) <= tolerance_us(c.recv_terms, step) &&
               std::abs(send - c.send_terms * step) <= tolerance_us(c.send_terms, step);
    }
    if (passed) std::cout << log.str();  // the measured slopes, for ctest -V
    EXPECT_TRUE(passed) << c.name << ": from delta L = " << low << " to " << high << " us expected receive +"
                        << c.recv_terms * step << " us, send +" << c.send_terms * step << " us\n"
                        << log.str();
  }
}

// What is held for a rendezvous message: RTS and ATS (messages, delta L each)
// and the completion of the get (2 delta L); UCX's get scheme sends no RTR.
TEST(InjectorRendezvous, HoldsRtsGetCompletionAndAts) {
  auto r = run_probe(delta(10) + " LLAMP_INJECT_STATS=1", 2, "pingpong " + std::to_string(kRendezvousBytes) + " 20");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int rank : {0, 1}) {
    std::regex line("llamp-inject: rank=" + std::to_string(rank) + " .*by_type=(.*)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, line)) << r.output;
    std::string types = m[1];
    // 20 + 20 warm-up round trips: every rank receives 40 RTS, completes 40
    // gets, and gets 40 ATS back for its own sends.
    for (const char* held : {"RNDV_RTS:40", "RNDV_ATS:40", "RNDV_GET_DONE:40"}) {
      EXPECT_NE(types.find(held), std::string::npos) << held << " in " << types;
    }
    EXPECT_EQ(types.find("RNDV_RTR"), std::string::npos) << types;
  }
}

TEST(InjectorFig8, BackToBackSendsAreDelayedOnceNotCumulatively) {
  // 100 back-to-back sends: the last one must complete about delta L after
  // it was sent, not 100 * delta L (paper, Fig. 8).  Bound: 10 * delta L,
  // far from 100 * delta L and above the scheduler ticks of a busy machine.
  const double d = 1000;
  std::ostringstream log;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    pause_before_retry(attempt);
    auto r = run_probe(delta(d), 2, "fig8 100 9");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    double last = r.number("last_oneway_median_us");
    EXPECT_GE(r.number("last_oneway_min_us"), d) << "no message may arrive early\n" << r.output;
    log << "attempt " << attempt << ": median " << last << " us, trials " << r.values["last_oneway_trials_us"] << " ("
        << load_average() << ")\n";
    if (last < 10 * d) {
      return;
    }
  }
  ADD_FAILURE() << "100 sends must not add up to 100 * delta L\n" << log.str();
}

TEST(InjectorUnexpected, ReceivePostedAfterReleaseCompletesAtOnce) {
  const double d = 200;
  // The receiver computes 1000 us outside MPI: the arrival must be stamped
  // while it computes, so the late receive finds the message already
  // released.  Trials where the sender itself was descheduled so long that
  // the receive was posted before arrival + delta L do not count.
  std::ostringstream log;
  bool passed = false;
  for (int attempt = 1; attempt <= kAttempts && !passed; ++attempt) {
    pause_before_retry(attempt);
    auto r = run_probe(delta(d), 2, "unexpected 1000 15 " + std::to_string(d + 100));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    log << r.output << load_average() << "\n";
    passed = r.number("valid_trials") >= 5 && r.number("recv_wait_median_us") < d / 2;
  }
  EXPECT_TRUE(passed) << log.str();
  // And a receive posted at once still waits for delta L.
  auto early = run_probe(delta(d), 2, "unexpected 0 9 0");
  ASSERT_EQ(early.exit_code, 0) << early.output;
  EXPECT_GE(early.number("oneway_median_us"), d) << early.output;
}

TEST(InjectorOverlap, ComputeShorterThanTheWatchPeriodStillHidesDeltaL) {
  // Overlap: the receiver says "go" and computes 150 us, shorter than the
  // injector thread's 200 us watch period, so only the sender's stamp can
  // tell when the data arrived.  It arrived delta L after the receiver left
  // MPI and is due delta L later, well before the receive is posted: LogGP
  // hides delta L behind the computation, and the receive must not wait.
  // Counting from when the receiver's progress first saw the data would make
  // the receive wait delta L.
  const double d = 50;
  std::ostringstream log;
  bool passed = false;
  for (int attempt = 1; attempt <= kAttempts && !passed; ++attempt) {
    pause_before_retry(attempt);
    auto r = run_probe("LLAMP_INJECT_WATCH_PERIOD=200us " + delta(d), 2, "overlap 150 15 " + std::to_string(d + 25));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    log << r.output << load_average() << "\n";
    passed = r.number("valid_trials") >= 5 && r.number("recv_wait_median_us") < d / 2;
  }
  EXPECT_TRUE(passed) << log.str();
  // The same run with the arrival taken when the receiver first polls (the
  // fallback where sender and receiver share no clock) waits for delta L:
  // the check above is what the stamp buys.
  auto seen = run_probe("LLAMP_INJECT_WATCH_PERIOD=200us LLAMP_INJECT_ARRIVAL=seen " + delta(d), 2,
                        "overlap 150 15 " + std::to_string(d + 25));
  ASSERT_EQ(seen.exit_code, 0) << seen.output;
  EXPECT_GT(seen.number("recv_wait_median_us"), d / 2) << seen.output;
}

// Without send stamps (a peer on another node; LLAMP_INJECT_ARRIVAL=seen here) only the injector's
// thread can see an arrival while the receiver computes.  The receiver computes 1 ms, five watch
// periods: the thread takes over within two periods of its leaving MPI and stamps the data, which
// is then due long before the post, so the receive does not wait.  (Until the thread read its
// periodic timer, the timer fired once, the thread never took over again, and this receive waited
// delta L from the post.)  On one node every arrival is stamped and the thread never wakes.
TEST(InjectorOverlap, WithoutStampsTheThreadSeesArrivalsWhileTheApplicationComputes) {
  const double d = 50;
  std::ostringstream log;
  bool passed = false;
  for (int attempt = 1; attempt <= kAttempts && !passed; ++attempt) {
    pause_before_retry(attempt);
    auto r = run_probe("LLAMP_INJECT_STATS=1 LLAMP_INJECT_WATCH_PERIOD=200us LLAMP_INJECT_ARRIVAL=seen " + delta(d), 2,
                       "overlap 1000 15 " + std::to_string(d + 25));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("watch=on"), std::string::npos) << r.output;
    log << r.output << load_average() << "\n";
    passed = r.number("valid_trials") >= 5 && r.number("recv_wait_median_us") < d / 2;
  }
  EXPECT_TRUE(passed) << log.str();
  auto stamped = run_probe("LLAMP_INJECT_STATS=1 " + delta(d), 2, "overlap 1000 3 " + std::to_string(d + 25));
  ASSERT_EQ(stamped.exit_code, 0) << stamped.output;
  EXPECT_EQ(stamped.output.find("watch=on"), std::string::npos) << stamped.output;
  EXPECT_NE(stamped.output.find("watch=off"), std::string::npos) << stamped.output;
}

// The thread never hands a message to MPICH: a rendezvous send whose RTS is due while the receiver
// computes (Irecv posted, then 1 ms outside MPI, then Wait) starts its handshake in the Wait, as
// MPICH does without the injector (no progress thread; docs/schedgen.md, "Progress of rendezvous
// receives").  With the thread watching (no stamps), the receive still pays its two remaining
// latency terms (the get's 2 delta L) after the compute, not during it.
TEST(InjectorOverlap, TheThreadDoesNotMoveAHandshakeWhileTheApplicationComputes) {
  const double d = 200;
  std::ostringstream log;
  bool passed = false;
  for (int attempt = 1; attempt <= kAttempts && !passed; ++attempt) {
    pause_before_retry(attempt);
    auto r = run_probe("LLAMP_INJECT_WATCH_PERIOD=200us LLAMP_INJECT_ARRIVAL=seen " + delta(d), 2,
                       "rndvoverlap " + std::to_string(kRendezvousBytes) + " 15 1000");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    log << r.output << load_average() << "\n";
    passed = r.number("wait_median_us") > 2 * d - 0.2 * d;
  }
  EXPECT_TRUE(passed) << log.str();
}

TEST(InjectorSelf, MessagesToOneselfAreNotDelayed) {
  // A message a rank sends itself crosses no network (the model charges it
  // nothing), but UCX carries it over shared memory like any other: eager
  // and rendezvous sizes must still take microseconds, not delta L = 1 ms.
  // (Delaying them cost every MPI_Alltoall, which sends each rank its own
  // block, one extra delta L.)
  const double d = 1000;
  for (int bytes : {64, 65536}) {
    auto r = run_probe(delta(d), 2, "selfsend " + std::to_string(bytes) + " 50");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_LT(r.number("self_round_median_us"), d / 10) << bytes << " B\n" << r.output;
  }
}

TEST(InjectorAnySource, WaitanyAndTestUnderThreadMultipleSeeDeltaL) {
  const double d = 50;
  std::ostringstream log;
  for (int attempt = 1; attempt <= kAttempts; ++attempt) {
    pause_before_retry(attempt);
    auto r = run_probe(delta(d), 2, "anysource 200");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.number("thread_provided"), 3) << "MPI_THREAD_MULTIPLE";
    double median = r.number("oneway_median_us");
    EXPECT_GE(median, d) << "no message may arrive early\n" << r.output;
    log << "attempt " << attempt << ": one-way median " << median << " us (" << load_average() << ")\n";
    if (median < d + 25) {
      return;
    }
  }
  ADD_FAILURE() << "ANY_SOURCE receives completed more than 25 us after delta L\n" << log.str();
}

TEST(InjectorCollective, AllreduceInternalMessagesAreDelayed) {
  const double d = 100;
  // 4 ranks: from the last rank's entry, 2 dependent message steps before
  // the last rank leaves (measured over all ranks: a rank descheduled before
  // the call may find its partners' messages already released).
  auto r = run_probe(delta(d) + " LLAMP_INJECT_STATS=1", 4, "collective 50");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GE(r.number("allreduce_span_median_us"), 2 * d) << r.output;
}

// The campaign reads every rank's statistics line from the launcher's merged
// output: each line must arrive whole, on a line of its own.  Written in
// pieces (stdio on glibc 2.39 did), another rank's line can land between
// them, and that run was failed as "no line from rank 3" (stop 59).
TEST(InjectorStats, EveryRankPrintsOneWholeLine) {
  auto r = run_probe(delta(10) + " LLAMP_INJECT_STATS=1", 4, "collective 5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::regex whole(
      "llamp-inject: rank=([0-9]+) delta_l_ns=10000 delayed=[0-9]+ [^\n]*"
      "by_type=[^ \n]+ turns=(gate|mutex) watch=(on|off)");
  std::istringstream lines(r.output);
  std::string text;
  std::map<int, int> seen;
  while (std::getline(lines, text)) {
    if (text.find("llamp-inject:") == std::string::npos) continue;
    std::smatch m;
    ASSERT_TRUE(std::regex_match(text, m, whole)) << "not one whole line: " << text << "\n" << r.output;
    ++seen[std::stoi(m[1])];
  }
  EXPECT_EQ(seen, (std::map<int, int>{{0, 1}, {1, 1}, {2, 1}, {3, 1}})) << r.output;
}

TEST(InjectorFlood, MillionSmallMessagesArriveInOrderWithoutLoss) {
  auto r = run_probe(delta(10), 2, "flood 1000000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.number("received"), 1000000) << r.output;
  EXPECT_EQ(r.number("order_errors"), 0) << r.output;
}

TEST(InjectorOff, ZeroAndUnsetGiveTheResultsOfStockMpich) {
  auto stock = run_probe("", 2, "results", LLAMP_STOCK_PROBE, LLAMP_STOCK_MPIEXEC);
  auto unset = run_probe("", 2, "results");
  auto zero = run_probe("LLAMP_DELTA_L=0", 2, "results");
  auto on = run_probe(delta(10), 2, "results");
  for (const auto* r : {&stock, &unset, &zero, &on}) {
    ASSERT_EQ(r->exit_code, 0) << r->output;
  }
  EXPECT_EQ(unset.values.at("checksum"), stock.values.at("checksum"));
  EXPECT_EQ(zero.values.at("checksum"), stock.values.at("checksum"));
  EXPECT_EQ(on.values.at("checksum"), stock.values.at("checksum"));
  // Off means off: no statistics line, nothing delayed.
  auto zero_stats = run_probe("LLAMP_DELTA_L=0 LLAMP_INJECT_STATS=1", 2, "results");
  EXPECT_EQ(zero_stats.output.find("llamp-inject:"), std::string::npos) << zero_stats.output;
}

TEST(InjectorConfig, MalformedDeltaLStopsMpiInitWithAClearMessage) {
  auto r = run_probe("LLAMP_DELTA_L=10parsecs", 2, "results");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("LLAMP_DELTA_L=10parsecs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unknown unit"), std::string::npos) << r.output;
}

TEST(InjectorStats, EveryRankReportsDelayedMessagesAndLateness) {
  auto r = run_probe(delta(20) + " LLAMP_INJECT_STATS=1", 2, "pingpong 8 100");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int rank : {0, 1}) {
    std::regex line("llamp-inject: rank=" + std::to_string(rank) +
                    " delta_l_ns=20000 delayed=([0-9]+) lateness_median_ns=(-?[0-9]+) "
                    "lateness_p99_ns=(-?[0-9]+)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, line)) << r.output;
    EXPECT_GE(std::stol(m[1]), 120) << "100 pings/pongs + warm-up and barriers";
  }
}

// A held message that falls due while the application computes outside MPI is released in the
// first pass of its next call: ΔL hid behind the computation, and the release is not late.  The
// receiver's progress sees the message in a loop of MPI_Iprobe (ΔL = 200 us), then it computes
// 1 ms and receives: the release comes ~0.8 ms after the message fell due, which the lateness
// statistics must leave out (due_outside_mpi) instead of reporting it as the injector's.
// A rank descheduled inside MPI while the message falls due is late, and counted so: on a busy
// machine an attempt can see that, hence the retries.
TEST(InjectorStats, ReleasesAfterTheApplicationComputedAreNotLate) {
  std::ostringstream log;
  bool passed = false;
  for (int attempt = 1; attempt <= kAttempts && !passed; ++attempt) {
    pause_before_retry(attempt);
    auto r = run_probe(delta(200) + " LLAMP_INJECT_STATS=1", 2, "dueoutside 0 10 1000");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::regex line("llamp-inject: rank=1 .* lateness_max_ns=([0-9]+) .* due_outside_mpi=([0-9]+) ");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, line)) << r.output;
    log << r.output << load_average() << "\n";
    // most of the ten messages left out (one that arrives only after the MPI_Iprobe loop is due when
    // first seen), and no release ~0.8 ms after its time counted as late
    passed = std::stol(m[2]) >= 5 && std::stol(m[1]) < 500000;
  }
  EXPECT_TRUE(passed) << log.str();
}

// The application and the delay thread take turns through the injector's gate, so MPICH stays
// unthreaded as without the injector; an application that asks for MPI_THREAD_MULTIPLE keeps
// MPICH's global mutex (docs/injector.md, "The application gate").
TEST(InjectorStats, TurnsAreTheGateUnlessTheApplicationIsMultiThreaded) {
  auto single = run_probe(delta(20) + " LLAMP_INJECT_STATS=1", 2, "pingpong 8 100");
  ASSERT_EQ(single.exit_code, 0) << single.output;
  auto multiple = run_probe(delta(20) + " LLAMP_INJECT_STATS=1", 2, "anysource 50");
  ASSERT_EQ(multiple.exit_code, 0) << multiple.output;
  for (int rank : {0, 1}) {
    std::regex line("llamp-inject: rank=" + std::to_string(rank) + " .* turns=([a-z]+)");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(single.output, m, line)) << single.output;
    EXPECT_EQ(m[1], "gate") << single.output;
    ASSERT_TRUE(std::regex_search(multiple.output, m, line)) << multiple.output;
    EXPECT_EQ(m[1], "mutex") << multiple.output;
  }
}

}  // namespace
}  // namespace llamp::inject_test
