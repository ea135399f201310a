#ifndef FABRICCTL_PROBES_COMMON_SECRET_H_
#define FABRICCTL_PROBES_COMMON_SECRET_H_

#include <string>

#include "absl/status/statusor.h"

// The secrets that bind a data-plane connection to its run: a probe server's or a ring rank's
// listener takes only a peer that says the secret the controller handed it.
namespace fabricctl::probes {

// 16 bytes from the kernel's random source.
absl::StatusOr<std::string> NewSecret();

// Whether `a` and `b` are the same secret, in time independent of where they differ.
bool SameSecret(const std::string& a, const std::string& b);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_COMMON_SECRET_H_
