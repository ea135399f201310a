#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace fabricctl::cli {

std::string FormatClock(absl::Duration d) {
  const int64_t s = std::max<int64_t>(0, absl::ToInt64Seconds(d));
  if (s >= 3600) return absl::StrFormat("%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  return absl::StrFormat("%d:%02d", s / 60, s % 60);
}

SweepProgress::SweepProgress(std::ostream& err, bool terminal, std::function<absl::Time()> now)
    : err_(err), terminal_(terminal), now_(std::move(now)) {
  started_ = phase_started_ = last_event_ = now_();
  winsize size{};
  if (terminal_ && ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    width_ = size.ws_col;
}

SweepProgress::~SweepProgress() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    if (drawn_) err_ << "\r\033[K" << std::flush;  // the report follows on a clean line
  }
  if (ticker_.joinable()) ticker_.join();
}

void SweepProgress::Started(const v1::SweepInfo& info) {
  MutexLock lock(&mu_);
  sweep_id_ = info.sweep_id();
  rounds_ = info.rounds();
  started_ = phase_started_ = last_event_ = now_();
  if (!terminal_) {
    err_ << absl::StrFormat("sweep %d: %d nodes, %d rounds", info.sweep_id(), info.nodes_size(),
                            info.rounds());
    if (info.pairing() == v1::PAIRING_TOPOLOGY) {
      err_ << absl::StrFormat(" of %d pairs by the topology (a full mesh: %d pairs)",
                              info.planned_pairs(), info.full_mesh_pairs());
    }
    err_ << "\n";
    return;
  }
  Draw();
  ticker_ = std::thread([this] {
    MutexLock lock(&mu_);
    while (!stop_) {
      mu_.AwaitWithTimeout(&stop_, absl::Seconds(1));
      if (!stop_) Draw();
    }
  });
}

void SweepProgress::Round(const v1::RoundProgress& round) {
  MutexLock lock(&mu_);
  const absl::Time now = now_();
  if (round.phase() != phase_ || round.round() <= done_ || round.rounds() != rounds_) {
    // A new phase (re-tests, localisation), or a new pass of the same one (a second re-test
    // pass counts its rounds from 1 again), began when the last one's last round ended.
    phase_ = round.phase();
    phase_started_ = last_event_;
    pairs_ = failed_ = 0;
  }
  done_ = round.round();
  last_event_ = now;
  rounds_ = round.rounds();
  pairs_ += round.pairs();
  failed_ += round.pairs_failed();
  if (terminal_) {
    Draw();
  } else {
    err_ << absl::StrFormat("sweep %d: %s round %d/%d: %d pairs, %d failed (%s elapsed)\n",
                            sweep_id_, round.phase(), round.round(), round.rounds(), round.pairs(),
                            round.pairs_failed(), FormatClock(now - started_));
  }
}

std::string SweepProgress::Line(absl::Time now) const {
  MutexLock lock(&mu_);
  return LineLocked(now);
}

std::string SweepProgress::LineLocked(absl::Time now) const {
  constexpr int kWidth = 24;
  const double fraction = rounds_ > 0 ? std::min(1.0, static_cast<double>(done_) / rounds_) : 0.0;
  const int filled = static_cast<int>(std::floor(fraction * kWidth));
  std::string bar(kWidth, ' ');
  for (int i = 0; i < filled; ++i) bar[i] = '=';
  if (filled < kWidth) bar[filled] = '>';
  std::string line = absl::StrFormat("sweep %d [%s] %s %d/%d rounds, %d pairs", sweep_id_, bar,
                                     phase_, done_, rounds_, pairs_);
  if (failed_ > 0) absl::StrAppend(&line, " (", failed_, " failed)");
  absl::StrAppend(&line, ", ", FormatClock(now - started_), " elapsed");
  if (done_ > 0 && done_ < rounds_) {
    // The phase's rounds so far, extrapolated, counting down until the next round reports.
    const absl::Duration per_round = (last_event_ - phase_started_) / done_;
    const absl::Duration left = per_round * (rounds_ - done_) - (now - last_event_);
    absl::StrAppend(&line, ", ~", FormatClock(std::max(left, absl::ZeroDuration())), " left");
  }
  return line;
}

void SweepProgress::Draw() {
  // One line, never wrapped: a wrapped line would not be redrawn in place.
  std::string line = LineLocked(now_());
  if (line.size() >= width_) line.resize(width_ > 1 ? width_ - 1 : 0);
  err_ << "\r\033[K" << line << std::flush;
  drawn_ = true;
}

}  // namespace fabricctl::cli
