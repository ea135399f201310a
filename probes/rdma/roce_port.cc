#include "probes/rdma/roce_port.h"

#include "absl/strings/str_cat.h"

namespace fabricctl::probes {
namespace {

// The drivers of the PCI functions under RDMA devices whose RC queue pairs take their UDP source
// port from the kernel's flow-label rule: mlx5 (mlx5_core), irdma (on ice), hns_roce (on hns3),
// mana_ib (on mana), ionic_rdma (on ionic). The RDMA device's parent is the PCI function, so its
// driver is the Ethernet one.
constexpr const char* kFlowLabelDrivers[] = {"mlx5_core", "ice", "hns3", "mana", "ionic"};

}  // namespace

std::string DriverOf(const SysfsRoot& sys, const std::string& device) {
  const std::string dir = absl::StrCat("/sys/class/infiniband/", device);
  if (sys.Exists(dir + "/parent") && !sys.Exists(dir + "/device")) return "rxe";
  const auto link = sys.ReadLink(dir + "/device/driver");
  if (!link.ok()) return "";
  return link->substr(link->rfind('/') + 1);
}

SourcePortRule RuleOfDriver(const std::string& driver) {
  if (driver == "rxe") return SourcePortRule::kQpnHash;
  for (const char* d : kFlowLabelDrivers) {
    if (driver == d) return SourcePortRule::kFlowLabel;
  }
  return SourcePortRule::kUnknown;
}

uint32_t CalcFlowLabel(uint32_t local_qpn, uint32_t remote_qpn) {
  uint64_t v = static_cast<uint64_t>(local_qpn) * remote_qpn;
  v ^= v >> 20;
  v ^= v >> 40;
  return static_cast<uint32_t>(v & 0xFFFFF);
}

uint16_t FlowLabelToUdpSourcePort(uint32_t flow_label) {
  uint32_t low = flow_label & 0x03FFF;
  const uint32_t high = flow_label & 0xFC000;
  low ^= high >> 14;
  return static_cast<uint16_t>(low | 0xC000);
}

uint16_t QpnHashSourcePort(uint32_t qpn) {
  constexpr uint32_t kGoldenRatio32 = 0x61C88647;  // include/linux/hash.h's GOLDEN_RATIO_32
  return static_cast<uint16_t>(0xC000 + (((qpn * kGoldenRatio32) >> (32 - 14)) & 0x3FFF));
}

std::optional<uint16_t> RoceSourcePort(SourcePortRule rule, uint32_t local_qpn,
                                       uint32_t remote_qpn) {
  switch (rule) {
    case SourcePortRule::kQpnHash:
      return QpnHashSourcePort(local_qpn);
    case SourcePortRule::kFlowLabel:
      return FlowLabelToUdpSourcePort(CalcFlowLabel(local_qpn, remote_qpn));
    case SourcePortRule::kUnknown:
      break;
  }
  return std::nullopt;
}

std::string GidNetdev(const SysfsRoot& sys, const std::string& device, uint32_t port,
                      int gid_index) {
  if (gid_index < 0) return "";
  const auto netdev = sys.ReadTrimmed(absl::StrCat("/sys/class/infiniband/", device, "/ports/",
                                                   port, "/gid_attrs/ndevs/", gid_index));
  return netdev.ok() ? *netdev : "";
}

std::optional<std::string> Ipv4OfGid(const std::string& gid) {
  if (gid.size() != 16) return std::nullopt;
  for (int i = 0; i < 10; ++i) {
    if (gid[i] != 0) return std::nullopt;
  }
  if (static_cast<uint8_t>(gid[10]) != 0xFF || static_cast<uint8_t>(gid[11]) != 0xFF)
    return std::nullopt;
  const auto* b = reinterpret_cast<const uint8_t*>(gid.data()) + 12;
  return absl::StrCat(b[0], ".", b[1], ".", b[2], ".", b[3]);
}

}  // namespace fabricctl::probes
