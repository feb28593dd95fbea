/*
 * The injector's link to the patched UCX: the defer/poll hooks, and the
 * thread that observes arrivals and releases messages while the application
 * computes.  Needs the llamp-patched <ucp/api/ucp.h>.
 *
 * Who touches the queue: whoever holds the worker, i.e. the application
 * gate or, without it, MPICH's lock (the application thread inside
 * ucp_worker_progress, or this file's thread between a successful trylock()
 * and unlock()).  Only app_polls is shared without it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>
#include <uct/api/uct_def.h>

#include "config.h"
#include "delay_queue.h"
#include "lateness.h"
#include "llamp_inject.h"

/* Progress passes per wakeup before giving up on arming the worker. */
#define LLAMP_MAX_ARM_TRIES 64
#define LLAMP_AM_ID_SLOTS 32

static struct {
    ucp_worker_h worker;         /* NULL when not (or no longer) delaying */
    ucp_worker_h unbound_worker; /* the worker once bound, for late arrivals */
    int rank;
    int (*trylock)(void *);
    void (*unlock)(void *);
    void *lock_arg;
    int64_t delta_ns;
    int64_t watch_ns;
    int stats;
    int arrival_at_send; /* trust the senders' stamps (LLAMP_INJECT_ARRIVAL) */

    llamp_delay_queue queue;
    _Atomic uint64_t app_polls; /* ucp_worker_progress calls by the application */
    int thread_progressing;     /* the thread holds the worker (under the lock) */

    int worker_fd; /* UCX worker event fd */
    int epoll_fd;
    int timer_fd;      /* next release deadline, set by the thread */
    int watch_fd;      /* periodic: "has the application stopped polling?" */
    uint64_t tick_rng; /* xorshift state: random phase of a restarted tick */
    int tick_stopped;  /* watch tick off while the thread watches the armed
                          worker; both sides touch it only holding the worker */
    int watching;      /* the tick runs: an arrival without a send stamp was
                          seen (every one with LLAMP_INJECT_ARRIVAL=seen) */
    int stop_fd;
    pthread_t thread;
    int thread_running;
    int turns_by_gate; /* the thread took turns through the gate, not MPICH's mutex */

    uint64_t delayed_by_am[LLAMP_AM_ID_SLOTS];
    uint64_t delayed_gets;    /* rendezvous get completions held 2 delta L */
    uint64_t stamped;         /* messages whose arrival is the sender's stamp */
    uint64_t due_when_seen;   /* ... already due when this process saw them */
    uint64_t due_outside_mpi; /* released in the first pass of an MPI call: perhaps due
                                 while the application computed, so not timed */
    uint64_t dropped_at_finalize;
    llamp_lateness lateness;
} inj = {.worker_fd = -1, .epoll_fd = -1, .timer_fd = -1, .watch_fd = -1, .stop_fd = -1};

static inline uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void start_watching(void);

/*
 * UCX transport callback context: copy the message, queue it.  sent_ns is the
 * sender's stamp (0 when the sender does not share our clock): the message
 * arrived then, even if this process was computing and sees it only now, so
 * delta L counts from there (paper 000, Fig. 8 d).  Without a stamp the
 * arrival is taken now, i.e. as soon as this process or the thread polls.
 */
static ucs_status_t defer_am(void *arg, uint8_t am_id, void *data, size_t length, unsigned am_flags,
                             uint64_t sent_ns)
{
    llamp_delayed_msg msg;
    ucs_status_t status;

    (void)arg;
    if (inj.worker == NULL) {
        /* after llamp_inject_ucx_unbind (worker teardown): no more delays.
         * data lies behind the send stamp inside a transport descriptor, so
         * the handler must not keep it: without the DESC flag it copies what
         * it needs, and UCT releases the descriptor on UCS_OK. */
        ucp_worker_llamp_dispatch(inj.unbound_worker, am_id, data, length,
                                  am_flags & ~(unsigned)UCT_CB_PARAM_FLAG_DESC);
        return UCS_OK;
    }
    if (!inj.arrival_at_send) {
        sent_ns = 0;
    }
    if (sent_ns == 0 && !inj.watching) {
        start_watching(); /* a peer without this host's clock: see the thread */
    }
    /* A stamp comes only from a peer on this host's CLOCK_MONOTONIC, so it is
     * never in the future; with one, the clock is read for statistics only
     * (a read per message is a cost a run without the injector does not pay). */
    uint64_t now = (sent_ns == 0 || inj.stats) ? now_ns() : 0;
    uint64_t arrival = sent_ns != 0 ? sent_ns : now;
    msg.release_ns = arrival + (uint64_t)inj.delta_ns;
    int due = msg.release_ns <= now;
    /* Not timed: already due, or seen by the thread while the application
     * computes, so released at its next poll by design (the thread releases
     * nothing), however long after it fell due. */
    msg.due_when_seen = inj.stats && (due || inj.thread_progressing);
    if (inj.stats) {
        inj.stamped += (sent_ns != 0);
        inj.due_when_seen += due;
    }
    msg.length = length;
    msg.am_id = am_id;
    /* Always copy: a kept transport descriptor would have to be released at
     * UCP's headroom offset, which is UCP-internal; messages held here are
     * eager fragments (<= 8 KiB on these transports) or control messages. */
    msg.data = malloc(length ? length : 1);
    if (msg.data == NULL) {
        fprintf(stderr, "llamp-inject: out of memory holding a %zu-byte message\n", length);
        abort();
    }
    memcpy(msg.data, data, length);
    msg.am_flags = am_flags & ~(unsigned)UCT_CB_PARAM_FLAG_DESC;
    msg.owned = 1;
    msg.kind = LLAMP_HELD_AM;
    status = UCS_OK;
    if (llamp_delay_queue_push(&inj.queue, msg) != 0) {
        fprintf(stderr, "llamp-inject: out of memory growing the delay queue (%zu held)\n",
                inj.queue.size);
        abort();
    }
    return status;
}

/*
 * UCX callback on the receiver when a rendezvous get (CMA read here) has
 * copied all data.  On a network the read is a round trip: the read request
 * travels L to the sender, the data L back.  The copy itself has no message
 * for defer_am to hold, so its completion is held for 2 delta L: the receive
 * completes, and the ATS (itself delayed delta L on arrival) leaves, that
 * much later.  Rendezvous then costs L -> L + delta L in every latency term
 * of the analyzer's RDMA-read model (docs/analyzer.md, docs/injector.md).
 */
static void defer_get(void *arg, void *completion)
{
    llamp_delayed_msg msg;
    (void)arg;
    if (inj.worker == NULL) {
        ucp_worker_llamp_complete_get(completion);
        return;
    }
    memset(&msg, 0, sizeof(msg));
    msg.release_ns = now_ns() + 2 * (uint64_t)inj.delta_ns;
    msg.data = completion;
    msg.kind = LLAMP_HELD_RNDV_GET;
    if (llamp_delay_queue_push(&inj.queue, msg) != 0) {
        fprintf(stderr, "llamp-inject: out of memory growing the delay queue (%zu held)\n",
                inj.queue.size);
        abort();
    }
}

static void set_timer_fd(int fd, uint64_t deadline_ns)
{
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    if (deadline_ns) {
        its.it_value.tv_sec = (time_t)(deadline_ns / 1000000000u);
        its.it_value.tv_nsec = (long)(deadline_ns % 1000000000u);
    }
    timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Starts (on) or stops the thread's periodic watch tick.  The first tick
 * comes after a random 1/2 .. 1 period: restarted by the application's first
 * poll after a compute phase, a tick at exactly one period would fall on a
 * release due 2 delta L later whenever 2 delta L is the period (a rendezvous
 * get posted in that call, delta L = 100 us: +20 us measured). */
static void set_watch_tick(int on)
{
    struct itimerspec tick;
    memset(&tick, 0, sizeof(tick));
    if (on) {
        uint64_t half = (uint64_t)inj.watch_ns / 2;
        inj.tick_rng ^= inj.tick_rng << 13;
        inj.tick_rng ^= inj.tick_rng >> 7;
        inj.tick_rng ^= inj.tick_rng << 17;
        uint64_t first = half + (half ? inj.tick_rng % half : 0);
        tick.it_interval.tv_sec = (time_t)(inj.watch_ns / 1000000000);
        tick.it_interval.tv_nsec = (long)(inj.watch_ns % 1000000000);
        tick.it_value.tv_sec = (time_t)(first / 1000000000);
        tick.it_value.tv_nsec = (long)(first % 1000000000);
        if (first == 0) {
            tick.it_value = tick.it_interval;
        }
    }
    timerfd_settime(inj.watch_fd, 0, &tick, NULL);
}

/* Only arrivals without a send stamp need the thread (their arrival is the
 * time a poll first sees them), so the tick starts with the first of them:
 * on one node, where every message is stamped, the thread never wakes. */
static void start_watching(void)
{
    inj.watching = 1;
    if (inj.watch_fd >= 0) {
        set_watch_tick(1); /* else llamp_inject_start_thread starts it */
    }
}

/* End of every ucp_worker_progress: hand back what is due.  This runs on
 * every pass of MPICH's polling loops, so with nothing held it reads no
 * clock: a clock read per pass doubled the pass here (22-34 % of a
 * collective-heavy run's profile at delta L = 1 ns) and delayed every
 * arrival's detection by it, i.e. a per-message cost that a run without the
 * injector does not pay.  The thread learns that the application polls from
 * a counter instead of a time stamp. */
static unsigned release_held(void);

static unsigned release_due(void *arg)
{
    (void)arg;
    if (!inj.thread_progressing) {
        atomic_store_explicit(&inj.app_polls,
                              atomic_load_explicit(&inj.app_polls, memory_order_relaxed) + 1,
                              memory_order_relaxed);
        if (inj.tick_stopped) {
            /* back in MPI after the thread took over: watch again */
            inj.tick_stopped = 0;
            set_watch_tick(1);
        }
    }
    if (inj.worker == NULL || inj.queue.size == 0 || inj.thread_progressing) {
        return 0; /* the thread stamps arrivals; only the application releases */
    }
    return release_held();
}

/* Hands back every held message due at the start of this pass; one that
 * falls due while these are dispatched waits for the next pass.  Out of line:
 * the common pass, nothing held, then needs no stack frame. */
static __attribute__((noinline)) unsigned release_held(void)
{
    unsigned released = 0;
    uint64_t now = now_ns();
    const llamp_delayed_msg *top;
    /* Did the application stay in this MPI call since the previous pass?  A
     * message that fell due between the two passes was then late while the
     * application polled (or was stalled inside MPI); otherwise it may have
     * fallen due while the application computed, and its release at the next
     * call is no lateness of the injector's.  Every MPI call stores 1 into
     * the gate's "inside" flag on entry (llamp_inject_gate_enter); a pass
     * with something held marks it 2, which the thread reads as inside as
     * well.  Without the gate (MPICH's mutex) every release is timed; without
     * statistics nothing is marked. */
    int same_call = 1;
    if (inj.stats && llamp_inject_gate_on) {
        same_call = llamp_inject_gate_app_inside == 2;
        llamp_inject_gate_app_inside = 2;
    }
    while ((top = llamp_delay_queue_top(&inj.queue)) != NULL && top->release_ns <= now) {
        llamp_delayed_msg msg;
        llamp_delay_queue_pop(&inj.queue, &msg);
        if (inj.stats) {
            if (!msg.due_when_seen && same_call) {
                llamp_lateness_add(&inj.lateness, (int64_t)(now - msg.release_ns));
            } else if (!msg.due_when_seen) {
                ++inj.due_outside_mpi;
            }
            if (msg.kind == LLAMP_HELD_RNDV_GET) {
                ++inj.delayed_gets;
            } else {
                ++inj.delayed_by_am[msg.am_id % LLAMP_AM_ID_SLOTS];
            }
        }
        if (msg.kind == LLAMP_HELD_RNDV_GET) {
            ucp_worker_llamp_complete_get(msg.data);
        } else {
            ucp_worker_llamp_dispatch(inj.worker, msg.am_id, msg.data, msg.length, msg.am_flags);
        }
        if (msg.owned) {
            free(msg.data);
        }
        ++released;
    }
    return released;
}

void llamp_inject_ucx_prepare(void)
{
    ucp_llamp_hooks_t hooks = {
        .defer = defer_am, .poll = release_due, .defer_get = defer_get, .arg = NULL};
    llamp_delay_queue_init(&inj.queue);
    llamp_lateness_init(&inj.lateness);
    ucp_llamp_set_hooks(&hooks);
}

int llamp_inject_ucx_bind(struct ucp_worker *worker, int rank, int (*trylock)(void *),
                          void (*unlock)(void *), void *lock_arg, char *err, size_t err_len)
{
    const llamp_inject_config *cfg = llamp_inject_settings();
    ucs_status_t status;

    ucp_llamp_set_hooks(NULL); /* only this worker is delayed */
    inj.worker = worker;
    inj.rank = rank;
    inj.trylock = trylock;
    inj.unlock = unlock;
    inj.lock_arg = lock_arg;
    inj.delta_ns = cfg->delta_ns;
    inj.watch_ns = cfg->watch_period_ns;
    inj.stats = cfg->stats;
    inj.arrival_at_send = cfg->arrival_at_send;

    status = ucp_worker_get_efd(worker, &inj.worker_fd);
    if (status != UCS_OK) {
        snprintf(err, err_len, "LLAMP_DELTA_L: UCX worker has no event fd: %s",
                 ucs_status_string(status));
        return -1;
    }
    return 0;
}

static void watch_worker_fd(void)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.fd = inj.worker_fd};
    epoll_ctl(inj.epoll_fd, EPOLL_CTL_MOD, inj.worker_fd, &ev);
}

/*
 * The thread: it sees arrivals without a send stamp while the application
 * computes, and nothing else.  It wakes on a periodic watch tick
 * (LLAMP_INJECT_WATCH_PERIOD), which runs only once such an arrival was seen
 * (start_watching), and looks at three cases:
 *  - the application called ucp_worker_progress since the last look: it is
 *    inside MPI and sees arrivals itself;
 *  - the gate (or MPICH's lock) is taken (trylock fails): the application
 *    is inside an MPI call (perhaps descheduled); again nothing to do.  The
 *    thread never waits for it: a waiter makes the application's next
 *    return hand over, and the application then sleeps on the contended
 *    lock and loses its core for a whole time slice on a busy machine (that was
 *    the cause of ms-scale delays seen with an earlier, blocking version);
 *  - otherwise the application computes outside MPI: progress the worker,
 *    which stamps and holds what arrived, arm its event fd, stop the tick
 *    and sleep until the next arrival (the application's next poll restarts
 *    the tick).
 * In the first two cases it looks again one period later: that is the bound
 * on how late an arrival is stamped when it comes just after the application
 * left MPI.
 * The thread releases nothing (release_due): a message due while the
 * application computes is handed to MPICH at the application's next poll,
 * as the same message arriving from a network would be, so a rendezvous
 * handshake or a sync acknowledgement does not move on while the rank
 * computes, as without the injector (MPICH here has no progress thread;
 * docs/schedgen.md, "Progress of rendezvous receives").
 */
static void *injector_thread(void *unused)
{
    (void)unused;
    uint64_t timer_at = 0;   /* what timer_fd is set to (0: disarmed) */
    uint64_t polls_seen = 0; /* app_polls when the thread last looked */
    for (;;) {
        uint64_t polls = atomic_load_explicit(&inj.app_polls, memory_order_relaxed);
        uint64_t wake_at = 0;
        int app_polled = polls != polls_seen;
        polls_seen = polls;

        if (inj.watching && !app_polled && inj.trylock(inj.lock_arg)) {
            int armed = 0;
            inj.thread_progressing = 1;
            for (int tries = 0; tries < LLAMP_MAX_ARM_TRIES && !armed; ++tries) {
                while (ucp_worker_progress(inj.worker) != 0) {
                }
                armed = (ucp_worker_arm(inj.worker) == UCS_OK);
            }
            if (armed && !inj.tick_stopped) {
                /* arrivals wake the thread now; the tick would only cost
                 * the computing application a wakeup per period */
                inj.tick_stopped = 1;
                set_watch_tick(0);
            }
            inj.thread_progressing = 0;
            inj.unlock(inj.lock_arg);

            if (armed) {
                watch_worker_fd();
            } else {
                wake_at = now_ns() + (uint64_t)inj.watch_ns; /* retry arming soon */
            }
        }

        if (wake_at != timer_at) {
            /* a syscall only when the deadline changes: the tick's wakeups
             * while the application polls must stay as short as possible */
            set_timer_fd(inj.timer_fd, wake_at);
            timer_at = wake_at;
        }
        struct epoll_event events[4];
        int n = epoll_wait(inj.epoll_fd, events, 4, -1);
        for (int i = 0; i < n; ++i) {
            uint64_t value;
            if (events[i].data.fd == inj.stop_fd) {
                return NULL;
            }
            if (events[i].data.fd == inj.timer_fd) {
                (void)!read(events[i].data.fd, &value, sizeof(value));
                timer_at = 0; /* expired: one-shot */
            }
            if (events[i].data.fd == inj.watch_fd) {
                /* A periodic timerfd re-arms only when read: unread, it
                 * fired once and never again (so before this read the
                 * thread never took over after its first tick). */
                (void)!read(events[i].data.fd, &value, sizeof(value));
            }
        }
    }
}

int llamp_inject_start_thread(char *err, size_t err_len)
{
    if (inj.worker == NULL) {
        snprintf(err, err_len, "LLAMP_DELTA_L: injector has no UCX worker (not ch4:ucx?)");
        return -1;
    }
    inj.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    inj.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    int watch_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    inj.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (inj.epoll_fd < 0 || inj.timer_fd < 0 || watch_fd < 0 || inj.stop_fd < 0) {
        snprintf(err, err_len, "LLAMP_DELTA_L: cannot create the injector's fds: %s",
                 strerror(errno));
        return -1;
    }
    struct epoll_event ev = {.events = EPOLLIN};
    ev.data.fd = inj.timer_fd;
    epoll_ctl(inj.epoll_fd, EPOLL_CTL_ADD, inj.timer_fd, &ev);
    ev.data.fd = watch_fd;
    ev.events = EPOLLIN | EPOLLET; /* the thread reads it at every expiry */
    epoll_ctl(inj.epoll_fd, EPOLL_CTL_ADD, watch_fd, &ev);
    ev.events = EPOLLIN;
    ev.data.fd = inj.stop_fd;
    epoll_ctl(inj.epoll_fd, EPOLL_CTL_ADD, inj.stop_fd, &ev);
    /* disabled until the worker is armed (one-shot, re-enabled each time) */
    ev.events = 0;
    ev.data.fd = inj.worker_fd;
    epoll_ctl(inj.epoll_fd, EPOLL_CTL_ADD, inj.worker_fd, &ev);

    /* A periodic tick, which the polling application never pushes ahead: it
     * makes no syscall for the thread's sake (see the thread's comment).  It
     * runs from the start where no arrival has a stamp, else from the first
     * that has none (start_watching). */
    inj.watch_fd = watch_fd;
    inj.tick_stopped = 0;
    inj.tick_rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)inj.rank << 32) ^ now_ns();
    if (inj.watching || !inj.arrival_at_send) {
        inj.watching = 1;
        set_watch_tick(1);
    }
    int rc = pthread_create(&inj.thread, NULL, injector_thread, NULL);
    if (rc != 0) {
        snprintf(err, err_len, "LLAMP_DELTA_L: cannot start the injector thread: %s", strerror(rc));
        return -1;
    }
    inj.thread_running = 1;
    inj.turns_by_gate = llamp_inject_gate_on; /* MPICH turns the gate off before unbinding */
    return 0;
}

void llamp_inject_stop_thread(void)
{
    if (!inj.thread_running) {
        return;
    }
    uint64_t one = 1;
    (void)!write(inj.stop_fd, &one, sizeof(one));
    pthread_join(inj.thread, NULL);
    inj.thread_running = 0;
}

static void print_stats(void)
{
    uint64_t total = 0;
    char by_type[512] = "";
    size_t used = 0;

    for (unsigned id = 0; id < LLAMP_AM_ID_SLOTS; ++id) {
        if (inj.delayed_by_am[id] == 0) {
            continue;
        }
        total += inj.delayed_by_am[id];
        int w = snprintf(by_type + used, sizeof(by_type) - used, "%s%s:%" PRIu64, used ? "," : "",
                         ucp_llamp_am_name((uint8_t)id), inj.delayed_by_am[id]);
        if (w > 0 && (size_t)w < sizeof(by_type) - used) {
            used += (size_t)w;
        }
    }
    if (inj.delayed_gets != 0) {
        /* not a message: the held completion of a rendezvous get (2 delta L) */
        total += inj.delayed_gets;
        int w = snprintf(by_type + used, sizeof(by_type) - used, "%sRNDV_GET_DONE:%" PRIu64,
                         used ? "," : "", inj.delayed_gets);
        if (w > 0 && (size_t)w < sizeof(by_type) - used) {
            used += (size_t)w;
        }
    }
    int64_t median = llamp_lateness_quantile(&inj.lateness, 0.5);
    int64_t p99 = llamp_lateness_quantile(&inj.lateness, 0.99);
    int64_t max = llamp_lateness_quantile(&inj.lateness, 1.0);
    /* One write(2) of the whole line: a pipe takes up to PIPE_BUF bytes at once, so Hydra forwards
     * it whole. stdio may write a line to unbuffered stderr in pieces (glibc 2.39 did), and another
     * rank's line then lands between them (stop 59). */
    char line[1024];
    int n = snprintf(
        line, sizeof(line),
        "llamp-inject: rank=%d delta_l_ns=%" PRId64 " delayed=%" PRIu64
        " lateness_median_ns=%" PRId64 " lateness_p99_ns=%" PRId64 " lateness_max_ns=%" PRId64
        " lateness_mean_ns=%" PRId64 " lateness_total_ns=%" PRId64 " lateness_count=%" PRIu64
        " dropped_at_finalize=%" PRIu64 " stamped=%" PRIu64 " due_when_seen=%" PRIu64
        " due_outside_mpi=%" PRIu64 " by_type=%s turns=%s watch=%s\n",
        inj.rank, inj.delta_ns, total, median, p99, max, llamp_lateness_mean(&inj.lateness),
        inj.lateness.total_ns, inj.lateness.count, inj.dropped_at_finalize, inj.stamped,
        inj.due_when_seen, inj.due_outside_mpi, used ? by_type : "none",
        inj.turns_by_gate ? "gate" : "mutex", inj.watching ? "on" : "off");
    if (n > 0) {
        size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
        line[len - 1] = '\n'; /* a line cut short still ends */
        if (write(STDERR_FILENO, line, len) < 0) {
            /* nothing to do: the statistics are optional, the application must go on */
        }
    }
}

void llamp_inject_ucx_unbind(void)
{
    llamp_inject_stop_thread();
    llamp_delayed_msg msg;
    while (llamp_delay_queue_pop(&inj.queue, &msg) == 0) {
        /* left over at finalize: nobody can receive it any more */
        ++inj.dropped_at_finalize;
        if (msg.kind == LLAMP_HELD_RNDV_GET) {
            continue; /* its request goes with the worker */
        }
        if (msg.owned) {
            free(msg.data);
        } else {
            ucp_worker_llamp_drop(msg.data, msg.am_flags);
        }
    }
    if (inj.stats) {
        print_stats();
    }
    llamp_delay_queue_free(&inj.queue);
    llamp_lateness_free(&inj.lateness);
    inj.unbound_worker = inj.worker;
    inj.worker = NULL;
    int *fds[] = {&inj.epoll_fd, &inj.timer_fd, &inj.watch_fd, &inj.stop_fd};
    for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); ++i) {
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
        }
    }
}
