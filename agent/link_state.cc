#include "agent/link_state.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace fabricctl::agent {
namespace {

std::string Read(const probes::SysfsRoot& sysfs, const std::string& path) {
  auto text = sysfs.ReadTrimmed(path);
  return text.ok() && !text->empty() ? *text : "?";
}

// " carrier_changes 4": a counter of the link's falls, where the kernel has it. A flap between
// two heartbeats leaves the state as it was and this count higher.
std::string Counted(const probes::SysfsRoot& sysfs, const std::string& dir,
                    const std::string& counter) {
  auto text = sysfs.ReadTrimmed(dir + "/" + counter);
  if (!text.ok() || text->empty()) return "";
  return absl::StrCat(" ", counter.substr(counter.rfind('/') + 1), " ", *text);
}

}  // namespace

bool IsAggregate(const probes::SysfsRoot& sysfs, const std::string& netdev) {
  const std::string dir = "/sys/class/net/" + netdev;
  return sysfs.Exists(dir + "/bridge") || sysfs.Exists(dir + "/bonding") ||
         sysfs.Exists(dir + "/tun_flags");
}

namespace {

WatchedLinks LinksOf(const v1::NodeInventory& inventory, bool down_nics_too) {
  WatchedLinks links;
  for (const auto& itf : inventory.interfaces()) {
    bool ipv4 = false;
    for (const auto& a : itf.addresses()) ipv4 = ipv4 || a.find('.') != std::string::npos;
    const bool nic = itf.speed_mbps() > 0 || (down_nics_too && !itf.pci_path().empty());
    if (ipv4 && nic) links.interfaces.push_back(itf.name());
  }
  for (const auto& device : inventory.rdma_devices()) {
    for (const auto& port : device.ports())
      links.rdma_ports.push_back({device.name(), port.port()});
  }
  return links;
}

}  // namespace

WatchedLinks WatchedLinks::Of(const v1::NodeInventory& inventory) {
  return LinksOf(inventory, false);
}

WatchedLinks WatchedLinks::ToWatch(const v1::NodeInventory& inventory) {
  return LinksOf(inventory, true);
}

std::string LinkState(const probes::SysfsRoot& sysfs, const WatchedLinks& links) {
  std::vector<std::string> parts;
  for (const std::string& itf : links.interfaces) {
    const std::string dir = "/sys/class/net/" + itf;
    parts.push_back(absl::StrCat(
        itf, " ", Read(sysfs, dir + "/operstate"), " ", Read(sysfs, dir + "/speed"), " Mb/s",
        IsAggregate(sysfs, itf) ? "" : Counted(sysfs, dir, "carrier_changes")));
  }
  for (const auto& [device, port] : links.rdma_ports) {
    const std::string dir = absl::StrCat("/sys/class/infiniband/", device, "/ports/", port);
    // "4: ACTIVE" and "400 Gb/sec (4X NDR)": the state's name and the rate as the kernel says it.
    std::string state = Read(sysfs, dir + "/state");
    if (auto colon = state.find(": "); colon != std::string::npos) state = state.substr(colon + 2);
    parts.push_back(absl::StrCat(device, ":", port, " ", state, " ", Read(sysfs, dir + "/rate"),
                                 Counted(sysfs, dir, "counters/link_downed")));
  }
  return absl::StrJoin(parts, "; ");
}

}  // namespace fabricctl::agent
