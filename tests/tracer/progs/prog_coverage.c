/*
 * prog_coverage: makes every traced MPI call that the mini-apps do not, counting each one with
 * app_counts.h, so the tracer test can check the trace has exactly these calls. Needs an even
 * number of ranks (the intercommunicator joins the even and the odd ranks).
 */
#include <stdlib.h>

#include "app_counts.h"

int main(int argc, char **argv) {
  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double out[64], in[64 * 8];
  for (int i = 0; i < 64; ++i) out[i] = rank + i;
  MPI_Status status;
  MPI_Request rq[8];

  /* Blocking send modes around the ring; Rsend needs the receive posted first. */
  CALL(MPI_Pcontrol, (1));
  CALL(MPI_Irecv, (in, 4, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &rq[0]));
  CALL(MPI_Barrier, (MPI_COMM_WORLD));
  CALL(MPI_Rsend, (out, 4, MPI_DOUBLE, right, 1, MPI_COMM_WORLD));
  CALL(MPI_Wait, (&rq[0], &status));
  int bsize = 0;
  CALL(MPI_Pack_size, (64, MPI_DOUBLE, MPI_COMM_WORLD, &bsize));
  bsize = 4 * (bsize + MPI_BSEND_OVERHEAD);
  void *bbuf = malloc((size_t)bsize);
  CALL(MPI_Buffer_attach, (bbuf, bsize));
  CALL(MPI_Bsend, (out, 8, MPI_DOUBLE, right, 2, MPI_COMM_WORLD));
  CALL(MPI_Recv, (in, 8, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  if (rank % 2 == 0) {
    CALL(MPI_Ssend, (out, 2, MPI_DOUBLE, right, 3, MPI_COMM_WORLD));
    CALL(MPI_Recv, (in, 2, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &status));
  } else {
    CALL(MPI_Recv, (in, 2, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &status));
    CALL(MPI_Ssend, (out, 2, MPI_DOUBLE, right, 3, MPI_COMM_WORLD));
  }

  /* Nonblocking send modes, probes, Testany. */
  CALL(MPI_Ibsend, (out, 3, MPI_DOUBLE, right, 4, MPI_COMM_WORLD, &rq[0]));
  CALL(MPI_Probe, (MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &status));
  CALL(MPI_Recv, (in, 3, MPI_DOUBLE, status.MPI_SOURCE, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CALL(MPI_Wait, (&rq[0], MPI_STATUS_IGNORE));
  CALL(MPI_Irecv, (in, 5, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &rq[1]));
  CALL(MPI_Barrier, (MPI_COMM_WORLD));
  CALL(MPI_Irsend, (out, 5, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &rq[0]));
  int done = 0, flag = 0, index = 0;
  while (done < 2) {
    CALL(MPI_Testany, (2, rq, &index, &flag, MPI_STATUS_IGNORE));
    if (flag && index != MPI_UNDEFINED) ++done;
  }
  CALL(MPI_Isend, (out, 1, MPI_DOUBLE, right, 6, MPI_COMM_WORLD, &rq[0]));
  do {
    CALL(MPI_Iprobe, (left, 6, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
  } while (!flag);
  CALL(MPI_Recv, (in, 1, MPI_DOUBLE, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CALL(MPI_Request_free, (&rq[0]));
  CALL(MPI_Buffer_detach, (&bbuf, &bsize));
  free(bbuf);

  /* Persistent send modes with MPI_Start. */
  CALL(MPI_Buffer_attach, (malloc((size_t)(bsize)), bsize));
  CALL(MPI_Ssend_init, (out, 2, MPI_DOUBLE, right, 7, MPI_COMM_WORLD, &rq[0]));
  CALL(MPI_Bsend_init, (out, 2, MPI_DOUBLE, right, 8, MPI_COMM_WORLD, &rq[1]));
  CALL(MPI_Recv_init, (in, 2, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, &rq[2]));
  CALL(MPI_Recv_init, (in + 2, 2, MPI_DOUBLE, left, 8, MPI_COMM_WORLD, &rq[3]));
  CALL(MPI_Recv_init, (in + 4, 2, MPI_DOUBLE, left, 9, MPI_COMM_WORLD, &rq[4]));
  CALL(MPI_Rsend_init, (out, 2, MPI_DOUBLE, right, 9, MPI_COMM_WORLD, &rq[5]));
  for (int it = 0; it < 2; ++it) {
    for (int i = 2; i < 5; ++i) CALL(MPI_Start, (&rq[i]));
    CALL(MPI_Barrier, (MPI_COMM_WORLD));
    CALL(MPI_Start, (&rq[0]));
    CALL(MPI_Start, (&rq[1]));
    CALL(MPI_Start, (&rq[5]));
    int outcount = 0, indices[6], completed = 0;
    MPI_Status statuses[6];
    while (completed < 6) {
      CALL(MPI_Waitsome, (6, rq, &outcount, indices, statuses));
      completed += outcount;
    }
    /* Inactive persistent requests: Wait/Test return at once and complete nothing. */
    CALL(MPI_Test, (&rq[0], &flag, MPI_STATUS_IGNORE));
  }
  for (int i = 0; i < 6; ++i) CALL(MPI_Request_free, (&rq[i]));
  void *attached = NULL;
  CALL(MPI_Buffer_detach, (&attached, &bsize));
  free(attached);

  /* Blocking collectives the apps do not use. */
  CALL(MPI_Gather, (out, 2, MPI_DOUBLE, in, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  CALL(MPI_Scatter, (in, 2, MPI_DOUBLE, out, 2, MPI_DOUBLE, size - 1, MPI_COMM_WORLD));
  CALL(MPI_Allgather, (out, 1, MPI_DOUBLE, in, 1, MPI_DOUBLE, MPI_COMM_WORLD));
  CALL(MPI_Alltoall, (out, 1, MPI_DOUBLE, in, 1, MPI_DOUBLE, MPI_COMM_WORLD));
  CALL(MPI_Allreduce, (MPI_IN_PLACE, out, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  CALL(MPI_Alltoallv, (out, (int[8]){1, 1, 1, 1, 1, 1, 1, 1}, (int[8]){0, 1, 2, 3, 4, 5, 6, 7}, MPI_DOUBLE, in,
                       (int[8]){1, 1, 1, 1, 1, 1, 1, 1}, (int[8]){0, 1, 2, 3, 4, 5, 6, 7}, MPI_DOUBLE, MPI_COMM_WORLD));

  /* Nonblocking collectives, finished with one Testall loop and one Waitall. */
  int ones[8] = {1, 1, 1, 1, 1, 1, 1, 1}, displs[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  MPI_Datatype types[8] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE,
                           MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
  int bdispls[8] = {0, 8, 16, 24, 32, 40, 48, 56};
  double a[8], b[8], c[8], d[8], e[8], f[8], g[8], h[8];
  for (int i = 0; i < 8; ++i) a[i] = b[i] = c[i] = d[i] = e[i] = f[i] = g[i] = h[i] = i;
  CALL(MPI_Igather, (out, 1, MPI_DOUBLE, a, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq[0]));
  CALL(MPI_Igatherv, (out, 1, MPI_DOUBLE, b, ones, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq[1]));
  CALL(MPI_Iscatter, (out, 1, MPI_DOUBLE, c, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq[2]));
  CALL(MPI_Iscatterv, (out, ones, displs, MPI_DOUBLE, d, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &rq[3]));
  CALL(MPI_Iallgather, (out, 1, MPI_DOUBLE, e, 1, MPI_DOUBLE, MPI_COMM_WORLD, &rq[4]));
  CALL(MPI_Iallgatherv, (out, 1, MPI_DOUBLE, f, ones, displs, MPI_DOUBLE, MPI_COMM_WORLD, &rq[5]));
  CALL(MPI_Ialltoall, (out, 1, MPI_DOUBLE, g, 1, MPI_DOUBLE, MPI_COMM_WORLD, &rq[6]));
  CALL(MPI_Ialltoallw, (out, ones, bdispls, types, h, ones, bdispls, types, MPI_COMM_WORLD, &rq[7]));
  do {
    CALL(MPI_Testall, (8, rq, &flag, MPI_STATUSES_IGNORE));
  } while (!flag);
  double r1[8], r2[8], r3[8], r4[8], r5[8];
  CALL(MPI_Ireduce, (out, r1, 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD, &rq[0]));
  CALL(MPI_Ireduce_scatter, (out, r2, ones, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[1]));
  CALL(MPI_Ireduce_scatter_block, (out, r3, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[2]));
  CALL(MPI_Iscan, (out, r4, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[3]));
  CALL(MPI_Iexscan, (out, r5, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[4]));
  CALL(MPI_Waitall, (5, rq, MPI_STATUSES_IGNORE));

  /* Communicator constructors the apps do not use; each new one is used once. */
  MPI_Comm half, inter, merged, dupi, idup, shared, created, cart, row, graph, dist, adj;
  CALL(MPI_Comm_split, (MPI_COMM_WORLD, rank % 2, rank, &half));
  CALL(MPI_Intercomm_create, (half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 42, &inter));
  int local = rank, remote_sum = 0;
  CALL(MPI_Allreduce, (&local, &remote_sum, 1, MPI_INT, MPI_SUM, inter));
  CALL(MPI_Intercomm_merge, (inter, rank % 2, &merged));
  CALL(MPI_Barrier, (merged));
  CALL(MPI_Comm_dup_with_info, (MPI_COMM_WORLD, MPI_INFO_NULL, &dupi));
  CALL(MPI_Comm_idup, (half, &idup, &rq[0]));
  CALL(MPI_Wait, (&rq[0], MPI_STATUS_IGNORE));
  CALL(MPI_Barrier, (idup));
  CALL(MPI_Comm_split_type, (MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared));
  MPI_Group world_group, first_two;
  CALL(MPI_Comm_group, (MPI_COMM_WORLD, &world_group));
  CALL(MPI_Group_incl, (world_group, 2, (int[2]){0, 1}, &first_two));
  CALL(MPI_Comm_create, (MPI_COMM_WORLD, first_two, &created));
  if (created != MPI_COMM_NULL) CALL(MPI_Barrier, (created));
  int dims[2] = {2, size / 2}, periods[2] = {1, 0}, remain[2] = {0, 1};
  CALL(MPI_Cart_create, (MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  CALL(MPI_Cart_sub, (cart, remain, &row));
  CALL(MPI_Barrier, (row));
  int index_ring[8], edges[8];
  for (int i = 0; i < size; ++i) {
    index_ring[i] = i + 1;
    edges[i] = (i + 1) % size;
  }
  CALL(MPI_Graph_create, (MPI_COMM_WORLD, size, index_ring, edges, 0, &graph));
  CALL(MPI_Barrier, (graph));
  int one_source[1] = {rank}, one_degree[1] = {1}, one_dest[1] = {right};
  CALL(MPI_Dist_graph_create,
       (MPI_COMM_WORLD, 1, one_source, one_degree, one_dest, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dist));
  CALL(MPI_Barrier, (dist));
  CALL(MPI_Dist_graph_create_adjacent,
       (MPI_COMM_WORLD, 1, (int[1]){left}, MPI_UNWEIGHTED, 1, (int[1]){right}, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &adj));
  CALL(MPI_Barrier, (adj));
  /* Neighborhood collectives on the topologies above. The Cartesian grid has 4 neighbor slots:
   * dimension 0 is periodic of size 2 (both slots are the same rank), dimension 1 is not periodic
   * (MPI_PROC_NULL at its ends; at 2 ranks it has size 1 and both slots are MPI_PROC_NULL). The
   * distributed graphs have one source (left) and one destination (right). */
  double nb_in[8], nb_out[8];
  for (int i = 0; i < 8; ++i) nb_out[i] = rank * 10 + i;
  /* Per dimension, the block for the -1 neighbor arrives in that neighbor's +1 slot: sizes 1, 2
   * doubles out and 2, 1 in, so a wrong pairing of a periodic size-2 dimension's two messages
   * would truncate. */
  int send_n[4] = {1, 2, 1, 2}, send_displs[4] = {0, 1, 3, 4};
  int recv_n[4] = {2, 1, 2, 1}, recv_displs[4] = {0, 2, 3, 5};
  int recv_bytes[4] = {16, 8, 16, 8};
  MPI_Aint send_bdispls[4] = {0, 8, 24, 32}, recv_bdispls[4] = {0, 16, 24, 40};
  MPI_Datatype doubles[4] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
  MPI_Datatype bytes[4] = {MPI_BYTE, MPI_BYTE, MPI_BYTE, MPI_BYTE};
  CALL(MPI_Neighbor_allgather, (nb_out, 1, MPI_DOUBLE, nb_in, 1, MPI_DOUBLE, cart));
  CALL(MPI_Neighbor_alltoall, (nb_out, 1, MPI_DOUBLE, nb_in, 1, MPI_DOUBLE, cart));
  CALL(MPI_Neighbor_allgatherv, (nb_out, 2, MPI_DOUBLE, nb_in, (int[1]){2}, (int[1]){0}, MPI_DOUBLE, adj));
  CALL(MPI_Neighbor_alltoallv,
       (nb_out, (int[1]){3}, (int[1]){0}, MPI_DOUBLE, nb_in, (int[1]){3}, (int[1]){0}, MPI_DOUBLE, dist));
  CALL(MPI_Neighbor_alltoallw, (nb_out, send_n, send_bdispls, doubles, nb_in, recv_bytes, recv_bdispls, bytes, cart));
  double nb_a[8], nb_b[8], nb_c[8], nb_d[8], nb_e[8];
  CALL(MPI_Ineighbor_allgather, (nb_out, 1, MPI_DOUBLE, nb_a, 1, MPI_DOUBLE, cart, &rq[0]));
  CALL(MPI_Ineighbor_allgatherv, (nb_out, 1, MPI_DOUBLE, nb_b, (int[1]){1}, (int[1]){0}, MPI_DOUBLE, dist, &rq[1]));
  CALL(MPI_Ineighbor_alltoall, (nb_out, 2, MPI_DOUBLE, nb_c, 2, MPI_DOUBLE, adj, &rq[2]));
  CALL(MPI_Ineighbor_alltoallv,
       (nb_out, send_n, send_displs, MPI_DOUBLE, nb_d, recv_n, recv_displs, MPI_DOUBLE, cart, &rq[3]));
  CALL(MPI_Ineighbor_alltoallw,
       (nb_out, send_n, send_bdispls, doubles, nb_e, recv_bytes, recv_bdispls, bytes, cart, &rq[4]));
  CALL(MPI_Waitall, (5, rq, MPI_STATUSES_IGNORE));
  /* MPI_COMM_SELF has its own id. */
  CALL(MPI_Barrier, (MPI_COMM_SELF));
  /* Nonblocking collectives over one rank complete at once, and MPICH returns the same built-in
   * request handle for both: the trace must still tell the two requests apart. */
  double self_value = rank;
  MPI_Request self_requests[2];
  CALL(MPI_Iallreduce, (MPI_IN_PLACE, &self_value, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF, &self_requests[0]));
  CALL(MPI_Ibarrier, (MPI_COMM_SELF, &self_requests[1]));
  CALL(MPI_Waitall, (2, self_requests, MPI_STATUSES_IGNORE));

  MPI_Comm *to_free[] = {&half, &inter, &merged, &dupi, &idup, &shared, &cart, &row, &graph, &dist, &adj};
  for (size_t i = 0; i < sizeof to_free / sizeof to_free[0]; ++i) CALL(MPI_Comm_free, (to_free[i]));
  if (created != MPI_COMM_NULL) CALL(MPI_Comm_free, (&created));
  CALL(MPI_Group_free, (&first_two));
  CALL(MPI_Group_free, (&world_group));
  if (rank == 0) printf("prog_coverage: %d ranks, remote sum %d\n", size, remote_sum);
  return app_finalize(rank);
}
