// mtu: each RoCE port's netdev MTU against expect.netdev_mtu, and the RoCE MTU it gives
// against expect.roce_mtu (Documentation/ABI/testing/sysfs-class-net).
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "probes/audit/common.h"
#include "probes/audit/parsers.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes::audit_internal {
namespace {

class Mtu final : public Audit {
 public:
  const char* name() const override { return "mtu"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    auto ports = ListPorts(*ctx.root);
    if (!ports.ok()) return Skipped(name(), std::string(ports.status().message()));
    v1::AuditResult r = Ran(name());
    bool any = false;
    std::vector<std::string> unreadable;
    for (const Port& p : *ports) {
      if (!p.ethernet || p.netdev.empty()) continue;  // IB: the port's MTU is not a netdev's
      any = true;
      const std::string label = absl::StrCat(p.device, ":", p.port);
      const std::string path = absl::StrCat("/sys/class/net/", p.netdev, "/mtu");
      auto text = ctx.root->ReadTrimmed(path);
      auto mtu = text.ok() ? ParseInteger(*text) : std::nullopt;
      if (!mtu || *mtu < 68 || *mtu > 65536) {
        // An MTU that cannot be read is not a pass: the audit fails, naming the port.
        unreadable.push_back(
            absl::StrCat(label, " (", p.netdev, "): ",
                         text.ok() ? absl::StrCat("'", text->substr(0, 32), "' is not an MTU")
                                   : std::string(text.status().message())));
        continue;
      }
      const uint32_t roce = RoceMtuForNetdevMtu(*mtu);
      (*r.mutable_observed())[label] = absl::StrCat(p.netdev, " MTU ", *mtu, ", RoCE MTU ", roce);
      const uint32_t want = ctx.expect.netdev_mtu();
      const bool mismatch = want != 0 && *mtu != want;
      if (mismatch) {
        v1::Finding f = MakeFinding(ctx, report::kind::kMtuMismatch, p.device, p.port,
                                    absl::StrCat(label, ": ", p.netdev, " MTU ", *mtu,
                                                 ", expected ", want, " (expect.netdev_mtu)"));
        (*f.mutable_evidence())["mtu"] = absl::StrCat(*mtu);
        (*f.mutable_evidence())["expected_mtu"] = absl::StrCat(want);
        *r.add_findings() = std::move(f);
      }
      // A netdev MTU that is already wrong explains a low RoCE MTU: one finding, not two.
      if (!mismatch && ctx.expect.roce_mtu() != 0 && roce < ctx.expect.roce_mtu()) {
        v1::Finding f = MakeFinding(
            ctx, report::kind::kRoceMtuLow, p.device, p.port,
            absl::StrCat(label, ": RoCE MTU ", roce, " (from ", p.netdev, " MTU ", *mtu,
                         "), expected ", ctx.expect.roce_mtu(), "; needs a netdev MTU of at least ",
                         ctx.expect.roce_mtu() + 96));
        (*f.mutable_evidence())["roce_mtu"] = absl::StrCat(roce);
        (*f.mutable_evidence())["netdev_mtu"] = absl::StrCat(*mtu);
        *r.add_findings() = std::move(f);
      }
    }
    if (!any) return Skipped(name(), "no RoCE port with a netdev (InfiniBand MTUs are the port's)");
    if (!unreadable.empty()) {
      r.set_outcome(v1::AUDIT_FAILED);
      r.set_reason(absl::StrCat("MTU unreadable: ", absl::StrJoin(unreadable, "; ")));
    }
    return r;
  }
};

}  // namespace

const Audit& MtuAudit() {
  static const Mtu audit;
  return audit;
}

}  // namespace fabricctl::probes::audit_internal
