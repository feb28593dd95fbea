/*
 * cg: conjugate gradient on a 1-D Poisson problem split in contiguous row blocks. Each iteration:
 * MPI_Sendrecv of the boundary values with the left and right neighbour (MPI_PROC_NULL at the
 * ends), a local matrix-vector product, and two MPI_Allreduce dot products that every rank must
 * wait for - the classic latency-bound pattern of Krylov solvers. Once converged (relative
 * residual 1e-10, about 50 iterations) it solves the same system again, so any iteration count
 * times real solver work.
 *
 * usage: app_cg [iterations] [rows per rank] [stencil reach]
 * The matrix is a banded SPD matrix with `reach` off-diagonals per side (bandwidth 2*reach+1):
 * more reach means more flops per row and wider halos (reach values per neighbour message).
 */
#include <math.h>

#include "app_counts.h"

enum { TAG_LEFTWARD = 20, TAG_RIGHTWARD = 21 };

typedef struct {
  int rows;  /* local rows */
  int reach; /* off-diagonals on each side; also the halo width */
  int left, right;
  MPI_Comm comm;
} Problem;

static double dot(const Problem *pb, const double *a, const double *b) {
  double local = 0.0, global = 0.0;
  for (int i = 0; i < pb->rows; ++i) local += a[i] * b[i];
  CALL(MPI_Allreduce, (&local, &global, 1, MPI_DOUBLE, MPI_SUM, pb->comm));
  return global;
}

/* y = A x. `x` is stored with `reach` ghost values on each side (x[-reach .. rows+reach-1]);
 * A has 2*reach+1 on the diagonal and -1 on each off-diagonal, so it is diagonally dominant and
 * SPD, and ghost values of MPI_PROC_NULL neighbours stay zero (Dirichlet boundary). */
static void matvec(const Problem *pb, double *x, double *y) {
  const int r = pb->reach, n = pb->rows;
  /* send my first r values left and receive my right ghosts from the right, then the mirror */
  CALL(MPI_Sendrecv, (x, r, MPI_DOUBLE, pb->left, TAG_LEFTWARD, x + n, r, MPI_DOUBLE, pb->right,
                      TAG_LEFTWARD, pb->comm, MPI_STATUS_IGNORE));
  CALL(MPI_Sendrecv, (x + n - r, r, MPI_DOUBLE, pb->right, TAG_RIGHTWARD, x - r, r, MPI_DOUBLE,
                      pb->left, TAG_RIGHTWARD, pb->comm, MPI_STATUS_IGNORE));
  for (int i = 0; i < n; ++i) {
    double sum = (2.0 * r + 1.0) * x[i];
    for (int k = 1; k <= r; ++k) sum -= x[i - k] + x[i + k];
    y[i] = sum;
  }
}

int main(int argc, char **argv) {
  app_usage(argc, argv,
            "[iterations (default 15)] [rows per rank (default 20000)] "
            "[stencil reach (default 8)]");
  const int iterations = (int)app_arg(argc, argv, 1, "iterations", 15, 1);
  const int rows = (int)app_arg(argc, argv, 2, "rows per rank", 20000, 1);
  const int reach = (int)app_arg(argc, argv, 3, "stencil reach", 8, 1);
  if (reach > rows) {
    fprintf(stderr, "%s: stencil reach %d exceeds rows per rank %d\n", argv[0], reach, rows);
    return 2;
  }

  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));
  const Problem pb = {rows, reach, rank > 0 ? rank - 1 : MPI_PROC_NULL,
                      rank < size - 1 ? rank + 1 : MPI_PROC_NULL, MPI_COMM_WORLD};

  /* p carries ghost zones because it is the vector the matrix is applied to */
  double *p_storage = calloc((size_t)(rows + 2 * reach), sizeof(double));
  double *p = p_storage + reach;
  double *x = calloc((size_t)rows, sizeof(double));
  double *r = calloc((size_t)rows, sizeof(double));
  double *ap = malloc((size_t)rows * sizeof(double));

  /* Solve A x = b from x = 0 with a deterministic right-hand side: r = b, p = r. */
  for (int i = 0; i < rows; ++i) {
    const long global_row = (long)rank * rows + i;
    r[i] = 1.0 + (double)(global_row % 11) / 11.0;
    p[i] = r[i];
  }
  double rr = dot(&pb, r, r);
  const double initial_rr = rr, initial_norm = sqrt(rr);
  int solves = 1;
  for (int it = 0; it < iterations; ++it) {
    /* Converged (relative residual below 1e-10): start the same solve again from x = 0. Left
     * alone, the residual would sink through the denormal range (where every flop takes a
     * microcode assist) into 0/0 = NaN, and later iterations would time denormal and NaN
     * arithmetic instead of a solver. rr is a global sum, so every rank restarts at the same
     * iteration, and a restart makes no MPI call: the call counts still follow the arguments. */
    if (rr < 1e-20 * initial_rr) {
      for (int i = 0; i < rows; ++i) {
        const long global_row = (long)rank * rows + i;
        x[i] = 0.0;
        r[i] = 1.0 + (double)(global_row % 11) / 11.0;
        p[i] = r[i];
      }
      rr = initial_rr;
      ++solves;
    }
    matvec(&pb, p, ap);
    const double alpha = rr / dot(&pb, p, ap);
    for (int i = 0; i < rows; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
    }
    const double rr_next = dot(&pb, r, r);
    const double beta = rr_next / rr;
    rr = rr_next;
    for (int i = 0; i < rows; ++i) p[i] = r[i] + beta * p[i];
  }

  double local_sum = 0.0, checksum = 0.0;
  for (int i = 0; i < rows; ++i) local_sum += x[i];
  CALL(MPI_Reduce, (&local_sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
  if (rank == 0) {
    printf(
        "cg: %d ranks, %d iterations, %d rows/rank, reach %d, %d solve(s), relative residual "
        "%.6e, checksum %.12e\n",
        size, iterations, rows, reach, solves, sqrt(rr) / initial_norm, checksum);
  }
  free(p_storage);
  free(x);
  free(r);
  free(ap);
  return app_finalize(rank);
}
