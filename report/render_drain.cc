#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/render.h"

namespace fabricctl::report {

std::string RenderDrain(const v1::Report& report) {
  std::string out;
  for (const std::string& node : report.summary().drain()) {
    std::vector<std::string> kinds;  // in the report's order, once each
    std::set<std::string> seen;
    for (const auto& f : report.findings()) {
      if (f.node() == node && f.action() == v1::ACTION_DRAIN && seen.insert(f.kind()).second) {
        kinds.push_back(f.kind());
      }
    }
    // Names and kinds hold no tab or newline: node names are host names, kinds identifiers.
    absl::StrAppend(&out, node, "\t", absl::StrJoin(kinds, ","), "\n");
  }
  return out;
}

}  // namespace fabricctl::report
