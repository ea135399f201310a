#include "base/pci_topology.h"

#include <catch2/catch.hpp>

namespace fabricctl {
namespace {

v1::Gpu GpuAt(uint32_t index, const std::string& path, int32_t numa) {
  v1::Gpu gpu;
  gpu.set_index(index);
  gpu.set_pci_path(path);
  gpu.set_numa_node(numa);
  return gpu;
}

TEST_CASE("PCI paths from sysfs links: root complex down to the device's function") {
  CHECK(PciPathOf("../../devices/pci0000:17/0000:17:00.0/0000:18:00.0/net/eth1") ==
        "pci0000:17/0000:17:00.0/0000:18:00.0");
  CHECK(PciPathOf(
            "../../../devices/pci0000:c0/0000:c0:01.1/0000:c1:00.0/0000:c2:00.0/0000:c3:00.0") ==
        "pci0000:c0/0000:c0:01.1/0000:c1:00.0/0000:c2:00.0/0000:c3:00.0");
  CHECK(PciPathOf("../../devices/virtual/net/veth0").empty());
  CHECK(PciPathOf("").empty());
}

TEST_CASE("the GPUs nearest a NIC: under the deepest shared switch, else its NUMA node") {
  // A DGX-like host: two PCIe switches under one root complex, a GPU and a NIC under each.
  const std::vector<v1::Gpu> gpus = {
      GpuAt(0, "pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:00.0/0000:1a:00.0", 0),
      GpuAt(1, "pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:01.0/0000:1b:00.0", 0),
      GpuAt(2, "pci0000:97/0000:97:00.0/0000:98:00.0/0000:99:00.0/0000:9a:00.0", 1)};
  const std::string nic0 = "pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:00.0/0000:1c:00.0";
  CHECK(NearestGpus(gpus, nic0, 0) == std::vector<uint32_t>{0});
  const std::string nic_far = "pci0000:97/0000:97:00.0/0000:9d:00.0";
  CHECK(NearestGpus(gpus, nic_far, 1) == std::vector<uint32_t>{2});
  // No shared root complex: by NUMA node; unknown NUMA: none.
  CHECK(NearestGpus(gpus, "pci0000:50/0000:50:00.0", 0) == std::vector<uint32_t>{0, 1});
  CHECK(NearestGpus(gpus, "", -1).empty());
}

}  // namespace
}  // namespace fabricctl
