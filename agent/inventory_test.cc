#include "agent/inventory.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/testing/testing.h"

namespace fabricctl::agent {
namespace {

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text << "\n";
}

void Link(const std::string& path, const std::string& target) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::filesystem::create_symlink(target, path);
}

// A tree laid out as the kernel lays it out (reference §4.1-4.3): a ConnectX-7 at 0000:18:00.0
// behind root port 0000:17:00.0, its netdev eth9 and RDMA device mlx5_0 (the PCI function's
// link trained at x8 of x16), an H100 at 0000:1a:00.0, and a veth with no device.
std::string NodeTree(const std::string& name) {
  const std::string root = testing::TempDir(name);
  const std::string nic = "/sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0";
  const std::string gpu = "/sys/devices/pci0000:17/0000:17:00.0/0000:1a:00.0";
  for (const std::string& f : {nic, gpu}) {
    Write(root + f + "/numa_node", "0");
    Write(root + f + "/current_link_speed", "32.0 GT/s PCIe");
    Write(root + f + "/max_link_speed", "32.0 GT/s PCIe");
    Write(root + f + "/max_link_width", "16");
    Link(root + "/sys/bus/pci/devices/" + f.substr(f.rfind('/') + 1), "../../.." + f.substr(4));
  }
  Write(root + nic + "/current_link_width", "8");
  Write(root + gpu + "/current_link_width", "16");
  Link(root + nic + "/driver", "../../../../bus/pci/drivers/mlx5_core");
  Write(root + nic + "/net/eth9/mtu", "9000");
  Write(root + nic + "/net/eth9/speed", "400000");
  Link(root + nic + "/net/eth9/device", "../../../0000:18:00.0");
  Link(root + "/sys/class/net/eth9", "../../devices/pci0000:17/0000:17:00.0/0000:18:00.0/net/eth9");
  Write(root + "/sys/devices/virtual/net/veth0/mtu", "1500");
  Link(root + "/sys/class/net/veth0", "../../devices/virtual/net/veth0");
  Write(root + "/sys/class/infiniband/mlx5_0/fw_ver", "28.39.1002");
  Write(root + "/sys/class/infiniband/mlx5_0/board_id", "MT_0000000838");
  Write(root + "/sys/class/infiniband/mlx5_0/hca_type", "MT4129");
  return root;
}

}  // namespace

TEST_CASE("The inventory names the node, its loopback interface, and why RDMA is absent") {
  InventoryOptions options;
  options.node_name = "node-7";
  options.agent_address = "127.0.0.1:7401";
  options.labels = {{"rack", "r1"}};
  options.gpus = CollectGpus(probes::SysfsRoot("/"));
  v1::NodeInventory inventory = CollectInventory(options, probes::SysfsRoot("/"));

  CHECK(inventory.node_name() == "node-7");
  CHECK(inventory.hostname() == Hostname());
  CHECK(inventory.agent_address() == "127.0.0.1:7401");
  CHECK(inventory.labels().at("rack") == "r1");
  auto lo = std::find_if(inventory.interfaces().begin(), inventory.interfaces().end(),
                         [](const v1::NetInterface& i) { return i.name() == "lo"; });
  REQUIRE(lo != inventory.interfaces().end());
  CHECK(std::find(lo->addresses().begin(), lo->addresses().end(), "127.0.0.1") !=
        lo->addresses().end());
  CHECK(lo->mtu() > 0);
  // Either devices are listed or the reason there are none is given; never both empty.
  CHECK((inventory.rdma_devices_size() > 0) == inventory.rdma_unavailable_reason().empty());
  CHECK(inventory.memlock_limit_bytes() > 0);
  // GPUs likewise: listed, or the reason there are none.
  CHECK((inventory.gpus_size() > 0) == inventory.gpu_unavailable_reason().empty());
}

TEST_CASE("Node name defaults to the hostname") {
  v1::NodeInventory inventory = CollectInventory({}, probes::SysfsRoot("/"));
  CHECK(inventory.node_name() == Hostname());
  CHECK_FALSE(inventory.node_name().empty());
}

TEST_CASE("an interface's driver and PCIe link come from its device; a veth has neither") {
  const probes::SysfsRoot sysfs(NodeTree("inventory_interface"));
  v1::NetInterface eth;
  eth.set_name("eth9");
  ReadInterfaceAttributes(sysfs, &eth);
  CHECK(eth.mtu() == 9000);
  CHECK(eth.speed_mbps() == 400000);
  CHECK(eth.numa_node() == 0);
  CHECK(eth.pci_path() == "pci0000:17/0000:17:00.0/0000:18:00.0");
  CHECK(eth.driver() == "mlx5_core");
  REQUIRE(eth.has_pcie());
  CHECK(eth.pcie().speed() == "32.0 GT/s PCIe");
  CHECK(eth.pcie().width() == 8);
  CHECK(eth.pcie().max_speed() == "32.0 GT/s PCIe");
  CHECK(eth.pcie().max_width() == 16);
  CHECK(eth.firmware().empty());  // an ioctl's, not sysfs's

  v1::NetInterface veth;
  veth.set_name("veth0");
  ReadInterfaceAttributes(sysfs, &veth);
  CHECK(veth.mtu() == 1500);
  CHECK(veth.numa_node() == -1);
  CHECK(veth.pci_path().empty());
  CHECK(veth.driver().empty());
  CHECK_FALSE(veth.has_pcie());
}

TEST_CASE("an RDMA device's firmware, board, HCA type and PCIe link, trimmed") {
  const probes::SysfsRoot sysfs(NodeTree("inventory_rdma"));
  v1::RdmaDevice device;
  device.set_name("mlx5_0");
  device.set_pci_address("0000:18:00.0");
  ReadRdmaDeviceAttributes(sysfs, &device);
  CHECK(device.fw_ver() == "28.39.1002");
  CHECK(device.board_id() == "MT_0000000838");
  CHECK(device.hca_type() == "MT4129");
  REQUIRE(device.has_pcie());
  CHECK(device.pcie().speed() == "32.0 GT/s PCIe");
  CHECK(device.pcie().width() == 8);
}

TEST_CASE("absent files leave an RDMA device's fields empty; a long one is cut") {
  const std::string root = NodeTree("inventory_rdma_absent");
  Write(root + "/sys/class/infiniband/rxe0/fw_ver", std::string(5000, '9'));
  const probes::SysfsRoot sysfs(root);
  v1::RdmaDevice soft;  // a software device: no PCI function, no board
  soft.set_name("rxe0");
  ReadRdmaDeviceAttributes(sysfs, &soft);
  CHECK(soft.fw_ver() == std::string(kMaxAttributeBytes, '9'));
  CHECK(soft.board_id().empty());
  CHECK(soft.hca_type().empty());
  CHECK_FALSE(soft.has_pcie());
  // An address that is not a PCI function's is not looked up at all.
  CHECK_FALSE(ReadPcieLink(sysfs, "../../0000:18:00.0").has_value());
  CHECK_FALSE(ReadPcieLink(sysfs, "0000:99:00.0").has_value());
  CHECK(ReadPcieLink(sysfs, "0000:18:00.0").has_value());
}

TEST_CASE("a GPU's bus id in NVML's form finds its PCI function") {
  CHECK(SysfsPciAddress("00000000:1A:00.0") == "0000:1a:00.0");
  CHECK(SysfsPciAddress("0000:1a:00.0") == "0000:1a:00.0");
  CHECK(SysfsPciAddress("00010000:01:00.0") == "10000:01:00.0");  // a VMD domain
  const probes::SysfsRoot sysfs(NodeTree("inventory_gpu"));
  v1::Gpu gpu;
  gpu.set_pci_bus_id("00000000:1A:00.0");
  gpu.set_numa_node(-1);
  ReadGpuAttributes(sysfs, &gpu);
  CHECK(gpu.numa_node() == 0);
  CHECK(gpu.pci_path() == "pci0000:17/0000:17:00.0/0000:1a:00.0");
  REQUIRE(gpu.has_pcie());
  CHECK(gpu.pcie().width() == 16);
  CHECK(gpu.pcie().max_width() == 16);
  v1::Gpu unknown;
  unknown.set_pci_bus_id("0000:99:00.0");
  unknown.set_numa_node(-1);
  ReadGpuAttributes(sysfs, &unknown);
  CHECK(unknown.numa_node() == -1);
  CHECK_FALSE(unknown.has_pcie());
}

TEST_CASE("firmware is asked of interfaces on a PCI device only, and only when a source is set") {
  // The tree puts the loopback interface getifaddrs lists on a PCI function.
  const std::string root = testing::TempDir("inventory_firmware");
  const std::string nic = "/sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0";
  Write(root + nic + "/net/lo/mtu", "65536");
  Link(root + "/sys/class/net/lo", "../.." + nic.substr(4) + "/net/lo");
  std::vector<std::string> asked;
  InventoryOptions options;
  options.netdev_firmware = [&asked](const std::string& netdev) -> absl::StatusOr<std::string> {
    asked.push_back(netdev);
    return std::string(" 28.39.1002 (MT_0000000838)\n");
  };
  const v1::NodeInventory inventory = CollectInventory(options, probes::SysfsRoot(root));
  CHECK(asked == std::vector<std::string>{"lo"});
  auto lo = std::find_if(inventory.interfaces().begin(), inventory.interfaces().end(),
                         [](const v1::NetInterface& i) { return i.name() == "lo"; });
  REQUIRE(lo != inventory.interfaces().end());
  CHECK(lo->firmware() == "28.39.1002 (MT_0000000838)");
  // Without a source, nothing is asked and nothing invented.
  const v1::NodeInventory plain = CollectInventory({}, probes::SysfsRoot(root));
  for (const auto& itf : plain.interfaces()) CHECK(itf.firmware().empty());
}

TEST_CASE("ETHTOOL_GDRVINFO is asked only of a netdev name") {
  CHECK(ReadNetdevFirmware("").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ReadNetdevFirmware("a-name-longer-than-ifnamsiz").status().code() ==
        absl::StatusCode::kInvalidArgument);
  // The loopback has no driver information to give.
  CHECK_FALSE(ReadNetdevFirmware("lo").ok());
}

}  // namespace fabricctl::agent
