#include "controller/store.h"

#include <sqlite3.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace fabricctl::controller {
namespace {

constexpr int kSchemaVersion = 1;

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
  int version = 0;
  {
    Statement q(db, "PRAGMA user_version");
    if (auto s = q.status("read schema version"); !s.ok()) return s;
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
  std::lock_guard<std::mutex> lock(mu_);
  Statement q(db_,
              "INSERT INTO nodes(name, inventory, first_seen, last_seen) VALUES(?1, ?2, ?3, ?3) "
              "ON CONFLICT(name) DO UPDATE SET inventory=excluded.inventory, "
              "last_seen=excluded.last_seen");
  if (auto s = q.status("prepare node upsert"); !s.ok()) return s;
  q.BindText(1, inventory.node_name());
  q.BindBlob(2, inventory.SerializeAsString());
  q.BindInt64(3, absl::ToUnixMicros(now));
  if (q.Step() != SQLITE_DONE) return SqliteError(db_, "upsert node");
  return absl::OkStatus();
}

absl::StatusOr<bool> Store::TouchNode(const std::string& name, absl::Time now) {
  std::lock_guard<std::mutex> lock(mu_);
  Statement q(db_, "UPDATE nodes SET last_seen=?2 WHERE name=?1");
  if (auto s = q.status("prepare heartbeat"); !s.ok()) return s;
  q.BindText(1, name);
  q.BindInt64(2, absl::ToUnixMicros(now));
  if (q.Step() != SQLITE_DONE) return SqliteError(db_, "record heartbeat");
  return sqlite3_changes(db_) > 0;
}

absl::StatusOr<std::vector<StoredNode>> Store::ListNodes(
    const std::vector<std::string>& names) const {
  std::lock_guard<std::mutex> lock(mu_);
  Statement q(db_, "SELECT inventory, first_seen, last_seen FROM nodes ORDER BY name");
  if (auto s = q.status("prepare node list"); !s.ok()) return s;
  std::vector<StoredNode> out;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    StoredNode node;
    if (!node.inventory.ParseFromString(q.ColumnBlob(0))) {
      return absl::DataLossError("sqlite: a stored node inventory does not parse");
    }
    if (!names.empty() &&
        std::find(names.begin(), names.end(), node.inventory.node_name()) == names.end()) {
      continue;
    }
    node.first_seen = absl::FromUnixMicros(q.ColumnInt64(1));
    node.last_seen = absl::FromUnixMicros(q.ColumnInt64(2));
    out.push_back(std::move(node));
  }
  if (rc != SQLITE_DONE) return SqliteError(db_, "list nodes");
  return out;
}

}  // namespace fabricctl::controller
