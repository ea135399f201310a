#ifndef FABRICCTL_PROBES_COMMON_CHILD_H_
#define FABRICCTL_PROBES_COMMON_CHILD_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace fabricctl::probes {

// Runs `work` in a forked child process and returns the bytes it produced, with a watchdog:
// a child still running after `timeout` is killed (SIGKILL) and the answer is
// DeadlineExceeded. For CUDA and NCCL calls, which can hang or abort a process: the caller
// survives either. A child that crashes is Internal with the signal; `work` returning an
// error status passes it through.
absl::StatusOr<std::string> RunInChild(const std::function<absl::StatusOr<std::string>()>& work,
                                       absl::Duration timeout);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COMMON_CHILD_H_
