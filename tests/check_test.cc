// `fabricctl check` as cron or Slurm runs it: the real binary over the fixture nodes of
// tests/fixtures/make_sysfs.py and over this machine.
#include <catch2/catch.hpp>
#include <climits>
#include <cstdlib>
#include <fstream>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/util/json_util.h"
#include "proto/report.pb.h"
#include "tests/subprocess.h"

namespace fabricctl::testing {
namespace {

const std::string kCli = "cli/fabricctl";

std::string Fixtures() {
  static const std::string dir = [] {
    std::string out = TempDir("check_sysfs");
    REQUIRE(RunCommand({"/usr/bin/python3", "tests/fixtures/make_sysfs.py", out}).exit_code == 0);
    return out;
  }();
  return dir;
}

CommandResult Check(const std::string& node, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {kCli,           "check",
                                   "--sysfs-root", Fixtures() + "/" + node,
                                   "--config",     "configs/roce-h100.yaml",
                                   "--node-name",  node};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunCommand(argv);
}

}  // namespace

TEST_CASE("check: the healthy node exits 0") {
  CommandResult r = Check("roce-h100");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("fabricctl check roce-h100: OK - 12 audits (3 skipped), 0 findings", 0) == 0);
  CHECK(r.err.empty());
}

TEST_CASE("check: each planted fault exits 2 with its finding on stderr") {
  for (const auto& [node, kind] : std::vector<std::pair<std::string, std::string>>{
           {"roce-h100-port-down", "link_down"},
           {"roce-h100-half-rate", "link_rate_degraded"},
           {"roce-h100-mtu-1500", "mtu_mismatch"},
           {"roce-h100-memlock", "memlock_too_low"},
           {"roce-h100-pcie-x8", "pcie_degraded"},
           {"roce-h100-numa", "numa_misaffinity"},
           {"roce-h100-no-peermem", "gpudirect_unavailable"},
           {"roce-h100-pfc-off", "pfc_misconfigured"}}) {
    CommandResult r = Check(node);
    INFO(node << ": " << r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "CRITICAL: " + node + ": " + kind + "\n");
  }
}

TEST_CASE("check: a CPU-only node's profile holds it to no RDMA: a warning, not a drain") {
  const std::string config = TempDir("profiles") + "/cluster.yaml";
  {
    std::ifstream in("configs/roce-h100.yaml");
    std::ofstream out(config);
    out << in.rdbuf() << "\nprofiles:\n  - name: cpu\n    nodes: \"cpu-[1-4]\"\n    expect: {}\n";
  }
  auto run = [&](const std::string& node) {
    return RunCommand({kCli, "check", "--sysfs-root", Fixtures() + "/no-rdma", "--config", config,
                       "--node-name", node});
  };
  CommandResult gpu = run("gpu-1");  // not in the profile: held to the cluster's RDMA expectation
  INFO(gpu.out << gpu.err);
  CHECK(gpu.exit_code == 2);
  CHECK(gpu.err == "CRITICAL: gpu-1: rdma_unavailable\n");
  CommandResult cpu = run("cpu-2");
  INFO(cpu.out << cpu.err);
  CHECK(cpu.exit_code == 1);
  CHECK(cpu.err == "WARNING: cpu-2: rdma_unavailable\n");
}

TEST_CASE("check: a warning exits 1") {
  CommandResult r = Check("roce-h100-acs");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err == "WARNING: roce-h100-acs: acs_enabled\n");
}

TEST_CASE("check: JSON is the Report, with each audit's outcome") {
  CommandResult r = Check("infiniband-ndr", {"--format", "json"});
  REQUIRE(r.exit_code == 0);
  v1::Report report;
  REQUIRE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok());
  CHECK(report.schema() == "fabricctl.report/v1");
  CHECK(report.source() == "check");
  REQUIRE(report.health().nodes_size() == 1);
  const auto& audits = report.health().nodes(0).audits();
  REQUIRE(audits.size() == 12);
  CHECK(audits[0].audit() == "rdma_ports");
  CHECK(audits[0].outcome() == v1::AUDIT_RAN);
  CHECK(audits[1].audit() == "mtu");
  CHECK(audits[1].outcome() == v1::AUDIT_SKIPPED);
  CHECK(audits[2].audit() == "qos");
  CHECK(audits[2].outcome() == v1::AUDIT_SKIPPED);  // InfiniBand: lossless by credits
}

TEST_CASE("check: no RDMA here means rdma_unavailable and skipped audits, not a crash") {
  CommandResult r = Check("no-rdma");
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("rdma_unavailable") != std::string::npos);
  CHECK(r.out.find("mtu          skipped   no RDMA device") != std::string::npos);
  // And this machine, through the real /: it runs and says what it found.
  CommandResult here = RunCommand({kCli, "check", "--format", "json"});
  CHECK((here.exit_code >= 0 && here.exit_code <= 2));
  v1::Report report;
  CHECK(google::protobuf::util::JsonStringToMessage(here.out, &report).ok());
}

TEST_CASE("check: NCCL's environment is audited") {
  std::vector<std::string> argv = {"/usr/bin/env", "NCCL_IB_DISABLE=1",
                                   kCli,           "check",
                                   "--sysfs-root", Fixtures() + "/roce-h100",
                                   "--config",     "configs/roce-h100.yaml",
                                   "--node-name",  "n1"};
  CommandResult r = RunCommand(argv);
  CHECK(r.exit_code == 2);
  CHECK(r.err == "CRITICAL: n1: tcp_fallback\n");
}

TEST_CASE("check: --window reads the counters twice; a quiet link passes") {
  CommandResult r = Check("roce-h100-counters", {"--window", "200ms", "--audits", "counters"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("counters     ok") != std::string::npos);
  CHECK(Check("roce-h100", {"--window", "soon"}).exit_code == 3);
}

TEST_CASE("check --nccl-log: a socket fallback exits 2 with the evidence line") {
  CommandResult fallback = RunCommand(
      {kCli, "check", "--nccl-log", "tests/fixtures/nccl/socket-fallback.log", "--format", "json"});
  CHECK(fallback.exit_code == 2);
  v1::Report report;
  REQUIRE(google::protobuf::util::JsonStringToMessage(fallback.out, &report).ok());
  REQUIRE(report.findings_size() == 1);
  CHECK(report.findings(0).kind() == "tcp_fallback");
  CHECK(report.findings(0).node() == "gpu-r03-n02");
  CHECK(report.findings(0).evidence().at("line").find("via NET/Socket/0") != std::string::npos);

  CommandResult text =
      RunCommand({kCli, "check", "--nccl-log", "tests/fixtures/nccl/socket-fallback.log"});
  CHECK(text.out.find("via NET/Socket/0") != std::string::npos);  // the evidence, in the detail

  CommandResult healthy = RunCommand({kCli, "check", "--nccl-log", "tests/fixtures/nccl/ib-gdr.log",
                                      "--nccl-log", "tests/fixtures/nccl/ib-gdr-2.18.log"});
  CHECK(healthy.exit_code == 0);
  CommandResult staged =
      RunCommand({kCli, "check", "--nccl-log", "tests/fixtures/nccl/ib-no-gdr.log"});
  CHECK(staged.exit_code == 1);
  CHECK(staged.err == "WARNING: gpu-r02-n03: gpudirect_unavailable\n");
  CHECK(RunCommand({kCli, "check", "--nccl-log", "/nonexistent.log"}).exit_code == 3);
}

TEST_CASE("check --probes: pair probes run on loopback; an RDMA one skips without a device") {
  CommandResult r =
      RunCommand({kCli, "check", "--probes", "tcp_lat,rdma_write_bw", "--format", "json"});
  INFO(r.out << r.err);
  v1::Report report;
  REQUIRE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok());
  const auto& audits = report.health().nodes(0).audits();
  REQUIRE(audits.size() == 2);
  CHECK(audits[0].audit() == "loopback tcp_lat");
  CHECK(audits[0].outcome() == v1::AUDIT_RAN);
  CHECK(audits[0].observed().at("tcp 2 B").find("us typical") != std::string::npos);
  CHECK(audits[1].audit() == "loopback rdma_write_bw");
  if (audits[1].outcome() == v1::AUDIT_SKIPPED) {
    CHECK(audits[1].reason().find("RDMA") != std::string::npos);  // no device (or memlock) here
  }
  CHECK(Check("roce-h100", {"--probes", "tcp_lat"}).exit_code == 3);  // not under a fixture root
  // gpu_copy: measured on a GPU node; here, skipped with the driver's absence as the reason.
  CommandResult gpu = RunCommand({kCli, "check", "--probes", "gpu_copy"});
  CHECK((gpu.out.find("gpu_copy     ok") != std::string::npos ||
         gpu.out.find("skipped   no GPU driver") != std::string::npos ||
         gpu.out.find("skipped   no usable GPU") != std::string::npos));
}

// NCCL over this node's GPUs. No GPU here: the CUDA and NCCL test stand-ins (tests/fake_gpu)
// take their place, two "GPUs", so what runs for real is fabricctl's side: ranks in child
// processes, the unique id, the data check, the logs' verdict, the report and exit code.
TEST_CASE("check --probes allreduce: NCCL over every GPU, a socket fallback exits 2") {
  char cuda[PATH_MAX], nccl[PATH_MAX];
  REQUIRE(::realpath("tests/fake_gpu/libfake_cuda.so", cuda) != nullptr);
  REQUIRE(::realpath("tests/fake_gpu/libfake_nccl.so", nccl) != nullptr);
  ::setenv("FABRIC_CUDA_LIBRARY", cuda, 1);
  ::setenv("FABRIC_NCCL_LIBRARY", nccl, 1);
  ::setenv("FABRIC_FAKE_GPUS", "2", 1);
  auto run = [] {
    CommandResult r = RunCommand(
        {kCli, "check", "--probes", "allreduce", "--node-name", "gpu-1", "--format", "json"},
        absl::Seconds(120));
    INFO(r.err);
    v1::Report report;
    REQUIRE(google::protobuf::util::JsonStringToMessage(r.out, &report).ok());
    return std::make_pair(r.exit_code, report);
  };
  auto [clean_exit, clean] = run();
  const v1::AuditResult& ok = clean.health().nodes(0).audits(0);
  CHECK(ok.audit() == "allreduce");
  CHECK(ok.outcome() == v1::AUDIT_RAN);
  CHECK(ok.observed().at("device") == "nccl 2.21.5, 2 GPUs");
  CHECK(ok.observed().at("network") == "IB");
  CHECK(ok.observed().at("67108864 B").find(", 0 wrong") != std::string::npos);
  CHECK(ok.findings().empty());
  CHECK(clean_exit == 0);

  ::setenv("NCCL_IB_DISABLE", "1", 1);
  auto [fallback_exit, fallback] = run();
  ::unsetenv("NCCL_IB_DISABLE");
  const v1::AuditResult& bad = fallback.health().nodes(0).audits(0);
  REQUIRE(bad.findings_size() == 1);
  CHECK(bad.findings(0).kind() == "tcp_fallback");
  CHECK(bad.findings(0).node() == "gpu-1");
  CHECK(bad.findings(0).evidence().at("line").find("via NET/Socket/0") != std::string::npos);
  CHECK(fallback_exit == 2);

  ::setenv("FABRIC_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
  auto [none_exit, none] = run();
  CHECK(none.health().nodes(0).audits(0).outcome() == v1::AUDIT_SKIPPED);
  CHECK(none.health().nodes(0).audits(0).reason().find("no GPU driver") == 0);
  for (const char* name : {"FABRIC_CUDA_LIBRARY", "FABRIC_NCCL_LIBRARY", "FABRIC_FAKE_GPUS"}) {
    ::unsetenv(name);
  }
}

TEST_CASE("check: bad arguments exit 3 with the reason") {
  CommandResult bad_root = RunCommand({kCli, "check", "--sysfs-root", "/nonexistent"});
  CHECK(bad_root.exit_code == 3);
  CHECK(bad_root.err == "fabricctl check: --sysfs-root: '/nonexistent' has no sys/ directory\n");
  CommandResult bad_audit = Check("roce-h100", {"--audits", "pfc"});
  CHECK(bad_audit.exit_code == 3);
  CHECK(bad_audit.err.find("unknown audit 'pfc'") != std::string::npos);
}

}  // namespace fabricctl::testing

namespace fabricctl::testing {

TEST_CASE("check: a FIFO, a device, a directory or an empty file as input exits 3 at once") {
  const std::string dir = TempDir("bad_inputs");
  const std::string fifo = dir + "/fifo", empty = dir + "/empty.log", binary = dir + "/bin.log";
  REQUIRE(RunCommand({"/usr/bin/mkfifo", fifo}).exit_code == 0);
  REQUIRE(RunCommand({"/usr/bin/touch", empty}).exit_code == 0);
  REQUIRE(RunCommand({"/bin/sh", "-c", "head -c 4096 /dev/urandom > " + binary}).exit_code == 0);
  for (const auto& [path, why] : std::vector<std::pair<std::string, std::string>>{
           {fifo, "is a FIFO, not a regular file"},
           {"/dev/zero", "is a character device, not a regular file"},
           {dir, "is a directory, not a regular file"},
           {empty, "has no NCCL INFO line (it is empty)"},
           {binary, "has no NCCL INFO line (is it the log of a job run with NCCL_DEBUG=INFO?)"}}) {
    CommandResult r = Check("roce-h100", {"--nccl-log", path});
    INFO(path << ": " << r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("--nccl-log") != std::string::npos);
    CHECK(r.err.find(why) != std::string::npos);
  }
  for (const std::string& config : {fifo, std::string("/dev/zero"), dir}) {
    CommandResult r =
        RunCommand({kCli, "check", "--sysfs-root", Fixtures() + "/roce-h100", "--config", config});
    INFO(config << ": " << r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.err.find("--config: cannot read '" + config + "'") != std::string::npos);
  }
  // A FIFO where sysfs has a file: the audit reads nothing and does not hang.
  const std::string root = TempDir("fifo_sysfs");
  REQUIRE(RunCommand({"/bin/cp", "-r", Fixtures() + "/roce-h100/.", root}).exit_code == 0);
  REQUIRE(RunCommand({"/bin/sh", "-c",
                      "f=" + root + "/sys/class/net/ens0np0/mtu && rm \"$f\" && mkfifo \"$f\""})
              .exit_code == 0);
  CommandResult hung = RunCommand({kCli, "check", "--sysfs-root", root, "--config",
                                   "configs/roce-h100.yaml", "--node-name", "n"});
  INFO(hung.out << hung.err);
  CHECK(hung.exit_code == 1);  // the unreadable MTU is a warning, not a pass
  CHECK(hung.err.find("audit_failed") != std::string::npos);
  CHECK(hung.out.find("not a regular file") != std::string::npos);
}

}  // namespace fabricctl::testing

namespace fabricctl::testing {

TEST_CASE("check: the agent's link watch, a flapping link drained by --format drain") {
  // What fabric-agent writes at each sample (agent/link_watch.h), for a node whose eth0 fell
  // twice in the last hour; the check reports it beside its audits.
  const std::string file = TempDir("check_watch") + "/link-watch";
  const std::string now =
      absl::FormatTime(absl::RFC3339_sec, absl::Now() - absl::Seconds(5), absl::UTCTimeZone());
  std::ofstream(file) << "audit: \"link_watch\"\noutcome: AUDIT_RAN\n"
                      << "observed { key: \"last_sample\" value: \"" << now << "\" }\n"
                      << "observed { key: \"interval\" value: \"10s\" }\n"
                      << "findings { kind: \"link_flapping\" severity: SEVERITY_CRITICAL "
                         "action: ACTION_DRAIN node: \"agent-name\" device: \"eth0\" "
                         "detail: \"agent-name: eth0 went down 2 times in the last 1h\" }\n";
  CommandResult r = Check("roce-h100", {"--watch-file", file, "--format", "drain"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.out == "roce-h100\tlink_flapping\n");  // the check's name for the node
  r = Check("roce-h100", {"--watch-file", file});
  CHECK(r.out.find("roce-h100: eth0 went down 2 times") != std::string::npos);
}

}  // namespace fabricctl::testing
