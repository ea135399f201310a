// memlock: the locked-memory limit (/proc/self/limits) against expect.min_memlock_bytes; RDMA
// registration pins memory.
#include <limits>

#include "absl/strings/str_cat.h"
#include "probes/audit/audit.h"
#include "probes/audit/common.h"
#include "probes/audit/parsers.h"
#include "probes/audit/registry.h"

namespace fabricctl::probes::audit_internal {
namespace {

constexpr uint64_t kDefaultMinMemlock = 64ull << 20;

class Memlock final : public Audit {
 public:
  const char* name() const override { return "memlock"; }
  v1::AuditResult Run(const AuditContext& ctx) const override {
    auto text = ctx.root->Read("/proc/self/limits");
    if (!text.ok()) return Skipped(name(), std::string(text.status().message()));
    auto limit = ParseMemlockLimit(*text);
    if (!limit) return Skipped(name(), "no \"Max locked memory\" line in /proc/self/limits");
    // Pinned memory matters to RDMA only: where no RDMA device is and nothing asks for one (nor
    // for a memlock floor), a low limit is no finding.
    if (ctx.expect.min_memlock_bytes() == 0 && RdmaExpectedBecause(*ctx.root, ctx.expect).empty()) {
      return Skipped(name(), absl::StrCat("no RDMA device here and no expect.* asking for one: "
                                          "nothing to pin (limit ",
                                          *limit == std::numeric_limits<uint64_t>::max()
                                              ? std::string("unlimited")
                                              : absl::StrCat(*limit, " bytes"),
                                          ")"));
    }
    v1::AuditResult r = Ran(name());
    const bool unlimited = *limit == std::numeric_limits<uint64_t>::max();
    (*r.mutable_observed())["memlock"] = unlimited ? "unlimited" : absl::StrCat(*limit, " bytes");
    const uint64_t want =
        ctx.expect.min_memlock_bytes() ? ctx.expect.min_memlock_bytes() : kDefaultMinMemlock;
    if (!unlimited && *limit < want) {
      *r.add_findings() = MakeFinding(
          ctx, report::kind::kMemlockTooLow, "", 0,
          absl::StrCat(
              "memlock limit ", *limit, " bytes, expected at least ", want,
              " (RDMA registration pins memory: ulimit -l unlimited, LimitMEMLOCK=infinity)"));
    }
    return r;
  }
};

}  // namespace

const Audit& MemlockAudit() {
  static const Memlock audit;
  return audit;
}

}  // namespace fabricctl::probes::audit_internal
