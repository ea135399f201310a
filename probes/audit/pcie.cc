// pcie: every NIC (class 0x02xx) and GPU (class 0x03xx, vendor NVIDIA) trained below its maximum
// link speed or width, or below expect.pcie_speed_gts: a NIC at x8 of x16 caps a 400 Gb/s port
// near 200.
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "probes/audit/common.h"
#include "probes/audit/parsers.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes::audit_internal {
namespace {

class Pcie final : public Audit {
 public:
  const char* name() const override { return "pcie"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    auto functions = ctx.root->List("/sys/bus/pci/devices");
    if (!functions.ok()) return Skipped(name(), std::string(functions.status().message()));
    v1::AuditResult r = Ran(name());
    // RDMA device names by PCI address, for the findings.
    std::map<std::string, std::string> rdma_by_pci;
    for (const auto& dev : ctx.root->List(kInfiniband).value_or(std::vector<std::string>{})) {
      if (auto target = ctx.root->ReadLink(absl::StrCat(kInfiniband, "/", dev, "/device"));
          target.ok()) {
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
      auto speed =
          ParsePcieSpeedGts(ctx.root->ReadTrimmed(dir + "/current_link_speed").value_or(""));
      auto max_speed =
          ParsePcieSpeedGts(ctx.root->ReadTrimmed(dir + "/max_link_speed").value_or(""));
      auto width = ParseInteger(ctx.root->ReadTrimmed(dir + "/current_link_width").value_or(""));
      auto max_width = ParseInteger(ctx.root->ReadTrimmed(dir + "/max_link_width").value_or(""));
      if (!speed || !width) continue;
      auto it = rdma_by_pci.find(address);
      const std::string what = it != rdma_by_pci.end()
                                   ? absl::StrCat(it->second, " (", address, ")")
                               : gpu ? absl::StrCat("GPU ", address)
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
      v1::Finding f = MakeFinding(
          ctx, report::kind::kPcieDegraded, it != rdma_by_pci.end() ? it->second : address, 0,
          absl::StrCat(what, " trained at ", absl::StrJoin(problems, ", ")));
      (*f.mutable_evidence())["width"] = absl::StrCat(*width);
      (*f.mutable_evidence())["speed_gts"] = absl::StrFormat("%.1f", *speed);
      *r.add_findings() = std::move(f);
    }
    return r;
  }
};

}  // namespace

const Audit& PcieAudit() {
  static const Pcie audit;
  return audit;
}

}  // namespace fabricctl::probes::audit_internal
