#ifndef FABRICCTL_REPORT_GROUP_MATRIX_H_
#define FABRICCTL_REPORT_GROUP_MATRIX_H_

// The health map by topology group (leaf x leaf), for the renderers. Private to //report:render.

#include <optional>
#include <string>
#include <vector>

#include "proto/report.pb.h"

namespace fabricctl::report::internal {

// The pairs of a sweep grouped by the nodes' group at the topology's first level
// (HealthMap.levels[0], the node's label of that key): per ordered pair of groups (rows send,
// columns receive), the median directed bandwidth and how many of its pairs are bad (warning
// or critical).
struct GroupMatrix {
  std::string level;                             // "leaf"
  std::vector<std::string> groups;               // sorted; nodes without the label are left out
  std::vector<std::vector<double>> median_gbps;  // NaN where no pair was measured
  std::vector<std::vector<int>> pairs, bad;
  std::vector<std::vector<std::string>> members;  // each group's nodes, in the report's order
};

// nullopt when the report names no level or its nodes fall in fewer than two groups. With
// rails, the pairs of `rail` only, each node in its rail's own group (`<level>@<rail>`) where
// it has one.
std::optional<GroupMatrix> GroupMatrixOf(const v1::Report& report, const std::string& rail = "");

}  // namespace fabricctl::report::internal

#endif  // FABRICCTL_REPORT_GROUP_MATRIX_H_
