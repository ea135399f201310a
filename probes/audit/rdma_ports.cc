// rdma_ports: every RDMA port ACTIVE / LinkUp at the expected rate, RoCE ports with a RoCE v2
// GID. Paths and formats: drivers/infiniband/core/sysfs.c and include/rdma/ib_addr.h in the kernel.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "probes/audit/common.h"
#include "probes/audit/parsers.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes::audit_internal {
namespace {

// A non-zero GID of type "RoCE v2".
bool HasRoceV2Gid(const SysfsRoot& root, const std::string& port_dir) {
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

constexpr char kInfinibandClass[] = "/sys/class/infiniband";

class RdmaPorts final : public Audit {
 public:
  const char* name() const override { return "rdma_ports"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    v1::AuditResult r = Ran(name());
    auto ports = ListPorts(*ctx.root);
    if (!ports.ok()) {
      // Not a skip: a node without RDMA is the finding (its traffic would go over TCP).
      // Without an RDMA expectation it is the catalogue's alternate level (a warning).
      const bool expected = ctx.expect.link_rate_gbps() > 0;
      *r.add_findings() =
          MakeFinding(ctx, report::kind::kRdmaUnavailable, "", 0,
                      absl::StrCat(ports.status().message(),
                                   expected ? absl::StrFormat("; expected RDMA ports at %.0f Gb/s",
                                                              ctx.expect.link_rate_gbps())
                                            : ""),
                      expected ? report::Level::kDefault : report::Level::kAlternate);
      return r;
    }
    for (const Port& p : *ports) CheckPort(ctx, p, &r);
    // A device whose ports cannot be listed (a symlink loop, a broken driver) is not dropped
    // silently: it is named, with what the kernel said.
    for (const std::string& device :
         ctx.root->List(kInfinibandClass).value_or(std::vector<std::string>{})) {
      if (std::any_of(ports->begin(), ports->end(),
                      [&](const Port& p) { return p.device == device; }))
        continue;
      auto listed = ctx.root->List(absl::StrCat(kInfinibandClass, "/", device, "/ports"));
      *r.add_findings() = MakeFinding(
          ctx, report::kind::kRdmaUnavailable, device, 0,
          absl::StrCat(device, ": its ports cannot be read (",
                       listed.ok() ? "none listed" : std::string(listed.status().message()), ")"),
          ctx.expect.link_rate_gbps() > 0 ? report::Level::kDefault : report::Level::kAlternate);
    }
    return r;
  }

 private:
  static void CheckPort(const AuditContext& ctx, const Port& p, v1::AuditResult* r) {
    const std::string label = absl::StrCat(p.device, ":", p.port);
    auto state = ParseNumberedState(ctx.root->ReadTrimmed(p.dir + "/state").value_or(""));
    auto phys = ParseNumberedState(ctx.root->ReadTrimmed(p.dir + "/phys_state").value_or(""));
    auto rate = ParseRateGbps(ctx.root->ReadTrimmed(p.dir + "/rate").value_or(""));
    (*r->mutable_observed())[label] =
        absl::StrCat(state ? state->name : "?", " ", phys ? phys->name : "?", " ",
                     rate ? absl::StrFormat("%.0f Gb/s", *rate) : "? Gb/s",
                     p.ethernet ? " RoCE" : " IB", p.netdev.empty() ? "" : " " + p.netdev);
    if (!state || state->name != "ACTIVE" || !phys || phys->name != "LinkUp") {
      *r->add_findings() =
          MakeFinding(ctx, report::kind::kLinkDown, p.device, p.port,
                      absl::StrCat(label, " is ", state ? state->name : "unreadable", " / ",
                                   phys ? phys->name : "unreadable", ", expected ACTIVE / LinkUp"));
      return;
    }
    if (rate && ctx.expect.link_rate_gbps() > 0 && *rate < ctx.expect.link_rate_gbps()) {
      v1::Finding f = MakeFinding(ctx, report::kind::kLinkRateDegraded, p.device, p.port,
                                  absl::StrFormat("%s active at %.0f Gb/s, expected %.0f Gb/s",
                                                  label, *rate, ctx.expect.link_rate_gbps()));
      (*f.mutable_evidence())["rate_gbps"] = absl::StrFormat("%.0f", *rate);
      (*f.mutable_evidence())["expected_gbps"] =
          absl::StrFormat("%.0f", ctx.expect.link_rate_gbps());
      *r->add_findings() = std::move(f);
    }
    if (p.ethernet && !HasRoceV2Gid(*ctx.root, p.dir)) {
      *r->add_findings() = MakeFinding(ctx, report::kind::kRdmaUnavailable, p.device, p.port,
                                       absl::StrCat(label, " has no RoCE v2 GID (no IP address on ",
                                                    p.netdev.empty() ? "its netdev" : p.netdev,
                                                    "?): NCCL and perftest cannot use it"));
    }
  }
};

}  // namespace

const Audit& RdmaPortsAudit() {
  static const RdmaPorts audit;
  return audit;
}

}  // namespace fabricctl::probes::audit_internal
