#ifndef FABRICCTL_REPORT_BUILDER_H_
#define FABRICCTL_REPORT_BUILDER_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "base/exit_code.h"
#include "proto/config.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::report {

// The health status that a finding of `severity` gives what it names.
v1::HealthStatus HealthFor(v1::Severity severity);
// The worse of two statuses (UNKNOWN is worse than OK, better than WARNING).
v1::HealthStatus Worse(v1::HealthStatus a, v1::HealthStatus b);
// Worst severity of a list of findings (SEVERITY_OK when empty).
v1::Severity WorstSeverity(const std::vector<v1::Finding>& findings);

// kExitOk, kExitWarning or kExitCritical from the summary's worst severity (the README's "Exit
// codes").
ExitCode ExitCodeFor(const v1::Report& report);

// Assembles a Report the same way for every source (a sweep, `fabricctl check`): nodes with
// their status, pairs, findings, audits; Finish() derives the summary from them (node counts
// by status, flagged pairs, the drain list, the worst severity) so that no caller computes
// any of it.
// What the verdicts within breaker.window drained and judged (ReportBuilder::SetDrainBreaker).
struct EarlierDrains {
  std::set<std::string> drained, judged;
  size_t verdicts = 0;
};

class ReportBuilder {
 public:
  // `source` is "sweep" or "check"; `generator` names the program and its version.
  ReportBuilder(std::string source, std::string generator);

  // The expectations and thresholds the verdicts were made against.
  void SetConfig(const v1::Config& config);

  // A node with its status from the analysis. Returns it, to add figures and labels.
  v1::NodeHealth* AddNode(const std::string& name, v1::HealthStatus status);
  // A node's audits: each is kept, its findings added and the node's status raised by them.
  void AddAudits(v1::NodeHealth* node, std::vector<v1::AuditResult> audits);
  // A measured pair; a WARNING or CRITICAL pair counts as flagged.
  v1::PairHealth* AddPair();
  void AddFinding(v1::Finding finding);
  void AddFindings(std::vector<v1::Finding> findings);
  v1::HealthMap* mutable_health() { return report_.mutable_health(); }
  // Finish() holds every drain when they would be more than the breaker allows (HoldsDrains)
  // of the report's nodes and `vouched` more judged without a measurement; a breaker without
  // max_share (a configuration without defaults) is none.
  // `earlier`: what the verdicts within breaker.window drained and judged, counted with this
  // one's (a wave of small verdicts weighed as one); only this verdict's drains are held.
  void SetDrainBreaker(const v1::DrainBreaker& breaker, uint32_t vouched = 0,
                       EarlierDrains earlier = {}) {
    if (breaker.has_max_share()) breaker_ = breaker;
    vouched_ = vouched;
    earlier_ = std::move(earlier);
  }

  // The summary from what was added; `node_default` names the subject of drain findings that
  // name no node (a `check` report's own node). `sweep` is set on the report when given.
  v1::Report Finish(absl::Time generated, absl::Duration elapsed,
                    const std::string& node_default = "", const v1::SweepInfo* sweep = nullptr);

 private:
  v1::Report report_;
  std::optional<v1::DrainBreaker> breaker_;
  uint32_t vouched_ = 0;
  EarlierDrains earlier_;
};

// Whether `drain` nodes of `judged` are more than the breaker allows: more than its min_nodes
// and more than its max_share of them.
bool HoldsDrains(const v1::DrainBreaker& breaker, size_t drain, size_t judged);

}  // namespace fabricctl::report

#endif  // FABRICCTL_REPORT_BUILDER_H_
