#include "controller/store/leader.h"

#include <signal.h>
#include <unistd.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "base/daemon.h"
#include "base/logging.h"
#include "base/status_macros.h"

namespace fabricctl::controller {
namespace {

// The lease: one row, of the controller's own table. `epoch` counts takeovers, so that a
// holder's renewal after another took the lease over finds nothing to renew.
constexpr char kCreateLease[] = R"sql(
CREATE TABLE IF NOT EXISTS fabricctl_leader (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  holder   TEXT NOT NULL,
  epoch    BIGINT NOT NULL,
  expires  TIMESTAMPTZ NOT NULL
);
REVOKE ALL ON fabricctl_leader FROM PUBLIC;
INSERT INTO fabricctl_leader VALUES (1, '', 0, '-infinity') ON CONFLICT (id) DO NOTHING;
)sql";

std::string UniqueHolder() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  std::random_device random;
  return absl::StrCat(host, ":", ::getpid(), ":", random());
}

int64_t Millis(absl::Duration d) { return absl::ToInt64Milliseconds(d); }

}  // namespace

Leadership::Leadership(std::unique_ptr<Database> db, Options options)
    : db_(std::move(db)), options_(options), holder_(UniqueHolder()) {}

Leadership::~Leadership() = default;

absl::StatusOr<std::unique_ptr<Leadership>> Leadership::Connect(const std::string& url,
                                                                const std::string& password,
                                                                Options options) {
  if (!Database::IsPostgres(url))
    return absl::InvalidArgumentError("a standby needs a postgresql:// database");
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(url, password));
  RETURN_IF_ERROR(db->Script(kCreateLease));
  // A table of that name that another role made (before the controller's first start) is that
  // role's to write: refused, never used.
  ASSIGN_OR_RETURN(
      auto owner,
      db->Query("SELECT tableowner::text, current_user::text FROM pg_tables "
                "WHERE schemaname = current_schema() AND tablename = 'fabricctl_leader'",
                {}));
  if (owner.empty() || owner[0].size() < 2 || owner[0][0] != owner[0][1]) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--db: the table fabricctl_leader belongs to role '",
        owner.empty() || !owner[0][0] ? "?" : *owner[0][0], "', not to this controller's ('",
        owner.empty() || owner[0].size() < 2 || !owner[0][1] ? "?" : *owner[0][1],
        "'): whoever owns it decides which controller is active; drop it, or give the controllers "
        "a "
        "database of their own"));
  }
  return std::unique_ptr<Leadership>(new Leadership(std::move(db), options));
}

void Leadership::ExtendFrom(Clock::time_point sent) {
  const auto until = sent + absl::ToChronoNanoseconds(options_.lease - options_.margin);
  deadline_ns_ = until.time_since_epoch().count();
}

absl::StatusOr<bool> Leadership::TryAcquire() {
  const Clock::time_point sent = Clock::now();
  ASSIGN_OR_RETURN(auto rows,
                   db_->Query("UPDATE fabricctl_leader SET holder = ?1, epoch = epoch + 1, "
                              "expires = clock_timestamp() + ?2 * interval '1 millisecond' "
                              "WHERE id = 1 AND expires < clock_timestamp() RETURNING epoch",
                              {holder_, Millis(options_.lease)}));
  if (rows.empty()) return false;
  epoch_ = ColumnInt(rows[0], 0);
  ExtendFrom(sent);
  return true;
}

bool Leadership::Renew() {
  const Clock::time_point sent = Clock::now();
  auto rows = db_->Query(
      "UPDATE fabricctl_leader SET expires = clock_timestamp() + ?3 * interval '1 millisecond' "
      "WHERE id = 1 AND holder = ?1 AND epoch = ?2 RETURNING epoch",
      {holder_, epoch_, Millis(options_.lease)});
  if (!rows.ok() || rows->empty()) {
    deadline_ns_ = 0;
    return false;
  }
  ExtendFrom(sent);
  return true;
}

void Leadership::Release() {
  if (deadline_ns_.exchange(0) == 0) return;
  (void)db_->Exec(
      "UPDATE fabricctl_leader SET expires = '-infinity' WHERE id = 1 AND holder = ?1 AND epoch = "
      "?2",
      {holder_, epoch_});
}

bool Leadership::Acting() const {
  const int64_t deadline = deadline_ns_.load();
  return deadline != 0 && Clock::now().time_since_epoch().count() < deadline;
}

absl::StatusOr<std::unique_ptr<Leadership>> WaitToLead(const std::string& url,
                                                       const std::string& password,
                                                       Leadership::Options options) {
  auto log = Logger("controller");
  std::unique_ptr<Leadership> leadership;
  bool waited = false;
  std::string failing;  // the last reason the lease could not be asked for, logged once
  for (;;) {
    absl::Status asked;
    if (leadership == nullptr) {
      auto connected = Leadership::Connect(url, password, options);
      if (connected.ok()) {
        leadership = *std::move(connected);
      } else if (absl::IsFailedPrecondition(connected.status()) ||
                 absl::IsInvalidArgument(connected.status())) {
        return connected
            .status();  // a squatted table, a URL that is not PostgreSQL's: no use asking again
      } else {
        asked = connected.status();
      }
    }
    if (leadership != nullptr) {
      const absl::StatusOr<bool> held = leadership->TryAcquire();
      if (held.ok() && *held) break;
      if (!held.ok()) asked = held.status();
    }
    if (!asked.ok()) {
      // PostgreSQL restarting, this host cut off: a standby keeps asking.
      if (std::string(asked.message()) != failing) {
        log->warn("standby: cannot ask for the lease: {}; asking again every second",
                  std::string(asked.message()));
      }
    } else if (!waited || !failing.empty()) {
      log->info(
          "standby: another controller is active on database {}; taking over when its lease ends",
          Database::Describe(url));
    }
    failing = asked.ok() ? "" : std::string(asked.message());
    if (!waited) {
      NotifyReady("standby: waiting for the database's lease");
      waited = true;
    }
    PingWatchdog();  // a standby is healthy while it waits
    if (const std::string signal = WaitForStopSignal(absl::Seconds(1)); !signal.empty()) {
      log->info("{}: stopped while standby", signal);
      return std::unique_ptr<Leadership>();
    }
  }
  log->info(
      waited ? "the active controller is gone: took the lease over ({})" : "took the lease ({})",
      leadership->holder());
  return leadership;
}

LeadershipWatch::LeadershipWatch(Leadership* leadership) : leadership_(leadership) {
  if (leadership == nullptr) return;
  renew_ = std::thread([this] {
    while (!done_.load() && !lost_.load()) {
      const absl::Time next = absl::Now() + leadership_->renew_every();
      while (!done_.load() && absl::Now() < next) absl::SleepFor(absl::Milliseconds(100));
      if (done_.load() || lost_.load()) return;
      if (!leadership_->Renew())
        Lose(
            "the lease could not be renewed (the database is unreachable, or another controller "
            "took it)");
    }
  });
  // A renewal can hang where the network is cut: the deadline is watched apart from it.
  watch_ = std::thread([this] {
    while (!done_.load() && !lost_.load()) {
      if (!leadership_->Acting()) Lose("the lease was not renewed in time");
      absl::SleepFor(absl::Milliseconds(100));
    }
  });
}

void LeadershipWatch::Lose(const char* why) {
  if (lost_.exchange(true)) return;
  Logger("controller")->error("lost the lease: {}: stopping at once, a standby may be active", why);
  ::kill(::getpid(), SIGTERM);
}

LeadershipWatch::~LeadershipWatch() {
  done_ = true;
  if (watch_.joinable()) watch_.join();
  // A renewal in flight ends within the connection's own bounds (statement and TCP timeouts).
  if (renew_.joinable()) renew_.join();
  if (leadership_ != nullptr && !lost_.load()) leadership_->Release();
}

}  // namespace fabricctl::controller
