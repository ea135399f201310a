#include "base/config.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <map>

namespace fabricctl {
namespace {

std::string ErrorOf(const std::string& yaml) {
  auto config = ParseConfig(yaml, "cluster.yaml");
  REQUIRE_FALSE(config.ok());
  return std::string(config.status().message());
}

}  // namespace

TEST_CASE("The keys later work relies on are read into the proto") {
  auto config = ParseConfig(R"(
expect:
  link_rate_gbps: 400      # per RDMA port
  netdev_mtu: 9000
  roce_mtu: 4096
  pfc_priority: 3
  ecn: true
  dscp_trust: true
  gpudirect: true
thresholds:
  min_bw_efficiency: 0.90
  relative_bw: 0.93
  relative_lat: 2.1
)",
                            "cluster.yaml");
  REQUIRE(config.ok());
  CHECK(config->expect().link_rate_gbps() == 400);
  CHECK(config->expect().netdev_mtu() == 9000);
  CHECK(config->expect().roce_mtu() == 4096);
  REQUIRE(config->expect().has_pfc_priority());
  CHECK(config->expect().pfc_priority() == 3);
  CHECK(config->expect().ecn());
  CHECK(config->expect().dscp_trust());
  CHECK(config->expect().gpudirect());
  CHECK(config->thresholds().min_bw_efficiency() == Approx(0.90));
  CHECK(config->thresholds().relative_bw() == Approx(0.93));
  CHECK(config->thresholds().relative_lat() == Approx(2.1));
}

TEST_CASE("Defaults fill what the file leaves out") {
  auto config = ParseConfig("expect: {link_rate_gbps: 200}\n", "c.yaml");
  REQUIRE(config.ok());
  CHECK(config->thresholds().relative_bw() == Approx(0.6));
  CHECK(config->sweep().pairing() == v1::PAIRING_FULL);
  CHECK(config->sweep().pair_timeout().seconds() == 60);
  CHECK(config->probes().gid_index() == -1);
  CHECK_FALSE(config->expect().has_pfc_priority());
  auto empty = ParseConfig("", "empty.yaml");
  REQUIRE(empty.ok());
  CHECK(empty->tls().controller_identity() == "fabric-controller");
  CHECK(empty->sweep().retests() == 2);
}

TEST_CASE("retests: 0 turns re-tests off; administrators are a list") {
  auto config =
      ParseConfig("sweep: {retests: 0}\ntls: {admin_identities: [ops, fabricctl]}\n", "c.yaml");
  REQUIRE(config.ok());
  CHECK(config->sweep().has_retests());
  CHECK(config->sweep().retests() == 0);
  REQUIRE(config->tls().admin_identities_size() == 2);
  CHECK(config->tls().admin_identities(0) == "ops");
}

TEST_CASE("Enums, durations, lists and maps are read by name") {
  auto config = ParseConfig(R"(
sweep:
  pairing: sample
  pair_timeout: 1500ms
  probes: [rdma_write_bw, tcp_bw]
nodes:
  - node: n1
    labels: {rack: r1}
)",
                            "c.yaml");
  REQUIRE(config.ok());
  CHECK(config->sweep().pairing() == v1::PAIRING_SAMPLE);
  CHECK(config->sweep().pair_timeout().seconds() == 1);
  CHECK(config->sweep().pair_timeout().nanos() == 500000000);
  REQUIRE(config->sweep().probes_size() == 2);
  CHECK(config->sweep().probes(1) == "tcp_bw");
  REQUIRE(config->nodes_size() == 1);
  CHECK(config->nodes(0).labels().at("rack") == "r1");
}

TEST_CASE("Unknown keys are errors naming file, line and key") {
  CHECK(
      ErrorOf("expect:\n  link_rate_gbps: 400\n  mtu: 9000\n") ==
      "cluster.yaml:3: expect.mtu: unknown key (known: link_rate_gbps, netdev_mtu, roce_mtu, "
      "pfc_priority, ecn, dscp_trust, gpudirect, min_memlock_bytes, pcie_speed_gts, tcp_bw_gbps)");
  CHECK(ErrorOf("expekt: {}\n").rfind("cluster.yaml:1: expekt: unknown key", 0) == 0);
}

TEST_CASE("Bad values are errors naming file, line and key") {
  CHECK(ErrorOf("expect:\n  netdev_mtu: big\n") ==
        "cluster.yaml:2: expect.netdev_mtu: expected a non-negative integer, got 'big'");
  CHECK(ErrorOf("expect:\n  netdev_mtu: -1\n") ==
        "cluster.yaml:2: expect.netdev_mtu: expected a non-negative integer, got '-1'");
  CHECK(ErrorOf("expect:\n  ecn: maybe\n") ==
        "cluster.yaml:2: expect.ecn: expected true or false, got 'maybe'");
  CHECK(ErrorOf("sweep:\n  pairing: ring\n") ==
        "cluster.yaml:2: sweep.pairing: unknown value 'ring' (expected full, quick, sample, file, "
        "topology)");
  CHECK(ErrorOf("sweep:\n  pair_timeout: soon\n") ==
        "cluster.yaml:2: sweep.pair_timeout: expected a duration such as 500ms, 30s, 2m or 90d");
  CHECK(ErrorOf("expect: [1, 2]\n") == "cluster.yaml:1: expect: expected a mapping of keys");
}

TEST_CASE("Out-of-range values are errors naming file, line and key") {
  CHECK(ErrorOf("\nthresholds:\n  relative_bw: 1.5\n") ==
        "cluster.yaml:3: thresholds.relative_bw: must be in (0, 1]");
  CHECK(ErrorOf("thresholds:\n  min_bw_efficiency: 0\n") ==
        "cluster.yaml:2: thresholds.min_bw_efficiency: must be in (0, 1]");
  CHECK(ErrorOf("breaker:\n  max_share: 0\n") ==
        "cluster.yaml:2: breaker.max_share: must be in (0, 1] (1: off)");
  CHECK(ErrorOf("expect:\n  roce_mtu: 9000\n") ==
        "cluster.yaml:2: expect.roce_mtu: must be 256, 512, 1024, 2048 or 4096");
  CHECK(ErrorOf("expect:\n  pfc_priority: 8\n") ==
        "cluster.yaml:2: expect.pfc_priority: must be a priority from 0 to 7");
  CHECK(ErrorOf("thresholds:\n  relative_lat: 0.5\n") ==
        "cluster.yaml:2: thresholds.relative_lat: must be at least 1");
}

TEST_CASE("YAML syntax errors name the line") {
  // The parser names the line where it found the flow unclosed: the end of the file, line 3.
  CHECK(ErrorOf("expect:\n  link_rate_gbps: [400\n") ==
        "cluster.yaml:3: YAML syntax error: end of sequence flow not found");
  CHECK(ErrorOf("expect:\n  ecn: true\n  link_rate_gbps: 400: 1\n").rfind("cluster.yaml:3: ", 0) ==
        0);
}

TEST_CASE("A missing file is an error naming it") {
  auto config = LoadConfig("/nonexistent/fabric.yaml");
  REQUIRE_FALSE(config.ok());
  CHECK(std::string(config.status().message()).find("'/nonexistent/fabric.yaml'") !=
        std::string::npos);
}

TEST_CASE("The example configurations load") {
  for (const char* path : {"configs/roce-h100.yaml", "configs/infiniband-ndr.yaml"}) {
    INFO(path);
    auto config = LoadConfig(path);
    REQUIRE(config.ok());
    CHECK(config->expect().link_rate_gbps() == 400);
  }
}

}  // namespace fabricctl

#include "base/profiles.h"
#include "tests/testing/testing.h"

namespace fabricctl {

TEST_CASE("Profiles: the first that matches a node's name and labels sets its expectations") {
  auto config = ParseConfig(R"(
expect: {link_rate_gbps: 400, gpudirect: true}
nodes:
  - {node: login1, labels: {role: login}}
profiles:
  - name: cpu
    nodes: "cpu-[001-128]"
    expect: {netdev_mtu: 1500}
  - name: login
    labels: {role: login}
    expect: {}
  - name: storage-rack
    nodes: "st[1-4]"
    labels: {rack: r9}
    expect: {link_rate_gbps: 200}
)",
                            "cluster.yaml");
  REQUIRE(config.ok());
  std::string profile;
  CHECK(ExpectationsFor(*config, "cpu-007", {}, &profile).netdev_mtu() == 1500);
  CHECK(profile == "cpu");
  CHECK(ExpectationsFor(*config, "cpu-007", {}).link_rate_gbps() == 0);  // replaced, not merged
  CHECK(ExpectationsFor(*config, "login1", {}, &profile).link_rate_gbps() ==
        0);  // labels from nodes:
  CHECK(profile == "login");
  CHECK(ExpectationsFor(*config, "st2", {{"rack", "r9"}}).link_rate_gbps() == 200);
  // Both conditions: the right rack is not enough without the name, nor the name without it.
  CHECK(ExpectationsFor(*config, "st2", {{"rack", "r8"}}, &profile).link_rate_gbps() == 400);
  CHECK(profile.empty());
  CHECK(ExpectationsFor(*config, "gpu-01", {{"rack", "r9"}}).gpudirect());
}

TEST_CASE(
    "Profiles: a profile without a name, without a selector or with a bad hostlist is refused") {
  CHECK(ErrorOf("profiles:\n  - {nodes: \"a[1-2]\"}\n") ==
        "cluster.yaml:2: profiles[0].name: missing");
  CHECK(ErrorOf("profiles:\n  - {name: all, expect: {}}\n") ==
        "cluster.yaml:2: profiles[0] (all): give nodes, labels or both; it would match every node");
  CHECK(ErrorOf("profiles:\n  - {name: cpu, nodes: \"cpu-[9-1]\"}\n") ==
        "cluster.yaml:2: profiles[0].nodes (cpu): nodes: '[9-1]': range 9-1 runs backwards");
}

}  // namespace fabricctl

namespace fabricctl {

TEST_CASE("Topology: levels are label keys, each once") {
  auto config = ParseConfig("topology:\n  levels: [leaf, spine]\n", "cluster.yaml");
  REQUIRE(config.ok());
  CHECK(config->topology().levels_size() == 2);
  CHECK(ErrorOf("\ntopology:\n  levels: [leaf, leaf]\n") ==
        "cluster.yaml:3: topology.levels: 'leaf' is named twice");
  CHECK(ErrorOf("topology:\n  levels: ['a b']\n") ==
        "cluster.yaml:2: topology.levels: 'a b' is not a label key ([A-Za-z0-9._-], 1-64)");
}

TEST_CASE("Rails: each named once, on its own interface") {
  auto config = ParseConfig(
      "rails:\n  - {name: rail0, netdev: eth0, rdma_device: mlx5_0}\n"
      "  - {name: rail1, netdev: eth1}\n",
      "cluster.yaml");
  REQUIRE(config.ok());
  REQUIRE(config->rails_size() == 2);
  CHECK(config->rails(1).netdev() == "eth1");
  CHECK(config->rails(1).rdma_device().empty());
  CHECK(ErrorOf("rails:\n  - {name: r, netdev: eth0}\n  - {name: r, netdev: eth1}\n") ==
        "cluster.yaml:2: rails: rail 'r' is named twice");
  CHECK(ErrorOf("rails:\n  - {name: a, netdev: eth0}\n  - {name: b, netdev: eth0}\n") ==
        "cluster.yaml:2: rails: rail 'b': netdev eth0 is another rail's");
  CHECK(
      ErrorOf("rails:\n  - {name: a}\n") ==
      "cluster.yaml:2: rails: rail 'a': netdev '' is not an interface name ([A-Za-z0-9._-], 1-15)");
  CHECK(ErrorOf("rails:\n  - {name: a, netdev: ../x}\n").find("not an interface name") !=
        std::string::npos);
  CHECK(ErrorOf("rails:\n  - {name: a, netdev: ..}\n").find("not an interface name") !=
        std::string::npos);
  CHECK(ErrorOf("rails:\n  - {name: a, netdev: eth0, rdma_device: mlx5_0}\n"
                "  - {name: b, netdev: eth1, rdma_device: mlx5_0}\n") ==
        "cluster.yaml:2: rails: rail 'b': rdma_device mlx5_0 is another rail's");
}

TEST_CASE("Topology: Slurm's topology.conf becomes the nodes' labels; nodes: entries win") {
  const std::string dir = testing::TempDir("topology_files");
  std::ofstream(dir + "/topology.conf")
      << "SwitchName=leaf1 Nodes=gpu[1-2]\nSwitchName=leaf2 Nodes=gpu3\n"
         "SwitchName=spine Switches=leaf[1-2]\n";
  std::ofstream(dir + "/fabric.yaml") << "topology: {slurm: topology.conf}\n"
                                         "nodes:\n  - {node: gpu2, labels: {leaf: other}}\n";
  auto config = LoadConfig(dir + "/fabric.yaml");
  REQUIRE(config.ok());
  CHECK(config->nodes_size() == 1);  // an agent or fabricctl does not read the topology files
  REQUIRE(LoadTopologyFiles(&*config, dir + "/fabric.yaml").ok());
  CHECK(config->topology().levels(0) == "leaf");
  CHECK(config->topology().levels(1) == "spine");
  CHECK(NodeLabelsFor(*config, "gpu1", {}) ==
        std::map<std::string, std::string>{{"leaf", "leaf1"}, {"spine", "spine"}});
  CHECK(NodeLabelsFor(*config, "gpu2", {}).at("leaf") == "other");
  // The administrator's placement wins over the node's own label; that fills only a gap.
  CHECK(NodeLabelsFor(*config, "gpu3", {{"leaf", "own"}}).at("leaf") == "leaf2");
  CHECK(NodeLabelsFor(*config, "gpu4", {{"leaf", "own"}}).at("leaf") == "own");
  std::ofstream(dir + "/topology.conf") << "SwitchName=a Nodes=gpu1\nSwitchName=b Nodes=gpu1\n";
  auto bad = LoadConfig(dir + "/fabric.yaml");
  REQUIRE(bad.ok());
  const absl::Status s = LoadTopologyFiles(&*bad, dir + "/fabric.yaml");
  CHECK(std::string(s.message()) == dir + "/topology.conf:2: node 'gpu1' is under both a and b");
}

}  // namespace fabricctl

namespace fabricctl {

TEST_CASE("Topology: an ibnetdiscover file places each host under its switch") {
  const std::string dir = testing::TempDir("ibnetdiscover_files");
  std::ofstream(dir + "/fabric.topo")
      << "Switch 36 \"S-0a01\" # \"leaf-a\" base port 0 lid 1 lmc 0\n"
         "Ca 1 \"H-0b01\" # \"gpu001 mlx5_0\"\n"
         "[1](0b02) \"S-0a01\"[7] # lid 3 lmc 0 \"leaf-a\" lid 1 4xNDR\n";
  std::ofstream(dir + "/ib.yaml") << "topology: {ibnetdiscover: fabric.topo}\n";
  auto config = LoadConfig(dir + "/ib.yaml");
  REQUIRE(config.ok());
  REQUIRE(LoadTopologyFiles(&*config, dir + "/ib.yaml").ok());
  CHECK(config->topology().levels_size() == 1);
  CHECK(NodeLabelsFor(*config, "gpu001", {}).at("leaf") == "leaf-a");
  CHECK(NodeLabelsFor(*config, "gpu001", {}).at("leaf_port") == "7");
  // And each host port's cable, for fabricctl accept's cabling checks.
  REQUIRE(config->topology().ib_cables_size() == 1);
  const v1::IbCable& cable = config->topology().ib_cables(0);
  CHECK(cable.node() == "gpu001");
  CHECK(cable.device() == "mlx5_0");
  CHECK(cable.ca_guid().find("0b01") != std::string::npos);
  CHECK(cable.port() == 1);
  CHECK(cable.switch_name() == "leaf-a");
  CHECK(cable.switch_port() == 7);
}

}  // namespace fabricctl
