// llamp-noise: records the machine noise the ranks of an MPI job see, for `llamp analyze --noise`.
// Launch it like the application (same launcher, rank count and binding):
//
//   mpiexec.mpich -bind-to core -n 2 llamp-noise -o noise.json [--duration 2s] [--threshold 1us]
//
// Method (the "selfish detour" benchmark, as LogGOPSim's noise studies record it): after a barrier
// every rank spins reading CLOCK_MONOTONIC for --duration; each gap of at least --threshold
// between two consecutive reads is a detour, time its CPU spent elsewhere (timer interrupts, the
// kernel, other processes, a VM's host). The ranks spin at once, as ranks waiting out an injected
// latency do, so detours that need all CPUs busy show too. Rank 0 gathers the detours and writes
// the recording (docs/FORMATS.md, "Noise recording") with a summary per rank on stderr.
//
// Then, after a second barrier, every rank times slices of a fixed throughput-bound kernel for
// --throughput-duration (default 1s; 0s: not). Detours do not show the host sharing a CPU's
// physical core with other work (an SMT sibling busy with another guest): the vCPU keeps running,
// only slower, and only for code that needs the core's execution units. On the 2-vCPU VM of stop
// 22 a stencil pass ran 1.75x slower in about half of all 4 ms windows, on each vCPU on its own,
// switching within tenths of a second, while a latency-bound FP chain stayed flat; app_cg's
// runtime at ΔL = 0 varied 0.53-0.89 s with it.
//
// Last, after a barrier each time, every rank times a fixed block of MPI calls right after it spun
// on the clock for each of several lengths, --resume-reps times each (0: not): the resume cost. A
// CPU that waits comes back to caches other work emptied meanwhile, the more the longer it waited
// (on the 2-vCPU Intel VM of stop 35, eight MPI calls took 0.82 µs hot, 1.37 µs on average after
// a 100 µs spin and 4.2 µs after 1 ms; after a spin the host did not interrupt, 1.20 µs), so an
// application's work after each injected latency costs more than in its trace. Right after that
// block it times other MPI calls (resume_block.hpp's following_blocks): work the CPU has not redone
// since it waited is cold too (stop 36: 2.4 µs hot, 40-50 % slower after a 100 µs spin, while the
// same block run again is hot), and a rank's work between two waits is mostly such work.
#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "llamp/error.hpp"
#include "llamp/noise_recording.hpp"
#include "llamp/units.hpp"
#include "mpi_tool_main.hpp"
#include "resume_block.hpp"

namespace {

// A fixed buffer filled without allocating: a reallocation inside the loop would be a detour of
// our own. 2^18 detours are two minutes at this VM's ~2000 per second.
constexpr size_t kMaxDetours = size_t{1} << 18;

uint64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000u + static_cast<uint64_t>(t.tv_nsec);
}

struct Recorded {
  std::vector<uint64_t> flat;  // start, length, start, length, ...
  uint64_t dropped = 0;
};

Recorded spin(uint64_t duration_ns, uint64_t threshold_ns) {
  Recorded r;
  r.flat.resize(2 * kMaxDetours);
  size_t n = 0;
  const uint64_t t0 = now_ns(), end = t0 + duration_ns;
  uint64_t previous = t0;
  for (;;) {
    const uint64_t t = now_ns();
    if (t - previous >= threshold_ns) {
      if (n < kMaxDetours) {
        r.flat[2 * n] = previous - t0;
        r.flat[2 * n + 1] = t - previous;
        ++n;
      } else {
        ++r.dropped;
      }
    }
    previous = t;
    if (t >= end) break;
  }
  r.flat.resize(2 * n);
  // The last read may land after the end: a detour starting at or past it is outside the recording.
  while (!r.flat.empty() && r.flat[r.flat.size() - 2] >= duration_ns) r.flat.resize(r.flat.size() - 2);
  return r;
}

// The throughput kernel: one pass of cg's banded matrix-vector product (reach 8) over an L1-resident
// vector. Its rows are independent, so the core overlaps them and the pass is bound by the core's
// execution units, which an SMT sibling shares.
constexpr int kKernelRows = 2048, kKernelReach = 8, kPassesPerSlice = 32;

void stencil_pass(const double* x, double* y) {
  for (int i = kKernelReach; i < kKernelRows - kKernelReach; ++i) {
    double sum = (2.0 * kKernelReach + 1.0) * x[i];
    for (int k = 1; k <= kKernelReach; ++k) sum -= x[i - k] + x[i + k];
    y[i] = sum;
  }
}

std::vector<uint64_t> time_slices(uint64_t duration_ns) {
  std::vector<double> x(kKernelRows), y(kKernelRows);
  for (int i = 0; i < kKernelRows; ++i) x[i] = 1.0 + (i % 11) / 11.0;
  std::vector<uint64_t> slices;
  // A slice takes tens of µs (about 90 on the 2-vCPU VM), so one per 10 µs is room enough; kept
  // from growing while timed.
  slices.reserve(static_cast<size_t>(std::min<uint64_t>(duration_ns / 10'000 + 16, uint64_t{1} << 24)));
  const uint64_t end = now_ns() + duration_ns;
  for (uint64_t t = now_ns(); t < end && slices.size() < slices.capacity();) {
    for (int p = 0; p < kPassesPerSlice; ++p) {
      stencil_pass(x.data(), y.data());
      asm volatile("" ::: "memory");  // every pass computes and stores: none is optimised away
    }
    const uint64_t next = now_ns();
    slices.push_back(next - t);
    t = next;
  }
  return slices;
}

// Spin lengths of the resume cost: 0 (the block hot) and a log scale up to 1 ms, which holds
// ΔL ≤ 100 µs and a rendezvous's three latencies with room.
constexpr std::array<uint64_t, 7> kResumeSpinsNs = {0, 3'000, 10'000, 30'000, 100'000, 300'000, 1'000'000};

// The means in one array, as rank 0 gathers them: the block's per spin length, then the
// following work's.
using ResumeMeans = std::array<uint64_t, 2 * kResumeSpinsNs.size()>;

uint64_t mean_without_top(std::vector<uint64_t>& times) {
  std::sort(times.begin(), times.end());
  const size_t kept = std::max<size_t>(1, times.size() - times.size() / 50);
  uint64_t sum = 0;
  for (size_t i = 0; i < kept; ++i) sum += times[i];
  return sum / kept;
}

// Mean time of the block, and of the different work right after it, after each spin length. Every
// repetition takes every length, in an order that rotates, after a barrier (all ranks wait and
// resume together, as ranks waiting out ΔL do) and one untimed pass of all of it (the work is as
// hot as work right before a wait). The top 2 % of each length's times are left out: work a host
// stall hit is a detour (the recording's first part), not a colder resume.
ResumeMeans time_resume(uint64_t reps) {
  constexpr size_t kSpins = kResumeSpinsNs.size();
  std::array<std::vector<uint64_t>, 2 * kSpins> times;  // block at [k], following work at [kSpins + k]
  for (auto& t : times) t.reserve(reps);
  double a[32] = {}, b[64] = {};
  for (uint64_t rep = 0; rep < reps; ++rep)
    for (size_t k = 0; k < kSpins; ++k) {
      const size_t which = (k + rep) % kSpins;
      MPI_Barrier(MPI_COMM_WORLD);
      llamp::tools::resume_block(a, b);
      llamp::tools::following_blocks(a, b);
      for (const uint64_t t0 = now_ns(); now_ns() - t0 < kResumeSpinsNs[which];) {
      }
      const uint64_t t0 = now_ns();
      llamp::tools::resume_block(a, b);
      const uint64_t t1 = now_ns();
      llamp::tools::following_blocks(a, b);
      times[which].push_back(t1 - t0);
      times[kSpins + which].push_back(now_ns() - t1);
    }
  ResumeMeans means{};
  for (size_t i = 0; i < means.size(); ++i) means[i] = mean_without_top(times[i]);
  return means;
}

void print_summary(const llamp::NoiseRecording& rec) {
  using llamp::units::format_time_ns;
  for (const auto& r : rec.ranks) {
    uint64_t largest = 0;
    for (auto [start, length] : r.detours) largest = std::max(largest, length);
    std::fprintf(stderr,
                 "llamp-noise: rank %u (%s, cpu %lld): %zu detours, %.3f %% of %s, %.0f per s, largest %s, mean "
                 "delay of a random instant %s%s\n",
                 r.rank, r.host.c_str(), static_cast<long long>(r.cpu), r.detours.size(),
                 100 * llamp::noise_fraction(r, rec.duration_ns), format_time_ns(rec.duration_ns).c_str(),
                 r.detours.size() / (rec.duration_ns / 1e9), format_time_ns(largest).c_str(),
                 format_time_ns(llamp::noise_mean_residual_ns(r, rec.duration_ns)).c_str(),
                 r.dropped ? fmt::format(" ({} not kept: buffer full)", r.dropped).c_str() : "");
    if (const auto& t = r.throughput)
      std::fprintf(stderr,
                   "llamp-noise: rank %u throughput: %llu slices, fast %s, median %s, mean %.2fx fast, %.1f %% of "
                   "slices at least %.1fx fast\n",
                   r.rank, static_cast<unsigned long long>(t->slices), format_time_ns(t->base_ns).c_str(),
                   format_time_ns(t->median_ns).c_str(), static_cast<double>(t->mean_ns) / t->base_ns,
                   100 * t->slow_fraction, llamp::kSlowSliceFactor);
    if (const auto& c = r.resume) {
      auto listed = [](const std::vector<std::pair<uint64_t, uint64_t>>& means) {
        std::string list;
        for (auto [spin, mean] : means)
          list += fmt::format("{}{} {}", list.empty() ? "" : ", ", format_time_ns(spin), format_time_ns(mean));
        return list;
      };
      std::fprintf(stderr, "llamp-noise: rank %u resume (MPI block after a spin, mean of %llu): %s\n", r.rank,
                   static_cast<unsigned long long>(c->reps), listed(c->after_ns).c_str());
      if (!c->following_ns.empty())
        std::fprintf(stderr, "llamp-noise: rank %u resume (the other MPI calls after the block): %s\n", r.rank,
                     listed(c->following_ns).c_str());
    }
  }
}

int run(int argc, char** argv, int rank, llamp::tools::ToolPhase& phase) {
  CLI::App app{"llamp-noise: record the detours the CPUs of an MPI job's ranks see while they spin"};
  std::string output = "-", duration = "2s", threshold = "1us", throughput_duration = "1s";
  uint64_t resume_reps = 200;
  app.add_option("-o,--output", output, "recording to write ('-': stdout)");
  app.add_option("--duration", duration, "how long every rank spins (default 2s)");
  app.add_option("--threshold", threshold, "shortest gap between two clock reads that counts (default 1us)");
  app.add_option("--throughput-duration", throughput_duration,
                 "then how long every rank times slices of a throughput-bound kernel (default 1s; 0s: not)");
  app.add_option("--resume-reps", resume_reps,
                 "then how many times every rank times a block of MPI calls after each spin length (default 200; 0: "
                 "not)");
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : 2);
  }
  const auto duration_ns = static_cast<uint64_t>(llamp::units::parse_time_ns(duration, "--duration"));
  const auto threshold_ns = static_cast<uint64_t>(llamp::units::parse_time_ns(threshold, "--threshold"));
  if (duration_ns == 0 || threshold_ns == 0) throw llamp::Error("--duration and --threshold must be positive");
  const auto throughput_ns =
      static_cast<uint64_t>(llamp::units::parse_time_ns(throughput_duration, "--throughput-duration"));

  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const int cpu = sched_getcpu();
  phase.communicating = true;
  MPI_Barrier(MPI_COMM_WORLD);
  Recorded mine = spin(duration_ns, threshold_ns);
  // Slice summaries (slices, base, median, mean, slow fraction; all zero: not measured), after the
  // spin so neither phase disturbs the other's timing.
  std::array<double, 5> slices{};
  if (throughput_ns) {
    MPI_Barrier(MPI_COMM_WORLD);
    const llamp::ThroughputSlices t = llamp::summarize_slices(time_slices(throughput_ns));
    slices = {static_cast<double>(t.slices), static_cast<double>(t.base_ns), static_cast<double>(t.median_ns),
              static_cast<double>(t.mean_ns), t.slow_fraction};
  }
  std::vector<double> all_slices(rank == 0 ? 5 * size : 0);
  MPI_Gather(slices.data(), 5, MPI_DOUBLE, all_slices.data(), 5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  ResumeMeans resume{};
  if (resume_reps) resume = time_resume(resume_reps);
  constexpr int kResumeWords = static_cast<int>(std::tuple_size_v<ResumeMeans>);
  std::vector<uint64_t> all_resume(rank == 0 ? kResumeWords * size : 0);
  MPI_Gather(resume.data(), kResumeWords, MPI_UINT64_T, all_resume.data(), kResumeWords, MPI_UINT64_T, 0,
             MPI_COMM_WORLD);

  // Gather: counts, then the detours, the CPU, the dropped count and the host names.
  const int words = static_cast<int>(mine.flat.size());
  std::vector<int> counts(rank == 0 ? size : 0), offsets(rank == 0 ? size : 0);
  MPI_Gather(&words, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<uint64_t> all;
  if (rank == 0) {
    size_t total = 0;
    for (int r = 0; r < size; ++r) {
      offsets[r] = static_cast<int>(total);
      total += static_cast<size_t>(counts[r]);
    }
    all.resize(total);
  }
  MPI_Gatherv(mine.flat.data(), words, MPI_UINT64_T, all.data(), counts.data(), offsets.data(), MPI_UINT64_T, 0,
              MPI_COMM_WORLD);
  const int64_t info[2] = {cpu, static_cast<int64_t>(mine.dropped)};
  std::vector<int64_t> infos(rank == 0 ? 2 * size : 0);
  MPI_Gather(info, 2, MPI_INT64_T, infos.data(), 2, MPI_INT64_T, 0, MPI_COMM_WORLD);
  std::vector<char> hosts(rank == 0 ? 256 * size : 0);
  MPI_Gather(host, 256, MPI_CHAR, hosts.data(), 256, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0) return 0;

  llamp::NoiseRecording rec;
  rec.duration_ns = duration_ns;
  rec.threshold_ns = threshold_ns;
  rec.throughput_duration_ns = throughput_ns;
  rec.method = fmt::format(
      "llamp-noise: after a barrier every rank spun reading CLOCK_MONOTONIC for {} ns; each gap of at least {} ns "
      "between consecutive reads is a detour (start from the rank's first read, length)",
      duration_ns, threshold_ns);
  if (throughput_ns)
    rec.method += fmt::format(
        ". Then, after a barrier, every rank timed slices of {} passes of a banded matrix-vector product (reach {}, "
        "{} rows, L1-resident) for {} ns: throughput.base_ns is the 10th percentile of the slice times, "
        "slow_fraction the share of slices at least {}x base_ns",
        kPassesPerSlice, kKernelReach, kKernelRows, throughput_ns, llamp::kSlowSliceFactor);
  if (resume_reps)
    rec.method += fmt::format(
        ". Then every rank timed a block of eight MPI calls on MPI_COMM_SELF (Bcast, Allreduce, Allgather, "
        "Alltoall, twice) right after spinning for each length of resume.after_ns, {} times each in rotating order, "
        "each after a barrier and one untimed pass, then twelve other MPI calls on MPI_COMM_SELF (Gather, Scatter, "
        "Reduce, Scan, Gatherv, Scatterv, Allgatherv, Alltoallv, Reduce_scatter, Reduce_scatter_block, Exscan, "
        "Reduce_local, each twice) right after the block; "
        "resume.after_ns and resume.following_ns hold the mean of each length's times of the two without their top 2 "
        "%",
        resume_reps);
  for (int r = 0; r < size; ++r) {
    llamp::RankNoise n;
    n.rank = static_cast<uint32_t>(r);
    n.host = std::string(&hosts[256 * r]);
    n.cpu = infos[2 * r];
    n.dropped = static_cast<uint64_t>(infos[2 * r + 1]);
    for (int i = 0; i < counts[r]; i += 2) n.detours.emplace_back(all[offsets[r] + i], all[offsets[r] + i + 1]);
    if (const double* t = &all_slices[5 * r]; t[0] > 0)
      n.throughput = llamp::ThroughputSlices{static_cast<uint64_t>(t[0]), static_cast<uint64_t>(t[1]),
                                             static_cast<uint64_t>(t[2]), static_cast<uint64_t>(t[3]), t[4]};
    if (resume_reps) {
      llamp::ResumeCost c;
      c.reps = resume_reps;
      const uint64_t* words = &all_resume[kResumeWords * r];
      for (size_t k = 0; k < kResumeSpinsNs.size(); ++k) {
        c.after_ns.emplace_back(kResumeSpinsNs[k], words[k]);
        c.following_ns.emplace_back(kResumeSpinsNs[k], std::max<uint64_t>(1, words[kResumeSpinsNs.size() + k]));
      }
      n.resume = std::move(c);
    }
    rec.ranks.push_back(std::move(n));
  }
  const std::string text = llamp::to_json(rec).dump() + "\n";
  if (output == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    std::ofstream out(output);
    if (!(out << text) || !out.flush()) throw llamp::Error(fmt::format("{}: cannot write", output));
  }
  print_summary(rec);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return llamp::tools::mpi_tool_main("llamp-noise", argc, argv, run); }
