#ifndef FABRICCTL_PROBES_AUDIT_REGISTRY_H_
#define FABRICCTL_PROBES_AUDIT_REGISTRY_H_

// The audits, each defined in its own file (<name>.cc); registry.cc lists them, in this
// order, in the one table AllAudits(). Private to //probes/audit.

#include "probes/audit/audit.h"

namespace fabricctl::probes::audit_internal {

const Audit& RdmaPortsAudit();  // rdma_ports.cc
const Audit& MtuAudit();        // mtu.cc
const Audit& QosAudit();        // qos.cc
const Audit& PcieAudit();       // pcie.cc
const Audit& AffinityAudit();   // affinity.cc
const Audit& AcsAudit();        // acs.cc
const Audit& GpuDirectAudit();  // gpudirect.cc
const Audit& CountersAudit();   // counters.cc
const Audit& OpticsAudit();     // optics.cc
const Audit& MemlockAudit();    // memlock.cc
const Audit& NcclEnvAudit();    // nccl_env.cc
const Audit& LinkWatchAudit();  // link_watch.cc

}  // namespace fabricctl::probes::audit_internal

#endif  // FABRICCTL_PROBES_AUDIT_REGISTRY_H_
