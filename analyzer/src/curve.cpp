#include "llamp/analyzer/curve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace llamp::analyzer {
namespace {

Point eval(Engine& e, Sweep sweep, double x) {
  return sweep == Sweep::L ? e.at_L(x) : e.at_G(x);
}

// Values agree when they differ by rounding only (sums of up to ~10^8 terms in ns).
bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

// Finds the breakpoints strictly inside (a.x, b.x), given T and a subgradient at both ends.
void bisect_tangents(Engine& e, Sweep sweep, const Point& a, const Point& b, std::vector<double>& out, int depth) {
  if (b.x - a.x <= 1e-9 * std::max(1.0, std::fabs(b.x)) || close(a.slope, b.slope)) return;
  // Line through a with slope a.slope meets the line through b with slope b.slope at c.
  double c = (b.T - a.T + a.slope * a.x - b.slope * b.x) / (a.slope - b.slope);
  if (!(c > a.x && c < b.x)) {
    // Rounding put the intersection at an end: the kink is at that end within rounding.
    return;
  }
  Point m = eval(e, sweep, c);
  double line = a.T + a.slope * (c - a.x);
  if (close(m.T, line) || depth > 200) {
    out.push_back(c);
    return;
  }
  bisect_tangents(e, sweep, a, m, out, depth + 1);
  // m's right-derivative is a valid supporting slope for the right half, and (being ≥ the left
  // derivative) still a supporting line for the left half, so both recursions are exact.
  bisect_tangents(e, sweep, m, b, out, depth + 1);
}

Curve curve_from_breakpoints(Engine& e, Sweep sweep, double x_min, double x_max, std::vector<double> bps,
                             uint64_t evals_before) {
  std::sort(bps.begin(), bps.end());
  bps.erase(std::unique(bps.begin(), bps.end(), [](double a, double b) { return close(a, b); }), bps.end());
  Curve c;
  c.breakpoints = bps;
  std::vector<double> xs{x_min};
  for (double x : bps)
    if (x > x_min && x < x_max) xs.push_back(x);
  xs.push_back(x_max);
  // T at each knot and the slope of the segment to its right.
  std::vector<Point> pts;
  for (double x : xs) pts.push_back(eval(e, sweep, x));
  for (size_t i = 0; i + 1 < xs.size(); ++i) {
    // The engine's right-derivative at the knot is the segment's exact slope (an integer count of
    // latency terms, or of bytes).
    c.segments.push_back(Segment{xs[i], xs[i + 1], pts[i].T, pts[i + 1].T, pts[i].slope});
  }
  if (xs.size() == 1 || x_min == x_max) c.segments.push_back(Segment{x_min, x_max, pts[0].T, pts[0].T, pts[0].slope});
  c.evaluations = e.evaluations() - evals_before;
  return c;
}

}  // namespace

Curve exact_curve(Engine& e, Sweep sweep, double x_min, double x_max) {
  if (!(x_min >= 0) || !(x_max >= x_min)) throw Error(fmt::format("invalid range [{}, {}]", x_min, x_max));
  const uint64_t before = e.evaluations();
  Point a = eval(e, sweep, x_min), b = eval(e, sweep, x_max);
  std::vector<double> bps;
  bisect_tangents(e, sweep, a, b, bps, 0);
  return curve_from_breakpoints(e, sweep, x_min, x_max, std::move(bps), before);
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
  std::vector<double> bps;
  for (size_t i = 0; i + 1 < grid.size(); ++i)
    if (!close(grid[i].slope, grid[i + 1].slope)) bisect_tangents(e, sweep, grid[i], grid[i + 1], bps, 0);
  return curve_from_breakpoints(e, sweep, x_min, x_max, std::move(bps), before);
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
