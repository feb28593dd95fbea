/*
 * The application gate: who may drive MPICH and the UCX worker, the
 * application inside an MPI call or the injector's thread (docs/injector.md,
 * "The application gate").
 *
 * An asymmetric Dekker handshake.  The application side, run on every MPI
 * call, is two plain stores and a load; the thread side, run only when the
 * application has not polled for a whole watch period, pays for both with a
 * membarrier(2) that makes every thread of the process execute a full memory
 * barrier.  Either the application's "inside" store is visible to the
 * thread's check after that barrier, or the application's check comes after
 * it and sees the thread's "holding" store; both cannot miss each other.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "llamp_inject.h"

int llamp_inject_gate_on;
volatile int llamp_inject_gate_app_inside;
volatile int llamp_inject_gate_thread_holds;

/* The thread's word.  TRYING lasts one membarrier: the thread decides, and
 * an application that finds it there waits for the decision without
 * sleeping (it is inside already, so the thread will back off unless it
 * decided before the application came in). */
enum { GATE_FREE = 0, GATE_TRYING = 1, GATE_INSIDE = 2, GATE_INSIDE_APP_WAITS = 3 };

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static long membarrier(int cmd)
{
    return syscall(__NR_membarrier, cmd, 0, 0);
}

int llamp_inject_gate_enable(void)
{
    if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) {
        return 0; /* old kernel or a filter: the caller keeps MPICH's mutex */
    }
    /* MPI_Init is still running: inside until its caller's next MPI call */
    llamp_inject_gate_app_inside = 1;
    llamp_inject_gate_thread_holds = GATE_FREE;
    llamp_inject_gate_on = 1;
    return 1;
}

void llamp_inject_gate_disable(void)
{
    llamp_inject_gate_on = 0;
}

void llamp_inject_gate_wait(void)
{
    int *word = (int *)&llamp_inject_gate_thread_holds;
    unsigned spins = 0;
    for (;;) {
        int v = __atomic_load_n(word, __ATOMIC_ACQUIRE);
        if (v == GATE_FREE) {
            return;
        }
        if (v == GATE_TRYING) {
            /* a membarrier away from its decision; if the thread shares
             * this core and was preempted there, let it run */
            if (++spins % 1024 == 0) {
                sched_yield();
            } else {
                cpu_relax();
            }
            continue;
        }
        if (v == GATE_INSIDE && !__atomic_compare_exchange_n(word, &v, GATE_INSIDE_APP_WAITS, 0,
                                                             __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            continue; /* the thread left meanwhile */
        }
        /* the thread is inside: sleep until it leaves (it runs on the
         * application's core, so spinning would keep it out) */
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, GATE_INSIDE_APP_WAITS, NULL, NULL, 0);
    }
}

int llamp_inject_gate_try(void)
{
    int *word = (int *)&llamp_inject_gate_thread_holds;
    __atomic_store_n(word, GATE_TRYING, __ATOMIC_RELAXED);
    /* every application thread that runs now executes a full barrier: its
     * pending "inside" store becomes visible, or its next check sees ours */
    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
    if (__atomic_load_n(&llamp_inject_gate_app_inside, __ATOMIC_ACQUIRE) == 0) {
        __atomic_store_n(word, GATE_INSIDE, __ATOMIC_RELAXED);
        return 1;
    }
    /* nobody sleeps on TRYING */
    __atomic_store_n(word, GATE_FREE, __ATOMIC_RELEASE);
    return 0;
}

void llamp_inject_gate_release(void)
{
    int *word = (int *)&llamp_inject_gate_thread_holds;
    if (__atomic_exchange_n(word, GATE_FREE, __ATOMIC_RELEASE) == GATE_INSIDE_APP_WAITS) {
        syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}
