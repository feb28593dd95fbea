#pragma once
// The typed argument bundles the generated wrappers hand to the recording routines: one struct
// per call family (gen_wrappers.py maps each MPI parameter name to a field here). Only what the
// trace needs is copied; buffers and displacements are not. Element counts are MPI_Count: the MPI
// 4.0 large-count variant of a call (MPI_Send_c, ...) shares its family and struct, and passes
// its count arrays through the *_c fields.
#include <mpi.h>

namespace llamp::tracer {

struct CommInfo;  // comm_registry.hpp

struct NoArgs {};

struct InitArgs {
  int required = -1;  // MPI_Init_thread only
  int* provided = nullptr;
};

struct PcontrolArgs {
  int level = 0;
};

struct AbortArgs {
  MPI_Comm comm = MPI_COMM_NULL;
  int errorcode = 0;
};

// The families whose event is started before the MPI call (gen_wrappers.py PREPARE): the event it
// started (ThreadState::events_started) and the communicator's info; 0 / null when it did not run.
struct PreparedEvent {
  uint64_t prepared = 0;
  const CommInfo* ci = nullptr;
};

// send, recv, isend, irecv, send_init, recv_init.
struct P2PArgs : PreparedEvent {
  MPI_Count count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  int peer = MPI_PROC_NULL;  // dest or source, as a rank of comm
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request* request = nullptr;  // nonblocking and persistent
  MPI_Status* status = nullptr;    // blocking receive (never MPI_STATUS_IGNORE: substituted)
  bool status_ignored = false;
};

struct SendrecvArgs {
  MPI_Count sendcount = 0;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  int dest = MPI_PROC_NULL;
  int sendtag = 0;
  MPI_Count recvcount = 0;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  int source = MPI_PROC_NULL;
  int recvtag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Status* status = nullptr;
  bool status_ignored = false;
};

// Start (count 1) and Startall.
struct StartArgs {
  int count = 1;
  MPI_Request* requests = nullptr;
};

// Request_free and Cancel: the id is looked up before the call (Request_free nulls the handle).
struct RequestArgs {
  MPI_Request* request = nullptr;
  uint64_t id = 0;
  uint64_t key = 0;
};

// Probe, Iprobe, Mprobe, Improbe.
struct ProbeArgs {
  int source = MPI_ANY_SOURCE;
  int tag = MPI_ANY_TAG;
  MPI_Comm comm = MPI_COMM_NULL;
  int* flag = nullptr;             // Iprobe/Improbe
  MPI_Message* message = nullptr;  // Mprobe/Improbe
  MPI_Status* status = nullptr;
  bool status_ignored = false;
};

// Mrecv, Imrecv. The message's id and communicator are looked up before the call, which
// replaces the handle with MPI_MESSAGE_NULL.
struct MrecvArgs {
  MPI_Count count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  MPI_Message* message = nullptr;
  MPI_Request* request = nullptr;  // Imrecv
  MPI_Status* status = nullptr;    // Mrecv
  bool status_ignored = false;
  uint64_t message_id = 0;
  uint64_t message_aux = 0;
};

// Wait/Test and their any/all/some variants. The single-request calls have count 1.
struct CompletionArgs {
  int count = 1;
  MPI_Request* requests = nullptr;
  int* index = nullptr;            // Waitany/Testany
  int* flag = nullptr;             // Test*
  int* outcount = nullptr;         // Waitsome/Testsome
  int* indices = nullptr;          // Waitsome/Testsome
  MPI_Status* statuses = nullptr;  // never MPI_STATUS(ES)_IGNORE: substituted
  bool status_ignored = false;
};

// Blocking and nonblocking collectives; fields a call lacks stay at their defaults.
struct CollArgs : PreparedEvent {
  const void* sendbuf = nullptr;
  const void* recvbuf = nullptr;
  MPI_Count count = 0;  // Bcast, Reduce, Allreduce, Scan, Exscan
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  MPI_Count sendcount = 0;
  MPI_Count recvcount = 0;
  MPI_Datatype sendtype = MPI_DATATYPE_NULL;
  MPI_Datatype recvtype = MPI_DATATYPE_NULL;
  const int* sendcounts = nullptr;
  const int* recvcounts = nullptr;
  const MPI_Count* sendcounts_c = nullptr;  // the large-count variants' arrays instead
  const MPI_Count* recvcounts_c = nullptr;
  const MPI_Datatype* sendtypes = nullptr;
  const MPI_Datatype* recvtypes = nullptr;
  int root = MPI_PROC_NULL - 1000;  // "no root" (MPI_PROC_NULL and MPI_ROOT are meaningful)
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Request* request = nullptr;  // nonblocking collectives
};
inline constexpr int kNoRootArg = MPI_PROC_NULL - 1000;

// Communicator constructors.
struct CommCreateArgs {
  MPI_Comm parent = MPI_COMM_NULL;
  MPI_Comm* newcomm = nullptr;
  int color = 0;                   // Comm_split
  MPI_Request* request = nullptr;  // Comm_idup
};

struct CommFreeArgs {
  MPI_Comm* comm = nullptr;
  MPI_Comm handle = MPI_COMM_NULL;  // saved before the call nulls it
  uint64_t id = 0;
};

}  // namespace llamp::tracer
