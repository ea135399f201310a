// RecordAcceptance: what a client may ask to record, and the verdict the controller records.
#include "controller/acceptances.h"

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/sweep/inventory_check.h"
#include "controller/verdict/acceptance.h"
#include "google/protobuf/util/time_util.h"

namespace fabricctl::controller {
namespace {

using google::protobuf::util::TimeUtil;

// An acceptance's passes: at most as many as `fabricctl accept` runs (--repeat, --soak).
constexpr int kMaxAcceptancePasses = 1000;
constexpr size_t kMaxAcceptanceBytes = 4 << 20;

// Why the passes cannot all be judged, or "" when they can: each sweep held and completed.
std::string Unjudged(const Store& store, const v1::Acceptance& asked, AcceptanceJudge& judge) {
  for (const int64_t id : asked.sweep_ids()) {
    auto report = store.GetReport(id);
    if (!report.ok()) {
      return absl::StrCat("sweep ", id, " is not in history (", report.status().message(),
                          "): a burn-in is judged over every pass; keep more history "
                          "(history.keep, history.keep_sweeps) than it runs");
    }
    if (report->sweep().state() != v1::SWEEP_COMPLETED) {
      return absl::StrCat("sweep ", id, " did not complete (",
                          v1::SweepState_Name(report->sweep().state()), ")");
    }
    judge.Add(*report);
  }
  return "";
}

}  // namespace

absl::Status ValidateAcceptance(const v1::Acceptance& a) {
  if (const size_t bytes = a.ByteSizeLong(); bytes > kMaxAcceptanceBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("acceptance is ", bytes, " bytes serialised; at most ", kMaxAcceptanceBytes));
  }
  if (a.sweep_ids_size() > kMaxAcceptancePasses) {
    return absl::InvalidArgumentError(absl::StrCat("acceptance.sweep_ids has ", a.sweep_ids_size(),
                                                   " entries; at most ", kMaxAcceptancePasses));
  }
  std::set<int64_t> ids;
  for (const int64_t id : a.sweep_ids()) {
    if (id <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("acceptance.sweep_ids: ", id, " is not a sweep id"));
    }
    if (!ids.insert(id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("acceptance.sweep_ids: sweep ", id, " is named twice (one pass each)"));
    }
  }
  if (a.nodes_size() > kMaxListNames || a.reference_nodes_size() > kMaxListNames) {
    return absl::InvalidArgumentError(
        absl::StrCat("acceptance: at most ", kMaxListNames, " nodes and as many references"));
  }
  for (const auto& node : a.nodes()) {
    if (auto s = ValidateNodeName(node.node(), "acceptance.nodes.node"); !s.ok()) return s;
  }
  for (const auto& name : a.reference_nodes()) {
    if (auto s = ValidateNodeName(name, "acceptance.reference_nodes"); !s.ok()) return s;
  }
  // Within what a timestamp may hold, and a duration of at most a year (a soak is at most a
  // week): the store keeps both in microseconds and milliseconds without overflow.
  constexpr int64_t kMaxAcceptanceSeconds = 366 * 86400;
  if (a.started().seconds() < 0 || a.started().seconds() > TimeUtil::kTimestampMaxSeconds ||
      a.duration().seconds() < 0 || a.duration().nanos() < 0 ||
      a.duration().seconds() > kMaxAcceptanceSeconds) {
    return absl::InvalidArgumentError(
        "acceptance: started must be a valid time and duration between 0 and a year");
  }
  return absl::OkStatus();
}

bool Rejected(const v1::Acceptance::NodeVerdict& node) {
  for (const auto& check : node.checks()) {
    if (!check.passed()) return true;
  }
  return false;
}

v1::Acceptance JudgeRecorded(const Store& store, const v1::Acceptance& asked) {
  std::vector<std::string> nodes,
      refs(asked.reference_nodes().begin(), asked.reference_nodes().end());
  for (const auto& node : asked.nodes()) nodes.push_back(node.node());
  AcceptanceJudge judge(nodes, refs);
  std::string incomplete = asked.incomplete();
  if (const std::string why = Unjudged(store, asked, judge); !why.empty())
    incomplete = incomplete.empty() ? why : absl::StrCat(incomplete, "; ", why);
  v1::Acceptance out = judge.Result(incomplete);
  out.set_reference_source(asked.reference_source());
  *out.mutable_sweep_ids() = asked.sweep_ids();
  *out.mutable_started() = asked.started();
  *out.mutable_duration() = asked.duration();
  if (out.ByteSizeLong() > kMaxJudgedBytes) {
    for (auto& node : *out.mutable_nodes()) {
      for (auto& check : *node.mutable_checks()) check.clear_findings();
    }
    out.clear_reference_findings();
    out.clear_other_findings();
    out.clear_shared_findings();
  }
  return out;
}

}  // namespace fabricctl::controller
