/*
 * stencil2d.h - the relaxation kernel of the 2-D stencil apps (halo2d, nhalo, pcoll): an n x n
 * block of cells with a one-cell ghost ring, relaxed towards the average of its four neighbours.
 * Include from one translation unit per app.
 */
#ifndef LLAMP_STENCIL2D_H
#define LLAMP_STENCIL2D_H

#include <stdlib.h>

typedef struct {
  int n;     /* interior cells per side; arrays are (n+2) x (n+2) with a ghost ring */
  int work;  /* relaxation steps per cell */
  double *u; /* current values */
  double *next;
} Grid;

static inline int at(const Grid *g, int i, int j) { return i * (g->n + 2) + j; }

static inline Grid new_grid(int n, int work) {
  const size_t cells = (size_t)(n + 2) * (size_t)(n + 2);
  Grid g = {n, work, calloc(cells, sizeof(double)), calloc(cells, sizeof(double))};
  return g;
}

static inline void free_grid(Grid *g) {
  free(g->u);
  free(g->next);
}

/* One cell's update: relax towards the neighbour average `work` times. The dependent chain of
 * flops cannot be folded by the compiler, so compute time scales with `work`. Returns the
 * squared change, the residual's contribution. */
static inline double update_cell(Grid *g, int i, int j) {
  const double *u = g->u;
  const double average =
      0.25 * (u[at(g, i - 1, j)] + u[at(g, i + 1, j)] + u[at(g, i, j - 1)] + u[at(g, i, j + 1)]);
  double v = u[at(g, i, j)];
  for (int k = 0; k < g->work; ++k) v += 0.5 * (average - v);
  g->next[at(g, i, j)] = v;
  const double change = v - u[at(g, i, j)];
  return change * change;
}

static double update_rows(Grid *g, int i0, int i1, int j0, int j1) {
  double residual = 0.0;
  for (int i = i0; i <= i1; ++i)
    for (int j = j0; j <= j1; ++j) residual += update_cell(g, i, j);
  return residual;
}

/* The deterministic start of every 2-D stencil app: each cell's value depends on its global
 * position, for the block at Cartesian coordinates `coords`. */
static inline void fill_start(Grid *g, const int coords[2]) {
  const int n = g->n;
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= n; ++j) {
      const long gi = (long)coords[0] * n + i, gj = (long)coords[1] * n + j;
      g->u[at(g, i, j)] = (double)((gi * 7 + gj * 13) % 17) / 17.0;
    }
}

/* The cells that need no halo, updated while the halos travel. */
static inline double update_interior(Grid *g) { return update_rows(g, 2, g->n - 1, 2, g->n - 1); }

/* The ring of cells next to the halos, once they have arrived; adds to `residual`. */
static inline double update_boundary(Grid *g, double residual) {
  const int n = g->n;
  residual += update_rows(g, 1, 1, 1, n) + update_rows(g, n, n, 1, n);
  residual += update_rows(g, 2, n - 1, 1, 1) + update_rows(g, 2, n - 1, n, n);
  return residual;
}

/* The new values become the current ones; the ghost ring of `next` keeps its values. */
static inline void swap_grids(Grid *g) {
  double *swap = g->u;
  g->u = g->next;
  g->next = swap;
}

static inline double block_sum(const Grid *g) {
  double sum = 0.0;
  for (int i = 1; i <= g->n; ++i)
    for (int j = 1; j <= g->n; ++j) sum += g->u[at(g, i, j)];
  return sum;
}

/* Torus apps (nhalo, pcoll) exchange the four edges in the topology's neighbour order: dimension
 * 0's -1 (north) and +1 (south), then dimension 1's -1 (west) and +1 (east), n values each. */
enum { EDGE_NORTH, EDGE_SOUTH, EDGE_WEST, EDGE_EAST };

static inline void pack_edges(const Grid *g, double *out) {
  const int n = g->n;
  for (int k = 0; k < n; ++k) {
    out[EDGE_NORTH * n + k] = g->u[at(g, 1, k + 1)];
    out[EDGE_SOUTH * n + k] = g->u[at(g, n, k + 1)];
    out[EDGE_WEST * n + k] = g->u[at(g, k + 1, 1)];
    out[EDGE_EAST * n + k] = g->u[at(g, k + 1, n)];
  }
}

static inline void unpack_halos(Grid *g, const double *in) {
  const int n = g->n;
  for (int k = 0; k < n; ++k) {
    g->u[at(g, 0, k + 1)] = in[EDGE_NORTH * n + k];
    g->u[at(g, n + 1, k + 1)] = in[EDGE_SOUTH * n + k];
    g->u[at(g, k + 1, 0)] = in[EDGE_WEST * n + k];
    g->u[at(g, k + 1, n + 1)] = in[EDGE_EAST * n + k];
  }
}

#endif /* LLAMP_STENCIL2D_H */
