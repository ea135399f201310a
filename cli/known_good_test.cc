#include "cli/known_good.h"

#include <catch2/catch.hpp>

namespace fabricctl::cli {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

// A registry: each node online, passed `passed_ago` ago unless negative (never passed).
v1::ListNodesResponse Registry(const std::vector<std::pair<std::string, absl::Duration>>& nodes) {
  v1::ListNodesResponse response;
  int64_t sweep = 1;
  for (const auto& [name, ago] : nodes) {
    v1::NodeStatus* node = response.add_nodes();
    node->mutable_inventory()->set_node_name(name);
    node->set_state(v1::NODE_ONLINE);
    if (ago < absl::ZeroDuration()) continue;
    node->mutable_known_good()->set_sweep_id(sweep++);
    node->mutable_known_good()->mutable_passed()->set_seconds(absl::ToUnixSeconds(kNow - ago));
  }
  return response;
}

}  // namespace

TEST_CASE("Every node fresh: nothing is measured, each is vouched for by its sweep") {
  const auto registry = Registry({{"a", absl::Hours(1)}, {"b", absl::Hours(2)}});
  const StalePlan plan = PlanStale({"b", "a"}, registry, absl::Hours(24), kNow);
  CHECK(plan.Measure().empty());
  REQUIRE(plan.skipped.size() == 2);
  CHECK(plan.skipped[0].node() == "a");
  CHECK(plan.skipped[0].kind() == "known_good");
  CHECK(plan.skipped[0].severity() == v1::SEVERITY_OK);
  CHECK(plan.skipped[0].evidence().at("passed_in_sweep") == "1");
  CHECK(plan.skipped[1].detail() ==
        "known-good: sweep 2 passed it 120 min ago and nothing changed on it since; not measured "
        "again");
}

TEST_CASE("Stale nodes are measured beside the two most recently passed known-good nodes") {
  const auto registry = Registry({{"a", absl::Hours(5)},
                                  {"b", absl::Hours(1)},
                                  {"c", absl::Hours(30)},  // older than --max-age
                                  {"d", absl::Hours(3)},
                                  {"e", absl::Hours(2)},
                                  {"f", -absl::Seconds(1)}});  // never passed
  const StalePlan plan =
      PlanStale({"a", "b", "c", "d", "e", "f", "g"}, registry, absl::Hours(24), kNow);
  CHECK(plan.stale == std::vector<std::string>{"c", "f", "g"});  // g: not registered
  CHECK(plan.references == std::vector<std::string>{"b", "e"});
  CHECK(plan.Measure() == std::vector<std::string>{"c", "f", "g", "b", "e"});
  REQUIRE(plan.skipped.size() == 2);
  CHECK(plan.skipped[0].node() == "a");
  CHECK(plan.skipped[1].node() == "d");
}

TEST_CASE("A node that lost its state or went stale in the registry is measured again") {
  auto registry = Registry({{"a", absl::Hours(1)}, {"b", absl::Hours(1)}, {"c", absl::Hours(1)}});
  registry.mutable_nodes(0)->mutable_known_good()->mutable_lost()->set_seconds(
      absl::ToUnixSeconds(kNow));
  registry.mutable_nodes(1)->set_state(v1::NODE_STALE);
  const StalePlan plan = PlanStale({}, registry, absl::Hours(24), kNow);  // every listed node
  CHECK(plan.stale == std::vector<std::string>{"a", "b"});
  CHECK(plan.references == std::vector<std::string>{"c"});
  CHECK(plan.skipped.empty());
}

}  // namespace fabricctl::cli
