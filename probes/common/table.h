#ifndef FABRICCTL_PROBES_COMMON_TABLE_H_
#define FABRICCTL_PROBES_COMMON_TABLE_H_

#include <string>
#include <utility>
#include <vector>

#include "probes/common/result.h"

namespace fabricctl::probes {

enum class BwUnit { kGbps, kMiBps };

// Tables laid out as perftest prints them (src/perftest_parameters.c RESULT_FMT, REPORT_FMT,
// RESULT_FMT_LAT, REPORT_FMT_LAT), so that a person or a script used to ib_write_bw reads ours
// the same way. One difference: a peak that was not measured prints "-" where perftest prints
// 0.00, because it is not a measurement.
// `info` lines go under the title as perftest's " Device         : mlx5_0" block.
std::string FormatBwTable(const std::string& title, const InfoLines& info,
                          const std::vector<BwPoint>& points, BwUnit unit);
std::string FormatLatTable(const std::string& title, const InfoLines& info,
                           const std::vector<LatPoint>& points);

// The last size's flows, one a line, as iperf3 -P lists its streams: each flow's 5-tuple and
// figure in Gb/s, and its path where traced ("leaf-1 spine-2 leaf-2", a router without a name
// by its address, one that did not answer as "*").
std::string FormatFlows(const std::vector<Flow>& flows);

// perftest's 87-dash rule.
extern const char kResultLine[];

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COMMON_TABLE_H_
