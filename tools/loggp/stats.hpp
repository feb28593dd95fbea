#pragma once
// Robust summaries of timing samples and the least-squares line used for G.
// Timings on shared machines are skewed by preemption, so every figure is a
// median with its interquartile range, never a mean.
#include <cstddef>
#include <span>
#include <vector>

namespace llamp::loggp {

struct Summary {
  double median = 0;
  double p25 = 0;
  double p75 = 0;
  double min = 0;
  double max = 0;
  std::size_t count = 0;
  // (p75 - p25) / |median|: the spread reported next to every median; 0 when the median is 0.
  double relative_iqr() const;
};

// Summarises a non-empty sample set (throws llamp::Error when empty).
Summary summarize(std::vector<double> samples);

// Linearly interpolated quantile q in [0, 1] of already sorted values.
double sorted_quantile(std::span<const double> sorted, double q);

struct LineFit {
  double intercept = 0;
  double slope = 0;
  double r_squared = 0;  // 1 for a perfect line; 1 also when y is constant and fitted exactly
  std::size_t points = 0;
};

// Ordinary least squares y = intercept + slope * x. Needs at least two distinct x values.
LineFit fit_line(std::span<const double> x, std::span<const double> y);

}  // namespace llamp::loggp
