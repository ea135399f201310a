#include "controller/leader.h"

#include <signal.h>
#include <unistd.h>

#include "base/daemon.h"
#include "base/logging.h"
#include "base/status_macros.h"

namespace fabricctl::controller {
namespace {

// The advisory lock's key: any number, the same for every controller of one database.
constexpr int64_t kActiveKey = 7400000;

}  // namespace

absl::StatusOr<std::unique_ptr<Leadership>> Leadership::Connect(const std::string& url) {
  if (!Database::IsPostgres(url)) return absl::InvalidArgumentError("a standby needs a postgresql:// database");
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(url));
  return std::unique_ptr<Leadership>(new Leadership(std::move(db)));
}

absl::StatusOr<bool> Leadership::TryAcquire() {
  ASSIGN_OR_RETURN(auto rows, db_->Query("SELECT pg_try_advisory_lock(?1), pg_backend_pid()", {kActiveKey}));
  if (rows.empty() || rows[0].size() < 2 || !rows[0][0] || *rows[0][0] != "t") return false;
  backend_ = static_cast<int>(ColumnInt(rows[0], 1));
  return true;
}

bool Leadership::StillHeld() {
  // The lock's holder, as PostgreSQL sees it: a reconnected session (another backend) is not.
  auto rows = db_->Query(
      "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = ?1 "
      "AND ((classid::bigint << 32) | objid::bigint) = ?2",
      {int64_t{backend_}, kActiveKey});
  return rows.ok() && !rows->empty() && ColumnInt((*rows)[0], 0) > 0;
}

absl::StatusOr<std::unique_ptr<Leadership>> WaitToLead(const std::string& url) {
  ASSIGN_OR_RETURN(std::unique_ptr<Leadership> leadership, Leadership::Connect(url));
  auto log = Logger("controller");
  bool waited = false, failing = false;
  for (;;) {
    const absl::StatusOr<bool> held = leadership->TryAcquire();
    if (held.ok() && *held) break;
    if (!held.ok() && !failing) {
      // PostgreSQL restarting, say: a standby keeps asking (the connection is reopened).
      log->warn("standby: cannot ask for the database's lock: {}; asking again", std::string(held.status().message()));
    }
    failing = !held.ok();
    if (!waited) {
      log->info("standby: another controller is active on database {}; taking over when it stops",
                Database::Describe(url));
      NotifyReady("standby: another controller is active");
      waited = true;
    }
    PingWatchdog();  // a standby is healthy while it waits
    if (const std::string signal = WaitForStopSignal(absl::Seconds(1)); !signal.empty()) {
      log->info("{}: stopped while standby", signal);
      return std::unique_ptr<Leadership>();
    }
  }
  if (waited) log->info("the active controller is gone: taking over");
  return leadership;
}

LeadershipWatch::LeadershipWatch(Leadership* leadership) {
  if (leadership == nullptr) return;
  thread_ = std::thread([this, leadership] {
    while (!done_.load()) {
      if (!leadership->StillHeld()) {
        Logger("controller")->error(
            "lost the database's lock (the connection to PostgreSQL broke): stopping, a standby may be active");
        lost_ = true;
        ::kill(::getpid(), SIGTERM);
        return;
      }
      for (int i = 0; i < 10 && !done_.load(); ++i) absl::SleepFor(absl::Milliseconds(100));
    }
  });
}

LeadershipWatch::~LeadershipWatch() {
  done_ = true;
  if (thread_.joinable()) thread_.join();
}

}  // namespace fabricctl::controller
