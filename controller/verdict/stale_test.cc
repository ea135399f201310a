#include "controller/verdict/stale.h"

#include <catch2/catch.hpp>

namespace fabricctl::controller {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'700'000'000);

// Each node online, passed `ago` ago over tcp_bw with two peers (never passed: negative).
std::vector<Standing> Registry(const std::vector<std::pair<std::string, absl::Duration>>& nodes) {
  std::vector<Standing> out;
  int64_t sweep = 1;
  for (const auto& [name, ago] : nodes) {
    Standing s;
    s.node = name;
    s.online = true;
    if (ago >= absl::ZeroDuration()) {
      s.passed = s.good = true;
      s.sweep_id = sweep++;
      s.passed_at = kNow - ago;
      s.coverage.set_earned(true);
      s.coverage.add_probes(v1::TCP_BW);
      v1::RailPass* r = s.coverage.add_rails();
      r->set_peers(2);
      r->add_probes(v1::TCP_BW);
    }
    out.push_back(std::move(s));
  }
  return out;
}

StaleAsk Ask(std::vector<std::string> nodes, std::vector<v1::ProbeKind> probes = {v1::TCP_BW}) {
  StaleAsk ask;
  ask.nodes = std::move(nodes);
  ask.max_age = absl::Hours(24);
  ask.now = kNow;
  ask.probes = std::move(probes);
  return ask;
}

}  // namespace

TEST_CASE("every node fresh: nothing is measured, each is vouched for by its sweep") {
  const StalePlan plan =
      PlanStale(Ask({"b", "a"}), Registry({{"a", absl::Hours(1)}, {"b", absl::Hours(2)}}));
  CHECK(plan.Measure().empty());
  REQUIRE(plan.skipped.size() == 2);
  CHECK(plan.skipped[0].node() == "a");
  CHECK(plan.skipped[0].kind() == "known_good");
  CHECK(plan.skipped[0].severity() == v1::SEVERITY_OK);
  CHECK(plan.skipped[0].evidence().at("passed_in_sweep") == "1");
  CHECK(plan.decision == "every node known-good within the max age (2): nothing measured");
}

TEST_CASE("stale nodes are measured beside max(3, their number) known-good references") {
  const auto registry = Registry({{"a", absl::Hours(5)},
                                  {"b", absl::Hours(1)},
                                  {"c", absl::Hours(30)},  // older than the max age
                                  {"d", absl::Hours(3)},
                                  {"e", absl::Hours(2)},
                                  {"f", -absl::Seconds(1)},  // never passed
                                  {"h", absl::Hours(4)}});
  SECTION("three stale: three references, the most recently passed") {
    const StalePlan plan = PlanStale(Ask({"a", "b", "c", "d", "e", "f", "g", "h"}), registry);
    CHECK(plan.stale == std::vector<std::string>{"c", "f", "g"});  // g: not registered
    CHECK(plan.references == std::vector<std::string>{"b", "e", "d"});
    CHECK(plan.Measure() == std::vector<std::string>{"c", "f", "g", "b", "e", "d"});
    REQUIRE(plan.skipped.size() == 2);
    CHECK(plan.skipped[0].node() == "a");
    CHECK(plan.skipped[1].node() == "h");
  }
  SECTION("one stale: still three references, never fewer than the job has") {
    const StalePlan plan = PlanStale(Ask({"a", "b", "c", "d", "e"}), registry);
    CHECK(plan.stale == std::vector<std::string>{"c"});
    CHECK(plan.references.size() == 3);
  }
  SECTION("more stale than fresh: every fresh node, and the report says so") {
    const StalePlan plan = PlanStale(Ask({"c", "f", "g", "a"}), registry);
    CHECK(plan.references == std::vector<std::string>{"a"});
    CHECK(plan.decision ==
          "3 stale node(s) measured beside 1 known-good reference(s) (a), fewer than the 3 asked "
          "for: the request holds 1 known-good node(s); 0 vouched for");
  }
}

TEST_CASE("a pass that did not cover what this sweep measures vouches for nothing") {
  const auto registry = Registry({{"a", absl::Hours(1)}, {"b", absl::Hours(1)}});
  // A tcp_bw pass does not vouch for rdma_write_bw, nor for a rail it did not measure.
  CHECK(PlanStale(Ask({"a", "b"}, {v1::RDMA_WRITE_BW}), registry).stale.size() == 2);
  StaleAsk on_rail = Ask({"a", "b"});
  on_rail.rails = {"rail1"};
  CHECK(PlanStale(on_rail, registry).stale.size() == 2);
  // What needs no pair (a GPU copy) asks nothing of the pass.
  CHECK(PlanStale(Ask({"a", "b"}, {v1::TCP_BW, v1::GPU_COPY}), registry).stale.empty());
}

TEST_CASE("a node that lost its pass or went offline is measured again; max age 0: every node") {
  auto registry = Registry({{"a", absl::Hours(1)}, {"b", absl::Hours(1)}, {"c", absl::Hours(1)}});
  registry[0].good = false;
  registry[1].online = false;
  const StalePlan plan = PlanStale(Ask({}), registry);  // every node
  CHECK(plan.stale == std::vector<std::string>{"a", "b"});
  CHECK(plan.references == std::vector<std::string>{"c"});
  CHECK(plan.skipped.empty());
  StaleAsk zero = Ask({});
  zero.max_age = absl::ZeroDuration();
  CHECK(PlanStale(zero, Registry({{"a", absl::Seconds(1)}})).stale ==
        std::vector<std::string>{"a"});
}

}  // namespace fabricctl::controller
