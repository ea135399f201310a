#include "controller/sweep/queue.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "google/protobuf/util/time_util.h"
#include "report/builder.h"

namespace fabricctl::controller {
namespace {

constexpr absl::Duration kPoll = absl::Milliseconds(100);

}  // namespace

QueuedSweep QueuedSweep::Of(const std::string& identity, const v1::SweepRequest& request,
                            const std::vector<std::string>& registry) {
  QueuedSweep q;
  q.identity = identity;
  if (request.nodes().empty()) {
    q.nodes.insert(registry.begin(), registry.end());
  } else {
    q.nodes.insert(request.nodes().begin(), request.nodes().end());
  }
  q.measures = request;
  q.measures.clear_nodes();
  q.measures.clear_wait();
  return q;
}

bool QueuedSweep::Covers(const QueuedSweep& other) const {
  return std::includes(nodes.begin(), nodes.end(), other.nodes.begin(), other.nodes.end()) &&
         google::protobuf::util::MessageDifferencer::Equals(measures, other.measures);
}

void SharedResult::Publish(const absl::StatusOr<v1::Report>& report) {
  std::vector<std::shared_ptr<SharedResult>> followers;
  {
    MutexLock lock(&mu_);
    if (done_) return;
    done_ = true;
    report_ = report;
    followers.swap(followers_);
  }
  for (auto& f : followers) f->Publish(report);
}

void SharedResult::Follow(std::shared_ptr<SharedResult> other) {
  absl::StatusOr<v1::Report> now;
  {
    MutexLock lock(&mu_);
    if (!done_) {
      followers_.push_back(std::move(other));
      return;
    }
    now = report_;
  }
  other->Publish(now);
}

absl::StatusOr<v1::Report> SharedResult::Wait(const std::function<absl::Status()>& leave) {
  MutexLock lock(&mu_);
  while (!done_) {
    mu_.AwaitWithTimeout(&done_, kPoll);
    if (done_) break;
    mu_.Unlock();
    const absl::Status left = leave ? leave() : absl::OkStatus();
    mu_.Lock();
    if (!left.ok() && !done_) return left;
  }
  return report_;
}

SweepQueue::Place::~Place() {
  if (queue_ != nullptr) queue_->Release(identity_, runs_);
}

SweepQueue::Place::Place(Place&& other) noexcept
    : queue_(other.queue_),
      identity_(std::move(other.identity_)),
      result_(std::move(other.result_)),
      runs_(other.runs_),
      nodes_(std::move(other.nodes_)) {
  other.queue_ = nullptr;
}

void SweepQueue::SetPerIdentity(uint32_t per_identity) {
  MutexLock lock(&mu_);
  per_identity_ = per_identity;
}

SweepQueue::Waiting* SweepQueue::Next() {
  Waiting* next = nullptr;
  uint64_t next_turn = 0;
  for (auto& [seq, w] : waiting_) {
    if (w.shares) continue;
    auto it = last_turn_.find(w.sweep.identity);
    const uint64_t turn = it == last_turn_.end() ? 0 : it->second;
    if (next == nullptr || turn < next_turn) next = &w, next_turn = turn;  // oldest first on a tie
  }
  return next;
}

absl::StatusOr<SweepQueue::Place> SweepQueue::Share(const QueuedSweep& sweep,
                                                    std::shared_ptr<SharedResult> result) {
  if (shared_ >= kMaxSharing) {
    return absl::ResourceExhaustedError(absl::StrCat(
        kMaxSharing, " clients already wait on a running sweep's result here; try later"));
  }
  ++shared_;
  ++sharing_[sweep.identity];
  return Place(this, sweep.identity, std::move(result), /*runs=*/false);
}

namespace {

uint64_t Pairs(size_t nodes) { return nodes * (nodes - (nodes > 0 ? 1 : 0)) / 2; }

// Whether one sweep over `a` and `b` together measures no more pairs than the two apart.
bool MergeCosts(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> both = a;
  both.insert(b.begin(), b.end());
  return Pairs(both.size()) <= Pairs(a.size()) + Pairs(b.size());
}

bool SameMeasure(const QueuedSweep& a, const QueuedSweep& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a.measures, b.measures);
}

}  // namespace

void SweepQueue::ShareRunning(Waiting& w) {
  // A waiting sweep that shares from now on is no longer held as a sweep: a shared place.
  w.shares = true;
  current_result_->Follow(w.result);
  if (auto it = held_.find(w.sweep.identity); it != held_.end() && --it->second == 0)
    held_.erase(it);
  ++sharing_[w.sweep.identity];
  ++shared_;
}

void SweepQueue::Gather() {
  for (auto& [seq, w] : waiting_) {  // merged, in arrival order
    if (w.shares || current_.Covers(w.sweep) || !SameMeasure(current_, w.sweep) ||
        !MergeCosts(current_.nodes, w.sweep.nodes))
      continue;
    current_.nodes.insert(w.sweep.nodes.begin(), w.sweep.nodes.end());
    ShareRunning(w);
  }
  for (auto& [seq, w] : waiting_) {  // covered
    if (!w.shares && current_.Covers(w.sweep)) ShareRunning(w);
  }
}

absl::StatusOr<SweepQueue::Place> SweepQueue::Enter(const QueuedSweep& sweep, absl::Time give_up,
                                                    const std::function<absl::Status()>& leave,
                                                    absl::Duration wait) {
  MutexLock lock(&mu_);
  if (running_ && current_.Covers(sweep)) return Share(sweep, current_result_);  // rule 1
  for (auto& [seq, w] : waiting_) {                                              // rule 2
    if (w.sweep.Covers(sweep)) return Share(sweep, w.result);
  }
  if (auto it = held_.find(sweep.identity);
      it != held_.end() && it->second >= per_identity_) {  // rule 3
    return absl::ResourceExhaustedError(
        absl::StrCat("'", sweep.identity, "' already has ", it->second,
                     " sweeps running or waiting on this controller (at most ", per_identity_,
                     " an identity: sweep.max_per_identity); try later"));
  }
  ++held_[sweep.identity];
  const uint64_t seq = next_seq_++;
  Waiting& me =
      waiting_.emplace(seq, Waiting{seq, sweep, std::make_shared<SharedResult>()}).first->second;
  for (;;) {
    if (me.shares) {  // a sweep that started meanwhile covers this one, or took it in
      Place place(this, sweep.identity, me.result, /*runs=*/false);
      waiting_.erase(seq);
      return place;
    }
    if (!running_ && Next() == &me) break;
    absl::Status left =
        absl::Now() >= give_up
            ? absl::FailedPreconditionError(
                  wait > absl::ZeroDuration()
                      ? absl::StrCat("a sweep is still running on this controller after waiting ",
                                     absl::FormatDuration(wait))
                      : "a sweep is already running on this controller (--wait DURATION queues "
                        "behind it)")
            : absl::OkStatus();
    if (left.ok() && leave) {
      mu_.Unlock();
      left = leave();
      mu_.Lock();
    }
    if (!left.ok() && !me.shares) {
      waiting_.erase(seq);
      --held_[sweep.identity];
      return left;
    }
    Turn turn{this, &me};
    mu_.AwaitWithTimeout(
        +[](Turn* t) { return t->Now(); }, &turn, kPoll);
  }
  running_ = true;
  current_ = me.sweep;
  current_result_ = me.result;
  last_turn_[sweep.identity] = ++turns_;
  waiting_.erase(seq);
  Gather();  // rule 4
  return Place(this, sweep.identity, current_result_, /*runs=*/true, current_.nodes);
}

void SweepQueue::Release(const std::string& identity, bool ran) {
  MutexLock lock(&mu_);
  std::map<std::string, uint32_t>& places = ran ? held_ : sharing_;
  if (auto it = places.find(identity); it != places.end() && --it->second == 0) places.erase(it);
  if (ran) {
    running_ = false;
    current_result_.reset();
  } else if (shared_ > 0) {
    --shared_;
  }
}

std::map<std::string, uint32_t> SweepQueue::Held() const {
  MutexLock lock(&mu_);
  std::map<std::string, uint32_t> out = held_;
  for (const auto& [identity, n] : sharing_) out[identity] += n;
  return out;
}

v1::Report RestrictReport(const v1::Report& report, const std::set<std::string>& nodes) {
  auto in = [&](const std::string& name) { return nodes.count(name) > 0; };
  report::ReportBuilder builder(report.source(), report.generator());
  v1::HealthMap* health = builder.mutable_health();
  *health = report.health();
  health->clear_nodes();
  health->clear_pairs();
  for (const auto& node : report.health().nodes()) {
    if (in(node.node())) *health->add_nodes() = node;
  }
  for (const auto& pair : report.health().pairs()) {
    if (in(pair.node()) && in(pair.peer())) *health->add_pairs() = pair;
  }
  for (const auto& f : report.findings()) {
    // A node's and a pair's findings when they are about these nodes; a switch's or the
    // fabric's (no node named) always: what the shared fabric does is every job's.
    if (f.node().empty() || (in(f.node()) && (f.peer().empty() || in(f.peer()))))
      builder.AddFinding(f);
  }
  v1::SweepInfo info = report.sweep();
  info.clear_nodes();
  for (const auto& n : report.sweep().nodes()) {
    if (in(n)) info.add_nodes(n);
  }
  using google::protobuf::util::TimeUtil;
  v1::Report out = builder.Finish(
      absl::FromUnixMicros(TimeUtil::TimestampToMicroseconds(report.generated())),
      absl::Microseconds(TimeUtil::DurationToMicroseconds(report.summary().elapsed())), "", &info);
  out.set_schema(report.schema());
  *out.mutable_inventory() = report.inventory();
  *out.mutable_expect() = report.expect();
  *out.mutable_thresholds() = report.thresholds();
  v1::Summary* summary = out.mutable_summary();
  summary->set_retest_rounds(report.summary().retest_rounds());
  summary->set_retested_pairs(report.summary().retested_pairs());
  summary->set_retests_skipped(report.summary().retests_skipped());
  *summary->mutable_retest_budget() = report.summary().retest_budget();
  return out;
}

}  // namespace fabricctl::controller
