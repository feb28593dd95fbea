// Options::completion_time (--completion-time): the time a blocking completion call spent after
// the last message it completes was sent counts as computation after the call.
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

}  // namespace
}  // namespace llamp::schedgen::test
