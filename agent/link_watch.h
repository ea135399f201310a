#ifndef FABRICCTL_AGENT_LINK_WATCH_H_
#define FABRICCTL_AGENT_LINK_WATCH_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/link_state.h"
#include "base/mutex.h"
#include "probes/audit/fec_stats.h"
#include "probes/sysfs/sysfs_root.h"
#include "proto/report.pb.h"

namespace fabricctl::agent {

// Where the watch reads a netdev's FEC counts: probes::ReadFecCounts on a live node, a fake in
// tests.
using FecSource = std::function<absl::StatusOr<probes::FecCounts>(const std::string& netdev)>;

struct LinkWatchSettings {
  absl::Duration interval = absl::Seconds(10);  // how often the agent samples (in the verdict)
  absl::Duration window = absl::Hours(24);
  absl::Duration recovery = absl::Hours(1);
  uint64_t max_errors = 0;    // errors a link may count within `recovery`
  size_t max_events = 20000;  // the rings' bound, half for falls, half for errors
  // Unset: no FEC counts are read (a fixture tree has no kernel behind it).
  FecSource fec;
  // Where the links to watch are found again every `discover_every` samples (the agent: its
  // inventory's, WatchedLinks::ToWatch): a NIC that comes up or is hot-added after the agent
  // started is watched from then on, its first reading the baseline. Links once watched stay
  // (a NIC that vanished reads nothing). Unset: the links given at the start, for ever.
  std::function<WatchedLinks()> discover;
  size_t discover_every = 30;
};

// One rise of one counter of one link between two samples.
struct LinkEvent {
  absl::Time at;
  std::string link;     // "eth0", "mlx5_0:1"
  std::string counter;  // "carrier_down_count", "link_downed", "symbol_error", "fec_uncorrected"
  uint64_t increase = 0;
  bool flap = false;  // the link went down (and came back)
};

// The agent's watch of its links between sweeps. Each Sample() reads every watched netdev's
// and RDMA port's counters (carrier changes and downs, link_downed, the error counters of the
// counters audit and the netdev's own, the netdev's FEC blocks through `fec`) and keeps each
// rise as an event in a ring bounded by the window and by `max_events`, falls and errors apart
// (an event is under 100 bytes: 20000 of them under 2 MiB).
// The first sample is the baseline: nothing before the agent started is counted.
//
// Result() judges the ring: a link that went down within `recovery` is link_flapping (twice or
// more: critical, the node drained; once: a warning, a re-seated cable or a switch reboot); a
// link whose error counters rose by more than `max_errors` within `recovery` is link_errors.
// Older events stay in the observed figures but raise nothing: a link quiet for `recovery` is
// healthy again. Thread-safe: the agent's watch thread samples, RPCs read.
//
// FEC: uncorrectable blocks (fec_uncorrected) are errors like rx_crc_errors, their frames were
// lost. Corrected blocks are not judged: a PAM4 link corrects blocks all the time, and a count
// says nothing without the link's budget. Their rise in the window is shown in the observed
// figures (`<link> fec_corrected`), kept per link in buckets of a hundredth of the window rather
// than as events, so a link correcting at every sample never fills the ring. A netdev whose
// kernel or driver has no FEC counts (Unimplemented) is asked once, not at every
// sample.
class LinkWatch {
 public:
  LinkWatch(const probes::SysfsRoot* sysfs, WatchedLinks links, LinkWatchSettings settings,
            std::string node);

  void Sample(absl::Time now);
  // The "link_watch" audit result at `now`; AUDIT_SKIPPED before the second sample.
  v1::AuditResult Result(absl::Time now) const;
  std::vector<LinkEvent> Events() const;
  // The links watched now (those discovered since the start included).
  WatchedLinks Links() const;
  // How many times a counter went back or a link vanished and came back (a NIC reset).
  uint64_t Resets() const;

 private:
  // Every counter of `links` now, "link counter" -> value. Netdevs in `no_fec` are not asked
  // for FEC counts; those whose FEC source says they have none join it.
  std::map<std::string, uint64_t> Read(const WatchedLinks& links,
                                       std::set<std::string>* no_fec) const;
  void AddCorrected(const std::string& link, absl::Time now, uint64_t blocks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Both rings' events, oldest first.
  std::vector<LinkEvent> Merged() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Trim(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const probes::SysfsRoot* sysfs_;
  const LinkWatchSettings settings_;
  const std::string node_;

  mutable Mutex mu_;
  WatchedLinks links_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, uint64_t> last_ ABSL_GUARDED_BY(mu_);  // "link counter" -> value
  std::deque<LinkEvent> flaps_ ABSL_GUARDED_BY(mu_);           // each at most max_events / 2
  std::deque<LinkEvent> errors_ ABSL_GUARDED_BY(mu_);
  // carrier_changes not yet paired (a fall seen in one sample, its return in the next), by link.
  std::map<std::string, uint64_t> odd_changes_ ABSL_GUARDED_BY(mu_);
  // Corrected FEC blocks by link: (the bucket's first rise, the blocks in it), oldest first.
  std::map<std::string, std::deque<std::pair<absl::Time, uint64_t>>> corrected_
      ABSL_GUARDED_BY(mu_);
  std::set<std::string> no_fec_ ABSL_GUARDED_BY(mu_);  // netdevs without FEC counts
  absl::Time first_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time latest_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  size_t samples_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;  // events pushed out by max_events
  uint64_t resets_ ABSL_GUARDED_BY(mu_) = 0;
  std::set<std::string> seen_ ABSL_GUARDED_BY(mu_);  // every "link counter" ever read
};

// Writes a verdict of the watch to `path` (text protobuf, readable by all: it holds link names
// and counts) for `fabricctl check`: whole or not at all (a temporary file renamed over it).
// The directory is made when missing.
absl::Status WriteWatchVerdict(const std::string& path, const v1::AuditResult& verdict);

}  // namespace fabricctl::agent

#endif  // FABRICCTL_AGENT_LINK_WATCH_H_
