/*
 * completions: every way to complete a request, each in its own phase of a round.
 *   waitany   Irecv from / Isend to all peers, MPI_Waitany per receive
 *   waitsome  same exchange, MPI_Waitsome until all receives are in
 *   testsome  same exchange, polling MPI_Testsome then MPI_Testall (sends)
 *   testany   same exchange, polling MPI_Testany
 *   test      Irecv from left / Isend to right, polling MPI_Test on each request
 *   mprobe    MPI_Mprobe (MPI_ANY_SOURCE) + MPI_Get_count + MPI_Mrecv
 *   improbe   polling MPI_Improbe, then MPI_Imrecv + MPI_Wait
 *   issend    MPI_Issend to the right matched by MPI_Recv from the left, MPI_Wait
 *   cancel    MPI_Irecv nobody will match, MPI_Cancel, MPI_Wait, MPI_Test_cancelled
 * Polling loops do a slice of compute between calls, as real overlapping codes do, and every
 * call is counted - so MPI_Test*, MPI_Waitsome and MPI_Improbe counts vary from run to run, all
 * other counts and the checksum do not (received data are summed per peer, in peer order).
 *
 * usage: app_completions [rounds] [doubles per message] [work per poll]
 */
#include "app_counts.h"

enum {
  TAG_WAITANY = 50,
  TAG_WAITSOME,
  TAG_TESTSOME,
  TAG_TESTANY,
  TAG_TEST,
  TAG_MPROBE,
  TAG_IMPROBE,
  TAG_ISSEND,
  TAG_NEVER_SENT
};

typedef struct {
  int rank, size, count, work;
  double *send;          /* count doubles, the same payload to every peer */
  double *receive;       /* count doubles per rank, indexed by source */
  MPI_Request *requests; /* receives in [0, size), sends in [size, 2 size) */
  double poll_sink;      /* result of the compute between polls */
} Exchange;

/* Compute between two polls; its result is never part of the checksum because the number of
 * polls is not deterministic. */
static void poll_work(Exchange *x) {
  double v = x->poll_sink;
  for (int k = 0; k < x->work; ++k) v = 0.5 * v + 1.0;
  x->poll_sink = v;
}

static void fill_payload(Exchange *x, int round, int phase) {
  for (int i = 0; i < x->count; ++i)
    x->send[i] = (double)((x->rank * 13 + round * 7 + phase * 3 + i) % 101);
}

/* Posts a receive from and a send to every other rank. Requests for self are MPI_REQUEST_NULL,
 * which every completion function accepts. */
static void post_all_to_all(Exchange *x, int tag) {
  for (int peer = 0; peer < x->size; ++peer) {
    x->requests[peer] = x->requests[x->size + peer] = MPI_REQUEST_NULL;
    if (peer == x->rank) continue;
    CALL(MPI_Irecv, (x->receive + (size_t)peer * x->count, x->count, MPI_DOUBLE, peer, tag,
                     MPI_COMM_WORLD, &x->requests[peer]));
  }
  for (int peer = 0; peer < x->size; ++peer) {
    if (peer == x->rank) continue;
    CALL(MPI_Isend,
         (x->send, x->count, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &x->requests[x->size + peer]));
  }
}

/* Sum of what every peer sent, weighted by the peer, in peer order: independent of the order
 * in which the receives completed. */
static double received_sum(const Exchange *x) {
  double s = 0.0;
  for (int peer = 0; peer < x->size; ++peer) {
    if (peer == x->rank) continue;
    for (int i = 0; i < x->count; ++i) s += x->receive[(size_t)peer * x->count + i] * (peer + 1);
  }
  return s;
}

static double phase_waitany(Exchange *x) {
  post_all_to_all(x, TAG_WAITANY);
  for (int done = 0; done < x->size - 1; ++done) {
    int index;
    CALL(MPI_Waitany, (x->size, x->requests, &index, MPI_STATUS_IGNORE));
  }
  CALL(MPI_Waitall, (x->size, x->requests + x->size, MPI_STATUSES_IGNORE));
  return received_sum(x);
}

static double phase_waitsome(Exchange *x) {
  post_all_to_all(x, TAG_WAITSOME);
  int indices[x->size];
  MPI_Status statuses[x->size];
  for (int done = 0; done < x->size - 1;) {
    int completed;
    CALL(MPI_Waitsome, (x->size, x->requests, &completed, indices, statuses));
    done += completed;
  }
  CALL(MPI_Waitall, (x->size, x->requests + x->size, MPI_STATUSES_IGNORE));
  return received_sum(x);
}

static double phase_testsome(Exchange *x) {
  post_all_to_all(x, TAG_TESTSOME);
  int indices[x->size];
  for (int done = 0; done < x->size - 1;) {
    int completed;
    CALL(MPI_Testsome, (x->size, x->requests, &completed, indices, MPI_STATUSES_IGNORE));
    if (completed > 0)
      done += completed;
    else
      poll_work(x);
  }
  for (int flag = 0;;) {
    CALL(MPI_Testall, (x->size, x->requests + x->size, &flag, MPI_STATUSES_IGNORE));
    if (flag) break;
    poll_work(x);
  }
  return received_sum(x);
}

static double phase_testany(Exchange *x) {
  post_all_to_all(x, TAG_TESTANY);
  for (int done = 0; done < x->size - 1;) {
    int index, flag;
    CALL(MPI_Testany, (x->size, x->requests, &index, &flag, MPI_STATUS_IGNORE));
    if (flag && index != MPI_UNDEFINED)
      ++done;
    else
      poll_work(x);
  }
  CALL(MPI_Waitall, (x->size, x->requests + x->size, MPI_STATUSES_IGNORE));
  return received_sum(x);
}

static void test_until_done(Exchange *x, MPI_Request *request) {
  for (int flag = 0;;) {
    CALL(MPI_Test, (request, &flag, MPI_STATUS_IGNORE));
    if (flag) return;
    poll_work(x);
  }
}

static double phase_test(Exchange *x, int left, int right) {
  MPI_Request receive, send;
  CALL(MPI_Irecv, (x->receive, x->count, MPI_DOUBLE, left, TAG_TEST, MPI_COMM_WORLD, &receive));
  CALL(MPI_Isend, (x->send, x->count, MPI_DOUBLE, right, TAG_TEST, MPI_COMM_WORLD, &send));
  test_until_done(x, &receive);
  test_until_done(x, &send);
  double s = 0.0;
  for (int i = 0; i < x->count; ++i) s += x->receive[i];
  return s;
}

static double phase_mprobe(Exchange *x, int right) {
  MPI_Request send;
  CALL(MPI_Isend, (x->send, x->count, MPI_DOUBLE, right, TAG_MPROBE, MPI_COMM_WORLD, &send));
  MPI_Message message;
  MPI_Status status;
  int length = 0;
  CALL(MPI_Mprobe, (MPI_ANY_SOURCE, TAG_MPROBE, MPI_COMM_WORLD, &message, &status));
  CALL(MPI_Get_count, (&status, MPI_DOUBLE, &length));
  CALL(MPI_Mrecv, (x->receive, length, MPI_DOUBLE, &message, MPI_STATUS_IGNORE));
  CALL(MPI_Wait, (&send, MPI_STATUS_IGNORE));
  double s = 0.0;
  for (int i = 0; i < length; ++i) s += x->receive[i] * (status.MPI_SOURCE + 1);
  return s;
}

static double phase_improbe(Exchange *x, int right) {
  MPI_Request send, receive;
  CALL(MPI_Isend, (x->send, x->count, MPI_DOUBLE, right, TAG_IMPROBE, MPI_COMM_WORLD, &send));
  MPI_Message message;
  MPI_Status status;
  for (int flag = 0;;) {
    CALL(MPI_Improbe, (MPI_ANY_SOURCE, TAG_IMPROBE, MPI_COMM_WORLD, &flag, &message, &status));
    if (flag) break;
    poll_work(x);
  }
  CALL(MPI_Imrecv, (x->receive, x->count, MPI_DOUBLE, &message, &receive));
  CALL(MPI_Wait, (&receive, MPI_STATUS_IGNORE));
  CALL(MPI_Wait, (&send, MPI_STATUS_IGNORE));
  double s = 0.0;
  for (int i = 0; i < x->count; ++i) s += x->receive[i] * (status.MPI_SOURCE + 1);
  return s;
}

static double phase_issend(Exchange *x, int left, int right) {
  MPI_Request send;
  CALL(MPI_Issend, (x->send, x->count, MPI_DOUBLE, right, TAG_ISSEND, MPI_COMM_WORLD, &send));
  CALL(MPI_Recv,
       (x->receive, x->count, MPI_DOUBLE, left, TAG_ISSEND, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CALL(MPI_Wait, (&send, MPI_STATUS_IGNORE));
  double s = 0.0;
  for (int i = 0; i < x->count; ++i) s += x->receive[i];
  return s;
}

/* Returns 1 if the receive was cancelled, as it must be: nobody sends TAG_NEVER_SENT. */
static int phase_cancel(Exchange *x, int left) {
  MPI_Request receive;
  MPI_Status status;
  int cancelled = 0;
  CALL(MPI_Irecv,
       (x->receive, x->count, MPI_DOUBLE, left, TAG_NEVER_SENT, MPI_COMM_WORLD, &receive));
  CALL(MPI_Cancel, (&receive));
  CALL(MPI_Wait, (&receive, &status));
  CALL(MPI_Test_cancelled, (&status, &cancelled));
  return cancelled;
}

int main(int argc, char **argv) {
  app_usage(argc, argv,
            "[rounds (default 6)] [doubles per message (default 256)] "
            "[work per poll (default 8000)]");
  const int rounds = (int)app_arg(argc, argv, 1, "rounds", 6, 1);
  const int count = (int)app_arg(argc, argv, 2, "doubles per message", 256, 1);
  const int work = (int)app_arg(argc, argv, 3, "work per poll", 8000, 0);

  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "completions: needs at least 2 ranks, got %d\n", size);
    app_finalize(rank);
    return 1;
  }
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  Exchange x = {rank,
                size,
                count,
                work,
                malloc((size_t)count * sizeof(double)),
                calloc((size_t)count * (size_t)size, sizeof(double)),
                malloc(2 * (size_t)size * sizeof(MPI_Request)),
                0.0};

  double local = 0.0;
  int cancelled = 0;
  for (int round = 0; round < rounds; ++round) {
    fill_payload(&x, round, 0);
    local += phase_waitany(&x);
    fill_payload(&x, round, 1);
    local += phase_waitsome(&x);
    fill_payload(&x, round, 2);
    local += phase_testsome(&x);
    fill_payload(&x, round, 3);
    local += phase_testany(&x);
    fill_payload(&x, round, 4);
    local += phase_test(&x, left, right);
    fill_payload(&x, round, 5);
    local += phase_mprobe(&x, right);
    fill_payload(&x, round, 6);
    local += phase_improbe(&x, right);
    fill_payload(&x, round, 7);
    local += phase_issend(&x, left, right);
    cancelled += phase_cancel(&x, left);
  }

  double checksum = 0.0;
  int total_cancelled = 0;
  CALL(MPI_Reduce, (&local, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
  CALL(MPI_Reduce, (&cancelled, &total_cancelled, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
  int status = 0;
  if (rank == 0) {
    printf(
        "completions: %d ranks, %d rounds, %d doubles/message, %d of %d receives cancelled, "
        "checksum %.12e\n",
        size, rounds, count, total_cancelled, rounds * size, checksum);
    if (total_cancelled != rounds * size) status = 1;
  }
  free(x.send);
  free(x.receive);
  free(x.requests);
  const int finalize_status = app_finalize(rank);
  return status ? status : finalize_status;
}
