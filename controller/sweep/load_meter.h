#ifndef FABRICCTL_CONTROLLER_SWEEP_LOAD_METER_H_
#define FABRICCTL_CONTROLLER_SWEEP_LOAD_METER_H_

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "base/mutex.h"

namespace fabricctl::controller::sweep {

// How many probes a sweep has running at once, averaged over each probe's own run: the
// concurrency a figure was taken at. On a fabric or host that slows under load (an
// oversubscribed uplink, CPU-bound hosts), a pair measured while the rest of its round had
// failed is faster than one measured in a full round; the analysis compares like with like by
// this figure (analysis.h). One meter is shared by every rail of a sweep. The clock is the
// caller's, so that the arithmetic is testable. Thread-safe.
class LoadMeter {
 public:
  // Where a probe's run began: the meter's running total of probe-seconds and the time.
  struct Mark {
    double probe_seconds = 0;
    absl::Time at;
  };

  // One more probe runs from `now`.
  Mark Enter(absl::Time now);
  // The probe entered at `start` ends at `now`: the average number of probes that ran during
  // its run, itself included (>= 1; the count at `now` for a run of no measurable length).
  double Leave(const Mark& start, absl::Time now);

 private:
  void Advance(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Mutex mu_;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
  double probe_seconds_ ABSL_GUARDED_BY(mu_) = 0;  // integral of running_ over time
  absl::Time last_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace fabricctl::controller::sweep

#endif  // FABRICCTL_CONTROLLER_SWEEP_LOAD_METER_H_
