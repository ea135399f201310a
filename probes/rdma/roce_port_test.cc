#include "probes/rdma/roce_port.h"

#include <filesystem>
#include <fstream>

#include "catch2/catch.hpp"
#include "tests/testing/testing.h"

namespace fabricctl::probes {
namespace {

TEST_CASE("soft-RoCE's source port is its queue pair number's 14-bit hash above 0xC000") {
  // hash_32(qpn, 14): (qpn * 0x61C88647 mod 2^32) >> 18.
  CHECK(QpnHashSourcePort(1) == 0xC000 + 6258);
  CHECK(QpnHashSourcePort(17) == 57236);
  CHECK(QpnHashSourcePort(0) == 0xC000);
}

TEST_CASE("the flow-label rule folds the two queue pair numbers' label into 0xC000..0xFFFF") {
  CHECK(FlowLabelToUdpSourcePort(0) == 0xC000);
  CHECK(FlowLabelToUdpSourcePort(0x3FFF) == 0xFFFF);
  CHECK(FlowLabelToUdpSourcePort(0x4000) == 0xC001);  // the high six bits fold into the low
  CHECK(CalcFlowLabel(0x11, 0x2A) == 0x2CA);
  // 24-bit queue pair numbers: the product needs 48 bits.
  CHECK(CalcFlowLabel(0xFFFFFF, 0xFFFFFE) == 0xFFF2D);
  CHECK(RoceSourcePort(SourcePortRule::kFlowLabel, 0x11, 0x2A) == 49866);
  CHECK(RoceSourcePort(SourcePortRule::kQpnHash, 17, 99) == 57236);
  CHECK_FALSE(RoceSourcePort(SourcePortRule::kUnknown, 17, 99).has_value());
}

TEST_CASE("a device's rule comes from its driver in sysfs") {
  const std::string root = testing::TestPath("roce_port");
  const std::string ib = root + "/sys/class/infiniband/";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(ib + "rxe0");
  std::ofstream(ib + "rxe0/parent") << "eth0\n";
  const std::string bus = root + "/sys/bus/pci/drivers/";
  for (const char* driver : {"mlx5_core", "bnxt_en"})
    std::filesystem::create_directories(bus + driver);
  std::filesystem::create_directories(root + "/sys/devices/pci0000:00/0000:00:01.0");
  std::filesystem::create_directories(root + "/sys/devices/pci0000:00/0000:00:02.0");
  std::filesystem::create_symlink(bus + "mlx5_core",
                                  root + "/sys/devices/pci0000:00/0000:00:01.0/driver");
  std::filesystem::create_symlink(bus + "bnxt_en",
                                  root + "/sys/devices/pci0000:00/0000:00:02.0/driver");
  std::filesystem::create_directories(ib + "mlx5_0");
  std::filesystem::create_symlink(root + "/sys/devices/pci0000:00/0000:00:01.0",
                                  ib + "mlx5_0/device");
  std::filesystem::create_directories(ib + "bnxt_re0");
  std::filesystem::create_symlink(root + "/sys/devices/pci0000:00/0000:00:02.0",
                                  ib + "bnxt_re0/device");
  const SysfsRoot sys(root);
  CHECK(RuleOfDriver(DriverOf(sys, "rxe0")) == SourcePortRule::kQpnHash);
  CHECK(RuleOfDriver(DriverOf(sys, "mlx5_0")) == SourcePortRule::kFlowLabel);
  CHECK(DriverOf(sys, "bnxt_re0") == "bnxt_en");
  CHECK(RuleOfDriver(DriverOf(sys, "bnxt_re0")) == SourcePortRule::kUnknown);
  CHECK(RuleOfDriver(DriverOf(sys, "nosuch")) == SourcePortRule::kUnknown);
}

TEST_CASE("a GID's IPv4 address where it is IPv4-mapped") {
  std::string gid(16, '\0');
  gid[10] = gid[11] = '\xff';
  gid[12] = '\xc0', gid[13] = 0, gid[14] = 2, gid[15] = 1;
  CHECK(Ipv4OfGid(gid) == "192.0.2.1");
  gid[0] = '\xfe';  // fe80::...: not IPv4-mapped
  CHECK_FALSE(Ipv4OfGid(gid).has_value());
  CHECK_FALSE(Ipv4OfGid("short").has_value());
}

}  // namespace
}  // namespace fabricctl::probes
