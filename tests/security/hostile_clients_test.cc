// Hostile clients against real daemons with mutual TLS from scripts/make-certs.sh: what an
// attacker holding a cluster certificate (or none) can try, and what must hold.
#include <signal.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <random>

#include "absl/time/clock.h"
#include "base/socket.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "proto/agent.grpc.pb.h"
#include "proto/controller.grpc.pb.h"
#include "tests/subprocess.h"
#include "tests/testing/testing.h"

namespace fabricctl::testing {
namespace {

const std::string kController = "controller/fabric-controller";
const std::string kAgent = "agent/fabric-agent";
const std::string kCli = "cli/fabricctl";

struct Cluster {
  std::string certs;
  std::unique_ptr<Subprocess> controller, agent;
  std::string address, agent_address, metrics_port;

  std::vector<std::string> Tls(const std::string& name) const {
    return {"--tls-cert", certs + "/" + name + ".pem",
            "--tls-key",  certs + "/" + name + ".key",
            "--tls-ca",   certs + "/ca.pem"};
  }
  std::shared_ptr<grpc::ChannelCredentials> Credentials(const std::string& name) const {
    return ClientCredentials(certs, name);
  }
  std::unique_ptr<v1::ControllerService::Stub> ControllerAs(const std::string& name) const {
    return v1::ControllerService::NewStub(grpc::CreateChannel(address, Credentials(name)));
  }
  int NodeCount() const {
    std::vector<std::string> argv = {kCli, "nodes", "--controller", address, "--format", "json"};
    for (const auto& a : Tls("fabricctl")) argv.push_back(a);
    CommandResult r = RunCommand(argv);
    size_t count = 0, at = 0;
    while ((at = r.out.find("\"node_name\"", at)) != std::string::npos) ++count, ++at;
    return static_cast<int>(count);
  }
};

Cluster Start() {
  Cluster c;
  c.certs = TempDir("hostile_certs");
  REQUIRE(RunCommand({"scripts/make-certs.sh", c.certs, "fabricctl", "intruder",
                      "node-b=DNS:node-z", "--loopback", "fabric-controller", "node-a"})
              .exit_code == 0);
  std::vector<std::string> argv = {
      kController,        "--listen",   "127.0.0.1:0", "--db", TempDir("hostile_db") + "/c.db",
      "--metrics-listen", "127.0.0.1:0"};
  for (const auto& a : c.Tls("fabric-controller")) argv.push_back(a);
  c.controller = std::make_unique<Subprocess>(argv);
  auto line = c.controller->WaitForLine("listening on ", absl::Seconds(15));
  REQUIRE(line.has_value());
  c.address = line->substr(line->rfind(' ') + 1);
  auto metrics = c.controller->WaitForLine("metrics on ", absl::Seconds(5));
  REQUIRE(metrics.has_value());
  c.metrics_port = metrics->substr(metrics->rfind(':') + 1);
  c.metrics_port = c.metrics_port.substr(0, c.metrics_port.find('/'));
  std::vector<std::string> agent = {kAgent,        "--controller", c.address, "--listen",
                                    "127.0.0.1:0", "--node-name",  "node-a"};
  for (const auto& a : c.Tls("node-a")) agent.push_back(a);
  c.agent = std::make_unique<Subprocess>(agent);
  auto agent_line = c.agent->WaitForLine("listening on ", absl::Seconds(15));
  REQUIRE(agent_line.has_value());
  c.agent_address = agent_line->substr(agent_line->rfind(' ') + 1);
  REQUIRE(c.agent->WaitForLine("registered with", absl::Seconds(15)));
  return c;
}

grpc::Status Register(v1::ControllerService::Stub& stub, const v1::NodeInventory& inventory) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::RegisterRequest request;
  *request.mutable_inventory() = inventory;
  v1::RegisterResponse response;
  return stub.Register(&context, request, &response);
}

}  // namespace

TEST_CASE("Hostile clients: impostors, oversized fields and messages, garbage bytes") {
  Cluster c = Start();
  REQUIRE(c.NodeCount() == 1);

  SECTION("a cluster certificate cannot register as another node") {
    auto stub = c.ControllerAs("intruder");
    v1::NodeInventory fake;
    fake.set_node_name("node-a");
    fake.set_agent_address("127.0.0.1:9");
    grpc::Status s = Register(*stub, fake);
    CHECK(s.error_code() == grpc::StatusCode::PERMISSION_DENIED);
    // ...but registers under its own name.
    fake.set_node_name("intruder");
    CHECK(Register(*stub, fake).ok());
    CHECK(c.NodeCount() == 2);
  }

  SECTION("a node's certificate registers under one name, its CN, never each SAN") {
    auto stub = c.ControllerAs("node-b");
    v1::NodeInventory inventory;
    inventory.set_agent_address("127.0.0.1:9");
    inventory.set_node_name("node-z");  // a SAN of the certificate, not its CN
    grpc::Status s = Register(*stub, inventory);
    CHECK(s.error_code() == grpc::StatusCode::PERMISSION_DENIED);
    CHECK(s.error_message().find("tls.node_names: cn") != std::string::npos);
    inventory.set_node_name("node-b");
    CHECK(Register(*stub, inventory).ok());
    CHECK(c.NodeCount() == 2);
  }

  SECTION("a node's certificate cannot remove nodes, nor register under a loopback name") {
    auto stub = c.ControllerAs("node-a");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::RemoveNodesRequest request;
    request.add_names("node-a");
    v1::RemoveNodesResponse response;
    CHECK(stub->RemoveNodes(&context, request, &response).error_code() ==
          grpc::StatusCode::PERMISSION_DENIED);
    CHECK(c.NodeCount() == 1);
    // make-certs.sh gives node certificates no loopback names unless asked.
    v1::NodeInventory loopback;
    loopback.set_agent_address("127.0.0.1:9");
    for (const char* name : {"localhost", "127.0.0.1"}) {
      loopback.set_node_name(name);
      CHECK(Register(*c.ControllerAs("intruder"), loopback).error_code() ==
            grpc::StatusCode::PERMISSION_DENIED);
    }
    // The administrator's certificate (fabricctl's) may.
    grpc::ClientContext admin;
    admin.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    CHECK(c.ControllerAs("fabricctl")->RemoveNodes(&admin, request, &response).ok());
    CHECK(c.NodeCount() == 0);
  }

  SECTION("a node's certificate cannot prune the history; the administrator's may") {
    v1::PruneHistoryRequest request;
    request.set_keep_sweeps(1);
    v1::PruneHistoryResponse response;
    grpc::ClientContext node;
    node.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status refused = c.ControllerAs("node-a")->PruneHistory(&node, request, &response);
    CHECK(refused.error_code() == grpc::StatusCode::PERMISSION_DENIED);
    CHECK(refused.error_message().find("administrator") != std::string::npos);
    grpc::ClientContext admin;
    admin.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    CHECK(c.ControllerAs("fabricctl")->PruneHistory(&admin, request, &response).ok());
  }

  SECTION("a node's certificate may not record an acceptance; an operator's may, as itself") {
    auto deadline = [] { return std::chrono::system_clock::now() + std::chrono::seconds(10); };
    v1::RecordAcceptanceRequest request;
    v1::Acceptance::NodeVerdict* verdict = request.mutable_acceptance()->add_nodes();
    verdict->set_node("node-a");
    verdict->set_accepted(true);
    v1::RecordAcceptanceResponse response;
    {
      grpc::ClientContext context;
      context.set_deadline(deadline());
      grpc::Status s = c.ControllerAs("node-a")->RecordAcceptance(&context, request, &response);
      CHECK(s.error_code() == grpc::StatusCode::PERMISSION_DENIED);
      CHECK(s.error_message().find("'node-a' may not record an acceptance") != std::string::npos);
    }
    {
      grpc::ClientContext context;
      context.set_deadline(deadline());
      v1::ListAcceptancesResponse listed;
      CHECK(c.ControllerAs("node-a")
                ->ListAcceptances(&context, v1::ListAcceptancesRequest(), &listed)
                .error_code() == grpc::StatusCode::PERMISSION_DENIED);
    }
    {
      grpc::ClientContext context;
      context.set_deadline(deadline());
      v1::RecordAcceptanceRequest unknown = request;
      unknown.mutable_acceptance()->add_sweep_ids(4242);
      grpc::Status s = c.ControllerAs("fabricctl")->RecordAcceptance(&context, unknown, &response);
      CHECK(s.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
      CHECK(s.error_message().find("no sweep 4242") != std::string::npos);
    }
    grpc::ClientContext record;
    record.set_deadline(deadline());
    REQUIRE(c.ControllerAs("fabricctl")->RecordAcceptance(&record, request, &response).ok());
    grpc::ClientContext list;
    list.set_deadline(deadline());
    v1::ListAcceptancesResponse listed;
    REQUIRE(c.ControllerAs("fabricctl")
                ->ListAcceptances(&list, v1::ListAcceptancesRequest(), &listed)
                .ok());
    REQUIRE(listed.acceptances_size() == 1);
    CHECK(listed.acceptances(0).acceptance_id() == response.acceptance_id());
    CHECK(listed.acceptances(0).recorded_by() == "fabricctl");
    // The verdict sent (node-a accepted, by no pass at all) is not what is recorded: the
    // controller judges over the sweeps named, and none measured node-a.
    CHECK(listed.acceptances(0).accepted_size() == 0);
    CHECK(response.acceptance().exit_code() == 3);
  }

  SECTION("a node's certificate may not sweep, list nodes or read reports and history") {
    // The flood that opened every Slurm prolog: any certificate of the cluster started or
    // queued sweeps. Now each is refused at once, naming the identity and the role it lacks.
    auto stub = c.ControllerAs("node-a");
    auto deadline = [] { return std::chrono::system_clock::now() + std::chrono::seconds(10); };
    auto refused = [](const grpc::Status& s, const std::string& what) {
      CHECK(s.error_code() == grpc::StatusCode::PERMISSION_DENIED);
      CHECK(s.error_message().find("'node-a' may not " + what) != std::string::npos);
      CHECK(s.error_message().find("operator") != std::string::npos);
    };
    {
      grpc::ClientContext context;
      context.set_deadline(deadline());
      v1::SweepRequest request;
      request.add_probes(v1::TCP_BW);
      request.mutable_wait()->set_seconds(3600);
      auto reader = stub->Sweep(&context, request);
      v1::SweepEvent event;
      CHECK_FALSE(reader->Read(&event));
      refused(reader->Finish(), "start a sweep");
    }
    {
      grpc::ClientContext context;
      context.set_deadline(deadline());
      v1::ListNodesResponse response;
      refused(stub->ListNodes(&context, v1::ListNodesRequest(), &response), "list the nodes");
    }
    {
      grpc::ClientContext context;
      context.set_deadline(deadline());
      v1::ListSweepsResponse response;
      refused(stub->ListSweeps(&context, v1::ListSweepsRequest(), &response), "read the history");
    }
    {
      grpc::ClientContext context;
      context.set_deadline(deadline());
      v1::Report response;
      refused(stub->GetReport(&context, v1::GetReportRequest(), &response), "read a report");
    }
    // fabricctl with a node's certificate says why, exit 3.
    std::vector<std::string> argv = {kCli,      "sweep",    "--controller",
                                     c.address, "--probes", "tcp_bw"};
    for (const auto& a : c.Tls("node-a")) argv.push_back(a);
    CommandResult sweep = RunCommand(argv);
    CHECK(sweep.exit_code == 3);
    CHECK(sweep.err.find("may not start a sweep") != std::string::npos);
    // An operator's certificate (fabricctl's) may: nodes listed.
    CHECK(c.NodeCount() == 1);
  }

  SECTION("a 3 MB field, and a 5 MiB message, are refused; the registry stays readable") {
    auto stub = c.ControllerAs("node-a");
    v1::NodeInventory big;
    big.set_node_name("node-a");
    big.set_agent_address(c.agent_address);
    big.set_hostname(std::string(3 << 20, 'h'));
    grpc::Status field = Register(*stub, big);
    CHECK(field.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(field.error_message().find("inventory.hostname is 3145728 bytes long") !=
          std::string::npos);
    big.set_hostname(std::string(5 << 20, 'h'));
    grpc::Status message = Register(*stub, big);
    CHECK(message.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
    CHECK(c.NodeCount() == 1);
  }

  SECTION("only the controller's certificate may run probes on an agent") {
    auto stub =
        v1::AgentService::NewStub(grpc::CreateChannel(c.agent_address, c.Credentials("intruder")));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::StartProbeServerRequest request;
    v1::StartProbeServerResponse response;
    CHECK(stub->StartProbeServer(&context, request, &response).error_code() ==
          grpc::StatusCode::PERMISSION_DENIED);
  }

  SECTION("garbage bytes on every port crash nothing") {
    std::mt19937 random(7);
    std::string junk(64 << 10, '\0');
    for (char& ch : junk) ch = static_cast<char>(random());
    for (const std::string& where :
         {c.address, c.agent_address, std::string("127.0.0.1:") + c.metrics_port}) {
      const std::string host = where.substr(0, where.rfind(':'));
      const auto port = static_cast<uint16_t>(std::stoi(where.substr(where.rfind(':') + 1)));
      for (int i = 0; i < 20; ++i) {
        auto fd = net::ConnectTcp(host, port, absl::Seconds(5));
        REQUIRE(fd.ok());
        (void)net::SendAll(fd->get(), junk.data(), junk.size() >> (i % 8),
                           absl::Now() + absl::Seconds(2));
      }
    }
    CHECK(c.NodeCount() == 1);  // the controller answers...
    // ...and neither daemon died (reaped if it did: a dead child is no longer "there")
    CHECK(c.controller->Running());
    CHECK(c.agent->Running());
  }

  SECTION("a client without a certificate, or with another CA's, gets nothing") {
    CHECK(RunCommand({kCli, "nodes", "--controller", c.address}).exit_code == 3);
    const std::string rogue = TempDir("hostile_rogue");
    REQUIRE(RunCommand({"scripts/make-certs.sh", rogue, "fabricctl"}).exit_code == 0);
    CHECK(RunCommand({kCli, "nodes", "--controller", c.address, "--tls-cert",
                      rogue + "/fabricctl.pem", "--tls-key", rogue + "/fabricctl.key", "--tls-ca",
                      c.certs + "/ca.pem"})
              .exit_code == 3);
  }
  c.agent->Kill(SIGTERM);
  c.controller->Kill(SIGTERM);
  CHECK(c.controller->Wait(absl::Seconds(10)) == 0);
}

}  // namespace fabricctl::testing
