// The SQLite backend of Database: one connection to a file in WAL mode.
#include <sqlite3.h>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "controller/store/database.h"
#include "controller/store/database_backends.h"

namespace fabricctl::controller {
namespace {

absl::Status SqliteError(sqlite3* db, const std::string& what) {
  return absl::InternalError(absl::StrCat("sqlite: ", what, ": ", sqlite3_errmsg(db)));
}

// Owns one prepared statement.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  absl::Status Prepared() const {
    return rc_ == SQLITE_OK ? absl::OkStatus() : SqliteError(db_, "prepare");
  }
  void Bind(const std::vector<Database::Value>& params) {
    for (size_t i = 0; i < params.size(); ++i) {
      const int at = static_cast<int>(i + 1);
      if (const auto* n = std::get_if<int64_t>(&params[i])) {
        sqlite3_bind_int64(stmt_, at, *n);
      } else if (const auto* text = std::get_if<std::string>(&params[i])) {
        sqlite3_bind_text(stmt_, at, text->data(), static_cast<int>(text->size()),
                          SQLITE_TRANSIENT);
      } else {
        const std::string& bytes = std::get<Database::Bytes>(params[i]).data;
        sqlite3_bind_blob(stmt_, at, bytes.data(), static_cast<int>(bytes.size()),
                          SQLITE_TRANSIENT);
      }
    }
  }
  int Step() { return sqlite3_step(stmt_); }
  Database::Row Read() {
    Database::Row row;
    const int n = sqlite3_column_count(stmt_);
    for (int i = 0; i < n; ++i) {
      if (sqlite3_column_type(stmt_, i) == SQLITE_NULL) {
        row.emplace_back();
        continue;
      }
      // Integers as their decimal text; text and blobs as their bytes.
      const void* data = sqlite3_column_type(stmt_, i) == SQLITE_BLOB
                             ? sqlite3_column_blob(stmt_, i)
                             : static_cast<const void*>(sqlite3_column_text(stmt_, i));
      row.emplace_back(std::string(static_cast<const char*>(data), sqlite3_column_bytes(stmt_, i)));
    }
    return row;
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

class SqliteDatabase : public Database {
 public:
  explicit SqliteDatabase(sqlite3* db) : db_(db) {}
  ~SqliteDatabase() override { sqlite3_close(db_); }

  Dialect dialect() const override { return Dialect::kSqlite; }

  absl::StatusOr<std::vector<Row>> Query(const std::string& sql,
                                         const std::vector<Value>& params) override {
    Statement q(db_, sql);
    RETURN_IF_ERROR(q.Prepared());
    q.Bind(params);
    std::vector<Row> rows;
    int rc;
    while ((rc = q.Step()) == SQLITE_ROW) rows.push_back(q.Read());
    if (rc != SQLITE_DONE) return SqliteError(db_, "query");
    return rows;
  }

  absl::StatusOr<int64_t> Exec(const std::string& sql, const std::vector<Value>& params) override {
    Statement q(db_, sql);
    RETURN_IF_ERROR(q.Prepared());
    q.Bind(params);
    int rc;
    while ((rc = q.Step()) == SQLITE_ROW) {
    }
    if (rc != SQLITE_DONE) return SqliteError(db_, "statement");
    return sqlite3_changes(db_);
  }

  absl::Status Script(const std::string& sql) override {
    char* error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      std::string message = error ? error : "unknown error";
      sqlite3_free(error);
      return absl::InternalError(absl::StrCat("sqlite: ", message));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int> SchemaVersion() override {
    ASSIGN_OR_RETURN(auto rows, Query("PRAGMA user_version", {}));
    return rows.empty() ? 0 : static_cast<int>(ColumnInt(rows[0], 0));
  }
  absl::Status SetSchemaVersion(int version) override {
    return Script(absl::StrCat("PRAGMA user_version=", version));
  }

  // WAL (readers do not block the writer; a crash loses no committed transaction), and a
  // damaged file refused at start with SQLite's own words rather than found out mid-sweep
  // (quick_check: the structure, without the slower index cross-checks).
  absl::Status Prepare(const std::string& path) {
    sqlite3_busy_timeout(db_, 5000);
    for (const char* pragma :
         {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"}) {
      if (auto s = Script(pragma); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--db '", path, "': ", s.message()));
      }
    }
    auto check = Query("PRAGMA quick_check", {});
    if (!check.ok()) {
      return absl::DataLossError(
          absl::StrCat("--db '", path, "': integrity check failed: ", check.status().message(),
                       " (restore it, or move it away to start afresh)"));
    }
    std::string verdict;
    for (const Row& row : *check) {
      if (verdict.size() >= 512) break;
      if (!verdict.empty()) verdict += "; ";
      verdict += row.empty() || !row[0] ? "" : *row[0];
    }
    if (verdict != "ok") {
      return absl::DataLossError(absl::StrCat("--db '", path,
                                              "': integrity check failed: ", verdict,
                                              " (restore it, or move it away to start afresh)"));
    }
    return absl::OkStatus();
  }

 private:
  sqlite3* const db_;  // owned
};

}  // namespace

absl::StatusOr<std::unique_ptr<Database>> OpenSqlite(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return absl::InvalidArgumentError(absl::StrCat("--db: cannot open '", path, "': ", message));
  }
  auto database = std::make_unique<SqliteDatabase>(db);
  RETURN_IF_ERROR(database->Prepare(path));
  return database;
}

}  // namespace fabricctl::controller
