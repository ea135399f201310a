#include "agent/link_state.h"

#include <filesystem>
#include <fstream>

#include "catch2/catch.hpp"
#include "tests/testing/testing.h"

namespace fabricctl::agent {
namespace {

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text << "\n";
}

TEST_CASE("the heartbeat's link state: the registered NICs and RDMA ports, as sysfs says now") {
  const std::string root = testing::TempDir("link_state");
  Write(root + "/sys/class/net/eth0/operstate", "up");
  Write(root + "/sys/class/net/eth0/speed", "400000");
  Write(root + "/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE");
  Write(root + "/sys/class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)");
  v1::NodeInventory inventory;
  auto* eth = inventory.add_interfaces();
  eth->set_name("eth0");
  eth->add_addresses("10.0.0.1");
  eth->set_speed_mbps(400000);
  auto* lo = inventory.add_interfaces();  // no speed: not a NIC
  lo->set_name("lo");
  lo->add_addresses("127.0.0.1");
  auto* device = inventory.add_rdma_devices();
  device->set_name("mlx5_0");
  device->add_ports()->set_port(1);
  const WatchedLinks links = WatchedLinks::Of(inventory);
  const probes::SysfsRoot sysfs(root);
  const std::string up = LinkState(sysfs, links);
  CHECK(up == "eth0 up 400000 Mb/s; mlx5_0:1 ACTIVE 400 Gb/sec (4X NDR)");
  // The port goes down: the line changes, and the controller ends the node's known-good state.
  Write(root + "/sys/class/infiniband/mlx5_0/ports/1/state", "1: DOWN");
  Write(root + "/sys/class/net/eth0/operstate", "down");
  CHECK(LinkState(sysfs, links) == "eth0 down 400000 Mb/s; mlx5_0:1 DOWN 400 Gb/sec (4X NDR)");
  // A file that cannot be read says so rather than failing.
  std::filesystem::remove(root + "/sys/class/net/eth0/speed");
  CHECK(LinkState(sysfs, links).rfind("eth0 down ? Mb/s", 0) == 0);
}

TEST_CASE("a flap between two heartbeats changes the link state by its counters") {
  const std::string root = testing::TempDir("link_state_flap");
  Write(root + "/sys/class/net/eth0/operstate", "up");
  Write(root + "/sys/class/net/eth0/speed", "100000");
  Write(root + "/sys/class/net/eth0/carrier_changes", "2");
  Write(root + "/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE");
  Write(root + "/sys/class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)");
  Write(root + "/sys/class/infiniband/mlx5_0/ports/1/counters/link_downed", "0");
  WatchedLinks links;
  links.interfaces = {"eth0"};
  links.rdma_ports = {{"mlx5_0", 1}};
  const probes::SysfsRoot sysfs(root);
  const std::string before = LinkState(sysfs, links);
  CHECK(before ==
        "eth0 up 100000 Mb/s carrier_changes 2; mlx5_0:1 ACTIVE 400 Gb/sec (4X NDR) link_downed 0");
  Write(root + "/sys/class/net/eth0/carrier_changes", "4");  // down and up again: up as before
  CHECK(LinkState(sysfs, links) != before);
}

TEST_CASE("the watch takes a NIC whose link was down at start; the heartbeat does not") {
  v1::NodeInventory inventory;
  auto* up = inventory.add_interfaces();
  up->set_name("eth0");
  up->add_addresses("10.0.0.1");
  up->set_speed_mbps(100000);
  auto* down = inventory.add_interfaces();  // a NIC without carrier: no speed yet
  down->set_name("eth1");
  down->add_addresses("10.0.1.1");
  down->set_pci_path("pci0000:00/0000:00:02.0/0000:17:00.1");
  auto* veth = inventory.add_interfaces();  // no device, no speed: not a NIC
  veth->set_name("veth0");
  veth->add_addresses("10.0.2.1");
  CHECK(WatchedLinks::Of(inventory).interfaces == std::vector<std::string>{"eth0"});
  CHECK(WatchedLinks::ToWatch(inventory).interfaces == std::vector<std::string>{"eth0", "eth1"});
}

}  // namespace
}  // namespace fabricctl::agent
