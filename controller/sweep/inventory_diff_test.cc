#include "controller/sweep/inventory_diff.h"

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

}  // namespace
}  // namespace fabricctl::controller
