// MPI_THREAD_MULTIPLE traces: each thread of a rank has its own chain of calc vertices, so one
// thread's Wait never orders another thread's later calls (docs/schedgen.md, "Threads").
#include <set>

#include "trace_fixture.hpp"

namespace llamp::schedgen::test {
namespace {

using graph::VertexKind;
using V = std::vector<std::string>;

// Appends a call of `thread` starting at `start` and taking `dur` ns.
Event& at(RankEvents& r, uint32_t thread, uint64_t start, Call c, uint64_t dur = 10) {
  r.now = start;
  Event& e = r.add(c, dur);
  e.thread = thread;
  return e;
}

uint64_t value(const graph::Graph& g, uint32_t rank, uint64_t local) { return g.value[g.global_id(rank, local)]; }

// Whether (rank, to) depends on (rank, from) through edges of any kind, messages included.
bool reaches(const graph::Graph& g, uint32_t rank, uint64_t from, uint64_t to) {
  graph::VertexId target = g.global_id(rank, from);
  std::vector<graph::VertexId> stack{g.global_id(rank, to)};
  std::set<graph::VertexId> seen;
  while (!stack.empty()) {
    graph::VertexId v = stack.back();
    stack.pop_back();
    if (v == target) return true;
    if (!seen.insert(v).second) continue;
    for (uint32_t p : g.preds(v)) stack.push_back(graph::Graph::pred_vertex(p));
    if (g.kind[v] == VertexKind::Recv) stack.push_back(g.peer[v]);
  }
  return false;
}

// The app_threads pattern at 2 ranks: threads 1 and 2 each Irecv/Isend/Wait/Wait on their own
// communicator. Rank 0's thread 1 waits (long) before thread 2 posts; rank 1 the other way round.
// Merged into one chain per rank, rank 0's thread-2 send would follow its thread-1 receive and
// rank 1's thread-1 send its thread-2 receive: a cycle through the messages.
TEST(SchedgenThreads, EachThreadHasItsOwnChain) {
  const uint64_t commA = 0xA, commB = 0xB;
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) {
    uint32_t first = r == 0 ? 1 : 2, second = r == 0 ? 2 : 1;
    uint64_t comm_first = first == 1 ? commA : commB, comm_second = first == 1 ? commB : commA;
    int32_t peer = 1 - static_cast<int32_t>(r);
    uint64_t req = 10 * (r + 1);
    // first thread: Irecv at 100, Isend at 120, Wait(recv) 140..400, Wait(send) 410
    Event& a = at(t[r], first, 100, Call::Irecv);
    a.peer = peer, a.tag = 5, a.bytes = 8, a.comm = comm_first, a.request = req + 1;
    Event& b = at(t[r], first, 120, Call::Isend);
    b.peer = peer, b.tag = 5, b.bytes = 8, b.comm = comm_first, b.request = req + 2;
    // second thread: Irecv at 200, Isend at 230 (both inside the first thread's Wait)
    Event& w1 = at(t[r], first, 140, Call::Wait, 260);
    w1.requests = {req + 1};
    w1.completions.push_back(Completion{0, req + 1, peer, 5, 8, false});
    Event& c = at(t[r], second, 200, Call::Irecv);
    c.peer = peer, c.tag = 5, c.bytes = 8, c.comm = comm_second, c.request = req + 3;
    Event& d = at(t[r], second, 230, Call::Isend);
    d.peer = peer, d.tag = 5, d.bytes = 8, d.comm = comm_second, d.request = req + 4;
    Event& w2 = at(t[r], second, 260, Call::Wait, 50);
    w2.requests = {req + 3};
    w2.completions.push_back(Completion{0, req + 3, peer, 5, 8, false});
    Event& w3 = at(t[r], first, 410, Call::Wait);
    w3.requests = {req + 2};
    w3.completions.push_back(Completion{0, req + 2, trace::kNoRank, trace::kAnyTag, 0, false});
    // The second thread waits for the first thread's send: requests belong to the rank.
    Event& w4 = at(t[r], second, 450, Call::Wait);
    w4.requests = {req + 4, req + 2};
    w4.completions.push_back(Completion{0, req + 4, trace::kNoRank, trace::kAnyTag, 0, false});
    t[r].now = 500;  // Finalize (thread 0) at 500
  }
  // EventFileWriter needs each thread's events in start order only; sort the list by start time.
  for (auto& r : t.ranks)
    std::stable_sort(r.events.begin(), r.events.end(),
                     [](const Event& x, const Event& y) { return x.t_start_ns < y.t_start_ns; });
  graph::Graph g = build_graph(t.write("threads_chains"));

  ASSERT_NO_THROW(graph::topological_order(g));  // acyclic
  for (uint32_t r = 0; r < 2; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    // Vertices by kind, in creation order: rank 0 creates the first thread's ops first.
    std::vector<uint64_t> sends, recvs;
    for (uint64_t v = 0; v < g.rank_begin[r + 1] - g.rank_begin[r]; ++v) {
      if (g.kind[g.global_id(r, v)] == VertexKind::Send) sends.push_back(v);
      if (g.kind[g.global_id(r, v)] == VertexKind::Recv) recvs.push_back(v);
    }
    ASSERT_EQ(sends.size(), 2u);
    ASSERT_EQ(recvs.size(), 2u);
    // [0] belongs to the thread that started first, [1] to the other one.
    EXPECT_FALSE(reaches(g, r, recvs[0], sends[1])) << "the second thread's send waits for the first thread's receive";
    EXPECT_FALSE(reaches(g, r, recvs[1], sends[0]));
    // Each thread's computation is its own: the 10 ns inside its Irecv (a call that cannot wait)
    // and the gap after it. The second thread's Isend starts 20 ns after its Irecv ended, although
    // the first thread was inside a Wait all that time.
    std::vector<uint64_t> send_pre(2);
    for (int i = 0; i < 2; ++i) {
      auto p = g.preds(g.global_id(r, sends[i]));
      ASSERT_EQ(p.size(), 1u);
      send_pre[i] = g.local_id(graph::Graph::pred_vertex(p[0]));
    }
    EXPECT_EQ(value(g, r, send_pre[0]), 10u + 10u);
    EXPECT_EQ(value(g, r, send_pre[1]), 10u + 20u);
  }
}

// Threads that never overlap still keep separate chains; a thread's first computation runs from
// the end of the rank's latest call, after the rank's latest calc.
TEST(SchedgenThreads, NewThreadStartsAfterTheRanksLatestCalc) {
  TraceSpec t(2);
  // rank 0: thread 0 sends at 100; thread 1 sends at 300 (its first call).
  Event& s1 = at(t[0], 0, 100, Call::Send);
  s1.peer = 1, s1.tag = 0;
  Event& s2 = at(t[0], 1, 300, Call::Send);
  s2.peer = 1, s2.tag = 1;
  t[0].now = 400;
  t[1].recv(0, 0, 0, 0, 0);
  t[1].recv(0, 1, 0, 0, 1);
  graph::Graph g = build_graph(t.write("threads_start"));
  // c0 (Init→100) s1 | thread 1: c2 (110→300, after c0) s3 | finals: thread 0 c4, thread 1 c5
  EXPECT_EQ(kinds_of(g, 0), "c s c s c c");
  EXPECT_EQ(value(g, 0, 0), 90u);
  EXPECT_EQ(value(g, 0, 2), 190u);
  EXPECT_EQ(preds_of(g, 0, 2), V{"R0"});
  EXPECT_EQ(preds_of(g, 0, 3), V{"R2"});
  EXPECT_EQ(value(g, 0, 4), 290u);  // thread 0: from its send's end to Finalize
  EXPECT_EQ(preds_of(g, 0, 4), V{"R1"});
  EXPECT_EQ(value(g, 0, 5), 0u);  // thread 1 ends with its send
  EXPECT_EQ(preds_of(g, 0, 5), V{"R3"});
}

}  // namespace
}  // namespace llamp::schedgen::test
