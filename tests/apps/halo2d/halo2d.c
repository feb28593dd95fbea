/*
 * halo2d: Jacobi-style 5-point stencil on a 2-D process grid (MPI_Dims_create + MPI_Cart_create,
 * non-periodic, MPI_PROC_NULL at the borders). Each iteration posts MPI_Irecv/MPI_Isend to the
 * four neighbours, updates the interior while the halos travel, then MPI_Waitall and updates the
 * boundary cells; every k iterations an MPI_Allreduce sums the residual. This is the default demo
 * workload: the overlap of compute and halo traffic gives it a non-trivial latency tolerance.
 *
 * usage: app_halo2d [iterations] [cells per side per rank] [work per cell] [residual interval]
 * "work" is the number of relaxation steps per cell (3 flops each): it scales compute linearly.
 */
#include "app_counts.h"
#include "cart2d.h"
#include "stencil2d.h"

enum { TAG_TO_NORTH = 10, TAG_TO_SOUTH = 11, TAG_TO_WEST = 12, TAG_TO_EAST = 13 };

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
  MPI_Comm cart = open_cart2d(size, rank, 0, dims, coords);
  int north, south, west, east;
  CALL(MPI_Cart_shift, (cart, 0, 1, &north, &south));
  CALL(MPI_Cart_shift, (cart, 1, 1, &west, &east));

  Grid g = new_grid(n, work);
  /* columns are strided: they travel through contiguous pack/unpack buffers */
  const size_t column_bytes = (size_t)n * sizeof(double);
  double *west_out = malloc(column_bytes), *east_out = malloc(column_bytes);
  double *west_in = malloc(column_bytes), *east_in = malloc(column_bytes);

  /* Deterministic start that depends on global position; the global top edge is held hot. */
  fill_start(&g, coords);
  if (north == MPI_PROC_NULL)
    for (int j = 0; j < n + 2; ++j) g.u[at(&g, 0, j)] = g.next[at(&g, 0, j)] = 1.0;

  double global_residual = 0.0;
  for (int it = 0; it < iterations; ++it) {
    MPI_Request requests[8];
    for (int i = 1; i <= n; ++i) {
      west_out[i - 1] = g.u[at(&g, i, 1)];
      east_out[i - 1] = g.u[at(&g, i, n)];
    }
    /* Rows are contiguous: receive straight into the ghost rows, send straight from the edges. */
    CALL(MPI_Irecv, (&g.u[at(&g, 0, 1)], n, MPI_DOUBLE, north, TAG_TO_SOUTH, cart, &requests[0]));
    CALL(MPI_Irecv,
         (&g.u[at(&g, n + 1, 1)], n, MPI_DOUBLE, south, TAG_TO_NORTH, cart, &requests[1]));
    CALL(MPI_Irecv, (west_in, n, MPI_DOUBLE, west, TAG_TO_EAST, cart, &requests[2]));
    CALL(MPI_Irecv, (east_in, n, MPI_DOUBLE, east, TAG_TO_WEST, cart, &requests[3]));
    CALL(MPI_Isend, (&g.u[at(&g, 1, 1)], n, MPI_DOUBLE, north, TAG_TO_NORTH, cart, &requests[4]));
    CALL(MPI_Isend, (&g.u[at(&g, n, 1)], n, MPI_DOUBLE, south, TAG_TO_SOUTH, cart, &requests[5]));
    CALL(MPI_Isend, (west_out, n, MPI_DOUBLE, west, TAG_TO_WEST, cart, &requests[6]));
    CALL(MPI_Isend, (east_out, n, MPI_DOUBLE, east, TAG_TO_EAST, cart, &requests[7]));

    /* The interior needs no halo: compute it while the messages are in flight. */
    double residual = update_interior(&g);
    CALL(MPI_Waitall, (8, requests, MPI_STATUSES_IGNORE));
    if (west != MPI_PROC_NULL)
      for (int i = 1; i <= n; ++i) g.u[at(&g, i, 0)] = west_in[i - 1];
    if (east != MPI_PROC_NULL)
      for (int i = 1; i <= n; ++i) g.u[at(&g, i, n + 1)] = east_in[i - 1];
    residual = update_boundary(&g, residual);

    if ((it + 1) % residual_interval == 0) {
      CALL(MPI_Allreduce, (&residual, &global_residual, 1, MPI_DOUBLE, MPI_SUM, cart));
    }
    /* The ghost ring of `next` keeps the fixed boundary values; halos are refreshed. */
    swap_grids(&g);
  }

  double local_sum = block_sum(&g), checksum = 0.0;
  CALL(MPI_Reduce, (&local_sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, cart));
  CALL(MPI_Comm_free, (&cart));
  if (rank == 0) {
    printf(
        "halo2d: %d ranks (%dx%d), %d iterations, %dx%d cells/rank, work %d, residual %.6e, "
        "checksum %.12e\n",
        size, dims[0], dims[1], iterations, n, n, work, global_residual, checksum);
  }
  free_grid(&g);
  free(west_out);
  free(east_out);
  free(west_in);
  free(east_in);
  return app_finalize(rank);
}
