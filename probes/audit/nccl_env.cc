// nccl_env: NCCL_* variables that send NCCL's traffic over TCP, or name devices and interfaces
// the node does not have.
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "probes/audit/common.h"
#include "probes/audit/parsers.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes {
namespace audit_internal {
namespace {

class NcclEnv final : public Audit {
 public:
  const char* name() const override { return "nccl_env"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    v1::AuditResult r = Ran(name());
    auto env = [&](const char* key) -> std::string {
      auto it = ctx.environment.find(key);
      return it == ctx.environment.end() ? "" : it->second;
    };
    for (const char* key : {"NCCL_IB_DISABLE", "NCCL_NET", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME"}) {
      if (!env(key).empty()) (*r.mutable_observed())[key] = env(key);
    }
    if (env("NCCL_IB_DISABLE") == "1") {
      *r.add_findings() = MakeFinding(ctx, report::kind::kTcpFallback, "", 0,
                                      "NCCL_IB_DISABLE=1: NCCL will use TCP sockets, not RDMA");
    }
    if (env("NCCL_NET") == "Socket") {
      *r.add_findings() = MakeFinding(ctx, report::kind::kTcpFallback, "", 0,
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
        *r.add_findings() =
            MakeFinding(ctx, report::kind::kNcclEnvMisconfigured, "", 0,
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
            ctx, report::kind::kNcclEnvMisconfigured, "", 0,
            absl::StrCat("NCCL_SOCKET_IFNAME=", env("NCCL_SOCKET_IFNAME"),
                         " matches no interface here (present: ", absl::StrJoin(present, ", "),
                         ")"));
      }
    }
    return r;
  }
};

}  // namespace

const Audit& NcclEnvAudit() {
  static const NcclEnv audit;
  return audit;
}

}  // namespace audit_internal

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

}  // namespace fabricctl::probes
