#include "report/render.h"

#include "absl/strings/str_cat.h"

namespace fabricctl::report {

absl::StatusOr<std::string> Render(const v1::Report& report, const std::string& format,
                                   bool color) {
  if (format == "text") return RenderText(report, color);
  if (format == "json") return RenderJson(report);
  if (format == "junit") return RenderJunit(report);
  if (format == "html") return RenderHtml(report);
  if (format == "prom") return RenderProm(report);
  return absl::InvalidArgumentError(
      absl::StrCat("--format: '", format, "' is not text, json, junit, html or prom"));
}

}  // namespace fabricctl::report
