// The PostgreSQL backend of Database (libpq): one connection, parameters typed and sent apart
// from the statement, bytes sent and read as bytea.
#include <postgresql/libpq-fe.h>

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "controller/store/database.h"
#include "controller/store/database_backends.h"

namespace fabricctl::controller {
namespace {

// PostgreSQL's type ids (pg_type.oid) of the parameters' types.
constexpr Oid kInt8 = 20, kText = 25, kBytea = 17;

// ?1, ?2... as $1, $2... (the statements hold no question mark in a string).
std::string Numbered(const std::string& sql) {
  std::string out = sql;
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i] == '?' && std::isdigit(static_cast<unsigned char>(out[i + 1]))) out[i] = '$';
  }
  return out;
}

// Frees a result when it goes.
struct Result {
  explicit Result(PGresult* r) : res(r) {}
  ~Result() { PQclear(res); }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  PGresult* const res;
};

std::string Message(PGconn* conn) {
  std::string m = PQerrorMessage(conn);
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

class PostgresDatabase : public Database {
 public:
  explicit PostgresDatabase(PGconn* conn) : conn_(conn) {}
  ~PostgresDatabase() override { PQfinish(conn_); }

  Dialect dialect() const override { return Dialect::kPostgres; }

  absl::StatusOr<std::vector<Row>> Query(const std::string& sql,
                                         const std::vector<Value>& params) override {
    ASSIGN_OR_RETURN(auto res, Run(sql, params));
    std::vector<Row> rows;
    const int n = PQntuples(res->res), fields = PQnfields(res->res);
    rows.reserve(n);
    for (int r = 0; r < n; ++r) {
      Row row;
      for (int f = 0; f < fields; ++f) {
        if (PQgetisnull(res->res, r, f)) {
          row.emplace_back();
          continue;
        }
        const char* text = PQgetvalue(res->res, r, f);
        if (PQftype(res->res, f) != kBytea) {
          row.emplace_back(std::string(text, PQgetlength(res->res, r, f)));
          continue;
        }
        size_t length = 0;
        unsigned char* bytes =
            PQunescapeBytea(reinterpret_cast<const unsigned char*>(text), &length);
        if (bytes == nullptr)
          return absl::ResourceExhaustedError("postgresql: cannot decode a bytea value");
        row.emplace_back(std::string(reinterpret_cast<char*>(bytes), length));
        PQfreemem(bytes);
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  absl::StatusOr<int64_t> Exec(const std::string& sql, const std::vector<Value>& params) override {
    ASSIGN_OR_RETURN(auto res, Run(sql, params));
    const char* changed = PQcmdTuples(res->res);
    return changed == nullptr || *changed == '\0' ? 0 : std::stoll(changed);
  }

  absl::Status Script(const std::string& sql) override {
    RETURN_IF_ERROR(Connected());
    Result res(PQexec(conn_, sql.c_str()));
    const ExecStatusType status = PQresultStatus(res.res);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      return absl::InternalError(absl::StrCat("postgresql: ", Message(conn_)));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int> SchemaVersion() override {
    // Two controllers starting at once may race to create it: the loser finds it made.
    constexpr char kCreate[] =
        "CREATE TABLE IF NOT EXISTS fabricctl_schema (version INTEGER NOT NULL)";
    if (!Script(kCreate).ok()) RETURN_IF_ERROR(Script(kCreate));
    ASSIGN_OR_RETURN(auto rows,
                     Query("SELECT COALESCE(MAX(version), 0) FROM fabricctl_schema", {}));
    return rows.empty() ? 0 : static_cast<int>(ColumnInt(rows[0], 0));
  }
  absl::Status SetSchemaVersion(int version) override {
    RETURN_IF_ERROR(Exec("DELETE FROM fabricctl_schema", {}).status());
    return Exec("INSERT INTO fabricctl_schema(version) VALUES(?1)", {int64_t{version}}).status();
  }
  absl::Status LockForMigration() override {
    // A lock on a table the controller's role owns (CheckOwnership): LOCK TABLE in this mode
    // needs UPDATE, DELETE or TRUNCATE on it, which no stranger has, and a reader's lock does
    // not conflict with it. A holder that keeps it longer than lock_timeout fails the start
    // with its word, never a silent wait.
    RETURN_IF_ERROR(Exec("SET LOCAL lock_timeout = '20s'", {}).status());
    return Exec("LOCK TABLE fabricctl_schema IN SHARE ROW EXCLUSIVE MODE", {}).status();
  }
  absl::Status CheckOwnership(const std::vector<std::string>& relations) override {
    std::string names;
    for (const std::string& r : relations) absl::StrAppend(&names, names.empty() ? "" : ",", r);
    ASSIGN_OR_RETURN(
        auto rows,
        Query("SELECT c.relname::text, pg_get_userbyid(c.relowner)::text FROM pg_class c "
              "JOIN pg_namespace n ON n.oid = c.relnamespace "
              "WHERE n.nspname = current_schema() AND c.relname = ANY(string_to_array(?1, ',')) "
              "AND c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = current_user) "
              "ORDER BY c.relname",
              {names}));
    if (rows.empty()) return absl::OkStatus();
    std::vector<std::string> foreign;
    for (const auto& row : rows) {
      foreign.push_back(absl::StrCat(row.size() > 0 && row[0] ? *row[0] : "?", " (owner '",
                                     row.size() > 1 && row[1] ? *row[1] : "?", "')"));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "--db: ", absl::StrJoin(foreign, ", "),
        " belong(s) to another role than this controller's: whoever owns a table can write "
        "rows no sweep measured into it; drop them, or give the controllers a database or "
        "schema of their own (and REVOKE CREATE ON SCHEMA public FROM PUBLIC)"));
  }

 private:
  // A dropped connection (the server restarted) is opened again once before a statement.
  absl::Status Connected() {
    if (PQstatus(conn_) == CONNECTION_OK) return absl::OkStatus();
    PQreset(conn_);
    if (PQstatus(conn_) == CONNECTION_OK) return absl::OkStatus();
    return absl::UnavailableError(absl::StrCat("postgresql: connection lost: ", Message(conn_)));
  }

  absl::StatusOr<std::unique_ptr<Result>> Run(const std::string& sql,
                                              const std::vector<Value>& params) {
    RETURN_IF_ERROR(Connected());
    std::vector<std::string> held(params.size());
    std::vector<const char*> values(params.size());
    std::vector<int> lengths(params.size()), formats(params.size());
    std::vector<Oid> types(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      if (const auto* n = std::get_if<int64_t>(&params[i])) {
        held[i] = absl::StrCat(*n);
        types[i] = kInt8;
      } else if (const auto* text = std::get_if<std::string>(&params[i])) {
        held[i] = *text;
        types[i] = kText;
      } else {
        held[i] = std::get<Bytes>(params[i]).data;
        types[i] = kBytea;
        formats[i] = 1;  // binary: the bytes as they are
      }
      values[i] = held[i].data();
      lengths[i] = static_cast<int>(held[i].size());
    }
    auto res = std::make_unique<Result>(PQexecParams(conn_, Numbered(sql).c_str(),
                                                     static_cast<int>(params.size()), types.data(),
                                                     values.data(), lengths.data(), formats.data(),
                                                     /*resultFormat=*/0));
    const ExecStatusType status = PQresultStatus(res->res);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      return absl::InternalError(absl::StrCat("postgresql: ", Message(conn_)));
    }
    return res;
  }

  PGconn* const conn_;  // owned
};

}  // namespace

absl::StatusOr<std::unique_ptr<Database>> OpenPostgres(const std::string& url,
                                                       const std::string& password) {
  // Bounds on a connection that goes quiet (a crashed host, a partition), on both ends: the
  // connect, TCP's keepalives and unacknowledged data here, and on the server the session's
  // own keepalives and user timeout (so that a vanished host's session, and what it holds,
  // goes within seconds rather than at the kernel's two hours), and any one statement. The
  // URL's own settings, given after these, win over them; a read-write server always (a hot
  // standby behind a multi-host URL or a pooler takes no leases and no writes), and the
  // password from --db-password-file when given.
  const char* keys[] = {"connect_timeout",
                        "keepalives",
                        "keepalives_idle",
                        "keepalives_interval",
                        "keepalives_count",
                        "tcp_user_timeout",
                        "options",
                        "dbname",
                        "target_session_attrs",
                        password.empty() ? nullptr : "password",
                        nullptr};
  const char* values[] = {
      "10",
      "1",
      "5",
      "2",
      "3",
      "10000",
      "-c statement_timeout=120000 -c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 "
      "-c tcp_keepalives_count=3 -c tcp_user_timeout=10000",
      url.c_str(),
      "read-write",
      password.empty() ? nullptr : password.c_str(),
      nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr)
    return absl::ResourceExhaustedError("postgresql: cannot allocate a connection");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = Database::Scrub(url, Message(conn));
    PQfinish(conn);
    return absl::UnavailableError(absl::StrCat("--db: cannot connect to PostgreSQL: ", message));
  }
  // Quiet notices ("relation already exists, skipping") stay out of the controller's log.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return std::make_unique<PostgresDatabase>(conn);
}

}  // namespace fabricctl::controller
