#include "llamp/analyzer/curve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

namespace llamp::analyzer {
namespace {

Point eval(Engine& e, Sweep sweep, double x) { return sweep == Sweep::L ? e.at_L(x) : e.at_G(x); }

// Values agree when they differ by rounding only (sums of up to ~10^8 terms in ns).
bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

// A breakpoint with T there and the slope of the segment to its right.
struct Knot {
  double x, T, slope;
};

// One open interval of the bisection: T and a subgradient (the engine's right-derivative) at
// both ends.
struct Open {
  Point a, b;
  int depth = 0;
};

// What examining an interval gives: the breakpoint it holds, or the point to split it at.
struct Step {
  std::optional<Knot> knot;
  std::optional<Point> split;
};

// Where the supporting lines at a and b meet (the point to evaluate), or the breakpoint found
// without evaluating, or neither (T is linear on the interval).
struct Plan {
  std::optional<Knot> knot;
  std::optional<double> c;
};

// The supporting lines at a and b meet at c. If T meets them there, c is the interval's only
// breakpoint; found breakpoints carry T there and the right line's slope, so the curve needs no
// further evaluations. Otherwise the interval splits at c: m's right-derivative is a valid
// supporting slope for both halves, so both are examined exactly.
Plan plan(const Open& w) {
  const Point &a = w.a, &b = w.b;
  if (b.x - a.x <= 1e-9 * std::max(1.0, std::fabs(b.x)) || close(a.slope, b.slope)) return {};
  const double c = (b.T - a.T + a.slope * a.x - b.slope * b.x) / (a.slope - b.slope);
  // The slopes differ, so T has a kink in [a.x, b.x]; lines meeting at an end mean T is linear in
  // between and the kink is that end. It happens when an earlier evaluation landed exactly on a
  // kink: T's terms tie there up to rounding, and the engine may report the slope left of it
  // (a 60-stage ladder lost 5 of its 60 breakpoints this way before this was checked).
  if (!(c > a.x)) return {Knot{a.x, a.T, b.slope}, std::nullopt};
  if (!(c < b.x)) return {Knot{b.x, b.T, b.slope}, std::nullopt};
  return {std::nullopt, c};
}

// T at the lines' meeting point m on the tangent from a: m is the only breakpoint.
bool meets_tangent(const Open& w, const Point& m) {
  return close(m.T, w.a.T + w.a.slope * (m.x - w.a.x)) || w.depth > 200;
}

Step examine(Engine& e, Sweep sweep, const Open& w) {
  const Plan p = plan(w);
  if (!p.c) return {p.knot, std::nullopt};
  const Point m = eval(e, sweep, *p.c);
  if (meets_tangent(w, m)) return {Knot{m.x, m.T, w.b.slope}, std::nullopt};
  return {std::nullopt, m};
}

// Finds the breakpoints in (a.x, b.x) (and a kink at b.x, which assemble() drops at the range's
// end).
void bisect_tangents(Engine& e, Sweep sweep, const Open& w, std::vector<Knot>& out) {
  const Step s = examine(e, sweep, w);
  if (s.knot) out.push_back(*s.knot);
  if (!s.split) return;
  bisect_tangents(e, sweep, Open{w.a, *s.split, w.depth + 1}, out);
  bisect_tangents(e, sweep, Open{*s.split, w.b, w.depth + 1}, out);
}

Curve assemble(const Point& lo, const Point& hi, std::vector<Knot> knots, uint64_t evaluations) {
  // A kink found twice (from both neighbouring intervals) keeps its larger slope: the slope right
  // of it.
  std::sort(knots.begin(), knots.end(),
            [](const Knot& a, const Knot& b) { return a.x != b.x ? a.x < b.x : a.slope > b.slope; });
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

// bisect_tangents on `threads` engines at once: the open intervals are a shared stack, each thread
// takes one, evaluates at its tangents' intersection with its own twin of `e` and pushes the two
// halves back. The same intervals are evaluated as in the serial recursion, so the breakpoints and
// the evaluation count are the same; only their order differs, and assemble() sorts.
uint64_t bisect_tangents_parallel(Engine& e, Sweep sweep, const Point& a, const Point& b, std::vector<Knot>& knots,
                                  unsigned threads) {
  // The first interval alone, so a curve without breakpoints (or with one) allocates no twins.
  const Step first = examine(e, sweep, Open{a, b});
  if (first.knot) knots.push_back(*first.knot);
  if (!first.split) return 0;
  std::vector<Open> open{{a, *first.split, 1}, {*first.split, b, 1}};
  std::mutex mutex;
  std::condition_variable changed;
  unsigned busy = 0;
  std::exception_ptr failure;
  std::vector<Engine> twins;
  twins.reserve(threads - 1);
  for (unsigned i = 1; i < threads; ++i) twins.push_back(e.twin());
  auto work = [&](Engine& engine) {
    std::unique_lock lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return !open.empty() || busy == 0 || failure; });
      if (open.empty() || failure) return;  // nothing open and nobody who could open more
      const Open w = open.back();
      open.pop_back();
      ++busy;
      lock.unlock();
      Step s;
      try {
        s = examine(engine, sweep, w);
      } catch (...) {
        lock.lock();
        if (!failure) failure = std::current_exception();
        --busy;
        changed.notify_all();
        return;
      }
      lock.lock();
      if (s.knot) knots.push_back(*s.knot);
      if (s.split) {
        open.push_back(Open{w.a, *s.split, w.depth + 1});
        open.push_back(Open{*s.split, w.b, w.depth + 1});
      }
      --busy;
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (Engine& t : twins) pool.emplace_back(work, std::ref(t));
  work(e);
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  uint64_t evaluations = 0;
  for (const Engine& t : twins) evaluations += t.evaluations();
  return evaluations;
}

// Evaluates xs with engines[0..n) at once, Engine::kLanes points per pass.
std::vector<Point> evaluate_all(std::vector<Engine*>& engines, Sweep sweep, const std::vector<double>& xs) {
  constexpr size_t K = Engine::kLanes;
  std::vector<Point> out(xs.size());
  const size_t passes = (xs.size() + K - 1) / K;
  auto work = [&](size_t engine) {
    for (size_t p = engine; p < passes; p += engines.size()) {
      const size_t first = p * K, n = std::min(K, xs.size() - first);
      engines[engine]->evaluate_lanes(std::span(xs.data() + first, n), sweep, std::span(out.data() + first, n));
    }
  };
  const size_t used = std::min(engines.size(), passes);
  std::vector<std::thread> pool;
  std::exception_ptr failure;
  std::mutex mutex;
  for (size_t i = 1; i < used; ++i)
    pool.emplace_back([&, i] {
      try {
        work(i);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
      }
    });
  try {
    work(0);
  } catch (...) {
    std::lock_guard lock(mutex);
    if (!failure) failure = std::current_exception();
  }
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  return out;
}

// The tangent bisection breadth first, every open interval's meeting point of a round in lane
// passes on `threads` engines. Lanes a round leaves idle (early rounds have few open intervals)
// evaluate extra points evenly spread over the widest intervals: each piece between evaluated
// points is then examined exactly like the whole interval, so the breakpoints are the same and
// the idle lanes only shorten the bisection.
Curve exact_curve_lanes(Engine& e, Sweep sweep, double x_min, double x_max, unsigned threads) {
  constexpr size_t K = Engine::kLanes;
  const uint64_t before = e.evaluations();
  std::vector<Engine> twins;
  std::vector<Engine*> engines{&e};
  // The ends one at a time: a linear curve (no breakpoint) then costs what it did without lanes
  // and allocates no lane state.
  const Point ab[2] = {eval(e, sweep, x_min), eval(e, sweep, x_max)};
  std::vector<Open> open{Open{ab[0], ab[1]}};
  std::vector<Knot> knots;
  while (!open.empty()) {
    struct Job {
      Open w;
      double c;
      unsigned extra = 0;
    };
    std::vector<Job> jobs;
    for (const Open& w : open) {
      const Plan p = plan(w);
      if (p.knot) knots.push_back(*p.knot);
      if (p.c) jobs.push_back(Job{w, *p.c});
    }
    if (jobs.empty()) break;
    // All engines' lanes for as many passes each as the round needs: the lanes left over take
    // extra points, a piece of the widest interval at a time.
    const size_t slots_per_wave = K * threads;
    const size_t slots = (jobs.size() + slots_per_wave - 1) / slots_per_wave * slots_per_wave;
    for (size_t spare = slots - jobs.size(); spare > 0; --spare) {
      Job* widest = &jobs.front();
      for (Job& j : jobs)
        if ((j.w.b.x - j.w.a.x) / (j.extra + 2) > (widest->w.b.x - widest->w.a.x) / (widest->extra + 2)) widest = &j;
      ++widest->extra;
    }
    if (engines.size() < threads) {
      twins.reserve(threads - 1);
      while (engines.size() < threads) engines.push_back(&twins.emplace_back(e.twin()));
    }
    std::vector<double> xs;
    for (const Job& j : jobs) {
      xs.push_back(j.c);
      for (unsigned i = 1; i <= j.extra; ++i) xs.push_back(j.w.a.x + (j.w.b.x - j.w.a.x) * i / (j.extra + 1));
    }
    const std::vector<Point> at = evaluate_all(engines, sweep, xs);
    std::vector<Open> next;
    size_t i = 0;
    for (const Job& j : jobs) {
      const Point& m = at[i];
      if (meets_tangent(j.w, m)) {
        knots.push_back(Knot{m.x, m.T, j.w.b.slope});
        i += 1 + j.extra;
        continue;
      }
      std::vector<Point> cut(at.begin() + static_cast<std::ptrdiff_t>(i),
                             at.begin() + static_cast<std::ptrdiff_t>(i + 1 + j.extra));
      i += 1 + j.extra;
      std::sort(cut.begin(), cut.end(), [](const Point& p, const Point& q) { return p.x < q.x; });
      Point left = j.w.a;
      for (const Point& p : cut) {
        if (p.x > left.x && p.x < j.w.b.x) {
          next.push_back(Open{left, p, j.w.depth + 1});
          left = p;
        }
      }
      next.push_back(Open{left, j.w.b, j.w.depth + 1});
    }
    open = std::move(next);
  }
  uint64_t evaluations = e.evaluations() - before;
  for (const Engine& t : twins) evaluations += t.evaluations();
  return assemble(ab[0], ab[1], std::move(knots), evaluations);
}

}  // namespace

Curve exact_curve(Engine& e, Sweep sweep, double x_min, double x_max, unsigned threads, unsigned lanes) {
  if (!(x_min >= 0) || !(x_max >= x_min)) throw Error(fmt::format("invalid range [{}, {}]", x_min, x_max));
  if (lanes > 1) return exact_curve_lanes(e, sweep, x_min, x_max, std::max(1u, threads));
  const uint64_t before = e.evaluations();
  Point a = eval(e, sweep, x_min), b = eval(e, sweep, x_max);
  std::vector<Knot> knots;
  uint64_t twin_evaluations = 0;
  if (threads > 1)
    twin_evaluations = bisect_tangents_parallel(e, sweep, a, b, knots, threads);
  else
    bisect_tangents(e, sweep, Open{a, b}, knots);
  return assemble(a, b, std::move(knots), e.evaluations() - before + twin_evaluations);
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
    // A slope change exactly at grid point i + 1 is found too (the lines meet at that end).
    if (!close(grid[i].slope, grid[i + 1].slope)) bisect_tangents(e, sweep, Open{grid[i], grid[i + 1]}, knots);
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

std::optional<double> x_reaching(const Curve& c, double bound) {
  if (c.segments.empty() || c.segments.front().T_begin > bound) return std::nullopt;
  for (const Segment& s : c.segments) {
    if (s.T_end <= bound) continue;
    // T crosses the bound on this segment (T is non-decreasing and continuous).
    return s.slope > 0 ? std::clamp(s.x_begin + (bound - s.T_begin) / s.slope, s.x_begin, s.x_end) : s.x_begin;
  }
  return std::nullopt;
}

double curve_value(const Curve& c, double x) {
  for (const Segment& s : c.segments)
    if (x <= s.x_end || &s == &c.segments.back()) return s.T_begin + s.slope * (x - s.x_begin);
  return 0;
}

}  // namespace llamp::analyzer
