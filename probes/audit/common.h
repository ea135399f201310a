#ifndef FABRICCTL_PROBES_AUDIT_COMMON_H_
#define FABRICCTL_PROBES_AUDIT_COMMON_H_

// What several audits share: their findings and results, and the RDMA ports, GPUs and NICs
// read from sysfs. Private to //probes/audit.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "probes/audit/audit.h"
#include "probes/sysfs/sysfs_root.h"
#include "proto/report.pb.h"
#include "report/findings.h"

namespace fabricctl::probes::audit_internal {

inline constexpr char kInfiniband[] = "/sys/class/infiniband";

// A finding of `kind` on ctx.node with the catalogue's severity and action (or its alternate
// level), about `device` and `port` where they apply. Details are read on their own in a
// sweep's list of many nodes: they start with the node ("node: detail").
v1::Finding MakeFinding(const AuditContext& ctx, std::string_view kind, const std::string& device,
                        uint32_t port, std::string detail,
                        report::Level level = report::Level::kDefault);

// An AUDIT_RAN result of `audit`, without findings yet.
v1::AuditResult Ran(const char* audit);
// An AUDIT_SKIPPED result of `audit` with the reason.
v1::AuditResult Skipped(const char* audit, std::string reason);

struct Port {
  std::string device;
  uint32_t port = 0;
  std::string dir;     // /sys/class/infiniband/<dev>/ports/<n>
  std::string netdev;  // RoCE: the netdev behind it
  bool ethernet = false;
};

// Every RDMA port under the root; NotFound when there is no RDMA device.
absl::StatusOr<std::vector<Port>> ListPorts(const SysfsRoot& root);

struct PciDevice {
  std::string address;
  std::string name;  // mlx5_0 for NICs
  // The components of its real sysfs path below /sys/devices: the root complex, then each
  // bridge down to the device; empty when unreadable.
  std::vector<std::string> path;
  int numa = -1;
};

// NVIDIA GPUs (class 0x03xx, vendor 0x10de) and RDMA NICs, by PCI address.
void ListGpusAndNics(const SysfsRoot& root, std::vector<PciDevice>* gpus,
                     std::vector<PciDevice>* nics);

}  // namespace fabricctl::probes::audit_internal

#endif  // FABRICCTL_PROBES_AUDIT_COMMON_H_
