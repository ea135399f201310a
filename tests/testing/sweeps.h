#ifndef FABRICCTL_TESTS_TESTING_SWEEPS_H_
#define FABRICCTL_TESTS_TESTING_SWEEPS_H_

// The sweep harness of //tests:testing: a real SQLite store in the test's temporary directory, a
// fleet of fake agents (controller/sweep/fake_agent.h) and a runner over them.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/config.h"
#include "catch2/catch.hpp"
#include "controller/store/store.h"
#include "controller/sweep/fake_agent.h"
#include "controller/sweep/runner.h"
#include "tests/testing/testing.h"

namespace fabricctl::controller::sweep {

inline std::unique_ptr<Store> OpenStore(const std::string& name) {
  return testing::FreshStore(name + ".db");
}

inline std::vector<StoredNode> Registry(const std::vector<std::string>& names) {
  std::vector<StoredNode> out;
  for (const auto& name : names) {
    StoredNode node;
    node.inventory.set_node_name(name);
    node.inventory.set_agent_address(FakeAgents::AddressOf(name));
    out.push_back(node);
  }
  return out;
}

// A sweep over `names` with the fake agents; `fake` stays usable by the test.
struct Harness {
  // `tweak`, when given, changes the runner's options before it is made.
  explicit Harness(const std::string& test, std::vector<std::string> names,
                   const std::function<void(SweepOptions&)>& tweak = nullptr)
      : names(std::move(names)) {
    store = OpenStore(test);
    auto agents = std::make_unique<FakeAgents>();
    for (const auto& n : this->names) agents->Add(n);
    fake = agents.get();
    SweepOptions options;
    options.config = DefaultConfig();
    options.config.mutable_sweep()->set_retests(2);
    // Fake agents answer at once: a budget in time would leave re-tests to chance (under a
    // sanitizer one re-test round can take longer than ten measuring rounds did), so none is
    // set; the budget's own test sets one, with agents that take their time.
    options.config.mutable_sweep()->set_retest_budget(kUnboundedRetests);
    // Fake agents answer in milliseconds: how their halves overlap is the scheduler's doing,
    // not a load, so no concurrency is recorded (a test of the load itself sets it back).
    options.measure_load = false;
    if (tweak) tweak(options);
    runner = std::make_unique<SweepRunner>(store.get(), std::move(agents), options);
  }
  absl::StatusOr<v1::Report> Sweep(v1::Pairing pairing = v1::PAIRING_FULL) {
    v1::SweepRequest request;
    request.set_pairing(pairing);
    request.add_probes(v1::TCP_BW);
    return runner->Run(request, Registry(names), nullptr);
  }
  std::vector<std::string> names;
  std::unique_ptr<Store> store;
  FakeAgents* fake = nullptr;
  std::unique_ptr<SweepRunner> runner;
};

inline std::vector<std::string> Kinds(const v1::Report& report) {
  std::vector<std::string> kinds;
  for (const auto& f : report.findings()) kinds.push_back(f.kind() + ":" + f.node());
  return kinds;
}

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_TESTS_TESTING_SWEEPS_H_
