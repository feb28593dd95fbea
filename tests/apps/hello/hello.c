/* hello: the smallest traced program - MPI_Init, one MPI_Barrier, MPI_Finalize. */
#include "app_counts.h"

int main(int argc, char **argv) {
  app_usage(argc, argv, "(no arguments)");
  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));
  CALL(MPI_Barrier, (MPI_COMM_WORLD));
  if (rank == 0) printf("hello: %d ranks, checksum %d\n", size, size);
  return app_finalize(rank);
}
