#include "report/render.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "base/utf8.h"

namespace fabricctl::report {

const std::vector<std::string>& Formats() {
  static const auto* const kFormats = new std::vector<std::string>{
      "text", "json", "junit", "html", "prom", "prom-pairs", "drain", "resume"};
  return *kFormats;
}

absl::Status CheckFormat(const std::string& format) {
  for (const auto& f : Formats()) {
    if (f == format) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--format: '", format, "' is none of ", absl::StrJoin(Formats(), ", ")));
}

absl::StatusOr<std::string> Render(const v1::Report& original, const std::string& format,
                                   bool color) {
  RETURN_IF_ERROR(CheckFormat(format));
  // Names, reasons and evidence lines come from devices, logs and other processes: any bytes.
  // JSON escapes what it must itself; every other format gets printable UTF-8 only (no
  // terminal escapes in text, no control characters in XML, no second line in Prometheus).
  v1::Report report = original;
  if (format == "json") {
    SanitizeUtf8(&report);
    return RenderJson(report);
  }
  SanitizeText(&report);
  if (format == "text") return RenderText(report, color);
  if (format == "junit") return RenderJunit(report);
  if (format == "html") return RenderHtml(report);
  if (format == "prom") return RenderProm(report);
  if (format == "prom-pairs") return RenderProm(report, /*per_node=*/true, /*all_pairs=*/true);
  if (format == "resume") return RenderResume(report);
  return RenderDrain(report);
}

}  // namespace fabricctl::report
