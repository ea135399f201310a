#include "controller/sweep/load_meter.h"

#include <algorithm>

namespace fabricctl::controller::sweep {

void LoadMeter::Advance(absl::Time now) {
  // Calls may arrive a hair out of order across threads: time never runs backwards here.
  if (last_ != absl::InfinitePast() && now > last_) {
    probe_seconds_ += running_ * absl::ToDoubleSeconds(now - last_);
  }
  if (last_ == absl::InfinitePast() || now > last_) last_ = now;
}

LoadMeter::Mark LoadMeter::Enter(absl::Time now) {
  MutexLock lock(&mu_);
  Advance(now);
  ++running_;
  return {probe_seconds_, last_};
}

double LoadMeter::Leave(const Mark& start, absl::Time now) {
  MutexLock lock(&mu_);
  Advance(now);
  const double seconds = absl::ToDoubleSeconds(last_ - start.at);
  const double average = seconds > 0 ? (probe_seconds_ - start.probe_seconds) / seconds : running_;
  running_ = std::max(0, running_ - 1);
  return std::max(1.0, average);
}

}  // namespace fabricctl::controller::sweep
