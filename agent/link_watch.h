#ifndef FABRICCTL_AGENT_LINK_WATCH_H_
#define FABRICCTL_AGENT_LINK_WATCH_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "agent/link_state.h"
#include "base/mutex.h"
#include "probes/sysfs/sysfs_root.h"
#include "proto/report.pb.h"

namespace fabricctl::agent {

struct LinkWatchSettings {
  absl::Duration interval = absl::Seconds(10);  // how often the agent samples (in the verdict)
  absl::Duration window = absl::Hours(24);
  absl::Duration recovery = absl::Hours(1);
  uint64_t max_errors = 0;    // errors a link may count within `recovery`
  size_t max_events = 20000;  // the rings' bound, half for falls, half for errors
};

// One rise of one counter of one link between two samples.
struct LinkEvent {
  absl::Time at;
  std::string link;     // "eth0", "mlx5_0:1"
  std::string counter;  // "carrier_down_count", "link_downed", "symbol_error", ...
  uint64_t increase = 0;
  bool flap = false;  // the link went down (and came back)
};

// The agent's watch of its links between sweeps. Each Sample() reads every watched netdev's
// and RDMA port's counters (carrier changes and downs, link_downed, the error counters of the
// counters audit and the netdev's own) and keeps each rise as an event in a ring bounded by
// the window and by `max_events`, falls and errors apart (an event is under 100 bytes: 20000 of
// them under 2 MiB).
// The first sample is the baseline: nothing before the agent started is counted.
//
// Result() judges the ring: a link that went down within `recovery` is link_flapping (twice or
// more: critical, the node drained; once: a warning, a re-seated cable or a switch reboot); a
// link whose error counters rose by more than `max_errors` within `recovery` is link_errors.
// Older events stay in the observed figures but raise nothing: a link quiet for `recovery` is
// healthy again. Thread-safe: the agent's watch thread samples, RPCs read.
class LinkWatch {
 public:
  LinkWatch(const probes::SysfsRoot* sysfs, WatchedLinks links, LinkWatchSettings settings,
            std::string node);

  void Sample(absl::Time now);
  // The "link_watch" audit result at `now`; AUDIT_SKIPPED before the second sample.
  v1::AuditResult Result(absl::Time now) const;
  std::vector<LinkEvent> Events() const;

 private:
  std::map<std::string, uint64_t> Read() const;
  // Both rings' events, oldest first.
  std::vector<LinkEvent> Merged() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Trim(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const probes::SysfsRoot* sysfs_;
  const WatchedLinks links_;
  const LinkWatchSettings settings_;
  const std::string node_;

  mutable Mutex mu_;
  std::map<std::string, uint64_t> last_ ABSL_GUARDED_BY(mu_);  // "link counter" -> value
  std::deque<LinkEvent> flaps_ ABSL_GUARDED_BY(mu_);           // each at most max_events / 2
  std::deque<LinkEvent> errors_ ABSL_GUARDED_BY(mu_);
  // carrier_changes not yet paired (a fall seen in one sample, its return in the next), by link.
  std::map<std::string, uint64_t> odd_changes_ ABSL_GUARDED_BY(mu_);
  absl::Time first_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time latest_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  size_t samples_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;  // events pushed out by max_events
};

// Writes a verdict of the watch to `path` (text protobuf, readable by all: it holds link names
// and counts) for `fabricctl check`: whole or not at all (a temporary file renamed over it).
// The directory is made when missing.
absl::Status WriteWatchVerdict(const std::string& path, const v1::AuditResult& verdict);

}  // namespace fabricctl::agent

#endif  // FABRICCTL_AGENT_LINK_WATCH_H_
