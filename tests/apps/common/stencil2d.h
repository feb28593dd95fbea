/*
 * stencil2d.h - the relaxation kernel of the 2-D stencil apps (halo2d, nhalo): an n x n block of
 * cells with a one-cell ghost ring, relaxed towards the average of its four neighbours.
 * Include from one translation unit per app.
 */
#ifndef LLAMP_STENCIL2D_H
#define LLAMP_STENCIL2D_H

typedef struct {
  int n;     /* interior cells per side; arrays are (n+2) x (n+2) with a ghost ring */
  int work;  /* relaxation steps per cell */
  double *u; /* current values */
  double *next;
} Grid;

static inline int at(const Grid *g, int i, int j) { return i * (g->n + 2) + j; }

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

#endif /* LLAMP_STENCIL2D_H */
