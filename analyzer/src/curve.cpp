#include "llamp/analyzer/curve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llamp::analyzer {
namespace {

Point eval(Engine& e, Sweep sweep, double x) { return sweep == Sweep::L ? e.at_L(x) : e.at_G(x); }

// Values agree when they differ by rounding only (sums of up to ~10^8 terms in ns).
bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

// A breakpoint with T there and the slope of the segment to its right.
struct Knot {
  double x, T, slope;
};

// Finds the breakpoints strictly inside (a.x, b.x), given T and a subgradient at both ends.
// Found breakpoints carry the value of the supporting lines there and the right line's slope, so
// the curve needs no further evaluations.
void bisect_tangents(Engine& e, Sweep sweep, const Point& a, const Point& b, std::vector<Knot>& out, int depth) {
  if (b.x - a.x <= 1e-9 * std::max(1.0, std::fabs(b.x)) || close(a.slope, b.slope)) return;
  // Line through a with slope a.slope meets the line through b with slope b.slope at c.
  double c = (b.T - a.T + a.slope * a.x - b.slope * b.x) / (a.slope - b.slope);
  if (!(c > a.x && c < b.x)) return;  // rounding put the kink at an end
  Point m = eval(e, sweep, c);
  double line = a.T + a.slope * (c - a.x);
  if (close(m.T, line) || depth > 200) {
    out.push_back(Knot{c, m.T, b.slope});
    return;
  }
  bisect_tangents(e, sweep, a, m, out, depth + 1);
  // m's right-derivative is a valid supporting slope for the right half, and (being ≥ the left
  // derivative) still a supporting line for the left half, so both recursions are exact.
  bisect_tangents(e, sweep, m, b, out, depth + 1);
}

Curve assemble(const Point& lo, const Point& hi, std::vector<Knot> knots, uint64_t evaluations) {
  std::sort(knots.begin(), knots.end(), [](const Knot& a, const Knot& b) { return a.x < b.x; });
  Curve c;
  Knot prev{lo.x, lo.T, lo.slope};
  for (const Knot& k : knots) {
    if (!(k.x > prev.x) || !(k.x < hi.x)) continue;
    c.breakpoints.push_back(k.x);
    c.segments.push_back(Segment{prev.x, k.x, prev.T, k.T, prev.slope});
    prev = k;
  }
  // The last segment ends at hi; its slope is the right-derivative just right of the last knot.
  c.segments.push_back(Segment{prev.x, hi.x, prev.T, hi.T, prev.slope});
  c.evaluations = evaluations;
  return c;
}

}  // namespace

Curve exact_curve(Engine& e, Sweep sweep, double x_min, double x_max) {
  if (!(x_min >= 0) || !(x_max >= x_min)) throw Error(fmt::format("invalid range [{}, {}]", x_min, x_max));
  const uint64_t before = e.evaluations();
  Point a = eval(e, sweep, x_min), b = eval(e, sweep, x_max);
  std::vector<Knot> knots;
  bisect_tangents(e, sweep, a, b, knots, 0);
  return assemble(a, b, std::move(knots), e.evaluations() - before);
}

Curve stepped_curve(Engine& e, Sweep sweep, double x_min, double x_max, double step) {
  if (!(step > 0)) throw Error("--step must be positive");
  if (!(x_min >= 0) || !(x_max >= x_min)) throw Error(fmt::format("invalid range [{}, {}]", x_min, x_max));
  const uint64_t before = e.evaluations();
  std::vector<Point> grid;
  for (double x = x_max;; x -= step) {
    if (x <= x_min) {
      grid.push_back(eval(e, sweep, x_min));
      break;
    }
    grid.push_back(eval(e, sweep, x));
  }
  std::reverse(grid.begin(), grid.end());
  // Grid points where the slope does not change are not breakpoints (T is linear around them
  // only if the slopes on both sides agree, which the refinement checks); they become knots of
  // the curve all the same, so keep them as segment boundaries only where a breakpoint is.
  std::vector<Knot> knots;
  for (size_t i = 0; i + 1 < grid.size(); ++i) {
    if (close(grid[i].slope, grid[i + 1].slope)) continue;
    const size_t before_refine = knots.size();
    bisect_tangents(e, sweep, grid[i], grid[i + 1], knots, 0);
    // The slope changes exactly at the grid point i + 1 itself (its right-derivative differs).
    if (knots.size() == before_refine && i + 2 < grid.size())
      knots.push_back(Knot{grid[i + 1].x, grid[i + 1].T, grid[i + 1].slope});
  }
  return assemble(grid.front(), grid.back(), std::move(knots), e.evaluations() - before);
}

std::optional<double> max_x_within(Engine& e, Sweep sweep, double x0, double bound) {
  Point p = eval(e, sweep, x0);
  if (p.T > bound && !close(p.T, bound))
    throw Error(fmt::format("the runtime {} ns at the base point already exceeds the bound {} ns", p.T, bound));
  // An upper bracket: follow the tangent (it lies below T, so it overshoots), or grow the step
  // while T is flat.
  double x = x0;
  if (p.slope > 0) {
    x = x0 + (bound - p.T) / p.slope;
  } else {
    double dx = std::max(1.0, x0);
    for (;;) {
      x = x0 + dx;
      Point q = eval(e, sweep, x);
      if (q.T > bound) break;
      if (q.slope > 0) {
        x = x + (bound - q.T) / q.slope;
        break;
      }
      if (dx > 1e18) return std::nullopt;  // T does not depend on x at all
      dx *= 16;
    }
  }
  // Newton from above: the tangent at x (right-derivative, still below T to the left) hits the
  // bound at or right of the root; on the root's segment the step is exact.
  for (int i = 0; i < 200; ++i) {
    Point q = eval(e, sweep, x);
    if (q.T <= bound || close(q.T, bound)) return x;
    if (q.slope <= 0) break;
    double nx = x - (q.T - bound) / q.slope;
    if (!(nx < x)) return x;
    x = std::max(nx, x0);
  }
  return x;
}

double curve_value(const Curve& c, double x) {
  for (const Segment& s : c.segments)
    if (x <= s.x_end || &s == &c.segments.back()) return s.T_begin + s.slope * (x - s.x_begin);
  return 0;
}

}  // namespace llamp::analyzer
