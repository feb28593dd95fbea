/*
 * subcomm: communicator management and the whole collective zoo on sub-communicators.
 * The ranks form a rows x cols grid (MPI_Dims_create); MPI_Comm_split gives row and column
 * communicators, MPI_Comm_dup a private copy of MPI_COMM_WORLD and MPI_Comm_create_group a
 * communicator of the even ranks. Each iteration runs
 *   rows:    Bcast, Reduce, Allreduce (MPI_IN_PLACE), Allgather, Allgatherv
 *   columns: Gather, Gatherv, Scatter, Scatterv, Alltoall, Alltoallv, Alltoallw
 *   dup:     Reduce_scatter, Reduce_scatter_block, Scan, Exscan, Barrier
 *   evens:   Iallreduce + Ibcast (MPI_Waitall), Ialltoallv (MPI_Wait), Ibarrier (MPI_Wait)
 * and everything is freed at the end. All data are small integers held in doubles, so every sum
 * is exact and the checksum does not depend on the reduction order MPICH picks.
 *
 * usage: app_subcomm [iterations] [doubles per rank]
 */
#include "app_counts.h"

typedef struct {
  MPI_Comm comm;
  int rank, size;
} Group;

static Group describe(MPI_Comm comm) {
  Group g = {comm, 0, 0};
  CALL(MPI_Comm_rank, (comm, &g.rank));
  CALL(MPI_Comm_size, (comm, &g.size));
  return g;
}

static double sum(const double *data, int count) {
  double s = 0.0;
  for (int i = 0; i < count; ++i) s += data[i];
  return s;
}

static void fill(double *data, int count, int seed) {
  for (int i = 0; i < count; ++i) data[i] = (double)((seed * 31 + i * 7) % 97);
}

/* Message sizes that differ per pair, for the v/w variants: what rank i sends to rank j. */
static int pair_count(int i, int j) { return 1 + (i + 2 * j) % 3; }

/* Displacements of consecutive blocks with the given counts, in elements or bytes. */
static void displacements(const int *counts, int n, int scale, int *displs) {
  int offset = 0;
  for (int i = 0; i < n; ++i) {
    displs[i] = offset * scale;
    offset += counts[i];
  }
}

static double row_collectives(Group g, int m, int seed, double *a, double *b) {
  double s = 0.0;
  fill(a, m, seed);
  CALL(MPI_Bcast, (a, m, MPI_DOUBLE, 0, g.comm));
  s += sum(a, m);
  CALL(MPI_Reduce, (a, b, m, MPI_DOUBLE, MPI_SUM, g.size - 1, g.comm));
  if (g.rank == g.size - 1) s += sum(b, m);
  fill(a, m, seed + g.rank);
  CALL(MPI_Allreduce, (MPI_IN_PLACE, a, m, MPI_DOUBLE, MPI_MAX, g.comm));
  s += sum(a, m);
  CALL(MPI_Allgather, (a, m, MPI_DOUBLE, b, m, MPI_DOUBLE, g.comm));
  s += sum(b, m * g.size);

  int counts[g.size], displs[g.size];
  for (int i = 0; i < g.size; ++i) counts[i] = 1 + (i * 5 + seed) % m;
  displacements(counts, g.size, 1, displs);
  fill(a, counts[g.rank], seed * 3 + g.rank);
  CALL(MPI_Allgatherv, (a, counts[g.rank], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, g.comm));
  s += sum(b, displs[g.size - 1] + counts[g.size - 1]);
  return s;
}

static double column_collectives(Group g, int m, int seed, double *a, double *b) {
  double s = 0.0;
  const int root = seed % g.size;
  int counts[g.size], displs[g.size];
  for (int i = 0; i < g.size; ++i) counts[i] = 1 + (i * 3 + seed) % m;
  displacements(counts, g.size, 1, displs);
  const int total = displs[g.size - 1] + counts[g.size - 1];

  fill(a, m, seed + g.rank);
  CALL(MPI_Gather, (a, m, MPI_DOUBLE, b, m, MPI_DOUBLE, root, g.comm));
  if (g.rank == root) s += sum(b, m * g.size);
  CALL(MPI_Gatherv, (a, counts[g.rank], MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, root, g.comm));
  if (g.rank == root) s += sum(b, total);

  fill(a, m * g.size, seed);
  CALL(MPI_Scatter, (a, m, MPI_DOUBLE, b, m, MPI_DOUBLE, root, g.comm));
  s += sum(b, m);
  CALL(MPI_Scatterv, (a, counts, displs, MPI_DOUBLE, b, counts[g.rank], MPI_DOUBLE, root, g.comm));
  s += sum(b, counts[g.rank]);

  fill(a, m * g.size, seed + g.rank);
  CALL(MPI_Alltoall, (a, m, MPI_DOUBLE, b, m, MPI_DOUBLE, g.comm));
  s += sum(b, m * g.size);

  int send_counts[g.size], send_displs[g.size], recv_counts[g.size], recv_displs[g.size];
  for (int j = 0; j < g.size; ++j) {
    send_counts[j] = pair_count(g.rank, j);
    recv_counts[j] = pair_count(j, g.rank);
  }
  displacements(send_counts, g.size, 1, send_displs);
  displacements(recv_counts, g.size, 1, recv_displs);
  const int received = recv_displs[g.size - 1] + recv_counts[g.size - 1];
  CALL(MPI_Alltoallv,
       (a, send_counts, send_displs, MPI_DOUBLE, b, recv_counts, recv_displs, MPI_DOUBLE, g.comm));
  s += sum(b, received);

  /* Alltoallw takes byte displacements and a type per peer */
  MPI_Datatype types[g.size];
  for (int j = 0; j < g.size; ++j) types[j] = MPI_DOUBLE;
  displacements(send_counts, g.size, (int)sizeof(double), send_displs);
  displacements(recv_counts, g.size, (int)sizeof(double), recv_displs);
  fill(a, m * g.size, seed * 5 + g.rank);
  CALL(MPI_Alltoallw,
       (a, send_counts, send_displs, types, b, recv_counts, recv_displs, types, g.comm));
  s += sum(b, received);
  return s;
}

static double world_copy_collectives(Group g, int seed, double *a, double *b) {
  double s = 0.0;
  int counts[g.size];
  int total = 0;
  for (int i = 0; i < g.size; ++i) total += counts[i] = 1 + i % 2;
  fill(a, total, seed + g.rank);
  CALL(MPI_Reduce_scatter, (a, b, counts, MPI_DOUBLE, MPI_SUM, g.comm));
  s += sum(b, counts[g.rank]);
  CALL(MPI_Reduce_scatter_block, (a, b, 1, MPI_DOUBLE, MPI_SUM, g.comm));
  s += b[0];
  CALL(MPI_Scan, (a, b, 2, MPI_DOUBLE, MPI_SUM, g.comm));
  s += sum(b, 2);
  CALL(MPI_Exscan, (a, b, 2, MPI_DOUBLE, MPI_SUM, g.comm));
  if (g.rank > 0) s += sum(b, 2); /* rank 0's Exscan result is undefined */
  CALL(MPI_Barrier, (g.comm));
  return s;
}

static double nonblocking_collectives(Group g, int m, int seed, double *a, double *b) {
  double s = 0.0;
  double token[2] = {(double)seed, (double)g.rank};
  MPI_Request requests[2];
  fill(a, m, seed + g.rank);
  CALL(MPI_Iallreduce, (MPI_IN_PLACE, a, m, MPI_DOUBLE, MPI_SUM, g.comm, &requests[0]));
  CALL(MPI_Ibcast, (token, 2, MPI_DOUBLE, 0, g.comm, &requests[1]));
  CALL(MPI_Waitall, (2, requests, MPI_STATUSES_IGNORE));
  s += sum(a, m) + token[0] + token[1];

  int send_counts[g.size], send_displs[g.size], recv_counts[g.size], recv_displs[g.size];
  for (int j = 0; j < g.size; ++j) {
    send_counts[j] = pair_count(j, g.rank);
    recv_counts[j] = pair_count(g.rank, j);
  }
  displacements(send_counts, g.size, 1, send_displs);
  displacements(recv_counts, g.size, 1, recv_displs);
  fill(a, m * g.size, seed * 7 + g.rank);
  CALL(MPI_Ialltoallv, (a, send_counts, send_displs, MPI_DOUBLE, b, recv_counts, recv_displs,
                        MPI_DOUBLE, g.comm, &requests[0]));
  CALL(MPI_Wait, (&requests[0], MPI_STATUS_IGNORE));
  s += sum(b, recv_displs[g.size - 1] + recv_counts[g.size - 1]);

  CALL(MPI_Ibarrier, (g.comm, &requests[0]));
  CALL(MPI_Wait, (&requests[0], MPI_STATUS_IGNORE));
  return s;
}

int main(int argc, char **argv) {
  app_usage(argc, argv, "[iterations (default 3)] [doubles per rank (default 32)]");
  const int iterations = (int)app_arg(argc, argv, 1, "iterations", 3, 1);
  const int m = (int)app_arg(argc, argv, 2, "doubles per rank", 32, 3);

  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));

  int dims[2] = {0, 0};
  CALL(MPI_Dims_create, (size, 2, dims));
  const int my_row = rank / dims[1], my_col = rank % dims[1];
  MPI_Comm row_comm, col_comm, dup_comm, even_comm = MPI_COMM_NULL;
  CALL(MPI_Comm_split, (MPI_COMM_WORLD, my_row, my_col, &row_comm));
  CALL(MPI_Comm_split, (MPI_COMM_WORLD, my_col, my_row, &col_comm));
  CALL(MPI_Comm_dup, (MPI_COMM_WORLD, &dup_comm));

  /* Comm_create_group is collective over the group only: odd ranks do not take part. */
  MPI_Group world_group, even_group;
  const int evens = (size + 1) / 2;
  int even_ranks[evens];
  for (int i = 0; i < evens; ++i) even_ranks[i] = 2 * i;
  CALL(MPI_Comm_group, (MPI_COMM_WORLD, &world_group));
  CALL(MPI_Group_incl, (world_group, evens, even_ranks, &even_group));
  if (rank % 2 == 0) CALL(MPI_Comm_create_group, (MPI_COMM_WORLD, even_group, 7, &even_comm));
  CALL(MPI_Group_free, (&even_group));
  CALL(MPI_Group_free, (&world_group));

  const Group row = describe(row_comm), col = describe(col_comm), dup = describe(dup_comm);
  const Group even =
      even_comm != MPI_COMM_NULL ? describe(even_comm) : (Group){MPI_COMM_NULL, 0, 0};

  /* big enough for m doubles from every rank of any communicator */
  double *a = malloc((size_t)m * (size_t)size * sizeof(double));
  double *b = malloc((size_t)m * (size_t)size * sizeof(double));
  double local = 0.0;
  for (int it = 0; it < iterations; ++it) {
    local += row_collectives(row, m, it + my_row, a, b);
    local += column_collectives(col, m, it + my_col, a, b);
    local += world_copy_collectives(dup, it, a, b);
    if (even.comm != MPI_COMM_NULL) local += nonblocking_collectives(even, m, it, a, b);
  }

  double checksum = 0.0;
  CALL(MPI_Reduce, (&local, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
  CALL(MPI_Comm_free, (&row_comm));
  CALL(MPI_Comm_free, (&col_comm));
  CALL(MPI_Comm_free, (&dup_comm));
  if (even_comm != MPI_COMM_NULL) CALL(MPI_Comm_free, (&even_comm));
  if (rank == 0) {
    printf("subcomm: %d ranks (%dx%d), %d iterations, %d doubles/rank, checksum %.1f\n", size,
           dims[0], dims[1], iterations, m, checksum);
  }
  free(a);
  free(b);
  return app_finalize(rank);
}
