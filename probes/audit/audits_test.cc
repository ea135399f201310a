// Every fixture node through the audits, against the RoCE H100 expectations of
// configs/roce-h100.yaml. The fixtures are written afresh by tests/fixtures/make_sysfs.py.
#include <algorithm>
#include <fstream>

#include <catch2/catch.hpp>

#include "probes/audit/audit.h"
#include "tests/subprocess.h"

namespace fabricctl::probes {
namespace {

std::string Fixtures() {
  static const std::string dir = [] {
    std::string out = testing::TempDir("sysfs");
    auto made = testing::RunCommand({"/usr/bin/python3", "tests/fixtures/make_sysfs.py", out});
    REQUIRE(made.exit_code == 0);
    return out;
  }();
  return dir;
}

v1::Expectations RoceH100() {
  v1::Expectations e;
  e.set_link_rate_gbps(400);
  e.set_netdev_mtu(9000);
  e.set_roce_mtu(4096);
  e.set_pcie_speed_gts(32);
  e.set_gpudirect(true);
  e.set_pfc_priority(3);
  e.set_ecn(true);
  e.set_dscp_trust(true);
  return e;
}

// "kind:device" of every finding, sorted.
std::vector<std::string> Findings(const std::string& node, v1::Expectations expect,
                                  std::map<std::string, std::string> env = {}) {
  SysfsRoot root(Fixtures() + "/" + node);
  AuditContext ctx;
  ctx.root = &root;
  ctx.expect = expect;
  ctx.environment = std::move(env);
  ctx.node = node;
  auto results = RunAudits(ctx, {});
  REQUIRE(results.ok());
  std::vector<std::string> out;
  for (const auto& r : *results) {
    for (const auto& f : r.findings()) out.push_back(f.kind() + ":" + f.device());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("The healthy RoCE H100 node has no finding") {
  CHECK(Findings("roce-h100", RoceH100()).empty());
}

TEST_CASE("Each planted fault produces exactly its finding") {
  using V = std::vector<std::string>;
  CHECK(Findings("roce-h100-port-down", RoceH100()) == V{"link_down:mlx5_3"});
  CHECK(Findings("roce-h100-half-rate", RoceH100()) == V{"link_rate_degraded:mlx5_5"});
  CHECK(Findings("roce-h100-mtu-1500", RoceH100()) == V{"mtu_mismatch:mlx5_2"});
  CHECK(Findings("roce-h100-memlock", RoceH100()) == V{"memlock_too_low:"});
  CHECK(Findings("roce-h100-pcie-x8", RoceH100()) == V{"pcie_degraded:mlx5_1"});
  CHECK(Findings("roce-h100-numa", RoceH100()) == V{"numa_misaffinity:mlx5_2"});
  CHECK(Findings("roce-h100-no-peermem", RoceH100()) == V{"gpudirect_unavailable:"});
  CHECK(Findings("roce-h100-pfc-off", RoceH100()) == V{"pfc_misconfigured:mlx5_6"});
  CHECK(Findings("roce-h100-acs", RoceH100()) == V{"acs_enabled:0000:17:00.0"});
}

TEST_CASE("GPUDirect without peer memory: dma-buf counts when the driver and kernel have it") {
  SysfsRoot root(Fixtures() + "/roce-h100-no-peermem");
  auto run = [&](std::optional<std::vector<v1::Gpu>> driver) {
    AuditContext ctx{&root, RoceH100(), {}, "n1"};
    ctx.driver_gpus = std::move(driver);
    auto results = RunAudits(ctx, {"gpudirect"});
    REQUIRE(results.ok());
    return (*results)[0];
  };
  std::vector<v1::Gpu> gpus(8);
  for (auto& g : gpus) g.set_dma_buf_supported(true);
  v1::AuditResult with = run(gpus);
  CHECK(with.findings().empty());
  CHECK(with.observed().at("path") == "dma-buf");
  CHECK(with.observed().at("dma_buf") == "8 of 8 GPUs support it, kernel 6.1.0-27-amd64");
  gpus[5].set_dma_buf_supported(false);
  v1::AuditResult one_without = run(gpus);
  REQUIRE(one_without.findings_size() == 1);
  CHECK(one_without.findings(0).kind() == "gpudirect_unavailable");
  CHECK(one_without.findings(0).detail().find("7 of 8 GPUs support it") != std::string::npos);
  v1::AuditResult not_asked = run(std::nullopt);
  REQUIRE(not_asked.findings_size() == 1);
  CHECK(not_asked.observed().at("dma_buf") == "not asked of the CUDA driver");
}

TEST_CASE("GPU-NIC affinity: each GPU with the NIC on its own PCIe switch") {
  SysfsRoot root(Fixtures() + "/roce-h100");
  AuditContext ctx{&root, RoceH100(), {}, "n1"};
  auto results = RunAudits(ctx, {"affinity"});
  REQUIRE(results.ok());
  const auto& observed = (*results)[0].observed();
  REQUIRE(observed.size() == 8);
  CHECK(observed.at("GPU 0000:19:00.0") == "mlx5_0 PIX (NUMA 0/0)");
  CHECK(observed.at("GPU 0000:de:00.0") == "mlx5_7 PIX (NUMA 1/1)");

  SysfsRoot moved(Fixtures() + "/roce-h100-numa");
  AuditContext moved_ctx{&moved, RoceH100(), {}, "n2"};
  auto misaffine = RunAudits(moved_ctx, {"affinity"});
  REQUIRE(misaffine.ok());
  REQUIRE((*misaffine)[0].findings_size() == 1);
  CHECK((*misaffine)[0].findings(0).detail().find(
            "GPU 0000:4c:00.0 (NUMA node 0) is left with mlx5_2 (NUMA node 1), path SYS") !=
        std::string::npos);
}

TEST_CASE("QoS: ECN and DSCP trust read from the driver's sysfs, PFC from DCB netlink") {
  const std::string node = Fixtures() + "/roce-h100-counters";  // a healthy copy to edit
  SysfsRoot root(node);
  AuditContext ctx{&root, RoceH100(), {}, "n1"};
  auto healthy = RunAudits(ctx, {"qos"});
  REQUIRE(healthy.ok());
  CHECK((*healthy)[0].findings_size() == 0);
  CHECK((*healthy)[0].observed().at("mlx5_0:1") == "PFC 3; ECN on; trust dscp");
  auto dir = root.ReadLink("/sys/class/net/ens1np0");
  REQUIRE(dir.ok());
  std::ofstream(node + "/sys/class/net/" + *dir + "/ecn/roce_np/enable/3") << "0\n";
  std::ofstream(node + "/sys/class/net/" + *dir + "/qos/trust") << "pcp\n";
  std::vector<std::string> kinds;
  auto broken = RunAudits(ctx, {"qos"});
  REQUIRE(broken.ok());
  for (const auto& f : (*broken)[0].findings()) kinds.push_back(f.kind() + ":" + f.device());
  CHECK(kinds == std::vector<std::string>{"ecn_disabled:mlx5_1", "dscp_trust_missing:mlx5_1"});
  // A driver without the ECN knobs: ECN is not judged (stock kernels), the rest still is.
  std::remove((node + "/sys/class/net/" + *dir + "/ecn/roce_np/enable/3").c_str());
  std::remove((node + "/sys/class/net/" + *dir + "/ecn/roce_rp/enable/3").c_str());
  auto partial = RunAudits(ctx, {"qos"});
  CHECK((*partial)[0].observed().at("mlx5_1:1") == "PFC 3; ECN not exposed by this driver; trust pcp");
}

TEST_CASE("Counters: an error counter rising within the window is reported") {
  const std::string node = Fixtures() + "/roce-h100-counters";
  SysfsRoot root(node);
  AuditContext ctx{&root, RoceH100(), {}, "n1"};
  CHECK((*RunAudits(ctx, {"counters"}))[0].outcome() == v1::AUDIT_SKIPPED);  // no window
  ctx.counter_window = absl::Seconds(5);
  int waits = 0;
  ctx.wait = [&](absl::Duration d) {
    ++waits;
    CHECK(d == absl::Seconds(5));
    // The link takes 12 symbol errors while we wait.
    auto dir = root.ReadLink("/sys/class/infiniband/mlx5_4");
    REQUIRE(dir.ok());
    std::ofstream(node + "/sys/class/infiniband/" + *dir + "/ports/1/counters/symbol_error") << "12\n";
  };
  auto results = RunAudits(ctx, {"counters"});
  REQUIRE(results.ok());
  CHECK(waits == 1);
  REQUIRE((*results)[0].findings_size() == 1);
  const auto& f = (*results)[0].findings(0);
  CHECK(f.kind() == "counter_errors");
  CHECK(f.device() == "mlx5_4");
  CHECK(f.severity() == v1::SEVERITY_WARNING);
  CHECK(f.detail() == "n1: mlx5_4:1 symbol_error rose by 12 in 5s, expected at most 0");
}

TEST_CASE("Findings name the measured and the expected value") {
  SysfsRoot root(Fixtures() + "/roce-h100-half-rate");
  AuditContext ctx{&root, RoceH100(), {}, "n1"};
  auto results = RunAudits(ctx, {"rdma_ports"});
  REQUIRE(results.ok());
  REQUIRE(results->size() == 1);
  REQUIRE((*results)[0].findings_size() == 1);
  const auto& f = (*results)[0].findings(0);
  CHECK(f.detail() == "n1: mlx5_5:1 active at 200 Gb/s, expected 400 Gb/s");
  CHECK(f.severity() == v1::SEVERITY_CRITICAL);
  CHECK(f.port() == 1);
  CHECK(f.node() == "n1");
  CHECK((*results)[0].observed().at("mlx5_0:1") == "ACTIVE LinkUp 400 Gb/s RoCE ens0np0");
}

TEST_CASE("InfiniBand: ports checked, MTU audit skipped (no netdev on the data path)") {
  SysfsRoot root(Fixtures() + "/infiniband-ndr");
  AuditContext ctx{&root, RoceH100(), {}, "ib1"};
  auto results = RunAudits(ctx, {"rdma_ports", "mtu", "pcie"});
  REQUIRE(results.ok());
  CHECK((*results)[0].outcome() == v1::AUDIT_RAN);
  CHECK((*results)[0].findings_size() == 0);
  CHECK((*results)[1].outcome() == v1::AUDIT_SKIPPED);
  CHECK((*results)[2].outcome() == v1::AUDIT_RAN);
  CHECK((*results)[2].observed_size() == 16);  // 8 HCAs and 8 GPUs
}

TEST_CASE("A node without RDMA: rdma_unavailable, RDMA audits skipped, no crash") {
  CHECK(Findings("no-rdma", RoceH100()) == std::vector<std::string>{"rdma_unavailable:"});
  SysfsRoot root(Fixtures() + "/no-rdma");
  AuditContext ctx{&root, RoceH100(), {}, "cpu1"};
  auto results = RunAudits(ctx, {"mtu"});
  REQUIRE(results.ok());
  CHECK((*results)[0].outcome() == v1::AUDIT_SKIPPED);
  CHECK((*results)[0].reason().find("no RDMA device") != std::string::npos);
  // Without an RDMA expectation the absence is a warning, not a reason to drain.
  AuditContext relaxed{&root, v1::Expectations(), {}, "cpu1"};
  auto ports = RunAudits(relaxed, {"rdma_ports"});
  REQUIRE(ports.ok());
  CHECK((*ports)[0].findings(0).severity() == v1::SEVERITY_WARNING);
}

TEST_CASE("NCCL's environment: fallbacks to TCP and names that match nothing") {
  using V = std::vector<std::string>;
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_IB_DISABLE", "1"}}) == V{"tcp_fallback:"});
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_NET", "Socket"}}) == V{"tcp_fallback:"});
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_IB_HCA", "mlx5_0:1,mlx5_9"}}) ==
        V{"nccl_env_misconfigured:"});
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_IB_HCA", "mlx5"}}).empty());  // prefix
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_IB_HCA", "^mlx5_9"}}).empty());
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_SOCKET_IFNAME", "eth"}}) ==
        V{"nccl_env_misconfigured:"});
  CHECK(Findings("roce-h100", RoceH100(), {{"NCCL_SOCKET_IFNAME", "eno"}}).empty());
}

TEST_CASE("Unknown audits are refused by name") {
  SysfsRoot root("/");
  AuditContext ctx{&root, {}, {}, "n"};
  auto results = RunAudits(ctx, {"pfc"});
  REQUIRE_FALSE(results.ok());
  CHECK(std::string(results.status().message()).rfind("unknown audit 'pfc' (known: rdma_ports", 0) == 0);
}

}  // namespace fabricctl::probes
