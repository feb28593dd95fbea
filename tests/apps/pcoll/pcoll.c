/*
 * pcoll: halo2d's stencil on a periodic 2-D torus with MPI 4.0 persistent collectives, set up once
 * and started every iteration. MPI_Neighbor_alltoall_init exchanges the four edges and
 * MPI_Allreduce_init sums the previous iteration's residual (a pipelined convergence check, as in
 * pipelined Krylov solvers); each iteration starts both with one MPI_Startall, updates the interior
 * while they run, MPI_Waitall, then updates the boundary. Every k iterations rank 0 decides whether
 * to go on and tells everyone through MPI_Bcast_init + MPI_Start + MPI_Wait. An MPI_Barrier_init
 * started once closes the run; MPI_Request_free releases the four requests.
 *
 * At 2 ranks the torus is 2x1: both neighbours of the first dimension are the other rank (two
 * messages to it per exchange) and both of the second are the rank itself (a local copy).
 *
 * usage: app_pcoll [iterations] [cells per side per rank] [work per cell] [decision interval]
 */
#include "app_counts.h"
#include "cart2d.h"
#include "stencil2d.h"

int main(int argc, char **argv) {
  app_usage(argc, argv,
            "[iterations (default 100)] [cells per side per rank (default 128)] "
            "[work per cell (default 48)] [decision interval (default 10)]");
  const int iterations = (int)app_arg(argc, argv, 1, "iterations", 100, 1);
  const int n = (int)app_arg(argc, argv, 2, "cells per side per rank", 128, 2);
  const int work = (int)app_arg(argc, argv, 3, "work per cell", 48, 1);
  const int decision_interval = (int)app_arg(argc, argv, 4, "decision interval", 10, 1);

  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));

  int dims[2], coords[2];
  MPI_Comm torus = open_cart2d(size, rank, 1, dims, coords);

  Grid g = new_grid(n, work);
  /* The four edges in the topology's neighbour order (stencil2d.h). */
  double *out = malloc(4 * (size_t)n * sizeof(double)),
         *in = malloc(4 * (size_t)n * sizeof(double));
  fill_start(&g, coords);

  /* Set up once: the buffers, counts and communicators of every start are fixed here. */
  double residual_in = 0.0, residual_sum = 0.0;
  int go_on = 1;
  enum { HALO, RESIDUAL, DECISION, END };
  MPI_Request requests[4];
  CALL(MPI_Neighbor_alltoall_init,
       (out, n, MPI_DOUBLE, in, n, MPI_DOUBLE, torus, MPI_INFO_NULL, &requests[HALO]));
  CALL(MPI_Allreduce_init, (&residual_in, &residual_sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &requests[RESIDUAL]));
  CALL(MPI_Bcast_init, (&go_on, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &requests[DECISION]));
  CALL(MPI_Barrier_init, (MPI_COMM_WORLD, MPI_INFO_NULL, &requests[END]));

  double residual = 0.0, first_sum = -1.0;
  int decisions = 0;
  for (int it = 0; it < iterations; ++it) {
    pack_edges(&g, out);
    residual_in = residual; /* the previous iteration's, summed while this one computes */
    CALL(MPI_Startall, (2, requests));
    double next_residual = update_interior(&g);
    CALL(MPI_Waitall, (2, requests, MPI_STATUSES_IGNORE));
    if (it == 1) first_sum = residual_sum;
    unpack_halos(&g, in);
    residual = update_boundary(&g, next_residual);
    swap_grids(&g);

    if ((it + 1) % decision_interval == 0) {
      /* Rank 0 decides on the summed residual; a fixed iteration count keeps the call counts a
       * function of the arguments, so the decision is only recorded. */
      if (rank == 0) go_on = residual_sum > 0.0;
      CALL(MPI_Start, (&requests[DECISION]));
      CALL(MPI_Wait, (&requests[DECISION], MPI_STATUS_IGNORE));
      decisions += go_on;
    }
  }
  CALL(MPI_Start, (&requests[END]));
  CALL(MPI_Wait, (&requests[END], MPI_STATUS_IGNORE));
  for (int i = 0; i < 4; ++i) CALL(MPI_Request_free, (&requests[i]));

  double local_sum = block_sum(&g), checksum = 0.0;
  CALL(MPI_Reduce, (&local_sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, torus));
  CALL(MPI_Comm_free, (&torus));
  if (rank == 0) {
    printf(
        "pcoll: %d ranks (%dx%d torus), %d iterations, %dx%d cells/rank, work %d, %d decisions to "
        "go on, residual sum after iteration 1 %.6e, checksum %.12e\n",
        size, dims[0], dims[1], iterations, n, n, work, decisions, first_sum, checksum);
  }
  free_grid(&g);
  free(out);
  free(in);
  return app_finalize(rank);
}
