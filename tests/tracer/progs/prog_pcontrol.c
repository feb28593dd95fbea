/* prog_pcontrol: MPI_Pcontrol(0) pauses tracing and MPI_Pcontrol(1) resumes it. Ring exchanges
 * before, during and after the pause; a communicator created while paused is used after. */
#include <mpi.h>
#include <stdio.h>

static void ring(int n, MPI_Comm comm) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int i = 0; i < n; ++i) {
    double x = rank, y = 0;
    MPI_Sendrecv(&x, 1, MPI_DOUBLE, (rank + 1) % size, 0, &y, 1, MPI_DOUBLE, (rank + size - 1) % size, 0, comm,
                 MPI_STATUS_IGNORE);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  ring(3, MPI_COMM_WORLD);
  MPI_Pcontrol(0);
  ring(10, MPI_COMM_WORLD);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Pcontrol(1);
  ring(5, dup);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return 0;
}
