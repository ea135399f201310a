#include "controller/sweep/load_meter.h"

#include <algorithm>

namespace fabricctl::controller::sweep {

LoadMeter::Ticket LoadMeter::Enter(absl::Time now) {
  MutexLock lock(&mu_);
  const Ticket ticket = next_++;
  runs_[ticket].start = now;
  return ticket;
}

void LoadMeter::Leave(Ticket probe, absl::Time now, bool loaded) {
  MutexLock lock(&mu_);
  auto it = runs_.find(probe);
  if (it == runs_.end()) return;
  // Clocks read a hair out of order across threads: a run never ends before it began.
  it->second.end = std::max(now, it->second.start);
  it->second.loaded = loaded;
}

double LoadMeter::Concurrency(Ticket probe) const {
  MutexLock lock(&mu_);
  auto it = runs_.find(probe);
  if (it == runs_.end()) return 1;
  const absl::Time start = it->second.start;
  const absl::Time end = it->second.end == absl::InfiniteFuture() ? start : it->second.end;
  const double seconds = absl::ToDoubleSeconds(end - start);
  double others = 0;  // probe-seconds of the others within [start, end); at the instant: a count
  for (const auto& [ticket, run] : runs_) {
    if (ticket == probe) continue;
    const bool running = run.end == absl::InfiniteFuture();
    if (!running && !run.loaded) continue;
    if (seconds > 0) {
      const absl::Duration overlap = std::min(end, run.end) - std::max(start, run.start);
      if (overlap > absl::ZeroDuration()) others += absl::ToDoubleSeconds(overlap);
    } else if (run.start <= start && (running || run.end >= start)) {
      others += 1;
    }
  }
  return 1 + (seconds > 0 ? others / seconds : others);
}

void LoadMeter::Release(Ticket probe) {
  MutexLock lock(&mu_);
  auto it = runs_.find(probe);
  if (it == runs_.end()) return;
  it->second.released = true;
  if (it->second.end == absl::InfiniteFuture()) it->second.end = it->second.start;
  Prune();
}

// A released run is still needed while a run not yet released overlaps it.
void LoadMeter::Prune() {
  absl::Time earliest = absl::InfiniteFuture();
  for (const auto& [ticket, run] : runs_) {
    if (!run.released) earliest = std::min(earliest, run.start);
  }
  for (auto it = runs_.begin(); it != runs_.end();) {
    it = it->second.released && it->second.end < earliest ? runs_.erase(it) : std::next(it);
  }
}

}  // namespace fabricctl::controller::sweep
