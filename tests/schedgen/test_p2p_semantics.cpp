// Point-to-point semantics: the paper's Fig. 3 (blocking) and Fig. 13 (nonblocking) as hand-made
// traces, completions, persistent requests, Sendrecv, probes, MPI_PROC_NULL, wildcard matching.
#include "trace_fixture.hpp"

namespace llamp::schedgen::test {
namespace {

using graph::VertexKind;
using V = std::vector<std::string>;

uint64_t peer_local(const graph::Graph& g, uint32_t rank, uint64_t local) {
  return g.local_id(g.peer[g.global_id(rank, local)]);
}
uint32_t peer_rank(const graph::Graph& g, uint32_t rank, uint64_t local) {
  return g.rank_of(g.peer[g.global_id(rank, local)]);
}
uint64_t value(const graph::Graph& g, uint32_t rank, uint64_t local) { return g.value[g.global_id(rank, local)]; }

// Fig. 3: blocking send/recv pairs; calc vertices carry the time between calls.
TEST(SchedgenP2P, Fig3BlockingChain) {
  TraceSpec t(2);
  t[0].compute(90).send(1, 0, 8);  // [100, 110]
  t[0].compute(50).recv(1, 0, 8, 1, 0);
  t[0].compute(30);
  t[1].compute(40).recv(0, 0, 8, 0, 0);  // [50, 60]
  t[1].compute(20).send(0, 0, 8);
  t[1].compute(5);
  graph::Graph g = build_graph(t.write("fig3"));

  EXPECT_EQ(kinds_of(g, 0), "c s c r c");
  EXPECT_EQ(kinds_of(g, 1), "c r c s c");
  EXPECT_EQ(value(g, 0, 0), 90u);
  EXPECT_EQ(value(g, 0, 2), 50u);
  EXPECT_EQ(value(g, 0, 4), 30u);
  EXPECT_EQ(value(g, 1, 0), 40u);
  EXPECT_EQ(value(g, 0, 1), 8u);  // message size
  EXPECT_EQ(preds_of(g, 0, 1), V{"R0"});
  EXPECT_EQ(preds_of(g, 0, 2), V{"R1"});
  EXPECT_EQ(preds_of(g, 0, 3), V{"R2"});
  EXPECT_EQ(preds_of(g, 0, 4), V{"R3"});
  EXPECT_EQ(peer_rank(g, 0, 1), 1u);
  EXPECT_EQ(peer_local(g, 0, 1), 1u);  // rank 0's send → rank 1's recv
  EXPECT_EQ(peer_local(g, 1, 3), 3u);  // rank 1's send → rank 0's recv
}

// Fig. 13: a nonblocking operation starts at its call, the following computation irequires it and
// the Wait's successor requires it. A receive starts when the computation before it ends, so the
// computation overlapping an Irecv requires that computation (not the receive: its message edge
// would close a cycle when two ranks exchange messages this way).
TEST(SchedgenP2P, Fig13NonblockingOverlap) {
  TraceSpec t(2);
  t[0].compute(100).isend(1, 0, 8, /*request*/ 1);
  t[0].compute(200).wait(Call::Wait, {1}, {{1}});
  t[0].compute(10);
  t[1].compute(50).irecv(0, 0, 8, 7);
  t[1].compute(300).wait(Call::Wait, {7}, {{7, 0, 0, 8}});
  t[1].compute(10);
  graph::Graph g = build_graph(t.write("fig13"));

  EXPECT_EQ(kinds_of(g, 0), "c s c c");
  EXPECT_EQ(preds_of(g, 0, 1), V{"R0"});          // send after the first computation
  EXPECT_EQ(preds_of(g, 0, 2), V{"I1"});          // overlapping computation starts with the send
  EXPECT_EQ(preds_of(g, 0, 3), (V{"R1", "R2"}));  // after the Wait: send done and computation done
  EXPECT_EQ(value(g, 0, 2), 210u);                // the Isend's own 10 ns, then the 200 ns gap

  // The receive's vertex is placed when its completion is seen; edges give the same structure.
  EXPECT_EQ(kinds_of(g, 1), "c c r c");
  EXPECT_EQ(preds_of(g, 1, 2), V{"R0"});
  EXPECT_EQ(preds_of(g, 1, 1), V{"R0"});
  EXPECT_EQ(preds_of(g, 1, 3), (V{"R1", "R2"}));
  EXPECT_EQ(peer_local(g, 0, 1), 2u);
}

// Waitany/Waitsome: only the requests reported finished are required by what follows.
TEST(SchedgenP2P, PartialCompletionRequiresOnlyFinishedRequests) {
  TraceSpec t(2);
  t[0].isend(1, 1, 4, 1);
  t[0].isend(1, 2, 4, 2);
  t[0].compute(5).wait(Call::Waitany, {1, 2}, {{2}});
  t[0].compute(5).wait(Call::Waitany, {1, 2}, {{1}});
  t[1].recv(0, 1, 4, 0, 1);
  t[1].recv(0, 2, 4, 0, 2);
  graph::Graph g = build_graph(t.write("waitany"));
  // rank 0: c0 s1 c2 s3 c4 (Waitany #1) c5 (Waitany #2) c6 (end)
  EXPECT_EQ(kinds_of(g, 0), "c s c s c c c");
  EXPECT_EQ(preds_of(g, 0, 5), (V{"R3", "R4"}));  // after the first Waitany: tag-2 send only
  EXPECT_EQ(preds_of(g, 0, 6), (V{"R1", "R5"}));  // after the second: tag-1 send
}

// A Test that finds nothing adds no dependency; one that succeeds is a completion.
TEST(SchedgenP2P, FailedTestIsNoCompletion) {
  TraceSpec t(2);
  t[0].isend(1, 0, 4, 1);
  t[0].compute(5).wait(Call::Test, {1}, {});
  t[0].compute(5).wait(Call::Test, {1}, {{1}});
  t[1].recv(0, 0, 4, 0, 0);
  Options no_lag;
  no_lag.poll_lag = false;  // the polling lag has its own tests below
  graph::Graph g = build_graph(t.write("test"), no_lag);
  EXPECT_EQ(kinds_of(g, 0), "c s c c");
  EXPECT_EQ(value(g, 0, 2), 20u);  // the Isend's 10 ns and both gaps (the Test only polled: its wait)
  EXPECT_EQ(preds_of(g, 0, 3), (V{"R1", "R2"}));
}

// A completion found by a polling loop is noticed, on average, half a polling period after it
// happened: a calc vertex of that length sits between the completion and what waits for it.
TEST(SchedgenP2P, PolledCompletionIsNoticedHalfAPollingPeriodLate) {
  TraceSpec t(2);
  t[0].irecv(1, 0, 4, 1);                      // [0, 10)
  t[0].wait(Call::Test, {1}, {});              // polls start at 10, 50 and 90: period 40
  t[0].compute(30).wait(Call::Test, {1}, {});  //
  t[0].compute(30).wait(Call::Test, {1}, {{1, 1, 0, 4}});
  t[0].compute(7);
  t[1].send(0, 0, 4);
  Stats st;
  graph::Graph g = build_graph(t.write("poll_lag"), {}, &st);
  // c0 (before Irecv), c1 (the polling loop's computation), r, lag, c after the loop
  ASSERT_EQ(kinds_of(g, 0), "c c r c c");
  EXPECT_EQ(value(g, 0, 1), 90u);                 // the Irecv's 10 ns, the two failed polls and the gaps between
  EXPECT_EQ(value(g, 0, 3), 20u);                 // half of the 40 ns polling period
  EXPECT_EQ(preds_of(g, 0, 3), (V{"R2"}));        // the lag starts when the receive completes
  EXPECT_EQ(preds_of(g, 0, 4), (V{"R1", "R3"}));  // after the loop and after noticing the message
  EXPECT_EQ(st.polled_completions, 1u);
  EXPECT_EQ(st.poll_lag_ns, 20u);

  // A Test that succeeds at its first call, on a rank that never polled with MPI_Test before:
  // nothing tells whether it is a loop at all, and there is no period: no lag.
  TraceSpec once(2);
  once[0].irecv(1, 0, 4, 1);
  once[0].compute(30).wait(Call::Test, {1}, {{1, 1, 0, 4}});
  once[1].send(0, 0, 4);
  build_graph(once.write("poll_once"), {}, &st);
  EXPECT_EQ(st.polled_completions, 0u);
}

// A completion found at a loop's first poll had arrived before the loop looked. Added latency
// moves it past that poll, and from then on the loop polls as the rank's loops of the same call
// did: it gets the lag of that period (the analyzer resolves it to its slack at L0, so T(L0) keeps
// the trace). Without it, app_completions (4000 rounds, traces in which half the loops found their
// message at once) was predicted ~10 us per round short at every dL >= 20 us.
TEST(SchedgenP2P, FirstPollCompletionTakesThePeriodOfTheRanksLastLoop) {
  TraceSpec t(2);
  t[0].irecv(1, 0, 4, 1);                      // a Test loop with period 40, found at the third poll
  t[0].wait(Call::Test, {1}, {});              //
  t[0].compute(30).wait(Call::Test, {1}, {});  //
  t[0].compute(30).wait(Call::Test, {1}, {{1, 1, 0, 4}});
  t[0].irecv(1, 1, 4, 2);  // found at the first MPI_Test: lag of the last Test loop's period
  t[0].compute(5).wait(Call::Test, {2}, {{2, 1, 1, 4}});
  t[0].irecv(1, 2, 4, 3);  // found at the first MPI_Testany: no Testany loop yet, no lag
  t[0].compute(5).wait(Call::Testany, {3}, {{3, 1, 2, 4}});
  t[0].compute(7);
  t[1].send(0, 0, 4);
  t[1].send(0, 1, 4);
  t[1].send(0, 2, 4);
  Stats st;
  graph::Graph g = build_graph(t.write("poll_first"), {}, &st);
  // c c r lag c (the loop) | c r lag c (found at once) | c r c (Testany)
  ASSERT_EQ(kinds_of(g, 0), "c c r c c c r c c c r c");
  EXPECT_EQ(value(g, 0, 3), 20u);  // the loop's lag: half its 40 ns period
  EXPECT_EQ(value(g, 0, 7), 20u);  // the first-poll completion's, from the same period
  EXPECT_EQ(preds_of(g, 0, 7), (V{"R6"}));
  EXPECT_EQ(preds_of(g, 0, 8), (V{"R5", "R7"}));
  EXPECT_EQ(preds_of(g, 0, 11), (V{"R10", "R9"}));  // the Testany's receive: noticed at once
  EXPECT_EQ(st.polled_completions, 2u);
  EXPECT_EQ(st.first_poll_completions, 1u);
  EXPECT_EQ(st.poll_lag_ns, 40u);
}

// The period for a first-poll completion is the median of the rank's recent loops of that call,
// and a loop's own lag takes that median when it is shorter: one loop stretched by a stall sets
// neither.
TEST(SchedgenP2P, FirstPollLagIgnoresOneStalledLoop) {
  TraceSpec t(2);
  const uint64_t gaps[] = {30, 30, 3990};  // periods 40, 40 and 4000 (the last loop stalled)
  int32_t tag = 0;
  for (uint64_t gap : gaps) {
    t[0].irecv(1, tag, 4, 1);
    t[0].wait(Call::Test, {1}, {});
    t[0].compute(gap).wait(Call::Test, {1}, {{1, 1, tag, 4}});
    t[1].send(0, tag++, 4);
  }
  t[0].irecv(1, tag, 4, 2);
  t[0].compute(5).wait(Call::Test, {2}, {{2, 1, tag, 4}});
  t[1].send(0, tag, 4);
  Stats st;
  graph::Graph g = build_graph(t.write("poll_stall"), {}, &st);
  EXPECT_EQ(st.first_poll_completions, 1u);
  // the stalled loop's own lag and the first-poll lag: half the median, 40 ns
  EXPECT_EQ(st.poll_lag_ns, 20u + 20u + 20u + 20u);
}

// An MPI_Iprobe loop that found a message hands its lag to the receive that takes the message, and
// that receive counts as posted at the loop's start: the message arrived while the loop ran. The
// lag is one and a half polling periods: MPI_Iprobe looks before it progresses, so the poll after
// the arrival pulls the message in and the next one finds it.
TEST(SchedgenP2P, IprobeLoopLagGoesToTheReceiveThatFollows) {
  TraceSpec t(2);
  t[0].add(Call::Iprobe).value = 0;  // polls start at 0 and 50, found at 100: period 50
  t[0].compute(40).add(Call::Iprobe).value = 0;
  t[0].compute(40).add(Call::Iprobe).value = 1;
  t[0].recv(trace::kAnySource, trace::kAnyTag, 8, 1, 3);
  t[1].send(0, 3, 8);
  Stats st;
  const std::string dir = t.write("iprobe_lag");
  graph::Graph g = build_graph(dir, {}, &st);
  // the calc before the loop, the loop's, the receive, the lag, the calc after it
  ASSERT_EQ(kinds_of(g, 0), "c c r c c");
  EXPECT_EQ(value(g, 0, 1), 100u);          // the loop's computation: two failed probes and the gaps
  EXPECT_EQ(preds_of(g, 0, 2), (V{"R0"}));  // the receive is posted where the loop began
  EXPECT_EQ(value(g, 0, 3), 75u);           // one and a half 50 ns polling periods
  EXPECT_EQ(preds_of(g, 0, 3), (V{"R2"}));
  EXPECT_EQ(preds_of(g, 0, 4), (V{"R1", "R3"}));  // after the loop and after noticing the message
  EXPECT_EQ(st.polled_completions, 1u);

  // A second MPI_Iprobe that finds its message at once: the loop began there, so the receive is
  // posted after the computation before the probe and noticed with the last loop's lag.
  TraceSpec again(2);
  again[0].add(Call::Iprobe).value = 0;
  again[0].compute(40).add(Call::Iprobe).value = 0;
  again[0].compute(40).add(Call::Iprobe).value = 1;
  again[0].recv(trace::kAnySource, trace::kAnyTag, 8, 1, 3);
  again[0].compute(200).add(Call::Iprobe).value = 1;
  again[0].compute(3).recv(trace::kAnySource, trace::kAnyTag, 8, 1, 3);
  again[1].send(0, 3, 8);
  again[1].send(0, 3, 8);
  g = build_graph(again.write("iprobe_again"), {}, &st);
  // the loop as above, its calc after (up to the second probe), the calc from the probe to the
  // receive, r, lag, c
  ASSERT_EQ(kinds_of(g, 0), "c c r c c c r c c");
  EXPECT_EQ(value(g, 0, 4), 200u);
  EXPECT_EQ(preds_of(g, 0, 5), (V{"R4"}));
  EXPECT_EQ(preds_of(g, 0, 6), (V{"R4"}));  // posted where the probe began
  EXPECT_EQ(value(g, 0, 7), 75u);
  EXPECT_EQ(preds_of(g, 0, 7), (V{"R6"}));
  EXPECT_EQ(preds_of(g, 0, 8), (V{"R5", "R7"}));
  EXPECT_EQ(st.polled_completions, 2u);
  EXPECT_EQ(st.first_poll_completions, 1u);

  Options no_lag;
  no_lag.poll_lag = false;
  g = build_graph(dir, no_lag, &st);
  EXPECT_EQ(kinds_of(g, 0), "c r c");
  EXPECT_EQ(st.polled_completions, 0u);
}

// With --tracer-time the tracer's sampled own time (tracer-cost-NNNNN.json) comes off the
// computation: its encoding of each event off the gap after the call, its building of an
// MPI_Isend's event off the time inside the call counted as computation. Without the file, or by
// default, the trace's times stand.
TEST(SchedgenP2P, TracersOwnTimeIsTakenOffTheComputation) {
  TraceSpec t(2);
  t[0].compute(100).isend(1, 0, 8, /*request*/ 1);  // 10 ns inside
  t[0].compute(50).wait(Call::Wait, {1}, {{1}});
  t[0].compute(30);
  t[1].compute(100).recv(0, 0, 8, 0, 0);
  t[1].compute(3);  // shorter than the encoding: nothing left
  const std::string dir = t.write("own_time");
  Options take_off;
  take_off.tracer_time = true;
  Stats st;
  graph::Graph plain = build_graph(dir, take_off, &st);
  EXPECT_EQ(st.tracer_time_ns, 0u);
  trace::TracerCost cost;
  cost.samples = 16;
  cost.encode_ns = 6;
  cost.record_ns["MPI_Isend"] = 4;
  trace::write_tracer_cost(dir, 0, cost);
  trace::write_tracer_cost(dir, 1, cost);
  graph::Graph g = build_graph(dir, take_off, &st);
  ASSERT_EQ(kinds_of(g, 0), kinds_of(plain, 0));
  ASSERT_EQ(kinds_of(g, 0), "c s c c");
  // after the Isend: its 10 ns less 4 of building the event, and the gap less 6 of encoding it
  EXPECT_EQ(value(plain, 0, 2), 60u);
  EXPECT_EQ(value(g, 0, 2), 50u);
  EXPECT_EQ(value(plain, 0, 3), 30u);
  EXPECT_EQ(value(g, 0, 3), 24u);
  EXPECT_EQ(value(g, 1, 2), 0u);
  // rank 0: three gaps (from MPI_Init, after the Isend, after the Wait) and the Isend's building;
  // rank 1: two gaps, the last only 3 ns long
  EXPECT_EQ(st.tracer_time_ns, 3 * 6u + 4u + 6u + 3u);
  g = build_graph(dir, {}, &st);
  EXPECT_EQ(value(g, 0, 2), 60u);
  EXPECT_EQ(st.tracer_time_ns, 0u);
}

// ANY_SOURCE/ANY_TAG receives are bound to what actually matched, and receives of one stream pair
// with sends in posting order even when they complete in the other order.
TEST(SchedgenP2P, WildcardBoundToActualSourceInPostingOrder) {
  TraceSpec t(2);
  t[0].irecv(trace::kAnySource, trace::kAnyTag, 4, 1);  // A
  t[0].irecv(1, 7, 4, 2);                               // B
  t[0].wait(Call::Wait, {2}, {{2, 1, 7, 4}});
  t[0].wait(Call::Wait, {1}, {{1, 1, 7, 4}});
  t[1].send(0, 7, 4);
  t[1].send(0, 7, 4);
  graph::Graph g = build_graph(t.write("wild_order"));
  // rank 0: c0 c1 c2 c3 rA(4) rB(5) c6
  ASSERT_EQ(kinds_of(g, 0), "c c c c r r c");
  EXPECT_EQ(preds_of(g, 0, 3), (V{"R2", "R5"}));  // after Wait(B)
  EXPECT_EQ(preds_of(g, 0, 6), (V{"R3", "R4"}));  // after Wait(A)
  EXPECT_EQ(peer_local(g, 1, 1), 4u);             // first send → A (posted first)
  EXPECT_EQ(peer_local(g, 1, 3), 5u);             // second send → B
  EXPECT_EQ(g.tag[g.global_id(0, 4)], 7);
}

TEST(SchedgenP2P, AnySourceTakesTheSenderThatMatched) {
  TraceSpec t(3);
  t[0].irecv(trace::kAnySource, 5, 4, 1);
  t[0].irecv(1, 5, 4, 2);
  t[0].wait(Call::Waitall, {1, 2}, {{1, 2, 5, 4}, {2, 1, 5, 4}});
  t[1].compute(100).send(0, 5, 4);
  t[2].send(0, 5, 4);
  graph::Graph g = build_graph(t.write("wild_src"));
  ASSERT_EQ(kinds_of(g, 0), "c c c r r c");
  EXPECT_EQ(peer_rank(g, 0, 3), 2u);
  EXPECT_EQ(peer_rank(g, 0, 4), 1u);
}

// A synchronous send completes only when its receive has matched: the receiver acknowledges with
// a 0-byte message of its own stream, and what follows the Wait requires that acknowledgement
// (the measured cost of MPI_Issend under the injector: two latencies, not one).
TEST(SchedgenP2P, SynchronousSendWaitsForTheAcknowledgement) {
  TraceSpec t(2);
  t[0].compute(100).isend(1, 5, 64, /*request*/ 3).call = Call::Issend;
  t[0].compute(20).wait(Call::Wait, {3}, {{3}});
  t[0].compute(10);
  t[1].compute(400).recv(0, 5, 64, 0, 5);
  t[1].compute(10);
  Stats st;
  graph::Graph g = build_graph(t.write("issend"), {}, &st);
  EXPECT_EQ(st.p2p_messages, 1u);
  EXPECT_EQ(st.sync_acks, 1u);
  EXPECT_EQ(g.num_messages(), 2u);
  // rank 0: calc, send, ack receive (0 bytes, from rank 1), calc, calc after the Wait
  EXPECT_EQ(kinds_of(g, 0), "c s r c c");
  EXPECT_EQ(value(g, 0, 2), 0u);
  EXPECT_EQ(peer_rank(g, 0, 2), 1u);
  EXPECT_EQ(preds_of(g, 0, 2), V{});      // posted with the send, waits only for its message
  EXPECT_EQ(preds_of(g, 0, 3), V{"I1"});  // the computation overlapping the send does not wait
  EXPECT_EQ(preds_of(g, 0, 4), (V{"R1", "R2", "R3"}));
  // rank 1: the acknowledgement leaves once the receive has completed
  EXPECT_EQ(kinds_of(g, 1), "c r s c");
  EXPECT_EQ(preds_of(g, 1, 2), V{"R1"});
  EXPECT_EQ(peer_local(g, 1, 2), 2u);
  EXPECT_EQ(peer_local(g, 0, 1), 1u);
}

// One operation instance per Start; the template itself is no vertex.
TEST(SchedgenP2P, PersistentRequestsOneInstancePerStart) {
  TraceSpec t(2);
  Event& si = t[0].send(1, 3, 16, trace::kCommWorld, Call::Send_init);
  si.request = 9;
  Event& ri = t[1].irecv(0, 3, 16, 4);
  ri.call = Call::Recv_init;
  for (int i = 0; i < 3; ++i) {
    t[0].add(Call::Start).requests = {9};
    t[0].compute(7).wait(Call::Wait, {9}, {{9}});
    t[1].add(Call::Start).requests = {4};
    t[1].wait(Call::Wait, {4}, {{4, 0, 3, 16}});
  }
  t[0].add(Call::Request_free).request = 9;
  Stats st;
  graph::Graph g = build_graph(t.write("persistent"), {}, &st);
  EXPECT_EQ(g.num_messages(), 3u);
  EXPECT_EQ(st.p2p_messages, 3u);
  EXPECT_EQ(kinds_of(g, 0), "c s c c s c c s c c");
  EXPECT_EQ(preds_of(g, 0, 2), V{"I1"});
  EXPECT_EQ(preds_of(g, 0, 3), (V{"R1", "R2"}));
  // Instances pair in order.
  EXPECT_EQ(peer_rank(g, 0, 1), 1u);
  EXPECT_LT(peer_local(g, 0, 1), peer_local(g, 0, 4));
  EXPECT_LT(peer_local(g, 0, 4), peer_local(g, 0, 7));
}

// A call that returns without waiting for another rank (MPI_Startall, MPI_Isend, MPI_Irecv, ...)
// spends its time on the rank's CPU: it counts as computation after the operations it started. So
// does a poll that found nothing. Blocking calls do not: their time is waiting the graph models
// itself.
TEST(SchedgenP2P, TimeInsideCallsThatCannotWaitIsComputation) {
  TraceSpec t(2);
  Event& si = t[0].send(1, 3, 16, trace::kCommWorld, Call::Send_init);
  si.request = 9;
  t[1].irecv(0, 3, 16, 4).call = Call::Recv_init;
  t[0].compute(100).add(Call::Startall, 700).requests = {9};  // MPICH's start: 700 ns of CPU
  t[0].compute(50).wait(Call::Test, {9}, {}, 30);             // a failed poll: CPU too
  t[0].compute(40).wait(Call::Wait, {9}, {{9}}, 400);         // blocking: not counted
  t[0].compute(5);
  t[1].add(Call::Start).requests = {4};
  t[1].wait(Call::Wait, {4}, {{4, 0, 3, 16}});
  const std::string dir = t.write("initiation_time");
  Stats st;
  graph::Graph g = build_graph(dir, {}, &st);
  ASSERT_EQ(kinds_of(g, 0), "c s c c");
  EXPECT_EQ(value(g, 0, 0), 10u + 100u);              // Send_init's 10 ns, the gap before the start
  EXPECT_EQ(preds_of(g, 0, 1), V{"R0"});              // the message leaves at the call's entry
  EXPECT_EQ(value(g, 0, 2), 700u + 50u + 30u + 40u);  // the start's time, the poll's and the gaps around it
  EXPECT_EQ(preds_of(g, 0, 3), (V{"R1", "R2"}));      // the Wait's 400 ns are the model's to fill
  EXPECT_EQ(st.initiation_calls, 4u);                 // Send_init, Startall; Recv_init, Start
  EXPECT_EQ(st.initiation_ns, 10u + 700u + 10u + 10u);
  EXPECT_EQ(st.failed_poll_calls, 1u);
  EXPECT_EQ(st.failed_poll_ns, 30u);

  Options gaps_only;
  gaps_only.initiation_time = false;
  gaps_only.failed_poll_time = false;
  graph::Graph h = build_graph(dir, gaps_only, &st);
  EXPECT_EQ(value(h, 0, 0), 100u);
  EXPECT_EQ(value(h, 0, 2), 50u + 40u);
  EXPECT_EQ(st.initiation_calls, 0u);
  EXPECT_EQ(st.failed_poll_calls, 0u);

  // Each switch on its own: the failed poll's 30 ns without the calls that cannot wait.
  Options polls_only;
  polls_only.initiation_time = false;
  graph::Graph p = build_graph(dir, polls_only, &st);
  EXPECT_EQ(value(p, 0, 2), 50u + 30u + 40u);
  EXPECT_EQ(st.initiation_calls, 0u);
  EXPECT_EQ(st.failed_poll_calls, 1u);
}

// A failed poll counts as computation only in a loop that works between its polls (the gap after
// it at least as long as the poll): where a loop only polls, its polls are the rank's wait for the
// message, which the graph models itself.
TEST(SchedgenP2P, FailedPollCountsOnlyWhereTheLoopWorksBetweenPolls) {
  auto polling_loop = [](uint64_t work) {
    TraceSpec t(2);
    t[0].irecv(1, 0, 4, 1);
    for (int i = 0; i < 3; ++i) t[0].compute(work).wait(Call::Test, {1}, {}, 20);
    t[0].compute(work).wait(Call::Test, {1}, {{1, 1, 0, 4}}, 20);
    t[1].send(0, 0, 4);
    return t;
  };
  Options no_lag;
  no_lag.poll_lag = false;
  Stats st;
  TraceSpec working = polling_loop(50);
  graph::Graph g = build_graph(working.write("poll_work"), no_lag, &st);
  EXPECT_EQ(st.failed_poll_calls, 3u);
  EXPECT_EQ(st.failed_poll_ns, 3u * 20u);
  EXPECT_EQ(value(g, 0, 1), 10u + 4u * 50u + 3u * 20u);  // the Irecv, the work and the failed polls
  TraceSpec spinning = polling_loop(5);
  g = build_graph(spinning.write("poll_spin"), no_lag, &st);
  EXPECT_EQ(st.failed_poll_calls, 0u);
  EXPECT_EQ(value(g, 0, 1), 10u + 4u * 5u);  // the polls were the wait
}

// Sendrecv: a send and a receive that start together; the call ends when both have.
TEST(SchedgenP2P, SendrecvIsConcurrentSendAndReceive) {
  TraceSpec t(2);
  for (int r = 0; r < 2; ++r) {
    Event& e = t[r].compute(10).add(Call::Sendrecv);
    e.peer = 1 - r;
    e.tag = 0;
    e.bytes = 32;
    e.peer2 = 1 - r;
    e.tag2 = 0;
    e.bytes2 = 32;
    e.completions.push_back(Completion{0, 0, 1 - r, 0, 32, false});
  }
  graph::Graph g = build_graph(t.write("sendrecv"));
  EXPECT_EQ(kinds_of(g, 0), "c s r c");
  EXPECT_EQ(preds_of(g, 0, 1), V{"R0"});
  EXPECT_EQ(preds_of(g, 0, 2), V{"R0"});
  EXPECT_EQ(preds_of(g, 0, 3), (V{"R1", "R2"}));
  EXPECT_EQ(g.num_messages(), 2u);
}

// MPI_PROC_NULL operations produce nothing; zero-byte messages are real messages.
TEST(SchedgenP2P, ProcNullDroppedZeroBytesKept) {
  TraceSpec t(2);
  t[0].send(trace::kProcNull, 0, 100);
  t[0].isend(trace::kProcNull, 0, 100, 5);
  t[0].wait(Call::Wait, {5}, {{5}});
  t[0].send(1, 0, 0);
  t[1].recv(0, 0, 0, 0, 0);
  Stats st;
  graph::Graph g = build_graph(t.write("procnull"), {}, &st);
  EXPECT_EQ(st.proc_null_ops, 2u);
  EXPECT_EQ(g.num_messages(), 1u);
  uint64_t sends = 0;
  for (uint64_t v = g.rank_begin[0]; v < g.rank_begin[1]; ++v)
    if (g.kind[v] == VertexKind::Send) {
      ++sends;
      EXPECT_EQ(g.value[v], 0u);
    }
  EXPECT_EQ(sends, 1u);
}

// Mprobe takes the message (and waits for it); Mrecv adds nothing.
TEST(SchedgenP2P, MatchedProbeIsTheReceive) {
  TraceSpec t(2);
  t[0].send(1, 2, 12);
  Event& mp = t[1].add(Call::Mprobe);
  mp.peer = trace::kAnySource;
  mp.tag = trace::kAnyTag;
  mp.request = 77;
  mp.completions.push_back(Completion{0, 0, 0, 2, 12, false});
  t[1].compute(20).add(Call::Mrecv).requests = {77};
  graph::Graph g = build_graph(t.write("mprobe"));
  EXPECT_EQ(kinds_of(g, 1), "c r c");
  EXPECT_EQ(peer_rank(g, 1, 1), 0u);
  EXPECT_EQ(value(g, 1, 2), 20u);  // the gap before Mrecv; Mrecv's own time is not computation
}

// --probe-overhead: a blocking probe's matching, once its message is there, is computation after
// the received message (MPI_Probe + MPI_Recv, and MPI_Mprobe); without the option the graph is as
// before.
TEST(SchedgenP2P, ProbeOverheadIsComputationAfterTheProbedReceive) {
  TraceSpec t(2);
  t[0].send(1, 2, 12);
  t[0].compute(10).send(1, 3, 12);
  Event& probe = t[1].add(Call::Probe);
  probe.peer = trace::kAnySource;
  probe.tag = trace::kAnyTag;
  probe.completions.push_back(Completion{0, 0, 0, 2, 12, false});
  t[1].compute(5).recv(0, 2, 12, 0, 2);
  Event& mp = t[1].compute(20).add(Call::Mprobe);
  mp.peer = 0;
  mp.tag = 3;
  mp.request = 77;
  mp.completions.push_back(Completion{0, 0, 0, 3, 12, false});
  t[1].compute(30).add(Call::Mrecv).requests = {77};
  t[1].compute(40);
  Options with;
  with.probe_overhead_ns = 150;
  const auto [g, plain, st] = build_with_and_without(t.write("probe_overhead"), with);
  ASSERT_EQ(kinds_of(g, 1), kinds_of(plain, 1));
  ASSERT_EQ(kinds_of(g, 1), "c r c r c");
  EXPECT_EQ(value(g, 1, 0), value(plain, 1, 0));
  EXPECT_EQ(value(g, 1, 2), value(plain, 1, 2) + 150u);  // after MPI_Recv: the probe's matching
  EXPECT_EQ(value(g, 1, 4), value(plain, 1, 4) + 150u);  // after MPI_Mprobe
  EXPECT_EQ(st.probe_overhead_calls, 2u);
  // the charge comes after the wait: the calc requires the receive
  EXPECT_EQ(preds_of(g, 1, 2), (std::vector<std::string>{"R1"}));
}

// --first-use: the first messages of a pair of ranks in a size band cost the sender (blocking
// sends only: a nonblocking send's time is counted already) and the receiver more computation,
// until the band's count of messages is used up. A message reaches the first band and the bands
// on its side of S that begin below its size.
TEST(SchedgenP2P, FirstUseOfTheTransportChargesThePairsFirstMessages) {
  TraceSpec t(2);
  t[0].send(1, 0, 512);              // bands 0 and 1
  t[0].compute(10).send(1, 0, 16);   // band 0 (its last message)
  t[0].compute(10).send(1, 0, 512);  // band 1
  t[0].compute(10).isend(1, 0, 512, 1);
  t[0].compute(10).wait(Call::Wait, {1}, {{1}});
  t[0].compute(10).send(1, 0, 8000);  // above S: the rendezvous band 2 only (band 0 is used up)
  t[0].compute(10);
  t[1].recv(0, 0, 512, 0, 0);
  t[1].compute(5).recv(0, 0, 16, 0, 0);
  t[1].compute(5).recv(0, 0, 512, 0, 0);
  t[1].compute(5).irecv(0, 0, 512, 7);
  t[1].compute(5).wait(Call::Wait, {7}, {{7, 0, 0, 512}});
  t[1].compute(5).recv(0, 0, 8000, 0, 0);
  t[1].compute(5);
  Options with;
  with.rendezvous_above_bytes = 4096;
  with.first_use = {{64, 2, 100, 10}, {4096, 3, 1000, 200}, {8192, 1, 30, 5000}};
  const std::string dir = t.write("first_use");
  const auto [g, plain, st] = build_with_and_without(dir, with);
  // The same graph with more computation: per rank, the calc vertices' differences in order.
  const auto added = [&](const graph::Graph& a, uint32_t rank) {
    std::vector<int64_t> d;
    for (uint64_t v = a.rank_begin[rank]; v < a.rank_begin[rank + 1]; ++v)
      if (a.kind[v] == VertexKind::Calc)
        d.push_back(static_cast<int64_t>(a.value[v]) - static_cast<int64_t>(plain.value[v]));
    return d;
  };
  ASSERT_EQ(kinds_of(g, 0), kinds_of(plain, 0));
  ASSERT_EQ(kinds_of(g, 1), kinds_of(plain, 1));
  // rank 0: before each blocking send; nothing for the MPI_Isend
  EXPECT_EQ(added(g, 0), (std::vector<int64_t>{1100, 100, 1000, 0, 0, 30, 0}));
  // rank 1: after each receive's completion, the MPI_Wait's included
  EXPECT_EQ(added(g, 1), (std::vector<int64_t>{0, 210, 10, 200, 0, 200, 5000}));
  EXPECT_EQ(st.first_use_sends, 4u);
  EXPECT_EQ(st.first_use_recvs, 5u);
  EXPECT_EQ(st.first_use_ns, 2230u + 5620u);

  // With --completion-time the receiver's time after its messages comes from the trace: no
  // receiver share then.
  with.completion_time = true;
  Stats timed;
  build_graph(dir, with, &timed);
  EXPECT_EQ(timed.first_use_sends, 4u);
  EXPECT_EQ(timed.first_use_recvs, 0u);
}

// A nonblocking send's cost is inside the call, counted already; it still warms the pair's
// buffers, so a blocking send after it is not charged again. A rank's messages to itself never
// reach the transport.
TEST(SchedgenP2P, FirstUseCountsNonblockingSends) {
  TraceSpec t(2);
  t[0].isend(0, 0, 512, 2);
  t[0].recv(0, 0, 512, 0, 0);
  t[0].compute(10).wait(Call::Wait, {2}, {{2}});
  t[0].isend(1, 0, 512, 1);
  t[0].compute(10).wait(Call::Wait, {1}, {{1}});
  t[0].compute(10).send(1, 0, 512);
  t[0].compute(10);
  t[1].recv(0, 0, 512, 0, 0);
  t[1].compute(5).recv(0, 0, 512, 0, 0);
  t[1].compute(5);
  Options with;
  with.first_use = {{64, 1, 100, 10}, {4096, 1, 1000, 200}};
  Stats st;
  build_graph(t.write("first_use_isend"), with, &st);
  EXPECT_EQ(st.first_use_sends, 0u);
  EXPECT_EQ(st.first_use_recvs, 1u);  // the first receive only
  EXPECT_EQ(st.first_use_ns, 210u);
}

// An MPI_Improbe loop looks before it progresses, like MPI_Iprobe: the message it found is noticed
// one and a half polling periods after it arrived; an MPI_Test loop half a period. Like an
// MPI_Iprobe loop's, its receive counts as posted where the loop began, beside the loop's own
// computation: the lag then has the loop's slack at L0 (the analyzer's resolution), and added
// latency costs only once the arrival has moved past it.
TEST(SchedgenP2P, ImprobeLoopIsNoticedOneAndAHalfPeriodsLate) {
  TraceSpec t(2);
  t[0].send(1, 2, 12);
  t[1].add(Call::Improbe);  // polls start at 0 and 60, found at 120: period 60
  t[1].compute(50).add(Call::Improbe);
  Event& found = t[1].compute(50).add(Call::Improbe);
  found.peer = trace::kAnySource;
  found.tag = trace::kAnyTag;
  found.request = 77;
  found.completions.push_back(Completion{0, 0, 0, 2, 12, false});
  t[1].compute(20).add(Call::Mrecv).requests = {77};
  Stats st;
  graph::Graph g = build_graph(t.write("improbe_lag"), {}, &st);
  // the calc before the loop, the loop's, the receive, the lag, the calc after
  ASSERT_EQ(kinds_of(g, 1), "c c r c c");
  EXPECT_EQ(value(g, 1, 1), 120u);  // the loop's computation: two failed probes and the gaps
  EXPECT_EQ(preds_of(g, 1, 1), (V{"R0"}));
  EXPECT_EQ(preds_of(g, 1, 2), (V{"R0"}));  // the receive is posted where the loop began
  EXPECT_EQ(value(g, 1, 3), 90u);           // one and a half 60 ns periods
  EXPECT_EQ(preds_of(g, 1, 3), (V{"R2"}));
  EXPECT_EQ(preds_of(g, 1, 4), (V{"R1", "R3"}));  // after the loop and after noticing the message
  EXPECT_EQ(st.polled_completions, 1u);
  EXPECT_EQ(st.poll_lag_ns, 90u);

  // Without polling lags the receive follows the loop, as the trace shows it.
  Options no_lag;
  no_lag.poll_lag = false;
  g = build_graph(t.write("improbe_no_lag"), no_lag);
  ASSERT_EQ(kinds_of(g, 1), "c r c");
  EXPECT_EQ(preds_of(g, 1, 1), (V{"R0"}));
}

// Graph tags: world tags unchanged, other communicators get their own tags, so GOAL's
// (src, dst, tag) matching cannot mix communicators.
TEST(SchedgenP2P, TagsUniquePerCommunicatorAndTag) {
  TraceSpec t(2);
  const uint64_t dup = 0x77;
  for (int r = 0; r < 2; ++r) {
    Event& e = t[r].add(Call::Comm_dup);
    e.comm = trace::kCommWorld;
    e.new_comm = dup;
    e.members = {0, 1};
  }
  t[0].send(1, 5, 4, dup);
  t[0].send(1, 5, 4);
  t[1].recv(trace::kAnySource, 5, 4, 0, 5);  // world (posted first on world)
  t[1].recv(0, 5, 4, 0, 5, dup);
  graph::Graph g = build_graph(t.write("tags"));
  int32_t world_tag = g.tag[g.global_id(0, 3)], dup_tag = g.tag[g.global_id(0, 1)];
  EXPECT_EQ(world_tag, 5);
  EXPECT_NE(dup_tag, 5);
  EXPECT_GE(dup_tag, 0);
  // The dup-communicator send pairs with the dup-communicator receive although the world one was
  // posted first and has the same source and tag.
  EXPECT_EQ(peer_local(g, 0, 1), 3u);
  EXPECT_EQ(peer_local(g, 0, 3), 1u);
}

// A receive above S takes its message with a handshake that MPICH runs only inside MPI calls that
// progress: the request-to-send that arrives while the rank computes is answered in the
// MPI_Waitall, so the receive starts no earlier than that call (docs/schedgen.md, "Progress of
// rendezvous receives"). The MPI_Isend between does not progress. Eager messages, a graph made
// without S and one made with --async-progress keep the receive where it was posted.
TEST(SchedgenP2P, RendezvousReceiveStartsAtTheNextProgressingCall) {
  auto exchange = [](uint64_t bytes, const std::string& name) {
    TraceSpec t(2);
    for (int32_t r = 0; r < 2; ++r) {
      t[r].compute(10).irecv(1 - r, 0, bytes, 7);
      t[r].isend(1 - r, 0, bytes, 8);
      t[r].compute(500).wait(Call::Waitall, {7, 8}, {{7, 1 - r, 0, bytes}, {8}});
      t[r].compute(10);
    }
    return t.write(name);
  };
  Options with_s;
  with_s.rendezvous_above_bytes = 8192;
  Stats st;
  graph::Graph g = build_graph(exchange(65536, "rndv_gate"), with_s, &st);
  // 0 before the MPI_Irecv, 1 the MPI_Irecv's own time, 2 the send, 3 the MPI_Isend's own time and
  // the computation up to the MPI_Waitall (the gate), 4 the Waitall's zero calc, 5 the receive,
  // 6 after the Waitall.
  EXPECT_EQ(kinds_of(g, 0), "c c s c c r c");
  EXPECT_EQ(preds_of(g, 0, 5), (V{"R0", "R3"}));  // posted after 0, handshake not before the Waitall
  EXPECT_EQ(value(g, 0, 3), 10u + 500u);
  EXPECT_EQ(preds_of(g, 0, 6), (V{"R2", "R4", "R5"}));
  EXPECT_EQ(st.rendezvous_gated_recvs, 2u);
  EXPECT_NO_THROW(graph::topological_order(g, 8192));

  Stats eager_st;
  graph::Graph eager = build_graph(exchange(4096, "rndv_gate_eager"), with_s, &eager_st);
  EXPECT_EQ(eager_st.rendezvous_gated_recvs, 0u);
  EXPECT_EQ(kinds_of(eager, 0), "c c s c r c");
  EXPECT_EQ(preds_of(eager, 0, 4), V{"R0"});

  const std::string dir = exchange(65536, "rndv_gate_off");
  for (bool async : {false, true}) {
    Options o = with_s;
    if (!async) o.rendezvous_above_bytes = UINT64_MAX;  // no S given
    o.async_progress = async;
    Stats off_st;
    graph::Graph off = build_graph(dir, o, &off_st);
    EXPECT_EQ(off_st.rendezvous_gated_recvs, 0u) << "async " << async;
    EXPECT_EQ(kinds_of(off, 0), "c c s c r c") << "async " << async;
    EXPECT_EQ(preds_of(off, 0, 4), V{"R0"}) << "async " << async;
  }
}

// A rendezvous handshake that a call starts right after a long computation runs on cold caches
// (llamp-loggp's o_rndv_cold_ns, docs/schedgen.md "Cold handshakes"): with --cold-handshake the
// receives above S gated at a call after at least AFTER of computation wait for one extra calc of
// EXTRA after the gate, one per call however many receives it starts. Shorter computation, eager
// receives and --completion-time (the trace's time holds it) leave the graph as without it.
TEST(SchedgenP2P, RendezvousHandshakeAfterALongComputationStartsCold) {
  auto exchange = [](uint64_t bytes, int messages, const std::string& name) {
    TraceSpec t(2);
    for (int32_t r = 0; r < 2; ++r) {
      std::vector<uint64_t> requests;
      std::vector<RankEvents::Done> completions;
      for (int m = 0; m < messages; ++m) {
        t[r].compute(10).irecv(1 - r, m, bytes, 7 + 2 * m);
        requests.push_back(7 + 2 * m);
        completions.push_back({static_cast<uint64_t>(7 + 2 * m), 1 - r, m, bytes});
      }
      for (int m = 0; m < messages; ++m) {
        t[r].isend(1 - r, m, bytes, 8 + 2 * m);
        requests.push_back(8 + 2 * m);
        completions.push_back({static_cast<uint64_t>(8 + 2 * m)});
      }
      t[r].compute(500).wait(Call::Waitall, requests, completions);
      t[r].compute(10);
    }
    return t.write(name);
  };
  Options cold;
  cold.rendezvous_above_bytes = 8192;
  cold.cold_handshake_ns = 3000;
  cold.cold_handshake_after_ns = 400;
  Stats st;
  graph::Graph g = build_graph(exchange(65536, 1, "cold_handshake"), cold, &st);
  // As without it (RendezvousReceiveStartsAtTheNextProgressingCall), and 5 the cold handshake's
  // extra calc after the gate 3, which the receive 6 waits for.
  ASSERT_EQ(kinds_of(g, 0), "c c s c c c r c");
  EXPECT_EQ(value(g, 0, 3), 10u + 500u);
  EXPECT_EQ(value(g, 0, 5), 3000u);
  EXPECT_EQ(preds_of(g, 0, 5), V{"R3"});
  EXPECT_EQ(preds_of(g, 0, 6), (V{"R0", "R5"}));
  EXPECT_EQ(preds_of(g, 0, 7), (V{"R2", "R4", "R6"}));
  EXPECT_EQ(st.cold_handshake_calls, 2u);
  EXPECT_EQ(st.cold_handshake_recvs, 2u);
  EXPECT_NO_THROW(graph::topological_order(g, 8192));

  // Two receives gated at one call: one extra calc, both wait for it.
  Stats two_st;
  graph::Graph two = build_graph(exchange(65536, 2, "cold_handshake_two"), cold, &two_st);
  EXPECT_EQ(two_st.cold_handshake_calls, 2u);
  EXPECT_EQ(two_st.cold_handshake_recvs, 4u);
  uint64_t extra_calcs = 0;
  for (uint64_t v = two.rank_begin[0]; v < two.rank_begin[1]; ++v)
    extra_calcs += two.kind[v] == graph::VertexKind::Calc && two.value[v] == 3000u;
  EXPECT_EQ(extra_calcs, 1u);

  // Not cold: a computation shorter than AFTER, eager messages, --completion-time.
  Options warm = cold;
  warm.cold_handshake_after_ns = 600;
  Options timed = cold;
  timed.completion_time = true;
  const std::string dir = exchange(65536, 1, "cold_handshake_off");
  const std::string eager_dir = exchange(4096, 1, "cold_handshake_eager");
  for (const auto& [options, trace, label] :
       {std::tuple{warm, dir, "short computation"}, std::tuple{timed, dir, "completion time"},
        std::tuple{cold, eager_dir, "eager"}}) {
    Stats off_st;
    graph::Graph off = build_graph(trace, options, &off_st);
    EXPECT_EQ(off_st.cold_handshake_calls, 0u) << label;
    EXPECT_EQ(off_st.cold_handshake_recvs, 0u) << label;
    for (uint64_t v = off.rank_begin[0]; v < off.rank_begin[1]; ++v)
      EXPECT_FALSE(off.kind[v] == graph::VertexKind::Calc && off.value[v] == 3000u) << label;
  }
}

// The first call after the post that runs the progress engine is the gate, whatever it is: here
// an MPI_Iprobe halfway through the computation (a failed poll). A persistent receive's MPI_Start
// posts it like an MPI_Irecv.
TEST(SchedgenP2P, RendezvousGateIsTheFirstProgressingCallAfterThePost) {
  TraceSpec t(2);
  t[0].compute(10).isend(1, 0, 65536, 8);
  t[0].compute(500).wait(Call::Wait, {8}, {{8}});
  Event& ri = t[1].irecv(0, 0, 65536, 4);
  ri.call = Call::Recv_init;
  t[1].compute(10).add(Call::Start).requests = {4};
  Event& probe = t[1].compute(200).add(Call::Iprobe);  // found nothing
  probe.peer = 0;
  probe.tag = 99;
  t[1].compute(300).wait(Call::Wait, {4}, {{4, 0, 0, 65536}});
  Options with_s;
  with_s.rendezvous_above_bytes = 8192;
  Stats st;
  graph::Graph g = build_graph(t.write("rndv_gate_probe"), with_s, &st);
  // 0 before the MPI_Start, 1 up to the MPI_Iprobe, 2 the gate (zero, after 1: the MPI_Iprobe's
  // start), 3 the computation up to the MPI_Wait, 4 the receive, 5 after the Wait.
  EXPECT_EQ(kinds_of(g, 1), "c c c c r c");
  EXPECT_EQ(value(g, 1, 1), 10u + 200u);  // the MPI_Start's own 10 ns, then the gap
  EXPECT_EQ(value(g, 1, 2), 0u);
  EXPECT_EQ(preds_of(g, 1, 2), V{"R1"});
  EXPECT_EQ(preds_of(g, 1, 4), (V{"R0", "R2"}));
  EXPECT_EQ(st.rendezvous_gated_recvs, 1u);
}

// MPICH over UCX copies an eager message out of the shared-memory queue only in its progress
// engine, inside an MPI call: with --eager-progress the two 4 KiB messages that arrive while the
// rank computes are copied out in the MPI_Waitall, one after the other. Both receives start no
// earlier than the call (its gate), the second after the first, so each o_r lands in the call
// instead of overlapping the computation. Without the option, with --async-progress and with
// --completion-time, they start where they were posted. A receive the call leaves open is gated but not chained.
TEST(SchedgenP2P, EagerReceivesAreCopiedOutInTheCompletionCall) {
  auto exchange = [](bool leave_one_open, const std::string& name, uint64_t capacity = 4096) {
    TraceSpec t(2);
    for (int32_t r = 0; r < 2; ++r) {
      t[r].compute(10).irecv(1 - r, 0, capacity, 7);
      t[r].irecv(1 - r, 1, capacity, 9);
      t[r].isend(1 - r, 0, 4096, 8);
      t[r].isend(1 - r, 1, 4096, 10);
      if (leave_one_open) {
        t[r].compute(500).wait(Call::Waitall, {7, 8, 10}, {{7, 1 - r, 0, 4096}, {8}, {10}});
        t[r].compute(20).wait(Call::Wait, {9}, {{9, 1 - r, 1, 4096}});
      } else {
        t[r].compute(500).wait(Call::Waitall, {7, 9, 8, 10}, {{7, 1 - r, 0, 4096}, {9, 1 - r, 1, 4096}, {8}, {10}});
      }
      t[r].compute(10);
    }
    return t.write(name);
  };
  Options eager;
  eager.eager_progress = true;
  Stats st;
  const std::string dir = exchange(false, "eager_progress");
  graph::Graph g = build_graph(dir, eager, &st);
  // 0 before the first MPI_Irecv, 1 and 2 the MPI_Irecvs' own time, 3 and 5 the sends, 4 the first
  // MPI_Isend's own time, 6 the second's and the computation up to the MPI_Waitall (the gate), 7
  // the Waitall's zero calc, 8 and 9 the receives, 10 after the Waitall.
  ASSERT_EQ(kinds_of(g, 0), "c c c s c s c c r r c");
  EXPECT_EQ(value(g, 0, 6), 10u + 500u);
  EXPECT_EQ(preds_of(g, 0, 8), (V{"R0", "R6"}));        // posted after 0, copied out in the Waitall
  EXPECT_EQ(preds_of(g, 0, 9), (V{"R1", "R6", "R8"}));  // ... after the first one
  EXPECT_EQ(preds_of(g, 0, 10), (V{"R3", "R5", "R7", "R8", "R9"}));
  EXPECT_EQ(st.eager_gated_recvs, 4u);
  EXPECT_EQ(st.eager_chained_recvs, 2u);
  EXPECT_EQ(st.rendezvous_gated_recvs, 0u);

  // Off, with --async-progress, with --completion-time (the time from the trace holds the copies).
  for (const auto& [variant, o] : without_eager_copies({})) {
    Stats off_st;
    graph::Graph off = build_graph(dir, o, &off_st);
    EXPECT_EQ(kinds_of(off, 0), "c c c s c s c r r c") << "variant " << variant;
    EXPECT_EQ(preds_of(off, 0, 7), V{"R0"}) << "variant " << variant;
    EXPECT_EQ(preds_of(off, 0, 8), V{"R1"}) << "variant " << variant;
    EXPECT_EQ(off_st.eager_gated_recvs + off_st.eager_chained_recvs, 0u) << "variant " << variant;
  }
  // Posted for up to 64 KiB, above S: gated for a handshake the 4 KiB messages did not need. Without
  // the option they are neither gated nor chained.
  Options with_s;
  with_s.rendezvous_above_bytes = 8192;
  Stats big_st;
  graph::Graph big = build_graph(exchange(false, "eager_progress_capacity", 65536), with_s, &big_st);
  EXPECT_EQ(kinds_of(big, 0), "c c c s c s c c r r c");
  EXPECT_EQ(preds_of(big, 0, 8), V{"R0"});
  EXPECT_EQ(preds_of(big, 0, 9), V{"R1"});
  EXPECT_EQ(big_st.eager_gated_recvs + big_st.eager_chained_recvs + big_st.rendezvous_gated_recvs, 0u);

  Stats open_st;
  graph::Graph open = build_graph(exchange(true, "eager_progress_open"), eager, &open_st);
  // ... 6 the gate, 7 the Waitall's zero calc, 8 the receive it completed, 9 up to the MPI_Wait,
  // 10 the receive the Wait completed: gated at the Waitall, not chained after 8.
  ASSERT_EQ(kinds_of(open, 0), "c c c s c s c c r c r c");
  EXPECT_EQ(preds_of(open, 0, 8), (V{"R0", "R6"}));
  EXPECT_EQ(preds_of(open, 0, 10), (V{"R1", "R6"}));
  EXPECT_EQ(open_st.eager_gated_recvs, 4u);
  EXPECT_EQ(open_st.eager_chained_recvs, 0u);
}

}  // namespace
}  // namespace llamp::schedgen::test
