// qos: the lossless class. PFC on expect.pfc_priority (DCB netlink), ECN notification and
// reaction point on that priority (MLNX_OFED's ecn/ sysfs; skipped where the driver does not
// expose it), and DSCP trust (MLNX_OFED's qos/trust, or DSCP entries in the DCB APP table).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "probes/audit/common.h"
#include "probes/audit/dcb.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes::audit_internal {
namespace {

// The DCB netlink reply for `netdev`: ctx.dcb_query when set, else the kernel's when the root
// is "/", else the fixture file <root>/netlink/dcb/<netdev>.
absl::StatusOr<DcbIeee> ReadDcb(const AuditContext& ctx, const std::string& dev) {
  auto reply = ctx.dcb_query              ? ctx.dcb_query(dev)
               : ctx.root->root().empty() ? QueryDcbIeee(dev)
                                          : ctx.root->Read("/netlink/dcb/" + dev);
  if (!reply.ok()) return reply.status();
  return ParseDcbIeeeReply(*reply);
}

class Qos final : public Audit {
 public:
  const char* name() const override { return "qos"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    if (!ctx.expect.has_pfc_priority() && !ctx.expect.ecn() && !ctx.expect.dscp_trust()) {
      return Skipped(name(),
                     "nothing expected (expect.pfc_priority, expect.ecn, expect.dscp_trust)");
    }
    auto ports = ListPorts(*ctx.root);
    if (!ports.ok()) return Skipped(name(), std::string(ports.status().message()));
    const uint32_t prio = ctx.expect.has_pfc_priority() ? ctx.expect.pfc_priority() : 3;
    v1::AuditResult r = Ran(name());
    bool any = false;
    for (const Port& p : *ports) {
      if (!p.ethernet || p.netdev.empty()) continue;  // InfiniBand is lossless by credits
      any = true;
      const std::string& dev = p.netdev;
      absl::StatusOr<DcbIeee> dcb = ReadDcb(ctx, dev);
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
                ctx, report::kind::kPfcMisconfigured, p.device, p.port,
                absl::StrCat(dev, ": PFC enabled on priorities ", list, ", expected ", prio,
                             " (expect.pfc_priority): RoCE traffic is not lossless"));
          }
        }
      }
      if (ctx.expect.ecn()) {
        std::vector<std::string> off;
        bool exposed = false;
        for (const char* point : {"roce_np", "roce_rp"}) {
          auto v = ctx.root->ReadTrimmed(
              absl::StrCat("/sys/class/net/", dev, "/ecn/", point, "/enable/", prio));
          if (!v.ok()) continue;
          exposed = true;
          if (*v != "1") off.push_back(point);
        }
        seen.push_back(!exposed      ? "ECN not exposed by this driver"
                       : off.empty() ? "ECN on"
                                     : "ECN off: " + absl::StrJoin(off, ","));
        if (!off.empty()) {
          *r.add_findings() = MakeFinding(
              ctx, report::kind::kEcnDisabled, p.device, p.port,
              absl::StrCat(dev, ": ECN ", absl::StrJoin(off, " and "), " disabled on priority ",
                           prio, ", expected enabled (expect.ecn): no congestion control"));
        }
      }
      if (ctx.expect.dscp_trust()) {
        auto trust = ctx.root->ReadTrimmed(absl::StrCat("/sys/class/net/", dev, "/qos/trust"));
        bool dscp_apps =
            dcb.ok() && std::any_of(dcb->apps.begin(), dcb->apps.end(), [](const DcbApp& a) {
              return a.selector == 5;  // IEEE_8021QAZ_APP_SEL_DSCP
            });
        const bool dscp = (trust.ok() && *trust == "dscp") || (!trust.ok() && dscp_apps);
        seen.push_back(absl::StrCat("trust ", trust.ok()  ? *trust
                                              : dscp_apps ? "dscp (APP table)"
                                                          : "pcp"));
        if (!dscp) {
          *r.add_findings() = MakeFinding(
              ctx, report::kind::kDscpTrustMissing, p.device, p.port,
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

}  // namespace

const Audit& QosAudit() {
  static const Qos audit;
  return audit;
}

}  // namespace fabricctl::probes::audit_internal
