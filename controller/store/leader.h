#ifndef FABRICCTL_CONTROLLER_STORE_LEADER_H_
#define FABRICCTL_CONTROLLER_STORE_LEADER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "controller/store/database.h"

namespace fabricctl::controller {

// Which of the controllers sharing one PostgreSQL database is the active one: the holder of a
// lease, one row of the controller's own table (fabricctl_leader), taken and renewed on the
// database server's clock over a connection of its own.
//
// - Only the controller's database role can write the row: the table is its own (a table
//   someone else created under that name is refused at start), and PostgreSQL gives other
//   roles no privilege on it. A role without rights cannot squat it, as any login could hold a
//   fixed advisory-lock key.
// - A lease lasts `lease`; the active renews it every `renew_every`. A standby takes it when it
//   has expired, or at once when the holder's database session is gone (its process died and
//   the server closed the session): a host that vanishes costs at most one lease, a process
//   that dies about a second.
// - The active stops acting the moment it cannot renew: a renewal that fails or finds the
//   lease taken, or no renewal by its own deadline (the time it sent its last successful
//   renewal plus the lease, less a margin, on its own monotonic clock: before the server's
//   expiry, whatever the network does). Its writes then fail (Store::SetWriteGate) and it goes
//   back to standby.
// Two controllers on one SQLite file are kept apart by the file's lock instead (base/lock_file.h).
class Leadership {
 public:
  // The defaults: a standby serves within about 7 s of the active's host vanishing (the lease
  // and a second of asking), and the active rides out one renewal that fails or is slow (it
  // acts until 4 s after it sent its last good one).
  struct Options {
    absl::Duration lease = absl::Seconds(6);
    absl::Duration renew_every = absl::Seconds(2);
    // How long before the lease's end, on the holder's clock, it stops acting unrenewed.
    absl::Duration margin = absl::Seconds(2);
  };

  static absl::StatusOr<std::unique_ptr<Leadership>> Connect(const std::string& url,
                                                             const std::string& password,
                                                             Options options);
  ~Leadership();

  // Takes the lease when it is free; true when this process holds it now.
  absl::StatusOr<bool> TryAcquire();
  // Renews the lease; false when it is not this process's any more or cannot be renewed.
  bool Renew();
  // Gives the lease up (a controller that stops cleanly): a standby takes over at once.
  void Release();
  // Whether this process may act as the active controller now: it holds the lease and its own
  // deadline has not passed. Thread-safe.
  bool Acting() const;
  const std::string& holder() const { return holder_; }
  absl::Duration renew_every() const { return options_.renew_every; }

 private:
  Leadership(std::unique_ptr<Database> db, Options options);
  using Clock = std::chrono::steady_clock;
  // The lease's deadline on this process's clock, from a renewal sent at `sent`.
  void ExtendFrom(Clock::time_point sent);

  std::unique_ptr<Database> db_;  // used by one thread at a time: the waiter, then the watch
  const Options options_;
  const std::string holder_;             // host, process and a random part: unique to this process
  int64_t epoch_ = 0;                    // the lease's count of takeovers when this process took it
  std::atomic<int64_t> deadline_ns_{0};  // Clock's; 0: not held
};

// A standby's wait: takes the lease of the database at `url`, asking every second while another
// controller holds it or the database cannot be reached (saying so once), until it is taken or
// SIGINT or SIGTERM comes (then a null Leadership: stopped while standby).
absl::StatusOr<std::unique_ptr<Leadership>> WaitToLead(const std::string& url,
                                                       const std::string& password,
                                                       Leadership::Options options);

// Renews an active controller's lease from a thread of its own, and watches its deadline from
// another (a renewal may hang on a cut network); when the lease is lost it logs why and sends
// this process SIGTERM, so that it stops serving at once. Null: nothing to watch. Stops, and
// releases the lease when it still holds it, when destroyed.
class LeadershipWatch {
 public:
  explicit LeadershipWatch(Leadership* leadership);
  ~LeadershipWatch();
  LeadershipWatch(const LeadershipWatch&) = delete;
  LeadershipWatch& operator=(const LeadershipWatch&) = delete;
  bool Lost() const { return lost_.load(); }

 private:
  void Lose(const char* why);
  Leadership* leadership_;
  std::atomic<bool> lost_{false}, done_{false};
  std::thread renew_, watch_;
};

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_STORE_LEADER_H_
