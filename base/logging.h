#ifndef FABRICCTL_BASE_LOGGING_H_
#define FABRICCTL_BASE_LOGGING_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace fabricctl {

struct LoggingOptions {
  // trace, debug, info, warn, error, critical or off.
  std::string level = "info";
  // "text": one human line per record; "json": one JSON object per line
  // ({"time","level","logger","msg"}), for journald/Loki pipelines.
  std::string format = "text";
};

// Configures the default sink (stderr) for every logger of the process. Call once from main,
// before any thread starts. Logs never carry results; results go in reports.
absl::Status SetupLogging(const LoggingOptions& options);

// The named logger of one component ("agent", "controller", "store", ...), created on first use
// with the process-wide sink and level.
std::shared_ptr<spdlog::logger> Logger(const std::string& component);

// Escapes `text` for inclusion in a JSON string literal (without the quotes).
std::string JsonEscape(const std::string& text);

}  // namespace fabricctl

#endif  // FABRICCTL_BASE_LOGGING_H_
