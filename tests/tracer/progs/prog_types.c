/* prog_types: one MPI_Send from rank 0 to rank 1 per datatype, each of 7 elements, then one
 * MPI_Allreduce of 3 MPI_LONG_DOUBLEs. The types span every predefined size MPICH encodes in the
 * handle (1-32 bytes), predefined pair types MPICH keeps elsewhere, and derived types. Rank 0
 * prints "type-sizes: s1 s2 ..." (MPI_Type_size of each, in send order) for the test to compare
 * with the bytes the trace records. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { kCount = 7 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Datatype contiguous, vector;
  MPI_Type_contiguous(3, MPI_DOUBLE, &contiguous);
  MPI_Type_commit(&contiguous);
  MPI_Type_vector(2, 1, 4, MPI_INT, &vector);
  MPI_Type_commit(&vector);
  const MPI_Datatype types[] = {MPI_CHAR,
                                MPI_SHORT,
                                MPI_INT,
                                MPI_LONG,
                                MPI_LONG_DOUBLE,
                                MPI_C_LONG_DOUBLE_COMPLEX,
                                MPI_C_DOUBLE_COMPLEX,
                                MPI_2INT,
                                MPI_DOUBLE_INT,
                                MPI_LONG_DOUBLE_INT,
                                contiguous,
                                vector};
  const int n = (int)(sizeof types / sizeof types[0]);
  static char buf[4096];
  memset(buf, 1, sizeof buf);
  if (rank == 0) printf("type-sizes:");
  for (int i = 0; i < n; ++i) {
    int size = 0;
    MPI_Type_size(types[i], &size);
    if (rank == 0) {
      printf(" %d", size);
      MPI_Send(buf, kCount, types[i], 1, i, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Recv(buf, kCount, types[i], 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  if (rank == 0) printf("\n");
  fflush(stdout);
  long double in[3] = {1, 2, 3}, out[3];
  MPI_Allreduce(in, out, 3, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Type_free(&contiguous);
  MPI_Type_free(&vector);
  MPI_Finalize();
  return 0;
}
