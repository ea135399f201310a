// Real processes on loopback: a controller and agents register, heartbeat, go stale, survive a
// controller restart, and refuse clients without a certificate the cluster's CA signed.
// Ports are chosen by the OS; the daemons print the bound address on stdout, which the test
// reads instead of sleeping.
#include <signal.h>

#include <catch2/catch.hpp>

#include "absl/time/clock.h"
#include "base/version.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "proto/agent.grpc.pb.h"
#include "proto/controller.grpc.pb.h"
#include "proto/controller.pb.h"
#include "proto/report.pb.h"
#include "tests/subprocess.h"

namespace fabricctl::testing {
namespace {

const std::string kController = "controller/fabric-controller";
const std::string kAgent = "agent/fabric-agent";
const std::string kCli = "cli/fabricctl";

// A controller asking for a heartbeat every 200 ms and calling a node stale after a second.
std::unique_ptr<Subprocess> StartController(const std::string& listen, const std::string& db,
                                            std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {
      kController, "--listen",      listen, "--db", db, "--heartbeat-interval",
      "200ms",     "--stale-after", "1s"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<Subprocess>(argv);
}

std::unique_ptr<Subprocess> StartAgent(const std::string& controller, const std::string& name,
                                       std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {kAgent,        "--controller", controller, "--listen",
                                   "127.0.0.1:0", "--node-name",  name};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<Subprocess>(argv);
}

struct Listing {
  int exit_code;
  v1::ListNodesResponse nodes;
  std::string err;
};

Listing ListNodes(const std::string& controller, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {kCli, "nodes", "--controller", controller, "--format", "json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  CommandResult result = RunCommand(argv);
  Listing listing{result.exit_code, {}, result.err};
  if (result.exit_code == 0 || result.exit_code == 1) {
    REQUIRE(google::protobuf::util::JsonStringToMessage(result.out, &listing.nodes).ok());
  }
  return listing;
}

v1::NodeState StateOf(const v1::ListNodesResponse& nodes, const std::string& name) {
  for (const auto& node : nodes.nodes()) {
    if (node.inventory().node_name() == name) return node.state();
  }
  return v1::NODE_STATE_UNSPECIFIED;
}

// Polls `fabricctl nodes` until `done` holds or `timeout` passes. Staleness is a matter of
// time by definition; this waits for it to be observed, bounded.
Listing ListUntil(const std::string& controller, absl::Duration timeout,
                  const std::function<bool(const Listing&)>& done) {
  const absl::Time deadline = absl::Now() + timeout;
  Listing listing = ListNodes(controller);
  while (!done(listing) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(100));
    listing = ListNodes(controller);
  }
  return listing;
}

}  // namespace

TEST_CASE("Agents register, are listed, go stale, and the registry survives a restart") {
  const std::string dir = TempDir("registry");
  const std::string db = dir + "/fabric.db";
  auto controller = StartController("127.0.0.1:0", db);
  const std::string address = ListeningAddress(*controller);

  auto agent_a = StartAgent(address, "node-a");
  auto agent_b = StartAgent(address, "node-b");
  REQUIRE(agent_a->WaitForLine("registered with", absl::Seconds(15)));
  REQUIRE(agent_b->WaitForLine("registered with", absl::Seconds(15)));

  Listing listing = ListNodes(address);
  REQUIRE(listing.exit_code == 0);
  REQUIRE(listing.nodes.nodes_size() == 2);
  CHECK(listing.nodes.nodes(0).inventory().node_name() == "node-a");
  CHECK(listing.nodes.nodes(1).inventory().node_name() == "node-b");
  CHECK(StateOf(listing.nodes, "node-a") == v1::NODE_ONLINE);
  CHECK(StateOf(listing.nodes, "node-b") == v1::NODE_ONLINE);
  CHECK(listing.nodes.nodes(0).inventory().agent_address().rfind("127.0.0.1:", 0) == 0);

  // An agent that dies stops heartbeating and is listed as stale (exit code 1, WARNING).
  agent_b->Kill(SIGKILL);
  agent_b->Wait(absl::Seconds(5));
  listing = ListUntil(address, absl::Seconds(10), [](const Listing& l) {
    return StateOf(l.nodes, "node-b") == v1::NODE_STALE;
  });
  CHECK(StateOf(listing.nodes, "node-b") == v1::NODE_STALE);
  CHECK(StateOf(listing.nodes, "node-a") == v1::NODE_ONLINE);
  CHECK(listing.exit_code == 1);
  CHECK(listing.err.find("node-b") != std::string::npos);

  // The controller restarts on the same port and database: both nodes are still known, and
  // the surviving agent reconnects by itself.
  controller->Kill(SIGTERM);
  CHECK(controller->Wait(absl::Seconds(10)) == 0);
  controller = StartController(address, db);
  CHECK(ListeningAddress(*controller) == address);
  listing = ListUntil(address, absl::Seconds(15), [](const Listing& l) {
    return StateOf(l.nodes, "node-a") == v1::NODE_ONLINE &&
           StateOf(l.nodes, "node-b") == v1::NODE_STALE;
  });
  REQUIRE(listing.nodes.nodes_size() == 2);
  CHECK(StateOf(listing.nodes, "node-a") == v1::NODE_ONLINE);
  CHECK(StateOf(listing.nodes, "node-b") == v1::NODE_STALE);

  // A default sweep includes the stale node and reports it, not a clean pass.
  CommandResult swept = RunCommand(
      {kCli, "sweep", "--controller", address, "--probes", "tcp_lat", "--format", "json"});
  INFO(swept.err);
  CHECK(swept.exit_code == 2);
  v1::Report report;
  REQUIRE(google::protobuf::util::JsonStringToMessage(swept.out, &report).ok());
  REQUIRE(report.findings_size() == 1);
  CHECK(report.findings(0).kind() == "node_unreachable");
  CHECK(report.findings(0).node() == "node-b");

  // `nodes remove` forgets it: the next listing has node-a alone and exits 0.
  CommandResult removed = RunCommand({kCli, "nodes", "remove", "node-b", "--controller", address});
  CHECK(removed.exit_code == 0);
  CHECK(removed.out == "removed node-b\n");
  listing = ListNodes(address);
  CHECK(listing.exit_code == 0);
  CHECK(listing.nodes.nodes_size() == 1);
  CommandResult unknown = RunCommand({kCli, "nodes", "remove", "node-z", "--controller", address});
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err == "WARNING: not registered: node-z\n");
}

TEST_CASE("A controller that is not running is UNKNOWN (3) within the deadline") {
  absl::Time start = absl::Now();
  CommandResult result =
      RunCommand({kCli, "nodes", "--controller", "127.0.0.1:1", "--timeout", "2s"});
  CHECK(result.exit_code == 3);
  CHECK(absl::Now() - start < absl::Seconds(5));
  CHECK(result.err.find("controller 127.0.0.1:1 unreachable") != std::string::npos);
}

TEST_CASE("Mutual TLS: only certificates the cluster CA signed get in") {
  const std::string certs = TempDir("certs");
  const std::string rogue = TempDir("rogue");
  REQUIRE(RunCommand({"scripts/make-certs.sh", certs, "fabricctl", "--loopback",
                      "fabric-controller", "node-a"})
              .exit_code == 0);
  REQUIRE(
      RunCommand({"scripts/make-certs.sh", rogue, "fabricctl", "fabric-controller"}).exit_code ==
      0);
  auto tls = [&](const std::string& dir, const std::string& name) {
    return std::vector<std::string>{"--tls-cert", dir + "/" + name + ".pem",
                                    "--tls-key",  dir + "/" + name + ".key",
                                    "--tls-ca",   certs + "/ca.pem"};
  };
  auto controller = StartController("127.0.0.1:0", TempDir("tls") + "/fabric.db",
                                    tls(certs, "fabric-controller"));
  const std::string address = ListeningAddress(*controller);
  auto agent = StartAgent(address, "node-a", tls(certs, "node-a"));
  const std::string agent_address = ListeningAddress(*agent);
  REQUIRE(agent->WaitForLine("registered with", absl::Seconds(15)));

  Listing trusted = ListNodes(address, tls(certs, "fabricctl"));
  CHECK(trusted.exit_code == 0);
  CHECK(trusted.nodes.nodes_size() == 1);

  // A certificate from another CA, and no certificate at all, are refused.
  Listing forged = ListNodes(address, tls(rogue, "fabricctl"));
  CHECK(forged.exit_code == 3);
  CHECK(forged.nodes.nodes_size() == 0);
  Listing plain = ListNodes(address);
  CHECK(plain.exit_code == 3);

  // The agent answers the controller's identity only: a valid cluster certificate that is not
  // the controller's is denied.
  auto call_agent = [&](const std::string& name) {
    auto stub = v1::AgentService::NewStub(
        grpc::CreateChannel(agent_address, ClientCredentials(certs, name)));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::NodeInventory inventory;
    grpc::Status status = stub->GetInventory(&context, v1::GetInventoryRequest(), &inventory);
    return std::make_pair(status, inventory);
  };
  auto [denied, nothing] = call_agent("fabricctl");
  CHECK(denied.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(nothing.node_name().empty());
  auto [allowed, inventory] = call_agent("fabric-controller");
  CHECK(allowed.ok());
  CHECK(inventory.node_name() == "node-a");

  // A node registers only under a name its certificate carries: another valid certificate
  // cannot re-register node-a with its own address.
  auto register_as = [&](const std::string& cert, const std::string& node) {
    auto stub = v1::ControllerService::NewStub(
        grpc::CreateChannel(address, ClientCredentials(certs, cert)));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::RegisterRequest request;
    request.mutable_inventory()->set_node_name(node);
    request.mutable_inventory()->set_agent_address("127.0.0.1:9");
    v1::RegisterResponse response;
    return stub->Register(&context, request, &response);
  };
  grpc::Status takeover = register_as("fabricctl", "node-a");
  CHECK(takeover.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(takeover.error_message().find("is not 'node-a'") != std::string::npos);
  Listing after = ListNodes(address, tls(certs, "fabricctl"));
  REQUIRE(after.nodes.nodes_size() == 1);
  CHECK(after.nodes.nodes(0).inventory().agent_address() == agent_address);
}

TEST_CASE("Plain text off loopback needs --insecure") {
  CommandResult refused =
      RunCommand({kAgent, "--listen", "0.0.0.0:0", "--node-name", "n1"}, absl::Seconds(10));
  CHECK(refused.exit_code == 3);
  CHECK(refused.err.find("plain text on non-loopback address 0.0.0.0") != std::string::npos);

  Subprocess allowed({kAgent, "--listen", "0.0.0.0:0", "--node-name", "n1", "--insecure"});
  CHECK(allowed.WaitForLine("listening on", absl::Seconds(15)).has_value());
  allowed.Kill(SIGTERM);
  CHECK(allowed.Wait(absl::Seconds(10)) == 0);
}

TEST_CASE("A bad configuration file stops every binary with file, line and key") {
  const std::string dir = TempDir("badconfig");
  const std::string path = dir + "/cluster.yaml";
  REQUIRE(RunCommand({"/bin/sh", "-c",
                      "printf 'expect:\\n  link_rate_gbps: 400\\n  mtu: 9000\\n' > " + path})
              .exit_code == 0);
  for (const auto& argv : std::vector<std::vector<std::string>>{
           {kController, "--listen", "127.0.0.1:0", "--db", dir + "/c.db", "--config", path},
           {kAgent, "--listen", "127.0.0.1:0", "--config", path},
           {kCli, "nodes", "--config", path}}) {
    CommandResult result = RunCommand(argv, absl::Seconds(10));
    INFO(argv[0]);
    CHECK(result.exit_code == 3);
    CHECK(result.err.find(path + ":3: expect.mtu: unknown key") != std::string::npos);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
  }
}

TEST_CASE("--version and --help answer and exit 0; bad flags exit 3") {
  for (const auto& binary : {kController, kAgent, kCli}) {
    CommandResult version = RunCommand({binary, "--version"});
    CHECK(version.exit_code == 0);
    CHECK(version.out.find(kVersion) != std::string::npos);
    CHECK(RunCommand({binary, "--help"}).exit_code == 0);
    CHECK(RunCommand({binary, "--no-such-flag"}).exit_code == 3);
  }
}

}  // namespace fabricctl::testing
