// Recording routines of the point-to-point families: blocking, nonblocking and persistent
// sends and receives, Start, Request_free, Cancel, probes and matched receives.
#include "comm_registry.hpp"
#include "wrapper_support.hpp"

namespace llamp::tracer {
namespace {

// What a received message turned out to be, from its status, as world rank / tag / bytes.
trace::Completion received(const CommInfo* ci, const MPI_Status& st, uint32_t index, uint64_t request) {
  trace::Completion k;
  k.index = index;
  k.request = request;
  k.source = ci ? ci->peer_world(st.MPI_SOURCE) : trace::kNoRank;
  k.tag = st.MPI_SOURCE == MPI_PROC_NULL ? trace::kAnyTag : tag_of(st.MPI_TAG);
  k.bytes = received_bytes(st);
  return k;
}

// Send-like fields: comm, peer, tag, bytes.
const CommInfo* fill_p2p(trace::Event& e, const P2PArgs& a) {
  const CommInfo* ci = comm_info(a.comm);
  e.comm = ci->id;
  e.peer = ci->peer_world(a.peer);
  e.tag = tag_of(a.tag);
  e.bytes = bytes_of(a.count, a.datatype);
  return ci;
}

}  // namespace

void prepare_p2p(Call c, uint64_t t0, P2PArgs& a) {
  prepare_event(c, t0, a, [&a](trace::Event& e) { return fill_p2p(e, a); });
}

namespace {
trace::Event& p2p_event(ThreadState& ts, Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a,
                        const CommInfo*& ci) {
  return prepared_event(ts, c, t0, t1, rc, a, ci, [&a](trace::Event& e) { return fill_p2p(e, a); });
}
}  // namespace

void record_send(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a) {
  ThreadState& ts = thread_state();
  const CommInfo* ci;
  p2p_event(ts, c, t0, t1, rc, a, ci);
  emit(ts);
}

void record_recv(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a) {
  ThreadState& ts = thread_state();
  const CommInfo* ci;
  trace::Event& e = p2p_event(ts, c, t0, t1, rc, a, ci);
  if (a.status_ignored) e.flags |= trace::kFlagStatusIgnored;
  if (rc == MPI_SUCCESS) e.completions.push_back(received(ci, *a.status, 0, 0));
  emit(ts);
}

void record_sendrecv(Call c, uint64_t t0, uint64_t t1, int rc, const SendrecvArgs& a) {
  ThreadState& ts = thread_state();
  trace::Event& e = start_event(ts, c, t0, t1, rc);
  const CommInfo* ci = comm_info(a.comm);
  e.comm = ci->id;
  e.peer = ci->peer_world(a.dest);
  e.tag = tag_of(a.sendtag);
  e.bytes = bytes_of(a.sendcount, a.sendtype);
  e.peer2 = ci->peer_world(a.source);
  e.tag2 = tag_of(a.recvtag);
  e.bytes2 = bytes_of(a.recvcount, a.recvtype);
  if (a.status_ignored) e.flags |= trace::kFlagStatusIgnored;
  if (rc == MPI_SUCCESS) e.completions.push_back(received(ci, *a.status, 0, 0));
  emit(ts);
}

namespace {
void record_new_request(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a, uint64_t bits) {
  ThreadState& ts = thread_state();
  const CommInfo* ci;
  trace::Event& e = p2p_event(ts, c, t0, t1, rc, a, ci);
  if (rc == MPI_SUCCESS) {
    if ((a.peer == MPI_PROC_NULL || is_builtin_request(*a.request)) && !(bits & kReqPersistent))
      bits |= kReqSharedHandle;
    e.request = add_request(*a.request, ci, bits);
  }
  emit(ts);
}
}  // namespace

void record_isend(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a) {
  record_new_request(c, t0, t1, rc, a, 0);
}
void record_irecv(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a) {
  record_new_request(c, t0, t1, rc, a, kReqRecv);
}
void record_send_init(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a) {
  record_new_request(c, t0, t1, rc, a, kReqPersistent);
}
void record_recv_init(Call c, uint64_t t0, uint64_t t1, int rc, const P2PArgs& a) {
  record_new_request(c, t0, t1, rc, a, kReqRecv | kReqPersistent);
}

void record_start(Call c, uint64_t t0, uint64_t t1, int rc, const StartArgs& a) {
  ThreadState& ts = thread_state();
  trace::Event& e = start_event(ts, c, t0, t1, rc);
  Runtime& rt = runtime();
  for (int i = 0; i < a.count; ++i) {
    const uint64_t key = handle_key(a.requests[i]);
    HandleTable::Value v = rt.requests.get(key);
    e.requests.push_back(v.id);
    if (rc == MPI_SUCCESS && v.id != 0) rt.requests.put(key, {v.id, (v.aux & ~uint64_t{kReqCancelled}) | kReqActive});
  }
  emit(ts);
}

void record_request_free_before(Call, RequestArgs& a) {
  if (!a.request || *a.request == MPI_REQUEST_NULL) return;
  a.key = handle_key(*a.request);
  a.id = runtime().requests.get(a.key).id;
}

void record_request_free(Call c, uint64_t t0, uint64_t t1, int rc, const RequestArgs& a) {
  ThreadState& ts = thread_state();
  trace::Event& e = start_event(ts, c, t0, t1, rc);
  e.requests.push_back(a.id);
  emit(ts);
  // The handle is gone for the application; MPI may hand the same value out again.
  if (rc == MPI_SUCCESS && a.id != 0) runtime().requests.erase(a.key);
}

void record_cancel_before(Call, RequestArgs& a) {
  if (a.request) a.id = runtime().requests.get(handle_key(*a.request)).id;
}

void record_cancel(Call c, uint64_t t0, uint64_t t1, int rc, const RequestArgs& a) {
  ThreadState& ts = thread_state();
  trace::Event& e = start_event(ts, c, t0, t1, rc);
  e.requests.push_back(a.id);
  emit(ts);
  if (rc == MPI_SUCCESS && a.id != 0) {
    // Completion calls ask MPI whether the request was really cancelled only for these.
    Runtime& rt = runtime();
    HandleTable::Value v = rt.requests.get(handle_key(*a.request));
    if (v.id == a.id) rt.requests.put(handle_key(*a.request), {v.id, v.aux | kReqCancelled});
  }
}

void record_probe(Call c, uint64_t t0, uint64_t t1, int rc, const ProbeArgs& a) {
  ThreadState& ts = thread_state();
  trace::Event& e = start_event(ts, c, t0, t1, rc);
  const CommInfo* ci = comm_info(a.comm);
  e.comm = ci->id;
  e.peer = ci->peer_world(a.source);
  e.tag = tag_of(a.tag);
  if (a.status_ignored) e.flags |= trace::kFlagStatusIgnored;
  const bool found = rc == MPI_SUCCESS && (!a.flag || *a.flag);
  if (a.flag) e.value = *a.flag;
  if (found) {
    e.completions.push_back(received(ci, *a.status, 0, 0));
    if (a.message) {
      Runtime& rt = runtime();
      e.request = ts.message_ids.take(rt.next_message);
      rt.messages.put(handle_key(*a.message), {e.request, reinterpret_cast<uint64_t>(ci)});
    }
  }
  emit(ts);
}

void record_mprobe(Call c, uint64_t t0, uint64_t t1, int rc, const ProbeArgs& a) { record_probe(c, t0, t1, rc, a); }

void record_mrecv_before(Call, MrecvArgs& a) {
  if (!a.message) return;
  HandleTable::Value v = runtime().messages.get(handle_key(*a.message));
  a.message_id = v.id;
  a.message_aux = v.aux;
  if (*a.message != MPI_MESSAGE_NO_PROC && v.id != 0) runtime().messages.erase(handle_key(*a.message));
}

void record_mrecv(Call c, uint64_t t0, uint64_t t1, int rc, const MrecvArgs& a) {
  ThreadState& ts = thread_state();
  trace::Event& e = start_event(ts, c, t0, t1, rc);
  const auto* ci = reinterpret_cast<const CommInfo*>(a.message_aux);
  if (ci) e.comm = ci->id;
  e.requests.push_back(a.message_id);
  e.bytes = bytes_of(a.count, a.datatype);
  if (a.status_ignored) e.flags |= trace::kFlagStatusIgnored;
  if (rc == MPI_SUCCESS) {
    if (a.request) {
      e.request = add_request(*a.request, ci, kReqRecv);
    } else {
      e.completions.push_back(received(ci, *a.status, 0, 0));
    }
  }
  emit(ts);
}

}  // namespace llamp::tracer
