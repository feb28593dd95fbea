#include "stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "llamp/error.hpp"

namespace llamp::loggp {

double Summary::relative_iqr() const { return median == 0 ? 0.0 : (p75 - p25) / std::abs(median); }

double sorted_quantile(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw Error("quantile of an empty sample set");
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

Summary summarize(std::vector<double> samples) {
  if (samples.empty()) throw Error("cannot summarise an empty sample set");
  std::sort(samples.begin(), samples.end());
  Summary s;
  s.count = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  s.median = sorted_quantile(samples, 0.5);
  s.p25 = sorted_quantile(samples, 0.25);
  s.p75 = sorted_quantile(samples, 0.75);
  return s;
}

LineFit fit_line(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size()) throw Error(fmt::format("line fit: {} x values but {} y values", x.size(), y.size()));
  const auto n = static_cast<double>(x.size());
  double mean_x = 0, mean_y = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mean_x += x[i];
    mean_y += y[i];
  }
  if (x.size() < 2) throw Error("line fit needs at least two points");
  mean_x /= n;
  mean_y /= n;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mean_x) * (x[i] - mean_x);
    sxy += (x[i] - mean_x) * (y[i] - mean_y);
    syy += (y[i] - mean_y) * (y[i] - mean_y);
  }
  if (sxx == 0) throw Error("line fit needs at least two distinct x values");
  LineFit fit;
  fit.points = x.size();
  fit.slope = sxy / sxx;
  fit.intercept = mean_y - fit.slope * mean_x;
  double residual = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = y[i] - (fit.intercept + fit.slope * x[i]);
    residual += e * e;
  }
  fit.r_squared = syy == 0 ? (residual == 0 ? 1.0 : 0.0) : 1.0 - residual / syy;
  return fit;
}

}  // namespace llamp::loggp
