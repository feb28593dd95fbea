/*
 * campaign_test_app: a small real MPI program for the campaign's own tests. It computes for a
 * given time, exchanges 1 KiB with its ring neighbours every iteration and ends with an
 * MPI_Allreduce. It can fail or hang on purpose so the tests can check that the campaign retries
 * a failed run once and records it instead of averaging it in:
 *
 *   campaign_test_app [--compute-ms N] [--iterations K]
 *                     [--fail-once MARKER]   first run (MARKER absent): create it, MPI_Abort(3)
 *                     [--fail-once-untraced MARKER]  the same, counting only runs without
 *                                            LLAMP_TRACE_DIR (a campaign's measured runs)
 *                     [--hang-once MARKER]   first run: create it, rank 0 sleeps forever
 *                     [--fail-always]        every run: MPI_Abort(4)
 *                     [--slow-once MARKER]   first run: create it, rank 0 computes 3x as long
 *                                            (what a host's noisy spell does to a run)
 *                     [--poll]               exchange with MPI_Irecv/MPI_Isend and a polling loop
 *                                            (MPI_Test, 5 us of work between polls) instead of
 *                                            MPI_Sendrecv: a rank that waits works while it waits
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Busy computation (not sleep): the trace sees it as CPU time between MPI calls. */
static double compute_for(double seconds) {
  const double end = now_s() + seconds;
  double x = 1.0;
  while (now_s() < end)
    for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

/* Returns 1 the first time it is called for `marker` (and creates the file), 0 afterwards. */
static int first_time(const char *marker) {
  if (access(marker, F_OK) == 0) return 0;
  FILE *f = fopen(marker, "w");
  if (f == NULL) {
    perror(marker);
    exit(2);
  }
  fclose(f);
  return 1;
}

int main(int argc, char **argv) {
  double compute_ms = 20;
  int iterations = 10;
  const char *fail_once = NULL, *hang_once = NULL, *fail_once_untraced = NULL, *slow_once = NULL;
  int fail_always = 0, poll = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--compute-ms") == 0 && i + 1 < argc)
      compute_ms = atof(argv[++i]);
    else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc)
      iterations = atoi(argv[++i]);
    else if (strcmp(argv[i], "--fail-once") == 0 && i + 1 < argc)
      fail_once = argv[++i];
    else if (strcmp(argv[i], "--fail-once-untraced") == 0 && i + 1 < argc)
      fail_once_untraced = argv[++i];
    else if (strcmp(argv[i], "--hang-once") == 0 && i + 1 < argc)
      hang_once = argv[++i];
    else if (strcmp(argv[i], "--slow-once") == 0 && i + 1 < argc)
      slow_once = argv[++i];
    else if (strcmp(argv[i], "--fail-always") == 0)
      fail_always = 1;
    else if (strcmp(argv[i], "--poll") == 0)
      poll = 1;
    else {
      fprintf(stderr, "campaign_test_app: unknown or incomplete argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (iterations < 1 || compute_ms < 0) {
    fprintf(stderr, "campaign_test_app: --iterations must be >= 1 and --compute-ms >= 0\n");
    return 2;
  }

  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0 && fail_always) MPI_Abort(MPI_COMM_WORLD, 4);
  if (rank == 0 && fail_once && first_time(fail_once)) MPI_Abort(MPI_COMM_WORLD, 3);
  const char *trace_dir = getenv("LLAMP_TRACE_DIR");
  const int traced = trace_dir != NULL && trace_dir[0] != '\0';
  if (rank == 0 && fail_once_untraced && !traced && first_time(fail_once_untraced)) MPI_Abort(MPI_COMM_WORLD, 3);
  if (rank == 0 && hang_once && first_time(hang_once))
    for (;;) sleep(1);

  /* The other ranks wait for rank 0 inside MPI_Sendrecv: their computation stays as it was. */
  const double slowdown = rank == 0 && slow_once && first_time(slow_once) ? 3.0 : 1.0;

  char out[1024], in[1024];
  memset(out, rank, sizeof out);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double checksum = 0;
  for (int it = 0; it < iterations; ++it) {
    checksum += compute_for(slowdown * compute_ms * 1e-3 / iterations);
    if (poll) {
      MPI_Request requests[2];
      MPI_Irecv(in, sizeof in, MPI_BYTE, left, 7, MPI_COMM_WORLD, &requests[0]);
      MPI_Isend(out, sizeof out, MPI_BYTE, right, 7, MPI_COMM_WORLD, &requests[1]);
      for (int arrived = 0;;) {
        MPI_Test(&requests[0], &arrived, MPI_STATUS_IGNORE);
        if (arrived) break;
        checksum += 1e-12 * compute_for(5e-6);
      }
      MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
    } else {
      MPI_Sendrecv(out, sizeof out, MPI_BYTE, right, 7, in, sizeof in, MPI_BYTE, left, 7, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    }
    checksum += in[0];
  }
  double total = 0;
  MPI_Allreduce(&checksum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("campaign_test_app: %d ranks, %d iterations, checksum %.3f\n", size, iterations, total);
  MPI_Finalize();
  return 0;
}
