// Graph core: builder, GOAL text reader/writer, binary writer/loader, topological order.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <random>

#include "../../core/src/graph_spool.hpp"
#include "llamp/graph_io.hpp"
#include "../scratch_dir.hpp"

namespace fs = std::filesystem;
using namespace llamp::graph;

namespace {

fs::path temp_path(const std::string& name) { return llamp::test::scratch_file(name); }

std::string error_of(const std::string& goal) {
  try {
    parse_goal(goal, "t.goal");
  } catch (const llamp::Error& e) {
    return e.what();
  }
  return "";
}

// Two graphs are equal when every per-vertex array and the predecessor sets are.
void expect_same_graph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.num_ranks, b.num_ranks);
  ASSERT_EQ(a.rank_begin, b.rank_begin);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.tag, b.tag);
  EXPECT_EQ(a.peer, b.peer);
  EXPECT_EQ(a.poll_lags, b.poll_lags);
  ASSERT_EQ(a.num_vertices(), b.num_vertices());
  for (VertexId v = 0; v < a.num_vertices(); ++v) {
    auto pa = a.preds(v), pb = b.preds(v);
    std::vector<uint32_t> x(pa.begin(), pa.end()), y(pb.begin(), pb.end());
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    EXPECT_EQ(x, y) << "predecessors of " << describe_vertex(a, v);
  }
}

}  // namespace

TEST(GraphGoal, ReadsRunningExample) {
  Graph g = read_goal(LLAMP_TEST_DATA "/running_example.goal");
  ASSERT_EQ(g.num_ranks, 2u);
  ASSERT_EQ(g.num_vertices(), 6u);
  EXPECT_EQ(g.num_edges(), 4u);
  EXPECT_EQ(g.num_messages(), 1u);
  VertexId s = g.global_id(0, 1), r = g.global_id(1, 1);
  EXPECT_EQ(g.kind[s], VertexKind::Send);
  EXPECT_EQ(g.peer[s], r);
  EXPECT_EQ(g.peer[r], s);
  EXPECT_EQ(g.message_bytes(r), 4u);
  EXPECT_EQ(g.value[g.global_id(0, 0)], 100u);
  auto order = topological_order(g);
  ASSERT_EQ(order.size(), 6u);
  std::vector<size_t> pos(6);
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
  EXPECT_LT(pos[s], pos[r]);
  EXPECT_LT(pos[g.global_id(0, 0)], pos[s]);
}

TEST(GraphGoal, WildcardsMatchInFifoOrder) {
  // rank 1 posts a tag-wildcard receive from 0, then a source-wildcard receive with tag 7.
  Graph g = parse_goal(R"(num_ranks 3
rank 0 { a: send 8b to 1 tag 5  b: send 16b to 1 tag 7 }
rank 1 { x: recv 8b from 0 tag -1   y: recv 16b from -1 tag 7   z: recv 1b from -1 tag -1 }
rank 2 { send 1b to 1 tag 7 cpu 0 nic 0 }
)",
                       "w.goal");
  EXPECT_EQ(g.peer[g.global_id(1, 0)], g.global_id(0, 0));  // earliest from 0, any tag
  EXPECT_EQ(g.peer[g.global_id(1, 1)], g.global_id(0, 1));  // lowest source rank with tag 7
  EXPECT_EQ(g.peer[g.global_id(1, 2)], g.global_id(2, 0));
  EXPECT_EQ(g.tag[g.global_id(1, 0)], 5);  // wildcard resolved to the matched tag
}

TEST(GraphGoal, ErrorsNameFileAndLine) {
  EXPECT_NE(error_of("num_ranks 2\nrank 0 {\n  calc 5x\n}\n").find("t.goal:3:"), std::string::npos);
  EXPECT_NE(error_of("num_ranks 2\nrank 0 {\n a: calc 5\n a requires b\n}").find("t.goal:4: label 'b'"),
            std::string::npos);
  EXPECT_NE(error_of("num_ranks 2\nrank 0 {\n send 5 to 1\n}").find("t.goal:3: message size"), std::string::npos);
  EXPECT_NE(error_of("num_ranks 2\nrank 0 {\n send 5b to 2\n}").find("t.goal:3: destination rank"), std::string::npos);
  EXPECT_NE(error_of("num_ranks 2\nrank 0 {\n calc 5\n").find("never closed"), std::string::npos);
  EXPECT_NE(error_of("num_ranks 2\nrank 0 {\n send 5b to 1\n}\nrank 1 { }").find("never received"), std::string::npos);
  EXPECT_NE(error_of("num_ranks 2\nrank 0 { }\nrank 1 {\n\n recv 5b from 0\n}").find("t.goal:5"), std::string::npos);
  EXPECT_NE(error_of("num_ranks 2\n/* open").find("t.goal:2: comment"), std::string::npos);
  EXPECT_NE(error_of("").find("expected 'num_ranks'"), std::string::npos);
  EXPECT_NE(error_of("num_ranks 99999999999").find("out of range"), std::string::npos);
}

TEST(GraphGoal, FuzzedInputNeverCrashes) {
  std::string base;
  {
    std::ifstream in(LLAMP_TEST_DATA "/running_example.goal");
    base.assign(std::istreambuf_iterator<char>(in), {});
  }
  base += "rank 2 { a: recv 4b from -1 tag -1 cpu 1 b: calc 3 a irequires b }\n";
  std::mt19937_64 rng(12345);
  const std::string alphabet = "{}:/*-1 \n09abrequirestagfromsendcalc\x01\xff";
  int parsed = 0, rejected = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string s = base;
    int edits = 1 + static_cast<int>(rng() % 6);
    for (int k = 0; k < edits; ++k) {
      size_t pos = rng() % (s.size() + 1);
      switch (rng() % 4) {
        case 0:
          if (pos < s.size()) s.erase(pos, 1 + rng() % 8);
          break;
        case 1:
          s.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 2:
          if (pos < s.size()) s[pos] = static_cast<char>(rng() % 256);
          break;
        case 3:
          s = s.substr(0, pos);
          break;
      }
    }
    try {
      Graph g = parse_goal(s, "fuzz.goal");
      validate(g);
      try {
        topological_order(g);
      } catch (const CycleError&) {
      }
      ++parsed;
    } catch (const llamp::Error& e) {
      EXPECT_NE(std::string(e.what()).find("fuzz.goal"), std::string::npos) << e.what();
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(parsed, 0);
}

TEST(GraphIo, TextBinaryRoundTrip) {
  Graph g = parse_goal(R"(num_ranks 3
rank 0 { a: calc 7  b: send 100b to 1 tag 3  c: send 0b to 2 tag 0  d: recv 9b from 2 tag 1
         b requires a  c irequires b  d requires a }
rank 1 { x: recv 100b from 0 tag 3  y: calc 12  y requires x
         z: calc 5 // llamp:poll-lag
         w: calc 6 // not a marker
         z requires x  w requires z }
rank 2 { p: recv 0b from -1 tag -1  q: send 9b to 0 tag 1  q requires p }
)",
                       "rt.goal");
  // The polling-lag marker survives both formats (a plain calc of its cap to other GOAL readers).
  ASSERT_EQ(g.poll_lags, (std::vector<VertexId>{g.global_id(1, 2)}));
  EXPECT_EQ(g.value[g.poll_lags[0]], 5u);
  auto bin = temp_path("rt.lgr");
  {
    BinaryGraphWriter w(bin.string());
    write_graph(g, w);
  }
  Graph b = load_binary(bin.string());
  expect_same_graph(g, b);
  auto txt = temp_path("rt.goal");
  {
    GoalTextWriter w(txt.string());
    write_graph(b, w);
  }
  Graph t = load_graph(txt.string());  // detects text
  expect_same_graph(g, t);
  expect_same_graph(g, load_graph(bin.string()));  // detects binary
}

TEST(GraphIo, WritersInterleaveRanksAndSpool) {
  // Producers may interleave ranks; the writers must still emit per-rank blocks in rank order.
  auto bin = temp_path("inter.lgr"), txt = temp_path("inter.goal");
  InMemoryGraphBuilder mem;
  BinaryGraphWriter wb(bin.string());
  GoalTextWriter wt(txt.string());
  std::vector<GraphSink*> sinks{&mem, &wb, &wt};
  const uint32_t P = 8;
  for (auto* s : sinks) s->begin(P);
  for (int round = 0; round < 200; ++round)
    for (uint32_t r = 0; r < P; ++r) {
      uint32_t to = (r + 1) % P, from = (r + P - 1) % P;
      for (auto* s : sinks) {
        uint64_t c = s->calc(r, 10 + r);
        uint64_t sd = s->send(r, 64, to, 0);
        uint64_t rv = s->recv(r, 64, from, 0);
        s->requires_edge(r, sd, c);
        s->requires_edge(r, rv, c);
        if (round > 0) s->requires_edge(r, c, c - 1);
      }
    }
  for (int round = 0; round < 200; ++round)
    for (uint32_t r = 0; r < P; ++r) {
      uint32_t to = (r + 1) % P;
      for (auto* s : sinks) s->message(r, round * 3 + 1, to, round * 3 + 2);
    }
  for (auto* s : sinks) s->finish();
  Graph g = mem.take();
  expect_same_graph(g, load_binary(bin.string()));
  expect_same_graph(g, read_goal(txt.string()));
}

TEST(GraphIo, GoalWriterRejectsPairingGoalCannotExpress) {
  auto txt = temp_path("bad.goal");
  GoalTextWriter w(txt.string());
  w.begin(2);
  uint64_t s0 = w.send(0, 1, 1, 0), s1 = w.send(0, 1, 1, 0);
  uint64_t r0 = w.recv(1, 1, 0, 0), r1 = w.recv(1, 1, 0, 0);
  (void)s1;
  (void)r0;
  EXPECT_THROW(w.message(0, s0, 1, r1), llamp::Error);  // first send with second recv
}

namespace {
// The running example written as a binary graph at `path`, and the file's bytes.
std::string running_example_binary(const fs::path& path) {
  Graph g = read_goal(LLAMP_TEST_DATA "/running_example.goal");
  {
    BinaryGraphWriter w(path.string());
    write_graph(g, w);
  }
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST(GraphIo, BinaryLoaderRejectsCorruption) {
  const std::string bytes = running_example_binary(temp_path("c.lgr"));
  std::mt19937 rng(7);
  int rejected = 0;
  for (int i = 0; i < 2000; ++i) {
    std::string s = bytes;
    if (i % 3 == 0)
      s.resize(rng() % s.size());
    else
      s[rng() % s.size()] ^= static_cast<char>(1 + rng() % 255);
    auto p = temp_path("c2.lgr");
    {
      std::ofstream out(p, std::ios::binary);
      out << s;
    }
    try {
      Graph h = load_binary(p.string());
      try {
        topological_order(h);
      } catch (const CycleError&) {
      }
    } catch (const llamp::Error& e) {
      EXPECT_NE(std::string(e.what()).find("c2.lgr"), std::string::npos);
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 1000);
}

// llamp analyze drops the tags after loading (4 bytes per vertex): the graph stays valid for
// analysis, and writing it is refused by name instead of writing wrong tags.
TEST(GraphIo, ReleasedTagsKeepTheGraphValidAndCannotBeWritten) {
  Graph g = read_goal(LLAMP_TEST_DATA "/running_example.goal");
  const uint64_t before = g.memory_bytes();
  release_tags(g);
  EXPECT_TRUE(g.tag.empty());
  EXPECT_EQ(g.memory_bytes(), before - 4 * g.num_vertices());
  EXPECT_NO_THROW(validate(g));
  auto out = temp_path("released.goal");
  try {
    GoalTextWriter w(out.string());
    write_graph(g, w);
    FAIL() << "a graph without tags was written";
  } catch (const llamp::Error& e) {
    EXPECT_NE(std::string(e.what()).find("tags were released"), std::string::npos) << e.what();
  }
}

// Edge offsets are 32-bit in memory: a graph with more edges is refused by name, not truncated.
TEST(GraphIo, BinaryLoaderNamesAnEdgeCountAbove32Bits) {
  const auto bin = temp_path("edges.lgr");
  std::string bytes = running_example_binary(bin);
  const uint64_t edges = uint64_t{1} << 32;  // the header's edge count, at byte 24
  std::memcpy(bytes.data() + 24, &edges, sizeof edges);
  {
    std::ofstream out(bin, std::ios::binary);
    out << bytes;
  }
  try {
    load_binary(bin.string());
    FAIL() << "a graph of 2^32 edges was accepted";
  } catch (const llamp::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("edges.lgr"), std::string::npos) << what;
    EXPECT_NE(what.find("4294967296 edges exceed the limit of 4294967295"), std::string::npos) << what;
  }
}

TEST(GraphTopo, CycleNamesAVertexOnIt) {
  Graph g = parse_goal(R"(num_ranks 2
rank 0 { a: send 1000b to 1  b: recv 1000b from 1  b requires a }
rank 1 { c: send 1000b to 0  d: recv 1000b from 0  d requires c }
)",
                       "dl.goal");
  EXPECT_NO_THROW(topological_order(g));  // eager: both sends complete locally
  try {
    topological_order(g, 100);  // rendezvous: both block until the other receives
    FAIL() << "expected a cycle";
  } catch (const CycleError& e) {
    EXPECT_NE(std::string(e.what()).find("dl.goal"), std::string::npos);
    EXPECT_LT(e.vertex, g.num_vertices());
  }
  // A plain local cycle.
  InMemoryGraphBuilder b;
  b.begin(1);
  b.calc(0, 1);
  b.calc(0, 1);
  b.requires_edge(0, 0, 1);
  b.requires_edge(0, 1, 0);
  b.finish();
  Graph c = b.take();
  EXPECT_THROW(topological_order(c), CycleError);
}

TEST(GraphIo, SpoolSpillsToDiskAndRegroups) {
  // A budget of 64 bytes forces every few appends out to the temporary file.
  auto out = temp_path("spool.bin");
  llamp::graph::detail::RankSpool spool(3, out.string(), 64);
  std::string expect[3];
  for (int i = 0; i < 300; ++i) {
    uint32_t r = static_cast<uint32_t>((i * 7) % 3);
    std::string piece = std::to_string(i) + ",";
    spool.append(r, piece);
    expect[r] += piece;
  }
  int fd = llamp::graph::detail::open_output(out.string());
  std::vector<uint64_t> offset{0, expect[0].size(), expect[0].size() + expect[1].size()};
  spool.write_grouped(fd, offset);
  llamp::graph::detail::close_output(fd, out.string());
  std::ifstream in(out, std::ios::binary);
  std::string got((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(got, expect[0] + expect[1] + expect[2]);
}
