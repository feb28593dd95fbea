// Machine noise: the recording format, the timeline the engine replays, the noisy pass on
// hand-computed graphs, the sampled prediction and `llamp analyze --noise` end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "../scratch_dir.hpp"
#include "llamp/analyzer/noise.hpp"
#include "llamp/error.hpp"
#include "llamp/graph_io.hpp"

using namespace llamp;
using namespace llamp::analyzer;

namespace {

NoiseRecording recording(uint64_t duration, std::vector<std::vector<std::pair<uint64_t, uint64_t>>> per_rank) {
  NoiseRecording r;
  r.duration_ns = duration;
  r.threshold_ns = 1000;
  for (size_t i = 0; i < per_rank.size(); ++i) {
    RankNoise n;
    n.rank = static_cast<uint32_t>(i);
    n.detours = per_rank[i];
    r.ranks.push_back(n);
  }
  return r;
}

// A resume cost of w / 10 up to a spin of 10 µs (after 100 ns hot, 1100 ns after 10 µs).
ResumeCost tenth() {
  ResumeCost c;
  c.reps = 10;
  c.after_ns = {{0, 100}, {10000, 1100}};
  return c;
}

NoiseRecording with_resume(NoiseRecording r, const ResumeCost& c) {
  for (RankNoise& n : r.ranks) n.resume = c;
  return r;
}

// The reader's error for a recording's text, "(no error)" if it reads.
std::string parse_error_of(const std::string& text) {
  try {
    parse_noise_recording(text, "rec.json");
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return std::string("(no error)");
}

LogGP params(double L, double o, uint64_t S = UINT64_MAX) {
  LogGP p;
  p.L_ns = L;
  p.o_send_ns = p.o_recv_ns = o;
  p.S_bytes = S;
  return p;
}

// Rank 0 sends to rank 1 and waits for the answer; rank 1 computes `work` first.
graph::Graph round_trip(uint64_t work) {
  return graph::parse_goal(fmt::format(R"(num_ranks 2
rank 0 {{ s0: send 8b to 1  r0: recv 8b from 1  r0 requires s0 }}
rank 1 {{ w: calc {}  r1: recv 8b from 0  s1: send 8b to 0  r1 requires w  s1 requires r1 }}
)",
                                       work),
                           "round_trip");
}

std::string write_temp(const std::string& name, const std::string& text) {
  auto path = llamp::test::scratch_file(name);
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST(NoiseRecording, RoundTripsThroughJson) {
  NoiseRecording r = recording(5000, {{{100, 50}, {400, 10}}, {}});
  r.ranks[0].host = "n1";
  r.ranks[0].cpu = 3;
  r.ranks[1].dropped = 7;
  const NoiseRecording back = parse_noise_recording(to_json(r).dump(), "rec.json");
  EXPECT_EQ(back.duration_ns, 5000u);
  ASSERT_EQ(back.ranks.size(), 2u);
  EXPECT_EQ(back.ranks[0].detours, r.ranks[0].detours);
  EXPECT_EQ(back.ranks[0].host, "n1");
  EXPECT_EQ(back.ranks[0].cpu, 3);
  EXPECT_EQ(back.ranks[1].dropped, 7u);
  EXPECT_DOUBLE_EQ(noise_fraction(back.ranks[0], 5000), 60.0 / 5000);
  EXPECT_DOUBLE_EQ(noise_mean_residual_ns(back.ranks[0], 5000), (50.0 * 50 + 10 * 10) / 10000);
}

TEST(NoiseRecording, ThroughputSlicesRoundTripAndAreSummarised) {
  // 20 slices: 14 fast (100-113 ns), 6 slow (175-180 ns, at least 1.3x the fast speed).
  std::vector<uint64_t> slices;
  for (uint64_t i = 0; i < 14; ++i) slices.push_back(113 - i);
  for (uint64_t i = 0; i < 6; ++i) slices.push_back(175 + i);
  const ThroughputSlices t = summarize_slices(slices);
  EXPECT_EQ(t.slices, 20u);
  EXPECT_EQ(t.base_ns, 101u);    // the 10th percentile: the 2nd fastest of 20
  EXPECT_EQ(t.median_ns, 109u);  // the lower median
  uint64_t sum = 0;
  for (uint64_t s : slices) sum += s;
  EXPECT_EQ(t.mean_ns, sum / 20);
  EXPECT_DOUBLE_EQ(t.slow_fraction, 6.0 / 20);  // 131.3 ns and up
  EXPECT_THROW(summarize_slices({}), Error);

  NoiseRecording r = recording(5000, {{}, {}});
  r.throughput_duration_ns = 1000000;
  r.ranks[1].throughput = t;
  const NoiseRecording back = parse_noise_recording(to_json(r).dump(), "rec.json");
  EXPECT_EQ(back.throughput_duration_ns, 1000000u);
  EXPECT_FALSE(back.ranks[0].throughput.has_value());
  ASSERT_TRUE(back.ranks[1].throughput.has_value());
  EXPECT_EQ(back.ranks[1].throughput->median_ns, 109u);
  EXPECT_DOUBLE_EQ(back.ranks[1].throughput->slow_fraction, 0.3);
  EXPECT_FALSE(to_json(recording(5000, {{}})).contains("throughput_duration_ns"));  // not measured: not written
}

TEST(NoiseRecording, ErrorsNameTheFileRankAndDetour) {
  const auto error_of = parse_error_of;
  const std::string head = R"({"format":"llamp-noise","version":1,"duration_ns":1000,"threshold_ns":10,"ranks":[)";
  EXPECT_EQ(error_of(head + R"({"rank":0,"detours":[[100,50],[120,5]]}]})"),
            "rec.json: ranks[0]: detours[1] starts at 120 ns, before the previous one ends (150 ns)");
  EXPECT_EQ(error_of(head + R"({"rank":0,"detours":[[1000,5]]}]})"),
            "rec.json: ranks[0]: detours[0] starts at 1000 ns, not inside the recording's 1000 ns");
  EXPECT_EQ(error_of(head + R"({"rank":0,"detours":[]},{"rank":2,"detours":[]}]})"),
            "rec.json: ranks[1]: \"rank\" is 2, expected 1 (ranks in order)");
  EXPECT_EQ(error_of(head + R"({"rank":0,"detours":[[1,-2]]}]})"),
            "rec.json: ranks[0]: detours[0]: expected [start_ns, length_ns] (whole numbers), got [1,-2]");
  EXPECT_NE(error_of(R"({"format":"llamp-loggp","version":1})").find("is this an llamp-noise recording?"),
            std::string::npos);
  EXPECT_NE(error_of(head).find("rec.json: offset"), std::string::npos);
  const std::string slices = R"({"rank":0,"detours":[],"throughput":{"slices":5,"base_ns":100,)";
  EXPECT_EQ(error_of(head + slices + R"("median_ns":90,"mean_ns":120,"slow_fraction":0.2}}]})"),
            "rec.json: ranks[0]: throughput: \"median_ns\" (90) is below \"base_ns\" (100), its 10th percentile");
  EXPECT_EQ(error_of(head + slices + R"("median_ns":100,"mean_ns":120,"slow_fraction":1.5}}]})"),
            "rec.json: ranks[0]: throughput: \"slow_fraction\" must lie in [0, 1], got 1.5");
  EXPECT_EQ(error_of(head + slices + R"("median_ns":100,"slow_fraction":0.2}}]})"),
            "rec.json: ranks[0]: throughput: required key \"mean_ns\" is missing");
}

// The resume cost: the block's mean time after each spin, its extra time over the hot block
// interpolated between the spins and held beyond the last, never negative.
TEST(NoiseRecording, ResumeCostRoundTripsAndInterpolates) {
  ResumeCost c;
  c.reps = 200;
  c.after_ns = {{0, 800}, {100, 900}, {1000, 2800}, {3000, 700}};
  EXPECT_DOUBLE_EQ(c.extra_ns(-5), 0);
  EXPECT_DOUBLE_EQ(c.extra_ns(0), 0);
  EXPECT_DOUBLE_EQ(c.extra_ns(50), 50);
  EXPECT_DOUBLE_EQ(c.extra_ns(100), 100);
  EXPECT_DOUBLE_EQ(c.extra_ns(550), 1050);
  EXPECT_DOUBLE_EQ(c.extra_ns(1000), 2000);
  EXPECT_DOUBLE_EQ(c.extra_ns(3000), 0);  // a mean below the hot block's: no extra time
  EXPECT_DOUBLE_EQ(c.extra_ns(1e9), 0);   // held beyond the last spin
  NoiseRecording r = recording(5000, {{}, {}});
  r.ranks[1].resume = c;
  const NoiseRecording back = parse_noise_recording(to_json(r).dump(), "rec.json");
  EXPECT_FALSE(back.ranks[0].resume.has_value());
  ASSERT_TRUE(back.ranks[1].resume.has_value());
  EXPECT_EQ(back.ranks[1].resume->reps, 200u);
  EXPECT_EQ(back.ranks[1].resume->after_ns, c.after_ns);
}

TEST(NoiseRecording, ResumeCostErrorsNameTheRankAndPoint) {
  auto error_of = [](const std::string& resume) {
    return parse_error_of(R"({"format":"llamp-noise","version":1,"duration_ns":1000,"threshold_ns":10,)"
                          R"("ranks":[{"rank":0,"detours":[],"resume":)" +
                          resume + "}]}");
  };
  EXPECT_EQ(error_of(R"({"reps":5,"after_ns":[[0,10],[100,20]]})"), "(no error)");
  EXPECT_EQ(error_of(R"({"reps":5,"after_ns":[[10,10],[100,20]]})"),
            "rec.json: ranks[0]: resume: after_ns[0] is after a spin of 10 ns; the first must be the hot block (0)");
  EXPECT_EQ(error_of(R"({"reps":5,"after_ns":[[0,10],[100,20],[100,30]]})"),
            "rec.json: ranks[0]: resume: after_ns[2]: spin 100 ns is not above the previous one (100 ns)");
  EXPECT_EQ(error_of(R"({"reps":0,"after_ns":[[0,10]]})"), "rec.json: ranks[0]: resume: \"reps\" must be positive");
  EXPECT_EQ(error_of(R"({"reps":5,"after_ns":[[0,-1]]})"),
            "rec.json: ranks[0]: resume: after_ns[0]: expected [spin_ns, mean_ns] (whole numbers), got [0,-1]");
  EXPECT_EQ(error_of(R"({"reps":5})"),
            "rec.json: ranks[0]: resume: \"after_ns\" must be a non-empty array of [spin_ns, mean_ns]");
}

// The work timed after the block: its slowdown after a spin is its mean over its hot mean, less
// one, interpolated alike and never negative; it round-trips, and its errors name the point.
TEST(NoiseRecording, ResumeFollowingWorkSlowdownRoundTripsAndInterpolates) {
  ResumeCost c;
  c.reps = 200;
  c.after_ns = {{0, 800}, {100, 900}};
  c.following_ns = {{0, 2000}, {100, 3000}, {1000, 1000}};
  EXPECT_DOUBLE_EQ(c.following_hot_ns(), 2000);
  EXPECT_DOUBLE_EQ(c.following_slowdown(0), 0);
  EXPECT_DOUBLE_EQ(c.following_slowdown(50), 0.25);
  EXPECT_DOUBLE_EQ(c.following_slowdown(100), 0.5);
  EXPECT_DOUBLE_EQ(c.following_slowdown(1000), 0);  // faster than hot: no slowdown
  ResumeCost without;
  without.after_ns = {{0, 800}};
  EXPECT_DOUBLE_EQ(without.following_slowdown(100), 0);
  NoiseRecording r = recording(5000, {{}});
  r.ranks[0].resume = c;
  const NoiseRecording back = parse_noise_recording(to_json(r).dump(), "rec.json");
  ASSERT_TRUE(back.ranks[0].resume.has_value());
  EXPECT_EQ(back.ranks[0].resume->following_ns, c.following_ns);
  r.ranks[0].resume->following_ns.clear();
  EXPECT_FALSE(to_json(r)["ranks"][0]["resume"].contains("following_ns"));

  auto error_of = [](const std::string& following) {
    return parse_error_of(R"({"format":"llamp-noise","version":1,"duration_ns":1000,"threshold_ns":10,)"
                          R"("ranks":[{"rank":0,"detours":[],"resume":{"reps":5,"after_ns":[[0,10]],)"
                          R"("following_ns":)" +
                          following + "}}]}");
  };
  EXPECT_EQ(error_of("[[0,10],[100,20]]"), "(no error)");
  EXPECT_EQ(error_of("[[5,10]]"),
            "rec.json: ranks[0]: resume: following_ns[0] is after a spin of 5 ns; the first "
            "must be the hot block (0)");
  EXPECT_EQ(error_of("[[0,10],[0,20]]"),
            "rec.json: ranks[0]: resume: following_ns[1]: spin 0 ns is not above the previous one (0 ns)");
  EXPECT_EQ(error_of("[[0,0]]"), "rec.json: ranks[0]: resume: following_ns[0]: the hot work after the block took 0 ns");
  EXPECT_EQ(error_of("[]"),
            "rec.json: ranks[0]: resume: \"following_ns\" must be a non-empty array of [spin_ns, mean_ns]");
}

// A lane's resume cost is the mean over the recordings that timed one, at every spin any used.
TEST(NoiseTimeline, ResumeCostIsTheMeanOverTheRecordingsThatHaveOne) {
  ResumeCost a, b;
  a.reps = b.reps = 10;
  a.after_ns = {{0, 100}, {1000, 300}};             // extra 200 at 1 µs
  b.after_ns = {{0, 50}, {500, 150}, {1000, 450}};  // extra 100 at 0.5 µs, 400 at 1 µs
  const NoiseTimeline t(
      {with_resume(recording(1000, {{}}), a), recording(1000, {{}}), with_resume(recording(1000, {{}}), b)}, 1);
  ASSERT_TRUE(t.has_resume());
  const std::vector<std::pair<double, double>> expected = {{0, 0}, {500, 100}, {1000, 300}};
  EXPECT_EQ(t.resume_points(0), expected);  // at 500: (100 + 100) / 2; at 1000: (200 + 400) / 2
  EXPECT_DOUBLE_EQ(t.resume_extra(0, 250), 50);
  EXPECT_DOUBLE_EQ(t.resume_extra(0, 750), 200);
  EXPECT_DOUBLE_EQ(t.resume_extra(0, 5000), 300);
  EXPECT_DOUBLE_EQ(t.resume_extra(0, 0), 0);
  EXPECT_FALSE(NoiseTimeline({recording(1000, {{}})}, 1).has_resume());
}

TEST(NoiseTimeline, NoticeMovesToTheEndOfTheCoveringDetour) {
  const NoiseTimeline t({recording(1000, {{{100, 50}}, {{700, 100}}})}, 2);
  EXPECT_EQ(t.lanes(), 2u);
  // Waiting since 0: every detour counts.
  EXPECT_DOUBLE_EQ(t.notice(0, 99, 0, 0), 99);
  EXPECT_DOUBLE_EQ(t.notice(0, 100, 0, 0), 150);
  EXPECT_DOUBLE_EQ(t.notice(0, 149, 0, 0), 150);
  EXPECT_DOUBLE_EQ(t.notice(0, 150, 0, 0), 150);
  EXPECT_DOUBLE_EQ(t.notice(1, 120, 0, 0), 120);  // rank 1's own detours
  EXPECT_DOUBLE_EQ(t.notice(1, 750, 0, 0), 800);
  EXPECT_DOUBLE_EQ(t.notice(0, 20, 0, 100), 50);    // entered at phase 100: t = 20 is 120 in the recording
  EXPECT_DOUBLE_EQ(t.notice(0, 2120, 0, 0), 2150);  // the recording repeats every cycle
  EXPECT_NEAR(t.fraction(0), 0.05, 1e-12);
}

// A detour that began before the rank started to wait found it computing (that stretched the
// computation, whose traced times hold detours already); only one that began during the wait
// delays the moment the rank notices.
TEST(NoiseTimeline, NoticeCountsOnlyADetourThatBeganDuringTheWait) {
  const NoiseTimeline t({recording(1000, {{{100, 50}}})}, 1);
  EXPECT_DOUBLE_EQ(t.notice(0, 120, 90, 0), 150);      // began at 100, waiting since 90
  EXPECT_DOUBLE_EQ(t.notice(0, 120, 100, 0), 150);     // began as the wait did
  EXPECT_DOUBLE_EQ(t.notice(0, 120, 110, 0), 120);     // began before the wait
  EXPECT_DOUBLE_EQ(t.notice(0, 2120, 2090, 0), 2150);  // the same a cycle later
  EXPECT_DOUBLE_EQ(t.notice(0, 2120, 2110, 0), 2120);
}

TEST(NoiseTimeline, RecordingsLieEndToEndAndRanksWrapAround) {
  // One rank recorded, two in the graph: both use it. A second recording follows the first.
  const NoiseTimeline t({recording(1000, {{{100, 50}}}), recording(500, {{{10, 10}}})}, 2);
  EXPECT_EQ(t.lanes(), 1u);
  EXPECT_DOUBLE_EQ(t.cycle_ns(), 1500);
  EXPECT_DOUBLE_EQ(t.notice(1, 120, 0, 0), 150);
  EXPECT_DOUBLE_EQ(t.notice(0, 1015, 0, 0), 1020);
  // Three ranks recorded, two in the graph: the third lane is not kept.
  EXPECT_EQ(NoiseTimeline({recording(1000, {{}, {}, {}})}, 2).lanes(), 2u);
  EXPECT_THROW(NoiseTimeline({}, 2), Error);
}

// L = 1000, o = 100: rank 1 sees the message at 1100, answers at 1200..1300, rank 0 sees the
// answer at 2300 and T = 2400. A detour of rank 1 over 1100 and one of rank 0 over the answer's
// arrival each move the rest of the run by what is left of them.
TEST(NoisyEngine, WaitsEndAfterTheDetourCoveringTheirEnd) {
  graph::Graph g = round_trip(0);
  Engine e(g, homogeneous_model(params(1000, 100)));
  EXPECT_DOUBLE_EQ(e.at_L(1000).T, 2400);
  const NoiseTimeline quiet({recording(100000, {{}, {}})}, 2);
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&quiet, 0}), 2400);
  // rank 1 away over [1000, 1500): sees the message at 1500, answers 1600..1700, arrival 2700
  const NoiseTimeline one({recording(100000, {{}, {{1000, 500}}})}, 2);
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&one, 0}), 2800);
  // and rank 0 away over [2600, 2800): sees the answer at 2800
  const NoiseTimeline both({recording(100000, {{{2600, 200}}, {{1000, 500}}})}, 2);
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&both, 0}), 2900);
  // The same detours entered at another phase miss both waits.
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&both, 5000}), 2400);
  // Rank 0 waits for the answer from 100 (its send's o) to 2300. A detour from 50 to 2400 began
  // while it was still sending: not a delay of the wait; one from 150 to 2400 is: T = 2500.
  const NoiseTimeline before({recording(100000, {{{50, 2350}}, {}})}, 2);
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&before, 0}), 2400);
  const NoiseTimeline during({recording(100000, {{{150, 2250}}, {}})}, 2);
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&during, 0}), 2500);
}

// A rank that waited w comes back slower by the resume cost after a spin of w (here w / 10),
// less that of the same wait at the traced latency, which the traced computation holds already.
// L = 1000, o = 100: rank 1 waits 1100 for the message (posted at 0), rank 0 2200 for the answer
// (from the end of its send at 100), T = 2400 without the cost.
TEST(NoisyEngine, AWaitIsFollowedByTheResumeCostOfItsLength) {
  graph::Graph g = round_trip(0);
  Engine e(g, homogeneous_model(params(1000, 100)));
  const NoiseTimeline t({with_resume(recording(100000, {{}, {}}), tenth())}, 2);
  // All of it: rank 1 resumes at 1100 + 110, answers 1310..1410, the answer arrives at 2410; rank
  // 0 waited 2310 and resumes at 2410 + 231, T = 2641 + 100.
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&t, 0}), 2741);
  // What a longer wait adds: nothing at the traced latency; at L = 2000 rank 1 waits 2100 (+100
  // over 1100), answers 2300..2400, the answer arrives at 4400, rank 0 waited 4300 (+210).
  NoiseOptions o;
  o.samples = 1;
  const auto points = predict_with_noise(e, t, {1000, 2000}, o, [&](double x) { return e.at_L(x).T; });
  ASSERT_EQ(points.size(), 2u);
  EXPECT_DOUBLE_EQ(points[0].T_model, 2400);
  EXPECT_DOUBLE_EQ(points[0].T_median, 2400);
  EXPECT_DOUBLE_EQ(points[1].T_model, 4400);
  EXPECT_DOUBLE_EQ(points[1].T_median, 4400 + 100 + 210);
  // Its lanes report the cost they replayed.
  const nlohmann::json j = noise_json(points, t, o);
  EXPECT_EQ(j["lanes"][1]["resume_extra_ns"], nlohmann::json::parse("[[0.0, 0.0], [10000.0, 1000.0]]"));
  EXPECT_FALSE(
      noise_json(points, NoiseTimeline({recording(1000, {{}})}, 1), o)["lanes"][0].contains("resume_extra_ns"));
}

// The computation a rank does after a vertex before its next receive: the calc vertices that
// follow it in the rank's order, sends passed over, polling lags left out.
TEST(NoiseFollowingWork, IsTheComputationUpToTheNextReceive) {
  graph::Graph g = graph::parse_goal(R"(num_ranks 2
rank 0 { a: calc 100  r: recv 8b from 1  b: calc 200  s: send 8b to 1  c: calc 300  r2: recv 8b from 1  d: calc 50
         r requires a  b requires r  s requires b  c requires s  r2 requires c  d requires r2 }
rank 1 { s1: send 8b to 0  r1: recv 8b from 0  s2: send 8b to 0  r1 requires s1  s2 requires r1 }
)",
                                     "work.goal");
  const std::vector<float> work = following_work(g);
  ASSERT_EQ(work.size(), g.num_vertices());
  const auto at = [&](uint32_t rank, uint64_t local) { return work[g.global_id(rank, local)]; };
  EXPECT_FLOAT_EQ(at(0, 0), 0);    // a: the receive comes next
  EXPECT_FLOAT_EQ(at(0, 1), 500);  // r: b, the send passed over, c
  EXPECT_FLOAT_EQ(at(0, 2), 300);  // b
  EXPECT_FLOAT_EQ(at(0, 3), 300);  // s
  EXPECT_FLOAT_EQ(at(0, 5), 50);   // r2: d, the end of the rank
  EXPECT_FLOAT_EQ(at(0, 6), 0);
  EXPECT_FLOAT_EQ(at(1, 1), 0);       // r1: no computation after it
  g.poll_lags = {g.global_id(0, 4)};  // c as a polling lag: not the rank's work
  EXPECT_FLOAT_EQ(following_work(g)[g.global_id(0, 1)], 200);
}

// After a wait the rank's computation up to its next receive runs slower by the slowdown of the
// work the recordings timed after their block (here w / 10 000, so 0.11 after 1100), on at most as
// much of it as they timed (1000 hot). L = 1000, o = 100, rank 1 computes `work` between its
// receive and its answer.
TEST(NoisyEngine, TheComputationAfterAWaitRunsSlowerByTheFollowingWorksSlowdown) {
  ResumeCost c = tenth();
  c.following_ns = {{0, 1000}, {10000, 2000}};
  const NoiseTimeline t({with_resume(recording(100000, {{}, {}}), c)}, 2);
  ASSERT_TRUE(t.has_following());
  EXPECT_DOUBLE_EQ(t.resume_extra(0, 1100, 500), 110 + 0.11 * 500);
  EXPECT_DOUBLE_EQ(t.resume_extra(0, 1100, 5000), 110 + 0.11 * 1000);  // at most what was timed
  EXPECT_DOUBLE_EQ(t.resume_extra(0, 0, 500), 0);
  auto answer_after = [](uint64_t work) {
    return graph::parse_goal(fmt::format(R"(num_ranks 2
rank 0 {{ s0: send 8b to 1  r0: recv 8b from 1  r0 requires s0 }}
rank 1 {{ r1: recv 8b from 0  w: calc {}  s1: send 8b to 0  w requires r1  s1 requires w }}
)",
                                         work),
                             "answer.goal");
  };
  {
    graph::Graph g = answer_after(500);
    Engine e(g, homogeneous_model(params(1000, 100)));
    const std::vector<float> work = following_work(g);
    // Rank 1 waited 1100: resumes at 1100 + 110 + 55, receives until 1365, computes until 1865,
    // sends until 1965; the answer arrives at 2965, rank 0 waited 2865 (nothing after it):
    // T = 2965 + 286.5 + 100. Without the slowdown the answer arrives at 2910 and rank 0 waited 2810.
    EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&t, 0, nullptr, nullptr, nullptr, work.data()}), 3351.5);
    EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&t, 0}), 2910 + 281 + 100);
    // At the traced latency nothing is added: the trace holds it.
    NoiseOptions o;
    o.samples = 1;
    const auto points = predict_with_noise(e, t, {1000}, o, [&](double x) { return e.at_L(x).T; });
    EXPECT_DOUBLE_EQ(points[0].T_median, points[0].T_model);
    EXPECT_DOUBLE_EQ(points[0].T_model, 2900);
    const nlohmann::json j = noise_json(points, t, o);
    EXPECT_EQ(j["lanes"][1]["resume_following"],
              nlohmann::json::parse(R"({"hot_ns": 1000.0, "slowdown": [[0.0, 0.0], [10000.0, 1.0]]})"));
  }
  {
    graph::Graph g = answer_after(1500);  // more than was timed: slowed on 1000 of it
    Engine e(g, homogeneous_model(params(1000, 100)));
    const std::vector<float> work = following_work(g);
    // Rank 1 resumes at 1100 + 110 + 110, computes 1420..2920, sends until 3020; the answer
    // arrives at 4020 and rank 0 waited 3920: T = 4020 + 392 + 100.
    EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&t, 0, nullptr, nullptr, nullptr, work.data()}), 4512);
  }
}

// Computation is not stretched (the traced computation times hold the traced run's detours), and
// a rank that finds its message already there has not waited for it.
TEST(NoisyEngine, ComputationAndMessagesAlreadyThereAreNotDelayed) {
  graph::Graph g = round_trip(3000);  // rank 1 computes until 3000; the message arrived at 1100
  Engine e(g, homogeneous_model(params(1000, 100)));
  const double clean = e.at_L(1000).T;  // 3000 + 100 + 100 + 1000 + 100
  EXPECT_DOUBLE_EQ(clean, 4300);
  const NoiseTimeline t({recording(100000, {{}, {{500, 2000}, {2900, 150}}})}, 2);
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&t, 0}), clean);
}

// A nonblocking operation completed by a later Wait: the rank waits from when it entered the Wait
// (the end of the calc before it), not from the post. L = 1000, o = 100.
TEST(NoisyEngine, NonblockingWaitStartsAtTheCompletionCall) {
  // Rank 1 posts r at 0, computes until 1000, then waits; the message arrives at 1100: T = 1210.
  graph::Graph g = graph::parse_goal(R"(num_ranks 2
rank 0 { s: send 8b to 1 }
rank 1 { r: recv 8b from 0  w: calc 1000  x: calc 10  x requires r  x requires w }
)",
                                     "irecv");
  Engine e(g, homogeneous_model(params(1000, 100)));
  ASSERT_DOUBLE_EQ(e.at_L(1000).T, 1210);
  // A detour over [900, 1500) began while rank 1 computed: it stretches that computation, which
  // the traced times hold; not a delay of the wait (counted from the post it would give 1610).
  const NoiseTimeline computing({recording(100000, {{}, {{900, 600}}})}, 2);
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&computing, 0}), 1210);
  // One over [1050, 1500) began in the Wait: the arrival is noticed at 1500.
  const NoiseTimeline waiting({recording(100000, {{}, {{1050, 450}}})}, 2);
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&waiting, 0}), 1610);

  // The same for a rendezvous send (S = 0) and its acknowledgement, due at 4200 (h = 1100,
  // end(recv) = 3200, + L): rank 0 computes until 4000, then waits; clean T = 4300 + 10.
  graph::Graph gs = graph::parse_goal(R"(num_ranks 2
rank 0 { s: send 8b to 1  c: calc 4000  x: calc 10  x requires s  x requires c }
rank 1 { r: recv 8b from 0 }
)",
                                      "isend");
  Engine es(gs, homogeneous_model(params(1000, 100, 0)));
  ASSERT_DOUBLE_EQ(es.at_L(1000).T, 4310);
  const NoiseTimeline sender_computing({recording(100000, {{{3900, 600}}, {}})}, 2);
  EXPECT_DOUBLE_EQ(es.evaluate_noisy(1000, 0, NoiseShift{&sender_computing, 0}), 4310);
  const NoiseTimeline sender_waiting({recording(100000, {{{4100, 400}}, {}})}, 2);
  EXPECT_DOUBLE_EQ(es.evaluate_noisy(1000, 0, NoiseShift{&sender_waiting, 0}), 4610);

  // A blocking synchronous send after 1000 of computation: its acknowledgement receive a has no
  // edges (it starts at 0), but the rank waits for it only from the call's entry at 1000. The
  // message arrives at 2100, the acknowledgement at 3300: clean T = 3400 + 10.
  graph::Graph gss = graph::parse_goal(R"(num_ranks 2
rank 0 { c: calc 1000  s: send 8b to 1  a: recv 0b from 1  x: calc 10  s requires c  x requires s  x requires a }
rank 1 { r: recv 8b from 0  k: send 0b to 0  k requires r }
)",
                                       "ssend");
  Engine ess(gss, homogeneous_model(params(1000, 100)));
  ASSERT_DOUBLE_EQ(ess.at_L(1000).T, 3410);
  const NoiseTimeline before_call({recording(100000, {{{500, 3000}}, {}})}, 2);
  EXPECT_DOUBLE_EQ(ess.evaluate_noisy(1000, 0, NoiseShift{&before_call, 0}), 3410);
  const NoiseTimeline in_call({recording(100000, {{{1200, 2300}}, {}})}, 2);
  EXPECT_DOUBLE_EQ(ess.evaluate_noisy(1000, 0, NoiseShift{&in_call, 0}), 3610);
}

// Rendezvous (S = 0): the receiver waits for the data, the sender for the acknowledgement. Clean:
// h = 1100, end(recv) = h + o + 2L = 3200, end(send) = 3200 + L + o = 4300.
TEST(NoisyEngine, RendezvousDataAndAcknowledgementWaitsToo) {
  graph::Graph g = graph::parse_goal("num_ranks 2\nrank 0 { s: send 8b to 1 }\nrank 1 { r: recv 8b from 0 }\n", "rndv");
  Engine e(g, homogeneous_model(params(1000, 100, 0)));
  EXPECT_DOUBLE_EQ(e.at_L(1000).T, 4300);
  // rank 1 away over [3000, 3500): end(recv) 3600; rank 0 away over [4500, 4700): end(send) 4800
  const NoiseTimeline t({recording(100000, {{{4500, 200}}, {{3000, 500}}})}, 2);
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&t, 0}), 4800);
}

// A receive a polling loop notices (followed by a polling lag, docs/schedgen.md "Polling") is not
// waited for by a spinning CPU: the rank computes between polls, and a detour at the arrival only
// delays that computation, whose traced times and the lag already hold detours. L = 1000, o = 100:
// the message arrives at 1100, the receive ends at 1200, rank 1 notices it after its lag of 50 and
// computes 100 more: T = 1350 with or without the detour of rank 1 over [1000, 1500).
TEST(NoisyEngine, PolledReceiveIsNotDelayedByADetourAtItsArrival) {
  graph::Graph g = graph::parse_goal(R"(num_ranks 2
rank 0 { s: send 8b to 1 }
rank 1 { r: recv 8b from 0
         z: calc 50 // llamp:poll-lag
         w: calc 100  z requires r  w requires z }
)",
                                     "polled");
  Engine e(g, homogeneous_model(params(1000, 100)));
  ASSERT_DOUBLE_EQ(e.at_L(1000).T, 1350);
  const std::vector<uint8_t> polled = polled_receives(g);
  ASSERT_EQ(polled.size(), g.num_vertices());
  EXPECT_EQ(polled[g.global_id(1, 0)], 1u);
  EXPECT_EQ(std::count(polled.begin(), polled.end(), 1), 1);
  const NoiseTimeline t({recording(100000, {{}, {{1000, 500}}})}, 2);
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&t, 0, &polled}), 1350);
  // Not known to be polled, the same receive is a spinning wait: noticed at 1500.
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&t, 0}), 1750);
  // A graph without polling lags has no polled receives.
  EXPECT_TRUE(polled_receives(round_trip(0)).empty());
}

TEST(NoisePrediction, SamplesAreReproducibleAndBracketTheMean) {
  graph::Graph g = round_trip(0);
  Engine e(g, homogeneous_model(params(1000, 100)));
  std::vector<std::pair<uint64_t, uint64_t>> detours;
  for (uint64_t t = 0; t < 1000000; t += 10000) detours.emplace_back(t, 3000);  // 30 % of the time
  // (a wait of 1100 ns meets one that began during it 11 % of the time)
  const NoiseTimeline t({recording(1000000, {detours, detours})}, 2);
  NoiseOptions o;
  o.samples = 64;
  o.threads = 1;
  auto model_at = [&](double x) { return e.at_L(x).T; };
  const auto serial = predict_with_noise(e, t, {1000, 5000}, o, model_at);
  o.threads = 4;
  const auto parallel = predict_with_noise(e, t, {1000, 5000}, o, model_at);
  ASSERT_EQ(serial.size(), 2u);
  for (size_t i = 0; i < serial.size(); ++i) {
    EXPECT_DOUBLE_EQ(serial[i].T_mean, parallel[i].T_mean);
    EXPECT_DOUBLE_EQ(serial[i].T_model, e.at_L(serial[i].x).T);
    EXPECT_GT(serial[i].T_mean, serial[i].T_model);  // two waits, each delayed 11 % of the time or more
    EXPECT_LE(serial[i].T_min, serial[i].T_mean);
    EXPECT_LE(serial[i].T_min, serial[i].T_median);
    EXPECT_GE(serial[i].T_max, serial[i].T_median);
    EXPECT_GE(serial[i].T_max, serial[i].T_mean);
    EXPECT_LE(serial[i].T_max, serial[i].T_model + 2 * 3000);
  }
  // A recording without detours changes nothing.
  const NoiseTimeline quiet({recording(1000000, {{}, {}})}, 2);
  const auto none = predict_with_noise(e, quiet, {1000}, o, model_at);
  EXPECT_DOUBLE_EQ(none[0].T_mean, none[0].T_model);
  EXPECT_DOUBLE_EQ(none[0].T_std, 0);
}

TEST(NoiseCli, AnalyzeReportsThePredictionWithNoise) {
  const std::string graph = write_temp("llamp-noise-cli.goal", R"(num_ranks 2
rank 0 { s0: send 8b to 1  r0: recv 8b from 1  r0 requires s0 }
rank 1 { r1: recv 8b from 0  s1: send 8b to 0  s1 requires r1 }
)");
  std::vector<std::pair<uint64_t, uint64_t>> away;  // rank 1 away half the time, 1 µs of every 2
  for (uint64_t t = 0; t < 100000; t += 2000) away.emplace_back(t, 1000);
  const std::string rec = write_temp("llamp-noise-cli.json", to_json(recording(100000, {{}, std::move(away)})).dump());
  const std::string cmd = fmt::format(
      "{} analyze {} --L 1us --o 100ns --G 0ns --S inf --range 0:10us --noise {} --noise-at 1us,5us "
      "--noise-samples 200 --json - 2>&1",
      LLAMP_ANALYZE_DRIVER, graph, rec);
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  ASSERT_EQ(WEXITSTATUS(pclose(p)), 0) << out;
  const auto j = nlohmann::json::parse(out);
  ASSERT_TRUE(j.contains("noise")) << out;
  const auto& points = j["noise"]["points"];
  ASSERT_EQ(points.size(), 2u);
  EXPECT_DOUBLE_EQ(points[0]["L_ns"].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(points[0]["T_model_ns"].get<double>(), 2400);
  // Rank 1's wait (0 to 1100 ns) ends inside a detour half the time, one that began during the
  // wait, on average 500 ns before its end; the prediction is the median sample, between no delay
  // and the mean.
  EXPECT_NEAR(points[0]["noise_mean_ns"].get<double>(), 250, 75);
  EXPECT_GE(points[0]["noise_ns"].get<double>(), 0);
  EXPECT_LE(points[0]["noise_ns"].get<double>(), points[0]["noise_mean_ns"].get<double>());
  EXPECT_DOUBLE_EQ(points[0]["T_noise_median_ns"].get<double>() - 2400, points[0]["noise_ns"].get<double>());
  EXPECT_NEAR(j["noise"]["lanes"][1]["fraction"].get<double>(), 0.5, 1e-12);
  EXPECT_EQ(j["noise"]["files"][0].get<std::string>(), rec);
}

// `--noise-terms`: which of the replay's terms a prediction charges, to see what each adds.
TEST(NoiseTerms, ParseTakesAnySubsetAndNamesABadItem) {
  auto names = [](const std::string& list) { return noise_term_names(parse_noise_terms(list)); };
  EXPECT_EQ(names("all"), (std::vector<std::string>{"detours", "resume", "following"}));
  EXPECT_EQ(names("detours"), (std::vector<std::string>{"detours"}));
  EXPECT_EQ(names("resume,detours"), (std::vector<std::string>{"detours", "resume"}));
  EXPECT_EQ(names("resume,following"), (std::vector<std::string>{"resume", "following"}));
  auto error_of = [](const std::string& list) {
    try {
      parse_noise_terms(list);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error_of("detours,detour"),
            "--noise-terms detours,detour: 'detour' is not a term (detours, resume, following or all)");
  EXPECT_EQ(error_of(""), "--noise-terms : '' is not a term (detours, resume, following or all)");
  EXPECT_EQ(error_of("detours,following"),
            "--noise-terms detours,following: 'following' is part of the resume cost; add 'resume'");
}

// Each term left out is gone from the replay; what is kept replays as before (the hand-computed
// round trip of AWaitIsFollowedByTheResumeCostOfItsLength and WaitsEndAfterTheDetourCoveringTheirEnd).
TEST(NoiseTerms, KeptTermsReplayAsBeforeAndDroppedOnesAddNothing) {
  ResumeCost c = tenth();
  c.following_ns = {{0, 1000}, {10000, 2000}};
  const std::vector<NoiseRecording> all = {with_resume(recording(100000, {{}, {{1000, 500}}}), c)};
  auto timeline_with = [&](const std::string& terms) {
    std::vector<NoiseRecording> kept = all;
    keep_noise_terms(kept, parse_noise_terms(terms));
    return NoiseTimeline(kept, 2);
  };
  const NoiseTimeline detours = timeline_with("detours"), resume = timeline_with("resume"),
                      block = timeline_with("detours,resume"), full = timeline_with("all");
  EXPECT_FALSE(detours.has_resume());
  EXPECT_TRUE(block.has_resume());
  EXPECT_FALSE(block.has_following());
  EXPECT_TRUE(full.has_following());
  EXPECT_DOUBLE_EQ(resume.fraction(1), 0);
  EXPECT_DOUBLE_EQ(detours.fraction(1), full.fraction(1));

  graph::Graph g = round_trip(0);
  Engine e(g, homogeneous_model(params(1000, 100)));
  // Detours only: rank 1's wait (0..1100) ends inside its detour 1000..1500, so it answers at
  // 1600..1700 and T = 2700 + 100, as in WaitsEndAfterTheDetourCoveringTheirEnd.
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&detours, 0}), 2800);
  // The resume block only: 2741, as in AWaitIsFollowedByTheResumeCostOfItsLength.
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&resume, 0}), 2741);
  // Both: rank 1 waited 1500 (+150), receives 1650..1750, answers 1750..1850, the answer arrives
  // at 2850; rank 0 waited 2750 (+275), T = 3125 + 100. The following work's slowdown adds nothing here: the
  // round trip computes nothing after a wait (its values are in
  // TheComputationAfterAWaitRunsSlowerByTheFollowingWorksSlowdown).
  const double with_block = e.evaluate_noisy(1000, 0, NoiseShift{&block, 0});
  EXPECT_DOUBLE_EQ(with_block, 3225);
  EXPECT_DOUBLE_EQ(e.evaluate_noisy(1000, 0, NoiseShift{&full, 0}), with_block);
}

TEST(NoiseCli, NoiseTermsChargeOnlyTheNamedTermsAndSayWhich) {
  const std::string graph = write_temp("llamp-noise-terms.goal", R"(num_ranks 2
rank 0 { s0: send 8b to 1  r0: recv 8b from 1  r0 requires s0 }
rank 1 { r1: recv 8b from 0  s1: send 8b to 0  s1 requires r1 }
)");
  std::vector<std::pair<uint64_t, uint64_t>> away;
  for (uint64_t t = 0; t < 100000; t += 2000) away.emplace_back(t, 1000);
  const std::string with_cost =
      write_temp("llamp-noise-terms.json", to_json(with_resume(recording(100000, {{}, away}), tenth())).dump());
  const std::string without_cost =
      write_temp("llamp-noise-terms-none.json", to_json(recording(100000, {{}, away})).dump());
  auto analyze = [&](const std::string& rec, const std::string& extra, int* status = nullptr) {
    const std::string cmd = fmt::format(
        "{} analyze {} --L 1us --o 100ns --G 0ns --S inf --range 0:10us --noise {} --noise-at 1us,5us "
        "--noise-samples 50 {} --json - 2>&1",
        LLAMP_ANALYZE_DRIVER, graph, rec, extra);
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int rc = WEXITSTATUS(pclose(p));
    if (status) *status = rc;
    return out;
  };
  const auto full = nlohmann::json::parse(analyze(with_cost, ""));
  const auto detours = nlohmann::json::parse(analyze(with_cost, "--noise-terms detours"));
  const auto reference = nlohmann::json::parse(analyze(without_cost, ""));
  EXPECT_EQ(full["noise"]["terms"], nlohmann::json::parse(R"(["detours", "resume", "following"])"));
  EXPECT_EQ(detours["noise"]["terms"], nlohmann::json::parse(R"(["detours"])"));
  for (size_t i = 0; i < 2; ++i) {
    // Detours alone are the recording without its resume cost, sample for sample (same phases).
    EXPECT_DOUBLE_EQ(detours["noise"]["points"][i]["T_noise_mean_ns"].get<double>(),
                     reference["noise"]["points"][i]["T_noise_mean_ns"].get<double>());
    EXPECT_FALSE(detours["noise"]["lanes"][1].contains("resume_extra_ns"));
  }
  // At 5 µs the waits are longer than at the traced 1 µs, and the resume cost adds to them.
  EXPECT_GT(full["noise"]["points"][1]["T_noise_mean_ns"].get<double>(),
            detours["noise"]["points"][1]["T_noise_mean_ns"].get<double>());
  int status = 0;
  const std::string bad = analyze(with_cost, "--noise-terms detours,jitter", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(bad.find("--noise-terms detours,jitter: 'jitter' is not a term"), std::string::npos) << bad;
}
