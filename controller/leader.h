#ifndef FABRICCTL_CONTROLLER_LEADER_H_
#define FABRICCTL_CONTROLLER_LEADER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "controller/database.h"

namespace fabricctl::controller {

// Which of the controllers sharing one PostgreSQL database is the active one: the holder of a
// session-level advisory lock, on a connection of its own that lives as long as the process.
// When the active controller dies, PostgreSQL ends its session and frees the lock, and the
// next standby to ask takes it. Two controllers on one SQLite file are kept apart by the
// file's lock instead (base/lock_file.h).
class Leadership {
 public:
  static absl::StatusOr<std::unique_ptr<Leadership>> Connect(const std::string& url);

  // Takes the lock if no other session holds it; true when this process holds it now.
  absl::StatusOr<bool> TryAcquire();
  // Whether this process still holds it: its session is the lock's holder. False once the
  // connection was lost (a new session holds nothing), and then the controller must stop
  // serving: a standby may already have taken over.
  bool StillHeld();

 private:
  explicit Leadership(std::unique_ptr<Database> db) : db_(std::move(db)) {}
  std::unique_ptr<Database> db_;
  int backend_ = 0;  // the session's server process, once it holds the lock
};

// A standby's wait: takes the lock of the database at `url`, asking every second while another
// controller holds it (saying so once), until it is taken or SIGINT or SIGTERM comes (then a
// null Leadership: stopped while standby).
absl::StatusOr<std::unique_ptr<Leadership>> WaitToLead(const std::string& url);

// Watches an active controller's lock once a second from its own thread; when it is lost (the
// database connection broke: a standby may have taken over), logs why and sends this process
// SIGTERM, so that it stops serving at once. Null: nothing to watch. Stops when destroyed.
class LeadershipWatch {
 public:
  explicit LeadershipWatch(Leadership* leadership);
  ~LeadershipWatch();
  LeadershipWatch(const LeadershipWatch&) = delete;
  LeadershipWatch& operator=(const LeadershipWatch&) = delete;
  bool Lost() const { return lost_.load(); }

 private:
  std::atomic<bool> lost_{false}, done_{false};
  std::thread thread_;
};

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_LEADER_H_
