#include "base/logging.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace fabricctl {
namespace {

// Formats one record as a JSON object on one line; the message is escaped.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    time_formatter_->format(msg, dest);  // {"time":"...",
    std::string line = absl::StrCat(
        "\"level\":\"", spdlog::level::to_string_view(msg.level).data(), "\",\"logger\":\"",
        JsonEscape(std::string(msg.logger_name.data(), msg.logger_name.size())), "\",\"msg\":\"",
        JsonEscape(std::string(msg.payload.data(), msg.payload.size())), "\"}\n");
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }

 private:
  std::unique_ptr<spdlog::pattern_formatter> time_formatter_ =
      std::make_unique<spdlog::pattern_formatter>("{\"time\":\"%Y-%m-%dT%H:%M:%S.%f%z\",",
                                                  spdlog::pattern_time_type::local, "");
};

Mutex& SinkMutex() {
  static Mutex mu;
  return mu;
}

spdlog::sink_ptr& SharedSink() {
  static spdlog::sink_ptr sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  return sink;
}

}  // namespace

std::string JsonEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

absl::Status SetupLogging(const LoggingOptions& options) {
  spdlog::level::level_enum level = spdlog::level::from_str(options.level);
  // from_str maps anything unknown to "off"; only "off" itself may mean off.
  if (level == spdlog::level::off && options.level != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("--log-level: unknown level '", options.level,
                     "' (expected trace, debug, info, warn, error, critical or off)"));
  }
  MutexLock lock(&SinkMutex());
  auto& sink = SharedSink();
  if (options.format == "json") {
    sink->set_formatter(std::make_unique<JsonFormatter>());
  } else if (options.format == "text") {
    sink->set_formatter(
        std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%e %^%-5l%$ [%n] %v"));
  } else {
    return absl::InvalidArgumentError(absl::StrCat("--log-format: unknown format '", options.format,
                                                   "' (expected text or json)"));
  }
  spdlog::set_level(level);
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("fabricctl", sink));
  spdlog::set_level(level);
  return absl::OkStatus();
}

std::shared_ptr<spdlog::logger> Logger(const std::string& component) {
  MutexLock lock(&SinkMutex());
  if (auto existing = spdlog::get(component)) return existing;
  auto logger = std::make_shared<spdlog::logger>(component, SharedSink());
  logger->set_level(spdlog::default_logger_raw()->level());
  spdlog::register_logger(logger);
  return logger;
}

}  // namespace fabricctl
