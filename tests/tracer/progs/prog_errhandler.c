/* prog_errhandler: an error handler that makes an MPI call while the tracer holds the failing
 * call's event, started before the call (prepare_p2p in tracer/src/record_p2p.cpp,
 * prepare_collective in record_collective.cpp). On a communicator whose handler calls
 * MPI_Barrier on MPI_COMM_SELF and returns, rank 0 sends to a rank that does not exist, then
 * both ranks call MPI_Bcast with a root that does not exist; then both ranks exchange one
 * message normally. Rank 0 prints "handler-calls: N", "send-rc-ok: 0|1" and "bcast-rc-ok: 0|1". */
#include <mpi.h>
#include <stdio.h>

static int handler_calls = 0;

static void handler(MPI_Comm *comm, int *code, ...) {
  (void)comm;
  (void)code;
  ++handler_calls;
  MPI_Barrier(MPI_COMM_SELF);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(handler, &eh);
  MPI_Comm_set_errhandler(comm, eh);
  int data[3] = {1, 2, 3};
  int send_rc = MPI_SUCCESS;
  if (rank == 0) send_rc = MPI_Send(data, 3, MPI_INT, size + 3, 7, comm);
  const int bcast_rc = MPI_Bcast(data, 3, MPI_INT, size + 3, comm);
  if (rank == 0) {
    printf("handler-calls: %d\nsend-rc-ok: %d\nbcast-rc-ok: %d\n", handler_calls, send_rc == MPI_SUCCESS,
           bcast_rc == MPI_SUCCESS);
    fflush(stdout);
  }
  /* A normal exchange after it: the tracer must still record events as before. */
  MPI_Request requests[2];
  int in[3];
  const int peer = (rank + 1) % size;
  MPI_Irecv(in, 3, MPI_INT, MPI_ANY_SOURCE, 8, comm, &requests[0]);
  MPI_Isend(data, 3, MPI_INT, peer, 8, comm, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  MPI_Errhandler_free(&eh);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
