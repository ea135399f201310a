#include "base/process.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/config.h"
#include "base/exit_code.h"
#include "base/status_macros.h"
#include "base/version.h"

namespace fabricctl {

void AddCommonFlags(CLI::App& app, const std::string& binary, CommonFlags* flags) {
  app.set_version_flag("--version", absl::StrCat(binary, " ", kVersion));
  app.add_option("--log-level", flags->logging.level,
                 "trace, debug, info, warn, error, critical or off")
      ->capture_default_str();
  app.add_option("--log-format", flags->logging.format, "text or json (one object per line)")
      ->capture_default_str();
  app.add_option("--tls-cert", flags->tls.cert_path, "PEM certificate of this process (mTLS)");
  app.add_option("--tls-key", flags->tls.key_path, "PEM private key of this process");
  app.add_option("--tls-ca", flags->tls.ca_path, "PEM certificate of the cluster's CA");
  app.add_flag("--insecure", flags->tls.insecure,
               "allow plain text on non-loopback addresses (logs a warning)");
  app.add_option(
      "--config", flags->config_path,
      absl::StrCat("YAML configuration (configs/README.md); default: $FABRICCTL_CONFIG, else ",
                   kSystemConfigPath, " when it exists"));
}

std::string DefaultConfigPath() {
  if (const char* env = std::getenv("FABRICCTL_CONFIG"); env != nullptr && *env != '\0') return env;
  struct stat st {};
  if (::stat(kSystemConfigPath, &st) == 0) return kSystemConfigPath;
  return "";
}

absl::StatusOr<v1::Config> ApplyCommonFlags(CommonFlags* flags) {
  RETURN_IF_ERROR(SetupLogging(flags->logging));
  v1::Config config = DefaultConfig();
  if (flags->config_path.empty()) flags->config_path = DefaultConfigPath();
  if (!flags->config_path.empty()) {
    auto loaded = LoadConfig(flags->config_path);
    if (!loaded.ok()) return loaded.status();
    config = *std::move(loaded);
  }
  TlsOptions& tls = flags->tls;
  if (tls.cert_path.empty() && tls.key_path.empty() && tls.ca_path.empty()) {
    tls.cert_path = config.tls().cert();
    tls.key_path = config.tls().key();
    tls.ca_path = config.tls().ca();
  }
  return config;
}

std::optional<int> ParseFlags(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUnknown;
  }
  return std::nullopt;
}

absl::StatusOr<absl::Duration> ParsePositiveDuration(const std::string& text,
                                                     const std::string& flag) {
  absl::Duration d;
  double seconds = 0;
  // A bare number is seconds, as iperf3's -t 4 and perftest's -D 4.
  const bool bare = absl::SimpleAtod(text, &seconds) && !text.empty() &&
                    text.find_first_not_of("0123456789.") == std::string::npos;
  if (bare) d = absl::Seconds(seconds);
  // Days, which absl's syntax lacks: "7d".
  double days = 0;
  const bool in_days = !bare && text.size() > 1 && text.back() == 'd' &&
                       text.find_first_not_of("0123456789.") == text.size() - 1 &&
                       absl::SimpleAtod(text.substr(0, text.size() - 1), &days);
  if (in_days) d = absl::Hours(24) * days;
  if ((!bare && !in_days && !absl::ParseDuration(text, &d)) || d <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": '", text,
                     "' is not a positive duration (such as 4 for seconds, 500ms, 10s or 2m)"));
  }
  return d;
}

}  // namespace fabricctl
