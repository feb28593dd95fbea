// Init, Finalize, Pcontrol and Abort: opening the trace (directory, files, meta.json), pausing
// and resuming, and closing it so that what was recorded reaches the disk.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "comm_registry.hpp"
#include "counters.hpp"
#include "llamp/trace_dir.hpp"
#include "llamp/units.hpp"
#include "wrapper_support.hpp"

namespace llamp::tracer {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kDefaultBufferBytes = 4u << 20;
constexpr size_t kMaxChunkBytes = 64u << 10;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

std::string job_id() {
  for (const char* name : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "FLUX_JOB_ID"}) {
    std::string v = env(name);
    if (!v.empty()) return v;
  }
  return {};
}

// Rank 0's choice: LLAMP_TRACE_DIR, else a new llamp-trace-<job id or time-pid> in the cwd.
std::string choose_dir() {
  std::string dir = env("LLAMP_TRACE_DIR");
  if (dir.empty()) {
    std::string stem = job_id();
    if (stem.empty()) {
      char when[32];
      std::time_t now = std::time(nullptr);
      std::strftime(when, sizeof when, "%Y%m%d-%H%M%S", std::localtime(&now));
      stem = std::string(when) + "-" + std::to_string(getpid());
    }
    dir = "llamp-trace-" + stem;
    std::string candidate = dir;
    for (int i = 1; fs::exists(candidate); ++i) candidate = dir + "-" + std::to_string(i);
    dir = candidate;
  }
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  return ec ? dir : abs.string();
}

std::vector<std::string> command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> out;
  std::string arg;
  while (std::getline(in, arg, '\0')) out.push_back(arg);
  return out;
}

std::string thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "unknown";
  }
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  PMPI_Get_library_version(text, &len);
  std::string v(text, static_cast<size_t>(std::max(0, len)));
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ' || v.back() == '\0')) v.pop_back();
  return v;
}

// Broadcasts a string from `root` of comm.
std::string bcast_string(std::string s, int root, MPI_Comm comm) {
  int n = static_cast<int>(s.size());
  PMPI_Bcast(&n, 1, MPI_INT, root, comm);
  s.resize(static_cast<size_t>(n));
  if (n > 0) PMPI_Bcast(s.data(), n, MPI_CHAR, root, comm);
  return s;
}

std::vector<std::string> gather_hosts(int rank, int size, MPI_Comm comm) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  PMPI_Get_processor_name(name, &len);
  std::vector<char> all(rank == 0 ? static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME : 1);
  PMPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm);
  std::vector<std::string> hosts;
  if (rank == 0)
    for (int r = 0; r < size; ++r) hosts.emplace_back(all.data() + static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME);
  return hosts;
}

void on_exit_without_finalize() {
  // The application ended without MPI_Finalize: write what was recorded, but no end block,
  // so readers report the trace as truncated.
  if (!g_initialized.exchange(false)) return;
  g_tracing.store(false);
  flush_all_threads();
  if (runtime().writer) runtime().writer->close(false);
}

void shutdown(bool complete) {
  if (!g_initialized.exchange(false)) return;
  g_tracing.store(false);
  flush_all_threads();
  if (runtime().writer) runtime().writer->close(complete);
  if (complete && runtime().writer) {
    try {
      trace::TracerCost cost = tracer_cost();
      const WriterActivity writes = runtime().writer->during_run();
      cost.blocks_written_during_run = writes.blocks;
      cost.write_cpu_ns_during_run = writes.cpu_ns;
      trace::write_tracer_cost(runtime().dir, static_cast<uint32_t>(runtime().world_rank), cost);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "llamp-trace: rank %d: %s (the trace itself is complete)\n", runtime().world_rank, e.what());
    }
    const auto untraced = untraced_calls_made();
    if (!untraced.empty()) {
      std::fprintf(stderr,
                   "llamptrace: rank %d made MPI calls llamp does not trace: %s; a graph of this trace would lack "
                   "their communication\n",
                   runtime().world_rank, trace::describe_untraced_calls(untraced).c_str());
      try {
        trace::write_untraced_calls(runtime().dir, static_cast<uint32_t>(runtime().world_rank), untraced);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "llamp-trace: rank %d: %s\n", runtime().world_rank, e.what());
      }
    }
  }
}

// Opens the trace on every rank; on any failure every rank agrees to run untraced and rank 0
// prints one message. Collective over MPI_COMM_WORLD (PMPI only).
void open_trace(const InitArgs& a, uint64_t t0, uint64_t t1, trace::Call call) {
  Runtime& rt = runtime();
  tsc_calibration_start();
  PMPI_Comm_rank(MPI_COMM_WORLD, &rt.world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &rt.world_size);
  const int rank = rt.world_rank, size = rt.world_size;
  int provided = MPI_THREAD_SINGLE;
  PMPI_Query_thread(&provided);
  g_thread_multiple = provided == MPI_THREAD_MULTIPLE;
  comm_registry_init(rank, size);
  ThreadState& ts = thread_state();  // MPI_Init's thread becomes thread 0
  MPI_Comm comm;
  PMPI_Comm_dup(MPI_COMM_WORLD, &comm);  // the tracer's own traffic never meets the application's

  std::string error;
  uint64_t buffer_bytes = kDefaultBufferBytes;
  try {
    std::string b = env("LLAMP_TRACE_BUFFER");
    if (!b.empty()) buffer_bytes = units::parse_size_bytes(b, "LLAMP_TRACE_BUFFER", "B");
    if (buffer_bytes < 64 * 1024) error = "LLAMP_TRACE_BUFFER=" + b + " is below the minimum of 64KiB";
  } catch (const std::exception& e) {
    error = e.what();
  }
  Flush flush = Flush::kWhenFull;
  if (const std::string f = env("LLAMP_TRACE_FLUSH"); f == "every-chunk")
    flush = Flush::kEveryChunk;
  else if (!f.empty() && f != "when-full" && error.empty())
    error = "LLAMP_TRACE_FLUSH=" + f + " is neither when-full nor every-chunk";

  std::string dir;
  if (rank == 0) {
    dir = choose_dir();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec && error.empty()) error = "cannot create trace directory " + dir + ": " + ec.message();
  }
  dir = bcast_string(dir, 0, comm);

  std::unique_ptr<trace::TraceFileWriter> file;
  const std::string file_path = (fs::path(dir) / trace::rank_file_name(static_cast<uint32_t>(rank))).string();
  if (error.empty()) {
    try {
      file =
          std::make_unique<trace::TraceFileWriter>(file_path, static_cast<uint32_t>(rank), static_cast<uint32_t>(size));
    } catch (const std::exception& e) {
      error = e.what();
    }
  }

  std::vector<std::string> counter_names = counters_init(env("LLAMP_TRACE_PAPI"), rank == 0);
  std::vector<std::string> hosts = gather_hosts(rank, size, comm);
  // Every rank calibrates (and so agrees on the clock) before rank 0 describes it.
  const char* clock = tsc_calibration_finish();
  if (rank == 0 && error.empty()) {
    trace::TraceMeta m;
    m.ranks = static_cast<uint32_t>(size);
    m.hosts = hosts;
    m.command = command_line();
    m.mpi_library = library_version();
    m.clock = clock;
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    m.start_unix_ns = static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
    m.thread_level = thread_level_name(provided);
    m.counters = counter_names;
    m.job_id = job_id();
    try {
      trace::write_meta(dir, m);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }

  // All ranks agree: the first failing rank (if any) explains, rank 0 prints.
  int first_failed = error.empty() ? size : rank, agreed = size;
  PMPI_Allreduce(&first_failed, &agreed, 1, MPI_INT, MPI_MIN, comm);
  if (agreed < size) {
    std::string why = bcast_string(error, agreed, comm);
    if (rank == 0)
      std::fprintf(stderr, "llamptrace: cannot trace this run (rank %d: %s); the application runs untraced\n", agreed,
                   why.c_str());
    if (file) {
      file.reset();
      std::remove(file_path.c_str());
    }
    if (rank == 0 && error.empty()) std::remove((fs::path(dir) / trace::kMetaFileName).c_str());
    PMPI_Comm_free(&comm);
    g_counters_on = false;
    return;
  }
  PMPI_Comm_free(&comm);

  check_builtin_type_sizes();
  const size_t chunk = std::min<size_t>(kMaxChunkBytes, buffer_bytes / 4);
  rt.dir = dir;
  rt.writer = std::make_unique<ChunkWriter>(std::move(file), static_cast<uint32_t>(rank), chunk,
                                            std::max<size_t>(4, buffer_bytes / chunk), flush);
  std::atexit(on_exit_without_finalize);
  g_initialized.store(true);
  g_tracing.store(true);

  if (g_counters_on) {
    // Counting starts here: the Init event carries zero deltas, later events real ones.
    counters_begin(ts);
    counters_end(ts);
    std::fill(ts.counters_delta.begin(), ts.counters_delta.end(), 0);
  }
  // The tracer's own setup (clock calibration, communicator agreement, host gather, meta.json:
  // ~50 ms) belongs to MPI_Init, not to the application's first computation, which schedgen
  // measures from Init's end: an untraced run does not have it.
  t1 = now_ns();
  trace::Event& e = start_event(ts, call, t0, t1, MPI_SUCCESS);
  if (call == trace::Call::Init_thread) e.value = a.required;
  emit(ts);
}

}  // namespace

void record_init(Call c, uint64_t t0, uint64_t t1, int rc, const InitArgs& a) {
  if (rc != MPI_SUCCESS || g_initialized.load()) return;
  open_trace(a, t0, t1, c);
}

void record_finalize(Call c, uint64_t t0, uint64_t t1, int rc, const NoArgs&) {
  if (!g_initialized.load()) return;
  if (tracing()) {
    ThreadState& ts = thread_state();
    start_event(ts, c, t0, t1, rc);
    emit(ts);
  }
  shutdown(true);
}

void record_pcontrol(Call c, uint64_t t0, uint64_t t1, int rc, const PcontrolArgs& a) {
  if (!g_initialized.load() || g_broken.load()) return;
  if (a.level != 0) g_tracing.store(true);
  ThreadState& ts = thread_state();
  trace::Event& e = start_event(ts, c, t0, t1, rc);
  e.value = a.level;
  if (a.level == 0) e.flags |= trace::kFlagPaused;
  emit(ts);
  if (a.level == 0) g_tracing.store(false);
}

void record_abort_before(Call c, AbortArgs& a) {
  if (!g_initialized.load()) return;
  if (tracing()) {
    // PMPI_Abort does not return: record now and close the file first.
    const uint64_t t = now_ns();
    ThreadState& ts = thread_state();
    trace::Event& e = start_event(ts, c, t, t, MPI_SUCCESS);
    e.comm = comm_id_of(a.comm);
    e.value = a.errorcode;
    emit(ts);
  }
  shutdown(true);
}

void record_abort(Call, uint64_t, uint64_t, int, const AbortArgs&) {}

}  // namespace llamp::tracer
