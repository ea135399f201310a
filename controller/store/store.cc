#include "controller/store/store.h"

#include <algorithm>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "controller/store/known_good.h"

namespace fabricctl::controller {
namespace {

using Value = Database::Value;
using Bytes = Database::Bytes;

// Schema migrations, applied in order, the same schema in each dialect; the database records
// how many ran (SQLite: PRAGMA user_version; PostgreSQL: the table fabricctl_schema).
struct Migration {
  const char* sqlite;
  const char* postgres;
};
constexpr Migration kMigrations[] = {
    {R"sql(
CREATE TABLE nodes (
  name        TEXT PRIMARY KEY,
  inventory   BLOB NOT NULL,        -- fabricctl.v1.NodeInventory, serialised
  first_seen  INTEGER NOT NULL,     -- microseconds since the Unix epoch
  last_seen   INTEGER NOT NULL
);
)sql",
     R"sql(
CREATE TABLE nodes (
  name        TEXT PRIMARY KEY,
  inventory   BYTEA NOT NULL,
  first_seen  BIGINT NOT NULL,
  last_seen   BIGINT NOT NULL
);
)sql"},
    {R"sql(
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
     R"sql(
CREATE TABLE sweeps (
  id         BIGSERIAL PRIMARY KEY,
  state      INTEGER NOT NULL,
  started    BIGINT NOT NULL,
  finished   BIGINT,
  request    BYTEA NOT NULL,
  report     BYTEA
);
CREATE TABLE results (
  sweep_id   BIGINT NOT NULL REFERENCES sweeps(id),
  seq        BIGSERIAL PRIMARY KEY,
  round      INTEGER NOT NULL,
  attempt    INTEGER NOT NULL,
  node       TEXT NOT NULL,
  peer       TEXT NOT NULL,
  kind       INTEGER NOT NULL,
  result     BYTEA NOT NULL
);
CREATE INDEX results_by_sweep ON results(sweep_id);
)sql"},
    // Known-good nodes: each node's last passing sweep (which pruning keeps, as it keeps the
    // sweep each sweep was compared against, --baseline), and what ended it since; each node's
    // links as its last heartbeat said.
    {R"sql(
ALTER TABLE sweeps ADD COLUMN baseline INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN link_state TEXT NOT NULL DEFAULT '';
CREATE TABLE known_good (
  node       TEXT PRIMARY KEY,
  sweep_id   INTEGER NOT NULL,
  passed     INTEGER NOT NULL,      -- microseconds since the Unix epoch, the sweep's end
  figures    BLOB,                  -- fabricctl.v1.NodeHealth, as that sweep reported the node
  lost       INTEGER NOT NULL DEFAULT 0,  -- when it stopped being known-good; 0: it is
  lost_why   TEXT NOT NULL DEFAULT ''
);
)sql",
     R"sql(
ALTER TABLE sweeps ADD COLUMN baseline BIGINT NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN link_state TEXT NOT NULL DEFAULT '';
CREATE TABLE known_good (
  node       TEXT PRIMARY KEY,
  sweep_id   BIGINT NOT NULL,
  passed     BIGINT NOT NULL,
  figures    BYTEA,
  lost       BIGINT NOT NULL DEFAULT 0,
  lost_why   TEXT NOT NULL DEFAULT ''
);
)sql"},
    // The record of each `fabricctl accept` (acceptances.cc): its lists as text for the
    // listing, the Acceptance whole for the verdicts.
    {R"sql(
CREATE TABLE acceptances (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  recorded     INTEGER NOT NULL,    -- microseconds since the Unix epoch
  recorded_by  TEXT NOT NULL,       -- the caller's certificate identity, or 'plain text'
  started      INTEGER NOT NULL,    -- microseconds since the Unix epoch, its first pass
  duration_ms  INTEGER NOT NULL,
  accepted     TEXT NOT NULL,       -- node names, comma-separated
  rejected     TEXT NOT NULL,
  incomplete   TEXT NOT NULL,       -- why a pass gave no verdict; '' when every pass did
  sweep_ids    TEXT NOT NULL,       -- its passes' sweeps in order, comma-separated
  acceptance   BLOB NOT NULL        -- fabricctl.v1.Acceptance, serialised
);
)sql",
     R"sql(
CREATE TABLE acceptances (
  id           BIGSERIAL PRIMARY KEY,
  recorded     BIGINT NOT NULL,
  recorded_by  TEXT NOT NULL,
  started      BIGINT NOT NULL,
  duration_ms  BIGINT NOT NULL,
  accepted     TEXT NOT NULL,
  rejected     TEXT NOT NULL,
  incomplete   TEXT NOT NULL,
  sweep_ids    TEXT NOT NULL,
  acceptance   BYTEA NOT NULL
);
)sql"},
    // Drains the controller may give back (drained.cc): each node a completed sweep's verdict
    // drained, from the first such verdict until a sweep gives it back.
    {R"sql(
CREATE TABLE drained (
  node       TEXT PRIMARY KEY,
  sweep_id   INTEGER NOT NULL,      -- the first verdict that drained it
  since      INTEGER NOT NULL,      -- microseconds since the Unix epoch, that sweep's end
  kinds      TEXT NOT NULL          -- what it was drained for, comma-separated
);
)sql",
     R"sql(
CREATE TABLE drained (
  node       TEXT PRIMARY KEY,
  sweep_id   BIGINT NOT NULL,
  since      BIGINT NOT NULL,
  kinds      TEXT NOT NULL
);
)sql"},
    // What each pass covered (fabricctl.v1.NodePass: the pair probe kinds, each rail with its
    // distinct peers). A row with sweep_id 0 holds only a loss: a node never passed whose agent
    // restarted or changed while a sweep measured it.
    {R"sql(
ALTER TABLE known_good ADD COLUMN coverage BLOB;
)sql",
     R"sql(
ALTER TABLE known_good ADD COLUMN coverage BYTEA;
)sql"},
};
constexpr int kSchemaVersion = sizeof(kMigrations) / sizeof(kMigrations[0]);

google::protobuf::Timestamp Timestamp(int64_t micros) {
  google::protobuf::Timestamp t;
  t.set_seconds(micros / 1000000);
  t.set_nanos(static_cast<int32_t>(micros % 1000000) * 1000);
  return t;
}

const std::string& Cell(const Database::Row& row, size_t i) {
  static const std::string kEmpty;
  return i < row.size() && row[i] ? *row[i] : kEmpty;
}

absl::Status ForgetPassAndDrain(Database& db, const std::string& node) {
  RETURN_IF_ERROR(db.Exec("DELETE FROM known_good WHERE node=?1", {node}).status());
  return db.Exec("DELETE FROM drained WHERE node=?1", {node}).status();
}

// Every relation the controller uses (the lease's is leader.cc's to check).
const std::vector<std::string>& Relations() {
  static const auto* const kRelations = new std::vector<std::string>{
      "fabricctl_schema", "nodes",      "sweeps",      "sweeps_id_seq",      "results",
      "results_seq_seq",  "known_good", "acceptances", "acceptances_id_seq", "drained"};
  return *kRelations;
}

absl::Status Migrate(Database& db, const std::string& where) {
  // What is there is read first, and must be the controller's own; the lock is taken only when
  // a migration is due (a start with nothing to migrate waits on nobody).
  ASSIGN_OR_RETURN(const int seen, db.SchemaVersion());
  RETURN_IF_ERROR(db.CheckOwnership(Relations()));
  if (seen == kSchemaVersion) return absl::OkStatus();
  return InTransaction(db, [&]() -> absl::Status {
    RETURN_IF_ERROR(db.LockForMigration());
    ASSIGN_OR_RETURN(const int version, db.SchemaVersion());
    if (version > kSchemaVersion) {
      return absl::FailedPreconditionError(
          absl::StrCat("--db '", where, "': schema version ", version,
                       " is newer than this controller's ", kSchemaVersion));
    }
    for (int v = version; v < kSchemaVersion; ++v) {
      const Migration& m = kMigrations[v];
      RETURN_IF_ERROR(
          db.Script(db.dialect() == Database::Dialect::kPostgres ? m.postgres : m.sqlite));
    }
    RETURN_IF_ERROR(version < kSchemaVersion ? db.SetSchemaVersion(kSchemaVersion)
                                             : absl::OkStatus());
    return db.CheckOwnership(Relations());
  });
}

}  // namespace

void Store::SetWriteGate(std::function<absl::Status()> writable) {
  MutexLock lock(&gate_mu_);
  writable_ = std::move(writable);
}

absl::Status Store::Writable() const {
  std::function<absl::Status()> writable;
  {
    MutexLock lock(&gate_mu_);
    writable = writable_;
  }
  return writable ? writable() : absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& where,
                                                   const std::string& password) {
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(where, password));
  RETURN_IF_ERROR(Migrate(*db, Database::Describe(where)));
  return std::unique_ptr<Store>(new Store(std::move(db)));
}

Store::~Store() = default;

absl::Status Store::UpsertNode(const v1::NodeInventory& inventory, absl::Time now) {
  RETURN_IF_ERROR(Writable());
  MutexLock lock(&mu_);
  return db_
      ->Exec(
          "INSERT INTO nodes(name, inventory, first_seen, last_seen) VALUES(?1, ?2, ?3, ?3) "
          "ON CONFLICT(name) DO UPDATE SET inventory=excluded.inventory, "
          "last_seen=excluded.last_seen",
          {inventory.node_name(), Bytes{inventory.SerializeAsString()}, absl::ToUnixMicros(now)})
      .status();
}

absl::StatusOr<Store::Touch> Store::TouchNode(const std::string& name, absl::Time now,
                                              const std::string& link_state) {
  RETURN_IF_ERROR(Writable());
  MutexLock lock(&mu_);
  Touch touch;
  ASSIGN_OR_RETURN(auto rows, db_->Query("SELECT link_state FROM nodes WHERE name=?1", {name}));
  if (rows.empty()) return touch;
  touch.known = true;
  const std::string& before = Cell(rows[0], 0);
  if (!link_state.empty() && !before.empty() && before != link_state)
    touch.previous_link_state = before;
  RETURN_IF_ERROR(
      db_->Exec("UPDATE nodes SET last_seen=?2, link_state=?3 WHERE name=?1",
                {name, absl::ToUnixMicros(now), link_state.empty() ? before : link_state})
          .status());
  return touch;
}

absl::StatusOr<std::vector<std::string>> Store::RemoveNodes(const std::vector<std::string>& names) {
  RETURN_IF_ERROR(Writable());
  MutexLock lock(&mu_);
  std::vector<std::string> removed;
  Database& db = *db_;
  RETURN_IF_ERROR(InTransaction(db, [&]() -> absl::Status {
    for (const std::string& name : names) {
      ASSIGN_OR_RETURN(const int64_t changed, db.Exec("DELETE FROM nodes WHERE name=?1", {name}));
      // A forgotten node's pass and drain go with it: registered again (a new NIC, a rebuilt
      // host), it is a node no sweep has measured.
      RETURN_IF_ERROR(ForgetPassAndDrain(db, name));
      if (changed > 0) removed.push_back(name);
    }
    return absl::OkStatus();
  }));
  return removed;
}

absl::StatusOr<std::vector<std::string>> Store::ForgetNodesSeenBefore(absl::Time cutoff) {
  RETURN_IF_ERROR(Writable());
  MutexLock lock(&mu_);
  const int64_t micros = absl::ToUnixMicros(cutoff);
  ASSIGN_OR_RETURN(
      auto rows, db_->Query("SELECT name FROM nodes WHERE last_seen < ?1 ORDER BY name", {micros}));
  std::vector<std::string> names;
  for (const auto& row : rows) names.push_back(Cell(row, 0));
  if (names.empty()) return names;
  Database& db = *db_;
  RETURN_IF_ERROR(InTransaction(db, [&]() -> absl::Status {
    RETURN_IF_ERROR(db.Exec("DELETE FROM nodes WHERE last_seen < ?1", {micros}).status());
    for (const std::string& name : names) RETURN_IF_ERROR(ForgetPassAndDrain(db, name));
    return absl::OkStatus();
  }));
  return names;
}

absl::StatusOr<std::vector<StoredNode>> Store::ListNodes(
    const std::vector<std::string>& names) const {
  // A set, filled before the lock: the filter costs a lookup a node, and a node not asked for
  // is not parsed.
  const std::set<std::string> wanted(names.begin(), names.end());
  MutexLock lock(&mu_);
  // One node (a registration looks up its own) by its key, never a scan of the registry.
  const std::string columns = "SELECT name, inventory, first_seen, last_seen FROM nodes";
  ASSIGN_OR_RETURN(auto rows, names.size() == 1
                                  ? db_->Query(columns + " WHERE name=?1", {names.front()})
                                  : db_->Query(columns + " ORDER BY name", {}));
  std::vector<StoredNode> out;
  for (const auto& row : rows) {
    if (!wanted.empty() && wanted.count(Cell(row, 0)) == 0) continue;
    StoredNode node;
    if (!node.inventory.ParseFromString(Cell(row, 1))) {
      return absl::DataLossError("store: a stored node inventory does not parse");
    }
    node.first_seen = absl::FromUnixMicros(ColumnInt(row, 2));
    node.last_seen = absl::FromUnixMicros(ColumnInt(row, 3));
    out.push_back(std::move(node));
  }
  return out;
}

absl::StatusOr<int64_t> Store::CreateSweep(const v1::SweepRequest& request, absl::Time now) {
  RETURN_IF_ERROR(Writable());
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(auto rows,
                   db_->Query("INSERT INTO sweeps(state, started, request, baseline) "
                              "VALUES(?1, ?2, ?3, ?4) RETURNING id",
                              {int64_t{v1::SWEEP_RUNNING}, absl::ToUnixMicros(now),
                               Bytes{request.SerializeAsString()}, request.baseline_sweep_id()}));
  if (rows.empty()) return absl::InternalError("store: a new sweep has no id");
  return ColumnInt(rows[0], 0);
}

absl::Status Store::InsertResult(int64_t sweep_id, uint32_t round, uint32_t attempt,
                                 const v1::ProbeResult& result) {
  RETURN_IF_ERROR(Writable());
  MutexLock lock(&mu_);
  return db_
      ->Exec(
          "INSERT INTO results(sweep_id, round, attempt, node, peer, kind, result) "
          "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
          {sweep_id, int64_t{round}, int64_t{attempt}, result.node(), result.peer(),
           int64_t{result.kind()}, Bytes{result.SerializeAsString()}})
      .status();
}

absl::StatusOr<std::vector<v1::ProbeResult>> Store::ListResults(int64_t sweep_id) const {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      auto rows,
      db_->Query("SELECT result FROM results WHERE sweep_id=?1 ORDER BY seq", {sweep_id}));
  std::vector<v1::ProbeResult> out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    v1::ProbeResult result;
    if (!result.ParseFromString(Cell(row, 0)))
      return absl::DataLossError("store: a stored probe result does not parse");
    out.push_back(std::move(result));
  }
  return out;
}

absl::Status Store::FinishSweep(int64_t sweep_id, const v1::Report& report) {
  RETURN_IF_ERROR(Writable());
  MutexLock lock(&mu_);
  const auto& f = report.sweep().finished();
  const int64_t finished = f.seconds() * 1000000 + f.nanos() / 1000;
  Database& db = *db_;
  return InTransaction(db, [&]() -> absl::Status {
    // Only a running sweep: one another controller has since marked interrupted (it took over)
    // stays so.
    ASSIGN_OR_RETURN(
        const int64_t changed,
        db.Exec("UPDATE sweeps SET state=?2, finished=?3, report=?4 WHERE id=?1 AND state=?5",
                {sweep_id, int64_t{report.sweep().state()}, finished,
                 Bytes{report.SerializeAsString()}, int64_t{v1::SWEEP_RUNNING}}));
    if (changed == 0 || report.sweep().state() != v1::SWEEP_COMPLETED) return absl::OkStatus();
    return RecordVerdicts(db, sweep_id, report, finished);
  });
}

absl::StatusOr<v1::Report> Store::GetReport(int64_t sweep_id) const {
  MutexLock lock(&mu_);
  auto rows =
      sweep_id == 0
          ? db_->Query(
                "SELECT report FROM sweeps WHERE report IS NOT NULL ORDER BY id DESC LIMIT 1", {})
          : db_->Query("SELECT report FROM sweeps WHERE id=?1 AND report IS NOT NULL", {sweep_id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) {
    return absl::NotFoundError(sweep_id == 0 ? std::string("no finished sweep yet")
                                             : absl::StrCat("no finished sweep ", sweep_id));
  }
  v1::Report report;
  if (!report.ParseFromString(Cell((*rows)[0], 0)))
    return absl::DataLossError("store: a stored report does not parse");
  return report;
}

absl::StatusOr<std::vector<v1::SweepInfo>> Store::ListSweeps(uint32_t limit,
                                                             int64_t before_id) const {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(auto rows,
                   db_->Query("SELECT id, state, started, finished, request, report FROM sweeps "
                              "WHERE ?2 = 0 OR id < ?2 ORDER BY id DESC LIMIT ?1",
                              {int64_t{limit}, before_id}));
  std::vector<v1::SweepInfo> out;
  for (const auto& row : rows) {
    v1::SweepInfo info;
    v1::Report report;
    if (row.size() > 5 && row[5] && report.ParseFromString(*row[5])) info = report.sweep();
    info.set_sweep_id(ColumnInt(row, 0));
    info.set_state(static_cast<v1::SweepState>(ColumnInt(row, 1)));
    *info.mutable_started() = Timestamp(ColumnInt(row, 2));
    if (row.size() > 3 && row[3]) *info.mutable_finished() = Timestamp(ColumnInt(row, 3));
    if (info.nodes_size() == 0) {
      v1::SweepRequest request;
      if (request.ParseFromString(Cell(row, 4))) {
        *info.mutable_nodes() = request.nodes();
        info.set_pairing(request.pairing());
      }
    }
    out.push_back(std::move(info));
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> Store::FinishedSweepIdsAfter(int64_t after, uint32_t limit,
                                                                  Take take) const {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(auto rows,
                   db_->Query(take == Take::kNewest
                                  ? "SELECT id FROM sweeps WHERE id > ?1 AND report IS NOT NULL "
                                    "ORDER BY id DESC LIMIT ?2"
                                  : "SELECT id FROM sweeps WHERE id > ?1 AND report IS NOT NULL "
                                    "ORDER BY id ASC LIMIT ?2",
                              {after, int64_t{limit}}));
  std::vector<int64_t> out;
  for (const auto& row : rows) out.push_back(ColumnInt(row, 0));
  if (take == Take::kNewest) std::reverse(out.begin(), out.end());
  return out;
}

absl::StatusOr<int> Store::MarkRunningInterrupted(absl::Time now) {
  RETURN_IF_ERROR(Writable());
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(const int64_t changed,
                   db_->Exec("UPDATE sweeps SET state=?1, finished=?2 WHERE state=?3",
                             {int64_t{v1::SWEEP_INTERRUPTED}, absl::ToUnixMicros(now),
                              int64_t{v1::SWEEP_RUNNING}}));
  return static_cast<int>(changed);
}

absl::StatusOr<Store::Pruned> Store::PruneSweeps(absl::Time started_before, uint32_t keep_newest) {
  // A finished (or interrupted) sweep that started before the cutoff, or is older than the
  // newest `keep_newest`; never the running one. One sweep per transaction, the lock let go
  // between them, so that heartbeats and results wait for one sweep's rows at most.
  const std::vector<Value> params = {
      int64_t{v1::SWEEP_RUNNING}, absl::ToUnixMicros(started_before),
      keep_newest == 0 ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(keep_newest)};
  Pruned pruned;
  // Acceptances by the same policy, in one statement: recorded before the cutoff, or beyond the
  // newest `keep_newest` acceptances (each ran a sweep or more, so those include every one
  // whose sweeps are still among the newest `keep_newest`). A kept acceptance keeps its
  // passes' sweeps, as a current drain keeps the sweep that drained the node: what they point
  // at stays readable (`fabricctl map N`).
  {
    RETURN_IF_ERROR(Writable());
    MutexLock lock(&mu_);
    ASSIGN_OR_RETURN(pruned.acceptances,
                     db_->Exec("DELETE FROM acceptances WHERE recorded < ?1 OR id NOT IN "
                               "(SELECT id FROM acceptances ORDER BY id DESC LIMIT ?2)",
                               {params[1], params[2]}));
  }
  for (;;) {
    RETURN_IF_ERROR(Writable());  // each transaction: the leadership may go meanwhile
    MutexLock lock(&mu_);
    Database& db = *db_;
    // Never a sweep a kept one was compared against, a node's last passing sweep, the sweep
    // that drained a node still drained, nor a pass of a kept acceptance.
    ASSIGN_OR_RETURN(
        auto rows,
        db.Query("SELECT id FROM sweeps WHERE state != ?1 AND (started < ?2 OR id NOT IN "
                 "(SELECT id FROM sweeps ORDER BY id DESC LIMIT ?3)) "
                 "AND id NOT IN (SELECT baseline FROM sweeps) "
                 "AND id NOT IN (SELECT sweep_id FROM known_good) "
                 "AND id NOT IN (SELECT sweep_id FROM drained) "
                 "AND NOT EXISTS (SELECT 1 FROM acceptances a WHERE "
                 "(',' || a.sweep_ids || ',') LIKE ('%,' || sweeps.id || ',%')) "
                 "ORDER BY id LIMIT 1",
                 params));
    if (rows.empty()) return pruned;
    const int64_t id = ColumnInt(rows[0], 0);
    int64_t results = 0;
    RETURN_IF_ERROR(InTransaction(db, [&]() -> absl::Status {
      ASSIGN_OR_RETURN(results, db.Exec("DELETE FROM results WHERE sweep_id=?1", {id}));
      return db.Exec("DELETE FROM sweeps WHERE id=?1", {id}).status();
    }));
    ++pruned.sweeps;
    pruned.results += results;
  }
}

}  // namespace fabricctl::controller
