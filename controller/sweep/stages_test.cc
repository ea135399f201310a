// The sweep's stages against fake agents (fake_agent.h): no processes, no sockets; a real
// SQLite store in the test's temporary directory.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "base/config.h"
#include "catch2/catch.hpp"
#include "controller/store/store.h"
#include "controller/sweep/fake_agent.h"
#include "controller/sweep/fleet.h"
#include "controller/sweep/pairing.h"
#include "controller/sweep/plan.h"
#include "controller/sweep/rounds.h"
#include "controller/sweep/runner.h"
#include "controller/sweep/specs.h"
#include "report/findings.h"
#include "tests/testing/sweeps.h"

namespace fabricctl::controller::sweep {
namespace {

TEST_CASE("specs: defaults, the request's probes, and unknown probes refused") {
  v1::Config config = DefaultConfig();
  v1::SweepRequest request;
  auto specs = ResolveSpecs(request, config);
  REQUIRE(specs.ok());
  CHECK(specs->kinds == std::vector<v1::ProbeKind>{v1::TCP_BW, v1::TCP_LAT});
  CHECK(specs->bw_index == 0);
  CHECK(specs->lat_index == 1);
  CHECK_FALSE(specs->allreduce);

  request.add_probes(v1::ALLREDUCE);
  specs = ResolveSpecs(request, config);
  REQUIRE(specs.ok());
  CHECK(specs->allreduce);
  CHECK(specs->kinds.empty());

  config.mutable_sweep()->add_probes("no_such_probe");
  specs = ResolveSpecs(v1::SweepRequest(), config);
  REQUIRE_FALSE(specs.ok());
  CHECK(std::string(specs.status().message()).find("'no_such_probe'") != std::string::npos);
}

TEST_CASE("specs: flows from the fabric's equal-cost paths, and what each probe does with them") {
  // k x (1 - 1/k)^N <= 0.05: the expected number of paths a pair's flows miss.
  CHECK(DefaultFlows(0) == 1);
  CHECK(DefaultFlows(1) == 1);
  CHECK(DefaultFlows(2) == 6);
  CHECK(DefaultFlows(4) == 16);
  CHECK(DefaultFlows(8) == 39);
  CHECK(DefaultFlows(16) == kMaxFlows);
  v1::Config config = DefaultConfig();
  config.mutable_topology()->set_ecmp_paths(2);
  v1::SweepRequest request;
  for (auto kind : {v1::TCP_BW, v1::RDMA_WRITE_BW, v1::RDMA_READ_BW, v1::RDMA_SEND_BW})
    request.add_probes(kind);
  auto specs = ResolveSpecs(request, config);
  REQUIRE(specs.ok());
  CHECK(specs->flows == 6);
  REQUIRE(specs->specs.size() == 4);
  CHECK(specs->specs[0].tcp().streams() == 6);
  CHECK(specs->specs[0].tcp().trace_flows());
  for (int i = 1; i < 4; ++i) {
    CHECK(specs->specs[i].rdma().queue_pairs() == 6);
    // READ's data comes from the server's queue pairs: traced from here it would be the wrong
    // direction's path.
    CHECK(specs->specs[i].rdma().trace_flows() == (specs->specs[i].kind() != v1::RDMA_READ_BW));
  }
  request.set_flows(1);  // one flow: untraced
  specs = ResolveSpecs(request, config);
  REQUIRE(specs.ok());
  CHECK(specs->specs[0].tcp().streams() == 1);
  CHECK_FALSE(specs->specs[0].tcp().trace_flows());
  CHECK(specs->specs[1].rdma().queue_pairs() == 1);
  CHECK_FALSE(specs->specs[1].rdma().trace_flows());
}

TEST_CASE("fleet and plan: unreachable nodes are left out of the plan") {
  FakeAgents agents;
  for (const char* n : {"a", "b", "c", "d"}) agents.Add(n);
  agents.Kill("c");
  auto fleet = SelectNodes(v1::SweepRequest(), Registry({"a", "b", "c", "d"}));
  REQUIRE(fleet.ok());
  CheckReachable(agents, *fleet, absl::Seconds(1));
  CHECK(fleet->Live() == std::vector<uint32_t>{0, 1, 3});
  CHECK(fleet->nodes[2]->reason.find("c:7401") != std::string::npos);
  auto plan = PlanRounds(v1::SweepRequest(), DefaultConfig(), *fleet, absl::Now());
  REQUIRE(plan.ok());
  CHECK(CheckRounds(plan->rounds, 4).ok());
  for (const Round& round : plan->rounds) {
    for (const Pair& p : round) CHECK((p.first != 2 && p.second != 2));
  }

  v1::SweepRequest one;
  one.add_nodes("a");
  CHECK(SelectNodes(one, Registry({"a", "b"})).ok());  // one node: its own checks
  CHECK(absl::IsFailedPrecondition(SelectNodes(v1::SweepRequest(), Registry({})).status()));
  one.add_nodes("zz");  // named but not registered: in the fleet, found unreachable
  auto with_ghost = SelectNodes(one, Registry({"a", "b"}));
  REQUIRE(with_ghost.ok());
  REQUIRE(with_ghost->nodes.size() == 2);
  CHECK(with_ghost->nodes[1]->name == "zz");
  CHECK(with_ghost->nodes[1]->address.empty());
}

TEST_CASE("a healthy fleet: every pair once, no finding, servers stopped") {
  Harness h("healthy", {"a", "b", "c", "d"});
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(report->findings_size() == 0);
  CHECK(report->health().pairs_size() == 6);
  CHECK(report->summary().nodes_ok() == 4);
  CHECK(h.fake->Measurements("a", "b") == 2);  // both directions
  CHECK(h.fake->OpenServers() == 0);
}

TEST_CASE("node bandwidth asked of nodes with one rail: the report says it was not measured") {
  Harness h("node_bandwidth_one_rail", {"a", "b", "c"},
            [](SweepOptions& o) { o.config.mutable_sweep()->set_node_bandwidth(true); });
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(report->sweep().node_bandwidth() ==
        "node bandwidth not measured: 1 rail(s); the stage loads two or more at once");
  CHECK(report->findings_size() == 0);
  // Not asked: nothing said.
  Harness quiet("node_bandwidth_not_asked", {"a", "b"});
  report = quiet.Sweep();
  REQUIRE(report.ok());
  CHECK(report->sweep().node_bandwidth().empty());
}

TEST_CASE("a dead agent: node_unreachable, its pairs never measured") {
  Harness h("dead", {"a", "b", "c", "d"});
  h.fake->Kill("c");
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(Kinds(*report) == std::vector<std::string>{"node_unreachable:c"});
  CHECK(report->health().pairs_size() == 3);
  CHECK(report->summary().nodes_unknown() == 1);
  CHECK(h.fake->Measurements("a", "c") == 0);
}

TEST_CASE("a node named but never registered is node_unreachable, and the others are swept") {
  Harness h("unregistered", {"a", "b", "c"});
  v1::SweepRequest request;
  request.add_probes(v1::TCP_BW);
  for (const char* n : {"a", "b", "c", "ghost"}) request.add_nodes(n);
  auto report = h.runner->Run(request, Registry(h.names), nullptr);
  REQUIRE(report.ok());
  CHECK(Kinds(*report) == std::vector<std::string>{"node_unreachable:ghost"});
  REQUIRE(report->findings_size() == 1);
  CHECK(report->findings(0).detail().find("not registered with the controller") !=
        std::string::npos);
  CHECK(report->health().pairs_size() == 3);
}

TEST_CASE("a one-node sweep is judged by the node's audits; pair probes say why they did not run") {
  Harness h("one_node", {"solo"});
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(report->findings_size() == 0);
  CHECK(report->health().pairs_size() == 0);
  REQUIRE(report->health().nodes_size() == 1);
  const auto& audits = report->health().nodes(0).audits();
  REQUIRE(audits.size() == 3);
  CHECK(audits[0].audit() == "memlock");     // the fake agent's audit ran
  CHECK(audits[2].audit() == "link_watch");  // and its link watch, quiet
  CHECK(audits[1].audit() == "pair probes");
  CHECK(audits[1].outcome() == v1::AUDIT_SKIPPED);
  CHECK(audits[1].reason() ==
        "a pair probe needs two nodes; this sweep has one (solo): judged by its audits");
  CHECK(report->health().nodes(0).status() == v1::HEALTH_OK);
  // No node at all is still an error.
  Harness none("no_node", {});
  CHECK(absl::IsFailedPrecondition(none.Sweep().status()));
}

TEST_CASE("gpu_copy runs on every node beside its audits; asked alone, it measures no pair") {
  Harness h("gpu_copy", {"gpu", "cpu"});
  h.fake->SetGpus("gpu", 2);
  v1::SweepRequest request;
  request.add_probes(v1::GPU_COPY);
  auto report = h.runner->Run(request, Registry(h.names), nullptr);
  REQUIRE(report.ok());
  CHECK(report->health().pairs_size() == 0);
  CHECK(h.fake->Measurements("gpu", "cpu") == 0);
  CHECK(report->findings_size() == 0);
  std::map<std::string, v1::AuditResult> copies;
  for (const auto& node : report->health().nodes()) {
    for (const auto& audit : node.audits()) {
      if (audit.audit() == "gpu_copy") copies[node.node()] = audit;
    }
  }
  REQUIRE(copies.size() == 2);
  CHECK(copies["gpu"].outcome() == v1::AUDIT_RAN);
  CHECK(copies["gpu"].observed().size() == 2);
  CHECK(copies["gpu"].observed().at("GPU 1 67108864 B") == "H2D 25.0 GB/s, D2H 25.0 GB/s");
  CHECK(copies["cpu"].outcome() == v1::AUDIT_SKIPPED);
  CHECK(copies["cpu"].reason() == "the GPU driver sees no GPU");
}

TEST_CASE("GPU memory a node cannot register is gpudirect_unavailable on that node, nothing else") {
  for (const char* memory : {"gpu", "host,gpu"}) {
    Harness h(std::string("gpudirect_") + (memory[0] == 'g' ? "both" : "server"),
              {"a", "b", "c", "d"});
    h.fake->BreakGpudirect("c");
    v1::SweepRequest request;
    request.add_probes(v1::RDMA_WRITE_BW);
    request.set_memory(memory[0] == 'g' ? v1::MEMORY_GPU : v1::MEMORY_HOST);
    request.set_server_memory(v1::MEMORY_GPU);
    auto report = h.runner->Run(request, Registry(h.names), nullptr);
    REQUIRE(report.ok());
    INFO(memory);
    CHECK(Kinds(*report) == std::vector<std::string>{"gpudirect_unavailable:c"});
    REQUIRE(report->findings_size() == 1);
    CHECK(report->findings(0).detail().find("GPUDirect RDMA unavailable on GPU 0") !=
          std::string::npos);
    CHECK(report->findings(0).detail().find("server: ") == std::string::npos);
  }
}

TEST_CASE(
    "a node without RDMA: drained when RDMA is expected of it, a warning when its profile expects "
    "none") {
  for (const bool cpu_profile : {false, true}) {
    INFO("profile: " << cpu_profile);
    Harness h(cpu_profile ? "no_rdma_profile" : "no_rdma", {"a", "b", "c", "cpu-1"});
    h.fake->RemoveRdma("cpu-1");
    SweepOptions options;
    options.config = DefaultConfig();
    options.config.mutable_expect()->set_link_rate_gbps(10);
    if (cpu_profile) {
      v1::Profile* p = options.config.add_profiles();
      p->set_name("cpu");
      p->set_nodes("cpu-[1-8]");
    }
    auto agents = std::make_unique<FakeAgents>();
    FakeAgents* fake = agents.get();
    for (const auto& n : h.names) fake->Add(n);
    fake->RemoveRdma("cpu-1");
    options.measure_load = false;  // fake agents: their overlaps are the scheduler's (sweeps.h)
    SweepRunner runner(h.store.get(), std::move(agents), options);
    v1::SweepRequest request;
    request.add_probes(v1::RDMA_WRITE_BW);
    auto report = runner.Run(request, Registry(h.names), nullptr);
    REQUIRE(report.ok());
    // Only cpu-1 is named, and only for its missing device: its pairs are not TCP fallbacks.
    CHECK(Kinds(*report) == std::vector<std::string>{"rdma_unavailable:cpu-1"});
    REQUIRE(report->findings_size() == 1);
    const v1::Finding& f = report->findings(0);
    CHECK(f.severity() == (cpu_profile ? v1::SEVERITY_WARNING : v1::SEVERITY_CRITICAL));
    CHECK(f.action() == (cpu_profile ? v1::ACTION_INVESTIGATE : v1::ACTION_DRAIN));
    CHECK((f.detail().find("its profile cpu expects no RDMA") != std::string::npos) == cpu_profile);
    CHECK(report->summary().drain_size() == (cpu_profile ? 0 : 1));
  }
}

TEST_CASE("an agent that dies mid-sweep is found by the re-check, not blamed on its peers") {
  Harness h("dies", {"a", "b", "c", "d"});
  h.fake->KillAfter("b", 2);
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(Kinds(*report) == std::vector<std::string>{"node_unreachable:b"});
  CHECK(report->summary().drain_size() == 0);
}

TEST_CASE("each result records its concurrency: a full round's pairs two, a pair left alone one") {
  Harness h("load", {"a", "b", "c", "d"}, [](SweepOptions& o) { o.measure_load = true; });
  for (const char* n : {"a", "b", "c", "d"}) h.fake->SetDelay(n, absl::Milliseconds(200));
  // c and d cannot reach each other: the round that holds c-d measures its other pair alone,
  // the other rounds two pairs side by side.
  h.fake->DropLink("c", "d");
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(Kinds(*report) == std::vector<std::string>{"link_unreachable:c"});
  std::vector<float> loads;
  for (const auto& pair : report->health().pairs()) {
    for (const auto& r : pair.results()) {
      if (r.outcome() == v1::PROBE_OK && r.attempt() == 1) loads.push_back(r.concurrency());
    }
  }
  REQUIRE(!loads.empty());
  std::sort(loads.begin(), loads.end());
  INFO("lowest " << loads.front() << ", highest " << loads.back());
  CHECK(loads.front() >= 1.0f);
  CHECK(loads.front() < 1.2f);  // the pair beside c-d
  CHECK(loads.back() > 1.6f);   // two pairs' 200 ms halves side by side
}

TEST_CASE("a round-mate that waits out a dead path for longer loads nobody") {
  Harness h("deadpath", {"a", "b", "c", "d"}, [](SweepOptions& o) { o.measure_load = true; });
  // a's client halves take 600 ms, everyone else's 200 ms; a and b cannot reach each other,
  // so a's probes of b wait out their 600 ms and fail, moving nothing.
  for (const char* n : {"b", "c", "d"}) h.fake->SetDelay(n, absl::Milliseconds(200));
  h.fake->SetDelay("a", absl::Milliseconds(600));
  h.fake->DropLink("a", "b");
  auto report = h.Sweep();
  REQUIRE(report.ok());
  // The round where a-b first failed, and its other pair's figures there.
  uint32_t dead_round = UINT32_MAX;
  for (const auto& pair : report->health().pairs()) {
    for (const auto& r : pair.results()) {
      if (r.outcome() == v1::PROBE_TIMEOUT && r.attempt() == 1)
        dead_round = std::min(dead_round, r.round());
    }
  }
  REQUIRE(dead_round != UINT32_MAX);
  int beside = 0;
  for (const auto& pair : report->health().pairs()) {
    for (const auto& r : pair.results()) {
      if (r.outcome() != v1::PROBE_OK || r.round() != dead_round || r.attempt() != 1) continue;
      INFO(r.node() << " -> " << r.peer() << ": concurrency " << r.concurrency());
      CHECK(r.concurrency() < 1.1f);  // alone in all but name: the RPC beside it moved nothing
      ++beside;
    }
  }
  CHECK(beside > 0);
}

TEST_CASE("an agent that stops answering is asked once, then left out of the rounds to come") {
  Harness h("hung", {"a", "b", "c", "d", "e", "f"});
  h.fake->KillAfter("c", 1);
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(Kinds(*report) == std::vector<std::string>{"node_unreachable:c"});
  // The round it died in, and one reachability check; not one call per round of five.
  CHECK(h.fake->CallsToDead() <= 4);
}

TEST_CASE("a host that only sends slowly is named for its transmit side") {
  Harness h("egress", {"a", "b", "c", "d", "e"});
  h.fake->SetEgress("d", 1);
  auto report = h.Sweep();
  REQUIRE(report.ok());
  REQUIRE(Kinds(*report) == std::vector<std::string>{"straggler_node:d"});
  CHECK(report->findings(0).evidence().at("direction") == "transmit");
}

TEST_CASE(
    "a slow link is re-tested and named; a dead one is link_unreachable; neither blames a third") {
  Harness h("links", {"a", "b", "c", "d", "e", "f"});
  h.fake->SetLink("b", "e", 0.1);
  h.fake->DropLink("a", "f");
  auto report = h.Sweep();
  REQUIRE(report.ok());
  std::vector<std::string> kinds;
  for (const auto& f : report->findings())
    kinds.push_back(f.kind() + ":" + std::min(f.node(), f.peer()) + "-" +
                    std::max(f.node(), f.peer()));
  std::sort(kinds.begin(), kinds.end());
  CHECK(kinds == std::vector<std::string>{"link_unreachable:a-f", "slow_link:b-e"});
  for (const auto& pair : report->health().pairs()) {
    const bool flagged =
        (pair.node() == "b" && pair.peer() == "e") || (pair.node() == "e" && pair.peer() == "b") ||
        (pair.node() == "a" && pair.peer() == "f") || (pair.node() == "f" && pair.peer() == "a");
    CHECK(pair.attempts() == (flagged ? 3u : 1u));
  }
}

TEST_CASE("a busy agent is waited for within the pair's budget, not failed") {
  Harness h("busy", {"a", "b", "c", "d"});
  h.fake->Busy("b", 3);
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(report->findings_size() == 0);
}

TEST_CASE("a sweep whose client goes away stops its probes at once and is recorded interrupted") {
  Harness h("cancel", {"a", "b", "c", "d"});
  for (const char* n : {"a", "b", "c", "d"}) h.fake->SetDelay(n, absl::Seconds(30));
  std::atomic<bool> gone{false};
  absl::StatusOr<v1::Report> report;
  v1::SweepRequest request;
  request.add_probes(v1::TCP_BW);
  std::thread sweep([&] {
    report = h.runner->Run(request, Registry(h.names), nullptr, [&] { return gone.load(); });
  });
  while (h.fake->Running() == 0) absl::SleepFor(absl::Milliseconds(10));
  const absl::Time left = absl::Now();
  gone = true;
  sweep.join();
  CHECK(absl::Now() - left < absl::Seconds(1));
  CHECK(absl::IsCancelled(report.status()));
  CHECK(h.fake->Running() == 0);
  CHECK(h.fake->OpenServers() == 0);  // every server half stopped
  auto sweeps = h.store->ListSweeps(10);
  REQUIRE(sweeps.ok());
  REQUIRE(sweeps->size() == 1);
  CHECK((*sweeps)[0].state() == v1::SWEEP_INTERRUPTED);
  // The next sweep runs.
  for (const char* n : {"a", "b", "c", "d"}) h.fake->SetDelay(n, absl::ZeroDuration());
  CHECK(h.Sweep().ok());
}

namespace fabricctl::controller::sweep {
namespace {

// Agents of which one ("liar") holds a valid certificate and lies: its audits name other nodes
// (and the whole cluster as a hostlist) to drain, its client halves blame their servers' GPU
// memory, its figures are impossible on every other pair; another ("impostor") answers the
// reachability check as somebody else.
class LyingAgents : public FakeAgents {
 public:
  absl::StatusOr<v1::NodeInventory> GetInventory(const std::string& address,
                                                 absl::Duration deadline) override {
    auto inventory = FakeAgents::GetInventory(address, deadline);
    if (inventory.ok() && address == AddressOf("impostor")) inventory->set_node_name("a");
    return inventory;
  }
  absl::StatusOr<v1::RunAuditsResponse> RunAudits(const std::string& address,
                                                  const v1::RunAuditsRequest& request,
                                                  absl::Duration deadline) override {
    auto response = FakeAgents::RunAudits(address, request, deadline);
    if (!response.ok() || address != AddressOf("liar") || response->audits_size() == 0)
      return response;
    for (const char* victim : {"a", "b", "gpu[001-512]"}) {
      v1::Finding* f = response->mutable_audits(0)->add_findings();
      f->set_kind("link_down");
      f->set_node(victim);
      f->set_severity(v1::SEVERITY_CRITICAL);
      f->set_action(v1::ACTION_DRAIN);
    }
    v1::Finding* made_up = response->mutable_audits(0)->add_findings();
    made_up->set_kind("fabricctl_injected{a=\"b\"}");
    made_up->set_node("b");
    return response;
  }
  absl::StatusOr<v1::RunProbeClientResponse> RunProbeClient(
      const std::string& address, const v1::RunProbeClientRequest& request,
      absl::Duration deadline) override {
    auto response = FakeAgents::RunProbeClient(address, request, deadline);
    if (!response.ok() || address != AddressOf("liar")) return response;
    v1::ProbeResult* r = response->mutable_result();
    if (request.spec().rdma().memory() == v1::MEMORY_GPU) {
      r->clear_bw();
      r->set_outcome(v1::PROBE_FAILED);
      r->set_cause(v1::CAUSE_GPUDIRECT_UNAVAILABLE);
      r->set_failed_side(v1::SIDE_SERVER);
      r->set_reason("server: GPUDirect RDMA unavailable on GPU 0");
    } else if (r->bw_size() > 0) {
      r->mutable_bw(0)->set_bw_avg_gbps(std::nan(""));
    }
    return response;
  }
};

struct LyingHarness {
  explicit LyingHarness(const std::string& test) {
    store = OpenStore(test);
    auto agents = std::make_unique<LyingAgents>();
    for (const auto& n : names) agents->Add(n);
    SweepOptions options;
    options.config = DefaultConfig();
    options.measure_load = false;  // fake agents: their overlaps are the scheduler's (sweeps.h)
    runner = std::make_unique<SweepRunner>(store.get(), std::move(agents), options);
  }
  std::vector<std::string> names = {"a", "b", "c", "d", "liar"};
  std::unique_ptr<Store> store;
  std::unique_ptr<SweepRunner> runner;
};

TEST_CASE("a lying agent's audits drain nothing but possibly itself") {
  LyingHarness h("liar_audits");
  v1::SweepRequest request;
  request.add_probes(v1::TCP_BW);
  request.set_audits(true);
  auto report = h.runner->Run(request, Registry(h.names), nullptr);
  REQUIRE(report.ok());
  for (const auto& node : report->summary().drain()) CHECK(node == "liar");
  for (const auto& f : report->findings()) {
    CHECK(f.kind().find("injected") == std::string::npos);
    if (f.kind() == "link_down") CHECK(f.node() == "liar");
  }
}

TEST_CASE("impossible figures fail the liar's pairs; its word about a server's GPU is not taken") {
  LyingHarness h("liar_figures");
  v1::SweepRequest request;
  request.add_probes(v1::RDMA_WRITE_BW);
  request.set_memory(v1::MEMORY_GPU);
  auto report = h.runner->Run(request, Registry(h.names), nullptr);
  REQUIRE(report.ok());
  for (const auto& f : report->findings()) {
    INFO(f.kind() << " " << f.node() << " " << f.detail());
    CHECK(f.kind() != "gpudirect_unavailable");  // nobody's GPU memory failed by its own word
    CHECK((f.node() == "liar" || f.peer() == "liar"));
  }
  for (const auto& node : report->summary().drain()) CHECK(node == "liar");

  LyingHarness host("liar_nan");
  request.set_memory(v1::MEMORY_HOST);
  report = host.runner->Run(request, Registry(host.names), nullptr);
  REQUIRE(report.ok());
  for (const auto& pair : report->health().pairs()) {
    for (const auto& r : pair.results()) {
      if (r.node() == "liar") CHECK(r.cause() == v1::CAUSE_INVALID_FIGURES);
      for (const auto& p : r.bw()) CHECK(std::isfinite(p.bw_avg_gbps()));
    }
  }
  for (const auto& node : report->summary().drain()) CHECK(node == "liar");
}

TEST_CASE("an agent that answers as another node is not that node") {
  auto store = OpenStore("impostor");
  auto agents = std::make_unique<LyingAgents>();
  for (const char* n : {"a", "b", "impostor"}) agents->Add(n);
  SweepOptions options;
  options.config = DefaultConfig();
  options.measure_load = false;  // fake agents: their overlaps are the scheduler's (sweeps.h)
  SweepRunner runner(store.get(), std::move(agents), options);
  v1::SweepRequest request;
  request.add_probes(v1::TCP_BW);
  auto report = runner.Run(request, Registry({"a", "b", "impostor"}), nullptr);
  REQUIRE(report.ok());
  bool named = false;
  for (const auto& f : report->findings()) {
    if (f.kind() == "node_unreachable" && f.node() == "impostor") {
      named = true;
      CHECK(f.detail().find("answers as 'a'") != std::string::npos);
    }
  }
  CHECK(named);
}

}  // namespace
}  // namespace fabricctl::controller::sweep

TEST_CASE("a sweep asks every node for its link watch, and a flapping end is the pair's evidence") {
  auto store = OpenStore("link_watch");
  auto agents = std::make_unique<FakeAgents>();
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  for (const auto& n : names) agents->Add(n);
  agents->DropLink("c", "d");
  agents->FlapWatch("d", "eth1");  // its watch saw eth1 fall twice, between or during probes
  FakeAgents* fake = agents.get();
  SweepOptions options;
  options.config = DefaultConfig();
  options.measure_load = false;
  SweepRunner runner(store.get(), std::move(agents), options);
  v1::SweepRequest request;
  request.add_probes(v1::TCP_BW);
  auto report = runner.Run(request, Registry(names), nullptr);
  REQUIRE(report.ok());
  CHECK(fake->WatchAsked() == 4);
  bool flapping = false, noted = false;
  for (const auto& f : report->findings()) {
    INFO(f.kind() << " " << f.node() << " " << f.peer() << " " << f.detail());
    if (f.kind() == "link_flapping") {
      flapping = true;
      CHECK(f.node() == "d");
      CHECK(f.action() == v1::ACTION_DRAIN);
    }
    if (!f.peer().empty() && (f.node() == "d" || f.peer() == "d")) {
      noted = true;
      CHECK(f.evidence().at("link_flapping") == "d eth1");
    }
  }
  CHECK(flapping);
  CHECK(noted);
  CHECK(std::count(report->summary().drain().begin(), report->summary().drain().end(), "d") == 1);
}

TEST_CASE("breaker.window: the second of two small verdicts within it is held with the first") {
  auto run = [](const std::string& test, int64_t window_s) {
    Harness h(test, {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, [&](SweepOptions& o) {
      o.config.mutable_breaker()->set_max_share(0.15);
      o.config.mutable_breaker()->set_min_nodes(1);
      o.config.mutable_breaker()->mutable_window()->set_seconds(window_s);
    });
    h.fake->SetEgress("d", 1);
    h.fake->SetEgress("i", 1);
    std::vector<std::vector<std::string>> drains;
    for (const auto& job : {std::vector<std::string>{"a", "b", "c", "d", "e"},
                            std::vector<std::string>{"f", "g", "h", "i", "j"}}) {
      v1::SweepRequest request;
      request.add_probes(v1::TCP_BW);
      for (const auto& n : job) request.add_nodes(n);
      auto report = h.runner->Run(request, Registry(h.names), nullptr);
      REQUIRE(report.ok());
      drains.push_back({report->summary().drain().begin(), report->summary().drain().end()});
    }
    return drains;
  };
  // Each alone: one of five, no more than min_nodes: drained.
  CHECK(run("breaker_alone", 0) == std::vector<std::vector<std::string>>{{"d"}, {"i"}});
  // Within one window: two of ten together, more than both: the second is held.
  CHECK(run("breaker_window", 3600) == std::vector<std::vector<std::string>>{{"d"}, {}});
}

}  // namespace
}  // namespace fabricctl::controller::sweep
