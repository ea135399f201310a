// `fabricctl sweep --probes allreduce` with NCCL across real agents and a real controller on
// loopback. There is no GPU here: the agents load the CUDA and NCCL test stand-ins of
// tests/fake_gpu (through $FABRIC_CUDA_LIBRARY and $FABRIC_NCCL_LIBRARY, inherited from this
// test), which reduce through files and write NCCL's INFO lines. What runs for real is
// fabricctl's side: the back-end choice, ranks per GPU, the unique id through the controller,
// the per-rank logs and their findings, the combined figures and the exit code.
#include <catch2/catch.hpp>
#include <climits>
#include <cstdlib>

#include "google/protobuf/util/json_util.h"
#include "proto/controller.pb.h"
#include "proto/report.pb.h"
#include "tests/subprocess.h"

namespace fabricctl::testing {
namespace {

const std::string kController = "controller/fabric-controller";
const std::string kAgent = "agent/fabric-agent";
const std::string kCli = "cli/fabricctl";

std::string Absolute(const std::string& path) {
  char buffer[PATH_MAX];
  REQUIRE(::realpath(path.c_str(), buffer) != nullptr);
  return buffer;
}

// An agent started with `env` added to this process's environment (which it inherits).
std::unique_ptr<Subprocess> StartAgent(const std::string& controller, const std::string& name,
                                       const std::vector<std::pair<std::string, std::string>>& env,
                                       const std::string& logs) {
  for (const auto& [key, value] : env) ::setenv(key.c_str(), value.c_str(), 1);
  auto agent = std::make_unique<Subprocess>(
      std::vector<std::string>{kAgent, "--controller", controller, "--listen", "127.0.0.1:0",
                               "--node-name", name, "--nccl-log-dir", logs});
  for (const auto& [key, value] : env) ::unsetenv(key.c_str());
  REQUIRE(agent->WaitForLine("registered with", absl::Seconds(30)));
  return agent;
}

struct Sweep {
  int exit_code = -1;
  v1::Report report;
  std::string err;
};

Sweep RunSweep(const std::string& controller, const std::string& backend) {
  CommandResult result =
      RunCommand({kCli, "sweep", "--controller", controller, "--probes", "allreduce", "--sizes",
                  "64K", "--iters", "3", "--allreduce-backend", backend, "--format", "json"},
                 absl::Seconds(120));
  Sweep sweep{result.exit_code, {}, result.err};
  INFO(result.err);
  REQUIRE(google::protobuf::util::JsonStringToMessage(result.out, &sweep.report).ok());
  REQUIRE(sweep.report.health().collectives_size() == 1);
  return sweep;
}

std::vector<const v1::Finding*> FindingsOf(const v1::Report& report, const std::string& kind) {
  std::vector<const v1::Finding*> out;
  for (const auto& f : report.findings()) {
    if (f.kind() == kind) out.push_back(&f);
  }
  return out;
}

}  // namespace

TEST_CASE(
    "sweep --probes allreduce: NCCL on every GPU, a socket fallback named, the ring otherwise") {
  const std::string dir = TempDir("nccl-sweep");
  auto controller = std::make_unique<Subprocess>(
      std::vector<std::string>{kController, "--listen", "127.0.0.1:0", "--db", dir + "/fabric.db"});
  const std::string address = ListeningAddress(*controller);
  const std::vector<std::pair<std::string, std::string>> gpu_node = {
      {"FABRIC_CUDA_LIBRARY", Absolute("tests/fake_gpu/libfake_cuda.so")},
      {"FABRIC_NCCL_LIBRARY", Absolute("tests/fake_gpu/libfake_nccl.so")}};
  auto with = [&](std::vector<std::pair<std::string, std::string>> extra) {
    extra.insert(extra.end(), gpu_node.begin(), gpu_node.end());
    return extra;
  };
  // node-a has two GPUs; node-c's environment turns NCCL's InfiniBand off, as a stray
  // NCCL_IB_DISABLE=1 in a job's environment does.
  auto a = StartAgent(address, "node-a", with({{"FABRIC_FAKE_GPUS", "2"}}), dir + "/logs-a");
  auto b = StartAgent(address, "node-b", with({}), dir + "/logs-b");
  auto c = StartAgent(address, "node-c", with({{"NCCL_IB_DISABLE", "1"}}), dir + "/logs-c");

  CommandResult nodes = RunCommand({kCli, "nodes", "--controller", address});
  CHECK(nodes.out.find("2, nccl 2.21.5") != std::string::npos);

  Sweep nccl = RunSweep(address, "auto");
  const v1::ProbeResult& collective = nccl.report.health().collectives(0);
  INFO(collective.reason());
  REQUIRE(collective.outcome() == v1::PROBE_OK);
  CHECK(collective.device() == "nccl, 4 ranks on 3 nodes");
  REQUIRE(collective.collective_size() == 1);
  CHECK(collective.collective(0).size_bytes() == 65536);
  CHECK(collective.collective(0).wrong() == 0);
  CHECK(collective.collective(0).busbw_gbytes() ==
        Approx(collective.collective(0).algbw_gbytes() * 2.0 * 3 / 4));
  CHECK(collective.nccl().net() == "Socket");  // one node's sockets make the group's
  auto fallbacks = FindingsOf(nccl.report, "tcp_fallback");
  REQUIRE(fallbacks.size() == 1);
  CHECK(fallbacks[0]->node() == "node-c");
  CHECK(fallbacks[0]->evidence().at("line").find("via NET/Socket/0") != std::string::npos);
  CHECK(fallbacks[0]->device().find(dir + "/logs-c/") == 0);  // the rank's log, kept
  CHECK(nccl.exit_code == 2);

  // The host ring when asked for: no NCCL, no NCCL findings.
  Sweep ring = RunSweep(address, "tcp");
  CHECK(ring.report.health().collectives(0).device() == "tcp ring");
  CHECK(ring.report.health().collectives(0).outcome() == v1::PROBE_OK);
  CHECK(FindingsOf(ring.report, "tcp_fallback").empty());

  // A node without a GPU: auto falls back to the ring; nccl is skipped with the reason.
  auto d = StartAgent(address, "node-d", {{"FABRIC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1"}},
                      dir + "/logs-d");
  Sweep mixed = RunSweep(address, "auto");
  CHECK(mixed.report.health().collectives(0).device() == "tcp ring");
  Sweep asked = RunSweep(address, "nccl");
  const v1::ProbeResult& skipped = asked.report.health().collectives(0);
  CHECK(skipped.outcome() == v1::PROBE_SKIPPED);
  CHECK(skipped.reason().find("node-d has no GPU") != std::string::npos);
  CHECK(skipped.collective_size() == 0);
}

}  // namespace fabricctl::testing

namespace fabricctl::testing {

// A one-node sweep (a lone GPU server, a one-node Slurm job): NCCL over the node's own GPUs,
// its audits, and the pair probes saying they need two nodes.
TEST_CASE("sweep of one node: an all-reduce over its GPUs, gpu_copy and its audits") {
  const std::string dir = TempDir("nccl-one-node");
  auto controller = std::make_unique<Subprocess>(
      std::vector<std::string>{kController, "--listen", "127.0.0.1:0", "--db", dir + "/fabric.db"});
  const std::string address = ListeningAddress(*controller);
  auto solo = StartAgent(address, "solo",
                         {{"FABRIC_CUDA_LIBRARY", Absolute("tests/fake_gpu/libfake_cuda.so")},
                          {"FABRIC_NCCL_LIBRARY", Absolute("tests/fake_gpu/libfake_nccl.so")},
                          {"FABRIC_FAKE_GPUS", "2"}},
                         dir + "/logs");
  CommandResult result =
      RunCommand({kCli, "sweep", "--controller", address, "--probes", "allreduce,gpu_copy,tcp_bw",
                  "--sizes", "64K", "--iters", "3", "--format", "json"},
                 absl::Seconds(120));
  INFO(result.err);
  v1::Report report;
  REQUIRE(google::protobuf::util::JsonStringToMessage(result.out, &report).ok());
  REQUIRE(report.health().collectives_size() == 1);
  const v1::ProbeResult& collective = report.health().collectives(0);
  INFO(collective.reason());
  CHECK(collective.outcome() == v1::PROBE_OK);
  CHECK(collective.device() == "nccl, 2 ranks on 1 nodes");
  REQUIRE(report.health().nodes_size() == 1);
  bool pair_note = false, gpu_copy = false;
  for (const auto& audit : report.health().nodes(0).audits()) {
    if (audit.audit() == "gpu_copy") {
      // Through the agent, in its child process, on both of the stand-in's GPUs.
      INFO(audit.reason());
      gpu_copy = audit.outcome() == v1::AUDIT_RAN && audit.observed().size() == 2 &&
                 audit.observed().count("GPU 1 67108864 B") == 1;
    }
    if (audit.audit() == "pair probes") {
      pair_note = audit.outcome() == v1::AUDIT_SKIPPED &&
                  audit.reason().find("a pair probe needs two nodes") != std::string::npos;
    }
  }
  CHECK(pair_note);
  CHECK(gpu_copy);
  CHECK(report.health().pairs_size() == 0);
  // Nothing but, on a machine without RDMA, the node's own rdma_unavailable warning.
  for (const auto& f : report.findings()) {
    INFO(f.kind() << ": " << f.detail());
    CHECK(f.kind() == "rdma_unavailable");
    CHECK(f.severity() == v1::SEVERITY_WARNING);
  }
  CHECK(result.exit_code == (report.findings_size() == 0 ? 0 : 1));
}

}  // namespace fabricctl::testing

namespace fabricctl::testing {

// sweep --memory gpu: every RDMA half in GPU memory, in a child process of its agent. Here (no
// RDMA device, the CUDA stand-in for a GPU) the halves run and say why they could not measure;
// tests/rdma_vm_test runs the same sweep over soft-RoCE, where they measure.
TEST_CASE("sweep --memory gpu: the RDMA halves run in the agents' children and report") {
  const std::string dir = TempDir("gpu-memory-sweep");
  auto controller = std::make_unique<Subprocess>(
      std::vector<std::string>{kController, "--listen", "127.0.0.1:0", "--db", dir + "/fabric.db"});
  const std::string address = ListeningAddress(*controller);
  const std::vector<std::pair<std::string, std::string>> env = {
      {"FABRIC_CUDA_LIBRARY", Absolute("tests/fake_gpu/libfake_cuda.so")}};
  auto a = StartAgent(address, "gpu-a", env, dir + "/logs-a");
  auto b = StartAgent(address, "gpu-b", env, dir + "/logs-b");
  CommandResult result =
      RunCommand({kCli, "sweep", "--controller", address, "--probes", "rdma_write_bw", "--memory",
                  "gpu", "--sizes", "64K", "--duration", "200ms", "--format", "json"},
                 absl::Seconds(120));
  INFO(result.err);
  v1::Report report;
  REQUIRE(google::protobuf::util::JsonStringToMessage(result.out, &report).ok());
  REQUIRE(report.health().pairs_size() == 1);
  const auto& pair = report.health().pairs(0);
  REQUIRE(pair.results_size() >= 1);
  for (const auto& r : pair.results()) {
    INFO(r.reason());
    CHECK(r.effective_spec().rdma().memory() == v1::MEMORY_GPU);
    CHECK(r.effective_spec().rdma().server_memory() == v1::MEMORY_GPU);
    if (r.outcome() == v1::PROBE_SKIPPED) CHECK(r.reason().find("RDMA") != std::string::npos);
  }
  // Bad requests are refused before anything runs.
  CommandResult tcp =
      RunCommand({kCli, "sweep", "--controller", address, "--probes", "tcp_bw", "--memory", "gpu"});
  CHECK(tcp.exit_code == 3);
  CHECK(tcp.err.find("GPU memory applies to the rdma_* probes") != std::string::npos);
  CommandResult bad = RunCommand(
      {kCli, "sweep", "--controller", address, "--probes", "rdma_write_bw", "--memory", "vram"});
  CHECK(bad.exit_code == 3);
  CHECK(bad.err.find("--memory: 'vram' is not host or gpu") != std::string::npos);
  // The agents are still there, their children gone.
  CommandResult nodes = RunCommand({kCli, "nodes", "--controller", address});
  CHECK(nodes.exit_code == 0);
}

}  // namespace fabricctl::testing
