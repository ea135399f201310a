// The table of audits, and what runs them by name.
#include "probes/audit/registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "probes/audit/audit.h"
#include "probes/audit/common.h"

namespace fabricctl::probes {

const std::vector<const Audit*>& AllAudits() {
  namespace a = audit_internal;
  static const std::vector<const Audit*> table = {
      &a::RdmaPortsAudit(), &a::MtuAudit(),     &a::QosAudit(),       &a::PcieAudit(),
      &a::AffinityAudit(),  &a::AcsAudit(),     &a::GpuDirectAudit(), &a::CountersAudit(),
      &a::OpticsAudit(),    &a::MemlockAudit(), &a::NcclEnvAudit(),   &a::LinkWatchAudit()};
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

std::string RdmaExpectedBecause(const SysfsRoot& root, const v1::Expectations& expect) {
  if (expect.link_rate_gbps() > 0) return "expect.link_rate_gbps is set";
  if (expect.gpudirect()) return "expect.gpudirect is set";
  if (expect.roce_mtu() > 0) return "expect.roce_mtu is set";
  auto ports = audit_internal::ListPorts(root);
  if (ports.ok() && !ports->empty()) {
    return absl::StrCat("RDMA device ", ports->front().device, " is present");
  }
  return "";
}

}  // namespace fabricctl::probes
