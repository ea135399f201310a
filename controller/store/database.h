#ifndef FABRICCTL_CONTROLLER_STORE_DATABASE_H_
#define FABRICCTL_CONTROLLER_STORE_DATABASE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace fabricctl::controller {

// The SQL the Store speaks, over SQLite (the default, embedded) or PostgreSQL (a site that
// outgrows one machine, or runs a standby controller). Statements are written once, in the SQL
// both accept, with parameters numbered ?1, ?2... (PostgreSQL's $1, $2... are made from them);
// each backend runs them and hands rows back as bytes. Not thread-safe: the Store serialises.
class Database {
 public:
  enum class Dialect { kSqlite, kPostgres };
  // A parameter: an integer, text, or bytes (a serialised message).
  struct Bytes {
    std::string data;
  };
  using Value = std::variant<int64_t, std::string, Bytes>;
  // A row's columns, NULL as nullopt; integers as their decimal text, bytes as they are.
  using Row = std::vector<std::optional<std::string>>;

  // `where` is a PostgreSQL connection URL (postgresql://, postgres://) or an SQLite file.
  static bool IsPostgres(const std::string& where);
  // `where` for a message or a log: a URL's password left out (user:PASSWORD@, or the
  // password= and sslpassword= parameters).
  static std::string Describe(const std::string& where);
  // `message` with any password of `where` in it replaced (libpq may repeat the URL).
  static std::string Scrub(const std::string& where, std::string message);
  // `password`, when not empty, is PostgreSQL's (read from a file by the caller, never taken
  // from the command line).
  static absl::StatusOr<std::unique_ptr<Database>> Open(const std::string& where,
                                                        const std::string& password = "");
  // Why `where` may not be given on a command line: it carries a password (user:PASSWORD@, or
  // password=), which any local user can read in the process list. OK otherwise.
  static absl::Status RefuseInlinePassword(const std::string& where, const std::string& flag);
  virtual ~Database() = default;

  virtual Dialect dialect() const = 0;
  // Rows of a query.
  virtual absl::StatusOr<std::vector<Row>> Query(const std::string& sql,
                                                 const std::vector<Value>& params) = 0;
  // A statement; returns how many rows it changed.
  virtual absl::StatusOr<int64_t> Exec(const std::string& sql,
                                       const std::vector<Value>& params = {}) = 0;
  // Several statements without parameters (a migration).
  virtual absl::Status Script(const std::string& sql) = 0;
  // How many of the schema's migrations this database has had; recorded by SetSchemaVersion
  // inside the migration's transaction.
  virtual absl::StatusOr<int> SchemaVersion() = 0;
  virtual absl::Status SetSchemaVersion(int version) = 0;
  // Serialises migrations between controllers that start at once on one database (PostgreSQL;
  // SQLite's file lock does it already). Inside the migration's transaction, and only when a
  // migration is due: a lock on the schema-version table, which only a role with rights on it
  // can take (never an advisory key, which any login can hold), waiting at most a while.
  virtual absl::Status LockForMigration() { return absl::OkStatus(); }
  // Refuses a database where an object the controller uses (`relations`: tables and their
  // sequences) belongs to another role, naming it and its owner: whoever owns a table can
  // write rows no sweep measured into it (PostgreSQL; a SQLite file is the process's own).
  virtual absl::Status CheckOwnership(const std::vector<std::string>& relations) {
    return absl::OkStatus();
  }
};

// A column read as an integer (0 for NULL or unparsable text).
int64_t ColumnInt(const Database::Row& row, size_t i);

// Runs `body` in a transaction: committed when it succeeds, rolled back otherwise.
template <typename Body>
absl::Status InTransaction(Database& db, Body body) {
  if (absl::Status begun = db.Script("BEGIN"); !begun.ok()) return begun;
  absl::Status s = body();
  if (s.ok()) s = db.Script("COMMIT");
  if (!s.ok()) db.Script("ROLLBACK").IgnoreError();
  return s;
}

}  // namespace fabricctl::controller

#endif  // FABRICCTL_CONTROLLER_STORE_DATABASE_H_
