#include "probes/audit/common.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "probes/audit/parsers.h"

namespace fabricctl::probes::audit_internal {
namespace {

// The real sysfs path of a PCI function (its components under /sys/devices), from the
// /sys/bus/pci/devices link; empty when unreadable.
std::vector<std::string> PciPath(const SysfsRoot& root, const std::string& address) {
  auto target = root.ReadLink("/sys/bus/pci/devices/" + address);
  if (!target.ok()) return {};
  std::vector<std::string> parts;
  const std::string full = "/sys/bus/pci/devices/" + *target;
  for (absl::string_view part : absl::StrSplit(full, '/', absl::SkipEmpty())) {
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (part != ".") {
      parts.emplace_back(part);
    }
  }
  // Keep what follows sys/devices: the root complex, then each bridge down to the device.
  if (parts.size() < 3 || parts[0] != "sys" || parts[1] != "devices") return {};
  return std::vector<std::string>(parts.begin() + 2, parts.end());
}

int NumaNode(const SysfsRoot& root, const std::string& address) {
  return static_cast<int>(
      ParseInteger(root.ReadTrimmed("/sys/bus/pci/devices/" + address + "/numa_node").value_or(""))
          .value_or(-1));
}

}  // namespace

v1::Finding MakeFinding(const AuditContext& ctx, std::string_view kind, const std::string& device,
                        uint32_t port, std::string detail, report::Level level) {
  v1::Finding f = report::Make(
      std::string(kind), ctx.node,
      ctx.node.empty() ? std::move(detail) : absl::StrCat(ctx.node, ": ", detail), level);
  f.set_device(device);
  f.set_port(port);
  return f;
}

v1::AuditResult Ran(const char* audit) {
  v1::AuditResult r;
  r.set_audit(audit);
  r.set_outcome(v1::AUDIT_RAN);
  return r;
}

v1::AuditResult Skipped(const char* audit, std::string reason) {
  v1::AuditResult r;
  r.set_audit(audit);
  r.set_outcome(v1::AUDIT_SKIPPED);
  r.set_reason(std::move(reason));
  return r;
}

absl::StatusOr<std::vector<Port>> ListPorts(const SysfsRoot& root) {
  auto devices = root.List(kInfiniband);
  if (!devices.ok() || devices->empty()) {
    return absl::NotFoundError(absl::StrCat("no RDMA device (",
                                            root.root().empty() ? "" : root.root(), kInfiniband,
                                            devices.ok() ? " is empty)" : " is absent)"));
  }
  std::vector<Port> ports;
  for (const std::string& device : *devices) {
    const std::string dev_dir = absl::StrCat(kInfiniband, "/", device);
    auto numbers = root.List(dev_dir + "/ports");
    if (!numbers.ok()) continue;
    for (const std::string& number : *numbers) {
      Port p;
      p.device = device;
      p.port = static_cast<uint32_t>(ParseInteger(number).value_or(0));
      p.dir = absl::StrCat(dev_dir, "/ports/", number);
      auto layer = root.ReadTrimmed(p.dir + "/link_layer");
      p.ethernet = layer.ok() && *layer == "Ethernet";
      if (auto ndev = root.ReadTrimmed(p.dir + "/gid_attrs/ndevs/0"); ndev.ok()) {
        p.netdev = *ndev;
      } else if (auto nets = root.List(dev_dir + "/device/net"); nets.ok() && !nets->empty()) {
        p.netdev =
            nets->front();  // same PCI function (sysfs: /sys/class/infiniband/DEV/device/net/)
      }
      ports.push_back(std::move(p));
    }
  }
  return ports;
}

void ListGpusAndNics(const SysfsRoot& root, std::vector<PciDevice>* gpus,
                     std::vector<PciDevice>* nics) {
  for (const std::string& address :
       root.List("/sys/bus/pci/devices").value_or(std::vector<std::string>{})) {
    const std::string dir = "/sys/bus/pci/devices/" + address;
    if (root.ReadTrimmed(dir + "/vendor").value_or("") != "0x10de" ||
        root.ReadTrimmed(dir + "/class").value_or("").rfind("0x03", 0) != 0) {
      continue;
    }
    gpus->push_back(
        PciDevice{address, "GPU " + address, PciPath(root, address), NumaNode(root, address)});
  }
  for (const std::string& dev : root.List(kInfiniband).value_or(std::vector<std::string>{})) {
    auto target = root.ReadLink(absl::StrCat(kInfiniband, "/", dev, "/device"));
    if (!target.ok()) continue;
    const std::string address = target->substr(target->rfind('/') + 1);
    nics->push_back(PciDevice{address, dev, PciPath(root, address), NumaNode(root, address)});
  }
}

}  // namespace fabricctl::probes::audit_internal
