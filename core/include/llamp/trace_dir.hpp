#pragma once
// A trace directory: meta.json (the run) plus one rank-NNNNN.llt file per rank.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llamp/trace_file.hpp"

namespace llamp::trace {

inline constexpr const char* kMetaFileName = "meta.json";

struct TraceMeta {
  uint32_t version = kFormatVersion;
  uint32_t ranks = 0;
  std::vector<std::string> hosts;    // per rank
  std::vector<std::string> command;  // argv of rank 0
  std::string mpi_library;           // MPI_Get_library_version
  std::string clock = "CLOCK_MONOTONIC";
  uint64_t start_unix_ns = 0;
  std::string thread_level;           // as granted by MPI_Init_thread
  std::vector<std::string> counters;  // counter names, in the order of Event::counters
  std::string job_id;                 // SLURM_JOB_ID or similar, if any
};

// The tracer's own time on one rank that the trace's timestamps cannot leave out (tracer-cost-NNNNN.json,
// written at MPI_Finalize; docs/FORMATS.md), from a sample of the rank's calls.
struct TracerCost {
  uint64_t samples = 0;
  // Per event: encoding it, after the call's end stamp, so inside the gap to the next call.
  double encode_ns = 0;
  // Per call: building its event, from the MPI library's return to the end stamp, so inside the
  // call's duration.
  std::map<std::string, double, std::less<>> record_ns;
  // The trace writer's work while the application ran (before MPI_Finalize): blocks compressed and
  // written, and its thread's CPU time for them, which the rank's core lost (0 in older files).
  uint64_t blocks_written_during_run = 0;
  uint64_t write_cpu_ns_during_run = 0;
};
std::string tracer_cost_file_name(uint32_t rank);
void write_tracer_cost(const std::string& dir, uint32_t rank, const TracerCost& cost);
// nullopt when the file does not exist (a trace from before it, or a rank that did not finalize);
// throws llamp::Error naming the file when it is malformed.
std::optional<TracerCost> read_tracer_cost(const std::string& dir, uint32_t rank);

// MPI calls a rank made that llamp does not trace (one-sided, partitioned, ...):
// untraced-NNNNN.json, written at MPI_Finalize only by a rank that made any (docs/FORMATS.md).
struct UntracedCall {
  std::string name;  // "MPI_Put"
  std::string what;  // "one-sided communication"
  uint64_t count = 0;
};
std::string untraced_calls_file_name(uint32_t rank);
void write_untraced_calls(const std::string& dir, uint32_t rank, const std::vector<UntracedCall>& calls);
// Empty when the file does not exist; throws llamp::Error naming the file when it is malformed.
std::vector<UntracedCall> read_untraced_calls(const std::string& dir, uint32_t rank);
// "MPI_Put x12, MPI_Win_fence x4 (one-sided communication)".
std::string describe_untraced_calls(const std::vector<UntracedCall>& calls);

void write_meta(const std::string& dir, const TraceMeta& meta);
// Throws llamp::Error naming the file on missing or malformed metadata.
TraceMeta read_meta(const std::string& dir);

// Opens every rank of a trace directory.
struct TraceDir {
  std::string path;
  TraceMeta meta;
  std::vector<RankTraceReader> ranks;

  static TraceDir open(const std::string& dir);
  std::vector<uint32_t> truncated_ranks() const;
};

}  // namespace llamp::trace
