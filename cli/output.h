#ifndef FABRICCTL_CLI_OUTPUT_H_
#define FABRICCTL_CLI_OUTPUT_H_

#include <string>

#include "absl/status/status.h"

namespace fabricctl::cli {

// Writes `contents` to `path` atomically (a temporary file renamed over it), or to stdout
// when `path` is empty or "-". Errors name the path.
absl::Status WriteOutput(const std::string& path, const std::string& contents);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_OUTPUT_H_
