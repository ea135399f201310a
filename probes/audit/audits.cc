// The node audits. Paths and formats: reference §4 (drivers/infiniband/core/sysfs.c,
// Documentation/ABI/testing/sysfs-class-net, include/rdma/ib_addr.h).
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "probes/audit/audit.h"
#include "probes/audit/dcb.h"
#include "probes/audit/parsers.h"

namespace fabricctl::probes {
namespace {

constexpr char kInfiniband[] = "/sys/class/infiniband";
constexpr uint64_t kDefaultMinMemlock = 64ull << 20;

v1::Finding MakeFinding(const AuditContext& ctx, const std::string& kind, v1::Severity severity,
                        v1::Action action, const std::string& device, uint32_t port,
                        std::string detail) {
  v1::Finding f;
  f.set_kind(kind);
  f.set_severity(severity);
  f.set_action(action);
  f.set_node(ctx.node);
  f.set_device(device);
  f.set_port(port);
  // Details read on their own in a sweep's list of many nodes: they start with the node.
  f.set_detail(ctx.node.empty() ? std::move(detail) : absl::StrCat(ctx.node, ": ", detail));
  return f;
}

v1::AuditResult Skipped(const char* audit, std::string reason) {
  v1::AuditResult r;
  r.set_audit(audit);
  r.set_outcome(v1::AUDIT_SKIPPED);
  r.set_reason(std::move(reason));
  return r;
}

struct Port {
  std::string device;
  uint32_t port = 0;
  std::string dir;     // /sys/class/infiniband/<dev>/ports/<n>
  std::string netdev;  // RoCE: the netdev behind it
  bool ethernet = false;
};

// Every RDMA port under the root; NotFound when there is no RDMA device.
absl::StatusOr<std::vector<Port>> ListPorts(const SysfsRoot& root) {
  auto devices = root.List(kInfiniband);
  if (!devices.ok() || devices->empty()) {
    return absl::NotFoundError(
        absl::StrCat("no RDMA device (", root.root().empty() ? "" : root.root(), kInfiniband,
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
        p.netdev = nets->front();  // same PCI function (reference §4.3)
      }
      ports.push_back(std::move(p));
    }
  }
  return ports;
}

class RdmaPortsAudit final : public Audit {
 public:
  const char* name() const override { return "rdma_ports"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    v1::AuditResult r;
    r.set_audit(name());
    r.set_outcome(v1::AUDIT_RAN);
    auto ports = ListPorts(*ctx.root);
    if (!ports.ok()) {
      // Not a skip: a node without RDMA is the finding (its traffic would go over TCP).
      const bool expected = ctx.expect.link_rate_gbps() > 0;
      *r.add_findings() = MakeFinding(
          ctx, "rdma_unavailable", expected ? v1::SEVERITY_CRITICAL : v1::SEVERITY_WARNING,
          expected ? v1::ACTION_DRAIN : v1::ACTION_INVESTIGATE, "", 0,
          absl::StrCat(ports.status().message(),
                       expected ? absl::StrFormat("; expected RDMA ports at %.0f Gb/s",
                                                  ctx.expect.link_rate_gbps())
                                : ""));
      return r;
    }
    for (const Port& p : *ports) {
      const std::string label = absl::StrCat(p.device, ":", p.port);
      auto state = ParseNumberedState(ctx.root->ReadTrimmed(p.dir + "/state").value_or(""));
      auto phys = ParseNumberedState(ctx.root->ReadTrimmed(p.dir + "/phys_state").value_or(""));
      auto rate = ParseRateGbps(ctx.root->ReadTrimmed(p.dir + "/rate").value_or(""));
      (*r.mutable_observed())[label] = absl::StrCat(
          state ? state->name : "?", " ", phys ? phys->name : "?", " ",
          rate ? absl::StrFormat("%.0f Gb/s", *rate) : "? Gb/s", p.ethernet ? " RoCE" : " IB",
          p.netdev.empty() ? "" : " " + p.netdev);
      if (!state || state->name != "ACTIVE" || !phys || phys->name != "LinkUp") {
        *r.add_findings() = MakeFinding(
            ctx, "link_down", v1::SEVERITY_CRITICAL, v1::ACTION_DRAIN, p.device, p.port,
            absl::StrCat(label, " is ", state ? state->name : "unreadable", " / ",
                         phys ? phys->name : "unreadable", ", expected ACTIVE / LinkUp"));
        continue;
      }
      if (rate && ctx.expect.link_rate_gbps() > 0 && *rate < ctx.expect.link_rate_gbps()) {
        v1::Finding f = MakeFinding(
            ctx, "link_rate_degraded", v1::SEVERITY_CRITICAL, v1::ACTION_DRAIN, p.device, p.port,
            absl::StrFormat("%s active at %.0f Gb/s, expected %.0f Gb/s", label, *rate,
                            ctx.expect.link_rate_gbps()));
        (*f.mutable_evidence())["rate_gbps"] = absl::StrFormat("%.0f", *rate);
        (*f.mutable_evidence())["expected_gbps"] = absl::StrFormat("%.0f", ctx.expect.link_rate_gbps());
        *r.add_findings() = std::move(f);
      }
      if (p.ethernet && !HasRoceV2Gid(*ctx.root, p.dir)) {
        *r.add_findings() = MakeFinding(
            ctx, "rdma_unavailable", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE, p.device,
            p.port,
            absl::StrCat(label, " has no RoCE v2 GID (no IP address on ",
                         p.netdev.empty() ? "its netdev" : p.netdev,
                         "?): NCCL and perftest cannot use it"));
      }
    }
    return r;
  }

 private:
  // A non-zero GID of type "RoCE v2".
  static bool HasRoceV2Gid(const SysfsRoot& root, const std::string& port_dir) {
    auto indices = root.List(port_dir + "/gid_attrs/types");
    if (!indices.ok()) return false;
    for (const std::string& i : *indices) {
      auto type = root.ReadTrimmed(absl::StrCat(port_dir, "/gid_attrs/types/", i));
      if (!type.ok() || *type != "RoCE v2") continue;
      auto gid = ParseGid(root.ReadTrimmed(absl::StrCat(port_dir, "/gids/", i)).value_or(""));
      if (gid && std::any_of(gid->begin(), gid->end(), [](uint8_t b) { return b != 0; })) {
        return true;
      }
    }
    return false;
  }
};

class MtuAudit final : public Audit {
 public:
  const char* name() const override { return "mtu"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    auto ports = ListPorts(*ctx.root);
    if (!ports.ok()) return Skipped(name(), std::string(ports.status().message()));
    v1::AuditResult r;
    r.set_audit(name());
    r.set_outcome(v1::AUDIT_RAN);
    bool any = false;
    for (const Port& p : *ports) {
      if (!p.ethernet || p.netdev.empty()) continue;  // IB: the port's MTU is not a netdev's
      any = true;
      const std::string label = absl::StrCat(p.device, ":", p.port);
      auto mtu = ParseInteger(
          ctx.root->ReadTrimmed(absl::StrCat("/sys/class/net/", p.netdev, "/mtu")).value_or(""));
      if (!mtu) continue;
      const uint32_t roce = RoceMtuForNetdevMtu(*mtu);
      (*r.mutable_observed())[label] = absl::StrCat(p.netdev, " MTU ", *mtu, ", RoCE MTU ", roce);
      const uint32_t want = ctx.expect.netdev_mtu();
      const bool mismatch = want != 0 && *mtu != want;
      if (mismatch) {
        v1::Finding f = MakeFinding(ctx, "mtu_mismatch", v1::SEVERITY_CRITICAL,
                                    v1::ACTION_INVESTIGATE, p.device, p.port,
                                    absl::StrCat(label, ": ", p.netdev, " MTU ", *mtu,
                                                 ", expected ", want, " (expect.netdev_mtu)"));
        (*f.mutable_evidence())["mtu"] = absl::StrCat(*mtu);
        (*f.mutable_evidence())["expected_mtu"] = absl::StrCat(want);
        *r.add_findings() = std::move(f);
      }
      // A netdev MTU that is already wrong explains a low RoCE MTU: one finding, not two.
      if (!mismatch && ctx.expect.roce_mtu() != 0 && roce < ctx.expect.roce_mtu()) {
        v1::Finding f = MakeFinding(
            ctx, "roce_mtu_low", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE, p.device, p.port,
            absl::StrCat(label, ": RoCE MTU ", roce, " (from ", p.netdev, " MTU ", *mtu,
                         "), expected ", ctx.expect.roce_mtu(), "; needs a netdev MTU of at least ",
                         ctx.expect.roce_mtu() + 96));
        (*f.mutable_evidence())["roce_mtu"] = absl::StrCat(roce);
        (*f.mutable_evidence())["netdev_mtu"] = absl::StrCat(*mtu);
        *r.add_findings() = std::move(f);
      }
    }
    if (!any) return Skipped(name(), "no RoCE port with a netdev (InfiniBand MTUs are the port's)");
    return r;
  }
};

// Every NIC (class 0x02xx) and GPU (class 0x03xx, vendor NVIDIA) trained below its maximum
// link speed or width, or below expect.pcie_speed_gts: a NIC at x8 of x16 caps a 400 Gb/s port
// near 200.
class PcieAudit final : public Audit {
 public:
  const char* name() const override { return "pcie"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    auto functions = ctx.root->List("/sys/bus/pci/devices");
    if (!functions.ok()) return Skipped(name(), std::string(functions.status().message()));
    v1::AuditResult r;
    r.set_audit(name());
    r.set_outcome(v1::AUDIT_RAN);
    // RDMA device names by PCI address, for the findings.
    std::map<std::string, std::string> rdma_by_pci;
    for (const auto& dev : ctx.root->List(kInfiniband).value_or(std::vector<std::string>{})) {
      if (auto target = ctx.root->ReadLink(absl::StrCat(kInfiniband, "/", dev, "/device")); target.ok()) {
        rdma_by_pci[target->substr(target->rfind('/') + 1)] = dev;
      }
    }
    for (const std::string& address : *functions) {
      const std::string dir = "/sys/bus/pci/devices/" + address;
      const std::string cls = ctx.root->ReadTrimmed(dir + "/class").value_or("");
      const std::string vendor = ctx.root->ReadTrimmed(dir + "/vendor").value_or("");
      const bool nic = cls.rfind("0x02", 0) == 0;
      const bool gpu = cls.rfind("0x03", 0) == 0 && vendor == "0x10de";
      if (!nic && !gpu) continue;
      auto speed = ParsePcieSpeedGts(ctx.root->ReadTrimmed(dir + "/current_link_speed").value_or(""));
      auto max_speed = ParsePcieSpeedGts(ctx.root->ReadTrimmed(dir + "/max_link_speed").value_or(""));
      auto width = ParseInteger(ctx.root->ReadTrimmed(dir + "/current_link_width").value_or(""));
      auto max_width = ParseInteger(ctx.root->ReadTrimmed(dir + "/max_link_width").value_or(""));
      if (!speed || !width) continue;
      auto it = rdma_by_pci.find(address);
      const std::string what = it != rdma_by_pci.end() ? absl::StrCat(it->second, " (", address, ")")
                               : gpu                   ? absl::StrCat("GPU ", address)
                                                       : absl::StrCat("NIC ", address);
      (*r.mutable_observed())[what] = absl::StrFormat("%.1f GT/s x%d", *speed, *width);
      std::vector<std::string> problems;
      if (max_width && *width < *max_width) {
        problems.push_back(absl::StrFormat("width x%d of x%d", *width, *max_width));
      }
      if (max_speed && *speed < *max_speed) {
        problems.push_back(absl::StrFormat("speed %.1f of %.1f GT/s", *speed, *max_speed));
      }
      if (ctx.expect.pcie_speed_gts() > 0 && *speed < ctx.expect.pcie_speed_gts() &&
          (!max_speed || *max_speed >= ctx.expect.pcie_speed_gts())) {
        problems.push_back(absl::StrFormat("speed %.1f GT/s, expected %.1f (expect.pcie_speed_gts)",
                                           *speed, ctx.expect.pcie_speed_gts()));
      }
      if (problems.empty()) continue;
      v1::Finding f = MakeFinding(ctx, "pcie_degraded", v1::SEVERITY_CRITICAL, v1::ACTION_DRAIN,
                                  it != rdma_by_pci.end() ? it->second : address, 0,
                                  absl::StrCat(what, " trained at ", absl::StrJoin(problems, ", ")));
      (*f.mutable_evidence())["width"] = absl::StrCat(*width);
      (*f.mutable_evidence())["speed_gts"] = absl::StrFormat("%.1f", *speed);
      *r.add_findings() = std::move(f);
    }
    return r;
  }
};

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

// nvidia-smi topo's distance classes, nearest first.
enum class PathClass { kPix, kPxb, kPhb, kNode, kSys };

const char* PathClassName(PathClass c) {
  switch (c) {
    case PathClass::kPix: return "PIX";
    case PathClass::kPxb: return "PXB";
    case PathClass::kPhb: return "PHB";
    case PathClass::kNode: return "NODE";
    case PathClass::kSys: return "SYS";
  }
  return "?";
}

// Classifies the PCIe path between two devices by their deepest common ancestor: a shared PCIe
// switch (PIX), bridges below one root port (PXB), one host bridge (PHB), different host
// bridges of one NUMA node (NODE) or across the CPU interconnect (SYS).
PathClass ClassifyPath(const std::vector<std::string>& a, const std::vector<std::string>& b,
                       int numa_a, int numa_b) {
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  if (common == 0) return numa_a == numa_b && numa_a >= 0 ? PathClass::kNode : PathClass::kSys;
  if (common == 1) return PathClass::kPhb;
  // Below a root port: one switch between them when each is at most two hops (downstream
  // port, device) from the common upstream port.
  if (common >= 3 && a.size() - common <= 2 && b.size() - common <= 2) return PathClass::kPix;
  return PathClass::kPxb;
}

struct PciDevice {
  std::string address;
  std::string name;  // mlx5_0 for NICs
  std::vector<std::string> path;
  int numa = -1;
};

// NVIDIA GPUs (class 0x03xx, vendor 0x10de) and RDMA NICs, by PCI address.
void ListGpusAndNics(const SysfsRoot& root, std::vector<PciDevice>* gpus,
                     std::vector<PciDevice>* nics) {
  for (const std::string& address :
       root.List("/sys/bus/pci/devices").value_or(std::vector<std::string>{})) {
    const std::string dir = "/sys/bus/pci/devices/" + address;
    if (root.ReadTrimmed(dir + "/vendor").value_or("") != "0x10de" ||
        root.ReadTrimmed(dir + "/class").value_or("").rfind("0x03", 0) != 0) {
      continue;
    }
    PciDevice gpu{address, "GPU " + address, PciPath(root, address),
                  static_cast<int>(ParseInteger(root.ReadTrimmed(dir + "/numa_node").value_or("")).value_or(-1))};
    gpus->push_back(std::move(gpu));
  }
  for (const std::string& dev : root.List(kInfiniband).value_or(std::vector<std::string>{})) {
    auto target = root.ReadLink(absl::StrCat(kInfiniband, "/", dev, "/device"));
    if (!target.ok()) continue;
    const std::string address = target->substr(target->rfind('/') + 1);
    const std::string dir = "/sys/bus/pci/devices/" + address;
    PciDevice nic{address, dev, PciPath(root, address),
                  static_cast<int>(ParseInteger(root.ReadTrimmed(dir + "/numa_node").value_or("")).value_or(-1))};
    nics->push_back(std::move(nic));
  }
}

// Each GPU's NIC: GPUs and NICs are matched nearest first (as NCCL gives each GPU its closest
// NIC); a GPU left with a NIC across the CPU interconnect, or on another NUMA node, is
// numa_misaffinity.
class AffinityAudit final : public Audit {
 public:
  const char* name() const override { return "affinity"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    std::vector<PciDevice> gpus, nics;
    ListGpusAndNics(*ctx.root, &gpus, &nics);
    if (gpus.empty()) return Skipped(name(), "no NVIDIA GPU in /sys/bus/pci/devices");
    if (nics.empty()) return Skipped(name(), "no RDMA device");
    v1::AuditResult r;
    r.set_audit(name());
    r.set_outcome(v1::AUDIT_RAN);
    struct Candidate {
      PathClass cls;
      size_t gpu, nic;
    };
    std::vector<Candidate> candidates;
    for (size_t g = 0; g < gpus.size(); ++g) {
      for (size_t n = 0; n < nics.size(); ++n) {
        candidates.push_back({ClassifyPath(gpus[g].path, nics[n].path, gpus[g].numa, nics[n].numa), g, n});
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& x, const Candidate& y) { return x.cls < y.cls; });
    // Each NIC serves at most ceil(GPUs / NICs) GPUs.
    const size_t share = (gpus.size() + nics.size() - 1) / nics.size();
    std::vector<int> assigned(gpus.size(), -1);
    std::vector<size_t> load(nics.size(), 0);
    std::vector<PathClass> cls(gpus.size(), PathClass::kSys);
    for (const Candidate& c : candidates) {
      if (assigned[c.gpu] >= 0 || load[c.nic] >= share) continue;
      assigned[c.gpu] = static_cast<int>(c.nic);
      cls[c.gpu] = c.cls;
      ++load[c.nic];
    }
    for (size_t g = 0; g < gpus.size(); ++g) {
      if (assigned[g] < 0) continue;
      const PciDevice& nic = nics[assigned[g]];
      (*r.mutable_observed())[gpus[g].name] =
          absl::StrCat(nic.name, " ", PathClassName(cls[g]), " (NUMA ", gpus[g].numa, "/", nic.numa, ")");
      if (cls[g] == PathClass::kSys || (gpus[g].numa >= 0 && nic.numa >= 0 && gpus[g].numa != nic.numa)) {
        v1::Finding f = MakeFinding(
            ctx, "numa_misaffinity", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE, nic.name, 0,
            absl::StrCat(gpus[g].name, " (NUMA node ", gpus[g].numa, ") is left with ", nic.name,
                         " (NUMA node ", nic.numa, "), path ", PathClassName(cls[g]),
                         "; expected a NIC on its own PCIe switch (PIX or PXB): NCCL will not use "
                         "GPUDirect RDMA across the CPU interconnect"));
        (*f.mutable_evidence())["path"] = PathClassName(cls[g]);
        (*f.mutable_evidence())["gpu"] = gpus[g].address;
        *r.add_findings() = std::move(f);
      }
    }
    return r;
  }
};

// ACS on a bridge between a GPU and its NIC redirects their peer-to-peer traffic through the
// root complex, which cuts GPUDirect RDMA bandwidth (NCCL's troubleshooting guide: disable ACS).
// Reads each bridge's config space; unprivileged reads stop short of the extended capabilities,
// and then the audit says so.
class AcsAudit final : public Audit {
 public:
  const char* name() const override { return "acs"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    std::vector<PciDevice> gpus, nics;
    ListGpusAndNics(*ctx.root, &gpus, &nics);
    if (gpus.empty() || nics.empty()) return Skipped(name(), "needs NVIDIA GPUs and RDMA NICs");
    v1::AuditResult r;
    r.set_audit(name());
    r.set_outcome(v1::AUDIT_RAN);
    std::set<std::string> bridges;  // between some GPU and some NIC below one root port
    for (const auto& gpu : gpus) {
      for (const auto& nic : nics) {
        size_t common = 0;
        while (common < gpu.path.size() && common < nic.path.size() && gpu.path[common] == nic.path[common]) {
          ++common;
        }
        if (common < 2) continue;  // no shared bridge: their traffic crosses the host anyway
        // The shared upstream bridge and every bridge below it on either side.
        for (const auto* path : {&gpu.path, &nic.path}) {
          for (size_t i = common - 1; i + 1 < path->size(); ++i) bridges.insert((*path)[i]);
        }
      }
    }
    int unreadable = 0;
    for (const std::string& bridge : bridges) {
      auto config = ctx.root->Read("/sys/bus/pci/devices/" + bridge + "/config");
      if (!config.ok()) continue;
      auto acs = ParseAcsControl(*config);
      if (!acs) {
        unreadable += config->size() <= 256;
        continue;
      }
      (*r.mutable_observed())[bridge] = absl::StrFormat("ACS control 0x%04x", *acs);
      if (*acs & (kAcsRequestRedirect | kAcsCompletionRedirect)) {
        v1::Finding f = MakeFinding(
            ctx, "acs_enabled", v1::SEVERITY_WARNING, v1::ACTION_INVESTIGATE, bridge, 0,
            absl::StrFormat("PCIe bridge %s between a GPU and a NIC redirects peer-to-peer traffic "
                            "(ACS control 0x%04x), expected off: GPUDirect RDMA detours through the CPU",
                            bridge, *acs));
        (*f.mutable_evidence())["acs_control"] = absl::StrFormat("0x%04x", *acs);
        *r.add_findings() = std::move(f);
      }
    }
    if (r.observed().empty() && unreadable > 0) {
      return Skipped(name(), "config space past 256 bytes is readable by root only");
    }
    return r;
  }
};

// GPUDirect RDMA needs the peer-memory module (nvidia_peermem, or MOFED's nv_peer_mem) or the
// dma-buf path (open GPU kernel modules; confirmed only through the CUDA driver).
class GpuDirectAudit final : public Audit {
 public:
  const char* name() const override { return "gpudirect"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    std::vector<PciDevice> gpus, nics;
    ListGpusAndNics(*ctx.root, &gpus, &nics);
    if (gpus.empty()) return Skipped(name(), "no NVIDIA GPU in /sys/bus/pci/devices");
    v1::AuditResult r;
    r.set_audit(name());
    r.set_outcome(v1::AUDIT_RAN);
    const bool peermem = ctx.root->Exists("/sys/module/nvidia_peermem") ||
                         ctx.root->Exists("/sys/kernel/mm/memory_peers/nv_mem/version");
    (*r.mutable_observed())["peer_memory"] = peermem ? "loaded" : "absent";
    // The dma-buf path: every GPU's driver says CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED and the
    // kernel has RDMA dma-buf registration (ibv_reg_dmabuf_mr, Linux 5.12).
    std::string dmabuf_state = "not asked of the CUDA driver";
    bool dmabuf = false;
    if (ctx.driver_gpus.has_value()) {
      const auto& driver = *ctx.driver_gpus;
      const size_t supported = std::count_if(driver.begin(), driver.end(),
                                             [](const v1::Gpu& g) { return g.dma_buf_supported(); });
      const std::string kernel = ctx.root->ReadTrimmed("/proc/sys/kernel/osrelease").value_or("");
      int major = 0, minor = 0;
      const bool kernel_ok = std::sscanf(kernel.c_str(), "%d.%d", &major, &minor) == 2 &&
                             (major > 5 || (major == 5 && minor >= 12));
      dmabuf = !driver.empty() && supported == driver.size() && kernel_ok;
      dmabuf_state = driver.empty() ? (ctx.driver_gpus_reason.empty()
                                           ? std::string("the CUDA driver lists no GPU")
                                           : ctx.driver_gpus_reason)
                     : absl::StrCat(supported, " of ", driver.size(), " GPUs support it, kernel ",
                                    kernel.empty() ? "unknown" : kernel,
                                    kernel_ok ? "" : " (needs 5.12 or later)");
    }
    (*r.mutable_observed())["dma_buf"] = dmabuf_state;
    (*r.mutable_observed())["path"] = peermem ? "peer memory" : dmabuf ? "dma-buf" : "none";
    if (!peermem && !dmabuf && ctx.expect.gpudirect()) {
      *r.add_findings() = MakeFinding(
          ctx, "gpudirect_unavailable", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE, "", 0,
          absl::StrCat(gpus.size(), " GPUs, no peer-memory module (/sys/module/nvidia_peermem "
                                    "absent) and no dma-buf path (", dmabuf_state,
                                    "): GPUDirect RDMA is off; expected on (expect.gpudirect; "
                                    "modprobe nvidia-peermem, or the open GPU kernel modules)"));
    }
    return r;
  }
};

// Error counters that must not rise on a healthy link (reference §4.6), read twice a window
// apart. link_downed rising is critical; the others are warnings.
class CountersAudit final : public Audit {
 public:
  const char* name() const override { return "counters"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    if (ctx.counter_window <= absl::ZeroDuration()) {
      return Skipped(name(), "no counter window (--window S)");
    }
    auto ports = ListPorts(*ctx.root);
    if (!ports.ok()) return Skipped(name(), std::string(ports.status().message()));
    static const char* const kCounters[] = {
        "counters/symbol_error",         "counters/link_downed",
        "counters/link_error_recovery",  "counters/port_rcv_errors",
        "counters/port_xmit_discards",   "counters/local_link_integrity_errors",
        "counters/excessive_buffer_overrun_errors",
        "hw_counters/out_of_sequence",   "hw_counters/packet_seq_err",
        "hw_counters/local_ack_timeout_err", "hw_counters/implied_nak_seq_err",
        "hw_counters/np_cnp_sent",       "hw_counters/rp_cnp_handled"};
    auto read_all = [&] {
      std::map<std::pair<size_t, std::string>, uint64_t> values;
      for (size_t i = 0; i < ports->size(); ++i) {
        for (const char* counter : kCounters) {
          auto v = ParseInteger(ctx.root->ReadTrimmed(absl::StrCat((*ports)[i].dir, "/", counter)).value_or(""));
          if (v && *v >= 0) values[{i, counter}] = static_cast<uint64_t>(*v);
        }
      }
      return values;
    };
    const auto before = read_all();
    ctx.wait(ctx.counter_window);
    const auto after = read_all();
    v1::AuditResult r;
    r.set_audit(name());
    r.set_outcome(v1::AUDIT_RAN);
    for (const auto& [key, start] : before) {
      auto it = after.find(key);
      if (it == after.end()) continue;
      const Port& p = (*ports)[key.first];
      const std::string label = absl::StrCat(p.device, ":", p.port);
      // PMA counters saturate rather than wrap: a smaller reading is a reset, not an increase.
      const uint64_t increase = it->second > start ? it->second - start : 0;
      const std::string counter = key.second.substr(key.second.find('/') + 1);
      (*r.mutable_observed())[absl::StrCat(label, " ", counter)] = absl::StrCat("+", increase);
      if (increase <= ctx.max_counter_increase) continue;
      const bool critical = counter == "link_downed";
      v1::Finding f = MakeFinding(
          ctx, "counter_errors", critical ? v1::SEVERITY_CRITICAL : v1::SEVERITY_WARNING,
          v1::ACTION_INVESTIGATE, p.device, p.port,
          absl::StrCat(label, " ", counter, " rose by ", increase, " in ",
                       absl::FormatDuration(ctx.counter_window), ", expected at most ",
                       ctx.max_counter_increase));
      (*f.mutable_evidence())["counter"] = counter;
      (*f.mutable_evidence())["increase"] = absl::StrCat(increase);
      *r.add_findings() = std::move(f);
    }
    return r;
  }
};

// The lossless class: PFC on expect.pfc_priority (DCB netlink), ECN notification and reaction
// point on that priority (MLNX_OFED's ecn/ sysfs; skipped where the driver does not expose it),
// and DSCP trust (MLNX_OFED's qos/trust, or DSCP entries in the DCB APP table).
class QosAudit final : public Audit {
 public:
  const char* name() const override { return "qos"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    if (!ctx.expect.has_pfc_priority() && !ctx.expect.ecn() && !ctx.expect.dscp_trust()) {
      return Skipped(name(), "nothing expected (expect.pfc_priority, expect.ecn, expect.dscp_trust)");
    }
    auto ports = ListPorts(*ctx.root);
    if (!ports.ok()) return Skipped(name(), std::string(ports.status().message()));
    const uint32_t prio = ctx.expect.has_pfc_priority() ? ctx.expect.pfc_priority() : 3;
    v1::AuditResult r;
    r.set_audit(name());
    r.set_outcome(v1::AUDIT_RAN);
    bool any = false;
    for (const Port& p : *ports) {
      if (!p.ethernet || p.netdev.empty()) continue;  // InfiniBand is lossless by credits
      any = true;
      const std::string& dev = p.netdev;
      auto reply = ctx.dcb_query            ? ctx.dcb_query(dev)
                   : ctx.root->root().empty() ? QueryDcbIeee(dev)
                                              : ctx.root->Read("/netlink/dcb/" + dev);
      absl::StatusOr<DcbIeee> dcb = reply.ok() ? ParseDcbIeeeReply(*reply) : reply.status();
      std::vector<std::string> seen;
      if (ctx.expect.has_pfc_priority()) {
        if (!dcb.ok()) {
          seen.push_back(absl::StrCat("PFC unknown (", dcb.status().message(), ")"));
        } else {
          std::vector<std::string> on;
          for (int i = 0; i < 8; ++i) {
            if (dcb->pfc_enabled & (1 << i)) on.push_back(absl::StrCat(i));
          }
          const std::string list = on.empty() ? "none" : absl::StrJoin(on, ",");
          seen.push_back("PFC " + list);
          if (!(dcb->pfc_enabled & (1 << prio))) {
            *r.add_findings() = MakeFinding(
                ctx, "pfc_misconfigured", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE, p.device,
                p.port,
                absl::StrCat(dev, ": PFC enabled on priorities ", list, ", expected ", prio,
                             " (expect.pfc_priority): RoCE traffic is not lossless"));
          }
        }
      }
      if (ctx.expect.ecn()) {
        std::vector<std::string> off;
        bool exposed = false;
        for (const char* point : {"roce_np", "roce_rp"}) {
          auto v = ctx.root->ReadTrimmed(absl::StrCat("/sys/class/net/", dev, "/ecn/", point, "/enable/", prio));
          if (!v.ok()) continue;
          exposed = true;
          if (*v != "1") off.push_back(point);
        }
        seen.push_back(!exposed ? "ECN not exposed by this driver"
                                : off.empty() ? "ECN on" : "ECN off: " + absl::StrJoin(off, ","));
        if (!off.empty()) {
          *r.add_findings() = MakeFinding(
              ctx, "ecn_disabled", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE, p.device, p.port,
              absl::StrCat(dev, ": ECN ", absl::StrJoin(off, " and "), " disabled on priority ",
                           prio, ", expected enabled (expect.ecn): no congestion control"));
        }
      }
      if (ctx.expect.dscp_trust()) {
        auto trust = ctx.root->ReadTrimmed(absl::StrCat("/sys/class/net/", dev, "/qos/trust"));
        bool dscp_apps = dcb.ok() && std::any_of(dcb->apps.begin(), dcb->apps.end(), [](const DcbApp& a) {
                           return a.selector == 5;  // IEEE_8021QAZ_APP_SEL_DSCP
                         });
        const bool dscp = (trust.ok() && *trust == "dscp") || (!trust.ok() && dscp_apps);
        seen.push_back(absl::StrCat("trust ", trust.ok() ? *trust : dscp_apps ? "dscp (APP table)" : "pcp"));
        if (!dscp) {
          *r.add_findings() = MakeFinding(
              ctx, "dscp_trust_missing", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE, p.device,
              p.port,
              absl::StrCat(dev, ": trust ", trust.ok() ? *trust : "pcp",
                           ", expected dscp (expect.dscp_trust): RoCE's DSCP marking is ignored"));
        }
      }
      (*r.mutable_observed())[absl::StrCat(p.device, ":", p.port)] = absl::StrJoin(seen, "; ");
    }
    if (!any) return Skipped(name(), "no RoCE port with a netdev");
    return r;
  }
};

class MemlockAudit final : public Audit {
 public:
  const char* name() const override { return "memlock"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    auto text = ctx.root->Read("/proc/self/limits");
    if (!text.ok()) return Skipped(name(), std::string(text.status().message()));
    auto limit = ParseMemlockLimit(*text);
    if (!limit) return Skipped(name(), "no \"Max locked memory\" line in /proc/self/limits");
    v1::AuditResult r;
    r.set_audit(name());
    r.set_outcome(v1::AUDIT_RAN);
    const bool unlimited = *limit == std::numeric_limits<uint64_t>::max();
    (*r.mutable_observed())["memlock"] = unlimited ? "unlimited" : absl::StrCat(*limit, " bytes");
    const uint64_t want =
        ctx.expect.min_memlock_bytes() ? ctx.expect.min_memlock_bytes() : kDefaultMinMemlock;
    if (!unlimited && *limit < want) {
      *r.add_findings() = MakeFinding(
          ctx, "memlock_too_low", v1::SEVERITY_CRITICAL, v1::ACTION_INVESTIGATE, "", 0,
          absl::StrCat("memlock limit ", *limit, " bytes, expected at least ", want,
                       " (RDMA registration pins memory: ulimit -l unlimited, LimitMEMLOCK=infinity)"));
    }
    return r;
  }
};

class NcclEnvAudit final : public Audit {
 public:
  const char* name() const override { return "nccl_env"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    v1::AuditResult r;
    r.set_audit(name());
    r.set_outcome(v1::AUDIT_RAN);
    auto env = [&](const char* key) -> std::string {
      auto it = ctx.environment.find(key);
      return it == ctx.environment.end() ? "" : it->second;
    };
    for (const char* key : {"NCCL_IB_DISABLE", "NCCL_NET", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME"}) {
      if (!env(key).empty()) (*r.mutable_observed())[key] = env(key);
    }
    if (env("NCCL_IB_DISABLE") == "1") {
      *r.add_findings() = MakeFinding(ctx, "tcp_fallback", v1::SEVERITY_CRITICAL,
                                      v1::ACTION_INVESTIGATE, "", 0,
                                      "NCCL_IB_DISABLE=1: NCCL will use TCP sockets, not RDMA");
    }
    if (env("NCCL_NET") == "Socket") {
      *r.add_findings() = MakeFinding(ctx, "tcp_fallback", v1::SEVERITY_CRITICAL,
                                      v1::ACTION_INVESTIGATE, "", 0,
                                      "NCCL_NET=Socket: NCCL will use TCP sockets, not RDMA");
    }
    if (!env("NCCL_IB_HCA").empty()) {
      HcaList hca = ParseHcaList(env("NCCL_IB_HCA"));
      auto present = ctx.root->List(kInfiniband).value_or(std::vector<std::string>{});
      std::vector<std::string> missing;
      for (const auto& device : hca.devices) {
        bool found = std::any_of(present.begin(), present.end(), [&](const std::string& p) {
          return hca.exact ? p == device : p.rfind(device, 0) == 0;  // NCCL matches prefixes
        });
        if (!found) missing.push_back(device);
      }
      if (!hca.exclude && !missing.empty()) {
        *r.add_findings() = MakeFinding(
            ctx, "nccl_env_misconfigured", v1::SEVERITY_WARNING, v1::ACTION_INVESTIGATE, "", 0,
            absl::StrCat("NCCL_IB_HCA names ", absl::StrJoin(missing, ", "),
                         ", not present here (present: ",
                         present.empty() ? "none" : absl::StrJoin(present, ", "), ")"));
      }
    }
    if (!env("NCCL_SOCKET_IFNAME").empty()) {
      HcaList ifs = ParseHcaList(env("NCCL_SOCKET_IFNAME"));  // same syntax: ^ and = prefixes
      auto present = ctx.root->List("/sys/class/net").value_or(std::vector<std::string>{});
      bool any = ifs.exclude;
      for (const auto& name : ifs.devices) {
        any |= std::any_of(present.begin(), present.end(), [&](const std::string& p) {
          return ifs.exact ? p == name : p.rfind(name, 0) == 0;
        });
      }
      if (!any) {
        *r.add_findings() = MakeFinding(
            ctx, "nccl_env_misconfigured", v1::SEVERITY_WARNING, v1::ACTION_INVESTIGATE, "", 0,
            absl::StrCat("NCCL_SOCKET_IFNAME=", env("NCCL_SOCKET_IFNAME"),
                         " matches no interface here (present: ", absl::StrJoin(present, ", "), ")"));
      }
    }
    return r;
  }
};

}  // namespace

const std::vector<const Audit*>& AllAudits() {
  static const RdmaPortsAudit rdma_ports;
  static const MtuAudit mtu;
  static const QosAudit qos;
  static const PcieAudit pcie;
  static const AffinityAudit affinity;
  static const AcsAudit acs;
  static const GpuDirectAudit gpudirect;
  static const CountersAudit counters;
  static const MemlockAudit memlock;
  static const NcclEnvAudit nccl_env;
  static const std::vector<const Audit*> table = {
      &rdma_ports, &mtu, &qos, &pcie, &affinity, &acs, &gpudirect, &counters, &memlock, &nccl_env};
  return table;
}

std::map<std::string, std::string> NcclEnvironment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("NCCL_", 0) != 0) continue;
    const size_t eq = entry.find('=');
    out[entry.substr(0, eq)] = eq == std::string::npos ? "" : entry.substr(eq + 1);
  }
  return out;
}

std::string AuditNames() {
  std::vector<std::string> names;
  for (const Audit* a : AllAudits()) names.push_back(a->name());
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<std::vector<v1::AuditResult>> RunAudits(const AuditContext& context,
                                                       const std::vector<std::string>& names) {
  std::vector<const Audit*> chosen;
  for (const std::string& name : names) {
    auto it = std::find_if(AllAudits().begin(), AllAudits().end(),
                           [&](const Audit* a) { return name == a->name(); });
    if (it == AllAudits().end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown audit '", name, "' (known: ", AuditNames(), ")"));
    }
    chosen.push_back(*it);
  }
  if (chosen.empty()) chosen = AllAudits();
  std::vector<v1::AuditResult> results;
  for (const Audit* audit : chosen) results.push_back(audit->Run(context));
  return results;
}

}  // namespace fabricctl::probes
