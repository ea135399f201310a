// The node audits. Paths and formats: reference §4 (drivers/infiniband/core/sysfs.c,
// Documentation/ABI/testing/sysfs-class-net, include/rdma/ib_addr.h).
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "probes/audit/audit.h"
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
  static const PcieAudit pcie;
  static const MemlockAudit memlock;
  static const NcclEnvAudit nccl_env;
  static const std::vector<const Audit*> table = {&rdma_ports, &mtu, &pcie, &memlock, &nccl_env};
  return table;
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
