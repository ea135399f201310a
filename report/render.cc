#include "report/render.h"

#include "absl/strings/str_cat.h"
#include "base/utf8.h"

namespace fabricctl::report {

absl::StatusOr<std::string> Render(const v1::Report& original, const std::string& format,
                                   bool color) {
  // Names and evidence lines come from devices and logs: any bytes. Every format gets UTF-8.
  v1::Report report = original;
  SanitizeUtf8(&report);
  if (format == "text") return RenderText(report, color);
  if (format == "json") return RenderJson(report);
  if (format == "junit") return RenderJunit(report);
  if (format == "html") return RenderHtml(report);
  if (format == "prom") return RenderProm(report);
  if (format == "drain") return RenderDrain(report);
  return absl::InvalidArgumentError(
      absl::StrCat("--format: '", format, "' is not text, json, junit, html, prom or drain"));
}

}  // namespace fabricctl::report
