/*
 * nhalo: the 5-point stencil of halo2d on a periodic 2-D torus, with its halos exchanged by
 * neighborhood collectives instead of point-to-point calls. Each iteration packs the four edges,
 * starts MPI_Ineighbor_alltoall on the Cartesian communicator, updates the interior while the
 * halos travel, MPI_Wait, then updates the boundary; every k iterations MPI_Neighbor_allgather
 * shares each rank's residual with its neighbours. At the end a ring built with
 * MPI_Dist_graph_create_adjacent passes rank-dependent amounts with MPI_Neighbor_alltoallv.
 *
 * At 2 ranks the torus is 2x1: both neighbours of the first dimension are the other rank (two
 * messages to it per exchange) and both of the second are the rank itself (a local copy).
 *
 * usage: app_nhalo [iterations] [cells per side per rank] [work per cell] [residual interval]
 */
#include "app_counts.h"
#include "cart2d.h"
#include "stencil2d.h"

int main(int argc, char **argv) {
  app_usage(argc, argv,
            "[iterations (default 100)] [cells per side per rank (default 128)] "
            "[work per cell (default 48)] [residual interval (default 10)]");
  const int iterations = (int)app_arg(argc, argv, 1, "iterations", 100, 1);
  const int n = (int)app_arg(argc, argv, 2, "cells per side per rank", 128, 2);
  const int work = (int)app_arg(argc, argv, 3, "work per cell", 48, 1);
  const int residual_interval = (int)app_arg(argc, argv, 4, "residual interval", 10, 1);

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

  double neighbourhood_residual = 0.0;
  for (int it = 0; it < iterations; ++it) {
    pack_edges(&g, out);
    MPI_Request request;
    CALL(MPI_Ineighbor_alltoall, (out, n, MPI_DOUBLE, in, n, MPI_DOUBLE, torus, &request));
    /* The interior needs no halo: compute it while the messages are in flight. */
    double residual = update_interior(&g);
    CALL(MPI_Wait, (&request, MPI_STATUS_IGNORE));
    unpack_halos(&g, in);
    residual = update_boundary(&g, residual);

    if ((it + 1) % residual_interval == 0) {
      double theirs[4];
      CALL(MPI_Neighbor_allgather, (&residual, 1, MPI_DOUBLE, theirs, 1, MPI_DOUBLE, torus));
      neighbourhood_residual = residual + theirs[0] + theirs[1] + theirs[2] + theirs[3];
    }
    swap_grids(&g);
  }

  /* A directed ring as a distributed graph: each rank passes 1 + rank % 3 values to the right. */
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Comm ring;
  CALL(MPI_Dist_graph_create_adjacent, (MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right,
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &ring));
  int send_count = 1 + rank % 3, recv_count = 1 + left % 3, zero = 0;
  double passed[3] = {0.0, 0.0, 0.0};
  CALL(MPI_Neighbor_alltoallv, (g.u + at(&g, 1, 1), &send_count, &zero, MPI_DOUBLE, passed,
                                &recv_count, &zero, MPI_DOUBLE, ring));

  double local_sum = passed[0] + passed[1] + passed[2], checksum = 0.0;
  local_sum += block_sum(&g);
  CALL(MPI_Reduce, (&local_sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, torus));
  CALL(MPI_Comm_free, (&ring));
  CALL(MPI_Comm_free, (&torus));
  if (rank == 0) {
    printf(
        "nhalo: %d ranks (%dx%d torus), %d iterations, %dx%d cells/rank, work %d, neighbourhood "
        "residual "
        "%.6e, checksum %.12e\n",
        size, dims[0], dims[1], iterations, n, n, work, neighbourhood_residual, checksum);
  }
  free_grid(&g);
  free(out);
  free(in);
  return app_finalize(rank);
}
