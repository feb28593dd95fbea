#pragma once
// The timing experiments behind llamp-loggp, Netgauge style (Hoefler et al., "Low-overhead
// LogGP parameter assessment"): each is a short exchange between rank 0 (the client, which
// keeps the samples) and rank 1 (the server). Both ranks call every probe with the same
// arguments; samples come back on rank 0 only (rank 1 gets an empty vector), in nanoseconds.
#include <mpi.h>

#include <cstddef>
#include <vector>

namespace llamp::loggp {

// One message buffer per rank, large enough for the biggest size probed. Touched once so page
// faults stay out of the timings.
class ProbeBuffers {
 public:
  explicit ProbeBuffers(std::size_t max_bytes);
  char* send() { return send_.data(); }
  char* recv() { return recv_.data(); }

 private:
  std::vector<char> send_;
  std::vector<char> recv_;
};

struct ProbeContext {
  MPI_Comm comm;
  int rank;  // 0 = client, 1 = server
  ProbeBuffers* buffers;
};

// Spins (no sleep, no MPI progress) until `ns` nanoseconds have passed: a delay the peer's
// messages can arrive during without this rank's CPU doing anything for them.
void spin_for_ns(double ns);

// Half round trips of a ping-pong with `bytes`-byte messages: the model's o_s + L + (s-1)G + o_r.
// Each rank receives into and sends back from one buffer, as Netgauge's ping-pong does: on the
// 2-vCPU VM that costs a 256 KiB rendezvous message 49-51 us against 21 us with separate,
// untouched buffers, and it is what an application that sends what it received pays.
std::vector<double> half_round_trips(const ProbeContext& ctx, std::size_t bytes, int reps, int warmup);

// The same ping-pong, timed per call for the transport's first use: rank 0's round trips, and
// the time inside each rank's MPI_Send (the sender's share of a message's cost: copying into the
// transport's buffers, where their first touch faults). All on rank 0; rank 1 gets empty vectors.
struct PingPongCalls {
  std::vector<double> round_trip_ns;  // rank 0, per trip
  std::vector<double> send_ns;        // per trip: rank 0's MPI_Send + rank 1's MPI_Send
};
PingPongCalls ping_pong_calls(const ProbeContext& ctx, std::size_t bytes, int reps);

struct OverheadSamples {
  std::vector<double> send_ns;  // time inside MPI_Send on the client
  std::vector<double> recv_ns;  // time inside MPI_Recv on the server once the message is there
};

// Client times MPI_Send; the server spins `delay_ns` before posting MPI_Recv, so the message has
// already arrived and MPI_Recv costs only the receive overhead. `delay_ns` must exceed the time
// the message needs to arrive (the caller derives it from the measured round trip). Above the
// rendezvous threshold the send time includes waiting for the late receiver.
OverheadSamples overheads(const ProbeContext& ctx, std::size_t bytes, int reps, int warmup, double delay_ns);

// Time per message of a burst of `burst` back-to-back MPI_Sends into pre-posted receives,
// with the one-message latency removed: (T(burst) - T(1)) / (burst - 1) per repetition. This is
// max(o_s, g): the gap only shows when the network, not the CPU, limits the message rate.
std::vector<double> burst_gaps(const ProbeContext& ctx, std::size_t bytes, int burst, int reps);

// Whether a `bytes`-byte send can complete before its receiver has posted the receive (eager)
// or not (rendezvous): the client starts MPI_Isend and calls MPI_Test `test_calls` times while
// the server is provably not receiving yet (it waits for a "go" message the client sends only
// afterwards). Counting calls instead of timing makes the answer immune to a loaded machine
// descheduling either rank. Returns 1 (completed: eager) or 0 on rank 0, and 0 on rank 1.
int send_completes_unmatched(const ProbeContext& ctx, std::size_t bytes, int test_calls);

// What a two-rank MPI_Allreduce of one double and an MPI_Barrier cost per call beyond the
// point-to-point exchange their algorithms make at two ranks (recursive doubling, dissemination:
// one MPI_Sendrecv of 8 and of 0 bytes with the peer). That excess is the collective's own CPU
// time (argument checks, algorithm selection, buffers, the reduction), o_coll, which the LogGP
// messages of the collective do not contain. Each repetition times `block` calls of each of the
// four in turn; a sample is the mean excess per call of the two collectives. Client's samples.
std::vector<double> collective_overheads(const ProbeContext& ctx, int reps, int block);

// What a blocking MPI_Probe (any source, any tag) costs when its `bytes`-byte message is already
// there: the server waits `delay_ns` after its previous acknowledgement (as in overheads()), then
// times the probe and receives the message untimed. That is o_probe, the CPU time a master that
// probes for results spends before its receive, which the LogGP receive overhead does not contain.
// Client's samples (the server's times, on rank 0).
std::vector<double> probe_overheads(const ProbeContext& ctx, std::size_t bytes, int reps, int warmup, double delay_ns);

// How much longer than asked a busy wait of `wait_ns` takes on this machine, as a fraction of
// `wait_ns`: both ranks spin `waits` times at once and the overruns are summed per rank (returns
// {rank 0's, rank 1's} on rank 0). A spin overruns only when the CPU was taken away (interrupts,
// the host of a VM): a rank waiting out ΔL in MPI loses as much, which no model of the
// application predicts, so measured latency responses exceed predicted ones by about this much.
std::vector<double> busy_wait_overruns(const ProbeContext& ctx, double wait_ns, int waits);

// What a working set costs right after a long wait against right after the previous use: both ranks
// at once copy `bytes` between two page-aligned buffers (together inside the core's L1 + L2) `reps`
// times hot, then `reps` times each right after spinning `wait_ns` on the clock. Returns {hot, after
// the wait} medians in ns per rank ({rank 0's two, rank 1's two} on rank 0). On a machine whose cores
// other work shares (a VM's host), the caches empty while a rank spins: its work after a long wait
// costs more than the trace of a run with short waits says, which no model of the application holds
// (docs/injector.md, "Waiting CPUs come back cold").
std::vector<double> cold_copies(const ProbeContext& ctx, std::size_t bytes, double wait_ns, int reps);

// What a rendezvous handshake costs right after the application computed over a working set larger
// than the caches, against right after a computation that touched nothing. Both ranks post
// MPI_Irecv and MPI_Isend of `bytes` (above S) to each other, compute for `compute_ns`, then time
// MPI_Waitall, `reps` times spinning on the clock and `reps` times sweeping `sweep_bytes` (one
// write per cache line, continuing where the previous sweep stopped), interleaved. The later of
// the two ranks to arrive starts the handshake its peer's request waits for: per repetition the
// shorter of the two ranks' MPI_Waitall. Returns {spinning, sweeping} medians of it on rank 0.
std::vector<double> cold_handshakes(const ProbeContext& ctx, std::size_t bytes, double compute_ns,
                                    std::size_t sweep_bytes, int reps);

// Median cost of reading the clock once (two back-to-back reads), subtracted from every timed
// interval: with overheads of ~100 ns the 20-30 ns of a clock read is not negligible.
double clock_read_overhead_ns();

// Broadcasts a value from rank 0 to rank 1 so both ranks take the same decisions.
double share_from_client(const ProbeContext& ctx, double value);

}  // namespace llamp::loggp
