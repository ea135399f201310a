#include "controller/verdict/inventory_diff.h"

#include "catch2/catch.hpp"

namespace fabricctl::controller {
namespace {

v1::NodeInventory Node() {
  v1::NodeInventory inv;
  inv.set_node_name("gpu-1");
  inv.set_agent_started_unix_ms(1000);
  inv.set_agent_version("0.2.0");
  auto* eth = inv.add_interfaces();
  eth->set_name("eth0");
  eth->add_addresses("10.0.0.1");
  eth->set_speed_mbps(400000);
  eth->set_mtu(9000);
  auto* docker = inv.add_interfaces();  // a container's bridge: no speed, comes and goes
  docker->set_name("docker0");
  docker->add_addresses("172.17.0.1");
  auto* port = inv.add_rdma_devices();
  port->set_name("mlx5_0");
  auto* p = port->add_ports();
  p->set_port(1);
  p->set_rate_gbps(400);
  p->set_active_mtu(4096);
  p->set_link_layer("Ethernet");
  auto* gpu = inv.add_gpus();
  gpu->set_pci_bus_id("0000:18:00.0");
  gpu->set_name("H100");
  return inv;
}

TEST_CASE("the same node registering again, its containers aside, changed nothing") {
  v1::NodeInventory again = Node();
  again.mutable_interfaces()->RemoveLast();  // docker0 went with its containers
  auto* veth = again.add_interfaces();
  veth->set_name("veth12ab");
  CHECK(InventoryChanges(Node(), again).empty());
}

TEST_CASE("a restarted agent, a slower port, a lost GPU and a new version are each named") {
  v1::NodeInventory after = Node();
  after.set_agent_started_unix_ms(5000);
  after.mutable_rdma_devices(0)->mutable_ports(0)->set_rate_gbps(200);
  after.clear_gpus();
  after.set_agent_version("0.3.0");
  after.mutable_interfaces(0)->set_mtu(1500);
  const std::vector<std::string> changes = InventoryChanges(Node(), after);
  CHECK(changes ==
        std::vector<std::string>{
            "its agent restarted", "interface eth0: 400000 Mb/s, MTU 9000 -> 400000 Mb/s, MTU 1500",
            "RDMA port mlx5_0:1: 400 Gb/s, MTU 4096, Ethernet -> 200 Gb/s, MTU 4096, Ethernet",
            "GPU 0000:18:00.0: H100 -> none", "agent version: 0.2.0 -> 0.3.0"});
}

v1::PcieLink Link(const std::string& speed, uint32_t width, const std::string& max_speed,
                  uint32_t max_width) {
  v1::PcieLink link;
  link.set_speed(speed);
  link.set_width(width);
  link.set_max_speed(max_speed);
  link.set_max_width(max_width);
  return link;
}

// Node() with firmware, drivers and PCIe links: eth0 is mlx5_0's netdev (one PCI function),
// eno1 a NIC of its own.
v1::NodeInventory Detailed() {
  v1::NodeInventory inv = Node();
  const v1::PcieLink gen5_x16 = Link("32.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16);
  auto* eth = inv.mutable_interfaces(0);
  eth->set_pci_path("pci0000:15/0000:15:01.0/0000:16:00.0");
  eth->set_driver("mlx5_core");
  eth->set_firmware("28.39.1002 (MT_0000000838)");
  *eth->mutable_pcie() = gen5_x16;
  auto* eno = inv.add_interfaces();
  eno->set_name("eno1");
  eno->add_addresses("192.168.1.7");
  eno->set_speed_mbps(25000);
  eno->set_mtu(1500);
  eno->set_pci_path("pci0000:00/0000:00:03.0");
  eno->set_driver("ice");
  eno->set_firmware("4.40 0x8001af4e 1.3429.0");
  *eno->mutable_pcie() = Link("16.0 GT/s PCIe", 8, "16.0 GT/s PCIe", 8);
  auto* mlx = inv.mutable_rdma_devices(0);
  mlx->set_pci_address("0000:16:00.0");
  mlx->set_fw_ver("28.39.1002");
  mlx->set_board_id("MT_0000000838");
  mlx->set_hca_type("MT4129");
  *mlx->mutable_pcie() = gen5_x16;
  *inv.mutable_gpus(0)->mutable_pcie() = gen5_x16;
  return inv;
}

// Detailed() as an older agent reports it, without them.
v1::NodeInventory Older(v1::NodeInventory inv) {
  for (auto& itf : *inv.mutable_interfaces()) {
    itf.clear_driver();
    itf.clear_firmware();
    itf.clear_pcie();
  }
  for (auto& device : *inv.mutable_rdma_devices()) {
    device.clear_fw_ver();
    device.clear_board_id();
    device.clear_hca_type();
    device.clear_pcie();
  }
  for (auto& gpu : *inv.mutable_gpus()) gpu.clear_pcie();
  return inv;
}

std::vector<std::string> Described(const std::vector<InventoryDifference>& differences) {
  std::vector<std::string> out;
  for (const InventoryDifference& d : differences) out.push_back(Describe(d));
  return out;
}

TEST_CASE("nodes alike in firmware, drivers and PCIe links differ in nothing") {
  CHECK(DifferencesFrom(Detailed(), Detailed()).empty());
}

TEST_CASE("a part one side does not report is no difference: agents are upgraded one by one") {
  // The reference's agent reads them, the node's does not, and the other way round.
  CHECK(DifferencesFrom(Detailed(), Older(Detailed())).empty());
  CHECK(DifferencesFrom(Older(Detailed()), Detailed()).empty());
  // Nor, between two registrations, does a part that one of them leaves empty.
  CHECK(InventoryChanges(Older(Detailed()), Detailed()).empty());
  // A file one node's kernel lacks: empty on that side.
  v1::NodeInventory no_board = Detailed();
  no_board.mutable_rdma_devices(0)->clear_board_id();
  no_board.mutable_interfaces(2)->mutable_pcie()->clear_speed();
  no_board.mutable_interfaces(2)->mutable_pcie()->clear_width();
  CHECK(DifferencesFrom(Detailed(), no_board).empty());
}

TEST_CASE("an RDMA device's firmware and PCIe link are each a difference of their own") {
  v1::NodeInventory node = Detailed();
  auto* mlx = node.mutable_rdma_devices(0);
  mlx->set_fw_ver("28.36.1010");
  mlx->set_hca_type("MT4125");
  *mlx->mutable_pcie() = Link("16.0 GT/s PCIe", 8, "32.0 GT/s PCIe", 16);
  // eth0 sits on mlx5_0's PCI function: its firmware and link are mlx5_0's, named once.
  node.mutable_interfaces(0)->set_firmware("28.36.1010 (MT_0000000838)");
  *node.mutable_interfaces(0)->mutable_pcie() = mlx->pcie();
  const std::vector<InventoryDifference> differences = DifferencesFrom(Detailed(), node);
  CHECK(Described(differences) ==
        std::vector<std::string>{"RDMA device mlx5_0 HCA type: MT4129 -> MT4125",
                                 "RDMA device mlx5_0 PCIe: 32.0 GT/s x16 -> 16.0 GT/s x8",
                                 "RDMA device mlx5_0 firmware: 28.39.1002 -> 28.36.1010"});
  REQUIRE(differences.size() == 3);
  CHECK(differences[2].part == "RDMA device mlx5_0 firmware");
  CHECK(differences[2].before == "28.39.1002");
  CHECK(differences[2].after == "28.36.1010");
}

TEST_CASE("a NIC's driver, firmware and PCIe link are compared where no RDMA device covers them") {
  v1::NodeInventory node = Detailed();
  node.mutable_interfaces(0)->set_driver("mlx5e_rep");
  auto* eno = node.mutable_interfaces(2);
  eno->set_driver("i40e");
  eno->set_firmware("9.20 0x8000d95e 1.3353.0");
  *eno->mutable_pcie() = Link("8.0 GT/s PCIe", 8, "16.0 GT/s PCIe", 8);
  CHECK(Described(DifferencesFrom(Detailed(), node)) ==
        std::vector<std::string>{
            "interface eno1 PCIe: 16.0 GT/s x8 -> 8.0 GT/s x8",
            "interface eno1 driver: ice -> i40e",
            "interface eno1 firmware: 4.40 0x8001af4e 1.3429.0 -> 9.20 0x8000d95e 1.3353.0",
            "interface eth0 driver: mlx5_core -> mlx5e_rep"});
}

TEST_CASE("a GPU's link is compared only where both read it at its maximum") {
  v1::NodeInventory idle = Detailed();
  *idle.mutable_gpus(0)->mutable_pcie() = Link("2.5 GT/s PCIe", 16, "32.0 GT/s PCIe", 16);
  CHECK(DifferencesFrom(Detailed(), idle).empty());
  v1::NodeInventory gen4 = Detailed();
  *gen4.mutable_gpus(0)->mutable_pcie() = Link("16.0 GT/s PCIe", 16, "16.0 GT/s PCIe", 16);
  CHECK(Described(DifferencesFrom(Detailed(), gen4)) ==
        std::vector<std::string>{"GPU 0000:18:00.0 PCIe: 32.0 GT/s x16 -> 16.0 GT/s x16"});
}

TEST_CASE("new firmware on a known-good node ends its known-good state") {
  v1::NodeInventory after = Detailed();
  after.mutable_rdma_devices(0)->set_fw_ver("28.40.1000");
  CHECK(InventoryChanges(Detailed(), after) ==
        std::vector<std::string>{"RDMA device mlx5_0 firmware: 28.39.1002 -> 28.40.1000"});
}

}  // namespace
}  // namespace fabricctl::controller
