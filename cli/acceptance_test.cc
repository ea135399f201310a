// fabricctl accept's judgement (cli/acceptance.h) on constructed registries and reports.
#include "cli/acceptance.h"

#include <catch2/catch.hpp>

namespace fabricctl::cli {
namespace {

v1::NodeStatus* Add(v1::ListNodesResponse& registry, const std::string& name, bool known_good,
                    int64_t passed_s = 100, const std::string& spine = "") {
  v1::NodeStatus* node = registry.add_nodes();
  node->mutable_inventory()->set_node_name(name);
  node->set_state(v1::NODE_ONLINE);
  if (!spine.empty()) (*node->mutable_inventory()->mutable_labels())["spine"] = spine;
  if (known_good) {
    node->mutable_known_good()->set_sweep_id(1);
    node->mutable_known_good()->mutable_passed()->set_seconds(passed_s);
  }
  return node;
}

TEST_CASE("references are known-good online nodes, those sharing a label with the new first") {
  v1::ListNodesResponse registry;
  Add(registry, "new-1", false, 0, "s2");
  Add(registry, "old-a", true, 500, "s1");
  Add(registry, "old-b", true, 100, "s2");
  Add(registry, "old-c", true, 300, "s2");
  Add(registry, "old-d", true, 900, "s1");
  Add(registry, "old-e", true, 50, "s1");
  Add(registry, "lost", true, 999, "s2")->mutable_known_good()->mutable_lost()->set_seconds(1);
  Add(registry, "never", false, 0, "s2");
  Add(registry, "offline", true, 999, "s2")->set_state(v1::NODE_STALE);
  // The agents' own labels place nobody: only the site's placement does.
  google::protobuf::RepeatedPtrField<v1::NodeLabels> placed;
  CHECK(AutoReferences({"new-1"}, registry, placed) ==
        std::vector<std::string>{"old-d", "old-a", "old-c", "old-b"});
  for (const auto& node : registry.nodes()) {
    v1::NodeLabels* entry = placed.Add();
    entry->set_node(node.inventory().node_name());
    *entry->mutable_labels() = node.inventory().labels();
  }
  CHECK(AutoReferences({"new-1"}, registry, placed) ==
        std::vector<std::string>{"old-c", "old-b", "old-d", "old-a"});
  // A node that labels itself into the new node's spine is not preferred for it.
  (*registry.mutable_nodes(5)->mutable_inventory()->mutable_labels())["spine"] = "s2";  // old-e
  CHECK(AutoReferences({"new-1"}, registry, placed) ==
        std::vector<std::string>{"old-c", "old-b", "old-d", "old-a"});
}

TEST_CASE("a named reference must be registered and not new; one not known-good is warned of") {
  v1::ListNodesResponse registry;
  Add(registry, "new-1", false);
  Add(registry, "old-a", true);
  Add(registry, "old-b", false);
  std::vector<std::string> warnings;
  CHECK(CheckReferences({"old-a", "old-b"}, {"new-1"}, registry, &warnings).ok());
  CHECK(warnings == std::vector<std::string>{"reference old-b is not known-good"});
  CHECK(CheckReferences({"new-1"}, {"new-1"}, registry, &warnings).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(CheckReferences({"ghost"}, {"new-1"}, registry, &warnings).message()),
             Catch::Contains("ghost is not registered"));
}

}  // namespace
}  // namespace fabricctl::cli
