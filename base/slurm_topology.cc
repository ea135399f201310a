#include "base/slurm_topology.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/hostlist.h"

namespace fabricctl {
namespace {

// The deepest a switch tree goes before it is taken for a cycle.
constexpr size_t kMaxDepth = 16;

struct Line {
  int number = 0;
  std::string text;
};

// Logical lines: comments removed, continuations joined, blank lines dropped.
std::vector<Line> LogicalLines(const std::string& text) {
  std::vector<Line> out;
  std::string pending;
  int start = 0, number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++number;
    std::string line(raw.substr(0, raw.find('#')));
    absl::StripTrailingAsciiWhitespace(&line);
    if (pending.empty()) start = number;
    const bool continued = !line.empty() && line.back() == '\\';
    if (continued) line.pop_back();
    absl::StrAppend(&pending, " ", line);
    if (continued) continue;
    if (!absl::StripAsciiWhitespace(pending).empty()) out.push_back({start, pending});
    pending.clear();
  }
  if (!absl::StripAsciiWhitespace(pending).empty()) out.push_back({start, pending});
  return out;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::vector<std::string>>> ParseSlurmTopology(
    const std::string& text, const std::string& source, size_t max_nodes) {
  std::map<std::string, std::string> parent_of_switch, switch_of_node;
  std::map<std::string, int> switches;  // name -> its line
  size_t names = 0;                     // every name the lists expand to, nodes and switches
  for (const Line& line : LogicalLines(text)) {
    auto fail = [&](const std::string& what) {
      return absl::InvalidArgumentError(absl::StrCat(source, ":", line.number, ": ", what));
    };
    std::string name, nodes, children;
    for (absl::string_view token :
         absl::StrSplit(line.text, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      const size_t eq = token.find('=');
      if (eq == absl::string_view::npos)
        return fail(absl::StrCat("expected KEY=VALUE, got '", token, "'"));
      const std::string key = absl::AsciiStrToLower(token.substr(0, eq));
      const std::string value(token.substr(eq + 1));
      if (key == "switchname")
        name = value;
      else if (key == "nodes")
        nodes = value;
      else if (key == "switches")
        children = value;
    }
    if (name.empty()) return fail("a line without SwitchName=");
    if (!switches.emplace(name, line.number).second)
      return fail(absl::StrCat("switch '", name, "' is named twice"));
    for (const auto& [list, under, what] : {std::tuple{nodes, &switch_of_node, "node"},
                                            std::tuple{children, &parent_of_switch, "switch"}}) {
      if (list.empty()) continue;
      auto members = ExpandHostlist(list, absl::StrCat(what, "s of ", name), max_nodes - names);
      if (!members.ok()) return fail(std::string(members.status().message()));
      names += members->size();
      for (const std::string& member : *members) {
        auto [it, fresh] = under->emplace(member, name);
        if (!fresh) {
          return fail(
              absl::StrCat(what, " '", member, "' is under both ", it->second, " and ", name));
        }
      }
      if (names > max_nodes) return fail(absl::StrCat("more than ", max_nodes, " names in all"));
    }
  }
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [node, leaf] : switch_of_node) {
    std::vector<std::string>& chain = out[node];
    for (std::string at = leaf;;) {
      chain.push_back(at);
      auto up = parent_of_switch.find(at);
      if (up == parent_of_switch.end()) break;
      if (chain.size() > kMaxDepth) {
        return absl::InvalidArgumentError(absl::StrCat(source, ":", switches[at], ": switch '", at,
                                                       "' is in a cycle or a tree deeper than ",
                                                       kMaxDepth));
      }
      at = up->second;
    }
  }
  return out;
}

}  // namespace fabricctl
