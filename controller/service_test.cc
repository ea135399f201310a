#include "controller/service.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include "report/findings.h"
#include "tests/testing/testing.h"

namespace fabricctl::controller {
namespace {

std::unique_ptr<Store> FreshStore() { return testing::FreshStore("registry.db"); }

v1::RegisterRequest Registration(const std::string& name) {
  v1::RegisterRequest request;
  request.mutable_inventory()->set_node_name(name);
  request.mutable_inventory()->set_agent_address("127.0.0.1:7401");
  return request;
}

}  // namespace

TEST_CASE("Registration, heartbeats and staleness follow the injected clock") {
  auto store = FreshStore();
  absl::Time now = absl::FromUnixSeconds(1'700'000'000);
  RegistryOptions options;
  options.heartbeat_interval = absl::Seconds(1);
  options.stale_after = absl::Seconds(3);
  options.now = [&] { return now; };
  ControllerServiceImpl service(store.get(), options);
  grpc::ServerContext context;

  v1::RegisterResponse registered;
  auto request = Registration("node-1");
  REQUIRE(service.Register(&context, &request, &registered).ok());
  CHECK(registered.heartbeat_interval().seconds() == 1);

  v1::ListNodesRequest list;
  v1::ListNodesResponse nodes;
  REQUIRE(service.ListNodes(&context, &list, &nodes).ok());
  REQUIRE(nodes.nodes_size() == 1);
  CHECK(nodes.nodes(0).state() == v1::NODE_ONLINE);
  CHECK(nodes.stale_after().seconds() == 3);

  now += absl::Seconds(4);
  nodes.Clear();
  REQUIRE(service.ListNodes(&context, &list, &nodes).ok());
  CHECK(nodes.nodes(0).state() == v1::NODE_STALE);

  v1::HeartbeatRequest beat;
  beat.set_node_name("node-1");
  v1::HeartbeatResponse beat_response;
  REQUIRE(service.Heartbeat(&context, &beat, &beat_response).ok());
  CHECK(beat_response.known());
  nodes.Clear();
  REQUIRE(service.ListNodes(&context, &list, &nodes).ok());
  CHECK(nodes.nodes(0).state() == v1::NODE_ONLINE);
  CHECK(nodes.nodes(0).last_seen().seconds() == 1'700'000'004);
  CHECK(nodes.nodes(0).first_seen().seconds() == 1'700'000'000);

  beat.set_node_name("node-unknown");
  REQUIRE(service.Heartbeat(&context, &beat, &beat_response).ok());
  CHECK_FALSE(beat_response.known());
}

TEST_CASE("A bad registration is refused with INVALID_ARGUMENT and stores nothing") {
  auto store = FreshStore();
  ControllerServiceImpl service(store.get(), RegistryOptions{});
  grpc::ServerContext context;
  v1::RegisterResponse response;

  auto check_refused = [&](v1::RegisterRequest request, const std::string& needle) {
    grpc::Status status = service.Register(&context, &request, &response);
    CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(status.error_message().find(needle) != std::string::npos);
  };
  check_refused(Registration(""), "inventory.node_name is empty");
  check_refused(Registration("bad name"), "may hold only");
  check_refused(Registration(std::string(300, 'a')), "longer than 253");
  auto no_port = Registration("n1");
  no_port.mutable_inventory()->set_agent_address("127.0.0.1");
  check_refused(no_port, "inventory.agent_address");
  auto port_zero = Registration("n1");
  port_zero.mutable_inventory()->set_agent_address("127.0.0.1:0");
  check_refused(port_zero, "port 0");
  auto too_many = Registration("n1");
  for (int i = 0; i < 65; ++i) too_many.mutable_inventory()->add_gpus();
  check_refused(too_many, "inventory.gpus has 65 entries; at most 64");
  auto huge_hostname = Registration("n1");
  huge_hostname.mutable_inventory()->set_hostname(std::string(3 << 20, 'h'));
  check_refused(huge_hostname, "inventory.hostname is 3145728 bytes long; at most 4096");
  auto huge_label = Registration("n1");
  (*huge_label.mutable_inventory()->mutable_labels())["rack"] = std::string(5000, 'r');
  check_refused(huge_label, "inventory.labels.value is 5000 bytes long");
  auto huge_nested = Registration("n1");
  huge_nested.mutable_inventory()->add_interfaces()->add_addresses(std::string(5000, '1'));
  check_refused(huge_nested, "inventory.interfaces.addresses is 5000 bytes long");

  auto nodes = store->ListNodes({});
  REQUIRE(nodes.ok());
  CHECK(nodes->empty());
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {

TEST_CASE("Nodes can be removed, and a silent one is forgotten after forget_after") {
  auto store = FreshStore();
  absl::Time now = absl::FromUnixSeconds(1'700'000'000);
  RegistryOptions options;
  options.stale_after = absl::Seconds(30);
  options.forget_after = absl::Hours(1);
  options.now = [&] { return now; };
  ControllerServiceImpl service(store.get(), options);
  grpc::ServerContext context;
  v1::RegisterResponse registered;
  for (const char* name : {"node-1", "node-2", "node-3"}) {
    auto request = Registration(name);
    REQUIRE(service.Register(&context, &request, &registered).ok());
  }

  v1::RemoveNodesRequest remove;
  remove.add_names("node-2");
  remove.add_names("node-9");
  v1::RemoveNodesResponse removed;
  REQUIRE(service.RemoveNodes(&context, &remove, &removed).ok());
  REQUIRE(removed.removed_size() == 1);
  CHECK(removed.removed(0) == "node-2");
  v1::RemoveNodesRequest none;
  CHECK(service.RemoveNodes(&context, &none, &removed).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);

  // node-1 keeps heartbeating; node-3 falls silent and is forgotten after an hour.
  now += absl::Minutes(59);
  v1::HeartbeatRequest beat;
  beat.set_node_name("node-1");
  v1::HeartbeatResponse known;
  REQUIRE(service.Heartbeat(&context, &beat, &known).ok());
  now += absl::Minutes(2);
  v1::ListNodesRequest list;
  v1::ListNodesResponse listed;
  REQUIRE(service.ListNodes(&context, &list, &listed).ok());
  REQUIRE(listed.nodes_size() == 1);
  CHECK(listed.nodes(0).inventory().node_name() == "node-1");
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {

TEST_CASE("A registration is stored with printable text only") {
  auto store = FreshStore();
  ControllerServiceImpl service(store.get(), RegistryOptions{});
  grpc::ServerContext context;
  v1::RegisterResponse response;
  auto request = Registration("node-1");
  request.mutable_inventory()->set_hostname("node-1\x1b[2J\xff");
  (*request.mutable_inventory()->mutable_labels())["rack"] = "r1\nfabricctl_injected 1";
  REQUIRE(service.Register(&context, &request, &response).ok());
  v1::ListNodesRequest list;
  v1::ListNodesResponse nodes;
  REQUIRE(service.ListNodes(&context, &list, &nodes).ok());
  REQUIRE(nodes.nodes_size() == 1);
  const auto& inventory = nodes.nodes(0).inventory();
  CHECK(inventory.hostname().find('\x1b') == std::string::npos);
  CHECK(inventory.hostname().find('\xff') == std::string::npos);
  CHECK(inventory.labels().at("rack").find('\n') == std::string::npos);
}

TEST_CASE("ListNodes with a name given twice lists the node once") {
  auto store = FreshStore();
  ControllerServiceImpl service(store.get(), RegistryOptions{});
  grpc::ServerContext context;
  v1::RegisterResponse registered;
  auto request = Registration("node-1");
  REQUIRE(service.Register(&context, &request, &registered).ok());
  v1::ListNodesRequest list;
  list.add_names("node-1");
  list.add_names("node-1");
  v1::ListNodesResponse nodes;
  REQUIRE(service.ListNodes(&context, &list, &nodes).ok());
  CHECK(nodes.nodes_size() == 1);
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {

TEST_CASE("A controller on plain-text loopback refuses an agent it would dial off loopback") {
  auto store = FreshStore();
  RegistryOptions options;
  options.loopback_only = true;
  ControllerServiceImpl service(store.get(), options);
  grpc::ServerContext context;
  v1::RegisterResponse registered;
  auto local = Registration("node-1");
  CHECK(service.Register(&context, &local, &registered).ok());
  auto remote = Registration("node-2");
  remote.mutable_inventory()->set_agent_address("198.18.0.7:7401");
  const grpc::Status refused = service.Register(&context, &remote, &registered);
  CHECK(refused.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(refused.error_message().find("198.18.0.7:7401 needs mutual TLS") != std::string::npos);
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {
namespace {

// A completed sweep that passed `node`.
void Pass(Store& store, const std::string& node) {
  auto id = store.CreateSweep({}, absl::Now());
  REQUIRE(id.ok());
  v1::Report report;
  report.mutable_sweep()->set_sweep_id(*id);
  report.mutable_sweep()->set_state(v1::SWEEP_COMPLETED);
  // It starts after the registration (a loss before a sweep's start does not outlive it).
  report.mutable_sweep()->mutable_started()->set_seconds(absl::ToUnixSeconds(absl::Now()) + 1);
  report.mutable_sweep()->mutable_finished()->set_seconds(absl::ToUnixSeconds(absl::Now()) + 2);
  v1::NodeHealth* health = report.mutable_health()->add_nodes();
  health->set_node(node);
  health->set_status(v1::HEALTH_OK);
  health->mutable_pass()->set_earned(true);  // as the verdict would decide it
  REQUIRE(store.FinishSweep(*id, report).ok());
}

v1::KnownGood KnownGoodOf(ControllerServiceImpl& service, const std::string& node) {
  grpc::ServerContext context;
  v1::ListNodesRequest list;
  list.add_names(node);
  v1::ListNodesResponse nodes;
  REQUIRE(service.ListNodes(&context, &list, &nodes).ok());
  REQUIRE(nodes.nodes_size() == 1);
  return nodes.nodes(0).known_good();
}

}  // namespace

TEST_CASE(
    "A node stays known-good through heartbeats and re-registration until something changes") {
  auto store = FreshStore();
  ControllerServiceImpl service(store.get(), RegistryOptions{});
  grpc::ServerContext context;
  auto request = Registration("node-1");
  request.mutable_inventory()->set_agent_started_unix_ms(1000);
  v1::RegisterResponse registered;
  REQUIRE(service.Register(&context, &request, &registered).ok());
  CHECK_FALSE(KnownGoodOf(service, "node-1").has_passed());  // never passed
  {
    v1::HeartbeatRequest first;
    first.set_node_name("node-1");
    v1::HeartbeatResponse none;
    REQUIRE(service.Heartbeat(&context, &first, &none).ok());
    CHECK_FALSE(none.has_known_good());
  }
  Pass(*store, "node-1");

  v1::HeartbeatRequest beat;
  beat.set_node_name("node-1");
  beat.set_link_state("eth0 up 100000 Mb/s");
  v1::HeartbeatResponse known;
  REQUIRE(service.Heartbeat(&context, &beat, &known).ok());
  REQUIRE(service.Heartbeat(&context, &beat, &known).ok());
  // The answer tells the agent its own state (for the health check that gives drains back).
  CHECK(known.known_good().sweep_id() == KnownGoodOf(service, "node-1").sweep_id());
  CHECK(known.known_good().has_passed());
  CHECK_FALSE(known.known_good().has_lost());
  // The same agent registering again (the controller was away) changes nothing.
  REQUIRE(service.Register(&context, &request, &registered).ok());
  CHECK(KnownGoodOf(service, "node-1").has_passed());
  CHECK_FALSE(KnownGoodOf(service, "node-1").has_lost());

  SECTION("a link's state changes between heartbeats") {
    beat.set_link_state("eth0 down 100000 Mb/s");
    REQUIRE(service.Heartbeat(&context, &beat, &known).ok());
    const v1::KnownGood lost = KnownGoodOf(service, "node-1");
    CHECK(lost.has_lost());
    CHECK(lost.lost_why() == "a link changed: eth0 up 100000 Mb/s -> eth0 down 100000 Mb/s");
    // The same heartbeat's answer already says so.
    CHECK(known.known_good().lost_why() == lost.lost_why());
  }
  SECTION("its link watch finds errors or a flap") {
    v1::Finding* other = beat.add_watch();  // not the watch's kind: ignored
    other->set_kind("drain_given_back");
    other->set_severity(v1::SEVERITY_CRITICAL);
    REQUIRE(service.Heartbeat(&context, &beat, &known).ok());
    CHECK_FALSE(KnownGoodOf(service, "node-1").has_lost());
    v1::Finding* errors = beat.add_watch();
    errors->set_kind("link_errors");
    errors->set_severity(v1::SEVERITY_WARNING);
    errors->set_device("mlx5_0:1");
    REQUIRE(service.Heartbeat(&context, &beat, &known).ok());
    CHECK(KnownGoodOf(service, "node-1").lost_why() == "its link watch: link_errors on mlx5_0:1");
  }
  SECTION("it is forgotten and registers again: no pass of its own") {
    v1::RemoveNodesRequest remove;
    remove.add_names("node-1");
    v1::RemoveNodesResponse removed;
    REQUIRE(service.RemoveNodes(&context, &remove, &removed).ok());
    REQUIRE(service.Register(&context, &request, &registered).ok());
    CHECK_FALSE(KnownGoodOf(service, "node-1").has_passed());
  }
  SECTION("its agent restarts") {
    request.mutable_inventory()->set_agent_started_unix_ms(2000);
    REQUIRE(service.Register(&context, &request, &registered).ok());
    CHECK(KnownGoodOf(service, "node-1").lost_why() == "its agent restarted");
    // The next passing sweep makes it known-good again.
    Pass(*store, "node-1");
    CHECK_FALSE(KnownGoodOf(service, "node-1").has_lost());
  }
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {

TEST_CASE("An acceptance is recorded with who and when, naming only sweeps history holds") {
  auto store = FreshStore();
  const absl::Time now = absl::FromUnixSeconds(1'700'000'000);
  RegistryOptions options;
  options.now = [&] { return now; };
  ControllerServiceImpl service(store.get(), options);
  grpc::ServerContext context;  // plain text: no identity, every call allowed
  auto sweep = store->CreateSweep({}, now);
  REQUIRE(sweep.ok());
  // The pass: node-5 and node-6 each measured with both references, node-6 a straggler.
  v1::Report pass;
  pass.mutable_sweep()->set_sweep_id(*sweep);
  pass.mutable_sweep()->set_state(v1::SWEEP_COMPLETED);
  for (const char* name : {"node-5", "node-6", "ref-1", "ref-2"})
    pass.mutable_health()->add_nodes()->set_node(name);
  for (const char* name : {"node-5", "node-6"}) {
    for (const char* ref : {"ref-1", "ref-2"}) {
      v1::PairHealth* p = pass.mutable_health()->add_pairs();
      p->set_node(name);
      p->set_peer(ref);
      p->set_bw_gbps(name == std::string("node-6") ? 3 : 10);
    }
  }
  *pass.add_findings() = report::Make(report::kind::kStragglerNode, "node-6", "slow");
  REQUIRE(store->FinishSweep(*sweep, pass).ok());

  // The client's verdict is the opposite of what was measured: the controller's stands.
  v1::RecordAcceptanceRequest request;
  for (const char* name : {"node-5", "node-6"}) {
    v1::Acceptance::NodeVerdict* node = request.mutable_acceptance()->add_nodes();
    node->set_node(name);
    node->set_accepted(std::string(name) == "node-6");
  }
  request.mutable_acceptance()->add_reference_nodes("ref-1");
  request.mutable_acceptance()->add_reference_nodes("ref-2");
  request.mutable_acceptance()->add_sweep_ids(*sweep);
  Pass(*store, "node-6");  // known-good by a later sweep, say
  v1::RecordAcceptanceResponse recorded;
  REQUIRE(service.RecordAcceptance(&context, &request, &recorded).ok());
  CHECK(recorded.acceptance_id() > 0);
  REQUIRE(recorded.acceptance().nodes_size() == 2);
  CHECK(recorded.acceptance().nodes(0).accepted());
  CHECK_FALSE(recorded.acceptance().nodes(1).accepted());
  CHECK(recorded.acceptance().exit_code() == 2);
  // A sweep that never finished judges nothing: incomplete, nobody accepted.
  auto running = store->CreateSweep({}, now);
  REQUIRE(running.ok());
  auto unfinished = request;
  unfinished.mutable_acceptance()->clear_sweep_ids();
  unfinished.mutable_acceptance()->add_sweep_ids(*running);
  unfinished.mutable_acceptance()->set_incomplete("pass 2:\x1b[2J gone");
  v1::RecordAcceptanceResponse cut;
  REQUIRE(service.RecordAcceptance(&context, &unfinished, &cut).ok());
  CHECK(cut.acceptance().exit_code() == 3);
  CHECK_FALSE(cut.acceptance().nodes(0).accepted());
  CHECK(cut.acceptance().incomplete().find("is not in history") != std::string::npos);
  // The node it rejected is known-good no longer.
  auto passes = store->ListKnownGood({"node-6"});
  REQUIRE(passes.ok());
  REQUIRE(passes->size() == 1);
  CHECK_FALSE(passes->front().Good());
  CHECK(passes->front().lost_why == "fabricctl accept rejected it (acceptance " +
                                        std::to_string(recorded.acceptance_id()) + ")");

  v1::ListAcceptancesRequest list;
  v1::ListAcceptancesResponse listed;
  REQUIRE(service.ListAcceptances(&context, &list, &listed).ok());
  REQUIRE(listed.acceptances_size() == 2);
  const v1::AcceptanceRecord& record = listed.acceptances(1);
  CHECK(record.acceptance_id() == recorded.acceptance_id());
  CHECK(record.recorded().seconds() == 1'700'000'000);
  CHECK(record.recorded_by() == "plain text");
  REQUIRE(record.accepted_size() == 1);
  CHECK(record.accepted(0) == "node-5");
  REQUIRE(record.rejected_size() == 1);
  CHECK(record.rejected(0) == "node-6");
  CHECK(listed.acceptances(0).incomplete().find('\x1b') == std::string::npos);
  CHECK(listed.acceptances(0).incomplete().find("gone; sweep") != std::string::npos);
  CHECK_FALSE(record.has_acceptance());
  CHECK(listed.next_before_acceptance_id() == 0);
  list.set_with_verdicts(true);
  listed.Clear();
  REQUIRE(service.ListAcceptances(&context, &list, &listed).ok());
  REQUIRE(listed.acceptances_size() == 2);
  CHECK(listed.acceptances(1).acceptance().nodes_size() == 2);

  auto refused = [&](v1::RecordAcceptanceRequest bad, const std::string& needle) {
    grpc::Status status = service.RecordAcceptance(&context, &bad, &recorded);
    CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(status.error_message().find(needle) != std::string::npos);
  };
  auto unknown = request;
  unknown.mutable_acceptance()->add_sweep_ids(*sweep + 100);
  refused(unknown, "history holds no sweep " + std::to_string(*sweep + 100));
  auto too_many = request;
  for (int i = 0; i < 1000; ++i) too_many.mutable_acceptance()->add_sweep_ids(*sweep);
  refused(too_many, "acceptance.sweep_ids has 1001 entries; at most 1000");
  auto twice = request;
  twice.mutable_acceptance()->add_sweep_ids(*sweep);
  refused(twice, "is named twice");
  auto huge = request;
  huge.mutable_acceptance()->set_incomplete(std::string(5 << 20, 'x'));
  refused(huge, "bytes serialised; at most 4194304");
  auto bad_name = request;
  bad_name.mutable_acceptance()->mutable_nodes(0)->set_node("node 5");
  refused(bad_name, "may hold only");
  // None of them was recorded.
  list.set_with_verdicts(false);
  listed.Clear();
  REQUIRE(service.ListAcceptances(&context, &list, &listed).ok());
  CHECK(listed.acceptances_size() == 2);
}

}  // namespace fabricctl::controller
