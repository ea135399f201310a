#ifndef FABRICCTL_PROBES_COMMON_CAUSE_H_
#define FABRICCTL_PROBES_COMMON_CAUSE_H_

#include "absl/status/status.h"
#include "proto/probe.pb.h"

// Typed failure causes carried on an absl::Status as a payload, from where a probe fails to
// its ProbeResult: the controller reads `cause` and `failed_side`, never the message.
namespace fabricctl::probes {

struct Cause {
  v1::FailureCause cause = v1::FAILURE_CAUSE_UNSPECIFIED;
  v1::ProbeSide side = v1::PROBE_SIDE_UNSPECIFIED;  // unspecified: the half that returns it
};

// `status` with `cause` (and the half that saw it) attached; an OK status stays OK.
absl::Status WithCause(absl::Status status, v1::FailureCause cause,
                       v1::ProbeSide side = v1::PROBE_SIDE_UNSPECIFIED);

// The attached cause, else one read from the status code: DeadlineExceeded is a timeout,
// Cancelled a cancellation, anything else a failure of the data path (CAUSE_CONNECTION).
// Unspecified for OK.
Cause CauseOf(const absl::Status& status);

// Only a cause the failing code attached itself (WithCause); unspecified otherwise.
v1::FailureCause AttachedCause(const absl::Status& status);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COMMON_CAUSE_H_
