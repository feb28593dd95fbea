#pragma once
// Everything the generated wrappers (gen_wrappers.py) use: the argument structs, the fast
// checks and timestamps, and the one recording routine per call family.
#include <mpi.h>

#include <cstdint>

#include "family_args.hpp"
#include "llamp/trace_event.hpp"
#include "runtime.hpp"

#define LLAMP_TRACER_EXPORT __attribute__((visibility("default")))

// Nothing thrown inside the tracer may reach the application's C code.
#define LLAMP_TRACER_GUARD(expr)                        \
  do {                                                  \
    try {                                               \
      expr;                                             \
    } catch (const std::exception& llamp_e) {           \
      ::llamp::tracer::internal_error(llamp_e.what());  \
    } catch (...) {                                     \
      ::llamp::tracer::internal_error("unknown error"); \
    }                                                   \
  } while (0)

namespace llamp::tracer {
using trace::Call;

void record_init(Call c, uint64_t t0, uint64_t t1, int rc, const InitArgs& a);
void record_finalize(Call c, uint64_t t0, uint64_t t1, int rc, const NoArgs& a);
void record_pcontrol(Call c, uint64_t t0, uint64_t t1, int rc, const PcontrolArgs& a);
void record_abort_before(Call c, AbortArgs& a);
void record_abort(Call c, uint64_t t0, uint64_t t1, int rc, const AbortArgs& a);

// Point-to-point calls start their event before the MPI call, from the arguments alone, so that
// after it only the end, the request and the encoding remain (docs/tracer.md, "Stores after the
// call").
void prepare_p2p(Call c, uint64_t t0, P2PArgs& a);
void record_send(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a);
void record_recv(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a);
void record_sendrecv(Call c, uint64_t t0, uint64_t t1, int rc, const SendrecvArgs& a);
void record_isend(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a);
void record_irecv(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a);
void record_send_init(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a);
void record_recv_init(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a);
void record_start(Call c, uint64_t t0, uint64_t t1, int rc, const StartArgs& a);
void record_request_free_before(Call c, RequestArgs& a);
void record_request_free(Call c, uint64_t t0, uint64_t t1, int rc, const RequestArgs& a);
void record_cancel_before(Call c, RequestArgs& a);
void record_cancel(Call c, uint64_t t0, uint64_t t1, int rc, const RequestArgs& a);
void record_probe(Call c, uint64_t t0, uint64_t t1, int rc, const ProbeArgs& a);
void record_mprobe(Call c, uint64_t t0, uint64_t t1, int rc, const ProbeArgs& a);
void record_mrecv_before(Call c, MrecvArgs& a);
void record_mrecv(Call c, uint64_t t0, uint64_t t1, int rc, const MrecvArgs& a);

void record_completion_before(Call c, CompletionArgs& a);
void record_completion(Call c, uint64_t t0, uint64_t t1, int rc, const CompletionArgs& a);

// Collectives likewise: the event, with the bytes per block or per rank, is filled before the call.
void prepare_collective(Call c, uint64_t t0, CollArgs& a);
void record_collective(Call c, uint64_t t0, uint64_t t1, int rc, const CollArgs& a);
void record_icollective(Call c, uint64_t t0, uint64_t t1, int rc, const CollArgs& a);
void record_collective_init(Call c, uint64_t t0, uint64_t t1, int rc, const CollArgs& a);

// The mechanism behind prepare_p2p and prepare_collective: before the call, the event is started
// and filled from the arguments (`fill(event)` returns the communicator's info); after it,
// prepared_event finishes that event, or starts and fills a new one where the early start did not
// run or another event was started on this thread since (an error handler that calls MPI inside
// the call; test TracerPrepared).
template <typename Fill>
void prepare_event(Call c, uint64_t t0, PreparedEvent& p, Fill fill) {
  ThreadState& ts = thread_state();
  p.ci = fill(start_event(ts, c, t0, 0, MPI_SUCCESS));
  p.prepared = ts.events_started;
}
template <typename Fill>
trace::Event& prepared_event(ThreadState& ts, Call c, uint64_t t0, uint64_t t1, int rc, const PreparedEvent& p,
                             const CommInfo*& ci, Fill fill) {
  if (p.prepared != 0 && p.prepared == ts.events_started) [[likely]] {
    finish_event(ts, t1, rc);
    ci = p.ci;
    return ts.event;
  }
  trace::Event& e = start_event(ts, c, t0, t1, rc);
  ci = fill(e);
  return e;
}

void record_comm_create(Call c, uint64_t t0, uint64_t t1, int rc, const CommCreateArgs& a);
void record_comm_free_before(Call c, CommFreeArgs& a);
void record_comm_free(Call c, uint64_t t0, uint64_t t1, int rc, const CommFreeArgs& a);

}  // namespace llamp::tracer
