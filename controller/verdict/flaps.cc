#include "controller/verdict/flaps.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "report/findings.h"

namespace fabricctl::controller {

void NoteFlaps(const std::vector<v1::Finding>& watch, v1::Report* report) {
  std::map<std::string, std::string> flapped;  // node -> "node link, node link"
  for (const auto& f : watch) {
    if (f.kind() != report::kind::kLinkFlapping) continue;
    std::string& links = flapped[f.node()];
    links += absl::StrCat(links.empty() ? "" : ", ", f.node(), " ", f.device());
  }
  if (flapped.empty()) return;
  for (auto& f : *report->mutable_findings()) {
    if (f.peer().empty()) continue;
    std::string links;
    for (const std::string& end : {f.node(), f.peer()}) {
      auto it = flapped.find(end);
      if (it != flapped.end()) links += absl::StrCat(links.empty() ? "" : ", ", it->second);
    }
    if (!links.empty()) (*f.mutable_evidence())["link_flapping"] = links;
  }
}

}  // namespace fabricctl::controller
