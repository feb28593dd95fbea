// Unit tests of the injector's UCX-independent parts (label unit).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

extern "C" {
#include "config.h"
#include "delay_queue.h"
#include "duration.h"
#include "lateness.h"
#include "llamp_inject.h"
}

namespace {

int64_t parse(const char* text) {
  int64_t ns = -1;
  char err[160];
  EXPECT_EQ(llamp_parse_duration_ns(text, &ns, err, sizeof err), 0) << text << ": " << err;
  return ns;
}

std::string parse_error(const char* text) {
  int64_t ns = -1;
  char err[160] = "";
  EXPECT_EQ(llamp_parse_duration_ns(text, &ns, err, sizeof err), -1) << text;
  return err;
}

TEST(InjectorDuration, SuffixesAndPlainMicroseconds) {
  EXPECT_EQ(parse("250ns"), 250);
  EXPECT_EQ(parse("10us"), 10000);
  EXPECT_EQ(parse("10"), 10000) << "a plain number means microseconds";
  EXPECT_EQ(parse("1.5ms"), 1500000);
  EXPECT_EQ(parse("2s"), 2000000000);
  EXPECT_EQ(parse("0"), 0);
  EXPECT_EQ(parse("0.5"), 500);
}

TEST(InjectorDuration, FractionsRoundToWholeNanoseconds) {
  EXPECT_EQ(parse("0.0000015s"), 1500);
  EXPECT_EQ(parse("2.5ns"), 3) << "half a ns rounds up";
  EXPECT_EQ(parse("2.4999ns"), 2);
  EXPECT_EQ(parse("0.123456789123456789ms"), 123457) << "digits past 10^-12 of the unit are read and ignored";
  EXPECT_EQ(parse("3600s"), 3600LL * 1000000000LL) << "exactly one hour is allowed";
  EXPECT_EQ(parse("007us"), 7000);
}

#if defined(__x86_64__)
// XINUSE (XGETBV with ECX = 1) bit 0: the process has used the x87 unit since it started.
bool x87_in_use_is_readable() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid_count(0xd, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 2)) != 0;
}

bool x87_in_use() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(1));
  return (lo & 1u) != 0;
}

// What a fresh process that parses durations shows: exit 0, or why not (stderr and the code).
[[noreturn]] void parse_in_a_fresh_process() {
  if (x87_in_use()) {
    std::fprintf(stderr, "the x87 unit was in use before any parse\n");
    std::exit(2);
  }
  for (const char* text : {"0ns", "0", "10us", "1.5ms", "0.0000015s", "7200s", "abc"}) {
    int64_t ns = 0;
    char err[160];
    llamp_parse_duration_ns(text, &ns, err, sizeof err);
    if (x87_in_use()) {
      std::fprintf(stderr, "parsing \"%s\" used the x87 unit\n", text);
      std::exit(1);
    }
  }
  volatile long double value = 2.0L;  // the probe itself: one long double operation must show
  value = value * 3.0L;
  std::exit(x87_in_use() ? 0 : 3);
}

// MPI_Init parses LLAMP_DELTA_L in every run. A parse in long double put the x87 unit in use, and
// app_halo3d then ran ~5 % slower at LLAMP_DELTA_L=0ns than without the variable (docs/injector.md),
// so the campaign's ΔL = 0 runs were not the runs it had traced. The check runs in a re-executed
// test binary ("threadsafe" death test): in this process another test may have used the unit.
TEST(InjectorDurationDeathTest, ParsingLeavesTheX87UnitUnused) {
  if (!x87_in_use_is_readable()) GTEST_SKIP() << "this CPU does not report XINUSE (XGETBV with ECX = 1)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(parse_in_a_fresh_process(), testing::ExitedWithCode(0), "")
      << "exit 1: a parse used the x87 unit; 2: the fresh process had used it already; 3: XINUSE did not show "
         "a long double multiplication";
}
#endif

TEST(InjectorDuration, MalformedValuesAreRejectedWithTheReason) {
  EXPECT_NE(parse_error("").find("empty"), std::string::npos);
  EXPECT_NE(parse_error("-5us").find("non-negative"), std::string::npos);
  EXPECT_NE(parse_error("10 us").find("unknown unit"), std::string::npos);
  EXPECT_NE(parse_error("10min").find("unknown unit"), std::string::npos);
  EXPECT_NE(parse_error("us").find("non-negative"), std::string::npos);
  EXPECT_NE(parse_error("7200s").find("one hour"), std::string::npos);
}

TEST(InjectorConfig, UnsetAndZeroMeanOff) {
  llamp_inject_config c;
  char err[256];
  ASSERT_EQ(llamp_inject_config_parse(nullptr, nullptr, nullptr, nullptr, &c, err, sizeof err), 0);
  EXPECT_EQ(c.delta_ns, 0);
  ASSERT_EQ(llamp_inject_config_parse("0us", "0", nullptr, nullptr, &c, err, sizeof err), 0);
  EXPECT_EQ(c.delta_ns, 0);
  EXPECT_EQ(c.stats, 0);
}

TEST(InjectorConfig, ErrorsNameTheVariableAndValue) {
  llamp_inject_config c;
  char err[256];
  ASSERT_EQ(llamp_inject_config_parse("3 parsecs", nullptr, nullptr, nullptr, &c, err, sizeof err), -1);
  EXPECT_NE(std::string(err).find("LLAMP_DELTA_L=3 parsecs"), std::string::npos) << err;
  ASSERT_EQ(llamp_inject_config_parse("1us", "yes", nullptr, nullptr, &c, err, sizeof err), -1);
  EXPECT_NE(std::string(err).find("LLAMP_INJECT_STATS=yes"), std::string::npos) << err;
  ASSERT_EQ(llamp_inject_config_parse("1us", "1", "100ns", nullptr, &c, err, sizeof err), -1);
  EXPECT_NE(std::string(err).find("LLAMP_INJECT_WATCH_PERIOD=100ns"), std::string::npos) << err;
  ASSERT_EQ(llamp_inject_config_parse("1us", nullptr, nullptr, "later", &c, err, sizeof err), -1);
  EXPECT_NE(std::string(err).find("LLAMP_INJECT_ARRIVAL=later"), std::string::npos) << err;
}

TEST(InjectorConfig, ArrivalIsTheSendStampUnlessSeenIsAsked) {
  llamp_inject_config c;
  char err[256];
  ASSERT_EQ(llamp_inject_config_parse("1us", nullptr, nullptr, nullptr, &c, err, sizeof err), 0);
  EXPECT_EQ(c.arrival_at_send, 1);
  ASSERT_EQ(llamp_inject_config_parse("1us", nullptr, nullptr, "seen", &c, err, sizeof err), 0);
  EXPECT_EQ(c.arrival_at_send, 0);
  ASSERT_EQ(llamp_inject_config_parse("1us", nullptr, nullptr, "sent", &c, err, sizeof err), 0);
  EXPECT_EQ(c.arrival_at_send, 1);
}

llamp_delayed_msg msg_at(uint64_t release, uint8_t tag) {
  llamp_delayed_msg m{};
  m.release_ns = release;
  m.am_id = tag;
  return m;
}

TEST(InjectorDelayQueue, ReleasesByTimeNotByInsertion) {
  llamp_delay_queue q;
  llamp_delay_queue_init(&q);
  for (uint64_t t : {50, 10, 40, 20, 30}) {
    ASSERT_EQ(llamp_delay_queue_push(&q, msg_at(t, 0)), 0);
  }
  std::vector<uint64_t> order;
  llamp_delayed_msg m;
  while (llamp_delay_queue_pop(&q, &m) == 0) order.push_back(m.release_ns);
  EXPECT_EQ(order, (std::vector<uint64_t>{10, 20, 30, 40, 50}));
  llamp_delay_queue_free(&q);
}

TEST(InjectorDelayQueue, EqualTimesKeepArrivalOrderAndCapacityGrows) {
  llamp_delay_queue q;
  llamp_delay_queue_init(&q);
  const int n = 100000;  // far beyond the initial capacity
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(llamp_delay_queue_push(&q, msg_at(1000 + i / 7, static_cast<uint8_t>(i % 7))), 0);
  }
  llamp_delayed_msg m;
  uint64_t last_seq = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(llamp_delay_queue_pop(&q, &m), 0);
    EXPECT_EQ(m.am_id, i % 7);
    if (i) EXPECT_GT(m.seq, last_seq);
    last_seq = m.seq;
  }
  EXPECT_EQ(llamp_delay_queue_top(&q), nullptr);
  llamp_delay_queue_free(&q);
}

TEST(InjectorLateness, MedianAndP99) {
  llamp_lateness l;
  llamp_lateness_init(&l);
  for (int i = 1; i <= 100; ++i) llamp_lateness_add(&l, i);
  EXPECT_EQ(llamp_lateness_quantile(&l, 0.5), 50);
  EXPECT_EQ(llamp_lateness_quantile(&l, 0.99), 99);
  EXPECT_EQ(llamp_lateness_quantile(&l, 1.0), 100);
  llamp_lateness_free(&l);
}

// The gate that replaces MPICH's global mutex while the injector runs: the application (every MPI
// call) and the injector's thread (only when the application left MPI) must never be inside at
// the same time, or the thread progresses UCX under an MPI call in flight.
void spin(int n) {
  for (int i = 0; i < n; ++i) asm volatile("" ::: "memory");  // kept by the optimiser
}

TEST(InjectorGate, TheCallerOfEnableCountsAsInsideUntilItsNextCallReturns) {
  if (!llamp_inject_gate_enable()) GTEST_SKIP() << "membarrier(2) unavailable: MPICH keeps its mutex";
  EXPECT_EQ(llamp_inject_gate_try(), 0) << "MPI_Init is still running";
  llamp_inject_gate_enter();
  EXPECT_EQ(llamp_inject_gate_try(), 0) << "inside an MPI call";
  llamp_inject_gate_exit();
  EXPECT_EQ(llamp_inject_gate_try(), 1) << "outside MPI";
  llamp_inject_gate_release();
  llamp_inject_gate_disable();
}

TEST(InjectorGate, ApplicationAndThreadAreNeverInsideTogether) {
  if (!llamp_inject_gate_enable()) GTEST_SKIP() << "membarrier(2) unavailable: MPICH keeps its mutex";
  llamp_inject_gate_exit();
  std::atomic<int> occupant{0}, overlaps{0};
  std::atomic<bool> done{false};
  uint64_t shared = 0;  // plain: written only by whoever is inside
  uint64_t app_in = 0, thread_in = 0, refused = 0;
  std::thread injector([&] {
    // A fixed number of attempts, so the test's length does not depend on who wins them. Each
    // one is a membarrier (an interrupt of the application's core), far more often than the
    // injector's one per watch period, so the two meet in every phase of a call.
    for (int attempt = 0; attempt < 20000; ++attempt) {
      spin(2000);
      if (!llamp_inject_gate_try()) {
        ++refused;
        continue;
      }
      if (occupant.exchange(2) != 0) overlaps.fetch_add(1);
      ++shared;
      ++thread_in;
      spin(200);  // long enough that the application often finds it inside and must wait
      occupant.store(0);
      llamp_inject_gate_release();
    }
    done.store(true);
  });
  for (uint64_t i = 0; !done.load(std::memory_order_relaxed); ++i) {
    llamp_inject_gate_enter();
    if (occupant.exchange(1) != 0) overlaps.fetch_add(1);
    ++shared;
    ++app_in;
    spin(20);
    occupant.store(0);
    llamp_inject_gate_exit();
    // Computation between calls: mostly short, now and then longer than the thread's attempt.
    spin(i % 64 == 63 ? 100000 : static_cast<int>(i % 64) * 8);
  }
  injector.join();
  llamp_inject_gate_disable();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(shared, app_in + thread_in) << "an increment was lost: both were inside";
  EXPECT_GT(thread_in, 0u) << "the thread never found the application outside";
  EXPECT_GT(refused, 0u) << "the thread never found the application inside";
}

}  // namespace
