#pragma once
// Machine noise recordings: the JSON file `llamp-noise` writes and `llamp analyze --noise` reads
// (docs/FORMATS.md, "Noise recording"). While every rank of a job spins reading the clock, each
// gap of at least the threshold between two consecutive reads is a detour: time its CPU spent on
// something else (interrupts, the kernel, other processes, a VM's host).
//
//   {"format": "llamp-noise", "version": 1, "duration_ns": 2000000000, "threshold_ns": 1000,
//    "method": "...",
//    "ranks": [{"rank": 0, "host": "n1", "cpu": 0, "dropped": 0,
//               "detours": [[start_ns, length_ns], ...],
//               "throughput": {"slices": 7000, "base_ns": 120000, "median_ns": 131000,
//                              "mean_ns": 160000, "slow_fraction": 0.31},
//               "resume": {"reps": 200, "after_ns": [[0, 820], [100000, 1370], ...],
//                          "following_ns": [[0, 2400], [100000, 3500], ...]}}, ...]}
//
// start_ns counts from the rank's start of recording (right after a barrier); detours are sorted,
// do not overlap and start inside [0, duration_ns). `throughput` (optional) times a fixed
// throughput-bound kernel in slices after the spin: a CPU whose physical core the host shares with
// other work (an SMT sibling) runs such code slower without losing time to detours. `resume`
// (optional) times a fixed block of MPI calls right after the rank spun for each of several
// lengths, and (`following_ns`, optional) the other MPI calls right after that block: a CPU that
// waited comes back to colder caches, the longer it waited the colder, and work it has not redone
// since pays too (docs/analyzer.md, "Resume cost").
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace llamp {

// Slices of a fixed throughput-bound kernel timed back to back on one rank's CPU. base_ns is the
// 10th percentile of the slice times (the CPU's fast speed), slow_fraction the share of slices that
// took at least kSlowSliceFactor times base_ns.
struct ThroughputSlices {
  uint64_t slices = 0;
  uint64_t base_ns = 0;
  uint64_t median_ns = 0;
  uint64_t mean_ns = 0;
  double slow_fraction = 0;
};
inline constexpr double kSlowSliceFactor = 1.3;

// Summarises slice times (any order; at least one).
ThroughputSlices summarize_slices(std::vector<uint64_t> slice_ns);

// y at x on the polyline through `points` ((x, y) pairs, x ascending, at least one): linear
// between them, held beyond either end.
template <class Points>
double polyline_at(const Points& points, double x) {
  const auto above =
      std::find_if(points.begin(), points.end(), [x](const auto& p) { return static_cast<double>(p.first) >= x; });
  if (above == points.end()) return static_cast<double>(points.back().second);
  if (above == points.begin()) return static_cast<double>(above->second);
  const auto below = std::prev(above);
  const double x0 = static_cast<double>(below->first), x1 = static_cast<double>(above->first);
  const double y0 = static_cast<double>(below->second), y1 = static_cast<double>(above->second);
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

// The resume cost of a rank's CPU: the mean time of a fixed block of work right after it spun for
// each of several lengths (after_ns[0] after no spin: the block hot), and of the different work
// timed right after that block (following_ns, its own pairs, llamp-noise times both at the same
// spins; empty: not measured).
struct ResumeCost {
  uint64_t reps = 0;                                        // blocks timed per spin length
  std::vector<std::pair<uint64_t, uint64_t>> after_ns;      // (spin_ns, mean block ns), spin 0 first, ascending
  std::vector<std::pair<uint64_t, uint64_t>> following_ns;  // (spin_ns, mean ns of the work after the block)
  // The block's extra time after a spin of w ns over the hot block: linear between the measured
  // spins, the last one's beyond them, never below 0.
  double extra_ns(double w) const;
  // How much slower the work after the block ran after a spin of w ns than hot, as a fraction of
  // its hot time (0.5: half again as long), interpolated alike; 0 without following_ns.
  double following_slowdown(double w) const;
  double following_hot_ns() const { return following_ns.empty() ? 0.0 : static_cast<double>(following_ns[0].second); }
};

struct RankNoise {
  uint32_t rank = 0;
  std::string host;
  int64_t cpu = -1;                                    // the CPU the rank ran on (sched_getcpu), -1 if unknown
  uint64_t dropped = 0;                                // detours seen but not kept (the recorder's buffer was full)
  std::vector<std::pair<uint64_t, uint64_t>> detours;  // (start_ns, length_ns)
  std::optional<ThroughputSlices> throughput;          // absent: not measured
  std::optional<ResumeCost> resume;                    // absent: not measured
};

struct NoiseRecording {
  uint64_t duration_ns = 0;
  uint64_t threshold_ns = 0;
  uint64_t throughput_duration_ns = 0;  // how long each rank timed throughput slices (0: not)
  std::string method;
  std::vector<RankNoise> ranks;  // one per rank of the recording job, in rank order
};

// Reads and checks a recording; errors name the file and the rank and detour at fault.
NoiseRecording read_noise_recording(const std::string& path);
NoiseRecording parse_noise_recording(std::string_view json_text, const std::string& name);
nlohmann::json to_json(const NoiseRecording& r);

// Share of the recorded time a rank spent in detours, and Σ length² / (2 · duration): the mean
// delay of something that becomes due at a random moment (the mean residual of the detour covering
// it, zero outside detours).
double noise_fraction(const RankNoise& r, uint64_t duration_ns);
double noise_mean_residual_ns(const RankNoise& r, uint64_t duration_ns);

}  // namespace llamp
