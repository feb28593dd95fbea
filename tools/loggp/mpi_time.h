/*
 * Time inside MPI calls, for the runtime timer (runtime_timer.c): every MPI communication call
 * passes through a generated wrapper (gen_mpi_timing.py) that adds the call's duration to its
 * thread's total. The rest of the interval between MPI_Init and MPI_Finalize is the rank's own
 * computation, which latency does not change: when it grows, the host slowed the rank down (the
 * campaign's noisy-host check, docs/campaign.md "Computation outside MPI").
 *
 * Except where the rank computes while it waits: a polling loop (MPI_Test, MPI_Iprobe, ... that
 * found nothing, then a slice of work, then the next poll) computes for as long as its messages
 * take, so that work grows with the latency (app_completions at 4 ranks: 265 ms at ΔL = 0, 1.09 s
 * at 50 us, 1.47 s at 75 us). The time from a poll that found nothing to the thread's next MPI call
 * is kept apart as poll_wait_ticks and is neither computation nor time inside MPI.
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
  uint64_t inside_ticks;    /* summed over the outermost calls */
  uint64_t poll_wait_ticks; /* summed from each poll that found nothing to the next call */
  uint64_t last_leave;      /* when the last outermost call returned */
  uint64_t calls;
  int after_failed_poll; /* the last outermost call was a poll that found nothing */
  int depth;             /* a wrapped call that calls another (MPI_Sendrecv_replace in some MPIs) counts once */
  int initialized_mpi;   /* the thread that returned from MPI_Init: the one the record is about */
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

/* Ends a wait that began with a poll that found nothing, at `now` (a call's start, or MPI_Finalize). */
static inline void llamp_mpi_end_poll_wait(uint64_t now) {
  if (llamp_mpi_time.after_failed_poll) {
    llamp_mpi_time.poll_wait_ticks += now - llamp_mpi_time.last_leave;
    llamp_mpi_time.after_failed_poll = 0;
  }
}

static inline uint64_t llamp_mpi_enter(void) {
  if (llamp_mpi_time.depth++ != 0) return 0;
  const uint64_t now = llamp_ticks();
  llamp_mpi_end_poll_wait(now);
  return now;
}

/* found_nothing: the call was a poll (MPI_Test*, MPI_Iprobe, ...) that completed or matched
 * nothing, so the rank's work until its next call is part of a wait (gen_mpi_timing.py POLLS). */
static inline void llamp_mpi_leave_poll(uint64_t start, int found_nothing) {
  if (--llamp_mpi_time.depth == 0) {
    const uint64_t now = llamp_ticks();
    llamp_mpi_time.inside_ticks += now - start;
    llamp_mpi_time.last_leave = now;
    llamp_mpi_time.after_failed_poll = found_nothing;
    ++llamp_mpi_time.calls;
    if (!llamp_mpi_time.initialized_mpi) __atomic_store_n(&llamp_mpi_other_threads, 1, __ATOMIC_RELAXED);
  }
}

static inline void llamp_mpi_leave(uint64_t start) { llamp_mpi_leave_poll(start, 0); }

/* The next definition of an MPI function (the tracer's wrapper, or the MPI library's); aborts
 * with a message when there is none. */
void *llamp_mpi_next(const char *name);

#endif
