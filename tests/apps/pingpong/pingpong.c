/*
 * pingpong: ranks 0 and 1 bounce messages of growing size (0, 1, 8, 64, ... bytes) with blocking
 * MPI_Send/MPI_Recv; every other rank idles until the final (nonblocking) barrier. The purest
 * latency/bandwidth pattern: its runtime is almost entirely L and G, nothing overlaps.
 *
 * usage: app_pingpong [iterations per size] [max size in bytes]
 */
#include <time.h>

#include "app_counts.h"

enum { PING_TAG = 1, PONG_TAG = 2 };

int main(int argc, char **argv) {
  app_usage(argc, argv, "[iterations per size (default 50)] [max bytes (default 262144)]");
  const int iterations = (int)app_arg(argc, argv, 1, "iterations per size", 50, 1);
  const int max_bytes = (int)app_arg(argc, argv, 2, "max bytes", 262144, 0);

  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "pingpong: needs at least 2 ranks, got %d\n", size);
    app_finalize(rank);
    return 1;
  }

  unsigned char *buffer = malloc(max_bytes > 0 ? (size_t)max_bytes : 1);
  unsigned long checksum = 0;
  int sizes = 0;
  /* Sizes 0, 1, 8, 64, ... (x8), ending exactly at max_bytes: small sizes probe latency,
   * large ones bandwidth. */
  for (int bytes = 0;;) {
    ++sizes;
    if (rank == 0) memset(buffer, bytes & 0xff, (size_t)bytes);
    for (int it = 0; it < iterations && rank < 2; ++it) {
      if (rank == 0) {
        CALL(MPI_Send, (buffer, bytes, MPI_BYTE, 1, PING_TAG, MPI_COMM_WORLD));
        CALL(MPI_Recv, (buffer, bytes, MPI_BYTE, 1, PONG_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        /* rank 1 increments every byte, so the checksum proves the data went both ways */
        for (int i = 0; i < bytes; ++i) checksum += buffer[i];
      } else {
        CALL(MPI_Recv, (buffer, bytes, MPI_BYTE, 0, PING_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < bytes; ++i) buffer[i] = (unsigned char)(buffer[i] + 1);
        CALL(MPI_Send, (buffer, bytes, MPI_BYTE, 0, PONG_TAG, MPI_COMM_WORLD));
      }
    }
    if (bytes >= max_bytes) break;
    const long next = bytes == 0 ? 1 : (long)bytes * 8;
    bytes = next > max_bytes ? max_bytes : (int)next;
  }
  free(buffer);

  /* Everyone meets in a barrier at the end. Ranks 2.. have nothing to do until then; a blocking
   * MPI_Barrier would busy-poll and, with more ranks than cores, steal the cores ranks 0 and 1
   * need (each message then waits for a scheduler time slice: 20x slower runs). So the idle
   * ranks poll a nonblocking barrier with MPI_Test and sleep in between; their MPI_Test count
   * therefore varies from run to run. */
  MPI_Request barrier;
  CALL(MPI_Ibarrier, (MPI_COMM_WORLD, &barrier));
  if (rank < 2) {
    CALL(MPI_Wait, (&barrier, MPI_STATUS_IGNORE));
  } else {
    int done = 0;
    for (;;) {
      CALL(MPI_Test, (&barrier, &done, MPI_STATUS_IGNORE));
      if (done) break;
      nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 200000}, NULL);
    }
  }
  if (rank == 0) {
    printf("pingpong: %d ranks, %d iterations x %d sizes up to %d bytes, checksum %lu\n", size,
           iterations, sizes, max_bytes, checksum);
  }
  return app_finalize(rank);
}
