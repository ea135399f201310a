#ifndef FABRICCTL_PROBES_AUDIT_AUDIT_H_
#define FABRICCTL_PROBES_AUDIT_AUDIT_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "probes/sysfs/sysfs_root.h"
#include "proto/config.pb.h"
#include "proto/controller.pb.h"
#include "proto/inventory.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::probes {

// What every audit reads: the system through a SysfsRoot (sysfs and procfs), the expectations
// of the configuration, the environment (for NCCL's variables) and the node's name.
struct AuditContext {
  const SysfsRoot* root = nullptr;
  v1::Expectations expect;
  std::map<std::string, std::string> environment;
  std::string node;
  // The counters audit compares two readings this far apart; zero skips it.
  absl::Duration counter_window = absl::ZeroDuration();
  // Increases beyond this are reported (thresholds.max_counter_increase).
  uint64_t max_counter_increase = 0;
  // DCB netlink replies by netdev (the qos audit). Unset: asked of the kernel when the root is
  // "/", else read from the fixture file <root>/netlink/dcb/<netdev>.
  std::function<absl::StatusOr<std::string>(const std::string&)> dcb_query;
  // Module (transceiver) EEPROM dumps by netdev (the optics audit). Unset: asked of the kernel
  // when the root is "/", else read from the fixture file <root>/ethtool/module/<netdev>
  // (missing: NotFound, no module).
  std::function<absl::StatusOr<std::string>(const std::string&)> module_eeprom;
  // The GPUs as the CUDA driver reports them (the gpudirect audit's dma-buf side); nullopt
  // when the driver was not asked (fixtures), empty when it has no GPU.
  std::optional<std::vector<v1::Gpu>> driver_gpus;
  // Why the driver listed none, when driver_gpus is empty.
  std::string driver_gpus_reason;
  // The link_watch audit: the agent's watch of its links now (set in the agent); unset, the
  // verdict the agent last wrote to `watch_file` (fabricctl check), none when that is empty.
  std::function<v1::AuditResult()> link_watch;
  std::string watch_file;
  // How the counters audit waits out its window; tests replace it to change counters meanwhile.
  std::function<void(absl::Duration)> wait = [](absl::Duration d) { absl::SleepFor(d); };
};

// One read-only check of a node. Each has its own parser in parsers.h; none shells out.
// An audit that does not apply says AUDIT_SKIPPED with the reason; findings carry the measured
// and the expected value.
class Audit {
 public:
  virtual ~Audit() = default;
  // "rdma_ports", "mtu", "memlock", "nccl_env".
  virtual const char* name() const = 0;
  virtual v1::AuditResult Run(const AuditContext& context) const = 0;
};

// The NCCL_* variables of this process, which the nccl_env audit reads (jobs started from the
// same environment inherit them).
std::map<std::string, std::string> NcclEnvironment();

// Every audit, in one explicit table.
const std::vector<const Audit*>& AllAudits();

// Runs the named audits (all when `names` is empty). InvalidArgument naming an unknown audit.
absl::StatusOr<std::vector<v1::AuditResult>> RunAudits(const AuditContext& context,
                                                       const std::vector<std::string>& names);

// "rdma_ports, mtu, ..." for help texts and errors.
std::string AuditNames();

// Why RDMA is expected on this node, for weighing a single node's NCCL network choice:
// "expect.link_rate_gbps is set" (or another expect.* that only RDMA satisfies), else "RDMA
// device mlx5_0 is present"; empty when neither holds.
std::string RdmaExpectedBecause(const SysfsRoot& root, const v1::Expectations& expect);

// The node's known-good state as the controller last told its agent (HeartbeatResponse), noted
// in the agent's link watch verdict (the file `fabricctl check` reads): `known_good` null when
// the controller holds no pass of the node. A verdict with no note: the agent has no answer
// from a controller.
void NoteKnownGood(const v1::KnownGood* known_good, v1::AuditResult* watch);

// The check's `known_good` line from the link watch's verdict: RAN with "sweep N passed at
// TIME" while the node is known-good, or "lost at TIME: why (sweep N passed at TIME)"; SKIPPED
// saying why it cannot say (no pass, no answer from a controller, no link watch).
v1::AuditResult KnownGoodOf(const v1::AuditResult& watch);

}  // namespace fabricctl::probes

#endif  // FABRICCTL_PROBES_AUDIT_AUDIT_H_
