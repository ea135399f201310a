#ifndef FABRICCTL_CONTROLLER_SWEEP_ASSEMBLE_H_
#define FABRICCTL_CONTROLLER_SWEEP_ASSEMBLE_H_

#include <vector>

#include "absl/time/time.h"
#include "controller/analysis.h"
#include "controller/sweep/allreduce.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/rounds.h"
#include "proto/config.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller::sweep {

// Everything a sweep's report is made of.
struct SweepOutcome {
  const Fleet* fleet = nullptr;
  const AnalysisInput* input = nullptr;
  const AnalysisResult* analysis = nullptr;     // its findings come first
  const std::vector<const PairRun*>* pairs = nullptr;  // in the analysis input's pair order
  const std::vector<RingRun>* rings = nullptr;
  std::vector<v1::Finding> more_findings;       // the all-reduce's and the regressions
};

// The report of a sweep: the health map (nodes with their status, raised by their audits'
// findings; pairs with their figures and every result), the findings, and the summary that
// report::ReportBuilder derives from them.
v1::Report AssembleReport(const SweepOutcome& outcome, const v1::Config& config,
                          const v1::SweepInfo& info, absl::Time started, absl::Time finished);

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_ASSEMBLE_H_
