#ifndef FABRICCTL_CONTROLLER_SWEEP_LOAD_METER_H_
#define FABRICCTL_CONTROLLER_SWEEP_LOAD_METER_H_

#include <cstdint>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "base/mutex.h"

namespace fabricctl::controller::sweep {

// How many probes a sweep had moving data at once, averaged over each probe's own run: the
// concurrency a figure was taken at. On a fabric or host that slows under load (an
// oversubscribed uplink, CPU-bound hosts) or speeds up under it (a host whose idle CPUs wake
// slowly answers a ping-pong late), a pair measured while the rest of its round had failed is
// not comparable with one measured in a full round; the analysis compares like with like by
// this figure (analysis.h). Only probes that moved data load the others: a probe that waited
// out a dead path (a connect that never completes) held an RPC for its whole deadline and
// loaded nothing, so a probe's concurrency is known once every probe that overlapped it has
// ended (or is still running: counted as loading, since it may yet). One meter is shared by
// every rail of a sweep. The clock is the caller's, so that the arithmetic is testable.
// Thread-safe.
class LoadMeter {
 public:
  using Ticket = uint64_t;

  // One more probe runs from `now`.
  Ticket Enter(absl::Time now);
  // The probe ends at `now`; `loaded`: whether it moved data (a probe that measured).
  void Leave(Ticket probe, absl::Time now, bool loaded);
  // The average number of probes that ran during `probe`'s run, itself included (>= 1):
  // every loaded probe that overlapped it, for the part that overlapped, and every probe still
  // running. A run of no measurable length counts what ran at its instant.
  double Concurrency(Ticket probe) const;
  // Done with `probe`: its run is forgotten once no probe it overlapped can still be asked
  // about.
  void Release(Ticket probe);

 private:
  struct Run {
    absl::Time start;
    absl::Time end = absl::InfiniteFuture();  // still running
    bool loaded = false;
    bool released = false;
  };
  void Prune() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  Ticket next_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<Ticket, Run> runs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_LOAD_METER_H_
