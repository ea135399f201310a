#include "controller/rail_verdicts.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

std::string KeyOf(const v1::Finding& f) {
  return absl::StrCat(f.kind(), "\x1f", f.node(), "\x1f", f.peer(), "\x1f", f.device(), "\x1f", f.port());
}

bool Lacks(const RailVerdict& rail, const std::string& node) {
  return !node.empty() && rail.absent.count(node) > 0;
}

// A straggler on some of its rails: the NIC of that rail.
v1::Finding SlowNic(const v1::Finding& straggler, const RailVerdict& rail,
                    const std::vector<std::string>& fine) {
  v1::Finding nic = report::Make(
      report::kind::kSlowNic, straggler.node(),
      absl::StrCat(rail.rail, " (", rail.netdev, "): ", straggler.detail(), "; fine on ",
                   absl::StrJoin(fine, ", ")));
  nic.set_device(rail.netdev);
  nic.set_rail(rail.rail);
  *nic.mutable_evidence() = straggler.evidence();
  (*nic.mutable_evidence())["fine_rails"] = absl::StrJoin(fine, ",");
  return nic;
}

}  // namespace

std::vector<v1::Finding> CombineRails(const std::vector<RailVerdict>& rails) {
  if (rails.size() == 1 && rails[0].rail.empty()) return rails[0].findings;
  std::vector<v1::Finding> out;
  for (const RailVerdict& rail : rails) {
    for (const auto& [node, why] : rail.absent) {
      v1::Finding f = report::Make(
          report::kind::kRailMissing, node,
          absl::StrCat(node, " lacks rail ", rail.rail, " (", rail.netdev, "): ", why,
                       "; measured on its other rails only"));
      f.set_device(rail.netdev);
      f.set_rail(rail.rail);
      (*f.mutable_evidence())["reason"] = why;
      out.push_back(std::move(f));
    }
  }
  // Which rails raise each finding, in the order first seen.
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> raised;
  std::map<std::string, std::map<size_t, const v1::Finding*>> by_rail;
  for (size_t r = 0; r < rails.size(); ++r) {
    for (const v1::Finding& f : rails[r].findings) {
      // A node without the rail is not unreachable on it: rail_missing says so.
      if (f.kind() == report::kind::kNodeUnreachable && Lacks(rails[r], f.node())) continue;
      const std::string key = KeyOf(f);
      if (by_rail[key].count(r) > 0) continue;
      if (by_rail[key].empty()) order.push_back(key);
      by_rail[key][r] = &f;
      raised[key].push_back(r);
    }
  }
  for (const std::string& key : order) {
    const v1::Finding& first = *by_rail[key].begin()->second;
    std::vector<size_t> has;  // the rails its subject is on
    for (size_t r = 0; r < rails.size(); ++r) {
      if (!Lacks(rails[r], first.node()) && !Lacks(rails[r], first.peer())) has.push_back(r);
    }
    const std::vector<size_t>& on = raised[key];
    if (has.size() >= 2 && on.size() == has.size()) {
      v1::Finding merged = first;
      std::vector<std::string> names;
      for (size_t r : on) names.push_back(rails[r].rail);
      (*merged.mutable_evidence())["rails"] = absl::StrJoin(names, ",");
      out.push_back(std::move(merged));
      continue;
    }
    for (size_t r : on) {
      const v1::Finding& f = *by_rail[key][r];
      if (f.kind() == report::kind::kStragglerNode && has.size() >= 2) {
        std::vector<std::string> fine;
        for (size_t h : has) {
          if (std::find(on.begin(), on.end(), h) == on.end()) fine.push_back(rails[h].rail);
        }
        out.push_back(SlowNic(f, rails[r], fine));
        continue;
      }
      v1::Finding tagged = f;
      tagged.set_rail(rails[r].rail);
      if (!rails[r].rail.empty() && tagged.detail().rfind(rails[r].rail, 0) != 0) {
        tagged.set_detail(absl::StrCat(rails[r].rail, ": ", tagged.detail()));
      }
      out.push_back(std::move(tagged));
    }
  }
  return out;
}

}  // namespace fabricctl::controller
