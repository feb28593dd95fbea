/*
 * llamp latency injector: C interface used by the patched MPICH 4.0.2
 * (patches/mpich-4.0.2-llamp-inject.patch) on top of the patched UCX 1.13.1
 * (patches/ucx-1.13.1-llamp-defer-am.patch).  See docs/injector.md.
 *
 * Every UCP active message that crosses the network (eager fragments,
 * rendezvous control messages, sync acks, user AMs; not wireup) is taken from
 * UCX when the transport delivers it, stamped with CLOCK_MONOTONIC, kept in a
 * queue ordered by release time and handed back to its UCP handler at
 * arrival + LLAMP_DELTA_L, under MPICH's own locks.
 */
#ifndef LLAMP_INJECT_H
#define LLAMP_INJECT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ucp_worker;

/* Reads LLAMP_DELTA_L, LLAMP_INJECT_STATS and LLAMP_INJECT_WATCH_PERIOD.
 * Returns 0, or -1 with a message naming the variable and value in err. */
int llamp_inject_configure(char *err, size_t err_len);

/* Nonzero when LLAMP_DELTA_L > 0 was configured. */
int llamp_inject_active(void);

/* Configured added latency in ns (0 when off). */
int64_t llamp_inject_delta_ns(void);

/* Installs the UCX hooks for the next ucp_worker_create(). */
void llamp_inject_ucx_prepare(void);

/* Binds the injector to the worker just created.  trylock must take, without
 * waiting, the lock MPICH holds while the application is inside MPI (and
 * around its own ucp_worker_progress calls), returning nonzero on success;
 * unlock releases it.  Failing to get it means "the application is inside
 * MPI and polls UCX itself": the injector's thread never waits for it, so it
 * can never make the application sleep on a contended lock. */
int llamp_inject_ucx_bind(struct ucp_worker *worker, int rank, int (*trylock)(void *),
                          void (*unlock)(void *), void *lock_arg, char *err, size_t err_len);

/* Starts the delay/watch thread (after MPICH's locks are live). */
int llamp_inject_start_thread(char *err, size_t err_len);

/* Stops the thread; safe to call when it never started. */
void llamp_inject_stop_thread(void);

/* Drops what is still queued, prints LLAMP_INJECT_STATS, removes the hooks.
 * Call before ucp_worker_destroy. */
void llamp_inject_ucx_unbind(void);

#ifdef __cplusplus
}
#endif

#endif /* LLAMP_INJECT_H */
