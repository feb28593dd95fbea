/*
 * ring: two ring patterns. (1) A pipeline: rank 0 injects a token, every other rank blocks in
 * MPI_Recv from its left neighbour, transforms the token and MPI_Sends it to the right, and rank
 * 0 receives it back - a chain of dependent messages, so every latency adds up. (2) A rotation:
 * each rank's block travels once around the ring with MPI_Sendrecv_replace, all ranks at once.
 *
 * usage: app_ring [rounds] [doubles per message] [work per element]
 */
#include "app_counts.h"

enum { TAG_TOKEN = 30, TAG_ROTATE = 31 };

/* The per-hop compute: a dependent chain of `work` steps per element, folded into the data so the
 * final checksum depends on every hop having happened in order. */
static void transform(double *data, int count, int work, int rank) {
  for (int i = 0; i < count; ++i) {
    double v = data[i];
    for (int k = 0; k < work; ++k) v = 0.5 * v + 0.25 * (double)(rank + 1);
    data[i] = v;
  }
}

int main(int argc, char **argv) {
  app_usage(argc, argv,
            "[rounds (default 8)] [doubles per message (default 1024)] "
            "[work per element (default 16)]");
  const int rounds = (int)app_arg(argc, argv, 1, "rounds", 8, 1);
  const int count = (int)app_arg(argc, argv, 2, "doubles per message", 1024, 1);
  const int work = (int)app_arg(argc, argv, 3, "work per element", 16, 0);

  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "ring: needs at least 2 ranks, got %d\n", size);
    app_finalize(rank);
    return 1;
  }
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  double *buffer = malloc((size_t)count * sizeof(double));
  double local_sum = 0.0;

  for (int round = 0; round < rounds; ++round) {
    /* (1) pipeline: one token goes all the way round */
    if (rank == 0) {
      for (int i = 0; i < count; ++i) buffer[i] = (double)(round + i % 13);
      transform(buffer, count, work, rank);
      CALL(MPI_Send, (buffer, count, MPI_DOUBLE, right, TAG_TOKEN, MPI_COMM_WORLD));
      CALL(MPI_Recv,
           (buffer, count, MPI_DOUBLE, left, TAG_TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      for (int i = 0; i < count; ++i) local_sum += buffer[i];
    } else {
      CALL(MPI_Recv,
           (buffer, count, MPI_DOUBLE, left, TAG_TOKEN, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      transform(buffer, count, work, rank);
      CALL(MPI_Send, (buffer, count, MPI_DOUBLE, right, TAG_TOKEN, MPI_COMM_WORLD));
    }

    /* (2) rotation: after `size` shifts every block is back home; each rank sees all of them */
    for (int i = 0; i < count; ++i) buffer[i] = (double)(rank * count + i) / (double)count;
    for (int step = 0; step < size; ++step) {
      CALL(MPI_Sendrecv_replace, (buffer, count, MPI_DOUBLE, right, TAG_ROTATE, left, TAG_ROTATE,
                                  MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      transform(buffer, count, work, rank);
      local_sum += buffer[step % count] * (double)(step + 1);
    }
  }

  double checksum = 0.0;
  CALL(MPI_Reduce, (&local_sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
  if (rank == 0) {
    printf("ring: %d ranks, %d rounds, %d doubles/message, work %d, checksum %.12e\n", size, rounds,
           count, work, checksum);
  }
  free(buffer);
  return app_finalize(rank);
}
