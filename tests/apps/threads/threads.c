/*
 * threads: MPI_Init_thread(MPI_THREAD_MULTIPLE) and several threads per rank, each exchanging
 * with the ring neighbours on its own MPI_Comm_dup of MPI_COMM_WORLD (so the threads' messages
 * can never match each other's) with MPI_Irecv/MPI_Isend/MPI_Wait. The call counters are atomic,
 * so the counts stay exact even though the threads call MPI concurrently.
 *
 * usage: app_threads [iterations] [doubles per message] [threads per rank]
 */
#include <pthread.h>

#include "app_counts.h"

enum { TAG_RING = 60, MAX_THREADS = 16 };

typedef struct {
  MPI_Comm comm; /* this thread's private communicator */
  int thread, rank, size, iterations, count;
  double result;
} Worker;

static void *run_worker(void *arg) {
  Worker *w = arg;
  const int left = (w->rank + w->size - 1) % w->size, right = (w->rank + 1) % w->size;
  double *out = malloc((size_t)w->count * sizeof(double));
  double *in = malloc((size_t)w->count * sizeof(double));
  for (int i = 0; i < w->count; ++i) out[i] = (double)((w->rank * 11 + w->thread * 5 + i) % 31);
  double sum = 0.0;
  for (int it = 0; it < w->iterations; ++it) {
    MPI_Request receive, send;
    CALL(MPI_Irecv, (in, w->count, MPI_DOUBLE, left, TAG_RING, w->comm, &receive));
    CALL(MPI_Isend, (out, w->count, MPI_DOUBLE, right, TAG_RING, w->comm, &send));
    CALL(MPI_Wait, (&receive, MPI_STATUS_IGNORE));
    CALL(MPI_Wait, (&send, MPI_STATUS_IGNORE));
    /* pass on a mix of what arrived and what this rank had, so data keep travelling */
    for (int i = 0; i < w->count; ++i) {
      out[i] = 0.5 * (in[i] + out[i]) + (double)w->thread;
      sum += out[i];
    }
  }
  w->result = sum;
  free(out);
  free(in);
  return NULL;
}

int main(int argc, char **argv) {
  app_usage(argc, argv,
            "[iterations (default 30)] [doubles per message (default 256)] "
            "[threads per rank (default 2, at most 16)]");
  const int iterations = (int)app_arg(argc, argv, 1, "iterations", 30, 1);
  const int count = (int)app_arg(argc, argv, 2, "doubles per message", 256, 1);
  const int threads = (int)app_arg(argc, argv, 3, "threads per rank", 2, 1);
  if (threads > MAX_THREADS) {
    fprintf(stderr, "%s: at most %d threads per rank, got %d\n", argv[0], MAX_THREADS, threads);
    return 2;
  }

  int provided = MPI_THREAD_SINGLE;
  CALL(MPI_Init_thread, (&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) fprintf(stderr, "threads: MPI_THREAD_MULTIPLE not provided (%d)\n", provided);
    app_finalize(rank);
    return 1;
  }

  Worker workers[MAX_THREADS];
  pthread_t ids[MAX_THREADS];
  /* Comm_dup is collective: done by the main thread, in the same order on every rank. */
  for (int t = 0; t < threads; ++t) {
    workers[t] = (Worker){MPI_COMM_NULL, t, rank, size, iterations, count, 0.0};
    CALL(MPI_Comm_dup, (MPI_COMM_WORLD, &workers[t].comm));
  }
  for (int t = 0; t < threads; ++t) {
    if (pthread_create(&ids[t], NULL, run_worker, &workers[t]) != 0) {
      fprintf(stderr, "threads: rank %d cannot start thread %d\n", rank, t);
      CALL(MPI_Abort, (MPI_COMM_WORLD, 1));
    }
  }
  double local = 0.0;
  for (int t = 0; t < threads; ++t) {
    pthread_join(ids[t], NULL);
    local += workers[t].result * (t + 1);
    CALL(MPI_Comm_free, (&workers[t].comm));
  }

  double checksum = 0.0;
  CALL(MPI_Reduce, (&local, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
  if (rank == 0) {
    printf("threads: %d ranks x %d threads, %d iterations, %d doubles/message, checksum %.12e\n",
           size, threads, iterations, count, checksum);
  }
  return app_finalize(rank);
}
