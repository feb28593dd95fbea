// Options::completion_time (--completion-time): the time a blocking completion call spent after
// the last message it completes was sent counts as computation after the call.
#include <algorithm>

#include "trace_fixture.hpp"

namespace llamp::schedgen::test {
namespace {

using graph::VertexKind;

Options completion_time() {
  Options o;
  o.completion_time = true;
  return o;
}

// All computation of one rank, and the computation after its last vertex that is not one.
uint64_t calc_sum(const graph::Graph& g, uint32_t rank) {
  uint64_t sum = 0;
  for (uint64_t v = g.rank_begin[rank]; v < g.rank_begin[rank + 1]; ++v)
    if (g.kind[v] == VertexKind::Calc) sum += g.value[v];
  return sum;
}
uint64_t last_calc(const graph::Graph& g, uint32_t rank) { return g.value[g.rank_begin[rank + 1] - 1]; }

// Rank 1 sends at `send_at`; rank 0 waits for it in an MPI_Waitall over [120, wait_end].
TraceSpec exchange(uint64_t send_at, uint64_t wait_end) {
  TraceSpec t(2);
  t[0].irecv(1, 0, 8, 1);                                                      // [10, 20]
  t[0].compute(100).wait(Call::Waitall, {1}, {{1, 1, 0, 8}}, wait_end - 120);  // [120, wait_end]
  t[0].compute(5);
  t[1].compute(send_at - 10).isend(0, 0, 8, 2);  // ends, and so has sent, at send_at + 10
  t[1].wait(Call::Wait, {2}, {{2}});
  return t;
}

TEST(SchedgenCompletionTime, WaitAfterTheMessageWasSentIsAllComputation) {
  const WithAndWithout g = build_with_and_without(exchange(30, 170).write("completion_sent_before"), completion_time());
  EXPECT_EQ(g.stats.completion_calls, 1u);  // rank 1's wait on its send completes no receive
  EXPECT_EQ(g.stats.completion_ns, 50u);
  EXPECT_EQ(g.stats.completion_untimed, 0u);
  EXPECT_EQ(calc_sum(g.with, 0), calc_sum(g.plain, 0) + 50u);
  EXPECT_EQ(last_calc(g.with, 0), last_calc(g.plain, 0) + 50u);  // after the call, before MPI_Finalize
  EXPECT_EQ(calc_sum(g.with, 1), calc_sum(g.plain, 1));
  EXPECT_EQ(kinds_of(g.with, 0), kinds_of(g.plain, 0));
}

TEST(SchedgenCompletionTime, WaitThatWaitedCountsOnlyTheTimeAfterTheSend) {
  // Sent at 220, the MPI_Waitall over [120, 250]: its last 30 ns are the rank's.
  const WithAndWithout g = build_with_and_without(exchange(210, 250).write("completion_waited"), completion_time());
  EXPECT_EQ(g.stats.completion_calls, 1u);
  EXPECT_EQ(g.stats.completion_ns, 30u);
  EXPECT_EQ(last_calc(g.with, 0), last_calc(g.plain, 0) + 30u);
}

TEST(SchedgenCompletionTime, MessageSentAfterTheCallEndedAddsNothing) {
  // Clocks that disagree (or a sender's call that ended after the receive completed).
  const WithAndWithout g = build_with_and_without(exchange(300, 250).write("completion_late"), completion_time());
  EXPECT_EQ(g.stats.completion_calls, 1u);  // timed, with nothing after its message
  EXPECT_EQ(g.stats.completion_ns, 0u);
  EXPECT_EQ(g.stats.completion_untimed, 0u);
  EXPECT_EQ(calc_sum(g.with, 0), calc_sum(g.plain, 0));
}

TEST(SchedgenCompletionTime, OffByDefault) {
  Stats st;
  graph::Graph g = build_graph(exchange(30, 170).write("completion_off"), {}, &st);
  EXPECT_EQ(st.completion_calls, 0u);
  EXPECT_EQ(st.completion_ns, 0u);
}

TEST(SchedgenCompletionTime, BlockingReceive) {
  TraceSpec t(2);
  t[0].compute(100).recv(1, 0, 8, 1, 0).t_end_ns += 60;  // [110, 180]: sent at 50
  t[0].now += 60;
  t[1].compute(30).send(0, 0, 8);  // [40, 50]
  const WithAndWithout g = build_with_and_without(t.write("completion_recv"), completion_time());
  EXPECT_EQ(g.stats.completion_calls, 1u);
  EXPECT_EQ(g.stats.completion_ns, 70u);
}

// A blocking collective: the time after the last other member entered, less the collective
// overhead the graph already charged at its start.
TEST(SchedgenCompletionTime, BlockingCollectiveAfterTheLastMemberEntered) {
  TraceSpec t(2);
  t[0].compute(90).add(Call::Allreduce, 250).bytes = 8;  // [100, 350]
  t[1].compute(290).add(Call::Allreduce, 40).bytes = 8;  // [300, 340]
  for (uint32_t r = 0; r < 2; ++r) t[r].events.back().bytes2 = 8;
  Options o = completion_time();
  o.collective_overhead_ns = 10;
  Options plain;
  plain.collective_overhead_ns = 10;
  const std::string dir = t.write("completion_allreduce");
  Stats st;
  graph::Graph with = build_graph(dir, o, &st), without = build_graph(dir, plain);
  EXPECT_EQ(st.completion_calls, 2u);
  EXPECT_EQ(st.completion_ns, (350u - 300u - 10u) + (340u - 300u - 10u));
  EXPECT_EQ(calc_sum(with, 0), calc_sum(without, 0) + 40u);
  EXPECT_EQ(calc_sum(with, 1), calc_sum(without, 1) + 30u);
}

// A nonblocking collective's messages leave during the call that started it on the sender.
TEST(SchedgenCompletionTime, NonblockingCollectiveFromThePeersStart) {
  TraceSpec t(2);
  t[0].coll(Call::Iallreduce, 8).request = 7;               // [10, 20]
  t[0].compute(100).wait(Call::Wait, {7}, {{7}}, 200);      // [120, 320]
  t[1].compute(290).coll(Call::Iallreduce, 8).request = 7;  // [300, 310]
  t[1].wait(Call::Wait, {7}, {{7}}, 15);                    // [310, 325]
  const WithAndWithout g = build_with_and_without(t.write("completion_iallreduce"), completion_time());
  EXPECT_EQ(g.stats.completion_calls, 2u);
  // Rank 0: after rank 1's start ended (310); rank 1: all of its wait (rank 0 started at 20).
  EXPECT_EQ(g.stats.completion_ns, (320u - 310u) + 15u);
}

// A persistent collective's start: its messages leave by the end of the MPI_Startall, not its entry.
TEST(SchedgenCompletionTime, PersistentCollectiveFromTheEndOfThePeersStart) {
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) t[r].coll(Call::Allreduce_init, 8).request = 42;  // [10, 20]
  t[0].compute(10).add(Call::Startall, 10).requests = {42};                          // [30, 40]
  t[0].compute(100).wait(Call::Wait, {42}, {{42}}, 200);                             // [140, 340]
  t[1].compute(200).add(Call::Startall, 100).requests = {42};                        // [220, 320]
  t[1].wait(Call::Wait, {42}, {{42}}, 30);                                           // [320, 350]
  const WithAndWithout g = build_with_and_without(t.write("completion_persistent"), completion_time());
  EXPECT_EQ(g.stats.completion_calls, 2u);
  EXPECT_EQ(g.stats.completion_ns, (340u - 320u) + 30u);
}

// ---------------------------------------------------------------- Options::completion_floor

Options completion_floor() {
  Options o;
  o.completion_floor = true;
  o.rendezvous_above_bytes = 1000;
  return o;
}

// The costs of one rank's calc vertices, sorted.
std::vector<uint64_t> calc_costs(const graph::Graph& g, uint32_t rank) {
  std::vector<uint64_t> out;
  for (uint64_t v = g.rank_begin[rank]; v < g.rank_begin[rank + 1]; ++v)
    if (g.kind[v] == VertexKind::Calc) out.push_back(g.value[v]);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SchedgenCompletionFloor, LateRanksCallKeepsItsWholeTimeAndTheEarlyOneOnlyWhatFollowedThePeersEntry) {
  Options plain_opts;
  plain_opts.rendezvous_above_bytes = 1000;
  const std::string dir = rendezvous_exchange(60).write("floor_rendezvous");
  Stats st;
  const graph::Graph with = build_graph(dir, completion_floor(), &st), plain = build_graph(dir, plain_opts);
  // Rank 1: its receive's request-to-send left at 30, rank 0 answered its own from 130: all 60 ns.
  // Rank 0: its send was answered only once rank 1 entered at 300: 340 - 300.
  EXPECT_EQ(st.completion_calls, 2u);
  EXPECT_EQ(st.completion_ns, 60u + 40u);
  EXPECT_EQ(st.completion_untimed, 0u);
  for (uint32_t r = 0; r < 2; ++r) {
    std::vector<uint64_t> floor = calc_costs(with, r), base = calc_costs(plain, r);
    ASSERT_EQ(floor.size(), base.size() + 1) << "rank " << r;
    base.push_back(r == 1 ? 60u : 40u);
    std::sort(base.begin(), base.end());
    EXPECT_EQ(floor, base) << "rank " << r;  // one calc more, the floor; the chain's own unchanged
  }
}

TEST(SchedgenCompletionFloor, FloorStartsAtTheCallAndHoldsTheComputationAfterIt) {
  const std::string dir = rendezvous_exchange(60).write("floor_edges");
  const graph::Graph g = build_graph(dir, completion_floor());
  const uint32_t rank = 1;
  uint64_t floor = UINT64_MAX;
  for (uint64_t v = g.rank_begin[rank]; v < g.rank_begin[rank + 1]; ++v)
    if (g.kind[v] == VertexKind::Calc && g.value[v] == 60) floor = v - g.rank_begin[rank];
  ASSERT_NE(floor, UINT64_MAX) << kinds_of(g, rank);
  // It requires the computation before the MPI_Waitall (the call's entry) and nothing else ...
  const std::vector<std::string> preds = preds_of(g, rank, floor);
  ASSERT_EQ(preds.size(), 1u);
  const uint64_t entry = std::stoull(preds[0].substr(1));
  EXPECT_EQ(preds[0][0], 'R');
  EXPECT_EQ(g.kind[g.rank_begin[rank] + entry], VertexKind::Calc);
  // That is the computation of 270 ns and the MPI_Isend's 10 before it, or the empty calc after
  // it that the call's completions chain from (the rendezvous receives' progress gate is the first).
  uint64_t before = g.value[g.rank_begin[rank] + entry];
  for (const std::string& p : preds_of(g, rank, entry))
    if (p[0] == 'R' && g.kind[g.rank_begin[rank] + std::stoull(p.substr(1))] == VertexKind::Calc)
      before += g.value[g.rank_begin[rank] + std::stoull(p.substr(1))];
  EXPECT_EQ(before, 270u + 10u);
  // ... and the computation after the call (up to MPI_Finalize) requires it.
  bool held = false;
  for (uint64_t v = floor + 1; g.rank_begin[rank] + v < g.rank_begin[rank + 1]; ++v)
    for (const std::string& p : preds_of(g, rank, v)) held = held || p == "R" + std::to_string(floor);
  EXPECT_TRUE(held);
}

TEST(SchedgenCompletionFloor, EagerReceiveCountsFromItsSendAndEagerSendsAreReadyAtOnce) {
  // The same exchange below S: rank 0's call waits only for rank 1's message, sent at 30.
  TraceSpec t(2);
  for (uint32_t r = 0; r < 2; ++r) {
    t[r].irecv(1 - r, 0, 512, 1);
    t[r].isend(1 - r, 0, 512, 2);
  }
  t[0].compute(100).wait(Call::Waitall, {1, 2}, {{1, 1, 0, 512}, {2}}, 25);  // [130, 155]
  t[1].compute(270).wait(Call::Waitall, {1, 2}, {{1, 0, 0, 512}, {2}}, 15);  // [300, 315]
  Stats st;
  build_graph(t.write("floor_eager"), completion_floor(), &st);
  EXPECT_EQ(st.completion_calls, 2u);
  EXPECT_EQ(st.completion_ns, 25u + 15u);
}

TEST(SchedgenCompletionFloor, CollectivesAndSynchronousSendsAreLeftWithoutAFloor) {
  TraceSpec t(2);
  t[0].coll(Call::Iallreduce, 8).request = 7;
  t[0].compute(100).wait(Call::Wait, {7}, {{7}}, 200);
  t[1].compute(290).coll(Call::Iallreduce, 8).request = 7;
  t[1].wait(Call::Wait, {7}, {{7}}, 15);
  t[0].send(1, 3, 8, trace::kCommWorld, Call::Issend).request = 9;
  t[0].wait(Call::Wait, {9}, {{9}}, 50);
  t[1].recv(0, 3, 8, 0, 3);
  Stats st;
  build_graph(t.write("floor_untimed"), completion_floor(), &st);
  EXPECT_EQ(st.completion_untimed, 3u);  // two waits on the MPI_Iallreduce, one on the MPI_Issend
  EXPECT_EQ(st.completion_calls, 1u);    // rank 1's MPI_Recv
}

TEST(SchedgenCompletionFloor, OffByDefaultAndCompletionTimeWins) {
  const std::string dir = rendezvous_exchange(60).write("floor_off");
  Options plain;
  plain.rendezvous_above_bytes = 1000;
  Stats off, both;
  build_graph(dir, plain, &off);
  EXPECT_EQ(off.completion_calls + off.completion_untimed, 0u);
  Options o = completion_floor();
  o.completion_time = true;  // counts the time after the send as computation; its rendezvous: untimed
  build_graph(dir, o, &both);
  EXPECT_EQ(both.completion_calls, 0u);
  EXPECT_EQ(both.completion_untimed, 2u);
}

}  // namespace
}  // namespace llamp::schedgen::test
