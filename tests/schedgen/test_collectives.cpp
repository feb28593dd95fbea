// Collectives through the whole pipeline (trace → generate → graph): for every algorithm, the
// number of messages and of rounds (trace_fixture.hpp's rounds()) against its formula, for powers of
// two and other sizes, on MPI_COMM_WORLD and on sub-communicators; v-variants' real byte counts.
#include <fmt/format.h>

#include <functional>

#include "llamp/error.hpp"
#include "trace_fixture.hpp"

namespace llamp::schedgen::test {
namespace {

uint64_t lg(uint64_t p) {  // ceil(log2 p)
  uint64_t k = 0;
  while ((uint64_t{1} << k) < p) ++k;
  return k;
}
uint64_t pof2(uint64_t p) {
  uint64_t x = 1;
  while (x * 2 <= p) x *= 2;
  return x;
}
uint64_t flog(uint64_t p) { return lg(pof2(p)); }  // log2 of the largest power of two <= p

struct Case {
  std::string coll;  // --algo name
  Call call;
  std::string algo;
  std::function<uint64_t(uint64_t)> messages;
  std::function<uint64_t(uint64_t)> rounds;
  bool rooted = false;
};

std::vector<Case> cases() {
  auto fold = [](uint64_t p) { return 2 * (p - pof2(p)); };
  auto fold_rounds = [](uint64_t p) { return p == pof2(p) ? 0 : 2; };
  auto scan_msgs = [](uint64_t p) {
    uint64_t n = 0;
    for (uint64_t m = 1; m < p; m <<= 1)
      for (uint64_t i = 0; i < p; ++i) n += (i ^ m) < p;
    return n;
  };
  return {
      {"barrier", Call::Barrier, "dissemination", [](uint64_t p) { return p * lg(p); }, lg},
      {"bcast", Call::Bcast, "binomial", [](uint64_t p) { return p - 1; }, lg, true},
      {"bcast", Call::Bcast, "scatter_ring_allgather", [](uint64_t p) { return (p - 1) + p * (p - 1); },
       [](uint64_t p) { return lg(p) + p - 1; }, true},
      {"bcast", Call::Bcast, "pipelined_ring", [](uint64_t p) { return (p - 1) * 3; },  // 3 segments
       [](uint64_t p) { return p > 1 ? p - 1 + 3 - 1 : 0; }, true},
      {"reduce", Call::Reduce, "binomial", [](uint64_t p) { return p - 1; }, lg, true},
      {"allreduce", Call::Allreduce, "recursive_doubling", [=](uint64_t p) { return fold(p) + pof2(p) * flog(p); },
       [=](uint64_t p) { return flog(p) + fold_rounds(p); }},
      {"allreduce", Call::Allreduce, "ring", [](uint64_t p) { return 2 * p * (p - 1); },
       [](uint64_t p) { return 2 * (p - 1); }},
      {"allreduce", Call::Allreduce, "rabenseifner", [=](uint64_t p) { return fold(p) + 2 * pof2(p) * flog(p); },
       [=](uint64_t p) { return 2 * flog(p) + fold_rounds(p); }},
      {"allreduce", Call::Allreduce, "reduce_bcast", [](uint64_t p) { return 2 * (p - 1); },
       [](uint64_t p) { return 2 * lg(p); }},
      {"allgather", Call::Allgather, "ring", [](uint64_t p) { return p * (p - 1); }, [](uint64_t p) { return p - 1; }},
      {"allgather", Call::Allgather, "recursive_doubling", [=](uint64_t p) { return fold(p) + pof2(p) * flog(p); },
       [=](uint64_t p) { return flog(p) + fold_rounds(p); }},
      {"allgather", Call::Allgather, "bruck", [](uint64_t p) { return p * lg(p); }, lg},
      {"alltoall", Call::Alltoall, "pairwise", [](uint64_t p) { return p * (p - 1); },
       [](uint64_t p) { return p - 1; }},
      {"alltoall", Call::Alltoall, "linear", [](uint64_t p) { return p * (p - 1); },
       [](uint64_t p) { return p > 1 ? 1 : 0; }},
      {"alltoall", Call::Alltoall, "bruck", [](uint64_t p) { return p * lg(p); }, lg},
      {"gather", Call::Gather, "binomial", [](uint64_t p) { return p - 1; }, lg, true},
      {"gather", Call::Gather, "linear", [](uint64_t p) { return p - 1; }, [](uint64_t p) { return p > 1 ? 1 : 0; },
       true},
      {"scatter", Call::Scatter, "binomial", [](uint64_t p) { return p - 1; }, lg, true},
      {"scatter", Call::Scatter, "linear", [](uint64_t p) { return p - 1; }, [](uint64_t p) { return p > 1 ? 1 : 0; },
       true},
      {"reduce_scatter_block", Call::Reduce_scatter_block, "pairwise", [](uint64_t p) { return p * (p - 1); },
       [](uint64_t p) { return p - 1; }},
      {"reduce_scatter_block", Call::Reduce_scatter_block, "recursive_halving",
       [=](uint64_t p) { return fold(p) + pof2(p) * flog(p); }, [=](uint64_t p) { return flog(p) + fold_rounds(p); }},
      {"scan", Call::Scan, "recursive_doubling", scan_msgs, lg},
      {"exscan", Call::Exscan, "recursive_doubling", scan_msgs, lg},
  };
}

// Every world rank calls `call` once on `comm` (members: world ranks in comm order, created by
// Comm_split when not world). Returns the graph.
graph::Graph run_collective(const Case& c, uint32_t world, const std::vector<int32_t>& members, uint64_t comm,
                            uint64_t bytes, Stats* stats = nullptr) {
  TraceSpec t(world);
  for (uint32_t r = 0; r < world; ++r) {
    bool member = std::find(members.begin(), members.end(), static_cast<int32_t>(r)) != members.end();
    if (comm != trace::kCommWorld) {
      Event& e = t[r].add(Call::Comm_split);
      e.new_comm = member ? comm : comm + 1;
      if (member)
        e.members = members;
      else
        for (uint32_t x = 0; x < world; ++x)
          if (std::find(members.begin(), members.end(), static_cast<int32_t>(x)) == members.end())
            e.members.push_back(static_cast<int32_t>(x));
    }
    if (!member) continue;
    t[r].compute(100 + r).coll(c.call, bytes, c.rooted ? members[members.size() / 2] : trace::kNoRank, comm);
    t[r].compute(10);
  }
  Options opts;
  opts.algorithms.set(c.coll + "=" + c.algo);
  opts.bcast_segment_bytes = (bytes + 2) / 3;  // three segments
  return build_graph(t.write(c.coll + "_" + c.algo), opts, stats);
}

TEST(SchedgenCollectives, MessagesAndRoundsMatchFormulas) {
  for (const Case& c : cases()) {
    for (uint32_t p : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 12u, 16u}) {
      SCOPED_TRACE(fmt::format("{}={} p={}", c.coll, c.algo, p));
      std::vector<int32_t> world(p);
      for (uint32_t i = 0; i < p; ++i) world[i] = static_cast<int32_t>(i);
      Stats st;
      graph::Graph g = run_collective(c, p, world, trace::kCommWorld, 3000, &st);
      EXPECT_EQ(g.num_messages(), c.messages(p));
      EXPECT_EQ(st.collective_messages, c.messages(p));
      EXPECT_EQ(st.collectives, 1u);
      EXPECT_EQ(rounds(g), c.rounds(p));
    }
  }
}

// A sub-communicator of world ranks {1, 3, 4, 6} (out of 7): messages only among members, counts
// as for a communicator of 4.
TEST(SchedgenCollectives, SubCommunicatorUsesWorldRanksOfMembers) {
  const std::vector<int32_t> members = {6, 1, 4, 3};  // comm rank order differs from world order
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.coll + "=" + c.algo);
    graph::Graph g = run_collective(c, 7, members, 0x1234, 1000);
    EXPECT_EQ(g.num_messages(), c.messages(4));
    EXPECT_EQ(rounds(g), c.rounds(4));
    for (uint32_t r : {0u, 2u, 5u}) EXPECT_EQ(kinds_of(g, r), "");  // non-members: no MPI work at all
    for (uint64_t v = 0; v < g.num_vertices(); ++v)
      if (g.kind[v] != graph::VertexKind::Calc) {
        EXPECT_GE(g.tag[v], 1 << 29);  // collective tags cannot collide with user tags
        int32_t me = static_cast<int32_t>(g.rank_of(v)), peer = static_cast<int32_t>(g.rank_of(g.peer[v]));
        EXPECT_NE(std::find(members.begin(), members.end(), me), members.end());
        EXPECT_NE(std::find(members.begin(), members.end(), peer), members.end());
      }
  }
}

// Rooted collectives: the root (given as a world rank) is where a bcast starts.
TEST(SchedgenCollectives, BinomialBcastStartsAtRoot) {
  Case c{"bcast", Call::Bcast, "binomial", nullptr, nullptr, true};
  std::vector<int32_t> world = {0, 1, 2, 3, 4};
  graph::Graph g = run_collective(c, 5, world, trace::kCommWorld, 64);  // root = members[2] = 2
  for (uint64_t v = g.rank_begin[2]; v < g.rank_begin[3]; ++v) EXPECT_NE(g.kind[v], graph::VertexKind::Recv);
  for (uint32_t r : {0u, 1u, 3u, 4u}) {
    uint64_t recvs = 0;
    for (uint64_t v = g.rank_begin[r]; v < g.rank_begin[r + 1]; ++v) recvs += g.kind[v] == graph::VertexKind::Recv;
    EXPECT_EQ(recvs, 1u);
  }
}

// v-variants move the real per-peer byte counts.
TEST(SchedgenCollectives, VectorVariantsUseRealCounts) {
  const uint32_t p = 5;
  auto make = [&](Call call, auto fill) {
    TraceSpec t(p);
    for (uint32_t r = 0; r < p; ++r) {
      Event& e = t[r].compute(5).add(call);
      fill(e, r);
    }
    return t;
  };
  auto counts = [](uint32_t r, uint32_t j) { return uint64_t{(r + 1) * 100 + j}; };
  // Alltoallv: linear and pairwise send exactly sum of off-diagonal counts; Bruck moves each block
  // along its route (at least once), so at least that many bytes.
  uint64_t offdiag = 0;
  for (uint32_t r = 0; r < p; ++r)
    for (uint32_t j = 0; j < p; ++j)
      if (r != j) offdiag += counts(r, j);
  for (std::string algo : {"linear", "pairwise", "bruck"}) {
    SCOPED_TRACE(algo);
    TraceSpec t = make(Call::Alltoallv, [&](Event& e, uint32_t r) {
      for (uint32_t j = 0; j < p; ++j) {
        e.send_counts.push_back(counts(r, j));
        e.recv_counts.push_back(counts(j, r));
      }
    });
    Options o;
    o.algorithms.set("alltoallv=" + algo);
    graph::Graph g = build_graph(t.write("a2av_" + algo), o);
    if (algo == "bruck")
      EXPECT_GE(total_message_bytes(g), offdiag);
    else
      EXPECT_EQ(total_message_bytes(g), offdiag);
    // Every receive's size equals its send's (the sizes a rank cannot know locally are exact too).
    for (uint64_t v = 0; v < g.num_vertices(); ++v)
      if (g.kind[v] == graph::VertexKind::Recv) EXPECT_EQ(g.value[v], g.value[g.peer[v]]);
  }
  // Allgatherv ring: every block travels p-1 hops.
  {
    TraceSpec t = make(Call::Allgatherv, [&](Event& e, uint32_t r) {
      e.bytes = 10 * (r + 1);
      for (uint32_t j = 0; j < p; ++j) e.recv_counts.push_back(10 * (j + 1));
    });
    Options o;
    o.algorithms.set("allgatherv=ring");
    graph::Graph g = build_graph(t.write("agv"), o);
    EXPECT_EQ(total_message_bytes(g), uint64_t{(p - 1) * (10 + 20 + 30 + 40 + 50)});
  }
  // Gatherv binomial (root 0): the root receives everybody's bytes once.
  {
    TraceSpec t = make(Call::Gatherv, [&](Event& e, uint32_t r) {
      e.root = 0;
      e.bytes = 7 * (r + 1);
      if (r == 0)
        for (uint32_t j = 0; j < p; ++j) e.recv_counts.push_back(7 * (j + 1));
    });
    Options o;
    o.algorithms.set("gatherv=binomial");
    graph::Graph g = build_graph(t.write("gatherv"), o);
    uint64_t into_root = 0;
    for (uint64_t v = g.rank_begin[0]; v < g.rank_begin[1]; ++v)
      if (g.kind[v] == graph::VertexKind::Recv) into_root += g.value[v];
    EXPECT_EQ(into_root, uint64_t{7 * (2 + 3 + 4 + 5)});
  }
}

// Neighbor collectives: one message per destination, MPI_PROC_NULL and the rank itself left
// out; a pair's messages pair in posting order, MPICH posting neighbor_alltoall(v/w) receives in
// reverse source order; lists that disagree are an error naming the rank.
TEST(SchedgenCollectives, NeighborCollectivesSendToEveryNeighborOnce) {
  const int32_t null = trace::kProcNull;
  // A periodic 2 x 1 torus: each rank's dimension-0 neighbors are both the other rank, its
  // dimension-1 neighbors itself. Alltoallv: 8 B to the -1 neighbor, 16 B to the +1 neighbor.
  {
    TraceSpec t(2);
    for (int32_t r = 0; r < 2; ++r) {
      Event& e = t[r].compute(5).add(Call::Neighbor_alltoallv);
      e.sources = e.destinations = {1 - r, 1 - r, r, r};
      e.send_counts = {8, 16, 4, 4};
      e.recv_counts = {16, 8, 4, 4};
    }
    graph::Graph g = build_graph(t.write("neighbor_torus"));
    EXPECT_EQ(g.num_messages(), 4u);
    EXPECT_EQ(total_message_bytes(g), uint64_t{2 * (8 + 16)});
    for (uint32_t r = 0; r < 2; ++r) {
      std::vector<uint64_t> sends, recvs;
      for (uint64_t v = g.rank_begin[r]; v < g.rank_begin[r + 1]; ++v) {
        if (g.kind[v] == graph::VertexKind::Send) sends.push_back(g.value[v]);
        if (g.kind[v] == graph::VertexKind::Recv) {
          recvs.push_back(g.value[v]);
          EXPECT_EQ(g.value[v], g.value[g.peer[v]]);
        }
      }
      EXPECT_EQ(sends, (std::vector<uint64_t>{8, 16})) << "rank " << r;
      // The first receive posted (the +1 slot) takes the peer's first message.
      EXPECT_EQ(recvs, (std::vector<uint64_t>{8, 16})) << "rank " << r;
    }
  }
  // A non-periodic line of 3: the ends have MPI_PROC_NULL on one side. Allgather of 8 B.
  {
    TraceSpec t(3);
    const std::vector<std::vector<int32_t>> lists = {{null, 1}, {0, 2}, {1, null}};
    for (uint32_t r = 0; r < 3; ++r) {
      Event& e = t[r].compute(5).add(Call::Ineighbor_allgather);
      e.sources = e.destinations = lists[r];
      e.bytes = e.bytes2 = 8;
      e.request = 1;
      Event& w = t[r].add(Call::Wait);
      w.requests = {1};
      w.completions = {trace::Completion{0, 1}};
    }
    graph::Graph g = build_graph(t.write("neighbor_line"));
    EXPECT_EQ(g.num_messages(), 4u);
    EXPECT_EQ(total_message_bytes(g), 32u);
  }
  // Rank 0 names rank 1 a destination, rank 1 does not name rank 0 a source.
  {
    TraceSpec t(2);
    Event& a = t[0].compute(5).add(Call::Neighbor_alltoall);
    a.sources = {null};
    a.destinations = {1};
    a.bytes = a.bytes2 = 8;
    Event& b = t[1].compute(5).add(Call::Neighbor_alltoall);
    b.sources = {null};
    b.destinations = {null};
    b.bytes = b.bytes2 = 8;
    try {
      build_graph(t.write("neighbor_disagree"));
      ADD_FAILURE() << "disagreeing neighbor lists were accepted";
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find("rank 0 call"), std::string::npos) << err.what();
      EXPECT_NE(std::string(err.what()).find("does not receive"), std::string::npos) << err.what();
    }
  }
}

// Nonblocking collectives: computation after the call overlaps; the Wait's successor waits for
// the collective's last operations.
TEST(SchedgenCollectives, NonblockingCollectiveOverlapsComputation) {
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) {
    Event& e = t[r].compute(10).coll(Call::Iallreduce, 8);
    e.request = 42;
    t[r].compute(500).wait(Call::Wait, {42}, {{42}});
  }
  graph::Graph g = build_graph(t.write("iallreduce"));
  // Default for 8 bytes: recursive doubling, p=2: one exchange (send + recv) per rank.
  EXPECT_EQ(kinds_of(g, 0), "c s r c c");
  EXPECT_EQ(preds_of(g, 0, 3), (std::vector<std::string>{"I1", "I2"}));
  EXPECT_EQ(preds_of(g, 0, 4), (std::vector<std::string>{"R1", "R2", "R3"}));
  EXPECT_EQ(g.value[g.global_id(0, 3)], 10u + 500u);  // the start's own 10 ns (it cannot wait), the gap
}

// --first-use charges a collective's messages too (app_gradavg's MPI_Iallreduce of 8 KiB: its
// first 32 steps took ~75 us longer per rank on the AMD VM, the graph had none of it). A
// nonblocking collective's first sends leave inside the start, whose time is computation already:
// they only count. Its later sends cost their sender before them, its receives their receiver
// after them, both in the progress pass that issues or copies them out (gated like the next
// round). The bands are the pair's, shared with its point-to-point messages.
TEST(SchedgenCollectives, FirstUseChargesTheCollectivesMessages) {
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r)
    for (uint64_t step = 0; step < 2; ++step) {
      t[r].compute(10).coll(Call::Iallreduce, 4096).request = 42 + step;
      t[r].compute(500).wait(Call::Wait, {42 + step}, {{42 + step}});
    }
  Options with;
  with.first_use = {{64, 1, 100, 10}, {4096, 2, 1000, 200}};  // 2 KiB messages reach both bands
  const std::string dir = t.write("iallreduce_first_use");
  Stats st;
  graph::Graph g = build_graph(dir, with, &st);
  // 0 before, 1-2 the reduce-scatter's exchange, 3 its receive's first use, 4 the allgather's
  // send and 5 its first use, 6 its receive and 7 that one's, 8 the computation up to the Wait, 9
  // the Wait's, 10 after it; the second step has no first use left.
  EXPECT_EQ(kinds_of(g, 0), "c s r c s c r c c c c s r s r c c c");
  EXPECT_EQ(g.value[g.global_id(0, 3)], 210u);   // both bands' first receive
  EXPECT_EQ(g.value[g.global_id(0, 5)], 1000u);  // band 1's second send (band 0's one was the start's)
  EXPECT_EQ(g.value[g.global_id(0, 7)], 200u);
  EXPECT_EQ(preds_of(g, 0, 3), (std::vector<std::string>{"R2", "R8"}));  // in the Wait's pass
  EXPECT_EQ(preds_of(g, 0, 4), (std::vector<std::string>{"R5"}));
  EXPECT_EQ(preds_of(g, 0, 5), (std::vector<std::string>{"R1", "R3", "R8"}));
  EXPECT_EQ(preds_of(g, 0, 6), (std::vector<std::string>{"R1", "R3", "R8"}));
  EXPECT_EQ(preds_of(g, 0, 7), (std::vector<std::string>{"R6", "R8"}));
  EXPECT_EQ(preds_of(g, 0, 8), (std::vector<std::string>{"I1", "I2"}));
  EXPECT_EQ(preds_of(g, 0, 10), (std::vector<std::string>{"R4", "R7", "R9"}));  // the completion waits for them
  EXPECT_EQ(st.first_use_sends, 2u);
  EXPECT_EQ(st.first_use_recvs, 4u);
  EXPECT_EQ(st.first_use_ns, 2u * (210 + 1000 + 200));

  // A blocking collective's sends are all inside the call that the graph models: charged.
  TraceSpec b(2);
  for (uint32_t r = 0; r < 2; ++r) b[r].compute(10).coll(Call::Allreduce, 4096);
  const std::string bdir = b.write("allreduce_first_use");
  Stats bst;
  build_graph(bdir, with, &bst);
  EXPECT_EQ(bst.first_use_sends, 4u);
  EXPECT_EQ(bst.first_use_ns, 2u * (1100 + 210 + 1000 + 200));

  // With --completion-time a collective's time after its messages comes from the trace.
  with.completion_time = true;
  Stats timed;
  build_graph(dir, with, &timed);
  build_graph(bdir, with, &timed);
  EXPECT_EQ(timed.first_use_sends + timed.first_use_recvs, 0u);
}

// A nonblocking collective's second round progresses only in an MPI call (MPICH without an
// asynchronous progress thread): after MPI_Iallreduce of 4 KiB (reduce-scatter + allgather, two
// rounds at p = 2) and 500 ns of computation, the allgather's exchange starts no earlier than the
// MPI_Wait; with --async-progress, as soon as the reduce-scatter's message is there.
TEST(SchedgenCollectives, NonblockingCollectiveLaterRoundsWaitForTheNextCall) {
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) {
    Event& e = t[r].compute(10).coll(Call::Iallreduce, 4096);
    e.request = 42;
    t[r].compute(500).wait(Call::Wait, {42}, {{42}});
  }
  const std::string dir = t.write("iallreduce_rounds");
  Stats st;
  graph::Graph g = build_graph(dir, {}, &st);
  // 0 the computation before, 1-2 the reduce-scatter exchange, 3-4 the allgather's, 5 the
  // computation after the start (its 10 ns and the 500 ns gap), 6 the Wait's zero calc chained to
  // 5, 7 after the Wait.
  EXPECT_EQ(kinds_of(g, 0), "c s r s r c c c");
  // the reduce-scatter's exchange, and the computation up to the Wait
  EXPECT_EQ(preds_of(g, 0, 3), (std::vector<std::string>{"R1", "R2", "R5"}));
  EXPECT_EQ(preds_of(g, 0, 4), (std::vector<std::string>{"R1", "R2", "R5"}));
  EXPECT_EQ(g.value[g.global_id(0, 5)], 10u + 500u);
  EXPECT_EQ(preds_of(g, 0, 7), (std::vector<std::string>{"R3", "R4", "R6"}));
  EXPECT_EQ(st.progress_gated_ops, 4u);  // two per rank

  Options async;
  async.async_progress = true;
  graph::Graph a = build_graph(dir, async);
  EXPECT_EQ(kinds_of(a, 0), "c s r s r c c");
  EXPECT_EQ(preds_of(a, 0, 3), (std::vector<std::string>{"R1", "R2"}));
  EXPECT_EQ(preds_of(a, 0, 4), (std::vector<std::string>{"R1", "R2"}));
}

// With --eager-progress a nonblocking collective's eager receives are copied out in the progress
// engine too, as a point-to-point MPI_Irecv's are (docs/schedgen.md, "Progress of eager
// receives"): app_nhalo's MPI_Ineighbor_alltoall on a periodic 2 x 1 torus receives two messages
// from the other rank, and MPICH copies both out in the MPI_Wait, one after the other. Each
// receive starts no earlier than the computation up to the call, the second after the first, and
// that computation no longer waits for their start (it would wait for itself). Without the
// option, with --async-progress and with --completion-time they start with the collective.
// app_nhalo's halo exchange at 2 ranks: MPI_Ineighbor_alltoall of 4 KiB on the periodic 2 x 1 torus
// (both dimension-0 neighbours the other rank, the dimension-1 ones the rank itself), after 10 ns.
void start_torus_halo(RankEvents& rank, int32_t r, uint64_t request) {
  Event& e = rank.compute(10).add(Call::Ineighbor_alltoall);
  e.sources = e.destinations = {1 - r, 1 - r, r, r};
  e.bytes = e.bytes2 = 4096;
  e.request = request;
}

TEST(SchedgenCollectives, NonblockingCollectiveEagerReceivesAreCopiedOutInTheNextCall) {
  TraceSpec t(2);
  for (int32_t r = 0; r < 2; ++r) {
    start_torus_halo(t[r], r, 42);
    t[r].compute(500).wait(Call::Wait, {42}, {{42}});
  }
  const std::string dir = t.write("ineighbor_eager_copies");
  Options eager;
  eager.eager_progress = true;
  eager.rendezvous_above_bytes = 8192;
  Stats st;
  graph::Graph g = build_graph(dir, eager, &st);
  // 0 the computation before, 1-2 the two sends, 3-4 the two receives, 5 the start's own time and
  // the gap up to the MPI_Wait, 6 the Wait's zero calc (the gate), 7 after it.
  ASSERT_EQ(kinds_of(g, 0), "c s s r r c c c");
  EXPECT_EQ(g.value[g.global_id(0, 5)], 10u + 500u);
  EXPECT_EQ(preds_of(g, 0, 3), (std::vector<std::string>{"R0", "R5"}));        // copied out in the Wait
  EXPECT_EQ(preds_of(g, 0, 4), (std::vector<std::string>{"R0", "R3", "R5"}));  // ... after the first
  EXPECT_EQ(preds_of(g, 0, 5), (std::vector<std::string>{"I1", "I2", "R0"}));  // not the receives' start
  EXPECT_EQ(preds_of(g, 0, 7), (std::vector<std::string>{"R1", "R2", "R3", "R4", "R6"}));
  EXPECT_EQ(st.eager_gated_recvs, 2u * 2);
  EXPECT_EQ(st.eager_chained_recvs, 2u * 1);
  EXPECT_NO_THROW(graph::topological_order(g));

  for (const auto& [variant, o] : without_eager_copies(eager)) {
    Stats off_st;
    graph::Graph off = build_graph(dir, o, &off_st);
    ASSERT_EQ(kinds_of(off, 0), "c s s r r c c") << "variant " << variant;
    EXPECT_EQ(preds_of(off, 0, 3), std::vector<std::string>{"R0"}) << "variant " << variant;
    EXPECT_EQ(preds_of(off, 0, 4), std::vector<std::string>{"R0"}) << "variant " << variant;
    EXPECT_EQ(preds_of(off, 0, 5), (std::vector<std::string>{"I1", "I2", "I3", "I4"})) << "variant " << variant;
    EXPECT_EQ(off_st.eager_gated_recvs + off_st.eager_chained_recvs, 0u) << "variant " << variant;
  }

  // Above S the receives wait for a pass for their handshake already and are not chained.
  Options small_s = eager;
  small_s.rendezvous_above_bytes = 1024;
  Stats rndv_st;
  graph::Graph rndv = build_graph(dir, small_s, &rndv_st);
  EXPECT_EQ(preds_of(rndv, 0, 4), (std::vector<std::string>{"R0", "R5"}));
  EXPECT_EQ(rndv_st.eager_gated_recvs + rndv_st.eager_chained_recvs, 0u);
}

// The copies of several nonblocking collectives that one call completes are chained too, in the
// order the call reports them (app_pcoll's MPI_Waitall completes a neighborhood collective's two
// receives and an MPI_Allreduce's one). A collective the call leaves open is not: its message may
// come only after the call returned, and the call's pass copies the others without it.
TEST(SchedgenCollectives, CollectivesCompletedByOneCallAreCopiedOutOneAfterAnother) {
  auto two_collectives = [](bool one_waitall, const std::string& name) {
    TraceSpec t(2);
    for (int32_t r = 0; r < 2; ++r) {
      start_torus_halo(t[r], r, 42);
      t[r].coll(Call::Iallreduce, 8).request = 43;
      if (one_waitall) {
        t[r].compute(500).wait(Call::Waitall, {42, 43}, {{42}, {43}});
      } else {
        t[r].compute(500).wait(Call::Wait, {42}, {{42}});
        t[r].compute(20).wait(Call::Wait, {43}, {{43}});
      }
    }
    return t.write(name);
  };
  Options eager;
  eager.eager_progress = true;
  eager.rendezvous_above_bytes = 8192;
  Stats st;
  graph::Graph g = build_graph(two_collectives(true, "two_collectives_waitall"), eager, &st);
  // 0 before, 1-2 the neighborhood collective's sends, 3-4 its receives, 5 the start's own time,
  // 6-7 the allreduce's exchange, 8 the gap up to the MPI_Waitall, 9 the gate's zero calc, 10 after.
  ASSERT_EQ(kinds_of(g, 0), "c s s r r c s r c c c");
  EXPECT_EQ(preds_of(g, 0, 4), (std::vector<std::string>{"R0", "R3", "R8"}));
  EXPECT_EQ(preds_of(g, 0, 7), (std::vector<std::string>{"R4", "R5", "R8"}));  // after the other's copies
  EXPECT_EQ(st.eager_gated_recvs, 2u * 3);
  EXPECT_EQ(st.eager_chained_recvs, 2u * 2);
  EXPECT_NO_THROW(graph::topological_order(g));

  Stats apart_st;
  graph::Graph apart = build_graph(two_collectives(false, "two_collectives_apart"), eager, &apart_st);
  // ... 8 the gap up to the first MPI_Wait, which releases both collectives' receives, 9 the
  // gate's zero calc, 10 the gap up to the second MPI_Wait, 11 after it.
  ASSERT_EQ(kinds_of(apart, 0), "c s s r r c s r c c c c");
  EXPECT_EQ(preds_of(apart, 0, 4), (std::vector<std::string>{"R0", "R3", "R8"}));
  EXPECT_EQ(preds_of(apart, 0, 7), (std::vector<std::string>{"R5", "R8"}));  // gated, not chained
  EXPECT_EQ(apart_st.eager_chained_recvs, 2u * 1);
  EXPECT_NO_THROW(graph::topological_order(apart));
}

// A nonblocking collective's receive above S needs a pass of the progress engine after it was
// issued, like a point-to-point one (docs/schedgen.md, "Progress of rendezvous receives"): with
// 64 KiB at p = 2 the reduce-scatter's 32 KiB receive, issued by the start, starts in the
// MPI_Wait too; below S it starts with the collective.
TEST(SchedgenCollectives, NonblockingCollectiveRendezvousReceiveWaitsForTheNextCall) {
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) {
    t[r].compute(10).coll(Call::Iallreduce, 65536).request = 42;
    t[r].compute(500).wait(Call::Wait, {42}, {{42}});
  }
  const std::string dir = t.write("iallreduce_rndv");
  Options with_s;
  with_s.rendezvous_above_bytes = 8192;
  Stats st;
  graph::Graph g = build_graph(dir, with_s, &st);
  // As without S (NonblockingCollectiveLaterRoundsWaitForTheNextCall), but the first receive (2)
  // waits for the computation up to the MPI_Wait (5) as well, and that computation no longer
  // waits for the receive's start (it would wait for itself), only for the start call's.
  EXPECT_EQ(kinds_of(g, 0), "c s r s r c c c");
  EXPECT_EQ(preds_of(g, 0, 1), std::vector<std::string>{"R0"});
  EXPECT_EQ(preds_of(g, 0, 2), (std::vector<std::string>{"R0", "R5"}));
  EXPECT_EQ(preds_of(g, 0, 5), (std::vector<std::string>{"I1", "R0"}));
  EXPECT_EQ(st.progress_gated_ops, 2u * 3);
  EXPECT_NO_THROW(graph::topological_order(g, 8192));

  graph::Graph eager = build_graph(dir);  // no S: the receive starts with the collective
  EXPECT_EQ(preds_of(eager, 0, 2), std::vector<std::string>{"R0"});
  EXPECT_EQ(preds_of(eager, 0, 5), (std::vector<std::string>{"I1", "I2"}));
}

// At 4 ranks the same collective has four rounds, three of them after a receive: an MPI_Test
// (one pass of the progress engine) issues the second, the MPI_Wait the rest.
TEST(SchedgenCollectives, NonblockingCollectiveRoundsAdvanceOnePerPollAndAllInAWait) {
  TraceSpec t(4);
  for (uint32_t r = 0; r < 4; ++r) {
    t[r].compute(10).coll(Call::Iallreduce, 4096).request = 42;
    t[r].compute(300).add(Call::Test).requests = {42};  // found nothing
    t[r].compute(300).wait(Call::Wait, {42}, {{42}});
  }
  Stats st;
  graph::Graph g = build_graph(t.write("iallreduce_rounds4"), {}, &st);
  // 0 computation, 1-8 four exchanges, 9 the computation up to the MPI_Test, 10 the one up to
  // the MPI_Wait, 11 the Wait's zero one, 12 after the Wait.
  EXPECT_EQ(kinds_of(g, 0), "c s r s r s r s r c c c c");
  EXPECT_EQ(preds_of(g, 0, 3), (std::vector<std::string>{"R1", "R2", "R9"}));
  EXPECT_EQ(preds_of(g, 0, 5), (std::vector<std::string>{"R10", "R3", "R4"}));
  EXPECT_EQ(preds_of(g, 0, 7), (std::vector<std::string>{"R10", "R5", "R6"}));
  EXPECT_EQ(st.progress_gated_ops, 4u * 6);
}

// A poll that reports the collective complete releases every round left: rounds the graph still
// held for later calls would be waited for by the completion and close a cycle.
TEST(SchedgenCollectives, CompletionFoundByAPollReleasesEveryRoundLeft) {
  TraceSpec t(4);
  for (uint32_t r = 0; r < 4; ++r) {
    t[r].compute(10).coll(Call::Iallreduce, 4096).request = 42;
    t[r].compute(300).wait(Call::Test, {42}, {{42}});  // found it complete at its first poll
    t[r].compute(100).coll(Call::Barrier, 0);          // a later call
  }
  graph::Graph g = build_graph(t.write("iallreduce_test_done"));
  EXPECT_EQ(kinds_of(g, 0).substr(0, 23), "c s r s r s r s r c c c");
  // Each round after the first waits for the computation up to the MPI_Test (9), none for a later call.
  EXPECT_EQ(preds_of(g, 0, 3), (std::vector<std::string>{"R1", "R2", "R9"}));
  EXPECT_EQ(preds_of(g, 0, 5), (std::vector<std::string>{"R3", "R4", "R9"}));
  EXPECT_EQ(preds_of(g, 0, 7), (std::vector<std::string>{"R5", "R6", "R9"}));
  EXPECT_NO_THROW(graph::topological_order(g));
}

// The same for a persistent MPI_Allreduce: the MPI_Start that starts it is not yet the next call.
TEST(SchedgenCollectives, PersistentCollectiveLaterRoundsWaitForTheCallAfterItsStart) {
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) {
    t[r].coll(Call::Allreduce_init, 4096).request = 42;
    t[r].compute(10).add(Call::Start).requests = {42};
    t[r].compute(500).wait(Call::Wait, {42}, {{42}});
  }
  graph::Graph g = build_graph(t.write("persistent_allreduce_rounds"));
  EXPECT_EQ(kinds_of(g, 0), "c s r s r c c c");
  EXPECT_EQ(g.value[g.global_id(0, 5)], 10u + 500u);  // the start's own time and the gap up to the Wait
  EXPECT_EQ(preds_of(g, 0, 3), (std::vector<std::string>{"R1", "R2", "R5"}));
  EXPECT_EQ(preds_of(g, 0, 4), (std::vector<std::string>{"R1", "R2", "R5"}));
}

// One call is one pass even when it is several events: an MPI_Startall of a persistent collective
// (the collective, then the start) issues one more round of an earlier collective, not two.
TEST(SchedgenCollectives, OneCallOfSeveralEventsIsOneProgressPass) {
  TraceSpec t(4);
  for (uint32_t r = 0; r < 4; ++r) {
    t[r].coll(Call::Barrier_init, 0).request = 43;
    t[r].compute(10).coll(Call::Iallreduce, 4096).request = 42;
    t[r].compute(300).add(Call::Startall).requests = {43};
    t[r].compute(300).wait(Call::Waitall, {42, 43}, {{42}, {43}});
  }
  graph::Graph g = build_graph(t.write("one_call_one_pass"));
  const std::string kinds = kinds_of(g, 0);
  // 0 computation, 1-8 the allreduce's four exchanges, 9 the computation up to the MPI_Startall.
  ASSERT_EQ(kinds.substr(0, 19), "c s r s r s r s r c");
  EXPECT_EQ(preds_of(g, 0, 3), (std::vector<std::string>{"R1", "R2", "R9"}));  // issued in the Startall
  // The third round waits for a later call than the MPI_Startall: the MPI_Waitall.
  const std::vector<std::string> third = preds_of(g, 0, 5);
  ASSERT_EQ(third.size(), 3u);
  EXPECT_NE(third[0], "R9");
  EXPECT_EQ(g.kind[g.global_id(0, std::stoull(third[0].substr(1)))], graph::VertexKind::Calc);
  // the Startall's own 10 ns (it cannot wait) and the computation up to the MPI_Waitall
  EXPECT_EQ(g.value[g.global_id(0, std::stoull(third[0].substr(1)))], 10u + 300u);
}

// MPI 4.0 persistent collectives: each start of the request is the nonblocking collective with the
// init's arguments, so the graph is NonblockingCollectiveOverlapsComputation's once per start.
TEST(SchedgenCollectives, PersistentCollectiveStartsAreItsNonblockingCollective) {
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) {
    Event& init = t[r].coll(Call::Allreduce_init, 8);
    init.request = 42;
    Event& send_init = t[r].add(Call::Send_init);  // a point-to-point request started with it
    send_init.peer = static_cast<int32_t>(1 - r);
    send_init.tag = 3;
    send_init.bytes = 64;
    send_init.request = 43;
    Event& recv_init = t[r].add(Call::Recv_init);
    recv_init.peer = static_cast<int32_t>(1 - r);
    recv_init.tag = 3;
    recv_init.bytes = 64;
    recv_init.request = 44;
    for (int k = 0; k < 2; ++k) {
      t[r].compute(10).add(Call::Start).requests = {42};
      t[r].compute(500).wait(Call::Wait, {42}, {{42}});
    }
    t[r].compute(10).add(Call::Startall).requests = {43, 42, 44};
    t[r].compute(500).wait(Call::Waitall, {43, 42, 44}, {{43}, {42}, {44, static_cast<int32_t>(1 - r), 3, 64}});
    t[r].add(Call::Request_free).requests = {42};
  }
  Stats st;
  graph::Graph g = build_graph(t.write("persistent_allreduce"), {}, &st);
  EXPECT_EQ(st.collectives, 3u);  // one per start, none for the init
  EXPECT_EQ(g.num_messages(), 3u * 2 + 2);
  // Recursive doubling at p = 2 (as for MPI_Iallreduce of 8 B): one exchange per start, which
  // begins at the start's entry; the start's own 10 ns come after it, as an MPI_Iallreduce's do.
  EXPECT_EQ(kinds_of(g, 0), "c s r c c s r c c s r c s c r c");
  for (uint64_t after_start : {3u, 7u}) {
    EXPECT_EQ(preds_of(g, 0, after_start),
              (std::vector<std::string>{"I" + std::to_string(after_start - 2), "I" + std::to_string(after_start - 1)}));
    EXPECT_EQ(g.value[g.global_id(0, after_start)], 10u + 500u);
  }
  // The Startall: the collective's exchange (9, 10) starts first, then the persistent send (12)
  // after it has started (11 holds no time); the computation after the call waits for neither.
  EXPECT_EQ(preds_of(g, 0, 11), (std::vector<std::string>{"I10", "I9"}));
  EXPECT_EQ(g.value[g.global_id(0, 11)], 0u);
  EXPECT_EQ(preds_of(g, 0, 12), (std::vector<std::string>{"R11"}));
  EXPECT_EQ(preds_of(g, 0, 13), (std::vector<std::string>{"I12", "R11"}));
  EXPECT_EQ(g.value[g.global_id(0, 13)], 10u + 500u);
  // The Waitall waits for all three requests.
  EXPECT_EQ(preds_of(g, 0, 15), (std::vector<std::string>{"R10", "R12", "R13", "R14", "R9"}));
  EXPECT_EQ(total_message_bytes(g), 3u * 2 * 8 + 2 * 64);
}

// Rank r splits off a communicator of its own, 7 + r.
void split_off_own_comm(TraceSpec& t, uint32_t r) {
  Event& split = t[r].add(Call::Comm_split);
  split.new_comm = 7 + r;
  split.members = {static_cast<int32_t>(r)};
}

// A collective over one rank waits for nobody: no messages, and its whole time is computation.
TEST(SchedgenCollectives, CollectiveOverOneRankIsComputation) {
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) {
    split_off_own_comm(t, r);
    t[r].compute(100).coll(Call::Allreduce, 8, trace::kNoRank, 7 + r).t_end_ns += 290;  // 300 ns inside
    t[r].now += 290;
    t[r].compute(50).coll(Call::Allreduce, 8);  // over both ranks: its time is the model's
    t[r].compute(5);
  }
  Stats st;
  graph::Graph g = build_graph(t.write("one_rank_allreduce"), {}, &st);
  EXPECT_EQ(g.num_messages(), 2u);  // the world allreduce's exchange only
  ASSERT_EQ(kinds_of(g, 0), "c c s r c");
  EXPECT_EQ(g.value[g.global_id(0, 1)], 300u + 50u);  // the one-rank allreduce, then the gap
  EXPECT_EQ(g.value[g.global_id(0, 4)], 5u);
  EXPECT_EQ(st.initiation_calls, 2u);  // the one-rank allreduces; not Comm_split, not the world allreduce
}

// --collective-overhead: MPICH's own time in a blocking collective over several ranks is computation
// at the call's start, before the algorithm's first message; a collective over one rank (all of its
// time counted already) and a nonblocking one (its start counted) get none.
TEST(SchedgenCollectives, CollectiveOverheadIsComputationBeforeTheFirstMessage) {
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) {
    split_off_own_comm(t, r);
    t[r].compute(100).coll(Call::Allreduce, 8, trace::kNoRank, 7 + r);  // one rank
    t[r].compute(50).coll(Call::Allreduce, 8);                          // both ranks, blocking
    Event& i = t[r].compute(20).coll(Call::Iallreduce, 8);              // both ranks, nonblocking
    i.request = 9;
    t[r].compute(30).wait(Call::Wait, {9}, {{9}});
    t[r].compute(5);
  }
  Options with;
  with.collective_overhead_ns = 400;
  const auto [g, plain, st] = build_with_and_without(t.write("collective_overhead"), with);
  ASSERT_EQ(kinds_of(g, 0), kinds_of(plain, 0));
  // the first calc, the one-rank allreduce's, the world allreduce, the calc before the Iallreduce, ...
  ASSERT_EQ(kinds_of(g, 0), "c c s r c s r c c");
  EXPECT_EQ(g.value[g.global_id(0, 0)], plain.value[plain.global_id(0, 0)]);
  EXPECT_EQ(g.value[g.global_id(0, 1)], plain.value[plain.global_id(0, 1)] + 400u);  // before the world allreduce
  EXPECT_EQ(preds_of(g, 0, 2), (std::vector<std::string>{"R1"}));                    // its send waits for it
  EXPECT_EQ(g.value[g.global_id(0, 4)], plain.value[plain.global_id(0, 4)]);         // before the Iallreduce
  EXPECT_EQ(st.collective_overhead_calls, 2u);                                       // the world allreduce on each rank
}

TEST(SchedgenCollectives, DefaultsFollowMpichSizes) {
  CollSpec s;
  // MPICH 4.0.2's selection (mpir/generic.json): recursive doubling up to 8 bytes or while
  // count < pof2, reduce-scatter + allgather above. At 2 ranks the injector measures 1 latency
  // term for 1 double and 2 terms from 2 doubles on.
  s.kind = CollKind::Allreduce;
  s.size = 2;
  s.bytes = 8;
  EXPECT_EQ(choose_default(s), Algorithm::RecursiveDoubling);
  s.bytes = 16;
  EXPECT_EQ(choose_default(s), Algorithm::Rabenseifner);
  s.size = 8;
  s.bytes = 56;  // 7 doubles < pof2 = 8
  EXPECT_EQ(choose_default(s), Algorithm::RecursiveDoubling);
  s.bytes = 64;
  EXPECT_EQ(choose_default(s), Algorithm::Rabenseifner);
  s.bytes = 4096;
  EXPECT_EQ(choose_default(s), Algorithm::Rabenseifner);
  // MPI_Iallreduce keeps the 2048-byte threshold (measured: 1 term for 32 doubles at 2 ranks).
  s.nonblocking = true;
  s.bytes = 2048;
  EXPECT_EQ(choose_default(s), Algorithm::RecursiveDoubling);
  s.bytes = 2056;
  EXPECT_EQ(choose_default(s), Algorithm::Rabenseifner);
  s.nonblocking = false;
  s.kind = CollKind::Bcast;
  s.bytes = 1000;
  EXPECT_EQ(choose_default(s), Algorithm::Binomial);
  s.bytes = 100000;
  EXPECT_EQ(choose_default(s), Algorithm::ScatterRdAllgather);
  s.size = 9;
  EXPECT_EQ(choose_default(s), Algorithm::ScatterRingAllgather);
  s.kind = CollKind::Alltoall;
  s.bytes = 100;
  EXPECT_EQ(choose_default(s), Algorithm::Bruck);
  s.bytes = 1000;
  EXPECT_EQ(choose_default(s), Algorithm::Linear);
  s.bytes = 100000;
  EXPECT_EQ(choose_default(s), Algorithm::Pairwise);
}

TEST(SchedgenCollectives, AlgoOptionRejectsUnknownNames) {
  AlgorithmChoice c;
  EXPECT_THROW(c.set("allreduce=bogus"), Error);
  EXPECT_THROW(c.set("bogus=ring"), Error);
  EXPECT_THROW(c.set("bcast=ring"), Error);  // ring is not a bcast algorithm
  EXPECT_THROW(c.set("allreduce"), Error);
  c.set("allreduce=ring");
  EXPECT_EQ(c[CollKind::Allreduce], Algorithm::Ring);
}

}  // namespace
}  // namespace llamp::schedgen::test
