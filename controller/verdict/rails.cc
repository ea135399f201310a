#include "controller/verdict/rails.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

// What makes two findings the same across rails: kind, subject, and what was measured (a
// bandwidth and a latency finding of one kind about one node are two findings).
std::string KeyOf(const v1::Finding& f) {
  bool latency = false;
  for (const auto& [key, value] : f.evidence()) latency |= key.find("lat_us") != std::string::npos;
  return absl::StrCat(f.kind(), "\x1f", f.node(), "\x1f", f.peer(), "\x1f", f.device(), "\x1f",
                      f.port(), "\x1f", latency ? "latency" : "");
}

bool Lacks(const RailVerdict& rail, const std::string& node) {
  return !node.empty() && rail.absent.count(node) > 0;
}

// A straggler on some of its rails, fine on others: the NIC of that rail.
v1::Finding SlowNic(const v1::Finding& straggler, const RailVerdict& rail,
                    const std::vector<std::string>& fine) {
  v1::Finding nic =
      report::Make(report::kind::kSlowNic, straggler.node(),
                   absl::StrCat(rail.rail, " (", rail.netdev, "): ", straggler.detail(),
                                "; fine on ", absl::StrJoin(fine, ", ")));
  nic.set_device(rail.netdev);
  nic.set_rail(rail.rail);
  *nic.mutable_evidence() = straggler.evidence();
  (*nic.mutable_evidence())["fine_rails"] = absl::StrJoin(fine, ",");
  return nic;
}

v1::Finding OnRail(const v1::Finding& f, const RailVerdict& rail) {
  v1::Finding tagged = f;
  tagged.set_rail(rail.rail);
  if (!rail.rail.empty() && tagged.detail().rfind(rail.rail + ": ", 0) != 0) {
    tagged.set_detail(absl::StrCat(rail.rail, ": ", tagged.detail()));
  }
  return tagged;
}

std::vector<v1::Finding> MissingRails(const std::vector<RailVerdict>& rails) {
  std::vector<v1::Finding> out;
  for (const RailVerdict& rail : rails) {
    for (const auto& [node, why] : rail.absent) {
      v1::Finding f = report::Make(report::kind::kRailMissing, node,
                                   absl::StrCat(node, " lacks rail ", rail.rail, " (", rail.netdev,
                                                "): ", why, "; measured on its other rails only"));
      f.set_device(rail.netdev);
      f.set_rail(rail.rail);
      (*f.mutable_evidence())["reason"] = why;
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace

std::vector<v1::Finding> CombineRails(const std::vector<RailVerdict>& rails) {
  if (rails.size() == 1 && rails[0].rail.empty()) return rails[0].findings;
  std::vector<v1::Finding> out = MissingRails(rails);
  // Each finding by key, then by the rails that raise it (in the order first seen).
  std::vector<std::string> order;
  std::map<std::string, std::map<size_t, std::vector<const v1::Finding*>>> by_rail;
  for (size_t r = 0; r < rails.size(); ++r) {
    for (const v1::Finding& f : rails[r].findings) {
      // A node without the rail is not unreachable on it: rail_missing says so.
      if (f.kind() == report::kind::kNodeUnreachable && Lacks(rails[r], f.node())) continue;
      const std::string key = KeyOf(f);
      if (by_rail.count(key) == 0) order.push_back(key);
      by_rail[key][r].push_back(&f);
    }
  }
  for (const std::string& key : order) {
    const auto& raised = by_rail[key];
    const v1::Finding& first = *raised.begin()->second.front();
    std::vector<size_t> has;  // the rails its subject is on
    for (size_t r = 0; r < rails.size(); ++r) {
      if (!Lacks(rails[r], first.node()) && !Lacks(rails[r], first.peer())) has.push_back(r);
    }
    if (has.size() >= 2 && raised.size() == has.size()) {  // on every rail: not a rail's
      std::vector<std::string> names;
      for (const auto& [r, findings] : raised) names.push_back(rails[r].rail);
      for (const v1::Finding* f : raised.begin()->second) {
        v1::Finding merged = *f;
        (*merged.mutable_evidence())["rails"] = absl::StrJoin(names, ",");
        out.push_back(std::move(merged));
      }
      continue;
    }
    // A straggler's NIC where its other rails show a healthy host: rails that raise nothing
    // about it and judged it fine.
    std::vector<std::string> fine;
    for (size_t h : has) {
      if (raised.count(h) == 0 && rails[h].unhealthy.count(first.node()) == 0)
        fine.push_back(rails[h].rail);
    }
    for (const auto& [r, findings] : raised) {
      for (const v1::Finding* f : findings) {
        const bool nic = f->kind() == report::kind::kStragglerNode && !fine.empty();
        out.push_back(nic ? SlowNic(*f, rails[r], fine) : OnRail(*f, rails[r]));
      }
    }
  }
  return out;
}

}  // namespace fabricctl::controller
