#include "controller/verdict/robust_stats.h"

#include <algorithm>
#include <cmath>

namespace fabricctl::controller {

double Median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

double ScaledMad(const std::vector<double>& values, double center) {
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::abs(v - center));
  return kMadScale * Median(std::move(deviations));
}

double GoodSideSpread(const std::vector<double>& values, double center, bool higher_is_better) {
  std::vector<double> good;
  for (double x : values) {
    if (higher_is_better ? x >= center : x <= center) good.push_back(x);
  }
  return good.empty() ? 0 : ScaledMad(good, center);
}

float MiddleOf(std::vector<float>& values, bool upper) {
  if (values.empty()) return std::nanf("");
  const size_t mid = upper ? values.size() / 2 : (values.size() - 1) / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  return values[mid];
}

std::pair<double, double> SortedMedianAndMad(std::vector<float>::const_iterator begin,
                                             std::vector<float>::const_iterator end,
                                             std::vector<float>& scratch) {
  const size_t n = static_cast<size_t>(end - begin);
  const double median = n % 2 ? begin[n / 2] : (begin[n / 2 - 1] + begin[n / 2]) / 2.0;
  scratch.clear();
  for (auto it = begin; it != end; ++it)
    scratch.push_back(static_cast<float>(std::abs(*it - median)));
  std::nth_element(scratch.begin(), scratch.begin() + n / 2, scratch.end());
  return {median, kMadScale * scratch[n / 2]};
}

double NormalQuantileAbove(double q) {
  // Bisection on the upper tail 0.5 erfc(z / sqrt 2), decreasing in z.
  double lo = 0, hi = 40;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > q ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

double ChanceBar(double max_robust_z, size_t figures) {
  return std::max(
      max_robust_z,
      NormalQuantileAbove(kChanceLevel / static_cast<double>(std::max<size_t>(1, figures))));
}

}  // namespace fabricctl::controller
