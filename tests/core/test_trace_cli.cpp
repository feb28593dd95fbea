// `llamp trace info` and `llamp trace dump` on a small hand-made trace.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "../scratch_dir.hpp"
#include "llamp/trace_dir.hpp"

using namespace llamp::trace;
namespace fs = std::filesystem;

namespace {

struct Result {
  int status;
  std::string out;
};

Result run(const std::string& cmd) {
  Result r{0, {}};
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  r.status = pclose(p);
  return r;
}

// Rank 0 sends 3 messages to rank 1; rank 1 receives them with ANY_SOURCE.
fs::path make_trace(bool truncate_rank1) {
  const fs::path dir = llamp::test::scratch_dir(truncate_rank1 ? "cli-t" : "cli");
  TraceMeta m;
  m.ranks = 2;
  m.command = {"./pingpong"};
  write_meta(dir.string(), m);
  for (uint32_t rank = 0; rank < 2; ++rank) {
    EventFileWriter w((dir / rank_file_name(rank)).string(), rank, 2);
    uint64_t t = 1000;
    auto add = [&](Event e) {
      e.t_start_ns = t;
      e.t_end_ns = t + 100;
      t += 1000;
      w.add(e);
    };
    add(Event{.call = Call::Init});
    for (int i = 0; i < 3; ++i) {
      Event e;
      if (rank == 0) {
        e.call = Call::Send;
        e.peer = 1;
        e.tag = i;
        e.bytes = 8;
      } else {
        e.call = Call::Recv;
        e.peer = kAnySource;
        e.tag = kAnyTag;
        e.bytes = 8;
        e.completions = {{0, 0, 0, i, 8, false}};
      }
      add(e);
    }
    add(Event{.call = Call::Finalize});
    if (rank == 1 && truncate_rank1) continue;  // no end block: as if killed
    w.close();
  }
  return dir;
}

}  // namespace

TEST(TraceCli, InfoCountsCallsPerRank) {
  auto dir = make_trace(false);
  auto r = run(std::string(LLAMP_BIN) + " trace info --json " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["ranks"], 2);
  EXPECT_EQ(j["events"], 10);
  EXPECT_EQ(j["calls"]["MPI_Send"], 3);
  EXPECT_EQ(j["calls"]["MPI_Recv"], 3);
  EXPECT_EQ(j["per_rank"][1]["calls"]["MPI_Recv"], 3);
  EXPECT_EQ(j["p2p_bytes_sent"], 24);
  EXPECT_TRUE(j["truncated_ranks"].empty());
}

TEST(TraceCli, DumpCsvStartsWithTheDocumentedColumns) {
  auto dir = make_trace(false);
  auto r = run(std::string(LLAMP_BIN) + " trace dump --format csv --rank 1 " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.rfind("rank,call,t_start_ns,t_end_ns,", 0), 0u);
  // The wildcard receive shows the source and tag that actually matched: "index:request:source:tag:bytes".
  EXPECT_NE(r.out.find("1,MPI_Recv,"), std::string::npos);
  EXPECT_NE(r.out.find(",0:0:0:2:8,"), std::string::npos) << r.out;
}

TEST(TraceCli, DumpJsonIsOneObjectPerLine) {
  auto dir = make_trace(false);
  auto r = run(std::string(LLAMP_BIN) + " trace dump --format json " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  size_t lines = 0, pos = 0;
  while ((pos = r.out.find('\n', pos)) != std::string::npos) ++lines, ++pos;
  EXPECT_EQ(lines, 10u);
  auto first = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
  EXPECT_EQ(first["call"], "MPI_Init");
}

TEST(TraceCli, InfoNamesTruncatedRanks) {
  auto dir = make_trace(true);
  auto r = run(std::string(LLAMP_BIN) + " trace info " + dir.string());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("rank 1 is TRUNCATED"), std::string::npos) << r.out;
}

TEST(TraceCli, MissingDirectoryIsAClearError) {
  auto r = run(std::string(LLAMP_BIN) + " trace info /nonexistent/llamp-trace");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.out.find("/nonexistent/llamp-trace"), std::string::npos) << r.out;
}
