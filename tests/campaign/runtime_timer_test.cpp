// libllamp_runtime_timer.so, the campaign's runtime measurement: preloaded into a real MPI run it
// must leave one record per rank whose runtime covers the work done between MPI_Init and
// MPI_Finalize.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../scratch_dir.hpp"

namespace fs = std::filesystem;
using llamp::test::scratch_dir;

namespace {

struct Record {
  int rank = -1, size = 0;
  long long runtime_ns = -1, init_end_ns = 0, finalize_start_ns = 0;
};

Record parse(const fs::path& path) {
  std::ifstream in(path);
  std::string tag, k1, k2, k3, k4, k5;
  Record r;
  in >> tag >> k1 >> r.rank >> k2 >> r.size >> k3 >> r.runtime_ns >> k4 >> r.init_end_ns >> k5 >> r.finalize_start_ns;
  EXPECT_EQ(tag, "llamp-runtime") << path;
  EXPECT_EQ(k3, "runtime_ns") << path;
  return r;
}

TEST(RuntimeTimer, EveryRankRecordsTheTimeBetweenInitAndFinalize) {
  const fs::path dir = scratch_dir("timer");
  // 50 ms of computation per rank between MPI_Init and MPI_Finalize.
  const std::string cmd = "LD_PRELOAD=" + std::string(LLAMP_TEST_TIMER_LIB) + " LLAMP_RUNTIME_DIR=" + dir.string() +
                          " " + LLAMP_TEST_MPIEXEC + " -n 4 " + LLAMP_TEST_APP +
                          " --compute-ms 50 --iterations 5 > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  for (int rank = 0; rank < 4; ++rank) {
    const fs::path file = dir / ("runtime-" + std::to_string(rank) + ".txt");
    ASSERT_TRUE(fs::exists(file)) << file;
    const Record r = parse(file);
    EXPECT_EQ(r.rank, rank);
    EXPECT_EQ(r.size, 4);
    EXPECT_EQ(r.runtime_ns, r.finalize_start_ns - r.init_end_ns);
    EXPECT_GE(r.runtime_ns, 50'000'000) << "rank " << rank << " computed 50 ms inside the interval";
  }
}

// LLAMP_CORE_PROBE_SHM: the node's first rank times a cache line's hand-off to the other rank
// just before MPI_Init and just after MPI_Finalize, and adds both to its record (the campaign's
// in-run core probe); the other rank's record stays as it was.
TEST(RuntimeTimer, CoreProbeInsideTheRunGoesToTheFirstRanksRecord) {
  const std::string id = std::to_string(::getpid());
  const fs::path dir = scratch_dir("timer-probe");
  const std::string shm = "/llamp-timer-test-" + id;
  const std::string cmd = "LD_PRELOAD=" + std::string(LLAMP_TEST_TIMER_LIB) + " LLAMP_RUNTIME_DIR=" + dir.string() +
                          " LLAMP_CORE_PROBE_SHM=" + shm + " " + LLAMP_TEST_MPIEXEC + " -n 2 " + LLAMP_TEST_APP +
                          " --compute-ms 5 > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  fs::remove(fs::path("/dev/shm") / shm.substr(1));
  auto words = [](const fs::path& file) {
    std::ifstream in(file);
    std::vector<std::string> w;
    for (std::string x; in >> x;) w.push_back(x);
    return w;
  };
  const std::vector<std::string> first = words(dir / "runtime-0.txt");
  ASSERT_EQ(first.size(), 21u);
  EXPECT_EQ(first[11], "core_init_ns");
  EXPECT_EQ(first[13], "core_finalize_ns");
  // Both ranks answered: a positive hand-off time, not the -1 of a peer that never came.
  EXPECT_GT(std::stoll(first[12]), 0);
  EXPECT_GT(std::stoll(first[14]), 0);
  EXPECT_EQ(words(dir / "runtime-1.txt").size(), 17u);
  EXPECT_EQ(first[15], "compute_ns");
  EXPECT_EQ(parse(dir / "runtime-0.txt").rank, 0);
}

// With LLAMP_CORE_PROBE_PERIOD_MS the ranks' threads also probe during the run (every 10 ms of a
// 500 ms run here): rank 0's record says how many probes were answered, the largest and the smallest.
TEST(RuntimeTimer, CoreProbesDuringTheRunGoToTheFirstRanksRecord) {
  const std::string id = std::to_string(::getpid());
  const std::string shm = "/llamp-timer-during-" + id;
  // A probe needs both ranks' threads on their cores at once; while other tests load the machine a
  // whole run can pass without one (then core_run_max_ns is -1), so up to three runs.
  int probes = 0;
  for (int attempt = 1; attempt <= 3 && probes == 0; ++attempt) {
    const fs::path dir = scratch_dir("timer-during");
    const std::string cmd = "LD_PRELOAD=" + std::string(LLAMP_TEST_TIMER_LIB) + " LLAMP_RUNTIME_DIR=" + dir.string() +
                            " LLAMP_CORE_PROBE_SHM=" + shm + " LLAMP_CORE_PROBE_PERIOD_MS=10 " + LLAMP_TEST_MPIEXEC +
                            " -n 2 " + LLAMP_TEST_APP + " --compute-ms 500 --iterations 10 > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    fs::remove(fs::path("/dev/shm") / shm.substr(1));
    std::ifstream in(dir / "runtime-0.txt");
    std::vector<std::string> w;
    for (std::string x; in >> x;) w.push_back(x);
    ASSERT_EQ(w.size(), 27u);
    EXPECT_EQ(w[15], "core_run_max_ns");
    EXPECT_EQ(w[17], "core_run_probes");
    EXPECT_EQ(w[19], "core_run_min_ns");
    probes = std::stoi(w[18]);
    EXPECT_LE(probes, 60);  // one per 10 ms of a run of about 500 ms
    if (probes > 0) {
      EXPECT_GT(std::stoll(w[20]), 0);
      EXPECT_LE(std::stoll(w[20]), std::stoll(w[16]));  // the smallest and the largest of the same probes
    } else {
      EXPECT_EQ(w[16], "-1");
      EXPECT_EQ(w[20], "-1");
    }
    EXPECT_GT(parse(dir / "runtime-0.txt").runtime_ns, 0);
  }
  EXPECT_GE(probes, 1);
}

// Every rank's record ends with its computation: the part of its runtime outside MPI's
// communication calls, which the campaign's --noisy-compute check compares between runs. Rank 0
// computes 3 x 50 ms here (--slow-once) while rank 1 computes 50 ms and waits for rank 0: inside
// MPI_Sendrecv, or (poll) in a loop of MPI_Test calls with 5 us of work after each that found
// nothing. Either way rank 1's wait is in its runtime, not in its computation: a polling loop's
// work lasts as long as the messages take, so it grows with the latency (app_completions at 4
// ranks computed 265 ms at ΔL = 0 and 1.09 s at 50 us before the loops were kept apart).
void expect_wait_outside_computation(bool poll) {
  const fs::path dir = scratch_dir(poll ? "timer-compute-poll" : "timer-compute");
  const fs::path marker = dir / "slow-once";
  const std::string cmd = "LD_PRELOAD=" + std::string(LLAMP_TEST_TIMER_LIB) + " LLAMP_RUNTIME_DIR=" + dir.string() +
                          " " + LLAMP_TEST_MPIEXEC + " -n 2 " + LLAMP_TEST_APP +
                          " --compute-ms 50 --iterations 5 --slow-once " + marker.string() + (poll ? " --poll" : "") +
                          " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto fields = [](const fs::path& file) {
    std::ifstream in(file);
    std::map<std::string, long long> kv;
    std::string tag, key;
    in >> tag;
    for (long long value; in >> key >> value;) kv[key] = value;
    return kv;
  };
  const auto slow = fields(dir / "runtime-0.txt"), waits = fields(dir / "runtime-1.txt");
  ASSERT_TRUE(slow.count("compute_ns") && waits.count("compute_ns") && waits.count("poll_wait_ns"));
  if (!poll) {
    // 5 MPI_Sendrecv and one MPI_Allreduce; MPI_Comm_rank and MPI_Comm_size are no communication
    EXPECT_EQ(slow.at("mpi_calls"), 6);
    EXPECT_EQ(waits.at("mpi_calls"), 6);
    EXPECT_EQ(waits.at("poll_wait_ns"), 0);
  } else {
    // rank 1 polled through rank 0's extra 100 ms (at least half of them, as below)
    EXPECT_GE(waits.at("poll_wait_ns"), 50'000'000);
    EXPECT_GT(waits.at("mpi_calls"), 6 * 5);
  }
  EXPECT_GE(slow.at("compute_ns"), 150'000'000);
  EXPECT_LE(slow.at("compute_ns"), slow.at("runtime_ns"));
  EXPECT_GE(waits.at("compute_ns"), 50'000'000);
  // rank 1 waited for the 100 ms rank 0 computed beyond it (at least half of them even if the
  // machine preempted rank 1 outside MPI meanwhile)
  EXPECT_LE(waits.at("compute_ns"), waits.at("runtime_ns") - 50'000'000);
  EXPECT_GE(waits.at("runtime_ns"), 150'000'000);
}

TEST(RuntimeTimer, ComputationExcludesTheTimeInsideMpi) { expect_wait_outside_computation(false); }

TEST(RuntimeTimer, ComputationExcludesTheWorkOfAPollingLoopThatWaits) { expect_wait_outside_computation(true); }

// app_threads calls MPI from worker threads while the main thread waits in pthread_join: the main
// thread's time outside MPI holds their waits, so it is no computation, and the record says -1
// (the campaign then judges nothing by it) while the runtime is measured as ever.
TEST(RuntimeTimer, ComputationIsUnknownWhenOtherThreadsCallMpi) {
  const fs::path dir = scratch_dir("timer-threads");
  const std::string cmd = "LD_PRELOAD=" + std::string(LLAMP_TEST_TIMER_LIB) + " LLAMP_RUNTIME_DIR=" + dir.string() +
                          " " + LLAMP_TEST_MPIEXEC + " -n 2 " + LLAMP_TEST_THREADS_APP + " 20 16 2 > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  for (int rank = 0; rank < 2; ++rank) {
    std::ifstream in(dir / ("runtime-" + std::to_string(rank) + ".txt"));
    std::map<std::string, long long> kv;
    std::string tag, key;
    in >> tag;
    for (long long value; in >> key >> value;) kv[key] = value;
    EXPECT_EQ(kv.at("compute_ns"), -1) << "rank " << rank;
    EXPECT_GT(kv.at("runtime_ns"), 0);
  }
}

TEST(RuntimeTimer, WithoutDirectoryTheRecordGoesToStderr) {
  const std::string cmd = "LD_PRELOAD=" + std::string(LLAMP_TEST_TIMER_LIB) + " " + LLAMP_TEST_MPIEXEC + " -n 2 " +
                          LLAMP_TEST_APP + " --compute-ms 1 2>&1 >/dev/null | grep -c '^llamp-runtime rank'";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  int lines = 0;
  ASSERT_EQ(fscanf(pipe, "%d", &lines), 1);
  pclose(pipe);
  EXPECT_EQ(lines, 2);
}

}  // namespace
