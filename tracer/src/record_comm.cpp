// Communicator constructors and Comm_free. Ids are agreed (collectively, with PMPI) even while
// tracing is paused, so every member takes part and later events stay consistent.
#include "comm_registry.hpp"
#include "wrapper_support.hpp"

namespace llamp::tracer {

void record_comm_create(Call c, uint64_t t0, uint64_t t1, int rc, const CommCreateArgs& a) {
  if (!g_initialized.load()) return;
  const MPI_Comm made = rc == MPI_SUCCESS && a.newcomm ? *a.newcomm : MPI_COMM_NULL;
  const CommInfo* info = nullptr;
  if (made != MPI_COMM_NULL) info = c == Call::Comm_idup ? comm_register_idup(a.parent, made) : comm_register_new(made);
  if (!tracing()) return;
  ThreadState& ts = thread_state();
  // The id agreement is part of the call as the application sees it: it ends the event.
  trace::Event& e = start_event(ts, c, t0, c == Call::Comm_idup ? t1 : now_ns(), rc);
  e.comm = comm_id_of(a.parent);
  if (info) {
    e.new_comm = info->id;
    e.members = info->local;
    e.remote_members = info->remote;
    if (info->inter) e.flags |= trace::kFlagIntercomm;
  }
  if (c == Call::Comm_split) e.value = a.color;
  if (c == Call::Comm_idup && rc == MPI_SUCCESS && a.request)
    e.request = add_request(*a.request, comm_info(a.parent), shared_handle_bits(*a.request));
  emit(ts);
}

void record_comm_free_before(Call, CommFreeArgs& a) {
  if (!g_initialized.load() || !a.comm) return;
  a.handle = *a.comm;
  a.id = comm_id_of(a.handle);
}

void record_comm_free(Call c, uint64_t t0, uint64_t t1, int rc, const CommFreeArgs& a) {
  if (!g_initialized.load()) return;
  if (rc == MPI_SUCCESS && a.handle != MPI_COMM_NULL) comm_forget(a.handle);
  if (!tracing()) return;
  ThreadState& ts = thread_state();
  trace::Event& e = start_event(ts, c, t0, t1, rc);
  e.comm = a.id;
  emit(ts);
}

}  // namespace llamp::tracer
