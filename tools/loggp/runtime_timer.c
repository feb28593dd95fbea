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
 *
 * With LLAMP_CORE_PROBE_SHM=/name (the campaign sets it; docs/campaign.md, "Core hand-off") the
 * ranks of a node also time a cache line's hand-off between their cores, just before MPI_Init
 * and just after MPI_Finalize: the state of the cores within the job, which a probe before or
 * after the job can miss (a VM's host moves vCPUs while mpiexec starts). Outside MPI_Init ..
 * MPI_Finalize on purpose: a wrapper listed after this library (the tracer) must not see the
 * probe as the application's computation, nor the runtime contain it. Local rank 0 (Hydra's
 * MPI_LOCALRANKID) pings each other local rank in turn through the shared page shm_open(name).
 * Rank 0's line ends with
 *
 *     core_init_ns <a> core_finalize_ns <b>      (the largest pair's median block; -1: no answer)
 *
 * With LLAMP_CORE_PROBE_PERIOD_MS=<P> as well, a thread in each rank probes during the run too:
 * every P ms on a grid all ranks of the node share (CLOCK_MONOTONIC multiples of P), local rank
 * 0's thread pings each other rank's thread with a short probe (6 blocks of 20 round trips, about
 * 7 us on cores that share a cache, 40 us on cores that do not; a peer that does not answer
 * within 50 us is skipped, not counted). Each thread follows its rank's CPU (the one the rank's
 * thread last ran on), so the probe times the ranks' cores, and two threads the scheduler had
 * put on one CPU do not wait for each other in turn. The vCPUs can move mid-job, between fast
 * probes at both edges (docs/campaign.md, "Core hand-off"). Rank 0's line then also has
 *
 *     core_run_max_ns <m> core_run_probes <n> core_run_min_ns <s>
 *
 * (the largest and the smallest median over the n answered probes: the largest shows the ranks'
 * cores apart, the smallest on one physical core; -1 when none was answered).
 *
 * The thread wakes P ms apart and takes about 10 to 50 us each time: 0.05 % of a core at 100 ms.
 *
 * Without the variable, without Hydra's variables, or alone on a node nothing is probed.
 *
 * Every rank's line also ends with the rank's computation, the part of its runtime the thread
 * that calls MPI_Finalize spent outside MPI's communication calls (mpi_time.h; the wrappers are
 * generated from llamp's call table by gen_mpi_timing.py), and how many such calls it made:
 *
 *     compute_ns <c> mpi_calls <k> poll_wait_ns <w>      (c = -1 when other threads called MPI too)
 *
 * w is the time from each poll that found nothing (MPI_Test*, MPI_Iprobe, MPI_Improbe,
 * MPI_Parrived) to the thread's next MPI call: the work a polling loop does while it waits, which
 * grows with the latency, so c leaves it out (mpi_time.h).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "hand_off.h"
#include "mpi_time.h"

static int64_t init_end_ns = -1;
static uint64_t init_end_ticks; /* llamp_ticks() with init_end_ns: the ticks' rate over the run */

__thread struct llamp_mpi_time llamp_mpi_time __attribute__((tls_model("initial-exec")));
int llamp_mpi_other_threads;

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

void *llamp_mpi_next(const char *name) { return next_symbol(name); }

/* ---- in-run core probe (see the top of the file; the method is hand_off.h) ---- */

enum { PROBE_MAX_RANKS = 64, PROBE_BLOCKS = 30, PROBE_ROUND_TRIPS = 500 };
enum { PROBE_INIT = 0, PROBE_FINALIZE = 1, PROBE_DURING = 2 };
enum { WATCH_BLOCKS = 5, WATCH_ROUND_TRIPS = 20 };
/* How long a party waits for the other. Both wake at the same grid time, but each shares its CPU
 * with a rank that spins in MPI, and the scheduler (EEVDF on 6.x kernels) may let that rank finish
 * its slice, 1-3 ms, before the woken thread runs. Every microsecond a party spins for a late peer
 * is taken from its own rank, so the wait is short: with 2 ms, app_subcomm at ΔL = 100 us lost
 * 0-108 ms of 2.76 s (11 of 28 probes timed out in the slowest run) against runs without probes;
 * a missed probe is skipped, not counted (stop 16, docs/campaign.md "Core hand-off"). */
#define WATCH_TIMEOUT_NS 50000LL

/* One hand-off line per local rank and phase. */
struct probe_page {
  llamp_hand_off_line line[3][PROBE_MAX_RANKS];
};

static struct probe_page *probe_page;
static int probe_local_rank = -1, probe_local_size = 0;
static double probe_result_ns[2] = {-1, -1};

/* Maps the shared page when the campaign asked for probes; ranks alone on their node skip. */
static void probe_attach(void) {
  const char *name = getenv("LLAMP_CORE_PROBE_SHM");
  const char *local = getenv("MPI_LOCALRANKID"), *nlocal = getenv("MPI_LOCALNRANKS");
  if (name == NULL || name[0] == '\0' || local == NULL || nlocal == NULL) return;
  probe_local_rank = atoi(local);
  probe_local_size = atoi(nlocal);
  if (probe_local_size > PROBE_MAX_RANKS) probe_local_size = PROBE_MAX_RANKS;
  if (probe_local_size < 2 || probe_local_rank < 0 || probe_local_rank >= probe_local_size) return;
  const int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
  if (fd < 0) {
    fprintf(stderr, "llamp-runtime-timer: shm_open(%s): %s; cores not probed\n", name, strerror(errno));
    return;
  }
  /* Both ranks may size it; a fresh object reads as zeros. */
  void *page = ftruncate(fd, sizeof(struct probe_page)) == 0
                   ? mmap(NULL, sizeof(struct probe_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                   : MAP_FAILED;
  close(fd);
  if (page == MAP_FAILED) {
    fprintf(stderr, "llamp-runtime-timer: cannot map %s: %s; cores not probed\n", name, strerror(errno));
    return;
  }
  probe_page = page;
}

/* One probe of every pair (local 0, j); timeout_ns bounds each wait for a peer (processes start
 * at different times). */
static void probe_cores(int phase, int64_t timeout_ns) {
  if (probe_page == NULL) return;
  if (probe_local_rank == 0) {
    double worst = 0, blocks[PROBE_BLOCKS];
    for (int j = 1; j < probe_local_size && worst >= 0; ++j) {
      const double v =
          llamp_hand_off_ping(&probe_page->line[phase][j], PROBE_BLOCKS, PROBE_ROUND_TRIPS, timeout_ns, blocks);
      worst = v < 0 ? -1 : (v > worst ? v : worst);
    }
    probe_result_ns[phase] = worst;
  } else {
    llamp_hand_off_pong(&probe_page->line[phase][probe_local_rank], PROBE_BLOCKS, PROBE_ROUND_TRIPS, timeout_ns);
  }
}

/* ---- probes during the run (LLAMP_CORE_PROBE_PERIOD_MS) ---- */

static int64_t watch_period_ns;
static pthread_t watch_thread;
static int watch_running, watch_stop;
static pthread_mutex_t watch_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_wake;
static double watch_max_ns = -1;
static double watch_min_ns = -1; /* the smallest: ranks on one physical core hand off fastest */
static int watch_probes;
static pid_t watch_rank_tid; /* the thread that returned from MPI_Init */
static int watch_cpu = -1;   /* the CPU the watch thread is pinned to */

/* The CPU the rank's thread last ran on: field 39 of /proc/self/task/<tid>/stat; -1 if unknown. */
static int rank_cpu(void) {
  char path[64], text[1024];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)watch_rank_tid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return -1;
  text[n] = '\0';
  const char *field = strrchr(text, ')'); /* the command name may hold spaces and parentheses */
  if (field == NULL) return -1;
  for (int k = 2; k < 39 && field != NULL; ++k) field = strchr(field + 1, ' '); /* ") S ..." is field 3 */
  return field == NULL ? -1 : atoi(field + 1);
}

/* Pins the watch thread to its rank's CPU. Unpinned, the scheduler may wake both ranks' threads on
 * one CPU (every CPU busy with a rank), where each waits for the other in turn and no probe is
 * answered: 9 of 23 unbound test runs answered 0 of ~50 probes, the rest 47-50. On a node with
 * idle cores an unpinned thread would also time cores other than the ranks'. Called after a probe,
 * so the move does not delay the next one; a rank bound to its core (the campaign's -bind-to core)
 * keeps its thread there anyway. */
static void watch_follow_rank(void) {
  const int cpu = rank_cpu();
  if (cpu < 0 || cpu == watch_cpu || cpu >= CPU_SETSIZE) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0) watch_cpu = cpu;
}

/* One probe of every pair; the pinging side zeroes each line afterwards for the next one. */
static void watch_probe(void) {
  if (probe_local_rank == 0) {
    double blocks[WATCH_BLOCKS];
    for (int j = 1; j < probe_local_size; ++j) {
      llamp_hand_off_line *line = &probe_page->line[PROBE_DURING][j];
      const double v = llamp_hand_off_ping(line, WATCH_BLOCKS, WATCH_ROUND_TRIPS, WATCH_TIMEOUT_NS, blocks);
      __atomic_store_n(&line->counter, 0, __ATOMIC_RELEASE);
      if (v >= 0) {
        ++watch_probes;
        if (v > watch_max_ns) watch_max_ns = v;
        if (watch_min_ns < 0 || v < watch_min_ns) watch_min_ns = v;
      }
    }
  } else {
    /* rank 0 reaches this pair after the others: a later pair waits longer */
    llamp_hand_off_pong(&probe_page->line[PROBE_DURING][probe_local_rank], WATCH_BLOCKS, WATCH_ROUND_TRIPS,
                        WATCH_TIMEOUT_NS * (1 + probe_local_rank));
  }
}

static void *watch(void *unused) {
  (void)unused;
  prctl(PR_SET_TIMERSLACK, 1UL); /* the default 50 us slack would wake the parties apart */
  watch_follow_rank();
  pthread_mutex_lock(&watch_mutex);
  while (!watch_stop) {
    const int64_t next = (monotonic_ns() / watch_period_ns + 1) * watch_period_ns;
    const struct timespec at = {(time_t)(next / 1000000000LL), (long)(next % 1000000000LL)};
    if (pthread_cond_timedwait(&watch_wake, &watch_mutex, &at) == ETIMEDOUT && !watch_stop) {
      pthread_mutex_unlock(&watch_mutex);
      watch_probe();
      watch_follow_rank();
      pthread_mutex_lock(&watch_mutex);
    }
  }
  pthread_mutex_unlock(&watch_mutex);
  return NULL;
}

static void watch_start(void) {
  const char *period = getenv("LLAMP_CORE_PROBE_PERIOD_MS");
  if (probe_page == NULL || period == NULL || atoi(period) <= 0) return;
  watch_period_ns = (int64_t)atoi(period) * 1000000LL;
  watch_rank_tid = gettid();
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&watch_wake, &attr);
  pthread_condattr_destroy(&attr);
  watch_running = pthread_create(&watch_thread, NULL, watch, NULL) == 0;
}

static void watch_end(void) {
  if (!watch_running) return;
  pthread_mutex_lock(&watch_mutex);
  watch_stop = 1;
  pthread_cond_signal(&watch_wake);
  pthread_mutex_unlock(&watch_mutex);
  pthread_join(watch_thread, NULL);
  watch_running = 0;
}

static void before_init(void) {
  probe_attach();
  probe_cores(PROBE_INIT, 10000000000LL);
}

int MPI_Init(int *argc, char ***argv) {
  int (*next)(int *, char ***) = (int (*)(int *, char ***))next_symbol("MPI_Init");
  before_init();
  const int rc = next(argc, argv);
  init_end_ns = monotonic_ns();
  init_end_ticks = llamp_ticks();
  llamp_mpi_time.initialized_mpi = 1;
  watch_start();
  return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  int (*next)(int *, char ***, int, int *) = (int (*)(int *, char ***, int, int *))next_symbol("MPI_Init_thread");
  before_init();
  const int rc = next(argc, argv, required, provided);
  init_end_ns = monotonic_ns();
  init_end_ticks = llamp_ticks();
  llamp_mpi_time.initialized_mpi = 1;
  watch_start();
  return rc;
}

/* The calling thread's ticks converted to ns with the ratio of both clocks over the run. */
static double ticks_to_ns(uint64_t ticks, int64_t finalize_start_ns, uint64_t finalize_start_ticks) {
  const uint64_t run_ticks = finalize_start_ticks - init_end_ticks;
  return run_ticks > 0 ? (double)ticks * (double)(finalize_start_ns - init_end_ns) / (double)run_ticks : 0.0;
}

/* The calling thread's time outside MPI calls between MPI_Init and MPI_Finalize, less its waits in
 * polling loops (mpi_time.h), in ns; -1 when another thread called MPI too. */
static int64_t compute_ns(int64_t finalize_start_ns, uint64_t finalize_start_ticks) {
  if (__atomic_load_n(&llamp_mpi_other_threads, __ATOMIC_RELAXED)) return -1;
  const int64_t runtime = finalize_start_ns - init_end_ns;
  const double not_computing = ticks_to_ns(llamp_mpi_time.inside_ticks + llamp_mpi_time.poll_wait_ticks,
                                           finalize_start_ns, finalize_start_ticks);
  const int64_t compute = runtime - (int64_t)not_computing;
  return compute < 0 ? 0 : compute;
}

static void report(int rank, int size, int64_t finalize_start_ns, uint64_t finalize_start_ticks) {
  char line[512];
  int n = snprintf(line, sizeof line,
                   "llamp-runtime rank %d size %d runtime_ns %lld init_end_ns %lld finalize_start_ns %lld", rank, size,
                   (long long)(finalize_start_ns - init_end_ns), (long long)init_end_ns, (long long)finalize_start_ns);
  if (probe_page != NULL && probe_local_rank == 0)
    n += snprintf(line + n, sizeof line - (size_t)n, " core_init_ns %lld core_finalize_ns %lld",
                  (long long)probe_result_ns[PROBE_INIT], (long long)probe_result_ns[PROBE_FINALIZE]);
  if (watch_period_ns > 0 && probe_local_rank == 0)
    n += snprintf(line + n, sizeof line - (size_t)n, " core_run_max_ns %lld core_run_probes %d core_run_min_ns %lld",
                  (long long)watch_max_ns, watch_probes, (long long)watch_min_ns);
  n +=
      snprintf(line + n, sizeof line - (size_t)n, " compute_ns %lld mpi_calls %llu poll_wait_ns %lld",
               (long long)compute_ns(finalize_start_ns, finalize_start_ticks), (unsigned long long)llamp_mpi_time.calls,
               (long long)ticks_to_ns(llamp_mpi_time.poll_wait_ticks, finalize_start_ns, finalize_start_ticks));
  snprintf(line + n, sizeof line - (size_t)n, "\n");
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
  const uint64_t finalize_start_ticks = llamp_ticks();
  llamp_mpi_end_poll_wait(finalize_start_ticks); /* a poll that found nothing, then straight to MPI_Finalize */
  watch_end();
  int (*next)(void) = (int (*)(void))next_symbol("MPI_Finalize");
  int rank = -1, size = 0;
  if (init_end_ns >= 0) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  const int rc = next();
  /* A peer that never answered before MPI_Init will not now: skip the wait. */
  if (probe_local_rank != 0 || probe_result_ns[PROBE_INIT] >= 0) probe_cores(PROBE_FINALIZE, 10000000000LL);
  if (init_end_ns >= 0) report(rank, size, finalize_start, finalize_start_ticks);
  if (probe_page != NULL) munmap(probe_page, sizeof(struct probe_page));
  return rc;
}
