/*
 * master_worker: rank 0 hands out tasks, workers compute and reply. The master receives results
 * in whatever order they come, with MPI_ANY_SOURCE/MPI_ANY_TAG, in three styles that rotate:
 *   - poll MPI_Iprobe while doing its own bookkeeping work, then MPI_Recv with a real status;
 *   - MPI_Recv with MPI_STATUS_IGNORE (the sender and length travel in the message header);
 *   - MPI_Probe for the size (MPI_Get_count), then MPI_Recv from the probed source and tag.
 * Workers MPI_Probe each incoming task to size it. Task and result tags vary with the task id.
 *
 * Every worker owns a fixed share of the tasks (task t goes to worker 1 + t % workers), handed
 * out one at a time as its previous result arrives. So per-rank call counts do not depend on
 * arrival order (except the master's MPI_Iprobe polls), and neither does the checksum: results
 * are summed by task id.
 *
 * usage: app_master_worker [tasks] [work per task]
 */
#include "app_counts.h"

enum {
  TAG_TASK = 100,   /* + t % 3 */
  TAG_RESULT = 200, /* + t % 4 */
  TAG_STOP = 999,
  MAX_TASK_LEN = 7,
  HEADER = 3, /* result = [task id, worker rank, number of values, values...] */
  MAX_RESULT_LEN = HEADER + 5,
};

static int task_length(int task) { return 1 + task % MAX_TASK_LEN; }
static int result_values(int task) { return 1 + task % (MAX_RESULT_LEN - HEADER); }

/* The worker's job: a dependent recurrence over the task data, `work` steps per value. */
static void compute_result(int task, const double *data, int length, int work, double *values,
                           int count) {
  double v = (double)task;
  for (int i = 0; i < length; ++i)
    for (int k = 0; k < work; ++k) v = 0.999 * v + data[i] * 1e-3;
  for (int i = 0; i < count; ++i) values[i] = v + (double)i;
}

/* Sends worker `w` its next task, or the stop message when its share is done.
 * Returns 1 if a task was sent. */
static int send_next(int w, int workers, int tasks, int *next_task) {
  const int t = next_task[w];
  if (t >= tasks) {
    CALL(MPI_Send, (NULL, 0, MPI_DOUBLE, w, TAG_STOP, MPI_COMM_WORLD));
    return 0;
  }
  double data[MAX_TASK_LEN];
  for (int i = 0; i < task_length(t); ++i) data[i] = (double)(t + i) * 0.25;
  CALL(MPI_Send, (data, task_length(t), MPI_DOUBLE, w, TAG_TASK + t % 3, MPI_COMM_WORLD));
  next_task[w] = t + workers;
  return 1;
}

static volatile double bookkeeping_sink;

static double master(int size, int tasks) {
  const int workers = size - 1;
  int *next_task = malloc((size_t)size * sizeof(int));
  double *results = calloc((size_t)tasks, sizeof(double));
  int outstanding = 0;
  for (int w = 1; w <= workers; ++w) {
    next_task[w] = w - 1;
    outstanding += send_next(w, workers, tasks, next_task);
  }
  double bookkeeping = 0.0; /* the master's own work while it polls */
  for (int received = 0; outstanding > 0; ++received) {
    double message[MAX_RESULT_LEN];
    int source = MPI_ANY_SOURCE, length = 0;
    MPI_Status status;
    switch (received % 3) {
      case 0: {
        int flag = 0;
        for (;;) {
          CALL(MPI_Iprobe, (MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status));
          if (flag) break;
          /* a few microseconds of own work per poll keeps the MPI_Iprobe count modest */
          for (int k = 0; k < 4000; ++k) bookkeeping = bookkeeping * 0.5 + 1.0;
        }
        CALL(MPI_Recv, (message, MAX_RESULT_LEN, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        MPI_COMM_WORLD, &status));
        source = status.MPI_SOURCE;
        CALL(MPI_Get_count, (&status, MPI_DOUBLE, &length));
        break;
      }
      case 1:
        CALL(MPI_Recv, (message, MAX_RESULT_LEN, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        source = (int)message[1];
        length = HEADER + (int)message[2];
        break;
      default:
        CALL(MPI_Probe, (MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
        CALL(MPI_Get_count, (&status, MPI_DOUBLE, &length));
        source = status.MPI_SOURCE;
        CALL(MPI_Recv, (message, length, MPI_DOUBLE, source, status.MPI_TAG, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
        break;
    }
    const int task = (int)message[0];
    if (task < 0 || task >= tasks || source != (int)message[1] ||
        length != HEADER + result_values(task)) {
      fprintf(stderr, "master_worker: inconsistent result from rank %d\n", source);
      CALL(MPI_Abort, (MPI_COMM_WORLD, 3));
    }
    for (int i = HEADER; i < length; ++i) results[task] += message[i];
    outstanding -= 1 - send_next(source, workers, tasks, next_task);
  }
  bookkeeping_sink = bookkeeping; /* keeps the polling work from being optimised away */
  double checksum = 0.0;
  for (int t = 0; t < tasks; ++t) checksum += results[t];
  free(next_task);
  free(results);
  return checksum;
}

static void worker(int rank, int work) {
  for (;;) {
    MPI_Status status;
    CALL(MPI_Probe, (0, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
    if (status.MPI_TAG == TAG_STOP) {
      CALL(MPI_Recv, (NULL, 0, MPI_DOUBLE, 0, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      return;
    }
    int length = 0;
    CALL(MPI_Get_count, (&status, MPI_DOUBLE, &length));
    double data[MAX_TASK_LEN];
    CALL(MPI_Recv, (data, length, MPI_DOUBLE, 0, status.MPI_TAG, MPI_COMM_WORLD, &status));
    /* the task id is not sent separately: it is encoded in the data and the tag */
    const int task = (int)(data[0] * 4.0 + 0.5);
    double result[MAX_RESULT_LEN] = {(double)task, (double)rank, (double)result_values(task)};
    compute_result(task, data, length, work, result + HEADER, result_values(task));
    CALL(MPI_Send, (result, HEADER + result_values(task), MPI_DOUBLE, 0, TAG_RESULT + task % 4,
                    MPI_COMM_WORLD));
  }
}

int main(int argc, char **argv) {
  app_usage(argc, argv, "[tasks (default 120)] [work per task value (default 4000)]");
  const int tasks = (int)app_arg(argc, argv, 1, "tasks", 120, 1);
  const int work = (int)app_arg(argc, argv, 2, "work per task value", 4000, 0);

  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));
  if (size < 2) {
    if (rank == 0) fprintf(stderr, "master_worker: needs at least 2 ranks, got %d\n", size);
    app_finalize(rank);
    return 1;
  }
  if (rank == 0) {
    const double checksum = master(size, tasks);
    printf("master_worker: %d ranks, %d tasks, work %d, checksum %.12e\n", size, tasks, work,
           checksum);
  } else {
    worker(rank, work);
  }
  return app_finalize(rank);
}
