// A lying agent and a stranger on the data plane, against a real controller, real agents and
// the real fabricctl on loopback. The liar is a gRPC AgentService written for this test: it
// registers as node "liar" and lies in its audits (findings naming other nodes, the whole
// cluster as a hostlist, kinds that are no kind, a newline to forge a drain line), in its
// figures (not a number, faster than any link), in its failure reasons (its servers' GPU
// memory) and in its inventory. The stranger connects to every new listening port on loopback
// and says goodbye without the run's secret. Plain text on loopback: what is tested here is
// what the controller takes from members, not who may be one (hostile_clients_test).
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/socket.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/server_builder.h"
#include "proto/agent.grpc.pb.h"
#include "proto/controller.grpc.pb.h"
#include "tests/subprocess.h"

namespace fabricctl::testing {
namespace {

const std::string kController = "controller/fabric-controller";
const std::string kAgent = "agent/fabric-agent";
const std::string kCli = "cli/fabricctl";

class LyingAgent final : public v1::AgentService::Service {
 public:
  std::string address;

  grpc::Status GetInventory(grpc::ServerContext*, const v1::GetInventoryRequest*,
                            v1::NodeInventory* inventory) override {
    inventory->set_node_name("liar");
    inventory->set_agent_address(address);
    inventory->set_hostname("liar\x1b[2J");
    return grpc::Status::OK;
  }
  grpc::Status RunAudits(grpc::ServerContext*, const v1::RunAuditsRequest*,
                         v1::RunAuditsResponse* response) override {
    v1::AuditResult* audit = response->add_audits();
    audit->set_audit("rdma_ports");
    audit->set_outcome(v1::AUDIT_RAN);
    auto claim = [&](const std::string& kind, const std::string& node) {
      v1::Finding* f = audit->add_findings();
      f->set_kind(kind);
      f->set_node(node);
      f->set_severity(v1::SEVERITY_CRITICAL);
      f->set_action(v1::ACTION_DRAIN);
      f->set_detail("port down\n\x1b[31mreally");
    };
    claim("link_down", "node-a");
    claim("link_down", "gpu[001-512]");
    claim("link_down\nnode-b\tlink_down", "node-b");
    claim("fabricctl_injected{a=\"b\",severity=\"critical\"} 1\n#", "node-b");
    claim("straggler_node", "node-c");
    return grpc::Status::OK;
  }
  grpc::Status StartProbeServer(grpc::ServerContext*, const v1::StartProbeServerRequest*,
                                v1::StartProbeServerResponse* response) override {
    response->mutable_endpoint()->set_address("127.0.0.1:9");  // nothing listens there
    return grpc::Status::OK;
  }
  grpc::Status RunProbeClient(grpc::ServerContext*, const v1::RunProbeClientRequest* request,
                              v1::RunProbeClientResponse* response) override {
    v1::ProbeResult* r = response->mutable_result();
    r->set_kind(request->spec().kind());
    if (calls_++ % 2 == 0) {
      r->set_outcome(v1::PROBE_FAILED);
      r->set_cause(v1::CAUSE_GPUDIRECT_UNAVAILABLE);
      r->set_failed_side(v1::SIDE_SERVER);
      r->set_reason("server: GPUDirect RDMA unavailable on GPU 0");
    } else {
      r->set_outcome(v1::PROBE_OK);
      r->add_bw()->set_bw_avg_gbps(std::nan(""));
      r->add_bw()->set_bw_avg_gbps(1e9);
    }
    return grpc::Status::OK;
  }
  grpc::Status StopProbeServer(grpc::ServerContext*, const v1::StopProbeServerRequest*,
                               v1::StopProbeServerResponse*) override {
    return grpc::Status::OK;
  }

 private:
  std::atomic<int> calls_{0};
};

struct Cluster {
  std::unique_ptr<Subprocess> controller;
  std::vector<std::unique_ptr<Subprocess>> agents;
  std::string address;
  std::set<uint16_t> daemon_ports;

  explicit Cluster(int real_agents) {
    // What these tests judge is what a liar's claims do; the honest agents' loopback figures
    // on a loaded machine scatter by a third, and their moderate bandwidth deficits and
    // retransmissions, real ones, are other tests' business: a deficit counts here from half
    // the typical figure (relative_bw 0.5, min_effect 0.5), loss from 0.5 % retransmitted (as
    // in the practice lab); the outlier, latency and tail rules stand.
    const std::string dir = TempDir("hostile_agent_db");
    std::ofstream(dir + "/fabricctl.yaml")
        << "thresholds:\n  relative_bw: 0.5\n  min_effect: 0.5\n  min_loss_rate: 0.005\n";
    controller = std::make_unique<Subprocess>(
        std::vector<std::string>{kController, "--config", dir + "/fabricctl.yaml", "--listen",
                                 "127.0.0.1:0", "--db", dir + "/c.db"});
    address = ListeningAddress(*controller);
    daemon_ports.insert(static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1))));
    for (int i = 0; i < real_agents; ++i) {
      agents.push_back(std::make_unique<Subprocess>(std::vector<std::string>{
          kAgent, "--controller", address, "--listen", "127.0.0.1:0", "--node-name",
          std::string("node-") + static_cast<char>('a' + i)}));
      const std::string a = ListeningAddress(*agents.back());
      daemon_ports.insert(static_cast<uint16_t>(std::stoi(a.substr(a.rfind(':') + 1))));
      REQUIRE(agents.back()->WaitForLine("registered with", absl::Seconds(15)));
    }
  }
  CommandResult Sweep(const std::string& format, std::vector<std::string> extra = {},
                      const std::string& probes = "tcp_bw") {
    std::vector<std::string> argv = {kCli,         "sweep", "--controller", address,
                                     "--probes",   probes,  "--sizes",      "64K",
                                     "--duration", "200ms", "--format",     format};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv, absl::Seconds(120));
  }
};

v1::Report ParseReport(const std::string& json) {
  v1::Report report;
  REQUIRE(google::protobuf::util::JsonStringToMessage(json, &report).ok());
  return report;
}

// Every TCP port listening on 127.0.0.1, from /proc/net/tcp.
std::set<uint16_t> ListeningPorts() {
  std::set<uint16_t> ports;
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 4 || f[3] != "0A") continue;  // LISTEN
    const std::string& local = f[1];             // 0100007F:1F90
    if (local.substr(0, 8) != "0100007F") continue;
    ports.insert(static_cast<uint16_t>(std::stoul(local.substr(9), nullptr, 16)));
  }
  return ports;
}

}  // namespace

TEST_CASE("a lying agent drains nobody else and names no series; its figures are not taken") {
  Cluster c(3);
  LyingAgent liar;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&liar);
  auto server = builder.BuildAndStart();
  REQUIRE(port > 0);
  liar.address = absl::StrCat("127.0.0.1:", port);
  {
    auto stub = v1::ControllerService::NewStub(
        grpc::CreateChannel(c.address, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::RegisterRequest request;
    request.mutable_inventory()->set_node_name("liar");
    request.mutable_inventory()->set_agent_address(liar.address);
    v1::RegisterResponse response;
    REQUIRE(stub->Register(&context, request, &response).ok());
  }

  CommandResult json = c.Sweep("json", {"--audits"});
  INFO(json.err);
  REQUIRE((json.exit_code == 1 || json.exit_code == 2));
  const v1::Report report = ParseReport(json.out);
  for (const auto& node : report.summary().drain()) CHECK(node == "liar");
  bool own_finding = false;
  for (const auto& f : report.findings()) {
    INFO(f.kind() << " " << f.node() << " " << f.detail());
    CHECK(f.kind().find("injected") == std::string::npos);
    if (f.kind() == "link_down" || f.kind() == "straggler_node") CHECK(f.node() == "liar");
    own_finding |= f.kind() == "link_down";
    CHECK(f.detail().find('\x1b') == std::string::npos);
  }
  CHECK(own_finding);  // what it said of itself stands
  // GPU memory over RDMA: the liar blames its servers' GPUs; no server says so of itself.
  // (These agents have no RDMA device, so their own pairs are skipped: only the drain
  // list of the first sweep is asserted.)
  CommandResult gpu = c.Sweep("json", {"--memory", "gpu"}, "rdma_write_bw");
  const v1::Report gpu_report = ParseReport(gpu.out);
  for (const auto& f : gpu_report.findings()) {
    INFO(f.kind() << " " << f.node() << " " << f.detail());
    CHECK(f.kind() != "gpudirect_unavailable");
  }
  for (const auto& pair : report.health().pairs()) {
    for (const auto& r : pair.results()) {
      for (const auto& p : r.bw()) CHECK((std::isfinite(p.bw_avg_gbps()) && p.bw_avg_gbps() < 1e5));
    }
  }
  CommandResult drain = c.Sweep("drain", {"--audits"});
  INFO(drain.out << drain.err);
  std::vector<std::string> lines = absl::StrSplit(drain.out, '\n', absl::SkipEmpty());
  for (const auto& line : lines) CHECK(line.rfind("liar\t", 0) == 0);
  CommandResult prom = c.Sweep("prom", {"--audits"});
  CHECK(prom.out.find("fabricctl_injected") == std::string::npos);
  CHECK(prom.out.find('\x1b') == std::string::npos);
  server->Shutdown();
}

TEST_CASE("a stranger greeting every probe server changes no verdict") {
  Cluster c(3);
  std::atomic<bool> done{false};
  std::atomic<int> greeted{0};
  std::thread stranger([&] {
    std::set<uint16_t> seen = c.daemon_ports;
    while (!done) {
      for (uint16_t port : ListeningPorts()) {
        if (!seen.insert(port).second) continue;
        auto fd = net::ConnectTcp("127.0.0.1", port, absl::Seconds(1));
        if (!fd.ok()) continue;
        v1::ProbeHello bye;
        bye.set_bye(true);
        bye.set_token("guessed");
        (void)net::SendFrame(fd->get(), bye, absl::Now() + absl::Seconds(1));
        ++greeted;
      }
      absl::SleepFor(absl::Milliseconds(2));
    }
  });
  CommandResult json = c.Sweep("json");
  done = true;
  stranger.join();
  INFO(json.err);
  CHECK(greeted > 0);
  REQUIRE(json.out.size() > 0);
  const v1::Report report = ParseReport(json.out);
  CHECK(report.health().pairs_size() == 3);
  for (const auto& pair : report.health().pairs()) {
    for (const auto& r : pair.results()) CHECK(r.outcome() == v1::PROBE_OK);
  }
  for (const auto& f : report.findings()) {
    CHECK(f.kind() != "link_unreachable");
    CHECK(f.kind() != "probe_failed");
  }
}

}  // namespace fabricctl::testing
