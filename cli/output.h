#ifndef FABRICCTL_CLI_OUTPUT_H_
#define FABRICCTL_CLI_OUTPUT_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"

namespace fabricctl::cli {

// Whether `path` can take a report: it is absent or a regular file (not a link, a FIFO or a
// device), and its directory exists and is writable. Checked before a sweep starts, so that
// no verdict is lost to a bad --output. Empty or "-" (stdout) is fine.
absl::Status CheckOutput(const std::string& path);

// Writes `contents` to `path` atomically (a temporary file of its own, made with mkostemp in
// the target's directory, synced and renamed over it, with the old file's mode or 0666 less the
// umask), or to stdout when `path` is empty or "-". Errors name the path.
absl::Status WriteOutput(const std::string& path, const std::string& contents);

// "fabricctl COMMAND: MESSAGE" on `err`; returns kExitUnknown (the command could not run).
int Fail(std::ostream& err, const std::string& command, const absl::Status& status);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_OUTPUT_H_
