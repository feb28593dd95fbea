/*
 * inject_probe: MPI scenarios that observe the latency injector from the
 * application's side.  Built with the patched prefix's mpicc, run under
 * mpiexec -n 2 (collective: -n 4).  Prints "key=value" lines on rank 0 that
 * tests/injector/injector_mpi_test.cpp and scripts/inject-accuracy.sh parse.
 *
 * One node shares CLOCK_MONOTONIC, so the sender writes its send time into
 * the message and the receiver measures one-way latency directly.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int rank, size;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double quantile(double *v, int n, double q) {
  qsort(v, n, sizeof(*v), cmp_double);
  int i = (int)(q * n + 0.999999) - 1;
  if (i < 0) i = 0;
  if (i >= n) i = n - 1;
  return v[i];
}

static void busy_until(double t_us) {
  while (now_us() < t_us) {
  }
}

/* Ping-pong: half round trip and one-way latency (send stamp in payload).
 * reply_after_us > 0: rank 1 computes that long before each reply, so that
 * rank 0 waits as long as in an injected run (a reference for machines whose
 * CPUs come back slow from a long wait; see injector_mpi_test.cpp). */
static void pingpong(int bytes, int reps, double reply_after_us) {
  char *buf = calloc(1, bytes < 8 ? 8 : bytes);
  double *half = malloc(sizeof(double) * reps);
  double *oneway = malloc(sizeof(double) * reps);
  int peer = 1 - rank;
  for (int i = -20; i < reps; ++i) { /* 20 warm-up rounds */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      double t0 = now_us();
      memcpy(buf, &t0, sizeof(t0));
      MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      double t1 = now_us();
      double sent;
      memcpy(&sent, buf, sizeof(sent));
      if (i >= 0) {
        half[i] = (t1 - t0) / 2;
        oneway[i] = t1 - sent;
      }
    } else {
      MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (reply_after_us > 0) busy_until(now_us() + reply_after_us); /* computing, not in MPI */
      double t = now_us();
      memcpy(buf, &t, sizeof(t));
      MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) {
    printf("bytes=%d reps=%d\n", bytes, reps);
    printf("half_rtt_median_us=%.3f\n", quantile(half, reps, 0.5));
    printf("oneway_median_us=%.3f\n", quantile(oneway, reps, 0.5));
    printf("oneway_p99_us=%.3f\n", quantile(oneway, reps, 0.99));
    /* The mean carries the rare late releases that the median hides; a run's time is a sum. */
    double total = 0.0;
    for (int i = 0; i < reps; ++i) total += oneway[i];
    printf("oneway_mean_us=%.3f\n", total / reps);
  }
  free(buf);
  free(half);
  free(oneway);
}

/* Rendezvous latency terms (docs/analyzer.md, "Latency terms charged").
 * Per trial rank 0 sends `bytes` (above the rendezvous threshold) with
 * MPI_Send, stamping its start t0 into the payload.  late_us = 0: rank 1
 * posted the receive before the send started (sender late); else rank 1
 * computes late_us outside MPI after the barrier, then posts it (receiver
 * late; a trial counts when the post came at least min_gap_us after t0).
 * Reports medians of receive end and send end, from t0 and from the post. */
static void rndv_terms(int bytes, int trials, double late_us, double min_gap_us) {
  char *buf = calloc(1, bytes < 8 ? 8 : bytes);
  double *rs = malloc(sizeof(double) * trials), *ss = malloc(sizeof(double) * trials);
  double *rp = malloc(sizeof(double) * trials), *sp = malloc(sizeof(double) * trials);
  int valid = 0;
  for (int t = -3; t < trials; ++t) { /* 3 warm-up trials */
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == 1 && late_us <= 0) MPI_Irecv(buf, bytes, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      double t0 = now_us();
      memcpy(buf, &t0, sizeof(t0));
      MPI_Send(buf, bytes, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
      double send_end = now_us();
      double res[3]; /* post, receive end, sent */
      MPI_Recv(res, 3, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (t >= 0 && (late_us <= 0 || res[0] - t0 >= min_gap_us)) {
        rs[valid] = res[1] - t0;
        ss[valid] = send_end - t0;
        rp[valid] = res[1] - res[0];
        sp[valid] = send_end - res[0];
        ++valid;
      }
    } else {
      double post;
      if (late_us > 0) {
        busy_until(now_us() + late_us); /* computing, not in MPI */
        post = now_us();
        MPI_Irecv(buf, bytes, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &req);
      } else {
        post = 0;
      }
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      double res[3] = {post, now_us(), 0};
      memcpy(&res[2], buf, sizeof(double));
      if (late_us <= 0) res[0] = res[2]; /* posted before the send */
      MPI_Send(res, 3, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) {
    printf("bytes=%d\ntrials=%d\nvalid_trials=%d\n", bytes, trials, valid);
    if (valid) {
      printf("recv_end_from_send_median_us=%.3f\n", quantile(rs, valid, 0.5));
      printf("send_end_from_send_median_us=%.3f\n", quantile(ss, valid, 0.5));
      printf("recv_end_from_post_median_us=%.3f\n", quantile(rp, valid, 0.5));
      printf("send_end_from_post_median_us=%.3f\n", quantile(sp, valid, 0.5));
    }
  }
  free(buf);
  free(rs);
  free(ss);
  free(rp);
  free(sp);
}

/* Fig. 8: bursts of `count` back-to-back eager sends to pre-posted receives,
 * repeated `trials` times (a shared, overloaded machine deschedules a rank
 * now and then for a whole scheduler tick: the median over trials is what
 * the injector did, single trials are what the scheduler did).  Per trial:
 * time from the last send to the completion of all receives. */
static void fig8(int count, int trials) {
  double *stamps = calloc(count, sizeof(double));
  MPI_Request *reqs = malloc(sizeof(MPI_Request) * count);
  double *last = malloc(sizeof(double) * trials), *span = malloc(sizeof(double) * trials);
  for (int t = 0; t < trials; ++t) {
    if (rank == 1) {
      for (int i = 0; i < count; ++i) MPI_Irecv(&stamps[i], 1, MPI_DOUBLE, 0, i, MPI_COMM_WORLD, &reqs[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      double first = now_us();
      for (int i = 0; i < count; ++i) {
        stamps[i] = now_us();
        MPI_Send(&stamps[i], 1, MPI_DOUBLE, 1, i, MPI_COMM_WORLD);
      }
      double send_span = now_us() - first;
      MPI_Send(&send_span, 1, MPI_DOUBLE, 1, count, MPI_COMM_WORLD);
      double res[2];
      MPI_Recv(res, 2, MPI_DOUBLE, 1, count + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      last[t] = res[0];
      span[t] = res[1];
    } else {
      MPI_Waitall(count, reqs, MPI_STATUSES_IGNORE);
      double done = now_us();
      double send_span;
      MPI_Recv(&send_span, 1, MPI_DOUBLE, 0, count, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      double res[2] = {done - stamps[count - 1], send_span};
      MPI_Send(res, 2, MPI_DOUBLE, 0, count + 1, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) {
    printf("count=%d\ntrials=%d\nlast_oneway_trials_us=", count, trials);
    for (int t = 0; t < trials; ++t) printf("%s%.1f", t ? "," : "", last[t]);
    printf("\nsend_span_median_us=%.3f\n", quantile(span, trials, 0.5));
    printf("last_oneway_min_us=%.3f\n", quantile(last, trials, 0.0));
    printf("last_oneway_median_us=%.3f\n", quantile(last, trials, 0.5));
  }
  free(stamps);
  free(reqs);
  free(last);
  free(span);
}

/* A rendezvous receive posted before the send, whose RTS arrives while the
 * receiver computes compute_us outside MPI, `trials` times: reports the
 * median time the receiver's MPI_Wait took.  Without progress outside MPI
 * the handshake starts in the Wait (the get's two latency terms are paid
 * there); progress during the computation would hide them. */
static void rndv_overlap(int bytes, int trials, double compute_us) {
  char *buf = calloc(1, bytes < 8 ? 8 : bytes);
  double *wait = malloc(sizeof(double) * trials);
  for (int t = -3; t < trials; ++t) { /* 3 warm-up trials */
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == 1) MPI_Irecv(buf, bytes, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Send(buf, bytes, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
    } else {
      busy_until(now_us() + compute_us); /* computing, not in MPI */
      double start = now_us();
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      if (t >= 0) wait[t] = now_us() - start;
    }
  }
  if (rank == 1) {
    printf("bytes=%d\ntrials=%d\nwait_median_us=%.3f\n", bytes, trials, quantile(wait, trials, 0.5));
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(buf);
  free(wait);
}

/* A message the receiver's progress sees (in a loop of MPI_Iprobe on another
 * tag for 50 us) before it is due, after which the receiver computes
 * compute_us outside MPI and only then receives it, `trials` times.  Its
 * release in the MPI_Recv comes long after it fell due, while the receiver
 * computed: not a late release of the injector's. */
static void due_outside(int trials, double compute_us) {
  double token = 0;
  for (int t = 0; t < trials; ++t) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      MPI_Send(&token, 1, MPI_DOUBLE, 1, 12, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_DOUBLE, 1, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      int flag = 0;
      double start = now_us();
      while (now_us() < start + 50) MPI_Iprobe(0, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      busy_until(now_us() + compute_us); /* computing, not in MPI */
      MPI_Recv(&token, 1, MPI_DOUBLE, 0, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&token, 1, MPI_DOUBLE, 0, 13, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) printf("trials=%d\n", trials);
}

/* A message that arrives while the receiver computes, `trials` times: the
 * receiver computes for wait_us outside MPI, then posts the receive.
 * unexpected: both leave a barrier, the sender sends at once.
 * overlap (after_go): the receiver first sends "go" and the sender answers it
 * with the data, so the receiver has provably left MPI before the data was
 * sent (the barrier's own delayed messages cannot let it see the data early).
 * A trial is valid when the receive was posted at least min_gap_us after the
 * send (the sender may itself be descheduled); reports the median time the
 * posted receive took over valid trials, and the median one-way time over all
 * trials. */
static void late_receive(double wait_us, int trials, double min_gap_us, int after_go) {
  double *wait = malloc(sizeof(double) * trials), *ow = malloc(sizeof(double) * trials);
  int valid = 0;
  for (int t = 0; t < trials; ++t) {
    double sent = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      if (after_go) MPI_Recv(NULL, 0, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sent = now_us();
      MPI_Send(&sent, 1, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD);
      double res[3];
      MPI_Recv(res, 3, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ow[t] = res[1];
      if (res[2] >= min_gap_us) wait[valid++] = res[0];
    } else {
      double start = now_us();
      if (after_go) MPI_Send(NULL, 0, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
      busy_until(start + wait_us); /* computing, not in MPI */
      double posted = now_us();
      MPI_Recv(&sent, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      double done = now_us();
      double res[3] = {done - posted, done - sent, posted - sent};
      MPI_Send(res, 3, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) {
    printf("trials=%d\nvalid_trials=%d\n", trials, valid);
    if (valid) printf("recv_wait_median_us=%.3f\n", quantile(wait, valid, 0.5));
    printf("oneway_median_us=%.3f\n", quantile(ow, trials, 0.5));
  }
  free(wait);
  free(ow);
}

/* Messages to oneself (Irecv + Send + Wait on MPI_COMM_WORLD), `reps` times
 * on every rank: the median time of one round.  They cross no network, so
 * the injector must not delay them; MPICH passes them to UCX like any other
 * message (with MPIR_CVAR_NOLOCAL=1 as the injector sets it). */
static void selfsend(int bytes, int reps) {
  char *out = calloc(1, bytes < 8 ? 8 : bytes), *in = calloc(1, bytes < 8 ? 8 : bytes);
  double *t = malloc(sizeof(double) * reps);
  for (int i = 0; i < reps; ++i) {
    MPI_Request q;
    double t0 = now_us();
    MPI_Irecv(in, bytes, MPI_BYTE, rank, 11, MPI_COMM_WORLD, &q);
    MPI_Send(out, bytes, MPI_BYTE, rank, 11, MPI_COMM_WORLD);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    t[i] = now_us() - t0;
  }
  double median = quantile(t, reps, 0.5), worst = 0;
  MPI_Reduce(&median, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("self_round_median_us=%.3f\n", worst);
  free(out);
  free(in);
  free(t);
}

/* ANY_SOURCE + Waitany + Test loop, MPI_THREAD_MULTIPLE; one-way measured. */
static void anysource(int reps) {
  double *ow = malloc(sizeof(double) * reps);
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      double sent = now_us();
      MPI_Send(&sent, 1, MPI_DOUBLE, 1, i, MPI_COMM_WORLD);
    } else {
      double sent;
      MPI_Request req[2];
      double dummy;
      MPI_Irecv(&sent, 1, MPI_DOUBLE, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, &req[0]);
      MPI_Irecv(&dummy, 1, MPI_DOUBLE, 0, 1 << 20, MPI_COMM_WORLD, &req[1]);
      int idx, flag = 0;
      if (i % 2) {
        MPI_Waitany(2, req, &idx, MPI_STATUS_IGNORE);
      } else {
        while (!flag) MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
        idx = 0;
      }
      ow[i] = now_us() - sent;
      if (idx != 0) {
        fprintf(stderr, "Waitany returned index %d\n", idx);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
      MPI_Cancel(&req[1]);
      MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    }
  }
  if (rank == 1) {
    double med = quantile(ow, reps, 0.5);
    MPI_Send(&med, 1, MPI_DOUBLE, 0, 9, MPI_COMM_WORLD);
  } else {
    double med;
    MPI_Recv(&med, 1, MPI_DOUBLE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("oneway_median_us=%.3f\n", med);
  }
  free(ow);
}

/* Allreduce of 8 bytes on all ranks.  Per call: the last exit minus the
 * last entry over all ranks (one node shares CLOCK_MONOTONIC).  Whatever
 * the algorithm, the last rank to enter starts a chain of log2(P) dependent
 * message steps before the last rank can leave, so this span is at least
 * log2(P) * delta L even when ranks are descheduled and enter late; a single
 * rank's own call time is not (its partners' messages may have arrived
 * before it entered). */
static void collective(int reps) {
  double *t = malloc(sizeof(double) * 2 * reps);
  for (int i = -10; i < reps; ++i) {
    double in = rank + i, out;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_us();
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double t1 = now_us();
    double expect = size * (size - 1) / 2.0 + (double)size * i;
    if (out != expect) {
      fprintf(stderr, "Allreduce: got %f expected %f\n", out, expect);
      MPI_Abort(MPI_COMM_WORLD, 4);
    }
    if (i >= 0) {
      t[2 * i] = t0;
      t[2 * i + 1] = t1;
    }
  }
  double *all = rank == 0 ? malloc(sizeof(double) * 2 * reps * size) : NULL;
  MPI_Gather(t, 2 * reps, MPI_DOUBLE, all, 2 * reps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    double *span = malloc(sizeof(double) * reps);
    for (int i = 0; i < reps; ++i) {
      double last_in = all[2 * i], last_out = all[2 * i + 1];
      for (int r = 1; r < size; ++r) {
        const double *tr = all + (size_t)r * 2 * reps;
        if (tr[2 * i] > last_in) last_in = tr[2 * i];
        if (tr[2 * i + 1] > last_out) last_out = tr[2 * i + 1];
      }
      span[i] = last_out - last_in;
    }
    printf("ranks=%d\nallreduce_span_median_us=%.3f\n", size, quantile(span, reps, 0.5));
    free(span);
    free(all);
  }
  free(t);
}

/* Many small messages on several tags and two communicators, receiver checks
 * that each (source, tag, comm) stream arrives in order and nothing is lost. */
static void flood(long count) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const int tags = 4, window = 256;
  long errors = 0, received = 0;
  if (rank == 0) {
    long seq[2][4] = {{0}};
    MPI_Request reqs[256];
    long payload[256];
    for (long i = 0; i < count; i += window) {
      int n = (int)(count - i < window ? count - i : window);
      for (int k = 0; k < n; ++k) {
        long m = i + k;
        int tag = (int)(m % tags), c = (int)((m / tags) % 2);
        payload[k] = seq[c][tag]++;
        MPI_Isend(&payload[k], 1, MPI_LONG, 1, tag, c ? dup : MPI_COMM_WORLD, &reqs[k]);
      }
      MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    }
  } else {
    long expect[2][4] = {{0}};
    for (long m = 0; m < count; ++m) {
      long v;
      MPI_Status st;
      int c = (int)((m / tags) % 2);
      MPI_Recv(&v, 1, MPI_LONG, 0, MPI_ANY_TAG, c ? dup : MPI_COMM_WORLD, &st);
      if (v != expect[c][st.MPI_TAG]++) ++errors;
      ++received;
    }
    long res[2] = {received, errors};
    MPI_Send(res, 2, MPI_LONG, 0, 5, MPI_COMM_WORLD);
  }
  if (rank == 0) {
    long res[2];
    MPI_Recv(res, 2, MPI_LONG, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("sent=%ld\nreceived=%ld\norder_errors=%ld\n", count, res[0], res[1]);
  }
  MPI_Comm_free(&dup);
}

/* Deterministic results (identical with and without injection). */
static void results(void) {
  double v[64], sum[64];
  for (int i = 0; i < 64; ++i) v[i] = (rank + 1) * 0.1 + i;
  MPI_Allreduce(v, sum, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  int big = 1 << 18;
  int *arr = malloc(sizeof(int) * big);
  for (int i = 0; i < big; ++i) arr[i] = rank == 0 ? i * 7 : 0;
  MPI_Bcast(arr, big, MPI_INT, 0, MPI_COMM_WORLD);
  unsigned long h = 1469598103934665603ul;
  for (int i = 0; i < 64; ++i) {
    unsigned long x;
    memcpy(&x, &sum[i], sizeof(x));
    h = (h ^ x) * 1099511628211ul;
  }
  for (int i = 0; i < big; ++i) h = (h ^ (unsigned)arr[i]) * 1099511628211ul;
  if (rank == 0) printf("checksum=%016lx\n", h);
  free(arr);
}

/* Compute-only loop; the seconds it took on rank 0. */
static void compute(long iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now_us();
  volatile double x = 1.0;
  for (long i = 0; i < iters; ++i) x = x * 1.0000001 + 1e-9;
  double t1 = now_us();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("compute_s=%.6f\n", (t1 - t0) / 1e6);
}

int main(int argc, char **argv) {
  int provided;
  /* Only the ANY_SOURCE scenario needs MPI_THREAD_MULTIPLE.  The others ask
   * for MPI_THREAD_SINGLE: MPICH's wait loop then does not sched_yield
   * between polls, which on a busy machine would hand the core to another
   * process for a scheduler tick while a rank waits out delta L. */
  int required = (argc > 1 && !strcmp(argv[1], "anysource")) ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, required, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: inject_probe <scenario> [args]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char *what = argv[1];
  double a = argc > 2 ? atof(argv[2]) : 0, b = argc > 3 ? atof(argv[3]) : 0;
  double c = argc > 4 ? atof(argv[4]) : 0;
  if (rank == 0) printf("scenario=%s\nthread_provided=%d\n", what, provided);
  if (!strcmp(what, "pingpong"))
    pingpong((int)a, (int)b, c);
  else if (!strcmp(what, "rndvterms"))
    rndv_terms((int)a, b > 0 ? (int)b : 1, c, argc > 5 ? atof(argv[5]) : 0);
  else if (!strcmp(what, "fig8"))
    fig8((int)a, b > 0 ? (int)b : 1);
  else if (!strcmp(what, "unexpected"))
    late_receive(a, b > 0 ? (int)b : 1, c, 0);
  else if (!strcmp(what, "overlap"))
    late_receive(a, b > 0 ? (int)b : 1, c, 1);
  else if (!strcmp(what, "dueoutside"))
    due_outside(b > 0 ? (int)b : 1, c);
  else if (!strcmp(what, "rndvoverlap"))
    rndv_overlap((int)a, b > 0 ? (int)b : 1, c);
  else if (!strcmp(what, "selfsend"))
    selfsend((int)a, b > 0 ? (int)b : 1);
  else if (!strcmp(what, "anysource"))
    anysource((int)a);
  else if (!strcmp(what, "collective"))
    collective((int)a);
  else if (!strcmp(what, "flood"))
    flood((long)a);
  else if (!strcmp(what, "results"))
    results();
  else if (!strcmp(what, "compute"))
    compute((long)a);
  else {
    if (rank == 0) fprintf(stderr, "inject_probe: unknown scenario '%s'\n", what);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  fflush(stdout);
  MPI_Finalize();
  return 0;
}
