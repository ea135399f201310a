#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "report/findings.h"
#include "report/render.h"

namespace fabricctl::report {
namespace {

// [A-Za-z0-9._-]+: what a host name holds, and nothing a shell or scontrol would read as more.
bool PlainName(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  for (char c : name) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string RenderDrain(const v1::Report& report) {
  std::string out;
  // The breaker held every drain: one comment line says so, for a script that must not take
  // "nothing to drain" for "nothing wrong" (the Slurm prolog holds the job on it).
  for (const auto& f : report.findings()) {
    if (f.kind() != kind::kDrainBreakerOpen) continue;
    auto names = f.evidence().find("would_drain");
    std::vector<std::string> plain;
    if (names != f.evidence().end()) {
      for (absl::string_view n : absl::StrSplit(names->second, ',')) {
        if (PlainName(std::string(n))) plain.emplace_back(n);
      }
    }
    absl::StrAppend(&out, "# ", kind::kDrainBreakerOpen, "\t", absl::StrJoin(plain, ","), "\n");
    break;
  }
  for (const std::string& node : report.summary().drain()) {
    std::vector<std::string> kinds;  // in the report's order, once each
    std::set<std::string> seen;
    for (const auto& f : report.findings()) {
      if (f.node() == node && f.action() == v1::ACTION_DRAIN && FindKind(f.kind()) != nullptr &&
          seen.insert(f.kind()).second) {
        kinds.push_back(f.kind());
      }
    }
    // One line a node, read by scripts that run scontrol: only a plain host name and
    // catalogue kinds reach it (the builder drains only the report's own nodes).
    if (!PlainName(node)) continue;
    absl::StrAppend(&out, node, "\t", absl::StrJoin(kinds, ","), "\n");
  }
  return out;
}

std::string RenderResume(const v1::Report& report) {
  std::string out;
  for (const std::string& node : report.summary().given_back()) {
    if (PlainName(node)) absl::StrAppend(&out, node, "\n");
  }
  return out;
}

}  // namespace fabricctl::report
