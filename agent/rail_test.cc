#include "agent/rail.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/testing/testing.h"

namespace fabricctl::agent {
namespace {

TEST_CASE("a rail interface's IPv4 address, or why there is none") {
  auto lo = InterfaceIpv4("lo");
  REQUIRE(lo.ok());
  CHECK(*lo == "127.0.0.1");
  CHECK(InterfaceIpv4("nonexist9").status().message() ==
        "rail interface nonexist9: no such interface on this node");
}

TEST_CASE("on a rail with GPU memory, the GPU nearest the rail's NIC") {
  // A sysfs fixture: the rail interface's device under the same PCIe switch as GPU 1.
  const std::string root = testing::TestPath("railsys");
  REQUIRE(std::system(("rm -rf " + root + " && mkdir -p " + root + "/sys/class/net").c_str()) == 0);
  REQUIRE(::symlink(
              "../../devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:01.0/0000:1c:00.0/net/lo",
              (root + "/sys/class/net/lo").c_str()) == 0);
  std::vector<v1::Gpu> gpus(2);
  gpus[0].set_index(0);
  gpus[0].set_pci_path("pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:00.0/0000:1a:00.0");
  gpus[1].set_index(1);
  gpus[1].set_pci_path("pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:01.0/0000:1b:00.0");
  probes::ProbeParams params;
  params.kind = v1::RDMA_WRITE_BW;
  params.netdev = "lo";
  params.nearest_gpu = true;
  params.rdma.gpu_memory = true;
  params.rdma.device = "mlx5_4";  // named by the configuration: kept
  REQUIRE(ResolveRail(probes::SysfsRoot(root), gpus, &params).ok());
  CHECK(params.source_host == "127.0.0.1");
  CHECK(params.rdma.gpu == 1);
  CHECK(params.rdma.device == "mlx5_4");
  // Without nearest_gpu, the GPU asked for stays.
  params.nearest_gpu = false;
  params.rdma.gpu = 0;
  REQUIRE(ResolveRail(probes::SysfsRoot(root), gpus, &params).ok());
  CHECK(params.rdma.gpu == 0);
}

}  // namespace
}  // namespace fabricctl::agent
