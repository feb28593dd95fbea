/*
 * halo3d: 7-point Jacobi-style stencil on a 3-D process grid (MPI_Dims_create + MPI_Cart_create,
 * non-periodic, MPI_PROC_NULL at the borders), the decomposition of 3-D CFD and climate codes.
 * Each iteration packs the six faces of its n x n x n block, posts MPI_Irecv/MPI_Isend to the six
 * neighbours, relaxes the interior while the faces travel, then MPI_Waitall, unpacks the ghost
 * faces and relaxes the boundary shell; every k iterations an MPI_Allreduce sums the residual.
 *
 * A face is n^2 doubles: from n = 33 on that is above MPICH/UCX's rendezvous threshold here
 * (8 KiB), so each face travels as a request-to-send that the receiver, without an asynchronous
 * progress thread, answers only in its MPI_Waitall. The latency the overlap seems to hide is
 * paid there (docs/schedgen.md, "Progress of rendezvous receives").
 *
 * usage: app_halo3d [iterations] [cells per side per rank] [work per cell] [residual interval]
 * "work" is the number of relaxation steps per cell: it scales compute linearly.
 */
#include "app_counts.h"

enum { TAG_FACE = 20 }; /* a face sent towards side f (dimension f / 2, high side if f is odd) */

typedef struct {
  int n, work;      /* interior cells per side, relaxation steps per cell */
  double *u, *next; /* (n+2)^3 with a one-cell ghost layer */
} Block;

static inline size_t at3(int n, int i, int j, int k) {
  return ((size_t)i * (size_t)(n + 2) + (size_t)j) * (size_t)(n + 2) + (size_t)k;
}

/* Cell (a, b) of the plane `layer` across dimension d. */
static inline size_t plane_cell(int n, int d, int layer, int a, int b) {
  return d == 0 ? at3(n, layer, a, b) : d == 1 ? at3(n, a, layer, b) : at3(n, a, b, layer);
}

/* Face f of the block (its outermost interior plane on side f) into out[n * n]. */
static void pack_face(const Block *x, int f, double *out) {
  const int n = x->n, d = f / 2, layer = (f % 2) ? n : 1;
  for (int a = 1; a <= n; ++a)
    for (int b = 1; b <= n; ++b)
      out[(size_t)(a - 1) * (size_t)n + (size_t)(b - 1)] = x->u[plane_cell(n, d, layer, a, b)];
}

/* The neighbour's face in[n * n] into the ghost plane on side f. */
static void unpack_face(Block *x, int f, const double *in) {
  const int n = x->n, d = f / 2, layer = (f % 2) ? n + 1 : 0;
  for (int a = 1; a <= n; ++a)
    for (int b = 1; b <= n; ++b)
      x->u[plane_cell(n, d, layer, a, b)] = in[(size_t)(a - 1) * (size_t)n + (size_t)(b - 1)];
}

/* Relax one cell towards the average of its six neighbours `work` times (a dependent chain the
 * compiler cannot fold); returns the squared change. */
static inline double relax(Block *x, int i, int j, int k) {
  const int n = x->n;
  const double *u = x->u;
  const double average =
      (u[at3(n, i - 1, j, k)] + u[at3(n, i + 1, j, k)] + u[at3(n, i, j - 1, k)] +
       u[at3(n, i, j + 1, k)] + u[at3(n, i, j, k - 1)] + u[at3(n, i, j, k + 1)]) /
      6.0;
  double v = u[at3(n, i, j, k)];
  for (int w = 0; w < x->work; ++w) v += 0.5 * (average - v);
  x->next[at3(n, i, j, k)] = v;
  const double change = v - u[at3(n, i, j, k)];
  return change * change;
}

/* The cells that need no ghost value. */
static double relax_interior(Block *x) {
  double residual = 0.0;
  for (int i = 2; i < x->n; ++i)
    for (int j = 2; j < x->n; ++j)
      for (int k = 2; k < x->n; ++k) residual += relax(x, i, j, k);
  return residual;
}

/* The outermost layer of cells, once the ghost faces are in. */
static double relax_shell(Block *x) {
  const int n = x->n;
  double residual = 0.0;
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= n; ++j) {
      if (i == 1 || i == n || j == 1 || j == n) { /* on an outer face: the whole column */
        for (int k = 1; k <= n; ++k) residual += relax(x, i, j, k);
      } else { /* inside: only its two ends */
        residual += relax(x, i, j, 1);
        residual += relax(x, i, j, n);
      }
    }
  return residual;
}

int main(int argc, char **argv) {
  app_usage(argc, argv,
            "[iterations (default 100)] [cells per side per rank (default 24)] "
            "[work per cell (default 8)] [residual interval (default 10)]");
  const int iterations = (int)app_arg(argc, argv, 1, "iterations", 100, 1);
  const int n = (int)app_arg(argc, argv, 2, "cells per side per rank", 24, 3);
  const int work = (int)app_arg(argc, argv, 3, "work per cell", 8, 1);
  const int residual_interval = (int)app_arg(argc, argv, 4, "residual interval", 10, 1);

  CALL(MPI_Init, (&argc, &argv));
  int rank = 0, size = 0;
  CALL(MPI_Comm_rank, (MPI_COMM_WORLD, &rank));
  CALL(MPI_Comm_size, (MPI_COMM_WORLD, &size));

  int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
  CALL(MPI_Dims_create, (size, 3, dims));
  MPI_Comm cart;
  CALL(MPI_Cart_create, (MPI_COMM_WORLD, 3, dims, periods, 0, &cart));
  CALL(MPI_Cart_coords, (cart, rank, 3, coords));
  int neighbour[6]; /* side f: dimension f / 2, low side for even f */
  for (int d = 0; d < 3; ++d)
    CALL(MPI_Cart_shift, (cart, d, 1, &neighbour[2 * d], &neighbour[2 * d + 1]));

  const size_t cells = (size_t)(n + 2) * (size_t)(n + 2) * (size_t)(n + 2);
  Block x = {n, work, calloc(cells, sizeof(double)), calloc(cells, sizeof(double))};
  double *out[6], *in[6];
  for (int f = 0; f < 6; ++f) {
    out[f] = malloc((size_t)n * (size_t)n * sizeof(double));
    in[f] = malloc((size_t)n * (size_t)n * sizeof(double));
  }
  /* Deterministic start that depends on the global position; the global low x face is held hot. */
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= n; ++j)
      for (int k = 1; k <= n; ++k) {
        const long gi = (long)coords[0] * n + i, gj = (long)coords[1] * n + j,
                   gk = (long)coords[2] * n + k;
        x.u[at3(n, i, j, k)] = (double)((gi * 7 + gj * 13 + gk * 5) % 17) / 17.0;
      }
  if (neighbour[0] == MPI_PROC_NULL)
    for (int j = 0; j < n + 2; ++j)
      for (int k = 0; k < n + 2; ++k) x.u[at3(n, 0, j, k)] = x.next[at3(n, 0, j, k)] = 1.0;

  double global_residual = 0.0;
  for (int it = 0; it < iterations; ++it) {
    MPI_Request requests[12];
    for (int f = 0; f < 6; ++f)
      if (neighbour[f] != MPI_PROC_NULL) pack_face(&x, f, out[f]);
    /* The neighbour on side f sends its face towards us, i.e. towards its side f ^ 1. */
    for (int f = 0; f < 6; ++f)
      CALL(MPI_Irecv,
           (in[f], n * n, MPI_DOUBLE, neighbour[f], TAG_FACE + (f ^ 1), cart, &requests[f]));
    for (int f = 0; f < 6; ++f)
      CALL(MPI_Isend,
           (out[f], n * n, MPI_DOUBLE, neighbour[f], TAG_FACE + f, cart, &requests[6 + f]));

    /* The interior needs no ghost value: compute it while the faces are in flight. */
    double residual = relax_interior(&x);
    CALL(MPI_Waitall, (12, requests, MPI_STATUSES_IGNORE));
    for (int f = 0; f < 6; ++f)
      if (neighbour[f] != MPI_PROC_NULL) unpack_face(&x, f, in[f]);
    residual += relax_shell(&x);

    if ((it + 1) % residual_interval == 0)
      CALL(MPI_Allreduce, (&residual, &global_residual, 1, MPI_DOUBLE, MPI_SUM, cart));
    /* Fixed ghost values (zero, the hot face) are in both arrays; received faces are refreshed. */
    double *t = x.u;
    x.u = x.next;
    x.next = t;
  }

  double local_sum = 0.0, checksum = 0.0;
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= n; ++j)
      for (int k = 1; k <= n; ++k) local_sum += x.u[at3(n, i, j, k)];
  CALL(MPI_Reduce, (&local_sum, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, cart));
  CALL(MPI_Comm_free, (&cart));
  if (rank == 0)
    printf(
        "halo3d: %d ranks (%dx%dx%d), %d iterations, %d^3 cells/rank, work %d, residual %.6e, "
        "checksum %.12e\n",
        size, dims[0], dims[1], dims[2], iterations, n, work, global_residual, checksum);
  for (int f = 0; f < 6; ++f) {
    free(out[f]);
    free(in[f]);
  }
  free(x.u);
  free(x.next);
  return app_finalize(rank);
}
