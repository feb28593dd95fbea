// End to end: every mini-app traced under MPICH at 2 and 4 ranks, then turned into a graph with
// no unmatched message, and the graph's message count equal to the application's point-to-point
// sends (from the trace, MPI_PROC_NULL excluded) plus what the chosen collective algorithms send
// (their closed formulas over each collective call's communicator size). The GOAL text of the
// graph parses back to the same number of messages.
#include <sys/wait.h>

#include <filesystem>
#include <map>
#include <set>

#include "llamp/graph_io.hpp"
#include "trace_fixture.hpp"

namespace llamp::schedgen::test {
namespace {

namespace fs = std::filesystem;

struct AppCase {
  std::string app, args;
  int np;
};
void PrintTo(const AppCase& c, std::ostream* os) { *os << c.app << " -n " << c.np << " " << c.args; }

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Size-independent algorithms so the expected counts are closed formulas.
const char* kAlgos[] = {"allreduce=ring",          "bcast=binomial",           "reduce=binomial",
                        "barrier=dissemination",   "allgather=ring",           "allgatherv=ring",
                        "alltoall=pairwise",       "alltoallv=pairwise",       "alltoallw=pairwise",
                        "gather=linear",           "gatherv=linear",           "scatter=linear",
                        "scatterv=linear",         "reduce_scatter=pairwise",  "reduce_scatter_block=pairwise",
                        "scan=recursive_doubling", "exscan=recursive_doubling"};

uint64_t lg(uint64_t p) {
  uint64_t k = 0;
  while ((uint64_t{1} << k) < p) ++k;
  return k;
}

uint64_t formula(trace::Call call, uint64_t p) {
  using C = trace::Call;
  switch (call) {
    case C::Barrier:
    case C::Ibarrier:
      return p * lg(p);
    case C::Bcast:
    case C::Ibcast:
    case C::Reduce:
    case C::Ireduce:
    case C::Gather:
    case C::Igather:
    case C::Gatherv:
    case C::Igatherv:
    case C::Scatter:
    case C::Iscatter:
    case C::Scatterv:
    case C::Iscatterv:
      return p - 1;
    case C::Allreduce:
    case C::Iallreduce:
      return 2 * p * (p - 1);
    case C::Scan:
    case C::Iscan:
    case C::Exscan:
    case C::Iexscan: {
      uint64_t n = 0;
      for (uint64_t m = 1; m < p; m <<= 1)
        for (uint64_t i = 0; i < p; ++i) n += (i ^ m) < p;
      return n;
    }
    default:
      return p * (p - 1);  // ring allgather(v), pairwise alltoall(v/w) and reduce_scatter(_block)
  }
}

struct Expected {
  uint64_t p2p = 0, collective = 0, sync_acks = 0;
};

// Reads the trace: point-to-point sends that reach a rank, and collective messages by formula
// (each collective call counted once, at its lowest member).
Expected expected_from_trace(trace::TraceDir& td) {
  Expected x;
  std::map<uint64_t, std::vector<int32_t>> comms;
  for (auto& rd : td.ranks) {
    rd.rewind();
    std::map<uint64_t, std::pair<int32_t, bool>> templates;  // persistent: peer, is_send
    std::set<uint64_t> sync_templates;                       // persistent synchronous sends
    while (const trace::Event* e = rd.next()) {
      if (e->flags & trace::kFlagFailed) continue;
      auto fam = trace::call_family(e->call);
      using F = trace::Family;
      if (fam == F::comm_create && e->new_comm != trace::kCommNull && !e->members.empty())
        comms[e->new_comm] = e->members;
      if ((fam == F::send || fam == F::isend || fam == F::sendrecv) && e->peer != trace::kProcNull) {
        ++x.p2p;
        if (e->call == trace::Call::Ssend || e->call == trace::Call::Issend) ++x.sync_acks;
      }
      if (fam == F::send_init || fam == F::recv_init) {
        templates[e->request] = {e->peer, fam == F::send_init};
        if (e->call == trace::Call::Ssend_init) sync_templates.insert(e->request);
      }
      if (fam == F::start)
        for (uint64_t id : e->requests) {
          auto it = templates.find(id);
          if (it != templates.end() && it->second.second && it->second.first != trace::kProcNull) {
            ++x.p2p;
            x.sync_acks += sync_templates.count(id);
          }
        }
    }
  }
  for (auto& rd : td.ranks) {
    rd.rewind();
    auto count = [&](const trace::Event& e, trace::Call call) {
      if (!e.destinations.empty()) {
        // Neighbor collectives: one message to every destination but MPI_PROC_NULL and itself.
        for (int32_t d : e.destinations) x.collective += d != trace::kProcNull && d != static_cast<int32_t>(rd.rank());
        return;
      }
      std::vector<int32_t> members;
      if (e.comm == trace::kCommWorld)
        for (uint32_t r = 0; r < td.meta.ranks; ++r) members.push_back(static_cast<int32_t>(r));
      else if (e.comm == trace::comm_self_id(rd.rank()))
        members = {static_cast<int32_t>(rd.rank())};
      else
        members = comms.at(e.comm);
      if (*std::min_element(members.begin(), members.end()) == static_cast<int32_t>(rd.rank()))
        x.collective += formula(call, members.size());
    };
    std::map<uint64_t, trace::Event> persistent;  // persistent collectives: request -> init
    while (const trace::Event* e = rd.next()) {
      auto fam = trace::call_family(e->call);
      if (fam == trace::Family::collective_init) persistent[e->request] = *e;
      if (fam == trace::Family::start)  // every start of a persistent collective is that collective once
        for (uint64_t id : e->requests)
          if (auto it = persistent.find(id); it != persistent.end())
            count(it->second, *trace::started_collective(it->second.call));
      if (fam == trace::Family::collective || fam == trace::Family::icollective) count(*e, e->call);
    }
    rd.rewind();
  }
  return x;
}

uint64_t calc_total(const graph::Graph& g) {
  uint64_t sum = 0;
  for (uint64_t v = 0; v < g.num_vertices(); ++v)
    if (g.kind[v] == graph::VertexKind::Calc) sum += g.value[v];
  return sum;
}

class SchedgenApps : public ::testing::TestWithParam<AppCase> {};

// The graph of the trace under another rule (Options), which must keep every message of `full`
// and close no cycle.
graph::Graph build_variant(const std::string& trace_dir, const Options& variant, Stats& st, const graph::Graph& full) {
  graph::Graph g;
  EXPECT_NO_THROW(g = build_graph(trace_dir, variant, &st)) << trace_dir;
  EXPECT_EQ(g.num_messages(), full.num_messages());
  EXPECT_NO_THROW(graph::topological_order(g));
  return g;
}

TEST_P(SchedgenApps, TracedRunGivesCompleteGraph) {
  const AppCase& c = GetParam();
  const std::string app = std::string(LLAMP_APPS_DIR) + "/app_" + c.app;
  if (!fs::exists(app)) GTEST_SKIP() << app << " not built";
  fs::path work = fs::path(LLAMP_TEST_SCRATCH) / (c.app + "_np" + std::to_string(c.np));
  fs::remove_all(work);
  fs::create_directories(work);
  const std::string trace_dir = (work / "trace").string();
  std::string cmd = "cd " + shell_quote(work.string()) + " && env LD_PRELOAD=" + shell_quote(LLAMP_TRACER_LIB) +
                    " LLAMP_TRACE_DIR=" + shell_quote(trace_dir) + " timeout 240 " + LLAMP_MPIEXEC + " -n " +
                    std::to_string(c.np) + " " + shell_quote(app) + " " + c.args + " > run.log 2>&1";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "traced run failed: " << cmd;

  Options opts;
  for (const char* a : kAlgos) opts.algorithms.set(a);
  Stats st;
  graph::Graph g;
  ASSERT_NO_THROW(g = build_graph(trace_dir, opts, &st));  // strict: any unmatched message throws

  trace::TraceDir td = trace::TraceDir::open(trace_dir);
  Expected x = expected_from_trace(td);
  EXPECT_EQ(st.p2p_messages, x.p2p);
  EXPECT_EQ(st.collective_messages, x.collective);
  // every synchronous send is acknowledged by a message of its own (docs/schedgen.md)
  EXPECT_EQ(st.sync_acks, x.sync_acks);
  EXPECT_EQ(g.num_messages(), x.p2p + x.collective + x.sync_acks);
  EXPECT_EQ(st.dropped_sends + st.dropped_recvs, 0u);

  const std::string goal = (work / "app.goal").string();
  {
    graph::GoalTextWriter w(goal);
    generate(trace_dir, w, opts);
  }
  EXPECT_EQ(graph::read_goal(goal).num_messages(), g.num_messages());

  // The rendezvous progress rule on a real trace (docs/schedgen.md, "Progress of rendezvous
  // receives"): with S as low as 256 B most nonblocking receives wait for their rank's next
  // progressing call, and the graph keeps every message and no cycle.
  Options rendezvous = opts;
  rendezvous.rendezvous_above_bytes = 256;
  Stats rst;
  build_variant(trace_dir, rendezvous, rst, g);
  if (c.app == "halo3d") EXPECT_GT(rst.rendezvous_gated_recvs, 0u);  // its 512-byte faces

  // The eager progress rule on a real trace, as the campaign builds it (docs/schedgen.md, "Progress
  // of eager receives"): point-to-point and collective receives gated and chained, every message
  // kept and no cycle; the apps with nonblocking or persistent collectives over several ranks gate
  // their receives (app_subcomm's at 2 ranks are over one-rank communicators).
  Options eager = opts;
  eager.eager_progress = true;
  eager.rendezvous_above_bytes = 8192;
  Stats est;
  build_variant(trace_dir, eager, est, g);
  if (c.app == "nhalo" || c.app == "pcoll" || c.app == "gradavg" || (c.app == "subcomm" && c.np == 4))
    EXPECT_GT(est.eager_gated_recvs, 0u);

  // Time inside completion calls on a real trace (docs/schedgen.md): the graph keeps every message
  // and no cycle, the computation it adds is what the statistics count, and every app but hello
  // has blocking completion calls it times (which ones is fixed by the app, not by the run's
  // timing: receives below S, a collective's first round).
  Options timed = opts;
  timed.completion_time = true;
  Stats tst;
  graph::Graph tg = build_variant(trace_dir, timed, tst, g);
  EXPECT_EQ(calc_total(tg), calc_total(g) + tst.completion_ns);
  if (c.app != "hello") EXPECT_GT(tst.completion_calls, 0u);

  // The floor under completion calls on a real trace (docs/schedgen.md, "A floor under completion
  // calls"), with S as low as 256 B so that halo3d's 512-byte faces are rendezvous messages whose
  // sends wait for the receiver's answer: every message kept and no cycle, the floors' computation
  // is what the statistics count, and the apps with point-to-point waits get floors.
  Options floored = opts;
  floored.completion_floor = true;
  floored.rendezvous_above_bytes = 256;
  Stats fst;
  graph::Graph fg = build_variant(trace_dir, floored, fst, g);
  EXPECT_EQ(calc_total(fg), calc_total(g) + fst.completion_ns);
  if (c.app == "halo2d" || c.app == "halo3d" || c.app == "ring" || c.app == "pingpong")
    EXPECT_GT(fst.completion_calls, 0u);
}

std::vector<AppCase> app_cases() {
  const std::vector<std::pair<std::string, std::string>> apps = {
      {"hello", ""},          {"pingpong", "10 4096"},   {"halo2d", "20 32 4 5"},
      {"cg", "10 1000 4"},    {"ring", "3 64 2"},        {"master_worker", "30 100"},
      {"subcomm", "2 8"},     {"persistent", "10 64 4"}, {"completions", "3 16 100"},
      {"threads", "10 16 2"}, {"fhalo", "20 100 2 5"},   {"nhalo", "20 32 4 5"},
      {"pcoll", "20 32 4 5"}, {"gradavg", "6 512 3 4"},  {"halo3d", "20 8 2 5"}};
  std::vector<AppCase> out;
  for (const auto& [app, args] : apps)
    for (int np : {2, 4}) out.push_back({app, args, np});
  return out;
}

INSTANTIATE_TEST_SUITE_P(MiniApps, SchedgenApps, ::testing::ValuesIn(app_cases()),
                         [](const auto& info) { return info.param.app + "_np" + std::to_string(info.param.np); });

}  // namespace
}  // namespace llamp::schedgen::test
