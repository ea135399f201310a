#ifndef FABRICCTL_CONTROLLER_VERDICT_ROBUST_STATS_H_
#define FABRICCTL_CONTROLLER_VERDICT_ROBUST_STATS_H_

// The statistics every verdict rests on: medians and median absolute deviations (robust: a
// fault, however large, moves them by its share of the figures, not its size), and the constants
// they need, each named once here with its meaning.
#include <cstddef>
#include <utility>
#include <vector>

namespace fabricctl::controller {

// The MAD of normally distributed values times this is their standard deviation (1 / the normal
// quantile of 0.75): a scaled MAD reads as a standard deviation that outliers do not inflate.
inline constexpr double kMadScale = 1.4826;

// A median of k values varies by this times their standard deviation over sqrt(k), for large k
// (sqrt(pi / 2): the median is less efficient than the mean). What a node's median figure over
// its k peers varies by, healthy.
inline constexpr double kMedianError = 1.2533;

// The chance a healthy sweep may raise a figure-based finding by chance alone: a z bar over
// many figures is the normal quantile of this share divided by their number (Bonferroni), so
// that one sweep in a hundred, not one figure in a hundred, lands beyond it.
inline constexpr double kChanceLevel = 0.01;

// The least spread a set of figures is taken to have, on a log scale: 1 %, a measurement's own
// noise, so that a few identical figures do not make any difference significant.
inline constexpr double kMinLogSpread = 0.01;

// A figure taken with at least this share of a full round's probes moving data beside it was
// taken under full load (a round missing a pair or two is still full); below it, under a
// lighter load than the yardstick's (the analysis's load bar, the re-tests' companions).
inline constexpr double kFullLoadShare = 0.8;

// The median (the mean of the two middles of an even count); NaN when empty.
double Median(std::vector<double> values);

// kMadScale x the median absolute deviation of `values` around `center`.
double ScaledMad(const std::vector<double>& values, double center);

// ScaledMad of the values on the good side of `center` only (at or above it where higher is
// better, at or below it otherwise; 0 when there are none): the healthy figures' own noise,
// which faults (they only make figures worse) leave alone, so that faults that are a sizeable
// share of the figures cannot widen the yardstick they are judged by.
double GoodSideSpread(const std::vector<double>& values, double center, bool higher_is_better);

// The middle of `values`, reordering them: the lower or the upper of an even count's two
// middles. NaN when empty.
float MiddleOf(std::vector<float>& values, bool upper);

// The median of the sorted values [begin, end) and kMadScale x their MAD, reusing `scratch`: the
// allocation-free form for a loop over millions of pair figures (the upper middle deviation;
// at such sizes the two middles are one figure).
std::pair<double, double> SortedMedianAndMad(std::vector<float>::const_iterator begin,
                                             std::vector<float>::const_iterator end,
                                             std::vector<float>& scratch);

// The z above which a standard normal variable lies with probability q (0 < q < 0.5).
double NormalQuantileAbove(double q);

// The z bar for one of `figures` figures judged at once: max_robust_z, or more where there are
// so many figures that a healthy one gets that far by chance (NormalQuantileAbove of
// kChanceLevel / figures).
double ChanceBar(double max_robust_z, size_t figures);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_VERDICT_ROBUST_STATS_H_
