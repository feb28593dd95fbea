/*
 * persistent: a periodic 1-D neighbour exchange set up once with MPI_Send_init/MPI_Recv_init and
 * restarted every iteration with MPI_Startall + MPI_Waitall; the compute on the local block
 * overlaps the exchange. The four requests are released with MPI_Request_free at the end.
 *
 * usage: app_persistent [iterations] [doubles per message] [work per element]
 */
#include "app_counts.h"

enum { TAG_RIGHTWARD = 40, TAG_LEFTWARD = 41 };

int main(int argc, char **argv) {
  app_usage(argc, argv,
            "[iterations (default 60)] [doubles per message (default 512)] "
            "[work per element (default 64)]");
  const int iterations = (int)app_arg(argc, argv, 1, "iterations", 60, 1);
  const int count = (int)app_arg(argc, argv, 2, "doubles per message", 512, 1);
  const int work = (int)app_arg(argc, argv, 3, "work per element", 64, 0);

  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;

  double *to_left = malloc((size_t)count * sizeof(double));
  double *to_right = malloc((size_t)count * sizeof(double));
  double *from_left = malloc((size_t)count * sizeof(double));
  double *from_right = malloc((size_t)count * sizeof(double));
  double *block = malloc((size_t)count * sizeof(double));
  for (int i = 0; i < count; ++i) block[i] = (double)((rank * 17 + i) % 23);

  /* Set up once; each MPI_Startall reuses the same buffers, peers and tags. */
  MPI_Request requests[4];
  CALL(MPI_Recv_init,
       (from_left, count, MPI_DOUBLE, left, TAG_RIGHTWARD, MPI_COMM_WORLD, &requests[0]));
  CALL(MPI_Recv_init,
       (from_right, count, MPI_DOUBLE, right, TAG_LEFTWARD, MPI_COMM_WORLD, &requests[1]));
  CALL(MPI_Send_init,
       (to_right, count, MPI_DOUBLE, right, TAG_RIGHTWARD, MPI_COMM_WORLD, &requests[2]));
  CALL(MPI_Send_init,
       (to_left, count, MPI_DOUBLE, left, TAG_LEFTWARD, MPI_COMM_WORLD, &requests[3]));

  for (int it = 0; it < iterations; ++it) {
    for (int i = 0; i < count; ++i) to_left[i] = to_right[i] = block[i];
    CALL(MPI_Startall, (4, requests));
    /* local smoothing while the neighbours' blocks travel */
    for (int i = 0; i < count; ++i) {
      double v = block[i];
      for (int k = 0; k < work; ++k) v = 0.999 * v + 0.001 * (double)(i % 5);
      block[i] = v;
    }
    CALL(MPI_Waitall, (4, requests, MPI_STATUSES_IGNORE));
    for (int i = 0; i < count; ++i)
      block[i] = 0.5 * block[i] + 0.25 * (from_left[i] + from_right[i]);
  }
  for (int i = 0; i < 4; ++i) CALL(MPI_Request_free, (&requests[i]));

  double local_sum = 0.0, checksum = 0.0;
  for (int i = 0; i < count; ++i) local_sum += block[i];
  CALL(MPI_Reduce, (&local_sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
  if (rank == 0) {
    printf("persistent: %d ranks, %d iterations, %d doubles/message, work %d, checksum %.12e\n",
           size, iterations, count, work, checksum);
  }
  free(to_left);
  free(to_right);
  free(from_left);
  free(from_right);
  free(block);
  return app_finalize(rank);
}
