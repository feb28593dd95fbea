// One mini-app (tests/apps) run under the tracer: the trace must hold exactly the calls the app
// counted itself, on every rank, with consistent communicator ids, real sources for wildcard
// receives, and every message sent received once. The app, rank count and arguments come from
// the environment (one ctest entry per app and rank count, see CMakeLists.txt).
#include <gtest/gtest.h>

#include <set>

#include "llamp/trace_event.hpp"
#include "tracer_test_util.hpp"

using namespace llamp;
using namespace llamp::tracer_test;
using trace::Call;
using trace::Event;

namespace {

struct AppRun {
  int np = 0;
  std::string name;
  std::string trace_dir;
  std::string counts_dir;
  RunResult result;
};

const AppRun& app_run() {
  static AppRun run = [] {
    AppRun r;
    const std::string app = env_or("LLAMP_TEST_APP");
    r.np = std::stoi(env_or("LLAMP_TEST_NP", "4"));
    r.name = fs::path(app).filename().string() + "-np" + std::to_string(r.np);
    const std::string work = scratch_dir(r.name);
    r.trace_dir = work + "/trace";
    r.counts_dir = work + "/counts";
    fs::create_directories(r.counts_dir);
    r.result = run_mpi(r.np, app, env_or("LLAMP_TEST_ARGS"),
                       {{"LLAMP_TRACE_DIR", r.trace_dir}, {"LLAMP_APP_COUNTS_DIR", r.counts_dir}}, work);
    return r;
  }();
  return run;
}

class TracedApp : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(env_or("LLAMP_TEST_APP").empty()) << "LLAMP_TEST_APP not set";
    const AppRun& r = app_run();
    ASSERT_EQ(r.result.exit_code, 0) << r.result.output;
    dir_ = trace::TraceDir::open(r.trace_dir);
    events_ = all_events(dir_);
  }
  trace::TraceDir dir_;
  std::vector<std::vector<Event>> events_;
};

bool is_receive_completion_call(Call c) {
  switch (trace::call_family(c)) {
    case trace::Family::recv:
    case trace::Family::sendrecv:
    case trace::Family::completion:
    case trace::Family::mrecv:
      return true;
    default:
      return false;
  }
}

}  // namespace

TEST_F(TracedApp, RunsCleanlyAndEveryRankFinishes) {
  const AppRun& r = app_run();
  EXPECT_EQ(r.result.output.find("llamptrace:"), std::string::npos) << r.result.output;
  EXPECT_EQ(dir_.meta.ranks, static_cast<uint32_t>(r.np));
  EXPECT_EQ(dir_.meta.hosts.size(), static_cast<size_t>(r.np));
  EXPECT_FALSE(dir_.meta.command.empty());
  EXPECT_NE(dir_.meta.mpi_library.find("MPICH"), std::string::npos);
  EXPECT_TRUE(dir_.truncated_ranks().empty());
}

TEST_F(TracedApp, PerCallCountsEqualTheAppsOwnCounts) {
  const AppRun& r = app_run();
  const std::vector<Counts> traced = trace_counts(dir_);
  for (int rank = 0; rank < r.np; ++rank) {
    const Counts app = read_app_counts(r.counts_dir, rank);
    ASSERT_FALSE(app.empty()) << "no counts-" << rank << ".json";
    for (unsigned i = 0; i < trace::kNumCalls; ++i) {
      const std::string name(trace::call_name(static_cast<Call>(i)));
      EXPECT_EQ(count_of(traced[rank], name), count_of(app, name)) << name << " on rank " << rank;
    }
  }
}

TEST_F(TracedApp, CommunicatorIdsAgreeAcrossRanksAndMembersAreRight) {
  // id -> the ranks that got it from a constructor, and the groups each of them saw.
  std::map<uint64_t, std::set<int32_t>> creators;
  std::map<uint64_t, std::set<std::vector<int32_t>>> groups;
  for (size_t rank = 0; rank < events_.size(); ++rank) {
    std::set<uint64_t> known = {trace::kCommWorld, trace::comm_self_id(static_cast<uint32_t>(rank))};
    for (const Event& e : events_[rank]) {
      EXPECT_TRUE(known.count(e.comm)) << trace::call_name(e.call) << " on rank " << rank << " uses comm " << e.comm
                                       << " that no constructor returned on this rank";
      if (e.new_comm == trace::kCommNull) continue;
      known.insert(e.new_comm);
      const auto r = static_cast<int32_t>(rank);
      EXPECT_EQ(std::count(e.members.begin(), e.members.end(), r), 1) << "rank " << rank << " not in its new comm";
      creators[e.new_comm].insert(r);
      groups[e.new_comm].insert(e.members);
      if (!e.remote_members.empty()) groups[e.new_comm].insert(e.remote_members);
    }
  }
  for (const auto& [id, ranks] : creators) {
    std::set<int32_t> expected;
    for (const auto& g : groups[id]) expected.insert(g.begin(), g.end());
    EXPECT_EQ(ranks, expected) << "comm " << id << ": the ranks that created it are not its members";
    EXPECT_LE(groups[id].size(), 2u) << "comm " << id << ": members disagree between ranks";
  }
}

TEST_F(TracedApp, ReceivesCarryRealSourcesAndEveryMessageIsReceivedOnce) {
  const int np = app_run().np;
  std::map<std::pair<int, int>, long> sent, received;  // (from, to) -> messages
  for (size_t rank = 0; rank < events_.size(); ++rank) {
    const int me = static_cast<int>(rank);
    std::map<uint64_t, int32_t> persistent_send_peer;
    std::set<uint64_t> created = {0};
    for (const Event& e : events_[rank]) {
      const auto family = trace::call_family(e.call);
      if (e.request) created.insert(e.request);
      if (family == trace::Family::send || family == trace::Family::isend || family == trace::Family::sendrecv) {
        if (e.peer >= 0) ++sent[{me, e.peer}];
      }
      if (family == trace::Family::send_init) persistent_send_peer[e.request] = e.peer;
      if (family == trace::Family::start)
        for (uint64_t id : e.requests)
          if (auto it = persistent_send_peer.find(id); it != persistent_send_peer.end() && it->second >= 0)
            ++sent[{me, it->second}];
      for (const auto& k : e.completions) {
        if (trace::call_family(e.call) == trace::Family::completion ||
            trace::call_family(e.call) == trace::Family::mrecv)
          EXPECT_TRUE(created.count(k.request))
              << "completion of request " << k.request << " never created, rank " << me;
        if (!is_receive_completion_call(e.call) || k.source == trace::kNoRank || k.cancelled) continue;
        if (k.source == trace::kProcNull) continue;
        EXPECT_GE(k.source, 0) << trace::call_name(e.call) << " on rank " << me;
        EXPECT_LT(k.source, np);
        EXPECT_GE(k.tag, 0) << trace::call_name(e.call) << " on rank " << me << ": actual tag missing";
        ++received[{k.source, me}];
      }
    }
  }
  EXPECT_EQ(sent, received);
}
