#pragma once
// Machine noise in the prediction: `llamp analyze --noise REC` (docs/analyzer.md, "Machine noise").
//
// A CPU that waits for a message is taken away now and then (timer interrupts, the kernel, other
// processes, a VM's host). When the message becomes due during such a detour, the rank notices it
// only when the detour ends. The LogGPS model has no such delays; a run has them, and the longer a
// run waits, the more of them it meets: on the 2-vCPU VM this project is developed on, the VM's
// detours (1.6-2.2 % of a spinning CPU's time, among them 2-4 host stalls of 1-4 ms per second)
// made every injected 100 µs latency cost 101.0-101.4 µs on average while its median was exact.
//
// With a recording of the detours each rank's CPU saw (llamp-noise, noise_recording.hpp) the
// engine replays them: every time a rank waits for something remote (an eager message's arrival,
// a rendezvous transfer's end, the acknowledgement a rendezvous sender waits for), the moment it
// notices is moved to the end of the detour covering it if that detour began while the rank
// waited, and everything after it on that rank and on ranks that depend on it moves along.
// Computation is not stretched: the traced run's computation times already hold the detours of
// the traced run, among them those that began while it computed and ended in a wait. The
// recording is entered at a random phase, the same for all ranks (detours recorded together stay
// together), T is taken at --noise-samples phases, and the prediction is their median (the mean is
// reported too): a recording can hold one stall no run of the campaign met (one of 100 ms, in a
// demo campaign, put the mean 3.7 % above the runs and the median 1.5 %; elsewhere the two agree
// within 0.15 %). The phases are the same at every point (common random numbers), so the
// difference between points is not sampling noise.
//
// A rank that waited also comes back slower: its CPU's caches were emptied meanwhile, more the
// longer it waited (host detours, an SMT sibling's work; docs/injector.md "Waiting CPUs come back
// cold"). Where the recordings time a block of MPI calls after spins of several lengths (their
// `resume`), the moment a rank notices what it waited for is followed by the block's extra time
// after a spin as long as that wait, less that after the same vertex's wait at the traced latency
// without noise: the traced computation holds the extra time of the traced run's waits already.
// Where they also time the different MPI work right after that block (`following_ns`), the rank's
// computation after the wait pays their slowdown too, on as much of it as they timed: work the CPU
// has not redone since it last ran comes back cold, not only the first call after the wait.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "llamp/analyzer/engine.hpp"
#include "llamp/noise_recording.hpp"

namespace llamp::analyzer {

// The detours of one or more recordings, one lane per recorded rank: recordings are laid end to
// end into one cycle, lane l taking rank (l mod ranks) of each. Graph rank r uses lane r mod lanes.
class NoiseTimeline {
 public:
  NoiseTimeline(const std::vector<NoiseRecording>& recordings, uint32_t graph_ranks);

  double cycle_ns() const { return cycle_; }
  uint32_t lanes() const { return static_cast<uint32_t>(begin_.size()); }
  uint32_t lane_of(uint32_t rank) const { return rank % lanes(); }
  // When a rank that began waiting at `since` for something due at t (ns since the run's start)
  // notices it, with the recording entered at `phase`: the end of the detour covering t if that
  // detour began after `since`, else t. A detour that began before the wait did would have found
  // the rank computing (or posting the operation it waits for), and would have stretched that
  // computation instead, which the trace's computation times hold already.
  double notice(uint32_t rank, double t, double since, double phase) const;
  // Share of the cycle lane l spends in detours.
  double fraction(uint32_t lane) const;
  // The extra time of lane l's CPU after a wait of w ns followed by `work` ns of computation (as
  // hot): the recordings' block's extra time after a spin of w, plus the slowdown of the work they
  // timed after the block times the computation, at most as much of it as they timed (averaged over
  // the recordings that have one; 0 without). And the points it interpolates.
  double resume_extra(uint32_t lane, double w, double work = 0) const;
  bool has_resume() const { return has_resume_; }
  bool has_following() const { return has_following_; }
  const std::vector<std::pair<double, double>>& resume_points(uint32_t lane) const { return resume_[lane]; }
  const std::vector<std::pair<double, double>>& following_points(uint32_t lane) const { return following_[lane]; }
  double following_hot_ns(uint32_t lane) const { return following_hot_[lane]; }

 private:
  std::vector<std::vector<double>> begin_, end_;  // per lane, sorted, inside [0, cycle)
  // Per lane, for each bucket of bucket_ns_: the first detour ending after the bucket's start, so a
  // lookup scans a detour or two instead of searching (the noisy pass looks up every remote wait).
  std::vector<std::vector<uint32_t>> first_;
  double bucket_ns_ = 1;
  double cycle_ = 0;
  std::vector<std::vector<std::pair<double, double>>> resume_;     // per lane: (wait ns, extra ns), ascending
  std::vector<std::vector<std::pair<double, double>>> following_;  // per lane: (wait ns, slowdown), ascending
  std::vector<double> following_hot_;                              // per lane: the following work's hot ns
  bool has_resume_ = false, has_following_ = false;
};

// What the engine's noisy pass needs: the timeline, this sample's phase and which receives a
// polling loop notices (polled_receives()).
struct NoiseShift {
  const NoiseTimeline* timeline;
  double phase;
  const std::vector<uint8_t>* polled = nullptr;  // per vertex, 1: a receive noticed by a polling loop
  // Per vertex, the wait that ended at it at the traced latency without noise: its resume cost is
  // in the traced computation already, so only what a longer wait adds is added (null: all of it).
  const float* base_waits = nullptr;
  // Set: the pass that fills base_waits (no detours, no resume cost, each vertex's longest wait
  // written here).
  float* waits_out = nullptr;
  // Per vertex, the computation its rank does after it until its next receive (following_work();
  // null: none counted).
  const float* work_after = nullptr;

  // When the rank of vertex v, waiting since `since`, notices what becomes due at t: after the
  // detour covering t (if it began during the wait), plus the CPU's resume cost after that wait.
  double notice(graph::VertexId v, uint32_t rank, double t, double since) const {
    const double noticed = waits_out ? t : timeline->notice(rank, t, since, phase);
    if (!timeline->has_resume()) return noticed;
    const double waited = noticed - since;
    if (waits_out) {
      waits_out[v] = std::max(waits_out[v], static_cast<float>(waited));
      return noticed;
    }
    const uint32_t lane = timeline->lane_of(rank);
    const double work = work_after ? work_after[v] : 0.0;
    double extra = timeline->resume_extra(lane, waited, work);
    if (base_waits) extra -= timeline->resume_extra(lane, base_waits[v], work);
    return extra > 0 ? noticed + extra : noticed;
  }
  bool noticed_by_poll(graph::VertexId v) const { return polled && (*polled)[v]; }
};

// The receives whose completion a polling loop notices (each one a Requires predecessor of a
// polling lag, docs/schedgen.md "Polling"), 1 per vertex. Such a rank does not spin on the
// arrival: it computes between polls, and a detour at the arrival only delays its computation,
// which the traced computation times and the lag (half the traced polling period) already hold.
std::vector<uint8_t> polled_receives(const graph::Graph& g);

// Per vertex, the computation its rank's chain holds after it up to its next receive: the calc
// vertices that follow it in the rank's order (polling lags left out), the work a rank does after
// a wait before it can wait again. The graph's calc values at the time of the call.
std::vector<float> following_work(const graph::Graph& g);

// Which of the replay's terms a prediction charges (`llamp analyze --noise-terms`): the detours
// that end waits, the resume block's extra time after each wait, and the following work's
// slowdown (which is part of the resume cost, so it needs `resume`). Each alone shows what it adds
// to T (docs/analyzer.md, "The replay's terms").
struct NoiseTerms {
  bool detours = true, resume = true, following = true;
};
// "detours,resume,following", "all", or any subset (following needs resume); a clear error naming
// the bad item otherwise.
NoiseTerms parse_noise_terms(const std::string& list);
std::vector<std::string> noise_term_names(const NoiseTerms& terms);
// Drops from the recordings what `terms` leaves out (before they make a NoiseTimeline).
void keep_noise_terms(std::vector<NoiseRecording>& recordings, const NoiseTerms& terms);

struct NoiseOptions {
  unsigned samples = 32;
  uint64_t seed = 1;
  unsigned threads = 0;  // engines sampling at once (0: one per hardware thread, at most `samples`)
};

struct NoisePoint {
  double x = 0;
  double T_model = 0;                                                // the model without noise at x (model_at(x))
  double T_mean = 0, T_median = 0, T_std = 0, T_min = 0, T_max = 0;  // over the samples, with noise
};

// T with noise at each x. `model_at(x)` prepares the graph for x (e.g. the polling lags of the
// phase ramp) and returns the model's T(x) without noise; the samples run on that graph.
std::vector<NoisePoint> predict_with_noise(Engine& e, const NoiseTimeline& timeline, const std::vector<double>& xs,
                                           const NoiseOptions& options, const std::function<double(double)>& model_at);

nlohmann::json noise_json(const std::vector<NoisePoint>& points, const NoiseTimeline& timeline,
                          const NoiseOptions& options);

}  // namespace llamp::analyzer
