// libllamp_runtime_timer.so, the campaign's runtime measurement: preloaded into a real MPI run it
// must leave one record per rank whose runtime covers the work done between MPI_Init and
// MPI_Finalize.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

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
  const fs::path dir = fs::temp_directory_path() / ("llamp-timer-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
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
  fs::remove_all(dir);
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
