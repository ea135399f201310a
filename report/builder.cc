#include "report/builder.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/time_util.h"
#include "report/findings.h"

namespace fabricctl::report {
namespace {

using google::protobuf::util::TimeUtil;

int Rank(v1::HealthStatus s) {
  switch (s) {
    case v1::HEALTH_OK:
      return 1;
    case v1::HEALTH_UNKNOWN:
      return 2;
    case v1::HEALTH_WARNING:
      return 3;
    case v1::HEALTH_CRITICAL:
      return 4;
    default:
      return 0;
  }
}

}  // namespace

v1::HealthStatus HealthFor(v1::Severity severity) {
  switch (severity) {
    case v1::SEVERITY_CRITICAL:
      return v1::HEALTH_CRITICAL;
    case v1::SEVERITY_WARNING:
      return v1::HEALTH_WARNING;
    default:
      return v1::HEALTH_OK;
  }
}

v1::HealthStatus Worse(v1::HealthStatus a, v1::HealthStatus b) {
  return Rank(a) >= Rank(b) ? a : b;
}

v1::Severity WorstSeverity(const std::vector<v1::Finding>& findings) {
  v1::Severity worst = v1::SEVERITY_OK;
  for (const auto& f : findings) worst = std::max(worst, f.severity());
  return worst;
}

ExitCode ExitCodeFor(const v1::Report& report) {
  switch (report.summary().worst_severity()) {
    case v1::SEVERITY_CRITICAL:
      return kExitCritical;
    case v1::SEVERITY_WARNING:
      return kExitWarning;
    default:
      return kExitOk;
  }
}

ReportBuilder::ReportBuilder(std::string source, std::string generator) {
  report_.set_schema("fabricctl.report/v1");
  report_.set_generator(std::move(generator));
  report_.set_source(std::move(source));
}

void ReportBuilder::SetConfig(const v1::Config& config) {
  *report_.mutable_expect() = config.expect();
  *report_.mutable_thresholds() = config.thresholds();
}

v1::NodeHealth* ReportBuilder::AddNode(const std::string& name, v1::HealthStatus status) {
  v1::NodeHealth* node = report_.mutable_health()->add_nodes();
  node->set_node(name);
  node->set_status(status);
  return node;
}

void ReportBuilder::AddAudits(v1::NodeHealth* node, std::vector<v1::AuditResult> audits) {
  for (auto& audit : audits) {
    for (const auto& f : audit.findings()) {
      node->set_status(Worse(node->status(), HealthFor(f.severity())));
      AddFinding(f);
    }
    // An audit that could not run checked nothing: never a silent pass.
    if (audit.outcome() == v1::AUDIT_FAILED) {
      v1::Finding f = Make(
          kind::kAuditFailed, node->node(),
          absl::StrCat(audit.audit(), ": ", audit.reason().empty() ? "failed" : audit.reason()));
      (*f.mutable_evidence())["audit"] = audit.audit();
      node->set_status(Worse(node->status(), HealthFor(f.severity())));
      AddFinding(std::move(f));
    }
    *node->add_audits() = std::move(audit);
  }
}

v1::PairHealth* ReportBuilder::AddPair() { return report_.mutable_health()->add_pairs(); }

void ReportBuilder::AddFinding(v1::Finding finding) {
  *report_.add_findings() = std::move(finding);
}

void ReportBuilder::AddFindings(std::vector<v1::Finding> findings) {
  for (auto& f : findings) AddFinding(std::move(f));
}

v1::Report ReportBuilder::Finish(absl::Time generated, absl::Duration elapsed,
                                 const std::string& node_default, const v1::SweepInfo* sweep) {
  v1::Report report = report_;
  *report.mutable_generated() = TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(generated));
  v1::Summary* summary = report.mutable_summary();
  summary->Clear();
  for (const auto& node : report.health().nodes()) {
    switch (node.status()) {
      case v1::HEALTH_OK:
        summary->set_nodes_ok(summary->nodes_ok() + 1);
        break;
      case v1::HEALTH_WARNING:
        summary->set_nodes_warning(summary->nodes_warning() + 1);
        break;
      case v1::HEALTH_CRITICAL:
        summary->set_nodes_critical(summary->nodes_critical() + 1);
        break;
      default:
        summary->set_nodes_unknown(summary->nodes_unknown() + 1);
        break;
    }
  }
  for (const auto& pair : report.health().pairs()) {
    if (pair.status() == v1::HEALTH_WARNING || pair.status() == v1::HEALTH_CRITICAL) {
      summary->set_pairs_failed(summary->pairs_failed() + 1);
    }
  }
  // The drain list names only nodes of this report (its health map's, or the checked node):
  // whatever a finding says, nothing outside the sweep is ever drained by it.
  std::set<std::string> members;
  for (const auto& node : report.health().nodes()) members.insert(node.node());
  if (!node_default.empty()) members.insert(node_default);
  std::set<std::string> drain;
  v1::Severity worst = v1::SEVERITY_OK;
  for (const auto& f : report.findings()) {
    worst = std::max(worst, f.severity());
    const std::string& node = f.node().empty() ? node_default : f.node();
    if (f.action() == v1::ACTION_DRAIN && members.count(node) > 0) drain.insert(node);
  }
  summary->set_nodes(static_cast<uint32_t>(report.health().nodes_size()));
  summary->set_pairs(static_cast<uint32_t>(report.health().pairs_size()));
  for (const auto& d : drain) summary->add_drain(d);
  summary->set_worst_severity(worst);
  *summary->mutable_elapsed() =
      TimeUtil::MicrosecondsToDuration(absl::ToInt64Microseconds(elapsed));
  if (sweep != nullptr) {
    v1::SweepInfo* info = report.mutable_sweep();
    *info = *sweep;
    info->set_worst_severity(worst);
    info->set_findings_count(static_cast<uint32_t>(report.findings_size()));
  }
  return report;
}

}  // namespace fabricctl::report
