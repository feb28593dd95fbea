/*
 * app_counts.h - count every MPI call a mini-app makes, and write the counts as JSON.
 *
 * The mini-apps are the ground truth for the tracer: a trace of a run must contain exactly
 * the calls the app says it made. Every MPI call therefore goes through CALL(), which bumps a
 * per-name counter before calling the function:
 *
 *     CALL(MPI_Isend, (buf, n, MPI_DOUBLE, peer, tag, comm, &req));
 *
 * At the end the app calls app_finalize(rank) instead of MPI_Finalize: it counts MPI_Finalize,
 * writes $LLAMP_APP_COUNTS_DIR/counts-<rank>.json (if the variable is set) and finalizes.
 * The rank must come from a counted MPI_Comm_rank, so no uncounted call sneaks in.
 *
 * Counters are lock-free atomics so threads calling MPI concurrently are counted exactly.
 * The table lives in static storage: include this header from one translation unit per app.
 */
#ifndef LLAMP_APP_COUNTS_H
#define LLAMP_APP_COUNTS_H

#include <mpi.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP_COUNTS_MAX_NAMES 96

static _Atomic(const char *) app_count_names[APP_COUNTS_MAX_NAMES];
static atomic_long app_count_values[APP_COUNTS_MAX_NAMES];

/* Find (or claim) the slot for `name` and increment it. Slots are claimed with a CAS so two
 * threads counting a new name at once end up sharing one slot. */
static inline void app_count(const char *name) {
  for (int i = 0; i < APP_COUNTS_MAX_NAMES; ++i) {
    const char *slot = atomic_load(&app_count_names[i]);
    if (slot == NULL) {
      const char *expected = NULL;
      if (atomic_compare_exchange_strong(&app_count_names[i], &expected, name)) {
        slot = name;
      } else {
        slot = expected; /* another thread claimed it first; it may be our name */
      }
    }
    if (slot == name || strcmp(slot, name) == 0) {
      atomic_fetch_add(&app_count_values[i], 1);
      return;
    }
  }
  fprintf(stderr, "app_counts: more than %d distinct MPI functions; raise APP_COUNTS_MAX_NAMES\n",
          APP_COUNTS_MAX_NAMES);
  abort();
}

/* Count one call of `fn`, then make it. Evaluates to the call's return value. */
#define CALL(fn, args) (app_count(#fn), fn args)

static int app_count_compare(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static inline long app_count_of(const char *name) {
  for (int i = 0; i < APP_COUNTS_MAX_NAMES; ++i) {
    const char *slot = atomic_load(&app_count_names[i]);
    if (slot == NULL) break;
    if (strcmp(slot, name) == 0) return atomic_load(&app_count_values[i]);
  }
  return 0;
}

/* Write {"MPI_X": n, ...} with keys sorted, so two runs' files can be compared with diff.
 * Returns 0 on success (or when LLAMP_APP_COUNTS_DIR is unset), 1 on an I/O error. */
static inline int app_counts_write(int rank) {
  const char *dir = getenv("LLAMP_APP_COUNTS_DIR");
  if (dir == NULL || dir[0] == '\0') return 0;

  const char *names[APP_COUNTS_MAX_NAMES];
  int n = 0;
  while (n < APP_COUNTS_MAX_NAMES && atomic_load(&app_count_names[n]) != NULL) {
    names[n] = atomic_load(&app_count_names[n]);
    ++n;
  }
  qsort(names, (size_t)n, sizeof names[0], app_count_compare);

  char path[4096];
  if (snprintf(path, sizeof path, "%s/counts-%d.json", dir, rank) >= (int)sizeof path) {
    fprintf(stderr, "app_counts: path too long for LLAMP_APP_COUNTS_DIR=%s\n", dir);
    return 1;
  }
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    fprintf(stderr, "app_counts: cannot write %s: ", path);
    perror(NULL);
    return 1;
  }
  fputc('{', f);
  for (int i = 0; i < n; ++i) {
    fprintf(f, "%s\n  \"%s\": %ld", i == 0 ? "" : ",", names[i], app_count_of(names[i]));
  }
  fputs(n == 0 ? "}\n" : "\n}\n", f);
  if (fclose(f) != 0) {
    fprintf(stderr, "app_counts: error writing %s\n", path);
    return 1;
  }
  return 0;
}

/* Count MPI_Finalize, write the counts file, then finalize. Returns the exit status for main. */
static inline int app_finalize(int rank) {
  app_count("MPI_Finalize");
  int status = app_counts_write(rank);
  MPI_Finalize();
  return status;
}

/* Print `usage` and exit when the first argument is -h or --help. Called before MPI_Init. */
static inline void app_usage(int argc, char **argv, const char *usage) {
  if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
    printf("usage: %s %s\n", argv[0], usage);
    exit(0);
  }
}

/* Parse argv[index] as an integer >= `min`, or return `fallback` when absent. Bad input is a
 * clear error, not a silent default. Called before MPI_Init, so it may simply exit. */
static inline long app_arg(int argc, char **argv, int index, const char *what, long fallback,
                           long min) {
  if (index >= argc) return fallback;
  char *end = NULL;
  long value = strtol(argv[index], &end, 10);
  if (end == argv[index] || *end != '\0' || value < min || value > INT_MAX) {
    fprintf(stderr, "%s: argument %d (%s) must be an integer in [%ld, INT_MAX], got '%s'\n",
            argv[0], index, what, min, argv[index]);
    exit(2);
  }
  return value;
}

#endif /* LLAMP_APP_COUNTS_H */
