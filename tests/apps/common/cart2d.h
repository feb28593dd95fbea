/*
 * cart2d.h - the 2-D Cartesian communicator of the stencil apps (halo2d, nhalo, pcoll): the ranks
 * split over MPI_Dims_create's grid by MPI_Cart_create (periodic in both dimensions, a torus, or
 * in neither), and this rank's coordinates. Its MPI calls are counted: include after app_counts.h.
 */
#ifndef LLAMP_CART2D_H
#define LLAMP_CART2D_H

static MPI_Comm open_cart2d(int size, int rank, int periodic, int dims[2], int coords[2]) {
  int periods[2] = {periodic, periodic};
  dims[0] = dims[1] = 0;
  CALL(MPI_Dims_create, (size, 2, dims));
  MPI_Comm cart;
  CALL(MPI_Cart_create, (MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  CALL(MPI_Cart_coords, (cart, rank, 2, coords));
  return cart;
}

#endif /* LLAMP_CART2D_H */
