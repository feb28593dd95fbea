/*
 * libllamp_runtime_timer.so: an LD_PRELOAD library that measures what the campaign calls the
 * runtime of a run, the same way for every run (plain, traced, latency-injected):
 *
 *     per rank: (start of MPI_Finalize) - (end of MPI_Init / MPI_Init_thread), CLOCK_MONOTONIC
 *     run:      the maximum over ranks (the campaign takes it)
 *
 * This matches the execution graph, whose ranks all start at 0 right after MPI_Init and whose
 * makespan ends at the last rank's MPI_Finalize. Each rank writes one line to
 * $LLAMP_RUNTIME_DIR/runtime-<rank>.txt (or to stderr when the variable is unset):
 *
 *     llamp-runtime rank <r> size <p> runtime_ns <n> init_end_ns <a> finalize_start_ns <b>
 *
 * The next MPI_Init / MPI_Finalize is looked up with dlsym(RTLD_NEXT) rather than called through
 * PMPI, so the library stacks with another preloaded wrapper such as the tracer (list this one
 * first in LD_PRELOAD to time the traced run too). Fortran callers are covered because MPICH's
 * Fortran bindings call the C MPI_Init / MPI_Finalize.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t init_end_ns = -1;

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *next_symbol(const char *name) {
  void *fn = dlsym(RTLD_NEXT, name);
  if (fn == NULL) {
    fprintf(stderr,
            "llamp-runtime-timer: cannot find the next '%s' (%s); is the program linked "
            "against MPI?\n",
            name, dlerror());
    abort();
  }
  return fn;
}

int MPI_Init(int *argc, char ***argv) {
  int (*next)(int *, char ***) = (int (*)(int *, char ***))next_symbol("MPI_Init");
  const int rc = next(argc, argv);
  init_end_ns = monotonic_ns();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int (*next)(int *, char ***, int, int *) = (int (*)(int *, char ***, int, int *))next_symbol("MPI_Init_thread");
  const int rc = next(argc, argv, required, provided);
  init_end_ns = monotonic_ns();
  return rc;
}

static void report(int64_t finalize_start_ns) {
  int rank = -1, size = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  char line[256];
  snprintf(line, sizeof line, "llamp-runtime rank %d size %d runtime_ns %lld init_end_ns %lld finalize_start_ns %lld\n",
           rank, size, (long long)(finalize_start_ns - init_end_ns), (long long)init_end_ns,
           (long long)finalize_start_ns);
  const char *dir = getenv("LLAMP_RUNTIME_DIR");
  if (dir == NULL || dir[0] == '\0') {
    fputs(line, stderr);
    return;
  }
  char path[4096];
  if (snprintf(path, sizeof path, "%s/runtime-%d.txt", dir, rank) >= (int)sizeof path) {
    fprintf(stderr, "llamp-runtime-timer: LLAMP_RUNTIME_DIR is too long: %s\n", dir);
    return;
  }
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "llamp-runtime-timer: cannot write %s: %s\n", path, strerror(errno));
    return;
  }
  fputs(line, f);
  if (fclose(f) != 0) fprintf(stderr, "llamp-runtime-timer: error writing %s\n", path);
}

int MPI_Finalize(void) {
  const int64_t finalize_start = monotonic_ns();
  int (*next)(void) = (int (*)(void))next_symbol("MPI_Finalize");
  if (init_end_ns >= 0) report(finalize_start);
  return next();
}
