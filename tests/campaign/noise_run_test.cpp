// llamp-noise on the real MPICH stack at -n 2: a recording core's reader accepts, one lane per
// rank, with the rank's CPU and host, detours inside the recording; and clear errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "command_helpers.hpp"
#include "llamp/noise_recording.hpp"

namespace fs = std::filesystem;
using llamp::test::run;
using llamp::test::temp_file;

TEST(NoiseRun, TwoRanksWriteARecordingTheAnalyzerReads) {
  const std::string out = temp_file("llamp-noise");
  ASSERT_EQ(run(std::string(LLAMP_TEST_MPIEXEC) + " -n 2 " + LLAMP_TEST_NOISE +
                " --duration 300ms --throughput-duration 200ms --resume-reps 20 -o " + out),
            0);
  const llamp::NoiseRecording r = llamp::read_noise_recording(out);  // sorted, inside, no overlap
  EXPECT_EQ(r.duration_ns, 300000000u);
  EXPECT_EQ(r.threshold_ns, 1000u);
  ASSERT_EQ(r.ranks.size(), 2u);
  for (const auto& rank : r.ranks) {
    EXPECT_GE(rank.cpu, 0);
    EXPECT_FALSE(rank.host.empty());
    EXPECT_EQ(rank.dropped, 0u);
    for (auto [start, length] : rank.detours) EXPECT_GE(length, r.threshold_ns);
    // Every rank timed its throughput slices: at least one, the fast speed at most the median.
    ASSERT_TRUE(rank.throughput.has_value());
    EXPECT_GT(rank.throughput->slices, 0u);
    EXPECT_GT(rank.throughput->base_ns, 0u);
    EXPECT_LE(rank.throughput->base_ns, rank.throughput->median_ns);
    EXPECT_GE(rank.throughput->slow_fraction, 0.0);
    EXPECT_LE(rank.throughput->slow_fraction, 1.0);
    // and its resume cost: the block hot, then after spins of 3 µs to 1 ms (the reader checked the
    // order), each a mean of 20 positive times.
    ASSERT_TRUE(rank.resume.has_value());
    EXPECT_EQ(rank.resume->reps, 20u);
    ASSERT_EQ(rank.resume->after_ns.size(), 7u);
    EXPECT_EQ(rank.resume->after_ns.back().first, 1000000u);
    for (auto [spin, mean] : rank.resume->after_ns) EXPECT_GT(mean, 0u) << spin;
    // and the other MPI work timed right after the block, at the same spins.
    ASSERT_EQ(rank.resume->following_ns.size(), 7u);
    for (size_t k = 0; k < 7; ++k) {
      EXPECT_EQ(rank.resume->following_ns[k].first, rank.resume->after_ns[k].first);
      EXPECT_GT(rank.resume->following_ns[k].second, 0u);
    }
  }
  EXPECT_EQ(r.throughput_duration_ns, 200000000u);
  EXPECT_NE(r.method.find("CLOCK_MONOTONIC"), std::string::npos);
  EXPECT_NE(r.method.find("10th percentile"), std::string::npos);
  EXPECT_NE(r.method.find("resume.after_ns"), std::string::npos);
  EXPECT_NE(r.method.find("resume.following_ns"), std::string::npos);
  fs::remove(out);
}

TEST(NoiseRun, ThroughputSlicesAndResumeCostCanBeLeftOut) {
  const std::string out = temp_file("llamp-noise-nothroughput");
  ASSERT_EQ(run(std::string(LLAMP_TEST_MPIEXEC) + " -n 2 " + LLAMP_TEST_NOISE +
                " --duration 100ms --throughput-duration 0s --resume-reps 0 -o " + out),
            0);
  const llamp::NoiseRecording r = llamp::read_noise_recording(out);
  EXPECT_EQ(r.throughput_duration_ns, 0u);
  for (const auto& rank : r.ranks) {
    EXPECT_FALSE(rank.throughput.has_value());
    EXPECT_FALSE(rank.resume.has_value());
  }
  fs::remove(out);
}

TEST(NoiseRun, BadDurationIsAnErrorNamingTheOption) {
  const std::string log = temp_file("llamp-noise-err");
  EXPECT_NE(run(std::string(LLAMP_TEST_MPIEXEC) + " -n 2 " + LLAMP_TEST_NOISE + " --duration 3 -o /dev/null 2>" + log),
            0);
  std::string text;
  if (FILE* f = std::fopen(log.c_str(), "r")) {
    char buf[4096];
    text.assign(buf, std::fread(buf, 1, sizeof buf, f));
    std::fclose(f);
  }
  EXPECT_NE(text.find("--duration"), std::string::npos) << text;
  fs::remove(log);
}
