/* prog_abort: a few exchanges, then rank 0 calls MPI_Abort(MPI_COMM_WORLD, 3) while the other
 * ranks wait in a barrier. */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 0; i < 5; ++i) {
    double x = rank, y = 0;
    MPI_Sendrecv(&x, 1, MPI_DOUBLE, (rank + 1) % size, 0, &y, 1, MPI_DOUBLE, (rank + size - 1) % size, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (rank == 0) MPI_Abort(MPI_COMM_WORLD, 3);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
