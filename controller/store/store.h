#ifndef FABRICCTL_CONTROLLER_STORE_STORE_H_
#define FABRICCTL_CONTROLLER_STORE_STORE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/mutex.h"
#include "controller/store/database.h"
#include "proto/controller.pb.h"
#include "proto/inventory.pb.h"
#include "proto/report.pb.h"

namespace fabricctl::controller {

// A node as the registry keeps it.
struct StoredNode {
  v1::NodeInventory inventory;
  absl::Time first_seen;
  absl::Time last_seen;
};

// The controller's durable state: the node registry now, sweeps, results and findings as
// history, in one SQLite database (WAL mode; the default) or in PostgreSQL (database.h). Every
// write is committed before the call returns, so a controller restart loses nothing that was
// acknowledged.
//
// Thread-safe: one connection, serialised by a mutex (the write rate is a few per second per
// hundred nodes; the database's own locking is not needed within one process).
class Store {
 public:
  // Opens the database at `where` (an SQLite file, created if needed, or a postgresql:// URL)
  // and migrates its schema.
  // `password`: PostgreSQL's, when not in libpq's own password file (Database::Open).
  static absl::StatusOr<std::unique_ptr<Store>> Open(const std::string& where,
                                                     const std::string& password = "");
  // From now on every write first asks `writable` (an active controller's leadership: a
  // controller that lost it must not write), and fails with its status when it is not OK.
  void SetWriteGate(std::function<absl::Status()> writable);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Inserts or replaces a node's inventory; first_seen is kept across re-registrations.
  absl::Status UpsertNode(const v1::NodeInventory& inventory, absl::Time now);

  // Records a heartbeat, and `link_state` (the agent's line of its links' state; empty: not
  // sent). `known` is false when the node is not registered; `previous_link_state` is what the
  // last heartbeat said, when it said something else than this one.
  struct Touch {
    bool known = false;
    std::string previous_link_state;
  };
  absl::StatusOr<Touch> TouchNode(const std::string& name, absl::Time now,
                                  const std::string& link_state = "");

  // Known-good state (known_good.cc). A completed sweep records the pass each node earned
  // (NodePass: what the measurements covered), with its figures (FinishSweep); a node a finding
  // concerns loses it, as does LoseKnownGood; a loss later than the sweep's start is kept.
  // Forgetting a node (RemoveNodes, ForgetNodesSeenBefore) deletes its pass and drain. Nodes
  // never passed are absent.
  struct KnownGood {
    std::string node;
    int64_t sweep_id = 0;  // the last sweep it passed
    absl::Time passed;
    v1::NodeHealth figures;                  // the node as that sweep reported it
    v1::NodePass coverage;                   // what that pass covered
    absl::Time lost = absl::InfinitePast();  // when it stopped being known-good; never: it is
    std::string lost_why;
    bool Good() const { return lost == absl::InfinitePast(); }
  };
  // Every node's, ordered by name; only `names` when not empty.
  absl::StatusOr<std::vector<KnownGood>> ListKnownGood(const std::vector<std::string>& names) const;
  // Ends `node`'s known-good state at `when`, saying why (its agent restarted, its inventory or
  // a link changed); a node already lost keeps the latest loss (a sweep running now does not
  // pass it); a node never passed keeps the loss for the sweep measuring it.
  absl::Status LoseKnownGood(const std::string& node, absl::Time when, const std::string& why);

  // Drains the controller may give back (drained.cc; undrain.enabled): each node a completed
  // sweep's verdict drained (its summary's drain list), from the latest such verdict until a
  // sweep gives it back (its given_back list).
  struct Drained {
    std::string node;
    int64_t sweep_id = 0;  // the latest verdict that drained it
    absl::Time since;      // that sweep's end
    std::string kinds;     // what it was drained for, comma-separated
  };
  // Ordered by node.
  absl::StatusOr<std::vector<Drained>> ListDrained() const;
  // After FinishSweep of a completed sweep, in one transaction: the nodes `report` drained are
  // remembered (a node drained already: from this verdict now), those it gave back forgotten.
  absl::Status RecordDrains(int64_t sweep_id, const v1::Report& report);

  // All nodes, ordered by name; only `names` when not empty.
  absl::StatusOr<std::vector<StoredNode>> ListNodes(const std::vector<std::string>& names) const;
  // Removes these nodes from the registry (their sweep history stays); returns those removed.
  absl::StatusOr<std::vector<std::string>> RemoveNodes(const std::vector<std::string>& names);
  // Removes every node last seen before `cutoff`; returns their names.
  absl::StatusOr<std::vector<std::string>> ForgetNodesSeenBefore(absl::Time cutoff);

  // Sweeps and their results (history).
  // Records a new sweep as running; returns its id.
  absl::StatusOr<int64_t> CreateSweep(const v1::SweepRequest& request, absl::Time now);
  // Stores one completed probe result of a sweep, committed before returning.
  absl::Status InsertResult(int64_t sweep_id, uint32_t round, uint32_t attempt,
                            const v1::ProbeResult& result);
  // All results of a sweep in insertion order.
  absl::StatusOr<std::vector<v1::ProbeResult>> ListResults(int64_t sweep_id) const;
  // Marks a sweep finished and stores its report; a completed sweep is then the last passing
  // one of each node its report says is healthy (what pruning keeps).
  absl::Status FinishSweep(int64_t sweep_id, const v1::Report& report);
  // The report of `sweep_id` (0: the latest finished sweep). NotFound when there is none.
  absl::StatusOr<v1::Report> GetReport(int64_t sweep_id) const;
  // The newest `limit` sweeps, newest first.
  // Up to `limit` sweeps, newest first; with `before_id`, only those older than it.
  absl::StatusOr<std::vector<v1::SweepInfo>> ListSweeps(uint32_t limit,
                                                        int64_t before_id = 0) const;
  // Ids of the finished sweeps (those with a report) above `after`, oldest first: the newest
  // `limit` of them (kNewest), or the oldest `limit` (kOldest, to page through them all).
  // Reads no report.
  enum class Take { kNewest, kOldest };
  absl::StatusOr<std::vector<int64_t>> FinishedSweepIdsAfter(int64_t after, uint32_t limit,
                                                             Take take) const;
  // Deletes the sweeps (with their results and reports) that started before `started_before`
  // or are not among the newest `keep_newest` (0: any number), except a running one, one that
  // a kept sweep was compared against (its --baseline) and each node's last passing sweep; the
  // space is reused by later sweeps (the file does not shrink). A transaction per sweep, the
  // store free for other calls between them. Acceptances recorded before `started_before`, or
  // beyond the newest `keep_newest` (0: any number), go too, in one statement.
  // FinishSweep writes only a sweep still recorded as running.
  struct Pruned {
    int64_t sweeps = 0, results = 0, acceptances = 0;
  };
  absl::StatusOr<Pruned> PruneSweeps(absl::Time started_before, uint32_t keep_newest);
  // Acceptances (acceptances.cc): the record of each `fabricctl accept`.
  // Stores `acceptance`, recorded at `now` by `by` (the caller's identity); returns its id.
  // InvalidArgument naming the first sweep it names that history does not hold.
  absl::StatusOr<int64_t> RecordAcceptance(const v1::Acceptance& acceptance, const std::string& by,
                                           absl::Time now);
  // Up to `limit` records, newest first; with `before_id`, only those older than it. The whole
  // Acceptance of each only `with_verdicts` (read from the database only then).
  absl::StatusOr<std::vector<v1::AcceptanceRecord>> ListAcceptances(uint32_t limit,
                                                                    int64_t before_id,
                                                                    bool with_verdicts) const;

  // Marks sweeps still recorded as running as interrupted (a controller that restarts calls
  // this: whatever ran before it stopped will not finish). Returns how many.
  absl::StatusOr<int> MarkRunningInterrupted(absl::Time now);

 private:
  explicit Store(std::unique_ptr<Database> db) : db_(std::move(db)) {}
  // OK when a write may go ahead (SetWriteGate).
  absl::Status Writable() const;

  mutable Mutex gate_mu_;
  std::function<absl::Status()> writable_ ABSL_GUARDED_BY(gate_mu_);
  mutable Mutex mu_;
  const std::unique_ptr<Database> db_ ABSL_PT_GUARDED_BY(mu_);
};

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_STORE_STORE_H_
