#include "report/findings.h"

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "catch2/catch.hpp"
#include "tests/testing/testing.h"

namespace fabricctl::report {
namespace {

// The file whole; the test fails when it is missing or empty.
std::string ReadFile(const std::string& path) {
  std::string text = testing::ReadFile(path);
  REQUIRE(!text.empty());
  return text;
}

std::set<std::string> CatalogueNames() {
  std::set<std::string> names;
  for (const FindingKind& k : Catalogue()) names.insert(std::string(k.name));
  return names;
}

std::string Name(v1::Severity s) {
  return s == v1::SEVERITY_CRITICAL ? "critical" : s == v1::SEVERITY_WARNING ? "warning" : "ok";
}
std::string Name(v1::Action a) {
  return a == v1::ACTION_DRAIN ? "drain" : a == v1::ACTION_INVESTIGATE ? "investigate" : "none";
}

// docs/findings.md's table ("| kind | severity | action | ..."): kind -> "severity action".
std::map<std::string, std::string> ReadmeTable() {
  std::map<std::string, std::string> rows;
  std::istringstream lines(ReadFile("docs/findings.md"));
  std::string line;
  bool in_table = false;
  static const std::regex kRow(R"(^\| `([a-z_]+)` \| ([a-z]+) \| ([a-z]+) \|)");
  while (std::getline(lines, line)) {
    if (line.rfind("| kind | severity | action |", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.empty() || line[0] != '|') break;
    std::smatch m;
    if (std::regex_search(line, m, kRow)) rows[m[1]] = m[2].str() + " " + m[3].str();
  }
  return rows;
}

TEST_CASE("every kind has one entry, a severity and an action") {
  std::set<std::string> seen;
  for (const FindingKind& k : Catalogue()) {
    INFO(k.name);
    CHECK(seen.insert(std::string(k.name)).second);
    CHECK((k.severity == v1::SEVERITY_WARNING || k.severity == v1::SEVERITY_CRITICAL ||
           (k.severity == v1::SEVERITY_OK && k.action == v1::ACTION_NONE)));  // known_good
    CHECK(k.action != v1::ACTION_UNSPECIFIED);
    CHECK(std::string(k.summary).size() > 0);
    CHECK((std::string(k.alternate_when).empty() ==
           (k.alternate_severity == v1::SEVERITY_UNSPECIFIED)));
  }
}

TEST_CASE("the catalogue, the proto's list and docs/findings.md's findings table agree") {
  const std::string proto = ReadFile("proto/finding.proto");
  const size_t begin = proto.find("Stable machine name");
  const size_t end = proto.find("string kind = 1;");
  REQUIRE(begin != std::string::npos);
  REQUIRE(end != std::string::npos);
  const std::string listed = proto.substr(begin, end - begin);
  std::set<std::string> in_proto;
  const std::string kinds = listed.substr(listed.find("one of:") + 7);
  static const std::regex kWord("[a-z]+(_[a-z]+)*");
  for (std::sregex_iterator it(kinds.begin(), kinds.end(), kWord), e; it != e; ++it) {
    in_proto.insert(it->str());
  }
  CHECK(in_proto == CatalogueNames());
  std::map<std::string, std::string> catalogue;
  for (const FindingKind& k : Catalogue()) {
    catalogue[k.name] = Name(k.severity) + " " + Name(k.action);
  }
  CHECK(ReadmeTable() == catalogue);
}

TEST_CASE("Make takes the catalogue's levels") {
  v1::Finding f = Make(kind::kStragglerNode, "node-3", "slow");
  CHECK(f.kind() == "straggler_node");
  CHECK(f.severity() == v1::SEVERITY_CRITICAL);
  CHECK(f.action() == v1::ACTION_DRAIN);
  CHECK(f.node() == "node-3");
  CHECK(f.detail() == "slow");

  v1::Finding lowered = Make(kind::kRdmaUnavailable, "node-1", "no device", Level::kAlternate);
  CHECK(lowered.severity() == v1::SEVERITY_WARNING);
  CHECK(lowered.action() == v1::ACTION_INVESTIGATE);

  v1::Finding pair = MakePair(kind::kSlowLink, "a", "b", "slow");
  CHECK(pair.peer() == "b");
  CHECK(FindKind("no_such_kind") == nullptr);
}

}  // namespace
TEST_CASE(
    "docs/known-good.md says whom each kind concerns and who raises it, as the catalogue does") {
  std::map<std::string, std::string> rows;
  std::istringstream lines(ReadFile("docs/known-good.md"));
  static const std::regex kRow(R"(^\| `([a-z_]+)` \| ([a-z ]+) \| ([a-z, ]+) \|$)");
  std::map<std::string, std::string> raisers;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kRow)) {
      rows[m[1]] = m[2];
      raisers[m[1]] = m[3];
    }
  }
  auto word = [](Concerns c) -> std::string {
    switch (c) {
      case Concerns::kNamed:
        return "named";
      case Concerns::kMembers:
        return "members";
      case Concerns::kEveryJudged:
        return "every judged";
      case Concerns::kNobody:
        return "nobody";
    }
    return "";
  };
  CHECK(rows.size() == Catalogue().size());
  for (const FindingKind& k : Catalogue()) {
    INFO(k.name);
    CHECK(rows[k.name] == word(k.concerns));
    CHECK(raisers[k.name] == (k.raised_by == RaisedBy::kAgent        ? "agent"
                              : k.raised_by == RaisedBy::kController ? "controller"
                                                                     : "agent, controller"));
    // Only the kinds that say something against nobody are ok; everything else concerns someone.
    CHECK((k.concerns == Concerns::kNobody) == (k.severity == v1::SEVERITY_OK));
  }
}

TEST_CASE("ConcernedNodes applies the kind's rule to the finding") {
  const std::vector<std::string> judged = {"a", "b", "c"};
  v1::Finding slow = MakePair(kind::kSlowLink, "a", "b", "slow");
  CHECK(ConcernedNodes(slow, judged) == std::vector<std::string>{"a", "b"});
  v1::Finding path = Make(kind::kSlowPath, "", "slow path");
  (*path.mutable_evidence())["members"] = "a";
  (*path.mutable_evidence())["peer_members"] = "c";
  CHECK(ConcernedNodes(path, judged) == std::vector<std::string>{"a", "c"});
  CHECK(ConcernedNodes(Make(kind::kFabricDegraded, "", "slow"), judged) == judged);
  CHECK(ConcernedNodes(Make(kind::kKnownGood, "a", "passed"), judged).empty());
  v1::Finding unknown;
  unknown.set_kind("not_a_kind");
  unknown.set_severity(v1::SEVERITY_WARNING);
  CHECK(ConcernedNodes(unknown, judged) == judged);
}

}  // namespace fabricctl::report
