// The tracer's own features, each on a real MPICH run: comm ids of every constructor,
// MPI_THREAD_MULTIPLE, Pcontrol, kill -9, MPI_Abort, an unwritable trace directory, counters
// and the default trace directory.
#include <gtest/gtest.h>
#include <papi.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <sstream>
#include <thread>

#include "llamp/trace_event.hpp"
#include "tracer_test_util.hpp"

using namespace llamp;
using namespace llamp::tracer_test;
using trace::Call;
using trace::Event;

namespace {

// Whether PAPI itself, asked directly in this process, can count `event` on this machine.
bool papi_can_count(const char* event) {
  if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) return false;
  int set = PAPI_NULL;
  if (PAPI_create_eventset(&set) != PAPI_OK) return false;
  const bool added = PAPI_add_named_event(set, event) == PAPI_OK;
  PAPI_cleanup_eventset(set);
  PAPI_destroy_eventset(&set);
  return added;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

std::vector<const Event*> of_call(const std::vector<Event>& events, Call c) {
  std::vector<const Event*> out;
  for (const Event& e : events)
    if (e.call == c) out.push_back(&e);
  return out;
}

// Runs prog_coverage traced on `ranks` ranks; every rank's events (empty when the run failed).
std::vector<std::vector<Event>> traced_coverage_run(const std::string& name, int ranks) {
  const std::string work = scratch_dir(name);
  RunResult r = run_mpi(ranks, LLAMP_PROG_COVERAGE, "", {{"LLAMP_TRACE_DIR", work + "/trace"}}, work);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  if (r.exit_code != 0) return {};
  trace::TraceDir dir = trace::TraceDir::open(work + "/trace");
  return all_events(dir);
}

}  // namespace

TEST(TracerComms, EveryConstructorGivesOneIdPerCommunicatorWithTheRightMembers) {
  auto events = traced_coverage_run("comms", 4);
  ASSERT_EQ(events.size(), 4u);
  auto first = [&](int rank, Call c) {
    auto v = of_call(events[static_cast<size_t>(rank)], c);
    EXPECT_FALSE(v.empty()) << trace::call_name(c) << " missing on rank " << rank;
    return v.empty() ? Event{} : *v.front();
  };
  for (int rank = 0; rank < 4; ++rank) {
    const Event split = first(rank, Call::Comm_split);
    EXPECT_EQ(split.value, rank % 2);
    EXPECT_EQ(split.members, (rank % 2 == 0 ? std::vector<int32_t>{0, 2} : std::vector<int32_t>{1, 3}));
    const Event inter = first(rank, Call::Intercomm_create);
    EXPECT_TRUE(inter.flags & trace::kFlagIntercomm);
    EXPECT_EQ(inter.members, split.members);
    EXPECT_EQ(inter.remote_members, (rank % 2 == 0 ? std::vector<int32_t>{1, 3} : std::vector<int32_t>{0, 2}));
    // An allreduce over the intercommunicator, recorded on its id.
    bool used = false;
    for (const Event* e : of_call(events[rank], Call::Allreduce)) used |= e->comm == inter.new_comm;
    EXPECT_TRUE(used) << "rank " << rank;
    const Event merged = first(rank, Call::Intercomm_merge);
    EXPECT_EQ(merged.comm, inter.new_comm);
    EXPECT_EQ(merged.members, (std::vector<int32_t>{0, 2, 1, 3}));  // low group (high=0: the evens) first
    const Event idup = first(rank, Call::Comm_idup);
    EXPECT_EQ(idup.comm, split.new_comm);
    EXPECT_EQ(idup.members, split.members);
    EXPECT_NE(idup.request, 0u);
    const Event created = first(rank, Call::Comm_create);
    if (rank < 2) {
      EXPECT_EQ(created.members, (std::vector<int32_t>{0, 1}));
    } else {
      EXPECT_EQ(created.new_comm, trace::kCommNull);
    }
    const Event sub = first(rank, Call::Cart_sub);  // dims {2, 2}: rows {0,1} and {2,3}
    EXPECT_EQ(sub.members, (rank < 2 ? std::vector<int32_t>{0, 1} : std::vector<int32_t>{2, 3}));
    // MPI_COMM_SELF's id is fixed by the format.
    bool self = false;
    for (const Event* e : of_call(events[rank], Call::Barrier)) self |= e->comm == trace::comm_self_id(rank);
    EXPECT_TRUE(self);
  }
  // Same constructor call -> same id on every member, different communicators -> different ids.
  for (Call c : {Call::Intercomm_create, Call::Intercomm_merge, Call::Comm_dup_with_info, Call::Graph_create,
                 Call::Dist_graph_create, Call::Dist_graph_create_adjacent, Call::Cart_create}) {
    std::set<uint64_t> ids;
    for (int rank = 0; rank < 4; ++rank) ids.insert(first(rank, c).new_comm);
    EXPECT_EQ(ids.size(), 1u) << trace::call_name(c);
  }
  std::set<uint64_t> split_ids, idup_ids;
  for (int rank = 0; rank < 4; ++rank) {
    split_ids.insert(first(rank, Call::Comm_split).new_comm);
    idup_ids.insert(first(rank, Call::Comm_idup).new_comm);
  }
  EXPECT_EQ(split_ids.size(), 2u);
  EXPECT_EQ(idup_ids.size(), 2u);
}

// Neighbor collectives carry the calling rank's neighbors in MPI's order, with MPI_PROC_NULL
// kept, and their v/w counts per neighbor; no other event carries neighbors. prog_coverage's grid
// is 2 x 2 with dimension 0 periodic: rank 0's -1 and +1 neighbors of dimension 0 are both rank
// 2, and of dimension 1 MPI_PROC_NULL and rank 1. Its distributed graphs are rings.
TEST(TracerNeighbors, NeighborCollectivesRecordTheNeighborsAndTheirCounts) {
  auto events = traced_coverage_run("neighbors", 4);
  ASSERT_EQ(events.size(), 4u);
  const std::vector<int32_t> grid0 = {2, 2, trace::kProcNull, 1};
  for (int rank = 0; rank < 4; ++rank) {
    for (const Event& e : events[rank]) {
      const bool neighbor = std::string(trace::call_name(e.call)).find("eighbor_") != std::string::npos;
      EXPECT_EQ(neighbor, !e.destinations.empty()) << "rank " << rank << " " << trace::call_name(e.call);
    }
    const int left = (rank + 3) % 4, right = (rank + 1) % 4;
    auto gather = of_call(events[rank], Call::Neighbor_allgather);
    ASSERT_EQ(gather.size(), 1u);
    EXPECT_EQ(gather[0]->bytes, 8u);
    EXPECT_EQ(gather[0]->bytes2, 8u);
    EXPECT_EQ(gather[0]->sources.size(), 4u);
    if (rank == 0) {
      EXPECT_EQ(gather[0]->sources, grid0);
      EXPECT_EQ(gather[0]->destinations, grid0);
    }
    auto w = of_call(events[rank], Call::Ineighbor_alltoallw);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0]->send_counts, (std::vector<uint64_t>{8, 16, 8, 16}));
    EXPECT_EQ(w[0]->recv_counts, (std::vector<uint64_t>{16, 8, 16, 8}));
    EXPECT_NE(w[0]->request, 0u);
    auto v = of_call(events[rank], Call::Neighbor_alltoallv);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0]->sources, (std::vector<int32_t>{left}));
    EXPECT_EQ(v[0]->destinations, (std::vector<int32_t>{right}));
    EXPECT_EQ(v[0]->send_counts, (std::vector<uint64_t>{24}));
    EXPECT_EQ(v[0]->recv_counts, (std::vector<uint64_t>{24}));
  }
}

// Calls llamp cannot model pass through untouched, are counted, and leave untraced-NNNNN.json
// (which schedgen refuses); a run without them leaves no such file.
TEST(TracerUntraced, CallsLlampDoesNotTraceAreCountedAndReported) {
  const std::string work = scratch_dir("untraced");
  RunResult plain = run_mpi(2, LLAMP_PROG_UNTRACED, "", {}, work, false);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  RunResult r = run_mpi(2, LLAMP_PROG_UNTRACED, "", {{"LLAMP_TRACE_DIR", work + "/trace"}}, work);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* rank : {"rank 0 ok", "rank 1 ok"}) {
    EXPECT_NE(plain.output.find(rank), std::string::npos) << plain.output;
    EXPECT_NE(r.output.find(rank), std::string::npos) << r.output;
  }
  EXPECT_EQ(occurrences(r.output, "made MPI calls llamp does not trace"), 2u) << r.output;
  auto count_of = [](const std::vector<trace::UntracedCall>& calls, const std::string& name) -> uint64_t {
    for (const auto& c : calls)
      if (c.name == name) return c.count;
    return 0;
  };
  for (uint32_t rank = 0; rank < 2; ++rank) {
    const auto calls = trace::read_untraced_calls(work + "/trace", rank);
    EXPECT_EQ(count_of(calls, "MPI_Put"), 1u) << rank;
    EXPECT_EQ(count_of(calls, "MPI_Get"), 1u) << rank;
    EXPECT_EQ(count_of(calls, "MPI_Win_fence"), 2u) << rank;
    EXPECT_EQ(count_of(calls, "MPI_Allreduce_init"), 0u) << rank;                     // traced, so not listed
    EXPECT_EQ(count_of(calls, rank == 0 ? "MPI_Send_c" : "MPI_Recv_c"), 0u) << rank;  // traced as MPI_Send/Recv
    EXPECT_EQ(count_of(calls, "MPI_Barrier"), 0u) << rank;                            // traced, so not listed
  }
  // The traced calls around them are in the trace as usual.
  trace::TraceDir dir = trace::TraceDir::open(work + "/trace");
  auto events = all_events(dir);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(of_call(events[0], Call::Barrier).size(), 1u);
  EXPECT_EQ(of_call(events[0], Call::Start).size(), 1u);
  EXPECT_EQ(of_call(events[0], Call::Allreduce_init).size(), 1u);
  // The large-count variants are their calls with the large-count flag, and the bytes they moved.
  for (uint32_t rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const auto p2p = of_call(events[rank], rank == 0 ? Call::Send : Call::Recv);
    ASSERT_EQ(p2p.size(), 1u);
    EXPECT_TRUE(p2p[0]->flags & trace::kFlagLargeCount);
    EXPECT_EQ(p2p[0]->bytes, 8u);
    if (rank == 1) {
      ASSERT_EQ(p2p[0]->completions.size(), 1u);
      EXPECT_EQ(p2p[0]->completions[0].bytes, 8u);
    }
    const auto allreduce = of_call(events[rank], Call::Allreduce);
    ASSERT_EQ(allreduce.size(), 1u);
    EXPECT_TRUE(allreduce[0]->flags & trace::kFlagLargeCount);
    EXPECT_EQ(allreduce[0]->bytes, 8u);
    const auto alltoallv = of_call(events[rank], Call::Alltoallv);
    ASSERT_EQ(alltoallv.size(), 1u);
    EXPECT_TRUE(alltoallv[0]->flags & trace::kFlagLargeCount);
    EXPECT_EQ(alltoallv[0]->send_counts, (std::vector<uint64_t>{8 * (rank + 1), 8 * (rank + 1)}));
    EXPECT_EQ(alltoallv[0]->recv_counts, (std::vector<uint64_t>{8, 16}));
    EXPECT_FALSE(of_call(events[rank], Call::Barrier)[0]->flags & trace::kFlagLargeCount);  // the flag is per call
  }
  // A run that makes none leaves no file.
  const std::string hello = scratch_dir("untraced_none");
  RunResult h = run_mpi(2, LLAMP_APP_HELLO, "", {{"LLAMP_TRACE_DIR", hello + "/trace"}}, hello);
  ASSERT_EQ(h.exit_code, 0) << h.output;
  EXPECT_TRUE(trace::read_untraced_calls(hello + "/trace", 0).empty());
  EXPECT_EQ(h.output.find("does not trace"), std::string::npos) << h.output;
}

// MPICH returns one shared built-in handle for every nonblocking collective that completed at
// once (here over MPI_COMM_SELF). Each request still gets its own id and its own completion;
// before, the second overwrote the first and the Waitall completed the second twice.
TEST(TracerRequests, CollectivesCompleteAtOnceBehindASharedHandleKeepTheirOwnIds) {
  auto events = traced_coverage_run("shared_handles", 2);
  ASSERT_EQ(events.size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const auto& ev = events[static_cast<size_t>(rank)];
    auto it = std::find_if(ev.begin(), ev.end(), [&](const Event& e) {
      return e.call == Call::Iallreduce && e.comm == trace::comm_self_id(static_cast<uint32_t>(rank));
    });
    ASSERT_NE(it, ev.end());
    ASSERT_LT(it + 2, ev.end());
    const Event &iallreduce = it[0], &ibarrier = it[1], &waitall = it[2];
    ASSERT_EQ(ibarrier.call, Call::Ibarrier);
    ASSERT_EQ(waitall.call, Call::Waitall);
    EXPECT_NE(iallreduce.request, ibarrier.request);
    EXPECT_EQ(waitall.requests, (std::vector<uint64_t>{iallreduce.request, ibarrier.request}));
    ASSERT_EQ(waitall.completions.size(), 2u);
    EXPECT_EQ(waitall.completions[0].request, iallreduce.request);
    EXPECT_EQ(waitall.completions[1].request, ibarrier.request);
  }
}

TEST(TracerThreads, ThreadMultipleEventsCarryTheirThread) {
  const std::string work = scratch_dir("threads");
  RunResult r = run_mpi(2, LLAMP_APP_THREADS, "10 16 3", {{"LLAMP_TRACE_DIR", work + "/trace"}}, work);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  trace::TraceDir dir = trace::TraceDir::open(work + "/trace");
  EXPECT_EQ(dir.meta.thread_level, "MPI_THREAD_MULTIPLE");
  auto events = all_events(dir);
  for (size_t rank = 0; rank < events.size(); ++rank) {
    std::map<uint32_t, std::set<uint64_t>> comms_of_thread;
    std::map<uint32_t, long> isends;
    for (const Event& e : events[rank]) {
      if (e.call == Call::Init_thread) EXPECT_EQ(e.thread, 0u);
      if (e.call == Call::Isend) {
        comms_of_thread[e.thread].insert(e.comm);
        ++isends[e.thread];
      }
    }
    // Three workers, each on its own communicator, each with all its exchanges.
    EXPECT_EQ(comms_of_thread.size(), 3u) << "rank " << rank;
    std::set<uint64_t> all;
    for (auto& [thread, comms] : comms_of_thread) {
      EXPECT_EQ(comms.size(), 1u);
      all.insert(comms.begin(), comms.end());
      EXPECT_EQ(isends[thread], 10);
    }
    EXPECT_EQ(all.size(), 3u);
  }
}

TEST(TracerPcontrol, PausedCallsAreNotRecordedAndPcontrolItselfIs) {
  const std::string work = scratch_dir("pcontrol");
  RunResult r = run_mpi(4, LLAMP_PROG_PCONTROL, "", {{"LLAMP_TRACE_DIR", work + "/trace"}}, work);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  trace::TraceDir dir = trace::TraceDir::open(work + "/trace");
  auto events = all_events(dir);
  std::set<uint64_t> dup_ids;
  for (auto& rank_events : events) {
    auto pc = of_call(rank_events, Call::Pcontrol);
    ASSERT_EQ(pc.size(), 2u);
    EXPECT_EQ(pc[0]->value, 0);
    EXPECT_TRUE(pc[0]->flags & trace::kFlagPaused);
    EXPECT_EQ(pc[1]->value, 1);
    EXPECT_FALSE(pc[1]->flags & trace::kFlagPaused);
    auto sr = of_call(rank_events, Call::Sendrecv);
    ASSERT_EQ(sr.size(), 8u);  // 3 before the pause, 5 after
    EXPECT_TRUE(of_call(rank_events, Call::Comm_dup).empty());
    dup_ids.insert(sr.back()->comm);
    EXPECT_NE(sr.back()->comm, trace::kCommWorld);
  }
  EXPECT_EQ(dup_ids.size(), 1u) << "a communicator made while paused must still get one id on all ranks";
}

// The tracer reads a predefined type's size from MPICH's handle instead of asking
// PMPI_Type_size_x (runtime.hpp, bytes_of); pair and derived types still go to MPI. Every send's
// bytes must be what MPI_Type_size says, and what the receive's status says arrived.
TEST(TracerTypes, BytesAreTheTypeSizeForPredefinedPairAndDerivedTypes) {
  const std::string work = scratch_dir("types");
  RunResult r = run_mpi(2, LLAMP_PROG_TYPES, "", {{"LLAMP_TRACE_DIR", work + "/trace"}}, work);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t at = r.output.find("type-sizes:");
  ASSERT_NE(at, std::string::npos) << r.output;
  std::istringstream line(r.output.substr(at + 11, r.output.find('\n', at) - at - 11));
  std::vector<uint64_t> sizes;
  for (uint64_t s; line >> s;) sizes.push_back(s);
  ASSERT_EQ(sizes.size(), 12u) << r.output;
  trace::TraceDir dir = trace::TraceDir::open(work + "/trace");
  auto events = all_events(dir);
  ASSERT_EQ(events.size(), 2u);
  const auto sends = of_call(events[0], Call::Send);
  const auto recvs = of_call(events[1], Call::Recv);
  ASSERT_EQ(sends.size(), sizes.size());
  ASSERT_EQ(recvs.size(), sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    SCOPED_TRACE("type " + std::to_string(i) + " of prog_types, MPI_Type_size " + std::to_string(sizes[i]));
    EXPECT_EQ(sends[i]->bytes, 7 * sizes[i]);
    EXPECT_EQ(recvs[i]->bytes, 7 * sizes[i]);
    ASSERT_EQ(recvs[i]->completions.size(), 1u);
    EXPECT_EQ(recvs[i]->completions[0].bytes, 7 * sizes[i]);
  }
  for (const auto& rank_events : events) {
    const auto allreduce = of_call(rank_events, Call::Allreduce);
    ASSERT_EQ(allreduce.size(), 1u);
    EXPECT_EQ(allreduce[0]->bytes, 3 * sizeof(long double));
  }
}

// Point-to-point and collective events are started before the MPI call (prepare_p2p,
// prepare_collective). An error handler that calls MPI inside the failing call records its own
// event in between; the send's and the Bcast's events must still come out whole, after the
// handler's, flagged failed.
TEST(TracerPrepared, AnErrorHandlerCallingMpiInsideASendOrACollectiveKeepsBothEvents) {
  const std::string work = scratch_dir("errhandler");
  RunResult r = run_mpi(2, LLAMP_PROG_ERRHANDLER, "", {{"LLAMP_TRACE_DIR", work + "/trace"}}, work);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_NE(r.output.find("handler-calls: 2"), std::string::npos) << r.output;
  ASSERT_NE(r.output.find("send-rc-ok: 0"), std::string::npos) << r.output;
  ASSERT_NE(r.output.find("bcast-rc-ok: 0"), std::string::npos) << r.output;
  trace::TraceDir dir = trace::TraceDir::open(work + "/trace");
  auto events = all_events(dir);
  ASSERT_EQ(events.size(), 2u);
  const std::vector<Event>& rank0 = events[0];
  const auto sends = of_call(rank0, Call::Send);
  ASSERT_EQ(sends.size(), 1u);
  const Event& send = *sends[0];
  EXPECT_TRUE(send.flags & trace::kFlagFailed);
  EXPECT_EQ(send.tag, 7);
  EXPECT_EQ(send.bytes, 3 * sizeof(int));
  EXPECT_EQ(send.peer, trace::kNoRank);  // rank 5 of a 2-rank communicator
  EXPECT_NE(send.comm, trace::kCommWorld);
  EXPECT_LE(send.t_start_ns, send.t_end_ns);
  // The handler's barrier, on MPI_COMM_SELF, inside the send's time and recorded before it.
  const auto barrier = std::find_if(rank0.begin(), rank0.end(), [](const Event& e) {
    return e.call == Call::Barrier && e.comm == trace::comm_self_id(0);
  });
  ASSERT_NE(barrier, rank0.end());
  EXPECT_LT(barrier - rank0.begin(), sends[0] - rank0.data());
  EXPECT_GE(barrier->t_start_ns, send.t_start_ns);
  EXPECT_LE(barrier->t_end_ns, send.t_end_ns);
  // The exchange after it on both ranks: one Isend to the peer, one Irecv, completed by Waitall.
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const auto isends = of_call(events[rank], Call::Isend);
    const auto irecvs = of_call(events[rank], Call::Irecv);
    const auto waits = of_call(events[rank], Call::Waitall);
    ASSERT_EQ(isends.size(), 1u);
    ASSERT_EQ(irecvs.size(), 1u);
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_EQ(isends[0]->peer, 1 - rank);
    EXPECT_EQ(isends[0]->tag, 8);
    EXPECT_EQ(irecvs[0]->peer, trace::kAnySource);
    EXPECT_NE(isends[0]->request, irecvs[0]->request);
    ASSERT_EQ(waits[0]->completions.size(), 2u);
    EXPECT_EQ(waits[0]->completions[0].request, irecvs[0]->request);
    EXPECT_EQ(waits[0]->completions[0].source, 1 - rank);
    EXPECT_EQ(waits[0]->completions[1].request, isends[0]->request);
  }
  // The failed Bcast on both ranks (prepare_collective): its own fields, and the handler's barrier
  // recorded right before it, inside its time.
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const std::vector<Event>& ev = events[rank];
    const auto bcasts = of_call(ev, Call::Bcast);
    ASSERT_EQ(bcasts.size(), 1u);
    const Event& bcast = *bcasts[0];
    EXPECT_TRUE(bcast.flags & trace::kFlagFailed);
    EXPECT_EQ(bcast.bytes, 3 * sizeof(int));
    EXPECT_EQ(bcast.root, trace::kNoRank);  // rank 5 of a 2-rank communicator
    EXPECT_EQ(bcast.comm, send.comm);
    const size_t at = static_cast<size_t>(bcasts[0] - ev.data());
    ASSERT_GT(at, 0u);
    const Event& before = ev[at - 1];
    EXPECT_EQ(before.call, Call::Barrier);
    EXPECT_EQ(before.comm, trace::comm_self_id(static_cast<uint32_t>(rank)));
    EXPECT_GE(before.t_start_ns, bcast.t_start_ns);
    EXPECT_LE(before.t_end_ns, bcast.t_end_ns);
  }
}

TEST(TracerKill, KilledRanksLeaveReadableTruncatedTraces) {
  const std::string work = scratch_dir("kill");
  const std::string trace_dir = work + "/trace", pids = work + "/pids";
  fs::create_directories(pids);
  std::thread runner([&] {
    run_mpi(4, LLAMP_PROG_FOREVER, "",
            {{"LLAMP_TRACE_DIR", trace_dir}, {"LLAMP_TEST_PID_DIR", pids}, {"LLAMP_TRACE_BUFFER", "256KiB"}}, work);
  });
  // Wait until every rank has flushed at least two blocks, then kill them all.
  auto big_enough = [&] {
    for (int r = 0; r < 4; ++r) {
      std::error_code ec;
      auto size = fs::file_size(fs::path(trace_dir) / trace::rank_file_name(r), ec);
      if (ec || size < 1000 || !fs::exists(fs::path(pids) / ("pid-" + std::to_string(r)))) return false;
    }
    return true;
  };
  for (int i = 0; i < 1200 && !big_enough(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const bool ready = big_enough();
  for (int r = 0; r < 4; ++r) {
    std::ifstream in(fs::path(pids) / ("pid-" + std::to_string(r)));
    int pid = 0;
    if (in >> pid && pid > 0) kill(pid, SIGKILL);
  }
  runner.join();
  ASSERT_TRUE(ready) << "the ranks never flushed a block";
  trace::TraceDir dir = trace::TraceDir::open(trace_dir);
  EXPECT_EQ(dir.truncated_ranks().size(), 4u);
  for (auto& rank : dir.ranks) {
    EXPECT_GT(rank.event_count(), 0u);
    uint64_t n = 0;
    while (const Event* e = rank.next()) {
      if (n == 0) EXPECT_EQ(e->call, Call::Init);
      ++n;
    }
    EXPECT_EQ(n, rank.event_count());
  }
}

TEST(TracerAbort, AbortingRankFlushesItsTrace) {
  const std::string work = scratch_dir("abort");
  RunResult r = run_mpi(2, LLAMP_PROG_ABORT, "", {{"LLAMP_TRACE_DIR", work + "/trace"}}, work);
  EXPECT_NE(r.exit_code, 0);
  trace::RankTraceReader rank0(work + "/trace/" + trace::rank_file_name(0));
  EXPECT_FALSE(rank0.truncated());
  std::vector<Event> events;
  while (const Event* e = rank0.next()) events.push_back(*e);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(of_call(events, Call::Sendrecv).size(), 5u);
  EXPECT_EQ(events.back().call, Call::Abort);
  EXPECT_EQ(events.back().value, 3);
}

TEST(TracerFaults, UnwritableDirectoryRunsTheAppUntracedWithOneMessage) {
  const std::string work = scratch_dir("unwritable");
  std::ofstream(work + "/not-a-dir") << "x";
  const std::string counts = work + "/counts";
  fs::create_directories(counts);
  RunResult r = run_mpi(4, LLAMP_APP_HELLO, "",
                        {{"LLAMP_TRACE_DIR", work + "/not-a-dir/trace"}, {"LLAMP_APP_COUNTS_DIR", counts}}, work);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(occurrences(r.output, "llamptrace:"), 1u) << r.output;
  EXPECT_NE(r.output.find("cannot trace this run"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not-a-dir"), std::string::npos) << r.output;
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(count_of(read_app_counts(counts, rank), "MPI_Finalize"), 1);
}

TEST(TracerCounters, MissingEventWarnsOnceAndSoftwareCountersAreRecorded) {
  const std::string work = scratch_dir("papi");
  RunResult r = run_mpi(2, LLAMP_APP_HALO2D, "10 32 8 5",
                        {{"LLAMP_TRACE_DIR", work + "/trace"},
                         {"LLAMP_TRACE_PAPI", "PAPI_TOT_INS,perf::TASK-CLOCK,perf::LLAMP-NO-SUCH-EVENT"}},
                        work);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(occurrences(r.output, "llamptrace:"), 1u) << r.output;
  EXPECT_NE(r.output.find("perf::LLAMP-NO-SUCH-EVENT"), std::string::npos) << r.output;
  trace::TraceDir dir = trace::TraceDir::open(work + "/trace");
  const auto& names = dir.meta.counters;
  EXPECT_EQ(std::find(names.begin(), names.end(), "perf::LLAMP-NO-SUCH-EVENT"), names.end());
  if (!papi_can_count("perf::TASK-CLOCK")) {
    // A VM whose CPU libpfm4 does not recognise (an Intel VM reporting a generic "Intel(R) Xeon(R)
    // Processor"): PAPI disables its whole perf_event component, software events included. The
    // tracer must say so and trace on without counters, never drop them silently.
    EXPECT_NE(r.output.find("perf::TASK-CLOCK"), std::string::npos) << r.output;
    EXPECT_TRUE(names.empty());
    for (auto& rank : dir.ranks)
      while (const Event* e = rank.next()) ASSERT_TRUE(e->counters.empty()) << trace::call_name(e->call);
    GTEST_SKIP() << "PAPI cannot count perf::TASK-CLOCK on this machine (papi_component_avail says why); checked "
                    "that the tracer warned and traced on";
  }
  ASSERT_NE(std::find(names.begin(), names.end(), "perf::TASK-CLOCK"), names.end());
  // A machine without a PMU (these VMs) must name PAPI_TOT_INS in the warning instead.
  if (std::find(names.begin(), names.end(), "PAPI_TOT_INS") == names.end())
    EXPECT_NE(r.output.find("PAPI_TOT_INS"), std::string::npos) << r.output;
  const size_t clock_index =
      static_cast<size_t>(std::find(names.begin(), names.end(), "perf::TASK-CLOCK") - names.begin());
  for (auto& rank : dir.ranks) {
    int64_t task_clock_ns = 0;
    while (const Event* e = rank.next()) {
      ASSERT_EQ(e->counters.size(), names.size()) << trace::call_name(e->call);
      EXPECT_GE(e->counters[clock_index], 0);
      task_clock_ns += e->counters[clock_index];
    }
    EXPECT_GT(task_clock_ns, 0) << "the halo's compute intervals cost CPU time";
  }
}

TEST(TracerDefaults, DefaultDirectoryIsOneNewLlampTraceDirInTheWorkingDirectory) {
  const std::string work = scratch_dir("default-dir");
  RunResult r = run_mpi(4, LLAMP_APP_HELLO, "", {}, work);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(work))
    if (entry.is_directory() && entry.path().filename().string().rfind("llamp-trace-", 0) == 0)
      dirs.push_back(entry.path());
  ASSERT_EQ(dirs.size(), 1u);
  trace::TraceDir dir = trace::TraceDir::open(dirs[0].string());
  EXPECT_EQ(dir.ranks.size(), 4u);
  EXPECT_TRUE(dir.truncated_ranks().empty());
}

// At MPI_Finalize every rank writes the sampled time its tracer spent where the stamps cannot
// leave it out (encoding after the end stamp, building the event after the library returned);
// schedgen takes it off the computation.
TEST(TracerOwnTime, EveryRankWritesItsSampledCost) {
  const std::string work = scratch_dir("own-time");
  RunResult r = run_mpi(2, LLAMP_APP_HALO2D, "800 32 8 5", {{"LLAMP_TRACE_DIR", work + "/trace"}}, work);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (uint32_t rank = 0; rank < 2; ++rank) {
    const auto cost = trace::read_tracer_cost(work + "/trace", rank);
    ASSERT_TRUE(cost.has_value()) << "rank " << rank;
    // 800 iterations of ~10 calls each: about one call in 64 is sampled.
    EXPECT_GE(cost->samples, 20u);
    EXPECT_GT(cost->encode_ns, 0.0);
    EXPECT_LT(cost->encode_ns, 1e6) << "a per-event cost, not a total";
    ASSERT_TRUE(cost->record_ns.count("MPI_Isend")) << "the halo's sends are sampled";
    EXPECT_GT(cost->record_ns.at("MPI_Isend"), 0.0);
  }
}

namespace {
// Per rank: how many events of each call its trace holds, and the writer's work during the run.
struct FlushRun {
  std::vector<std::map<Call, size_t>> calls;
  std::vector<trace::TracerCost> cost;
};
FlushRun trace_halo_with(const std::string& name, std::map<std::string, std::string> env) {
  const std::string work = scratch_dir(name);
  env["LLAMP_TRACE_DIR"] = work + "/trace";
  RunResult r = run_mpi(2, LLAMP_APP_HALO2D, "2000 32 8 5", env, work);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  FlushRun run;
  trace::TraceDir dir = trace::TraceDir::open(work + "/trace");
  EXPECT_TRUE(dir.truncated_ranks().empty());
  for (uint32_t rank = 0; rank < dir.ranks.size(); ++rank) {
    auto& counts = run.calls.emplace_back();
    while (const Event* e = dir.ranks[rank].next()) ++counts[e->call];
    const auto cost = trace::read_tracer_cost(work + "/trace", rank);
    EXPECT_TRUE(cost.has_value()) << "rank " << rank;
    run.cost.push_back(cost.value_or(trace::TracerCost{}));
  }
  return run;
}
}  // namespace

// Compressing and writing blocks takes the rank's core while the application runs, time its
// trace cannot show; by default full chunks wait in the buffer until it is three quarters full or
// the trace closes. ~18 400 events and ~320 KiB encoded per rank, under the default 4 MiB.
TEST(TracerFlush, ATraceThatFitsTheBufferIsWrittenOnlyAtFinalize) {
  const FlushRun deferred = trace_halo_with("flush-default", {});
  ASSERT_EQ(deferred.cost.size(), 2u);
  for (const auto& cost : deferred.cost) {
    EXPECT_EQ(cost.blocks_written_during_run, 0u);
    EXPECT_EQ(cost.write_cpu_ns_during_run, 0u);
  }
  // Each chunk at once (a crash loses at most one chunk): the writer works during the run, and
  // tracer-cost says how much; the trace holds the same events.
  const FlushRun eager = trace_halo_with("flush-every-chunk", {{"LLAMP_TRACE_FLUSH", "every-chunk"}});
  ASSERT_EQ(eager.cost.size(), 2u);
  for (const auto& cost : eager.cost) {
    EXPECT_GE(cost.blocks_written_during_run, 3u) << "64 KiB chunks of a ~320 KiB trace";
    EXPECT_GT(cost.write_cpu_ns_during_run, 0u);
  }
  EXPECT_EQ(eager.calls, deferred.calls);
}

// A trace larger than the buffer is written while the run goes on: memory stays bounded, and no
// event is lost. 64 KiB: four 16 KiB chunks for ~320 KiB of events per rank.
TEST(TracerFlush, ATraceLargerThanTheBufferIsWrittenDuringTheRunWithNothingLost) {
  const FlushRun small = trace_halo_with("flush-small-buffer", {{"LLAMP_TRACE_BUFFER", "64KiB"}});
  const FlushRun large = trace_halo_with("flush-large-buffer", {});
  ASSERT_EQ(small.cost.size(), 2u);
  for (const auto& cost : small.cost) EXPECT_GE(cost.blocks_written_during_run, 5u);
  EXPECT_EQ(small.calls, large.calls);
}

TEST(TracerFlush, AnUnknownPolicyRunsTheAppUntracedWithOneMessage) {
  const std::string work = scratch_dir("flush-bad");
  const std::string counts = work + "/counts";
  fs::create_directories(counts);
  RunResult r = run_mpi(
      2, LLAMP_APP_HELLO, "",
      {{"LLAMP_TRACE_DIR", work + "/trace"}, {"LLAMP_TRACE_FLUSH", "sometimes"}, {"LLAMP_APP_COUNTS_DIR", counts}},
      work);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(occurrences(r.output, "llamptrace:"), 1u) << r.output;
  EXPECT_NE(r.output.find("LLAMP_TRACE_FLUSH=sometimes"), std::string::npos) << r.output;
  for (int rank = 0; rank < 2; ++rank) EXPECT_EQ(count_of(read_app_counts(counts, rank), "MPI_Finalize"), 1);
}
