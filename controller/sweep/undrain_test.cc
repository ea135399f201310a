// undrain.enabled through the runner: a node one sweep drained, given back by a later sweep
// that passes it, and the drain forgotten.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "catch2/catch.hpp"
#include "controller/store/store.h"
#include "controller/sweep/fake_agent.h"
#include "controller/sweep/runner.h"
#include "report/findings.h"
#include "tests/testing/sweeps.h"

namespace fabricctl::controller::sweep {
namespace {

bool Lists(const google::protobuf::RepeatedPtrField<std::string>& list, const std::string& n) {
  return std::count(list.begin(), list.end(), n) > 0;
}

}  // namespace

TEST_CASE("undrain: a later sweep that passes a drained node gives it back, once") {
  auto store = OpenStore("undrain");
  auto agents = std::make_unique<FakeAgents>();
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  for (const auto& n : names) agents->Add(n);
  agents->FlapWatch("d", "eth1");  // its link watch saw eth1 fall twice
  FakeAgents* fake = agents.get();
  SweepOptions options;
  options.config = DefaultConfig();
  options.config.mutable_undrain()->set_enabled(true);
  options.config.mutable_undrain()->mutable_after()->set_seconds(0);
  options.measure_load = false;
  SweepRunner runner(store.get(), std::move(agents), options);
  v1::SweepRequest request;
  request.add_probes(v1::TCP_BW);

  auto first = runner.Run(request, Registry(names), nullptr);
  REQUIRE(first.ok());
  CHECK(Lists(first->summary().drain(), "d"));
  CHECK(first->summary().given_back_size() == 0);  // not the verdict that drained it

  // Still flapping: drained again, nothing given back; the drain counts from this verdict.
  auto again = runner.Run(request, Registry(names), nullptr);
  REQUIRE(again.ok());
  CHECK(again->summary().given_back_size() == 0);

  fake->FlapWatch("d", "");
  // A sweep that measured no pair with it (GPU copies only) re-measured nothing: kept.
  v1::SweepRequest copies;
  copies.add_probes(v1::GPU_COPY);
  auto unmeasured = runner.Run(copies, Registry(names), nullptr);
  REQUIRE(unmeasured.ok());
  CHECK(unmeasured->summary().given_back_size() == 0);
  auto quiet = runner.Run(request, Registry(names), nullptr);
  REQUIRE(quiet.ok());
  REQUIRE(quiet->summary().given_back_size() == 1);
  CHECK(quiet->summary().given_back(0) == "d");
  bool named = false;
  for (const auto& f : quiet->findings()) {
    if (f.kind() != "drain_given_back") continue;
    named = true;
    CHECK(f.node() == "d");
    CHECK(f.evidence().at("drained_in_sweep") == std::to_string(again->sweep().sweep_id()));
    CHECK(f.evidence().at("drained_for") == "link_flapping");
  }
  CHECK(named);
  CHECK(quiet->summary().worst_severity() == v1::SEVERITY_OK);

  // Given back once: the drain is forgotten.
  auto after = runner.Run(request, Registry(names), nullptr);
  REQUIRE(after.ok());
  CHECK(after->summary().given_back_size() == 0);
  auto drained = store->ListDrained();
  REQUIRE(drained.ok());
  CHECK(drained->empty());

  SECTION("undrain off: no drain is kept, so none is given back once it is turned on") {
    v1::Config off = options.config;
    off.mutable_undrain()->set_enabled(false);
    runner.SetConfig(off);
    fake->FlapWatch("d", "eth1");
    REQUIRE(runner.Run(request, Registry(names), nullptr).ok());
    drained = store->ListDrained();
    REQUIRE(drained.ok());
    CHECK(drained->empty());
  }
}

}  // namespace fabricctl::controller::sweep
