#include "probes.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "stats.hpp"

namespace llamp::loggp {
namespace {

constexpr int kDataTag = 4201;
constexpr int kAckTag = 4202;
constexpr int kPeerOf[2] = {1, 0};

double now_ns() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// A 0-byte exchange that leaves both ranks at (nearly) the same point, so a probe starts with
// no message in flight and no rank still busy with the previous probe.
void align(const ProbeContext& ctx) {
  const int peer = kPeerOf[ctx.rank];
  if (ctx.rank == 0) {
    MPI_Send(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm);
    MPI_Recv(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm, MPI_STATUS_IGNORE);
    MPI_Send(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm);
  }
}

// Moves the server's samples to the client, which keeps all results.
std::vector<double> collect_on_client(const ProbeContext& ctx, std::vector<double> server_samples) {
  int count = static_cast<int>(server_samples.size());
  if (ctx.rank == 1) {
    MPI_Send(&count, 1, MPI_INT, 0, kAckTag, ctx.comm);
    MPI_Send(server_samples.data(), count, MPI_DOUBLE, 0, kAckTag, ctx.comm);
    return {};
  }
  MPI_Recv(&count, 1, MPI_INT, 1, kAckTag, ctx.comm, MPI_STATUS_IGNORE);
  std::vector<double> samples(static_cast<std::size_t>(count));
  MPI_Recv(samples.data(), count, MPI_DOUBLE, 1, kAckTag, ctx.comm, MPI_STATUS_IGNORE);
  return samples;
}

// Both ranks' values on rank 0, rank 0's first; nothing on rank 1.
std::vector<double> both_on_client(const ProbeContext& ctx, std::vector<double> mine) {
  if (ctx.rank == 1) {
    collect_on_client(ctx, std::move(mine));
    return {};
  }
  for (double v : collect_on_client(ctx, {})) mine.push_back(v);
  return mine;
}

}  // namespace

ProbeBuffers::ProbeBuffers(std::size_t max_bytes)
    : send_(std::max<std::size_t>(max_bytes, 1), 'x'), recv_(std::max<std::size_t>(max_bytes, 1), 0) {}

void spin_for_ns(double ns) {
  const double deadline = now_ns() + ns;
  while (now_ns() < deadline) {
  }
}

double clock_read_overhead_ns() {
  std::vector<double> differences;
  for (int i = 0; i < 2001; ++i) {
    const double a = now_ns();
    const double b = now_ns();
    differences.push_back(b - a);
  }
  return summarize(differences).median;
}

double share_from_client(const ProbeContext& ctx, double value) {
  MPI_Bcast(&value, 1, MPI_DOUBLE, 0, ctx.comm);
  return value;
}

std::vector<double> half_round_trips(const ProbeContext& ctx, std::size_t bytes, int reps, int warmup) {
  const int n = static_cast<int>(bytes);
  const int peer = kPeerOf[ctx.rank];
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(reps));
  align(ctx);
  for (int i = 0; i < warmup + reps; ++i) {
    if (ctx.rank == 0) {
      const double start = now_ns();
      MPI_Send(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm);
      MPI_Recv(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm, MPI_STATUS_IGNORE);
      if (i >= warmup) samples.push_back((now_ns() - start) / 2);
    } else {
      MPI_Recv(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm, MPI_STATUS_IGNORE);
      MPI_Send(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm);
    }
  }
  return samples;
}

PingPongCalls ping_pong_calls(const ProbeContext& ctx, std::size_t bytes, int reps) {
  const int n = static_cast<int>(bytes);
  const int peer = kPeerOf[ctx.rank];
  std::vector<double> trips, sends;
  trips.reserve(static_cast<std::size_t>(reps));
  sends.reserve(static_cast<std::size_t>(reps));
  align(ctx);
  for (int i = 0; i < reps; ++i) {
    if (ctx.rank == 0) {
      const double start = now_ns();
      MPI_Send(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm);
      sends.push_back(now_ns() - start);
      MPI_Recv(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm, MPI_STATUS_IGNORE);
      trips.push_back(now_ns() - start);
    } else {
      MPI_Recv(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm, MPI_STATUS_IGNORE);
      const double start = now_ns();
      MPI_Send(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm);
      sends.push_back(now_ns() - start);
    }
  }
  // Collected after the last trip, so the transfer is no part of any timing.
  std::vector<double> peer_sends = collect_on_client(ctx, ctx.rank == 1 ? sends : std::vector<double>{});
  if (ctx.rank != 0) return {};
  for (std::size_t i = 0; i < sends.size() && i < peer_sends.size(); ++i) sends[i] += peer_sends[i];
  return {std::move(trips), std::move(sends)};
}

namespace {

// The delayed receiver both overhead probes use: per repetition the client times its MPI_Send of
// `bytes` and waits for an acknowledgement; the server waits `delay_ns` after its previous
// acknowledgement, so the message is there, takes it with `take` (which returns the time it
// measured) and acknowledges. The delay covers the ack's trip, the client's send and the data's
// trip: the caller sizes it from the round trip. The samples of the measured repetitions are the
// client's send times on rank 0 and the server's times on rank 1.
template <class Take>
std::vector<double> delayed_receiver(const ProbeContext& ctx, std::size_t bytes, int reps, int warmup, double delay_ns,
                                     Take take) {
  const int n = static_cast<int>(bytes);
  const int peer = kPeerOf[ctx.rank];
  std::vector<double> mine;
  mine.reserve(static_cast<std::size_t>(reps));
  align(ctx);
  for (int i = 0; i < warmup + reps; ++i) {
    double time;
    if (ctx.rank == 0) {
      const double start = now_ns();
      MPI_Send(ctx.buffers->send(), n, MPI_BYTE, peer, kDataTag, ctx.comm);
      time = now_ns() - start;
      MPI_Recv(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm, MPI_STATUS_IGNORE);
    } else {
      spin_for_ns(delay_ns);
      time = take(n, peer);
      MPI_Send(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm);
    }
    if (i >= warmup) mine.push_back(time);
  }
  return mine;
}

}  // namespace

OverheadSamples overheads(const ProbeContext& ctx, std::size_t bytes, int reps, int warmup, double delay_ns) {
  std::vector<double> mine = delayed_receiver(ctx, bytes, reps, warmup, delay_ns, [&](int n, int peer) {
    const double start = now_ns();
    MPI_Recv(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm, MPI_STATUS_IGNORE);
    return now_ns() - start;
  });
  OverheadSamples result;
  if (ctx.rank == 0) {
    result.send_ns = std::move(mine);
    result.recv_ns = collect_on_client(ctx, {});
  } else {
    collect_on_client(ctx, std::move(mine));
  }
  return result;
}

std::vector<double> probe_overheads(const ProbeContext& ctx, std::size_t bytes, int reps, int warmup, double delay_ns) {
  std::vector<double> mine = delayed_receiver(ctx, bytes, reps, warmup, delay_ns, [&](int n, int) {
    MPI_Status status;
    const double start = now_ns();
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, ctx.comm, &status);
    const double probe_time = now_ns() - start;
    MPI_Recv(ctx.buffers->recv(), n, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, ctx.comm, MPI_STATUS_IGNORE);
    return probe_time;
  });
  if (ctx.rank == 0) return collect_on_client(ctx, {});
  collect_on_client(ctx, std::move(mine));
  return {};
}

namespace {

// One burst: the server pre-posts `burst` receives and says so; the client times `burst`
// sends plus the server's "all arrived" reply.
double one_burst(const ProbeContext& ctx, std::size_t bytes, int burst, std::vector<MPI_Request>& requests) {
  const int n = static_cast<int>(bytes);
  const int peer = kPeerOf[ctx.rank];
  if (ctx.rank == 1) {
    for (int k = 0; k < burst; ++k)
      MPI_Irecv(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm, &requests[static_cast<std::size_t>(k)]);
    MPI_Send(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm);
    MPI_Waitall(burst, requests.data(), MPI_STATUSES_IGNORE);
    MPI_Send(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm);
    return 0;
  }
  MPI_Recv(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm, MPI_STATUS_IGNORE);
  const double start = now_ns();
  for (int k = 0; k < burst; ++k) MPI_Send(ctx.buffers->send(), n, MPI_BYTE, peer, kDataTag, ctx.comm);
  MPI_Recv(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm, MPI_STATUS_IGNORE);
  return now_ns() - start;
}

}  // namespace

std::vector<double> burst_gaps(const ProbeContext& ctx, std::size_t bytes, int burst, int reps) {
  std::vector<MPI_Request> requests(static_cast<std::size_t>(burst));
  std::vector<double> samples;
  align(ctx);
  one_burst(ctx, bytes, burst, requests);  // warm-up
  for (int i = 0; i < reps; ++i) {
    const double single = one_burst(ctx, bytes, 1, requests);
    const double many = one_burst(ctx, bytes, burst, requests);
    if (ctx.rank == 0) samples.push_back((many - single) / (burst - 1));
  }
  return samples;
}

std::vector<double> collective_overheads(const ProbeContext& ctx, int reps, int block) {
  const int peer = kPeerOf[ctx.rank];
  double in = 1.0, out = 0.0;
  auto timed = [&](auto&& call) {
    const double start = now_ns();
    for (int k = 0; k < block; ++k) call();
    return now_ns() - start;
  };
  auto allreduce = [&] { MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, ctx.comm); };
  auto exchange_8 = [&] {
    MPI_Sendrecv(&in, 1, MPI_DOUBLE, peer, kDataTag, &out, 1, MPI_DOUBLE, peer, kDataTag, ctx.comm, MPI_STATUS_IGNORE);
  };
  auto barrier = [&] { MPI_Barrier(ctx.comm); };
  auto exchange_0 = [&] {
    MPI_Sendrecv(nullptr, 0, MPI_BYTE, peer, kDataTag, nullptr, 0, MPI_BYTE, peer, kDataTag, ctx.comm,
                 MPI_STATUS_IGNORE);
  };
  std::vector<double> samples;
  align(ctx);
  for (int i = 0; i <= reps; ++i) {  // repetition 0 warms up
    const double t_allreduce = timed(allreduce);
    const double t_exchange_8 = timed(exchange_8);
    const double t_barrier = timed(barrier);
    const double t_exchange_0 = timed(exchange_0);
    if (i > 0 && ctx.rank == 0)
      samples.push_back((t_allreduce - t_exchange_8 + t_barrier - t_exchange_0) / (2.0 * block));
  }
  return samples;
}

std::vector<double> busy_wait_overruns(const ProbeContext& ctx, double wait_ns, int waits) {
  align(ctx);
  double overrun = 0;
  for (int i = 0; i < waits; ++i) {
    const double deadline = now_ns() + wait_ns;
    double t;
    while ((t = now_ns()) < deadline) {
    }
    overrun += t - deadline;
  }
  return both_on_client(ctx, {waits > 0 ? overrun / (waits * wait_ns) : 0.0});
}

std::vector<double> cold_copies(const ProbeContext& ctx, std::size_t bytes, double wait_ns, int reps) {
  // Page-aligned: heap blocks a few bytes apart modulo 4 KiB made a hot 16 KiB copy 20x slower on
  // an AMD EPYC VM (`rep movsb` on 4K-aliased source and destination), which hides what is measured.
  struct Freed {
    void operator()(char* p) const { std::free(p); }
  };
  const std::size_t rounded = (bytes + 4095) / 4096 * 4096;
  std::unique_ptr<char, Freed> from(static_cast<char*>(std::aligned_alloc(4096, rounded)));
  std::unique_ptr<char, Freed> to(static_cast<char*>(std::aligned_alloc(4096, rounded)));
  if (!from || !to) throw std::bad_alloc();
  std::memset(from.get(), 1, rounded);
  std::memset(to.get(), 0, rounded);
  auto timed_copy = [&] {
    const double start = now_ns();
    std::memcpy(to.get(), from.get(), bytes);
    asm volatile("" : : "r"(to.get()) : "memory");  // the copy is not dead
    return now_ns() - start;
  };
  std::vector<double> hot, cold;
  align(ctx);
  timed_copy();
  for (int i = 0; i < reps; ++i) hot.push_back(timed_copy());
  align(ctx);
  for (int i = 0; i < reps; ++i) {
    spin_for_ns(wait_ns);
    cold.push_back(timed_copy());
  }
  return both_on_client(ctx, {summarize(hot).median, summarize(cold).median});
}

std::vector<double> cold_handshakes(const ProbeContext& ctx, std::size_t bytes, double compute_ns,
                                    std::size_t sweep_bytes, int reps) {
  const int n = static_cast<int>(bytes);
  const int peer = kPeerOf[ctx.rank];
  constexpr std::size_t kLine = 64 / sizeof(double), kChunk = 64 * 1024 / sizeof(double);
  std::vector<double> sweep(std::max(kChunk, sweep_bytes / sizeof(double) / kChunk * kChunk), 1.0);
  std::size_t next = 0;
  auto compute = [&](bool sweeping) {
    if (!sweeping) return spin_for_ns(compute_ns);
    const double start = now_ns();
    do {
      for (std::size_t i = next; i < next + kChunk; i += kLine) sweep[i] += 1.0;
      next = (next + kChunk) % sweep.size();
      asm volatile("" : : "r"(sweep.data()) : "memory");  // the writes are not dead
    } while (now_ns() - start < compute_ns);
  };
  std::vector<double> waits[2];
  align(ctx);
  for (int i = 0; i < 2 * (reps + 1); ++i) {  // the first pair warms up
    const bool sweeping = i % 2 == 1;
    MPI_Request requests[2];
    MPI_Irecv(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm, &requests[0]);
    MPI_Isend(ctx.buffers->send(), n, MPI_BYTE, peer, kDataTag, ctx.comm, &requests[1]);
    compute(sweeping);
    const double start = now_ns();
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
    if (i >= 2) waits[sweeping].push_back(now_ns() - start);
  }
  std::vector<double> medians;
  for (std::vector<double>& mine : waits) {
    const std::vector<double> server = collect_on_client(ctx, ctx.rank == 1 ? mine : std::vector<double>{});
    if (ctx.rank != 0) continue;
    for (std::size_t i = 0; i < mine.size() && i < server.size(); ++i) mine[i] = std::min(mine[i], server[i]);
    medians.push_back(summarize(mine).median);
  }
  return medians;
}

int send_completes_unmatched(const ProbeContext& ctx, std::size_t bytes, int test_calls) {
  const int n = static_cast<int>(bytes);
  const int peer = kPeerOf[ctx.rank];
  align(ctx);
  if (ctx.rank == 1) {
    MPI_Recv(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm, MPI_STATUS_IGNORE);  // "go"
    MPI_Recv(ctx.buffers->recv(), n, MPI_BYTE, peer, kDataTag, ctx.comm, MPI_STATUS_IGNORE);
    return 0;
  }
  MPI_Request request;
  MPI_Isend(ctx.buffers->send(), n, MPI_BYTE, peer, kDataTag, ctx.comm, &request);
  int completed = 0;
  for (int i = 0; i < test_calls && !completed; ++i) MPI_Test(&request, &completed, MPI_STATUS_IGNORE);
  MPI_Send(nullptr, 0, MPI_BYTE, peer, kAckTag, ctx.comm);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  return completed;
}

}  // namespace llamp::loggp
