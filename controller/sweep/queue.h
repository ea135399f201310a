#ifndef FABRICCTL_CONTROLLER_SWEEP_QUEUE_H_
#define FABRICCTL_CONTROLLER_SWEEP_QUEUE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/mutex.h"
#include "proto/controller.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// A sweep as the queue sees it: who asked (the caller's certificate identity), over which
// nodes (names; the whole registry when the request names none), and what it measures (the
// request with its nodes and wait cleared: two requests share a result only when equal).
struct QueuedSweep {
  std::string identity;
  std::set<std::string> nodes;
  v1::SweepRequest measures;
  static QueuedSweep Of(const std::string& identity, const v1::SweepRequest& request,
                        const std::vector<std::string>& registry);
  // Whether this sweep's result answers `other`: the same measurement over all of its nodes.
  bool Covers(const QueuedSweep& other) const;
};

// A sweep's result, for the clients that share it. Thread-safe.
class SharedResult {
 public:
  // Sets the result (once) and wakes every waiter, also those of the results that follow
  // this one (Follow).
  void Publish(const absl::StatusOr<v1::Report>& report);
  // `other` gets this result when it is published (a waiting sweep that a running one covers).
  void Follow(std::shared_ptr<SharedResult> other);
  // The result once published; or the status `leave` returns when it is not OK (checked
  // every 100 ms: the client went away, the controller stops).
  absl::StatusOr<v1::Report> Wait(const std::function<absl::Status()>& leave);

 private:
  Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  absl::StatusOr<v1::Report> report_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<SharedResult>> followers_ ABSL_GUARDED_BY(mu_);
};

// The controller's sweeps: one runs at a time; the others wait for their turn or share a
// result. The rules, in order, for a sweep that arrives:
//  1. A sweep whose nodes are all in the running sweep's, measuring the same, takes the running
//     sweep's result (restricted to its nodes by the caller): it is never run twice.
//  2. Likewise a sweep covered by one already waiting shares that one's result (the same
//     identity asking twice for the same nodes is one sweep).
//     A place that shares a result is no sweep: it is not held against its identity (a burst
//     of prologs for one job array all share one sweep), only against kMaxSharing, the
//     server threads such places may hold at once.
//  3. Otherwise it waits. An identity that already holds `per_identity` sweeps (running and
//     waiting) is refused at once (RESOURCE_EXHAUSTED). The bound is per identity, so no
//     identity's flood can refuse another's sweep (a Slurm prolog's has an identity of its own).
//  4. When the running sweep ends, the next to run is the oldest waiting sweep of the identity
//     whose last turn is the longest ago (a turn in rotation among identities). Every waiting
//     sweep measuring the same whose nodes one sweep over the union measures with no more pairs
//     than the two apart (C(|union|, 2) <= C(|its|, 2) + C(|theirs|, 2): overlapping jobs) is
//     merged into it, in arrival order; then every waiting sweep it covers shares its result.
// A waiting sweep leaves when its wait is over (FAILED_PRECONDITION), or `leave` says so.
class SweepQueue {
 public:
  // The server threads places that share a result may hold at once.
  static constexpr uint32_t kMaxSharing = 4096;
  explicit SweepQueue(uint32_t per_identity) : per_identity_(per_identity) {}
  // The bound of rule 3 from now on (a configuration reload).
  void SetPerIdentity(uint32_t per_identity);

  // A place in the queue: either this client runs the sweep (`run`: it publishes the result
  // there, for those that share it), or it shares another's result (`shared`: it waits on it).
  // Destroying it gives the place back (and the turn, when it ran).
  class Place {
   public:
    Place(SweepQueue* queue, std::string identity, std::shared_ptr<SharedResult> result, bool runs,
          std::set<std::string> nodes = {})
        : queue_(queue),
          identity_(std::move(identity)),
          result_(std::move(result)),
          runs_(runs),
          nodes_(std::move(nodes)) {}
    ~Place();
    Place(Place&& other) noexcept;
    Place(const Place&) = delete;
    Place& operator=(const Place&) = delete;
    Place& operator=(Place&&) = delete;
    bool runs() const { return runs_; }
    SharedResult& result() const { return *result_; }
    // When it runs: the nodes to sweep (its own, and those of the sweeps merged into it).
    const std::set<std::string>& nodes() const { return nodes_; }

   private:
    SweepQueue* queue_;
    std::string identity_;
    std::shared_ptr<SharedResult> result_;
    bool runs_;
    std::set<std::string> nodes_;
  };

  // Takes a place for `sweep`, waiting until `give_up` for the turn (see the rules above).
  absl::StatusOr<Place> Enter(const QueuedSweep& sweep, absl::Time give_up,
                              const std::function<absl::Status()>& leave, absl::Duration wait);

  // The places each identity holds now (running, waiting, sharing); for tests and /metrics.
  std::map<std::string, uint32_t> Held() const;

 private:
  struct Waiting {
    uint64_t seq;
    QueuedSweep sweep;
    std::shared_ptr<SharedResult> result;
    bool shares = false;  // a sweep that started since covers it: it shares that one's result
  };
  // Whether `me` may go on: its turn has come, or it shares a result now. Called with mu_
  // held, by the wait inside Enter.
  struct Turn {
    SweepQueue* queue;
    Waiting* me;
    bool Now() const ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return me->shares || (!queue->running_ && queue->Next() == me);
    }
  };
  // The waiting sweep to run next (rule 4); null when none waits.
  Waiting* Next() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A place that shares `result` (rules 1 and 2), held against kMaxSharing only.
  absl::StatusOr<Place> Share(const QueuedSweep& sweep, std::shared_ptr<SharedResult> result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Rule 4 for the sweep that now runs: those merged into it, then those it covers, share it.
  void Gather() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // `w` shares the running sweep's result from now on.
  void ShareRunning(Waiting& w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A place given back: a sweep (`ran`) or a shared place.
  void Release(const std::string& identity, bool ran);

  mutable Mutex mu_;
  uint32_t per_identity_ ABSL_GUARDED_BY(mu_);
  bool running_ ABSL_GUARDED_BY(mu_) = false;
  QueuedSweep current_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<SharedResult> current_result_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Waiting> waiting_ ABSL_GUARDED_BY(mu_);        // by arrival
  std::map<std::string, uint32_t> held_ ABSL_GUARDED_BY(mu_);       // identity -> sweeps
  std::map<std::string, uint32_t> sharing_ ABSL_GUARDED_BY(mu_);    // identity -> shared places
  uint32_t shared_ ABSL_GUARDED_BY(mu_) = 0;                        // every shared place
  std::map<std::string, uint64_t> last_turn_ ABSL_GUARDED_BY(mu_);  // identity -> turn number
  uint64_t turns_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 0;
};

// `report` as the client of a sweep over `nodes` sees it, when another sweep covering them
// answered it: their nodes, the pairs between them, the findings about them (a pair's when
// both ends are theirs) and those about the fabric or its switches; the summary and the drain
// list made again from what is kept.
v1::Report RestrictReport(const v1::Report& report, const std::set<std::string>& nodes);

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_SWEEP_QUEUE_H_
