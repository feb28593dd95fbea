/* prog_forever: writes its pid to $LLAMP_TEST_PID_DIR/pid-<rank>, then exchanges around the
 * ring until it is killed (the tracer's kill -9 test). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *dir = getenv("LLAMP_TEST_PID_DIR");
  if (dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/pid-%d", dir, rank);
    FILE *f = fopen(path, "w");
    if (f) {
      fprintf(f, "%d\n", (int)getpid());
      fclose(f);
    }
  }
  double x = rank, y = 0;
  for (long i = 0;; ++i) {
    MPI_Request rq[2];
    MPI_Irecv(&y, 1, MPI_DOUBLE, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(&x, 1, MPI_DOUBLE, (rank + 1) % size, 0, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    if (i % 1000 == 0) usleep(1000); /* leave the cores to the test that watches us */
  }
}
