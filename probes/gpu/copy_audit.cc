#include "probes/gpu/copy_audit.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fabricctl::probes {

v1::AuditResult GpuCopyAudit(const v1::ProbeResult& result) {
  v1::AuditResult r;
  r.set_audit("gpu_copy");
  switch (result.outcome()) {
    case v1::PROBE_OK:
      r.set_outcome(v1::AUDIT_RAN);
      break;
    case v1::PROBE_SKIPPED:
      r.set_outcome(v1::AUDIT_SKIPPED);
      break;
    default:
      r.set_outcome(v1::AUDIT_FAILED);
      break;
  }
  if (r.outcome() != v1::AUDIT_RAN) {
    r.set_reason(result.reason().empty() ? "gpu_copy did not run" : result.reason());
    if (result.outcome() == v1::PROBE_TIMEOUT)
      r.set_reason(absl::StrCat("timed out: ", r.reason()));
    return r;
  }
  if (result.copy().empty()) {
    r.set_outcome(v1::AUDIT_FAILED);
    r.set_reason("gpu_copy ran but measured no copy");
    return r;
  }
  for (const auto& p : result.copy()) {
    (*r.mutable_observed())[absl::StrCat("GPU ", p.gpu_index(), " ", p.size_bytes(), " B")] =
        absl::StrFormat("H2D %.1f GB/s, D2H %.1f GB/s", p.h2d_gbytes(), p.d2h_gbytes());
  }
  return r;
}

}  // namespace fabricctl::probes
