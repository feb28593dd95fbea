// The completion family: Wait/Test and their any/all/some variants. Every call is recorded with
// the ids of the requests passed in; every request that finished in this call becomes a
// Completion (with the real source, tag and size for receives).
#include "comm_registry.hpp"
#include "wrapper_support.hpp"

namespace llamp::tracer {

void record_completion_before(Call, CompletionArgs& a) {
  // The call overwrites finished requests with MPI_REQUEST_NULL: remember what they were.
  ThreadState& ts = thread_state();
  const size_t n = a.count > 0 ? static_cast<size_t>(a.count) : 0;
  ts.snapshot.resize(n);
  Runtime& rt = runtime();
  bool shared_handles = false;
  for (size_t i = 0; i < n; ++i) {
    const MPI_Request r = a.requests[i];
    ThreadState::Snapshot& s = ts.snapshot[i];
    if (r == MPI_REQUEST_NULL) {
      s = {};
    } else {
      s.key = handle_key(r);
      s.value = rt.requests.get(s.key);
      shared_handles |= (s.value.aux & kReqSharedHandle) != 0;
    }
  }
  if (!shared_handles) return;
  // Operations complete at return share one handle: the k-th occurrence in the array is taken
  // to be the k-th oldest outstanding one.
  for (size_t i = 0; i < n; ++i) {
    ThreadState::Snapshot& s = ts.snapshot[i];
    if (!(s.value.aux & kReqSharedHandle)) continue;
    size_t occurrence = 0;
    for (size_t j = 0; j < i; ++j) occurrence += ts.snapshot[j].key == s.key;
    s.value = shared_request(s.key, occurrence);
  }
}

namespace {

void complete(trace::Event& e, const ThreadState::Snapshot& s, uint32_t index, const MPI_Status& st) {
  if (s.key == 0) return;  // a null request "completes" without anything happening
  const bool persistent = s.value.aux & kReqPersistent;
  if (persistent && !(s.value.aux & kReqActive)) return;  // inactive: nothing was pending
  trace::Completion k;
  k.index = index;
  k.request = s.value.id;
  const uint64_t bits = s.value.aux & kReqBitsMask;
  const auto* ci = reinterpret_cast<const CommInfo*>(s.value.aux & ~kReqBitsMask);
  if (bits & kReqCancelled) {
    int cancelled = 0;
    PMPI_Test_cancelled(&st, &cancelled);
    k.cancelled = cancelled != 0;
  }
  if (bits & kReqSharedHandle) {
    // MPICH hands out a built-in receive handle only for MPI_PROC_NULL (nothing arrives, and
    // it leaves the status unwritten); sends behind a shared handle were complete at return.
    if (bits & kReqRecv) k.source = trace::kProcNull;
    e.completions.push_back(k);
    shared_request_done(s.key, s.value.id);
    return;
  }
  if ((bits & kReqRecv) && ci && !k.cancelled) {
    k.source = ci->peer_world(st.MPI_SOURCE);
    if (st.MPI_SOURCE != MPI_PROC_NULL) {
      k.tag = tag_of(st.MPI_TAG);
      k.bytes = received_bytes(st);
    }
  }
  e.completions.push_back(k);
  // A finished nonpersistent request is freed: MPI may reuse its handle value. A persistent
  // one becomes inactive until the next Start.
  if (s.value.id == 0) return;
  if (!persistent) {
    runtime().requests.erase(s.key);
  } else {
    runtime().requests.put(s.key, {s.value.id, s.value.aux & ~uint64_t{kReqActive | kReqCancelled}});
  }
}

}  // namespace

void record_completion(Call c, uint64_t t0, uint64_t t1, int rc, const CompletionArgs& a) {
  ThreadState& ts = thread_state();
  trace::Event& e = start_event(ts, c, t0, t1, rc);
  if (a.status_ignored) e.flags |= trace::kFlagStatusIgnored;
  const auto& snap = ts.snapshot;
  for (const auto& s : snap) e.requests.push_back(s.value.id);
  if (rc == MPI_SUCCESS) {
    switch (c) {
      case Call::Wait:
        if (!snap.empty()) complete(e, snap[0], 0, a.statuses[0]);
        break;
      case Call::Test:
        if (*a.flag && !snap.empty()) complete(e, snap[0], 0, a.statuses[0]);
        break;
      case Call::Waitall:
      case Call::Testall:
        if (c == Call::Waitall || *a.flag)
          for (size_t i = 0; i < snap.size(); ++i) complete(e, snap[i], static_cast<uint32_t>(i), a.statuses[i]);
        break;
      case Call::Waitany:
      case Call::Testany:
        if ((c == Call::Waitany || *a.flag) && *a.index != MPI_UNDEFINED && *a.index >= 0 &&
            static_cast<size_t>(*a.index) < snap.size())
          complete(e, snap[static_cast<size_t>(*a.index)], static_cast<uint32_t>(*a.index), a.statuses[0]);
        break;
      case Call::Waitsome:
      case Call::Testsome:
        if (*a.outcount != MPI_UNDEFINED)
          for (int k = 0; k < *a.outcount; ++k) {
            const int i = a.indices[k];
            if (i >= 0 && static_cast<size_t>(i) < snap.size())
              complete(e, snap[static_cast<size_t>(i)], static_cast<uint32_t>(i), a.statuses[k]);
          }
        break;
      default:
        break;
    }
  }
  emit(ts);
}

}  // namespace llamp::tracer
