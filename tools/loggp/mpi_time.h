/*
 * Time inside MPI calls, for the runtime timer (runtime_timer.c): every MPI communication call
 * passes through a generated wrapper (gen_mpi_timing.py) that adds the call's duration to its
 * thread's total. The rest of the interval between MPI_Init and MPI_Finalize is the rank's own
 * computation, which latency does not change: when it grows, the host slowed the rank down (the
 * campaign's noisy-host check, docs/campaign.md "Computation outside MPI").
 *
 * The clock is the TSC where there is one: the wrapper costs two reads and an add, about 11 ns
 * a call (bench_runtime_timer), not two clock_gettime calls. runtime_timer.c converts ticks to ns with
 * the ratio of both clocks over the run itself.
 */
#ifndef LLAMP_MPI_TIME_H
#define LLAMP_MPI_TIME_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

struct llamp_mpi_time {
  uint64_t inside_ticks; /* summed over the outermost calls */
  uint64_t calls;
  int depth;           /* a wrapped call that calls another (MPI_Sendrecv_replace in some MPIs) counts once */
  int initialized_mpi; /* the thread that returned from MPI_Init: the one the record is about */
};

/* Per thread: a thread that waits in MPI does not make another thread's computation look shorter.
 * initial-exec: the library is preloaded, never dlopen'ed, and the access is one instruction. */
extern __thread struct llamp_mpi_time llamp_mpi_time __attribute__((tls_model("initial-exec")));

/* Set once another thread than MPI_Init's has made a call: that thread's waits in MPI may hold the
 * main thread up outside MPI (pthread_join), so the main thread's time outside MPI is no longer
 * its computation, and the record says -1. */
extern int llamp_mpi_other_threads;

static inline uint64_t llamp_ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
#endif
}

static inline uint64_t llamp_mpi_enter(void) { return llamp_mpi_time.depth++ == 0 ? llamp_ticks() : 0; }

static inline void llamp_mpi_leave(uint64_t start) {
  if (--llamp_mpi_time.depth == 0) {
    llamp_mpi_time.inside_ticks += llamp_ticks() - start;
    ++llamp_mpi_time.calls;
    if (!llamp_mpi_time.initialized_mpi) __atomic_store_n(&llamp_mpi_other_threads, 1, __ATOMIC_RELAXED);
  }
}

/* The next definition of an MPI function (the tracer's wrapper, or the MPI library's); aborts
 * with a message when there is none. */
void *llamp_mpi_next(const char *name);

#endif
