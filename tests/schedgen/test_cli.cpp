// `llamp schedgen` as a user runs it: exit status, output only on success, error text on stderr.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "llamp/graph_io.hpp"
#include "llamp/trace_dir.hpp"
#include "trace_fixture.hpp"

namespace llamp::schedgen::test {
namespace {

struct CliRun {
  int status;
  std::string output;
};

CliRun llamp(const std::string& args, const std::string& dir) {
  std::string log = dir + "/cli.log";
  int s = std::system((std::string(LLAMP_BIN) + " " + args + " > " + log + " 2>&1").c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  return {WIFEXITED(s) ? WEXITSTATUS(s) : -1, ss.str()};
}

TEST(SchedgenCli, WritesGoalAndBinaryWithAlgorithmChoice) {
  TraceSpec t(4);
  for (uint32_t r = 0; r < 4; ++r) t[r].compute(10).coll(Call::Allreduce, 1 << 20);
  t[0].send(1, 0, 8);
  t[1].recv(0, 0, 8, 0, 0);
  std::string dir = t.write("cli_ok");
  CliRun a = llamp("schedgen " + dir + " -o " + dir + "/g.goal --algo allreduce=ring", dir);
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("1 point-to-point, 24 inside 1 collective"), std::string::npos) << a.output;
  EXPECT_EQ(graph::read_goal(dir + "/g.goal").num_messages(), 25u);  // ring: 2p(p-1) = 24
  CliRun b = llamp("schedgen " + dir + " -o " + dir + "/g.lgr", dir);
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_EQ(graph::load_binary(dir + "/g.lgr").num_messages(), 1u + 16u);  // Rabenseifner p=4: 2·4·2
}

TEST(SchedgenCli, FailsWithoutLeavingAGraph) {
  TraceSpec t(2);
  t[0].send(1, 0, 8);
  std::string dir = t.write("cli_bad");
  CliRun a = llamp("schedgen " + dir + " -o " + dir + "/g.goal", dir);
  EXPECT_NE(a.status, 0);
  EXPECT_NE(a.output.find("rank 0 call 1: send to rank 1"), std::string::npos) << a.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/g.goal"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/g.goal.partial"));
  CliRun b = llamp("schedgen " + dir + " -o " + dir + "/g.goal --allow-unmatched", dir);
  EXPECT_EQ(b.status, 0) << b.output;
  EXPECT_NE(b.output.find("dropped 1 send(s) and 0 receive(s)"), std::string::npos) << b.output;
  CliRun c = llamp("schedgen " + dir + " -o " + dir + "/g.txt", dir);
  EXPECT_NE(c.status, 0);
  EXPECT_NE(c.output.find(".goal"), std::string::npos) << c.output;
  CliRun d = llamp("schedgen " + dir + " -o " + dir + "/g.goal --algo bcast=ring", dir);
  EXPECT_NE(d.status, 0);
  EXPECT_NE(d.output.find("pipelined_ring"), std::string::npos) << d.output;  // lists the valid names
}

// --first-use takes one band per option, BYTES:MESSAGES:SEND:RECV in ascending order; a wrong one
// is an error that names it.
TEST(SchedgenCli, FirstUseBandsAreParsedAndChecked) {
  TraceSpec t(2);
  t[0].send(1, 0, 512);
  t[1].recv(0, 0, 512, 0, 0);
  std::string dir = t.write("cli_first_use");
  CliRun a =
      llamp("schedgen " + dir + " -o " + dir + "/g.goal --first-use 64B:3:1us:2us --first-use=4096B:64:10us:5us", dir);
  ASSERT_EQ(a.status, 0) << a.output;
  EXPECT_NE(a.output.find("the transport's first use: 1 send(s) and 1 receive(s) charged 0.018 ms"), std::string::npos)
      << a.output;
  CliRun b =
      llamp("schedgen " + dir + " -o " + dir + "/g.goal --first-use 4096B:64:1us:1us --first-use 64B:3:1us:1us", dir);
  EXPECT_NE(b.status, 0);
  EXPECT_NE(b.output.find("--first-use 64B:3:1us:1us: bands must be given in ascending order"), std::string::npos)
      << b.output;
  CliRun c = llamp("schedgen " + dir + " -o " + dir + "/g.goal --first-use 64B:x:1us:1us", dir);
  EXPECT_NE(c.status, 0);
  EXPECT_NE(c.output.find("--first-use 64B:x:1us:1us: MESSAGES 'x' is not a count"), std::string::npos) << c.output;
  CliRun d = llamp("schedgen " + dir + " -o " + dir + "/g.goal --first-use 64B:3:1us", dir);
  EXPECT_NE(d.status, 0);
  EXPECT_NE(d.output.find("expected BYTES:MESSAGES:SEND:RECV"), std::string::npos) << d.output;
}

// --eager-progress reports the receives it gated and chained; --no-eager-progress, given later
// (as a campaign's --schedgen-arg is), turns it off again.
TEST(SchedgenCli, EagerProgressIsReportedAndCanBeTurnedOff) {
  TraceSpec t(2);
  for (int32_t r = 0; r < 2; ++r) {
    t[r].compute(10).irecv(1 - r, 0, 512, 7);
    t[r].irecv(1 - r, 1, 512, 9);
    t[r].isend(1 - r, 0, 512, 8);
    t[r].isend(1 - r, 1, 512, 10);
    t[r].compute(500).wait(Call::Waitall, {7, 9, 8, 10}, {{7, 1 - r, 0, 512}, {9, 1 - r, 1, 512}, {8}, {10}});
  }
  std::string dir = t.write("cli_eager_progress");
  const std::string line = "4 nonblocking eager receive(s) copied out at the next progressing MPI call, 2 after";
  CliRun on = llamp("schedgen " + dir + " -o " + dir + "/g.goal --eager-progress", dir);
  ASSERT_EQ(on.status, 0) << on.output;
  EXPECT_NE(on.output.find(line), std::string::npos) << on.output;
  CliRun off = llamp("schedgen " + dir + " -o " + dir + "/g.goal --eager-progress --no-eager-progress", dir);
  ASSERT_EQ(off.status, 0) << off.output;
  EXPECT_EQ(off.output.find("eager receive(s)"), std::string::npos) << off.output;
}

// --cold-handshake EXTRA:AFTER is reported in the summary, and a malformed value is an error that
// names the option and the expected form.
TEST(SchedgenCli, ColdHandshakeIsReportedAndChecked) {
  TraceSpec t(2);
  for (int32_t r = 0; r < 2; ++r) {
    t[r].compute(10).irecv(1 - r, 0, 65536, 7);
    t[r].isend(1 - r, 0, 65536, 8);
    t[r].compute(500).wait(Call::Waitall, {7, 8}, {{7, 1 - r, 0, 65536}, {8}});
  }
  std::string dir = t.write("cli_cold_handshake");
  const std::string base = "schedgen " + dir + " -o " + dir + "/g.goal --S 8KiB ";
  CliRun on = llamp(base + "--cold-handshake 3us:400ns", dir);
  ASSERT_EQ(on.status, 0) << on.output;
  EXPECT_NE(on.output.find("2 call(s) started rendezvous handshakes after at least 400 ns of computation: their 2 "
                           "receive(s) start 3000 ns later"),
            std::string::npos)
      << on.output;
  CliRun warm = llamp(base + "--cold-handshake 3us:1us", dir);
  ASSERT_EQ(warm.status, 0) << warm.output;
  EXPECT_EQ(warm.output.find("handshakes after"), std::string::npos) << warm.output;
  for (const char* bad : {"3us", "3us:1us:2us", "x:1us"}) {
    CliRun r = llamp(base + "--cold-handshake " + bad, dir);
    EXPECT_NE(r.status, 0) << bad;
    EXPECT_NE(r.output.find(std::string("--cold-handshake ") + bad), std::string::npos) << r.output;
  }
}

// --completion-floor as a user runs it, through the analyzer: rank 1 entered its MPI_Waitall of an
// 4 KiB rendezvous exchange last and spent 60 ns inside, which the model (o = 0) does not charge.
// At L = 0 the graph ends 60 ns later with the floor; at L = 1 us the handshake's latencies take
// longer than the floor and both graphs agree. It cannot be combined with --completion-time.
TEST(SchedgenCli, CompletionFloorRaisesTheRuntimeOnlyWhereTheTracedCallWasLonger) {
  const std::string dir = rendezvous_exchange(60).write("cli_completion_floor");
  auto runtime = [&](const std::string& graph, int latency_ns) {
    const std::string params = dir + "/params-" + std::to_string(latency_ns) + ".json";
    std::ofstream(params) << R"({"format":"llamp-loggp","version":1,"L_ns":)" << latency_ns
                          << R"(,"o_ns":0,"g_ns":0,"G_ns_per_byte":0,"S_bytes":1000})";
    CliRun a = llamp("analyze " + graph + " --params " + params + " --json " + dir + "/a.json", dir);
    EXPECT_EQ(a.status, 0) << a.output;
    std::ifstream in(dir + "/a.json");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str(), key = "\"runtime_ns\":";
    const size_t at = text.find(key);
    EXPECT_NE(at, std::string::npos) << text;
    return at == std::string::npos ? -1.0 : std::stod(text.substr(at + key.size()));
  };
  const std::string base = "schedgen " + dir + " --S 1000B -o " + dir;
  CliRun plain = llamp(base + "/plain.goal", dir);
  ASSERT_EQ(plain.status, 0) << plain.output;
  CliRun floor = llamp(base + "/floor.goal --completion-floor", dir);
  ASSERT_EQ(floor.status, 0) << floor.output;
  EXPECT_NE(floor.output.find("2 blocking completion call(s) floored: 0.000 ms"), std::string::npos) << floor.output;
  EXPECT_DOUBLE_EQ(runtime(dir + "/floor.goal", 0), runtime(dir + "/plain.goal", 0) + 60.0);
  EXPECT_DOUBLE_EQ(runtime(dir + "/floor.goal", 1000), runtime(dir + "/plain.goal", 1000));
  CliRun both = llamp(base + "/both.goal --completion-floor --completion-time", dir);
  EXPECT_NE(both.status, 0);
  EXPECT_NE(both.output.find("excludes"), std::string::npos) << both.output;
}

// A rank that made calls the tracer only counts (untraced-NNNNN.json, written by the tracer at
// MPI_Finalize; tests/tracer covers that side) makes schedgen fail, naming the rank and calls,
// unless --allow-untraced-calls, which warns instead.
TEST(SchedgenCli, UntracedCallsAreAnErrorUnlessAllowed) {
  TraceSpec t(2);
  t[0].send(1, 0, 8);
  t[1].recv(0, 0, 8, 0, 0);
  std::string dir = t.write("cli_untraced");
  trace::write_untraced_calls(dir, 1, {{"MPI_Put", "one-sided communication", 3}});
  CliRun a = llamp("schedgen " + dir + " -o " + dir + "/g.goal", dir);
  EXPECT_NE(a.status, 0);
  EXPECT_NE(a.output.find("rank 1: MPI_Put x3 (one-sided communication)"), std::string::npos) << a.output;
  EXPECT_NE(a.output.find("--allow-untraced-calls"), std::string::npos) << a.output;
  EXPECT_FALSE(std::filesystem::exists(dir + "/g.goal"));
  CliRun b = llamp("schedgen " + dir + " -o " + dir + "/g.goal --allow-untraced-calls", dir);
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_NE(b.output.find("warning"), std::string::npos) << b.output;
  EXPECT_EQ(graph::read_goal(dir + "/g.goal").num_messages(), 1u);
}

}  // namespace
}  // namespace llamp::schedgen::test
