#include "controller/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace fabricctl::controller {
namespace {

constexpr int kSchemaVersion = 2;

// Schema migrations, applied in order; PRAGMA user_version records how many ran.
constexpr const char* kMigrations[] = {
    R"sql(
CREATE TABLE nodes (
  name        TEXT PRIMARY KEY,
  inventory   BLOB NOT NULL,        -- fabricctl.v1.NodeInventory, serialised
  first_seen  INTEGER NOT NULL,     -- microseconds since the Unix epoch
  last_seen   INTEGER NOT NULL
);
)sql",
    R"sql(
CREATE TABLE sweeps (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  state      INTEGER NOT NULL,      -- fabricctl.v1.SweepState
  started    INTEGER NOT NULL,      -- microseconds since the Unix epoch
  finished   INTEGER,
  request    BLOB NOT NULL,         -- fabricctl.v1.SweepRequest
  report     BLOB                   -- fabricctl.v1.Report, once finished
);
CREATE TABLE results (
  sweep_id   INTEGER NOT NULL REFERENCES sweeps(id),
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  round      INTEGER NOT NULL,
  attempt    INTEGER NOT NULL,
  node       TEXT NOT NULL,
  peer       TEXT NOT NULL,
  kind       INTEGER NOT NULL,
  result     BLOB NOT NULL          -- fabricctl.v1.ProbeResult
);
CREATE INDEX results_by_sweep ON results(sweep_id);
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion);

absl::Status SqliteError(sqlite3* db, const std::string& what) {
  return absl::InternalError(absl::StrCat("sqlite: ", what, ": ", sqlite3_errmsg(db)));
}

// Owns one prepared statement.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  absl::Status status(const std::string& what) const {
    return rc_ == SQLITE_OK ? absl::OkStatus() : SqliteError(db_, what);
  }
  sqlite3_stmt* get() { return stmt_; }
  void BindText(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  void BindBlob(int i, const std::string& s) {
    sqlite3_bind_blob(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  void BindInt64(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  std::string ColumnBlob(int i) {
    const void* data = sqlite3_column_blob(stmt_, i);
    return std::string(static_cast<const char*>(data), sqlite3_column_bytes(stmt_, i));
  }
  int64_t ColumnInt64(int i) { return sqlite3_column_int64(stmt_, i); }
  bool ColumnIsNull(int i) { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                           nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return absl::InvalidArgumentError(
        absl::StrCat("--db: cannot open '", path, "': ", message));
  }
  std::unique_ptr<Store> store(new Store(db));
  sqlite3_busy_timeout(db, 5000);
  // WAL: readers do not block the writer, and a crash loses no committed transaction.
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL",
                             "PRAGMA foreign_keys=ON"}) {
    if (auto s = store->Exec(pragma); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--db '", path, "': ", s.message()));
    }
  }
  // A damaged database is refused at start, with SQLite's own words, rather than used and
  // found out mid-sweep (quick_check: the structure, without the slower index cross-checks).
  {
    Statement q(db, "PRAGMA quick_check");
    if (auto s = q.status("check the database"); !s.ok()) {
      return absl::DataLossError(absl::StrCat("--db '", path, "': ", s.message()));
    }
    std::string verdict;
    int step;
    while ((step = q.Step()) == SQLITE_ROW && verdict.size() < 512) {
      if (!verdict.empty()) verdict += "; ";
      verdict += q.ColumnBlob(0);
    }
    if (step != SQLITE_ROW && step != SQLITE_DONE) {
      return absl::DataLossError(absl::StrCat("--db '", path, "': integrity check failed: ",
                                              sqlite3_errmsg(db), " (restore it, or move it away to start afresh)"));
    }
    if (verdict != "ok") {
      return absl::DataLossError(absl::StrCat("--db '", path, "': integrity check failed: ", verdict,
                                              " (restore it, or move it away to start afresh)"));
    }
  }
  int version = 0;
  {
    Statement q(db, "PRAGMA user_version");
    RETURN_IF_ERROR(q.status("read schema version"));
    if (q.Step() == SQLITE_ROW) version = static_cast<int>(q.ColumnInt64(0));
  }
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("--db '", path, "': schema version ", version,
                     " is newer than this controller's ", kSchemaVersion));
  }
  for (int v = version; v < kSchemaVersion; ++v) {
    std::string sql = absl::StrCat("BEGIN;", kMigrations[v], "PRAGMA user_version=", v + 1,
                                   ";COMMIT;");
    if (auto s = store->Exec(sql.c_str()); !s.ok()) {
      store->Exec("ROLLBACK").IgnoreError();
      return s;
    }
  }
  return store;
}

Store::~Store() { sqlite3_close(db_); }

absl::Status Store::Exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    return absl::InternalError(absl::StrCat("sqlite: ", message));
  }
  return absl::OkStatus();
}

absl::Status Store::UpsertNode(const v1::NodeInventory& inventory, absl::Time now) {
  MutexLock lock(&mu_);
  Statement q(db_,
              "INSERT INTO nodes(name, inventory, first_seen, last_seen) VALUES(?1, ?2, ?3, ?3) "
              "ON CONFLICT(name) DO UPDATE SET inventory=excluded.inventory, "
              "last_seen=excluded.last_seen");
  RETURN_IF_ERROR(q.status("prepare node upsert"));
  q.BindText(1, inventory.node_name());
  q.BindBlob(2, inventory.SerializeAsString());
  q.BindInt64(3, absl::ToUnixMicros(now));
  if (q.Step() != SQLITE_DONE) return SqliteError(db_, "upsert node");
  return absl::OkStatus();
}

absl::StatusOr<bool> Store::TouchNode(const std::string& name, absl::Time now) {
  MutexLock lock(&mu_);
  Statement q(db_, "UPDATE nodes SET last_seen=?2 WHERE name=?1");
  RETURN_IF_ERROR(q.status("prepare heartbeat"));
  q.BindText(1, name);
  q.BindInt64(2, absl::ToUnixMicros(now));
  if (q.Step() != SQLITE_DONE) return SqliteError(db_, "record heartbeat");
  return sqlite3_changes(db_) > 0;
}

absl::StatusOr<std::vector<std::string>> Store::RemoveNodes(const std::vector<std::string>& names) {
  MutexLock lock(&mu_);
  std::vector<std::string> removed;
  for (const std::string& name : names) {
    Statement q(db_, "DELETE FROM nodes WHERE name=?1");
    RETURN_IF_ERROR(q.status("prepare node removal"));
    q.BindText(1, name);
    if (q.Step() != SQLITE_DONE) return SqliteError(db_, "remove node");
    if (sqlite3_changes(db_) > 0) removed.push_back(name);
  }
  return removed;
}

absl::StatusOr<std::vector<std::string>> Store::ForgetNodesSeenBefore(absl::Time cutoff) {
  MutexLock lock(&mu_);
  std::vector<std::string> names;
  {
    Statement q(db_, "SELECT name FROM nodes WHERE last_seen < ?1 ORDER BY name");
    RETURN_IF_ERROR(q.status("prepare expired nodes"));
    q.BindInt64(1, absl::ToUnixMicros(cutoff));
    int rc;
    while ((rc = q.Step()) == SQLITE_ROW) names.push_back(q.ColumnBlob(0));
    if (rc != SQLITE_DONE) return SqliteError(db_, "list expired nodes");
  }
  if (names.empty()) return names;
  Statement d(db_, "DELETE FROM nodes WHERE last_seen < ?1");
  RETURN_IF_ERROR(d.status("prepare node expiry"));
  d.BindInt64(1, absl::ToUnixMicros(cutoff));
  if (d.Step() != SQLITE_DONE) return SqliteError(db_, "expire nodes");
  return names;
}

absl::StatusOr<std::vector<StoredNode>> Store::ListNodes(
    const std::vector<std::string>& names) const {
  // A set, filled before the lock: the filter costs a lookup a node, and a node not asked for
  // is not parsed.
  const std::set<std::string> wanted(names.begin(), names.end());
  MutexLock lock(&mu_);
  Statement q(db_, "SELECT name, inventory, first_seen, last_seen FROM nodes ORDER BY name");
  RETURN_IF_ERROR(q.status("prepare node list"));
  std::vector<StoredNode> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    if (!wanted.empty() && wanted.count(q.ColumnBlob(0)) == 0) continue;
    StoredNode node;
    if (!node.inventory.ParseFromString(q.ColumnBlob(1))) {
      return absl::DataLossError("sqlite: a stored node inventory does not parse");
    }
    node.first_seen = absl::FromUnixMicros(q.ColumnInt64(2));
    node.last_seen = absl::FromUnixMicros(q.ColumnInt64(3));
    out.push_back(std::move(node));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, "list nodes");
  return out;
}

namespace {

google::protobuf::Timestamp Timestamp(int64_t micros) {
  google::protobuf::Timestamp t;
  t.set_seconds(micros / 1000000);
  t.set_nanos(static_cast<int32_t>(micros % 1000000) * 1000);
  return t;
}

}  // namespace

absl::StatusOr<int64_t> Store::CreateSweep(const v1::SweepRequest& request, absl::Time now) {
  MutexLock lock(&mu_);
  Statement q(db_, "INSERT INTO sweeps(state, started, request) VALUES(?1, ?2, ?3)");
  RETURN_IF_ERROR(q.status("prepare sweep insert"));
  q.BindInt64(1, v1::SWEEP_RUNNING);
  q.BindInt64(2, absl::ToUnixMicros(now));
  q.BindBlob(3, request.SerializeAsString());
  if (q.Step() != SQLITE_DONE) return SqliteError(db_, "insert sweep");
  return sqlite3_last_insert_rowid(db_);
}

absl::Status Store::InsertResult(int64_t sweep_id, uint32_t round, uint32_t attempt,
                                 const v1::ProbeResult& result) {
  MutexLock lock(&mu_);
  Statement q(db_,
              "INSERT INTO results(sweep_id, round, attempt, node, peer, kind, result) "
              "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  RETURN_IF_ERROR(q.status("prepare result insert"));
  q.BindInt64(1, sweep_id);
  q.BindInt64(2, round);
  q.BindInt64(3, attempt);
  q.BindText(4, result.node());
  q.BindText(5, result.peer());
  q.BindInt64(6, result.kind());
  q.BindBlob(7, result.SerializeAsString());
  if (q.Step() != SQLITE_DONE) return SqliteError(db_, "insert result");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::ProbeResult>> Store::ListResults(int64_t sweep_id) const {
  MutexLock lock(&mu_);
  Statement q(db_, "SELECT result FROM results WHERE sweep_id=?1 ORDER BY seq");
  RETURN_IF_ERROR(q.status("prepare result list"));
  q.BindInt64(1, sweep_id);
  std::vector<v1::ProbeResult> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    v1::ProbeResult result;
    if (!result.ParseFromString(q.ColumnBlob(0))) {
      return absl::DataLossError("sqlite: a stored probe result does not parse");
    }
    out.push_back(std::move(result));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, "list results");
  return out;
}

absl::Status Store::FinishSweep(int64_t sweep_id, const v1::Report& report) {
  MutexLock lock(&mu_);
  Statement q(db_, "UPDATE sweeps SET state=?2, finished=?3, report=?4 WHERE id=?1");
  RETURN_IF_ERROR(q.status("prepare sweep update"));
  q.BindInt64(1, sweep_id);
  q.BindInt64(2, report.sweep().state());
  const auto& f = report.sweep().finished();
  q.BindInt64(3, f.seconds() * 1000000 + f.nanos() / 1000);
  q.BindBlob(4, report.SerializeAsString());
  if (q.Step() != SQLITE_DONE) return SqliteError(db_, "finish sweep");
  return absl::OkStatus();
}

absl::StatusOr<v1::Report> Store::GetReport(int64_t sweep_id) const {
  MutexLock lock(&mu_);
  Statement q(db_, sweep_id == 0
                       ? "SELECT report FROM sweeps WHERE report IS NOT NULL ORDER BY id DESC LIMIT 1"
                       : "SELECT report FROM sweeps WHERE id=?1 AND report IS NOT NULL");
  RETURN_IF_ERROR(q.status("prepare report query"));
  if (sweep_id != 0) q.BindInt64(1, sweep_id);
  int rc = q.Step();
  if (rc == SQLITE_DONE) {
    return absl::NotFoundError(sweep_id == 0 ? std::string("no finished sweep yet")
                                             : absl::StrCat("no finished sweep ", sweep_id));
  }
  if (rc != SQLITE_ROW) return SqliteError(db_, "read report");
  v1::Report report;
  if (!report.ParseFromString(q.ColumnBlob(0))) {
    return absl::DataLossError("sqlite: a stored report does not parse");
  }
  return report;
}

absl::StatusOr<std::vector<v1::SweepInfo>> Store::ListSweeps(uint32_t limit,
                                                             int64_t before_id) const {
  MutexLock lock(&mu_);
  Statement q(db_, "SELECT id, state, started, finished, request, report FROM sweeps "
                   "WHERE ?2 = 0 OR id < ?2 ORDER BY id DESC LIMIT ?1");
  RETURN_IF_ERROR(q.status("prepare sweep list"));
  q.BindInt64(1, limit);
  q.BindInt64(2, before_id);
  std::vector<v1::SweepInfo> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    v1::SweepInfo info;
    v1::Report report;
    if (!q.ColumnIsNull(5) && report.ParseFromString(q.ColumnBlob(5))) info = report.sweep();
    info.set_sweep_id(q.ColumnInt64(0));
    info.set_state(static_cast<v1::SweepState>(q.ColumnInt64(1)));
    *info.mutable_started() = Timestamp(q.ColumnInt64(2));
    if (!q.ColumnIsNull(3)) *info.mutable_finished() = Timestamp(q.ColumnInt64(3));
    if (info.nodes_size() == 0) {
      v1::SweepRequest request;
      if (request.ParseFromString(q.ColumnBlob(4))) {
        *info.mutable_nodes() = request.nodes();
        info.set_pairing(request.pairing());
      }
    }
    out.push_back(std::move(info));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, "list sweeps");
  return out;
}

absl::StatusOr<std::vector<int64_t>> Store::FinishedSweepIdsAfter(int64_t after,
                                                                  uint32_t limit, Take take) const {
  MutexLock lock(&mu_);
  Statement q(db_, take == Take::kNewest
                       ? "SELECT id FROM sweeps WHERE id > ?1 AND report IS NOT NULL "
                         "ORDER BY id DESC LIMIT ?2"
                       : "SELECT id FROM sweeps WHERE id > ?1 AND report IS NOT NULL "
                         "ORDER BY id ASC LIMIT ?2");
  RETURN_IF_ERROR(q.status("prepare finished sweep ids"));
  q.BindInt64(1, after);
  q.BindInt64(2, limit);
  std::vector<int64_t> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) out.push_back(q.ColumnInt64(0));
  if (rc != SQLITE_DONE) return SqliteError(db_, "list finished sweep ids");
  if (take == Take::kNewest) std::reverse(out.begin(), out.end());
  return out;
}

absl::StatusOr<int> Store::MarkRunningInterrupted(absl::Time now) {
  MutexLock lock(&mu_);
  Statement q(db_, "UPDATE sweeps SET state=?1, finished=?2 WHERE state=?3");
  RETURN_IF_ERROR(q.status("prepare interrupt"));
  q.BindInt64(1, v1::SWEEP_INTERRUPTED);
  q.BindInt64(2, absl::ToUnixMicros(now));
  q.BindInt64(3, v1::SWEEP_RUNNING);
  if (q.Step() != SQLITE_DONE) return SqliteError(db_, "mark interrupted sweeps");
  return sqlite3_changes(db_);
}

absl::StatusOr<Store::Pruned> Store::PruneSweeps(absl::Time started_before, uint32_t keep_newest) {
  MutexLock lock(&mu_);
  // A finished (or interrupted) sweep that started before the cutoff, or is older than the
  // newest `keep_newest` (LIMIT -1: no limit); never the running one.
  const char* which =
      " IN (SELECT id FROM sweeps WHERE state != ?1 AND (started < ?2 OR id NOT IN "
      "(SELECT id FROM sweeps ORDER BY id DESC LIMIT ?3)))";
  RETURN_IF_ERROR(Exec("BEGIN"));
  Pruned pruned;
  for (const char* table : {"results WHERE sweep_id", "sweeps WHERE id"}) {
    const std::string sql = absl::StrCat("DELETE FROM ", table, which);
    Statement q(db_, sql.c_str());
    absl::Status s = q.status("prepare prune");
    if (s.ok()) {
      q.BindInt64(1, v1::SWEEP_RUNNING);
      q.BindInt64(2, absl::ToUnixMicros(started_before));
      q.BindInt64(3, keep_newest == 0 ? -1 : static_cast<int64_t>(keep_newest));
      if (q.Step() != SQLITE_DONE) s = SqliteError(db_, "prune history");
    }
    if (!s.ok()) {
      Exec("ROLLBACK").IgnoreError();
      return s;
    }
    (table[0] == 'r' ? pruned.results : pruned.sweeps) = sqlite3_changes(db_);
  }
  RETURN_IF_ERROR(Exec("COMMIT"));
  return pruned;
}

}  // namespace fabricctl::controller
