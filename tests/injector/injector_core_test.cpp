// Unit tests of the injector's UCX-independent parts (label unit).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

extern "C" {
#include "config.h"
#include "delay_queue.h"
#include "duration.h"
#include "lateness.h"
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

}  // namespace
