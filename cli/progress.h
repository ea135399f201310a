#ifndef FABRICCTL_CLI_PROGRESS_H_
#define FABRICCTL_CLI_PROGRESS_H_

#include <functional>
#include <ostream>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/mutex.h"
#include "proto/controller.pb.h"

namespace fabricctl::cli {

// A sweep's progress on stderr. On a terminal: one line redrawn in place every second, a bar
// of the current phase's rounds with the elapsed time and an estimate of the time left (the
// phase's rounds so far, extrapolated), cut to the terminal's width; cleared when the sweep
// ends. Elsewhere (a log, a Slurm
// prolog): a plain line per round with the elapsed time.
class SweepProgress {
 public:
  SweepProgress(
      std::ostream& err, bool terminal,
      std::function<absl::Time()> now = [] { return absl::Now(); });
  ~SweepProgress();  // stops redrawing and clears the line
  SweepProgress(const SweepProgress&) = delete;
  SweepProgress& operator=(const SweepProgress&) = delete;

  void Started(const v1::SweepInfo& info);
  void Round(const v1::RoundProgress& round);

  // The terminal line at `now` (no carriage return, no padding).
  std::string Line(absl::Time now) const;

 private:
  void Draw() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string LineLocked(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::ostream& err_;
  const bool terminal_;
  const std::function<absl::Time()> now_;
  mutable Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool drawn_ ABSL_GUARDED_BY(mu_) = false;
  size_t width_ ABSL_GUARDED_BY(mu_) = 80;  // the terminal's columns (stderr's), else 80
  int64_t sweep_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time started_ ABSL_GUARDED_BY(mu_);
  std::string phase_ ABSL_GUARDED_BY(mu_) = "measure";
  absl::Time phase_started_ ABSL_GUARDED_BY(mu_);
  absl::Time last_event_ ABSL_GUARDED_BY(mu_);
  uint32_t done_ ABSL_GUARDED_BY(mu_) = 0, rounds_ ABSL_GUARDED_BY(mu_) = 0,
                 pairs_ ABSL_GUARDED_BY(mu_) = 0, failed_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread ticker_;
};

// "1:05", "12:00:03".
std::string FormatClock(absl::Duration d);

}  // namespace fabricctl::cli

#endif  // FABRICCTL_CLI_PROGRESS_H_
