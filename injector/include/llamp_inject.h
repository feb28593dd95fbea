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
 * waiting, what the application holds while it is inside MPI and around its
 * own ucp_worker_progress calls (the gate below, or MPICH's global lock),
 * returning nonzero on success;
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

/*
 * The application gate (injector/src/app_gate.c, docs/injector.md): how the
 * application and the injector's thread take turns at MPICH and the worker
 * without MPICH's global mutex, which costs every MPI call a lock and an
 * unlock.  The application marks each MPI call with two plain stores
 * (llamp_inject_gate_enter/exit, from MPICH's GLOBAL critical section); the
 * thread, which enters only after the application stopped polling, pays for
 * the ordering with membarrier(2).  With the gate on, MPICH keeps its
 * unthreaded paths (isThreaded stays as the application's thread level).
 */
extern int llamp_inject_gate_on;
extern volatile int llamp_inject_gate_app_inside;
extern volatile int llamp_inject_gate_thread_holds;

/* Turns the gate on; 0 where membarrier(2) is unavailable (keep the mutex).
 * The caller counts as inside MPI until its next MPI call returns. */
int llamp_inject_gate_enable(void);
void llamp_inject_gate_disable(void);
/* The thread: enter if the application is outside MPI (nonzero), never waiting. */
int llamp_inject_gate_try(void);
void llamp_inject_gate_release(void);
/* The application found the thread deciding (waits for the decision) or
 * inside (sleeps until it left). */
void llamp_inject_gate_wait(void);

static inline void llamp_inject_gate_enter(void)
{
    if (llamp_inject_gate_on) {
        __atomic_store_n(&llamp_inject_gate_app_inside, 1, __ATOMIC_RELAXED);
        /* the store before the load: the compiler keeps the order, the
         * thread's membarrier makes the CPU keep it */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&llamp_inject_gate_thread_holds, __ATOMIC_ACQUIRE) != 0) {
            llamp_inject_gate_wait();
        }
    }
}

static inline void llamp_inject_gate_exit(void)
{
    if (llamp_inject_gate_on) {
        __atomic_store_n(&llamp_inject_gate_app_inside, 0, __ATOMIC_RELEASE);
    }
}

#ifdef __cplusplus
}
#endif

#endif /* LLAMP_INJECT_H */
