#ifndef FABRICCTL_PROBES_GPU_COPY_AUDIT_H_
#define FABRICCTL_PROBES_GPU_COPY_AUDIT_H_

#include "proto/probe.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::probes {

// A gpu_copy result as the node's "gpu_copy" entry beside its audits: ran with the copy rates
// per GPU and size ("GPU 0 67108864 B": "H2D 54.6 GB/s, D2H 54.6 GB/s"), skipped (no GPU
// driver or GPU) or failed with the reason. One form for `fabricctl check` and for sweeps.
v1::AuditResult GpuCopyAudit(const v1::ProbeResult& result);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_GPU_COPY_AUDIT_H_
