// Known-good state: which sweep last judged each node healthy, and what has ended that since.
#include "controller/store/known_good.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "controller/store/store.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

using Bytes = Database::Bytes;

const std::string& At(const Database::Row& row, size_t i) {
  static const std::string kEmpty;
  return i < row.size() && row[i] ? *row[i] : kEmpty;
}

int64_t Micros(const google::protobuf::Timestamp& t) {
  return t.seconds() * 1000000 + t.nanos() / 1000;
}

}  // namespace

absl::Status RecordVerdicts(Database& db, int64_t sweep_id, const v1::Report& report,
                            int64_t finished_us) {
  // What the verdict decided of each node (NodePass, controller/verdict/earned.h): a pass
  // earned is recorded with what it covered; a node a finding concerns loses its pass. A loss
  // later than the sweep's start (its agent restarted, a link changed while it was measured)
  // is kept: this sweep's measurement is older than it.
  const int64_t started_us = Micros(report.sweep().started());
  for (const v1::NodeHealth& node : report.health().nodes()) {
    const v1::NodePass& pass = node.pass();
    if (pass.earned()) {
      v1::NodeHealth figures = node;
      figures.clear_pass();
      RETURN_IF_ERROR(
          db.Exec("INSERT INTO known_good(node, sweep_id, passed, figures, lost, lost_why, "
                  "coverage) VALUES(?1, ?2, ?3, ?4, 0, '', ?6) ON CONFLICT(node) DO UPDATE SET "
                  "sweep_id=excluded.sweep_id, passed=excluded.passed, "
                  "figures=excluded.figures, coverage=excluded.coverage, "
                  "lost_why=CASE WHEN known_good.lost > ?5 THEN known_good.lost_why ELSE '' END, "
                  "lost=CASE WHEN known_good.lost > ?5 THEN known_good.lost ELSE 0 END",
                  {node.node(), sweep_id, finished_us, Bytes{figures.SerializeAsString()},
                   started_us, Bytes{pass.SerializeAsString()}})
              .status());
    } else if (pass.ends()) {
      const std::string why = absl::StrCat("sweep ", sweep_id, ": ", pass.why_not());
      RETURN_IF_ERROR(db.Exec("UPDATE known_good SET lost=?2, lost_why=?3 WHERE node=?1 AND lost=0",
                              {node.node(), finished_us, why})
                          .status());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Store::KnownGood>> Store::ListKnownGood(
    const std::vector<std::string>& names) const {
  const std::set<std::string> wanted(names.begin(), names.end());
  MutexLock lock(&mu_);
  // One node (each agent's heartbeat asks for its own) by its key, not the whole table.
  const std::string columns =
      "SELECT node, sweep_id, passed, figures, lost, lost_why, coverage FROM known_good";
  ASSIGN_OR_RETURN(auto rows, names.size() == 1
                                  ? db_->Query(columns + " WHERE node=?1", {names.front()})
                                  : db_->Query(columns + " ORDER BY node", {}));
  std::vector<KnownGood> out;
  for (const auto& row : rows) {
    if (!wanted.empty() && wanted.count(At(row, 0)) == 0) continue;
    if (ColumnInt(row, 1) == 0) continue;  // a loss only: never passed
    KnownGood k;
    k.node = At(row, 0);
    k.sweep_id = ColumnInt(row, 1);
    k.passed = absl::FromUnixMicros(ColumnInt(row, 2));
    if (!At(row, 3).empty() && !k.figures.ParseFromString(At(row, 3))) {
      return absl::DataLossError(
          absl::StrCat("store: the known-good figures of ", k.node, " do not parse"));
    }
    if (!At(row, 6).empty() && !k.coverage.ParseFromString(At(row, 6))) {
      return absl::DataLossError(
          absl::StrCat("store: the known-good coverage of ", k.node, " does not parse"));
    }
    const int64_t lost = ColumnInt(row, 4);
    if (lost != 0) k.lost = absl::FromUnixMicros(lost);
    k.lost_why = At(row, 5);
    out.push_back(std::move(k));
  }
  return out;
}

absl::Status Store::LoseKnownGood(const std::string& node, absl::Time when,
                                  const std::string& why) {
  RETURN_IF_ERROR(Writable());
  MutexLock lock(&mu_);
  // The latest loss is kept (a sweep that measured the node before it does not end it); a node
  // never passed gets a row holding the loss alone (sweep_id 0), for the sweep measuring it now.
  return db_
      ->Exec(
          "INSERT INTO known_good(node, sweep_id, passed, figures, lost, lost_why) "
          "VALUES(?1, 0, 0, NULL, ?2, ?3) ON CONFLICT(node) DO UPDATE SET "
          "lost=excluded.lost, lost_why=excluded.lost_why "
          "WHERE known_good.lost = 0 OR known_good.lost < excluded.lost",
          {node, absl::ToUnixMicros(when), why})
      .status();
}

}  // namespace fabricctl::controller
