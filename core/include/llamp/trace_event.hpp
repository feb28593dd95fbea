#pragma once
// The trace's data model: one Event per intercepted MPI call. The byte layout
// of events, blocks and files is in docs/FORMATS.md ("Trace format").
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace llamp::trace {

// Stable call ids (the order of mpi_calls.def).
enum class Call : uint8_t {
#define LLAMP_CALL(name, family) name,
#include "llamp/mpi_calls.def"
#undef LLAMP_CALL
  Count_
};
inline constexpr unsigned kNumCalls = static_cast<unsigned>(Call::Count_);

enum class Family : uint8_t {
  init,
  finalize,
  pcontrol,
  abort,
  send,
  recv,
  sendrecv,
  isend,
  irecv,
  send_init,
  recv_init,
  start,
  request_free,
  probe,
  mprobe,
  mrecv,
  completion,
  cancel,
  collective,
  icollective,
  collective_init,  // MPI 4.0 persistent collectives: each MPI_Start of the request is an icollective
  comm_create,
  comm_free
};

// "MPI_Isend" for Call::Isend.
std::string_view call_name(Call c);

// Inline: schedgen asks it several times for every event it reads.
inline constexpr std::array<Family, kNumCalls> kCallFamilies = {
#define LLAMP_CALL(name, family) Family::family,
#include "llamp/mpi_calls.def"
#undef LLAMP_CALL
};
inline Family call_family(Call c) { return kCallFamilies[static_cast<size_t>(c)]; }
// Accepts "MPI_Isend" or "Isend".
std::optional<Call> call_from_name(std::string_view name);
// The nonblocking collective that starting a persistent collective's request performs
// (MPI_Allreduce_init -> MPI_Iallreduce); nullopt for any other call.
std::optional<Call> started_collective(Call init);

// Special rank values (peer, root, source fields). Real ranks are world ranks >= 0.
inline constexpr int32_t kNoRank = -1000;  // field absent
inline constexpr int32_t kAnySource = -1;  // MPI_ANY_SOURCE as posted
inline constexpr int32_t kProcNull = -2;   // MPI_PROC_NULL
inline constexpr int32_t kRootLocal = -3;  // MPI_ROOT (intercomm collectives)
inline constexpr int32_t kAnyTag = -1;     // MPI_ANY_TAG as posted

// Communicator ids are the same on every member rank.
inline constexpr uint64_t kCommWorld = 0;
inline constexpr uint64_t kCommNull = UINT64_MAX;
// MPI_COMM_SELF of world rank r.
constexpr uint64_t comm_self_id(uint32_t world_rank) { return (uint64_t{1} << 62) | world_rank; }

// Event flags.
enum EventFlag : uint32_t {
  kFlagInPlace = 1u << 0,        // MPI_IN_PLACE was passed as a buffer
  kFlagIntercomm = 1u << 1,      // the communicator (or the new one) is an intercommunicator
  kFlagStatusIgnored = 1u << 2,  // the application passed MPI_STATUS(ES)_IGNORE (we still record it)
  kFlagFailed = 1u << 3,         // the MPI call returned an error code
  kFlagPaused = 1u << 4,         // Pcontrol: tracing paused after this event
  kFlagLargeCount = 1u << 5,     // the MPI 4.0 large-count variant (MPI_Send_c for MPI_Send, ...)
};

// One finished request (or the status of a blocking receive/probe).
struct Completion {
  uint32_t index = 0;        // position in the array passed to the completion call
  uint64_t request = 0;      // request id (0 for a blocking receive's status)
  int32_t source = kNoRank;  // world rank the message came from (receives)
  int32_t tag = kAnyTag;     // actual tag (receives)
  uint64_t bytes = 0;        // actual received bytes (receives)
  bool cancelled = false;
  friend bool operator==(const Completion&, const Completion&) = default;
};

struct Event {
  Call call = Call::Init;
  uint32_t thread = 0;      // 0 = the thread that called MPI_Init
  uint64_t t_start_ns = 0;  // CLOCK_MONOTONIC
  uint64_t t_end_ns = 0;
  uint64_t comm = kCommWorld;
  int32_t peer = kNoRank;               // destination (sends) or posted source (receives), as a world rank
  int32_t tag = kNoRank;                // send tag or posted receive tag
  uint64_t bytes = 0;                   // send bytes, posted receive bytes, or collective send bytes
  int32_t root = kNoRank;               // collective root (world rank)
  int32_t peer2 = kNoRank;              // Sendrecv: source of the receive half
  int32_t tag2 = kNoRank;               // Sendrecv: receive tag
  uint64_t bytes2 = 0;                  // Sendrecv / collectives: receive bytes
  uint64_t request = 0;                 // request id created by this call (Isend, Irecv, *_init, Mprobe message, ...)
  std::vector<uint64_t> requests;       // request ids passed in (Start(all), Wait*, Test*, Cancel, Mrecv)
  std::vector<Completion> completions;  // what finished, with receive status
  std::vector<uint64_t> send_counts;    // v/w collectives: bytes to each comm rank (neighbor: each destination)
  std::vector<uint64_t> recv_counts;    // v/w collectives: bytes from each comm rank (neighbor: each source)
  std::vector<int32_t> sources;         // neighbor collectives: in-neighbors as world ranks, in topology order
  std::vector<int32_t> destinations;    // neighbor collectives: out-neighbors (kProcNull where MPI_PROC_NULL)
  uint64_t new_comm = kCommNull;        // communicator constructors
  std::vector<int32_t> members;         // new comm's members as world ranks, in comm rank order
  std::vector<int32_t> remote_members;  // intercomms: remote group
  std::vector<int64_t> counters;        // hardware/software counter deltas since the previous call
  uint32_t flags = 0;
  int64_t value = 0;  // Pcontrol level, Comm_split color, Abort error code

  friend bool operator==(const Event&, const Event&) = default;
};

}  // namespace llamp::trace
