// acs: ACS on a bridge between a GPU and its NIC redirects their peer-to-peer traffic through
// the root complex, which cuts GPUDirect RDMA bandwidth (NCCL's troubleshooting guide: disable
// ACS). Reads each bridge's config space; unprivileged reads stop short of the extended
// capabilities, and then the audit says so.
#include <set>

#include "absl/strings/str_format.h"
#include "probes/audit/common.h"
#include "probes/audit/parsers.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes::audit_internal {
namespace {

// The bridges between some GPU and some NIC below one root port: the shared upstream bridge
// and every bridge below it on either side.
std::set<std::string> SharedBridges(const std::vector<PciDevice>& gpus,
                                    const std::vector<PciDevice>& nics) {
  std::set<std::string> bridges;
  for (const auto& gpu : gpus) {
    for (const auto& nic : nics) {
      size_t common = 0;
      while (common < gpu.path.size() && common < nic.path.size() &&
             gpu.path[common] == nic.path[common]) {
        ++common;
      }
      if (common < 2) continue;  // no shared bridge: their traffic crosses the host anyway
      for (const auto* path : {&gpu.path, &nic.path}) {
        for (size_t i = common - 1; i + 1 < path->size(); ++i) bridges.insert((*path)[i]);
      }
    }
  }
  return bridges;
}

class Acs final : public Audit {
 public:
  const char* name() const override { return "acs"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    std::vector<PciDevice> gpus, nics;
    ListGpusAndNics(*ctx.root, &gpus, &nics);
    if (gpus.empty() || nics.empty()) return Skipped(name(), "needs NVIDIA GPUs and RDMA NICs");
    v1::AuditResult r = Ran(name());
    int unreadable = 0;
    for (const std::string& bridge : SharedBridges(gpus, nics)) {
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
            ctx, report::kind::kAcsEnabled, bridge, 0,
            absl::StrFormat(
                "PCIe bridge %s between a GPU and a NIC redirects peer-to-peer traffic "
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

}  // namespace

const Audit& AcsAudit() {
  static const Acs audit;
  return audit;
}

}  // namespace fabricctl::probes::audit_internal
