#include "agent/rail.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cstdlib>
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/pci_topology.h"
#include "probes/catalogue.h"
#include "probes/rdma/device.h"

namespace fabricctl::agent {

absl::StatusOr<std::string> InterfaceIpv4(const std::string& netdev) {
  if (::if_nametoindex(netdev.c_str()) == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("rail interface ", netdev, ": no such interface on this node"));
  }
  ifaddrs* raw = nullptr;
  if (::getifaddrs(&raw) != 0) {
    return absl::InternalError(absl::StrCat("rail interface ", netdev, ": getifaddrs failed"));
  }
  std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> list(raw, &::freeifaddrs);
  for (ifaddrs* it = raw; it != nullptr; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET || netdev != it->ifa_name) {
      continue;
    }
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(it->ifa_addr)->sin_addr, text,
                sizeof(text));
    return std::string(text);
  }
  return absl::FailedPreconditionError(
      absl::StrCat("rail interface ", netdev, ": no IPv4 address"));
}

absl::Status ResolveRail(const probes::SysfsRoot& sysfs, const std::vector<v1::Gpu>& gpus,
                         probes::ProbeParams* params) {
  if (params->netdev.empty()) return absl::OkStatus();
  auto address = InterfaceIpv4(params->netdev);
  if (!address.ok()) return address.status();
  params->source_host = *address;
  if (params->nearest_gpu && (params->rdma.gpu_memory || params->rdma.server_gpu_memory)) {
    const std::string dir = "/sys/class/net/" + params->netdev;
    auto link = sysfs.ReadLink(dir);
    int numa = -1;
    if (auto n = sysfs.ReadTrimmed(dir + "/device/numa_node"); n.ok()) numa = std::atoi(n->c_str());
    const std::vector<uint32_t> near = NearestGpus(gpus, link.ok() ? PciPathOf(*link) : "", numa);
    if (!near.empty()) params->rdma.gpu = near.front();
  }
  const probes::ProbeInfo* probe = probes::FindProbeInfo(params->kind);
  if (probe == nullptr || !probe->rdma || !params->rdma.device.empty()) return absl::OkStatus();
  auto devices = probes::ListRdmaDevices(sysfs);
  if (!devices.ok()) return absl::OkStatus();  // the probe itself says why there is no RDMA
  for (const auto& device : *devices) {
    for (const auto& port : device.ports) {
      if (port.netdev != params->netdev) continue;
      params->rdma.device = device.name;
      params->rdma.port = port.port;
      return absl::OkStatus();
    }
  }
  return absl::FailedPreconditionError(
      absl::StrCat("rail interface ", params->netdev, ": no RDMA device's port carries it"));
}

}  // namespace fabricctl::agent
