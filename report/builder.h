#ifndef FABRICCTL_REPORT_BUILDER_H_
#define FABRICCTL_REPORT_BUILDER_H_

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
// any of it. (The drain breaker is the controller's: controller/verdict/breaker.h.)
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
  // The summary from what was added; `node_default` names the subject of drain findings that
  // name no node (a `check` report's own node). `sweep` is set on the report when given.
  v1::Report Finish(absl::Time generated, absl::Duration elapsed,
                    const std::string& node_default = "", const v1::SweepInfo* sweep = nullptr);

 private:
  v1::Report report_;
};

}  // namespace fabricctl::report

#endif  // FABRICCTL_REPORT_BUILDER_H_
