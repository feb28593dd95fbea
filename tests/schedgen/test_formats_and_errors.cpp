// Output formats (GOAL text through the GOAL parser, binary through the loader: same graph as in
// memory) and errors: unmatched messages, truncated ranks, corrupt files, inconsistent collectives.
#include <filesystem>
#include <fstream>

#include "llamp/error.hpp"
#include "llamp/graph_io.hpp"
#include "trace_fixture.hpp"

namespace llamp::schedgen::test {
namespace {

namespace fs = std::filesystem;

// A trace with a bit of everything: nonblocking p2p, wildcards, persistent, a sub-communicator and
// collectives (blocking and nonblocking).
std::string rich_trace(const std::string& name) {
  TraceSpec t(3);
  for (uint32_t r = 0; r < 3; ++r) {
    Event& e = t[r].add(Call::Comm_split);
    e.new_comm = r == 1 ? 0x51 : 0x50;
    e.members = r == 1 ? std::vector<int32_t>{1} : std::vector<int32_t>{2, 0};
  }
  t[0].compute(100).isend(1, 4, 64, 1);
  t[0].irecv(trace::kAnySource, trace::kAnyTag, 64, 2);
  t[0].compute(50).wait(Call::Waitall, {1, 2}, {{1}, {2, 2, 9, 64}});
  t[1].compute(30).recv(0, 4, 64, 0, 4);
  t[2].compute(70).send(0, 9, 64);
  for (uint32_t r = 0; r < 3; ++r) t[r].compute(20 + r).coll(Call::Allreduce, 4096);
  for (uint32_t r : {0u, 2u}) {
    Event& e = t[r].compute(5).coll(Call::Ibcast, 100, /*root*/ 2, 0x50);
    e.request = 11;
    t[r].compute(40).wait(Call::Wait, {11}, {{11}});
  }
  for (uint32_t r = 0; r < 3; ++r) t[r].compute(3).coll(Call::Barrier, 0);
  return t.write(name);
}

void expect_same_graph(const graph::Graph& a, const graph::Graph& b) {
  ASSERT_EQ(a.num_ranks, b.num_ranks);
  ASSERT_EQ(a.rank_begin, b.rank_begin);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.tag, b.tag);
  EXPECT_EQ(a.peer, b.peer);
  for (uint64_t v = 0; v < a.num_vertices(); ++v) {
    auto pa = a.preds(static_cast<graph::VertexId>(v)), pb = b.preds(static_cast<graph::VertexId>(v));
    std::vector<uint32_t> x(pa.begin(), pa.end()), y(pb.begin(), pb.end());
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    EXPECT_EQ(x, y) << "vertex " << v;
  }
}

TEST(SchedgenFormats, GoalTextParsesBackToTheSameGraph) {
  std::string dir = rich_trace("goal_rt");
  graph::Graph mem = build_graph(dir);
  std::string path = dir + "/out.goal";
  {
    graph::GoalTextWriter w(path);
    generate(dir, w, {});
  }
  graph::Graph goal = graph::read_goal(path);
  expect_same_graph(mem, goal);
  EXPECT_GT(mem.num_messages(), 5u);
}

TEST(SchedgenFormats, BinaryLoadsBackToTheSameGraphAndMatchesGoal) {
  std::string dir = rich_trace("bin_rt");
  std::string bin = dir + "/out.lgr", goal = dir + "/out.goal";
  {
    graph::BinaryGraphWriter w(bin);
    generate(dir, w, {});
  }
  {
    graph::GoalTextWriter w(goal);
    generate(dir, w, {});
  }
  graph::Graph a = graph::load_binary(bin), b = graph::read_goal(goal);
  expect_same_graph(a, b);
  // And converting the loaded binary graph to GOAL text gives the same graph again.
  std::string again = dir + "/again.goal";
  {
    graph::GoalTextWriter w(again);
    graph::write_graph(a, w);
  }
  expect_same_graph(a, graph::read_goal(again));
}

std::string error_of(const std::string& dir, const Options& o = {}) {
  try {
    build_graph(dir, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SchedgenErrors, UnmatchedSendsAndReceivesAreListed) {
  TraceSpec t(2);
  t[0].send(1, 3, 10);
  t[0].send(1, 3, 11);  // never received
  t[1].recv(0, 3, 10, 0, 3);
  t[1].recv(0, 8, 12, 0, 8);  // never sent
  std::string dir = t.write("unmatched");
  std::string msg = error_of(dir);
  EXPECT_NE(msg.find("1 send(s) and 1 receive(s) have no partner"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 0 call 2: send to rank 1, comm 0x0, tag 3, 11 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 1 call 2: receive from rank 0, comm 0x0, tag 8, 12 bytes"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--allow-unmatched"), std::string::npos);

  Options o;
  o.allow_unmatched = true;
  Stats st;
  graph::Graph g = build_graph(dir, o, &st);
  EXPECT_EQ(st.dropped_sends, 1u);
  EXPECT_EQ(st.dropped_recvs, 1u);
  EXPECT_EQ(g.num_messages(), 1u);
  EXPECT_EQ(kinds_of(g, 0), "c s c c");  // the dropped send leaves the computation chain intact
  EXPECT_EQ(preds_of(g, 0, 3), std::vector<std::string>{"R2"});
}

TEST(SchedgenErrors, WildcardReceiveNeverCompletedIsUnmatched) {
  TraceSpec t(2);
  t[0].irecv(trace::kAnySource, 1, 8, 5);
  std::string msg = error_of(t.write("lost_wild"));
  EXPECT_NE(msg.find("rank 0 call 1: receive from ANY_SOURCE"), std::string::npos) << msg;
  EXPECT_NE(msg.find("never completed"), std::string::npos) << msg;
}

// A long trace on every rank; rank 1's file loses its end (as if the rank was killed).
std::string truncated_trace(const std::string& name) {
  TraceSpec t(2);
  for (int i = 0; i < 3000; ++i) {
    t[0].compute(100).send(1, 0, 8);
    t[0].recv(1, 0, 8, 1, 0);
    t[1].compute(100).recv(0, 0, 8, 0, 0);
    t[1].send(0, 0, 8);
  }
  std::string dir = t.write(name);
  fs::path f = fs::path(dir) / trace::rank_file_name(1);
  trace::RankTraceReader r(f.string());
  if (r.blocks().size() < 2) throw std::runtime_error("test trace too short to truncate");
  fs::resize_file(f, r.blocks().back().offset);  // drops the last block and the end marker
  return dir;
}

TEST(SchedgenErrors, TruncatedRankIsNamedUnlessAllowed) {
  std::string dir = truncated_trace("trunc");
  std::string msg = error_of(dir);
  EXPECT_NE(msg.find("rank 1: "), std::string::npos) << msg;
  EXPECT_NE(msg.find(trace::rank_file_name(1)), std::string::npos) << msg;
  EXPECT_NE(msg.find("--allow-truncated"), std::string::npos) << msg;

  Options o;
  o.allow_truncated = true;
  Stats st;
  graph::Graph g = build_graph(dir, o, &st);
  // Both ranks are cut at the same point: every message in the graph is complete and rank 0 has
  // far fewer than its 6000 operations.
  EXPECT_GT(g.num_messages(), 100u);
  EXPECT_LT(g.num_messages(), 6000u);
  EXPECT_LE(st.dropped_sends + st.dropped_recvs, 2u);
}

TEST(SchedgenErrors, CorruptBlockNamesFileAndOffset) {
  TraceSpec t(2);
  for (int i = 0; i < 200; ++i) {
    t[0].send(1, i, 8);
    t[1].recv(0, i, 8, 0, i);
  }
  std::string dir = t.write("corrupt");
  fs::path f = fs::path(dir) / trace::rank_file_name(0);
  trace::RankTraceReader r(f.string());
  uint64_t off = r.blocks()[0].offset + sizeof(trace::BlockHeader) + 4;
  {
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>(off));
    const char junk[16] = {'\x7f', '\x01', '\x55', '\x13', '\x00', '\xff', '\x42', '\x42',
                           '\x7f', '\x01', '\x55', '\x13', '\x00', '\xff', '\x42', '\x42'};
    io.write(junk, sizeof junk);
  }
  std::string msg = error_of(dir);
  EXPECT_NE(msg.find(trace::rank_file_name(0)), std::string::npos) << msg;
  EXPECT_NE(msg.find("offset"), std::string::npos) << msg;
}

TEST(SchedgenErrors, CollectiveMismatchAndMissingMembers) {
  {
    TraceSpec t(2);
    t[0].coll(Call::Bcast, 8, 0);
    t[1].coll(Call::Reduce, 8, 0);
    std::string msg = error_of(t.write("coll_mismatch"));
    EXPECT_NE(msg.find("collective mismatch"), std::string::npos) << msg;
    EXPECT_NE(msg.find("MPI_Reduce"), std::string::npos) << msg;
  }
  {
    TraceSpec t(3);
    t[0].coll(Call::Barrier, 0);
    t[1].coll(Call::Barrier, 0);
    std::string msg = error_of(t.write("coll_missing"));
    EXPECT_NE(msg.find("never completed"), std::string::npos) << msg;
    EXPECT_NE(msg.find("wait for rank(s) 2"), std::string::npos) << msg;
  }
}

// A persistent collective started on one rank only: the error names the start's call, and says
// the collective came from starting a persistent request.
TEST(SchedgenErrors, PersistentCollectiveStartedByOneRankOnly) {
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) t[r].coll(Call::Allreduce_init, 8).request = 5;
  t[0].compute(10).add(Call::Start).requests = {5};
  t[0].wait(Call::Wait, {5}, {{5}});
  std::string msg = error_of(t.write("persistent_one_rank"));
  EXPECT_NE(msg.find("never completed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 0 (call 2, MPI_Iallreduce, started by MPI_Start/MPI_Startall of a persistent request) "
                     "wait for rank(s) 1"),
            std::string::npos)
      << msg;
}

TEST(SchedgenErrors, MissingTraceDirectory) {
  std::string msg = error_of("/nonexistent/llamp/trace");
  EXPECT_NE(msg.find("/nonexistent/llamp/trace"), std::string::npos) << msg;
}

}  // namespace
}  // namespace llamp::schedgen::test
