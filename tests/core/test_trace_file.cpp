#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "llamp/error.hpp"
#include "llamp/trace_codec.hpp"
#include "llamp/trace_dir.hpp"
#include "llamp/trace_file.hpp"
#include "../scratch_dir.hpp"

using namespace llamp::trace;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir(const std::string& name) { return llamp::test::scratch_dir(name); }

Event isend(uint64_t t, uint32_t thread, uint64_t req) {
  Event e;
  e.call = Call::Isend;
  e.thread = thread;
  e.t_start_ns = t;
  e.t_end_ns = t + 200;
  e.peer = 1;
  e.tag = 7;
  e.bytes = 64;
  e.request = req;
  return e;
}

// Writes `n` events of thread 0 in blocks of ~1 KiB raw, so the file has many blocks.
std::string write_trace(const fs::path& dir, uint32_t n) {
  std::string path = (dir / rank_file_name(0)).string();
  EventFileWriter w(path, 0, 1, 1024);
  for (uint32_t i = 0; i < n; ++i) w.add(isend(1000 + 1000ull * i, 0, i + 1));
  w.close();
  return path;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void write_bytes(const std::string& path, const std::vector<uint8_t>& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

}  // namespace

TEST(TraceFile, WriteAndReadBack) {
  auto dir = temp_dir("rw");
  auto path = write_trace(dir, 5000);
  RankTraceReader r(path);
  EXPECT_FALSE(r.truncated());
  EXPECT_GT(r.blocks().size(), 10u);
  EXPECT_EQ(r.event_count(), 5000u);
  uint32_t i = 0;
  while (const Event* e = r.next()) {
    ASSERT_EQ(*e, isend(1000 + 1000ull * i, 0, i + 1));
    ++i;
  }
  EXPECT_EQ(i, 5000u);
  r.rewind();
  EXPECT_NE(r.next(), nullptr);
}

TEST(TraceFile, ThreadsAreMergedByStartTime) {
  auto dir = temp_dir("threads");
  std::string path = (dir / rank_file_name(0)).string();
  // Two threads' blocks written in file order thread1, thread0, as a writer thread would.
  TraceFileWriter w(path, 0, 1);
  for (uint32_t thread : {1u, 0u}) {
    std::vector<uint8_t> raw(4096);
    BlockState state{100 + thread, 0};
    uint8_t* p = raw.data();
    for (int i = 0; i < 10; ++i) {
      Event e = isend(100 + thread + 10ull * i, thread, 1 + i);
      p = encode_event(p, e, state);
    }
    w.write_block(thread, 100 + thread, 10, {raw.data(), static_cast<size_t>(p - raw.data())});
  }
  w.close();
  RankTraceReader r(path);
  uint64_t last = 0;
  int n = 0;
  while (const Event* e = r.next()) {
    EXPECT_GE(e->t_start_ns, last);
    EXPECT_EQ(e->t_start_ns % 10, e->thread);  // thread 1 at 101, 111, ...
    last = e->t_start_ns;
    ++n;
  }
  EXPECT_EQ(n, 20);
}

TEST(TraceFile, TruncatedFileIsReadUpToItsLastCompleteBlock) {
  auto dir = temp_dir("trunc");
  auto path = write_trace(dir, 3000);
  auto full = read_bytes(path);
  RankTraceReader whole(path);
  // Cut at every offset in a stride: never a crash, always a prefix of the events.
  for (size_t cut = 0; cut < full.size(); cut += 97) {
    write_bytes(path, {full.begin(), full.begin() + static_cast<long>(cut)});
    if (cut < sizeof(FileHeader)) {
      EXPECT_THROW(RankTraceReader{path}, llamp::Error);
      continue;
    }
    RankTraceReader r(path);
    EXPECT_TRUE(r.truncated()) << cut;
    uint64_t n = 0;
    while (const Event* e = r.next()) {
      ASSERT_EQ(e->request, n + 1);
      ++n;
    }
    EXPECT_EQ(n, r.event_count());
    EXPECT_LE(r.damage()->offset, cut);
  }
}

TEST(TraceFile, CorruptPayloadNamesFileAndOffset) {
  auto dir = temp_dir("corrupt");
  auto path = write_trace(dir, 2000);
  auto bytes = read_bytes(path);
  RankTraceReader clean(path);
  const auto& second = clean.blocks().at(1);
  bytes[second.offset + sizeof(BlockHeader) + 5] ^= 0x5a;  // inside the zstd frame
  write_bytes(path, bytes);
  RankTraceReader r(path);
  try {
    while (r.next()) {
    }
    FAIL() << "corruption not detected";
  } catch (const llamp::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("offset " + std::to_string(second.offset)), std::string::npos) << msg;
  }
}

TEST(TraceFile, NotATraceFile) {
  auto dir = temp_dir("magic");
  std::string path = (dir / "junk.llt").string();
  write_bytes(path, std::vector<uint8_t>(100, 'x'));
  try {
    RankTraceReader r(path);
    FAIL();
  } catch (const llamp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("offset 0"), std::string::npos);
  }
}

TEST(TraceDir, MetaRoundTripAndMissingRank) {
  auto dir = temp_dir("dir");
  TraceMeta m;
  m.ranks = 2;
  m.hosts = {"a", "b"};
  m.command = {"./app", "-n", "3"};
  m.mpi_library = "MPICH 4.0.2";
  write_meta(dir.string(), m);
  auto back = read_meta(dir.string());
  EXPECT_EQ(back.ranks, 2u);
  EXPECT_EQ(back.hosts, m.hosts);
  EXPECT_EQ(back.command, m.command);
  write_trace(dir, 10);  // rank 0 only, but its header says world size 1
  EXPECT_THROW(TraceDir::open(dir.string()), llamp::Error);
}

// The tracer's sampled own time: written at MPI_Finalize, read by schedgen; absent for older traces,
// and a malformed file is an error naming it.
TEST(TraceDir, TracerCostRoundTripAbsentAndMalformed) {
  auto dir = temp_dir("cost");
  EXPECT_FALSE(read_tracer_cost(dir.string(), 0).has_value());
  TracerCost c;
  c.samples = 64;
  c.encode_ns = 17.5;
  c.record_ns["MPI_Isend"] = 31.0;
  c.blocks_written_during_run = 7;
  c.write_cpu_ns_during_run = 2800000;
  write_tracer_cost(dir.string(), 3, c);
  EXPECT_TRUE(std::filesystem::exists(dir / "tracer-cost-00003.json"));
  const auto back = read_tracer_cost(dir.string(), 3);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->samples, 64u);
  EXPECT_DOUBLE_EQ(back->encode_ns, 17.5);
  EXPECT_DOUBLE_EQ(back->record_ns.at("MPI_Isend"), 31.0);
  EXPECT_EQ(back->blocks_written_during_run, 7u);
  EXPECT_EQ(back->write_cpu_ns_during_run, 2800000u);
  {
    // A file from before the writer's figures: they read as 0.
    std::ofstream old(dir / "tracer-cost-00002.json");
    old << R"({"format": "llamp-tracer-cost", "rank": 2, "samples": 3, "encode_ns": 20.0, "record_ns": {}})";
  }
  const auto old = read_tracer_cost(dir.string(), 2);
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->blocks_written_during_run, 0u);
  EXPECT_EQ(old->write_cpu_ns_during_run, 0u);
  {
    std::ofstream bad(dir / "tracer-cost-00001.json");
    bad << "{\"format\": \"llamp-tracer-cost\", \"samples\": 3}";
  }
  try {
    read_tracer_cost(dir.string(), 1);
    FAIL();
  } catch (const llamp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tracer-cost-00001.json"), std::string::npos) << e.what();
  }
}
