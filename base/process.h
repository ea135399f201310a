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
  std::string config_path;  // --config; empty: DefaultConfigPath()
};

// Adds --log-level, --log-format, --tls-cert, --tls-key, --tls-ca, --insecure and --config
// (and --version printing `binary` and the version) to `app`.
void AddCommonFlags(CLI::App& app, const std::string& binary, CommonFlags* flags);

// The configuration every binary reads when no --config is given, if it exists.
inline constexpr char kSystemConfigPath[] = "/etc/fabricctl/fabricctl.yaml";

// The configuration file to read without --config: $FABRICCTL_CONFIG when set and not empty,
// else kSystemConfigPath when it exists, else "" (built-in defaults).
std::string DefaultConfigPath();

// After parsing: sets up logging, loads the configuration file (--config, else
// DefaultConfigPath(); none: the defaults) and takes the
// TLS paths from its `tls` section where no --tls-* flag was given. Errors name the flag or the
// file, line and key.
absl::StatusOr<v1::Config> ApplyCommonFlags(CommonFlags* flags);

// Parses the command line. Returns the exit code when the process should stop now: 0 after
// --help or --version, kExitUnknown (3) after a usage error (CLI11 prints the message).
std::optional<int> ParseFlags(CLI::App& app, int argc, char** argv);

// Parses "500ms", "10s", "2m"; `flag` names the flag in the error. Zero and negative are errors.
absl::StatusOr<absl::Duration> ParsePositiveDuration(const std::string& text,
                                                     const std::string& flag);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_PROCESS_H_
