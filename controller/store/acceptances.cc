// The record of each `fabricctl accept`: who recorded it and when, which nodes it accepted and
// rejected, over which sweeps, and the Acceptance whole.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "controller/store/store.h"

namespace fabricctl::controller {
namespace {

using Bytes = Database::Bytes;

const std::string& Text(const Database::Row& row, size_t i) {
  static const std::string kEmpty;
  return i < row.size() && row[i] ? *row[i] : kEmpty;
}

google::protobuf::Timestamp TimestampOf(int64_t micros) {
  google::protobuf::Timestamp t;
  t.set_seconds(micros / 1000000);
  t.set_nanos(static_cast<int32_t>(micros % 1000000) * 1000);
  return t;
}

int64_t Micros(const google::protobuf::Timestamp& t) {
  return t.seconds() * 1000000 + t.nanos() / 1000;
}

// The columns of a listing, the Acceptance last when it is asked for.
constexpr char kColumns[] =
    "id, recorded, recorded_by, started, duration_ms, accepted, rejected, incomplete, sweep_ids";

}  // namespace

absl::StatusOr<int64_t> Store::RecordAcceptance(const v1::Acceptance& acceptance,
                                                const std::string& by, absl::Time now) {
  std::vector<std::string> accepted, rejected;
  for (const auto& node : acceptance.nodes()) {
    (node.accepted() ? accepted : rejected).push_back(node.node());
  }
  const std::vector<int64_t> sweeps(acceptance.sweep_ids().begin(), acceptance.sweep_ids().end());
  const std::set<int64_t> distinct(sweeps.begin(), sweeps.end());
  const int64_t duration_ms =
      acceptance.duration().seconds() * 1000 + acceptance.duration().nanos() / 1000000;
  RETURN_IF_ERROR(Writable());
  MutexLock lock(&mu_);
  // The check and the insert under one hold of the lock: a prune (which takes it too) cannot
  // come between them. Only the last pass's sweep must still be held: a week's burn-in may
  // have seen its first passes pruned (history.keep_sweeps) before it ends, and its record
  // names them still; an id above every sweep history held was never a sweep.
  if (!distinct.empty()) {
    const int64_t last = *distinct.rbegin();
    ASSIGN_OR_RETURN(auto held, db_->Query("SELECT id FROM sweeps WHERE id=?1", {last}));
    if (held.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("acceptance.sweep_ids: history holds no sweep ", last));
    }
  }
  ASSIGN_OR_RETURN(
      auto rows,
      db_->Query(
          "INSERT INTO acceptances(recorded, recorded_by, started, duration_ms, accepted, "
          "rejected, incomplete, sweep_ids, acceptance) "
          "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
          {absl::ToUnixMicros(now), by, Micros(acceptance.started()), duration_ms,
           absl::StrJoin(accepted, ","), absl::StrJoin(rejected, ","), acceptance.incomplete(),
           absl::StrJoin(sweeps, ","), Bytes{acceptance.SerializeAsString()}}));
  if (rows.empty()) return absl::InternalError("store: a new acceptance has no id");
  return ColumnInt(rows[0], 0);
}

absl::StatusOr<std::vector<v1::AcceptanceRecord>> Store::ListAcceptances(uint32_t limit,
                                                                         int64_t before_id,
                                                                         bool with_verdicts) const {
  const std::string sql =
      absl::StrCat("SELECT ", kColumns, with_verdicts ? ", acceptance" : "",
                   " FROM acceptances WHERE ?2 = 0 OR id < ?2 ORDER BY id DESC LIMIT ?1");
  MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(auto rows, db_->Query(sql, {int64_t{limit}, before_id}));
  std::vector<v1::AcceptanceRecord> out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    v1::AcceptanceRecord r;
    r.set_acceptance_id(ColumnInt(row, 0));
    *r.mutable_recorded() = TimestampOf(ColumnInt(row, 1));
    r.set_recorded_by(Text(row, 2));
    *r.mutable_started() = TimestampOf(ColumnInt(row, 3));
    const int64_t duration_ms = ColumnInt(row, 4);
    r.mutable_duration()->set_seconds(duration_ms / 1000);
    r.mutable_duration()->set_nanos(static_cast<int32_t>(duration_ms % 1000) * 1000000);
    for (absl::string_view node : absl::StrSplit(Text(row, 5), ',', absl::SkipEmpty())) {
      r.add_accepted(std::string(node));
    }
    for (absl::string_view node : absl::StrSplit(Text(row, 6), ',', absl::SkipEmpty())) {
      r.add_rejected(std::string(node));
    }
    r.set_incomplete(Text(row, 7));
    for (absl::string_view id : absl::StrSplit(Text(row, 8), ',', absl::SkipEmpty())) {
      int64_t sweep = 0;
      if (absl::SimpleAtoi(id, &sweep)) r.add_sweep_ids(sweep);
    }
    if (with_verdicts && !r.mutable_acceptance()->ParseFromString(Text(row, 9))) {
      return absl::DataLossError(
          absl::StrCat("store: stored acceptance ", r.acceptance_id(), " does not parse"));
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace fabricctl::controller
