// Known-good nodes through real daemons on loopback: a passing sweep vouches for its nodes; an
// agent that restarts loses that; `fabricctl sweep --max-age` measures again only that node,
// beside known-good references, and vouches for the rest in its report.
#include <catch2/catch.hpp>
#include <fstream>

#include "google/protobuf/util/json_util.h"
#include "proto/controller.pb.h"
#include "proto/report.pb.h"
#include "tests/subprocess.h"

namespace fabricctl::testing {
namespace {

const std::string kController = "controller/fabric-controller";
const std::string kAgent = "agent/fabric-agent";
const std::string kCli = "cli/fabricctl";

std::unique_ptr<Subprocess> StartAgent(const std::string& controller, const std::string& name) {
  auto agent = std::make_unique<Subprocess>(std::vector<std::string>{
      kAgent, "--controller", controller, "--listen", "127.0.0.1:0", "--node-name", name});
  REQUIRE(agent->WaitForLine("registered with", absl::Seconds(30)));
  return agent;
}

struct Swept {
  int exit_code = -1;
  v1::Report report;
  std::string err;
};

Swept Sweep(const std::string& controller, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {kCli,      "sweep",   "--controller", controller, "--probes",
                                   "tcp_lat", "--iters", "200",          "--format", "json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  CommandResult result = RunCommand(argv, absl::Seconds(120));
  Swept swept{result.exit_code, {}, result.err};
  INFO(result.err);
  INFO(result.out);
  REQUIRE(google::protobuf::util::JsonStringToMessage(result.out, &swept.report).ok());
  return swept;
}

std::vector<std::string> KindOf(const v1::Report& report, const std::string& kind) {
  std::vector<std::string> nodes;
  for (const auto& f : report.findings()) {
    if (f.kind() == kind) nodes.push_back(f.node());
  }
  return nodes;
}

v1::ListNodesResponse Nodes(const std::string& controller) {
  CommandResult result =
      RunCommand({kCli, "nodes", "--controller", controller, "--format", "json"});
  v1::ListNodesResponse nodes;
  REQUIRE(google::protobuf::util::JsonStringToMessage(result.out, &nodes).ok());
  return nodes;
}

}  // namespace

TEST_CASE("sweep --max-age measures again only what changed since a sweep passed it") {
  const std::string dir = TempDir("known-good");
  // The verdicts are not this test's subject: a loopback shared with other tests answers
  // latency probes with a loaded machine's jitter, which must not flag a pair here.
  std::ofstream(dir + "/fabricctl.yaml") << "thresholds:\n  relative_lat: 1000\n";
  Subprocess controller({kController, "--listen", "127.0.0.1:0", "--db", dir + "/fabric.db",
                         "--heartbeat-interval", "200ms", "--config", dir + "/fabricctl.yaml"});
  const std::string address = ListeningAddress(controller);
  std::map<std::string, std::unique_ptr<Subprocess>> agents;
  for (const char* name : {"node-a", "node-b", "node-c", "node-d"})
    agents[name] = StartAgent(address, name);

  // Nothing passed yet: --max-age measures every node.
  Swept first = Sweep(address, {"--max-age", "1h"});
  REQUIRE(first.exit_code == 0);
  CHECK(first.report.health().nodes_size() == 4);
  CHECK(KindOf(first.report, "known_good").empty());

  // Every node passed a minute ago: nothing to measure, each vouched for, exit 0.
  Swept vouched = Sweep(address, {"--max-age", "1h"});
  CHECK(vouched.exit_code == 0);
  CHECK(vouched.report.health().nodes_size() == 0);
  CHECK(KindOf(vouched.report, "known_good") ==
        std::vector<std::string>{"node-a", "node-b", "node-c", "node-d"});
  CHECK(vouched.err.find("nothing to measure") != std::string::npos);

  // node-c's agent restarts: the controller ends its known-good state at its registration.
  agents["node-c"].reset();
  agents["node-c"] = StartAgent(address, "node-c");
  const v1::ListNodesResponse nodes = Nodes(address);
  bool lost = false;
  for (const auto& node : nodes.nodes()) {
    if (node.inventory().node_name() != "node-c") continue;
    lost = node.known_good().has_lost();
    CHECK(node.known_good().lost_why() == "its agent restarted");
  }
  CHECK(lost);
  CommandResult listing = RunCommand({kCli, "nodes", "--controller", address});
  CHECK(listing.out.find("no longer known-good: node-c: its agent restarted") != std::string::npos);

  // The next sweep measures node-c beside two known-good references and vouches for the third.
  Swept narrowed = Sweep(address, {"--max-age", "1h"});
  CHECK(narrowed.exit_code == 0);
  CHECK(narrowed.report.health().nodes_size() == 3);
  CHECK(narrowed.report.sweep().nodes_size() == 3);
  CHECK(KindOf(narrowed.report, "known_good").size() == 1);
  CHECK(narrowed.err.find("measuring node-c beside ") != std::string::npos);
  // A JUnit report of the same counts the vouched node as a passing case.
  CommandResult junit =
      RunCommand({kCli, "sweep", "--controller", address, "--max-age", "1h", "--format", "junit"},
                 absl::Seconds(60));
  CHECK(junit.exit_code == 0);
  CHECK(junit.out.find("failures=\"0\"") != std::string::npos);
  CHECK(junit.out.find("known_good") == std::string::npos);
}

}  // namespace fabricctl::testing
