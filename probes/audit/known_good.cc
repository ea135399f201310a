// known_good: the node's known-good state (the last sweep that passed it, and whether anything
// has ended that since), as the controller last told the node's agent. The agent notes it in
// its link watch verdict; `fabricctl check --audits known_good` reads it from there, and the
// Slurm health check gives back a drained node only once a sweep has passed it again.
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "google/protobuf/util/time_util.h"
#include "probes/audit/audit.h"
#include "probes/audit/common.h"
#include "proto/controller.pb.h"

namespace fabricctl::probes {
namespace {

// The verdict's keys: "known_good" is "yes", "lost" or "never" (no pass on record); the rest
// only with a record.
constexpr char kState[] = "known_good";
constexpr char kSweep[] = "known_good_sweep";
constexpr char kPassed[] = "known_good_passed";
constexpr char kLost[] = "known_good_lost";
constexpr char kLostWhy[] = "known_good_lost_why";

std::string Rfc3339(const google::protobuf::Timestamp& t) {
  return absl::FormatTime(
      "%Y-%m-%dT%H:%M:%SZ",
      absl::FromUnixSeconds(google::protobuf::util::TimeUtil::TimestampToSeconds(t)),
      absl::UTCTimeZone());
}

std::string Find(const v1::AuditResult& r, const char* key) {
  auto it = r.observed().find(key);
  return it == r.observed().end() ? "" : it->second;
}

}  // namespace

void NoteKnownGood(const v1::KnownGood* known_good, v1::AuditResult* watch) {
  auto& seen = *watch->mutable_observed();
  if (known_good == nullptr) {
    seen[kState] = "never";
    return;
  }
  seen[kState] = known_good->has_lost() ? "lost" : "yes";
  seen[kSweep] = absl::StrCat(known_good->sweep_id());
  seen[kPassed] = Rfc3339(known_good->passed());
  if (known_good->has_lost()) {
    seen[kLost] = Rfc3339(known_good->lost());
    seen[kLostWhy] = known_good->lost_why();
  }
}

v1::AuditResult KnownGoodOf(const v1::AuditResult& watch) {
  constexpr char kName[] = "known_good";
  // The agent notes it only on a verdict that ran, which the link_watch audit holds to its
  // freshness.
  const std::string state = Find(watch, kState);
  if (state.empty()) {
    return audit_internal::Skipped(
        kName, watch.outcome() != v1::AUDIT_RAN
                   ? absl::StrCat("the agent's link watch, which carries it: ", watch.reason())
                   : "the agent has no answer from a controller (not registered, or unreachable)");
  }
  if (state == "never") return audit_internal::Skipped(kName, "no sweep has passed this node");
  int64_t sweep = 0;
  absl::Time passed, lost;
  std::string error;
  if (!absl::SimpleAtoi(Find(watch, kSweep), &sweep) ||
      !absl::ParseTime(absl::RFC3339_full, Find(watch, kPassed), &passed, &error) ||
      (state == "lost" &&
       !absl::ParseTime(absl::RFC3339_full, Find(watch, kLost), &lost, &error))) {
    v1::AuditResult r;
    r.set_audit(kName);
    r.set_outcome(v1::AUDIT_FAILED);
    r.set_reason("the link watch's note of the known-good state does not parse");
    return r;
  }
  v1::AuditResult r;
  r.set_audit(kName);
  r.set_outcome(v1::AUDIT_RAN);
  auto& seen = *r.mutable_observed();
  seen["sweep"] = Find(watch, kSweep);
  seen["passed"] = Find(watch, kPassed);
  const std::string pass = absl::StrCat("sweep ", sweep, " passed at ", Find(watch, kPassed));
  if (state == "lost") {
    seen["lost"] = Find(watch, kLost);
    seen["lost_why"] = Find(watch, kLostWhy);
    r.set_reason(
        absl::StrCat("lost at ", Find(watch, kLost), ": ", Find(watch, kLostWhy), " (", pass, ")"));
  } else {
    r.set_reason(pass);
  }
  return r;
}

}  // namespace fabricctl::probes
