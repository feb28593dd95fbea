/*
 * gradavg: data-parallel training's gradient averaging, overlapped with the backward pass as
 * PyTorch's DistributedDataParallel and Horovod do it. Each step computes the gradients of a model
 * of `buckets` equal layers from the last layer to the first; as soon as a layer's gradient is
 * done, MPI_Iallreduce starts summing it across ranks (one bucket per layer) while the next layer
 * computes. After the first layer the optimizer's local part (momentum decay, which needs no
 * averaged gradient) runs before MPI_Waitall, then every rank applies the averaged gradient.
 *
 * Without an asynchronous progress thread (MPICH's default) a bucket's allreduce advances only
 * inside MPI calls: its later rounds run in the next bucket's MPI_Iallreduce or in the
 * MPI_Waitall, so how much latency the overlap hides depends on the MPI library's progress, not
 * only on the computation (docs/schedgen.md, "Progress of nonblocking collectives"). With buckets
 * above 2 KiB MPICH's MPI_Iallreduce is a reduce-scatter and an allgather: two rounds at 2 ranks.
 *
 * usage: app_gradavg [steps] [gradient doubles per bucket] [buckets] [work per value]
 */
#include <math.h>

#include "app_counts.h"

/* The layer's backward pass: a dependent recurrence per value, `work` steps each. */
static void backward(const double *weights, double *gradient, int n, int step, int work) {
  for (int i = 0; i < n; ++i) {
    double g = weights[i] * 1e-3 + (double)((step + i) % 7) * 1e-4;
    for (int k = 0; k < work; ++k) g = 0.999 * g + 1e-6;
    gradient[i] = g;
  }
}

int main(int argc, char **argv) {
  app_usage(
      argc, argv,
      "[steps (default 50)] [gradient doubles per bucket (default 1024)] [buckets (default 4)] "
      "[work per value (default 16)]");
  const int steps = (int)app_arg(argc, argv, 1, "steps", 50, 1);
  const int n = (int)app_arg(argc, argv, 2, "gradient doubles per bucket", 1024, 1);
  const int buckets = (int)app_arg(argc, argv, 3, "buckets", 4, 1);
  const int work = (int)app_arg(argc, argv, 4, "work per value", 16, 1);

  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));

  const size_t total = (size_t)buckets * (size_t)n;
  double *weights = malloc(total * sizeof(double));
  double *gradient = malloc(total * sizeof(double));
  double *sum = malloc(total * sizeof(double));
  double *momentum = calloc(total, sizeof(double));
  MPI_Request *requests = malloc((size_t)buckets * sizeof(MPI_Request));
  for (size_t i = 0; i < total; ++i)
    weights[i] = 1.0 + (double)((i * 31 + (size_t)rank) % 97) * 1e-2;

  for (int step = 0; step < steps; ++step) {
    /* Backward pass, last layer first; each finished layer's gradient starts its allreduce. */
    for (int b = buckets - 1; b >= 0; --b) {
      const size_t at = (size_t)b * (size_t)n;
      backward(weights + at, gradient + at, n, step, work);
      CALL(MPI_Iallreduce, (gradient + at, sum + at, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                            &requests[buckets - 1 - b]));
    }
    /* The optimizer's local part while the last buckets are summed: a layer's worth of work. */
    for (size_t i = 0; i < total; ++i) {
      double m = momentum[i];
      for (int k = 0; k < work / buckets; ++k) m = 0.9 * m + 1e-7;
      momentum[i] = m;
    }
    CALL(MPI_Waitall, (buckets, requests, MPI_STATUSES_IGNORE));
    /* The optimizer step with the averaged gradient (same on every rank). */
    for (size_t i = 0; i < total; ++i) {
      momentum[i] += sum[i] / (double)size;
      weights[i] -= 0.1 * momentum[i];
    }
  }

  double local = 0.0, checksum = 0.0;
  for (size_t i = 0; i < total; ++i) local += weights[i];
  CALL(MPI_Reduce, (&local, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
  if (rank == 0) {
    printf("gradavg: %d ranks, %d steps, %d buckets x %d doubles, work %d, checksum %.12e\n", size,
           steps, buckets, n, work, checksum);
  }
  free(weights);
  free(gradient);
  free(sum);
  free(momentum);
  free(requests);
  return app_finalize(rank);
}
