// Drains the controller may give back (undrain.enabled): each node a verdict drained, until a
// sweep gives it back.

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "controller/store/store.h"

namespace fabricctl::controller {
namespace {

const std::string& At(const Database::Row& row, size_t i) {
  static const std::string kEmpty;
  return i < row.size() && row[i] ? *row[i] : kEmpty;
}

// The kinds of the findings that ask for `node`'s drain, once each, in the report's order.
std::string DrainKinds(const v1::Report& report, const std::string& node) {
  std::vector<std::string> kinds;
  std::set<std::string> seen;
  for (const v1::Finding& f : report.findings()) {
    if (f.node() == node && f.action() == v1::ACTION_DRAIN && seen.insert(f.kind()).second)
      kinds.push_back(f.kind());
  }
  return absl::StrJoin(kinds, ",");
}

}  // namespace

absl::Status Store::RecordDrains(int64_t sweep_id, const v1::Report& report) {
  RETURN_IF_ERROR(Writable());
  if (report.sweep().state() != v1::SWEEP_COMPLETED) return absl::OkStatus();
  const auto& f = report.sweep().finished();
  const int64_t finished_us = f.seconds() * 1000000 + f.nanos() / 1000;
  MutexLock lock(&mu_);
  Database& db = *db_;
  return InTransaction(db, [&]() -> absl::Status {
    for (const std::string& node : report.summary().given_back()) {
      RETURN_IF_ERROR(db.Exec("DELETE FROM drained WHERE node=?1", {node}).status());
    }
    for (const std::string& node : report.summary().drain()) {
      RETURN_IF_ERROR(db.Exec("INSERT INTO drained(node, sweep_id, since, kinds) "
                              "VALUES(?1, ?2, ?3, ?4) ON CONFLICT(node) DO UPDATE SET "
                              "sweep_id=excluded.sweep_id, since=excluded.since, "
                              "kinds=excluded.kinds",
                              {node, sweep_id, finished_us, DrainKinds(report, node)})
                          .status());
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<std::vector<Store::Drained>> Store::ListDrained() const {
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      auto rows, db_->Query("SELECT node, sweep_id, since, kinds FROM drained ORDER BY node", {}));
  std::vector<Drained> out;
  for (const auto& row : rows) {
    Drained d;
    d.node = At(row, 0);
    d.sweep_id = ColumnInt(row, 1);
    d.since = absl::FromUnixMicros(ColumnInt(row, 2));
    d.kinds = At(row, 3);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace fabricctl::controller
