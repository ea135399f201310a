#include "agent/inventory.h"

#include <algorithm>
#include <catch2/catch.hpp>

namespace fabricctl::agent {

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

}  // namespace fabricctl::agent
