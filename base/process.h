#ifndef FABRICCTL_BASE_PROCESS_H_
#define FABRICCTL_BASE_PROCESS_H_

#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/logging.h"
#include "base/tls.h"
#include "proto/config.pb.h"

namespace fabricctl {

// Flags every fabricctl binary has, and where they land.
struct CommonFlags {
  LoggingOptions logging;
  TlsOptions tls;
  std::string config_path;  // --config; empty: built-in defaults
};

// Adds --log-level, --log-format, --tls-cert, --tls-key, --tls-ca, --insecure and --config
// (and --version printing `binary` and the version) to `app`.
void AddCommonFlags(CLI::App& app, const std::string& binary, CommonFlags* flags);

// After parsing: sets up logging, loads the configuration file (or the defaults) and takes the
// TLS paths from its `tls` section where no --tls-* flag was given. Errors name the flag or the
// file, line and key.
absl::StatusOr<v1::Config> ApplyCommonFlags(CommonFlags* flags);

// Parses the command line. Returns the exit code when the process should stop now: 0 after
// --help or --version, kExitUnknown (3) after a usage error (CLI11 prints the message).
std::optional<int> ParseFlags(CLI::App& app, int argc, char** argv);

// Parses "500ms", "10s", "2m"; `flag` names the flag in the error. Zero and negative are errors.
absl::StatusOr<absl::Duration> ParsePositiveDuration(const std::string& text,
                                                     const std::string& flag);

// Blocks SIGINT and SIGTERM in the calling thread and every thread it starts afterwards, so
// that WaitForTerminationSignal() receives them synchronously (no handler does I/O). Call at
// the top of a daemon's main, before any thread exists.
void BlockTerminationSignals();

// Waits for SIGINT or SIGTERM and returns its name.
std::string WaitForTerminationSignal();

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_PROCESS_H_
