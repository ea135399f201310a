// Reports of any size reach fabricctl: a full sweep of 200 nodes and a stored report of 10,000
// nodes go through the real controller service over real gRPC to the real client code of
// `fabricctl sweep`, `map` and `history` (the agents are the in-memory fakes the stage tests
// use: 200 real agents would not add to what is tested here, the size of what comes back).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/config.h"
#include "catch2/catch.hpp"
#include "cli/history.h"
#include "cli/sweep.h"
#include "controller/service.h"
#include "controller/sweep/fake_agent.h"
#include "controller/sweep/runner.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/server_builder.h"
#include "tests/testing/testing.h"

namespace fabricctl {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

v1::Report ParseJson(const std::string& text) {
  v1::Report report;
  google::protobuf::util::JsonParseOptions options;
  REQUIRE(google::protobuf::util::JsonStringToMessage(text, &report, options).ok());
  return report;
}

// A controller service on a real gRPC server on loopback, sweeping fake agents.
struct Harness {
  std::unique_ptr<controller::Store> store;
  controller::sweep::FakeAgents* agents = nullptr;
  std::unique_ptr<controller::SweepRunner> sweeps;
  std::unique_ptr<controller::ControllerServiceImpl> service;
  std::unique_ptr<grpc::Server> server;
  cli::ControllerTarget target;

  explicit Harness(int nodes) {
    const std::string db = testing::TestPath("large.db");
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((db + suffix).c_str());
    auto opened = controller::Store::Open(db);
    REQUIRE(opened.ok());
    store = *std::move(opened);
    auto fake = std::make_unique<controller::sweep::FakeAgents>();
    agents = fake.get();
    for (int i = 0; i < nodes; ++i) {
      const std::string name = absl::StrCat("node-", i);
      agents->Add(name, 100);
      v1::NodeInventory inventory;
      inventory.set_node_name(name);
      inventory.set_agent_address(controller::sweep::FakeAgents::AddressOf(name));
      REQUIRE(store->UpsertNode(inventory, absl::Now()).ok());
    }
    controller::SweepOptions options;
    options.config = DefaultConfig();
    options.config.mutable_sweep()->set_retests(0);
    options.measure_load = false;  // fake agents: their overlaps are the scheduler's (sweeps.h)
    sweeps = std::make_unique<controller::SweepRunner>(store.get(), std::move(fake), options);
    service = std::make_unique<controller::ControllerServiceImpl>(
        store.get(), controller::RegistryOptions(), sweeps.get());
    int port = 0;
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service.get());
    server = builder.BuildAndStart();
    REQUIRE(port > 0);
    target.address = absl::StrCat("127.0.0.1:", port);
    target.timeout = absl::Seconds(30);
  }
  ~Harness() { server->Shutdown(); }
};

TEST_CASE("a full sweep of 200 nodes delivers its report to fabricctl sweep") {
  Harness h(200);
  cli::SweepCommandOptions options;
  options.controller = h.target;
  options.pairing = "full";
  options.probes = "tcp_bw";
  options.format = "json";
  options.output = testing::TestPath("sweep200.json");
  std::ostringstream err;
  const int code = cli::RunSweepCommand(options, err);
  INFO(err.str());
  REQUIRE(code == 0);
  const std::string text = Slurp(options.output);
  CHECK(text.size() > (4u << 20));  // past gRPC's default 4 MiB for one message
  const v1::Report report = ParseJson(text);
  CHECK(report.health().nodes_size() == 200);
  CHECK(report.health().pairs_size() == 200 * 199 / 2);
  CHECK(report.summary().nodes_ok() == 200);
}

TEST_CASE(
    "a stored report of 10,000 nodes comes back whole through fabricctl map, and history pages") {
  Harness h(2);
  v1::SweepRequest request;
  v1::Report big;
  big.set_schema("fabricctl.report/v1");
  big.set_source("sweep");
  for (int i = 0; i < 10000; ++i) {
    v1::NodeHealth* n = big.mutable_health()->add_nodes();
    n->set_node(absl::StrCat("gpu", i));
    n->set_status(v1::HEALTH_OK);
    request.add_nodes(n->node());
  }
  for (int i = 0; i < 30000; ++i) {  // each node with 6 peers, as a sampled sweep measures
    v1::PairHealth* p = big.mutable_health()->add_pairs();
    p->set_node(absl::StrCat("gpu", i % 10000));
    p->set_peer(absl::StrCat("gpu", (i % 10000 + 1 + i / 10000) % 10000));
    p->set_status(v1::HEALTH_OK);
    p->set_bw_gbps(390.5);
    p->set_bw_reverse_gbps(391.5);
    p->set_lat_us(2.5);
    // What a measured pair carries: each direction's result with its figures and spec.
    for (const bool reverse : {false, true}) {
      v1::ProbeResult* r = p->add_results();
      r->set_kind(v1::RDMA_WRITE_BW);
      r->set_outcome(v1::PROBE_OK);
      r->set_node(reverse ? p->peer() : p->node());
      r->set_peer(reverse ? p->node() : p->peer());
      r->set_device("mlx5_0:1");
      v1::BwPoint* point = r->add_bw();
      point->set_size_bytes(1 << 20);
      point->set_iterations(100000);
      point->set_bw_avg_gbps(390.5);
      point->set_msg_rate_mpps(0.0465);
      r->mutable_effective_spec()->set_kind(v1::RDMA_WRITE_BW);
      r->mutable_effective_spec()->mutable_measurement()->add_sizes_bytes(1 << 20);
      r->mutable_effective_spec()->mutable_rdma()->set_device("mlx5_0");
    }
  }
  for (int s = 0; s < 40; ++s) {  // the last one is the one `map` reads; the others only list
    auto id = h.store->CreateSweep(request, absl::Now());
    REQUIRE(id.ok());
    big.mutable_sweep()->set_sweep_id(*id);
    big.mutable_sweep()->set_state(v1::SWEEP_COMPLETED);
    *big.mutable_sweep()->mutable_nodes() = request.nodes();
    v1::Report listed;
    *listed.mutable_sweep() = big.sweep();
    REQUIRE(h.store->FinishSweep(*id, s == 39 ? big : listed).ok());
  }
  REQUIRE(big.ByteSizeLong() > (4u << 20));

  const std::string out = testing::TestPath("map.json");
  std::ostringstream err;
  REQUIRE(cli::RunMapCommand(h.target, 0, "json", out, err) == 0);
  const v1::Report back = ParseJson(Slurp(out));
  CHECK(back.health().nodes_size() == 10000);
  CHECK(back.health().pairs_size() == 30000);
  CHECK(back.health().pairs(29999).peer() == "gpu2");
  CHECK(back.SerializeAsString().size() == big.ByteSizeLong());

  // 40 sweeps of 10,000 node names each is about 3.5 MB: more than one page.
  std::ostringstream history, history_err;
  REQUIRE(cli::RunHistoryCommand(h.target, 40, "text", history, history_err) == 0);
  int rows = 0;
  for (char c : history.str()) rows += c == '\n';
  CHECK(rows == 41);  // a header and 40 sweeps
}

}  // namespace
}  // namespace fabricctl
