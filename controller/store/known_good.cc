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

// What flagged each node (the kinds of the warning or critical findings naming it, as the node
// or the peer, but for the fleet's standing state), into `kinds`; returns the nodes flagged only
// by that state: a configuration warning that every judged node of the sweep carries alike (the
// same kind on the same device, of the same audit), such as no RDMA where none is expected,
// which every audited sweep of such a fleet warns of on every node.
std::set<std::string> FleetStateOnly(const v1::Report& report,
                                     std::map<std::string, std::set<std::string>>& kinds) {
  auto what = [](const v1::Finding& f) {
    auto audit = f.evidence().find("audit");
    return absl::StrCat(f.kind(), "|", f.device(), "|",
                        audit == f.evidence().end() ? "" : audit->second);
  };
  // node -> (what flagged it -> its kind)
  std::map<std::string, std::map<std::string, std::string>> flags;
  std::map<std::string, std::set<std::string>> carried;  // configuration warning -> nodes
  for (const v1::Finding& f : report.findings()) {
    if (f.severity() < v1::SEVERITY_WARNING) continue;
    for (const std::string* end : {&f.node(), &f.peer()}) {
      if (!end->empty()) flags[*end][end == &f.node() ? what(f) : "peer|" + f.kind()] = f.kind();
    }
    if (!f.node().empty() && f.severity() == v1::SEVERITY_WARNING &&
        f.action() != v1::ACTION_DRAIN && report::IsConfigurationKind(f.kind())) {
      carried[what(f)].insert(f.node());
    }
  }
  // The judged nodes: those with a verdict (an unreachable one carries no audit's warning).
  size_t judged = 0;
  for (const auto& node : report.health().nodes()) judged += node.status() != v1::HEALTH_UNKNOWN;
  std::set<std::string> out;
  for (const auto& [node, found] : flags) {
    for (const auto& [w, kind] : found) {
      auto c = carried.find(w);
      if (c == carried.end() || judged == 0 || c->second.size() < judged) kinds[node].insert(kind);
    }
    if (kinds[node].empty()) out.insert(node);
  }
  return out;
}

}  // namespace

absl::Status RecordVerdicts(Database& db, int64_t sweep_id, const v1::Report& report,
                            int64_t finished_us) {
  // A critical finding, one that asks for a drain, or a warning flags a node, but for the
  // fleet's standing state (FleetStateOnly).
  std::map<std::string, std::set<std::string>> kinds;
  const std::set<std::string> fleet_state_only = FleetStateOnly(report, kinds);
  for (const v1::NodeHealth& node : report.health().nodes()) {
    const bool only_fleet_state =
        node.status() == v1::HEALTH_WARNING && fleet_state_only.count(node.node()) > 0;
    if (node.status() == v1::HEALTH_OK || only_fleet_state) {
      RETURN_IF_ERROR(
          db.Exec("INSERT INTO known_good(node, sweep_id, passed, figures, lost, lost_why) "
                  "VALUES(?1, ?2, ?3, ?4, 0, '') ON CONFLICT(node) DO UPDATE SET "
                  "sweep_id=excluded.sweep_id, passed=excluded.passed, "
                  "figures=excluded.figures, lost=0, lost_why=''",
                  {node.node(), sweep_id, finished_us, Bytes{node.SerializeAsString()}})
              .status());
    } else if (node.status() == v1::HEALTH_WARNING || node.status() == v1::HEALTH_CRITICAL) {
      const auto& found = kinds[node.node()];
      const std::string why = absl::StrCat("sweep ", sweep_id, " flagged it",
                                           found.empty() ? "" : ": " + absl::StrJoin(found, ", "));
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
      "SELECT node, sweep_id, passed, figures, lost, lost_why FROM known_good";
  ASSIGN_OR_RETURN(auto rows, names.size() == 1
                                  ? db_->Query(columns + " WHERE node=?1", {names.front()})
                                  : db_->Query(columns + " ORDER BY node", {}));
  std::vector<KnownGood> out;
  for (const auto& row : rows) {
    if (!wanted.empty() && wanted.count(At(row, 0)) == 0) continue;
    KnownGood k;
    k.node = At(row, 0);
    k.sweep_id = ColumnInt(row, 1);
    k.passed = absl::FromUnixMicros(ColumnInt(row, 2));
    if (!At(row, 3).empty() && !k.figures.ParseFromString(At(row, 3))) {
      return absl::DataLossError(
          absl::StrCat("store: the known-good figures of ", k.node, " do not parse"));
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
  return db_
      ->Exec("UPDATE known_good SET lost=?2, lost_why=?3 WHERE node=?1 AND lost=0",
             {node, absl::ToUnixMicros(when), why})
      .status();
}

}  // namespace fabricctl::controller
