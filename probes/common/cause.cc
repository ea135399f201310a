#include "probes/common/cause.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fabricctl::probes {
namespace {

constexpr char kCauseUrl[] = "type.fabricctl/fabricctl.v1.FailureCause";

}  // namespace

absl::Status WithCause(absl::Status status, v1::FailureCause cause, v1::ProbeSide side) {
  if (status.ok()) return status;
  status.SetPayload(kCauseUrl,
                    absl::Cord(absl::StrCat(static_cast<int>(cause), "/", static_cast<int>(side))));
  return status;
}

v1::FailureCause AttachedCause(const absl::Status& status) {
  if (status.ok() || !status.GetPayload(kCauseUrl)) return v1::FAILURE_CAUSE_UNSPECIFIED;
  return CauseOf(status).cause;
}

Cause CauseOf(const absl::Status& status) {
  Cause out;
  if (status.ok()) return out;
  if (auto payload = status.GetPayload(kCauseUrl)) {
    std::pair<std::string, std::string> parts = absl::StrSplit(std::string(*payload), '/');
    int cause = 0, side = 0;
    if (absl::SimpleAtoi(parts.first, &cause) && v1::FailureCause_IsValid(cause)) {
      out.cause = static_cast<v1::FailureCause>(cause);
    }
    if (absl::SimpleAtoi(parts.second, &side) && v1::ProbeSide_IsValid(side)) {
      out.side = static_cast<v1::ProbeSide>(side);
    }
  }
  if (out.cause != v1::FAILURE_CAUSE_UNSPECIFIED) return out;
  out.cause = absl::IsDeadlineExceeded(status) ? v1::CAUSE_TIMEOUT
              : absl::IsCancelled(status)      ? v1::CAUSE_CANCELLED
                                               : v1::CAUSE_CONNECTION;
  return out;
}

}  // namespace fabricctl::probes
