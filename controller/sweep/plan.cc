#include "controller/sweep/plan.h"

#include <map>
#include <string>

namespace fabricctl::controller::sweep {
namespace {

// Each live node's group at each topology level (by its labels), -1 where it has none.
std::vector<std::vector<int32_t>> GroupsOf(const v1::Config& config, const Fleet& fleet,
                                           const std::vector<uint32_t>& live) {
  const auto& levels = config.topology().levels();
  std::vector<std::vector<int32_t>> groups(levels.size());
  std::vector<std::map<std::string, int32_t>> ids(levels.size());
  const Placement placement(config);
  for (uint32_t i : live) {
    const auto labels = placement.LabelsOf(*fleet.nodes[i]);
    for (int l = 0; l < levels.size(); ++l) {
      auto it = labels.find(levels[l]);
      groups[l].push_back(
          it == labels.end() || it->second.empty()
              ? -1
              : ids[l].emplace(it->second, static_cast<int32_t>(ids[l].size())).first->second);
    }
  }
  return groups;
}

}  // namespace

absl::StatusOr<Plan> PlanRounds(const v1::SweepRequest& request, const v1::Config& config,
                                const Fleet& fleet, absl::Time started) {
  Plan plan;
  const std::vector<uint32_t> live = fleet.Live();
  const uint32_t n_live = static_cast<uint32_t>(live.size());
  plan.pairing =
      request.pairing() != v1::PAIRING_UNSPECIFIED ? request.pairing() : config.sweep().pairing();
  if (plan.pairing == v1::PAIRING_FILE) {
    std::vector<std::string> names;
    for (uint32_t i : live) names.push_back(fleet.Name(i));
    auto rounds = FileRounds(request.pairing_file(), names);
    if (!rounds.ok()) return rounds.status();
    plan.rounds = *std::move(rounds);
  } else if (plan.pairing == v1::PAIRING_QUICK) {
    std::vector<uint32_t> groups;
    const std::string& label = config.sweep().group_by_label();
    if (!label.empty()) {
      std::map<std::string, uint32_t> ids;
      const Placement placement(config);
      for (uint32_t i : live) {
        const auto labels = placement.LabelsOf(*fleet.nodes[i]);
        auto it = labels.find(label);
        std::string group = it == labels.end() ? "" : it->second;
        groups.push_back(ids.emplace(group, ids.size()).first->second);
      }
    }
    plan.rounds = QuickRounds(n_live, groups);
  } else if (plan.pairing == v1::PAIRING_TOPOLOGY) {
    if (config.topology().levels().empty()) {
      return absl::InvalidArgumentError(
          "--pairing topology needs the topology: topology.levels (label keys such as leaf) or "
          "topology.slurm in the configuration");
    }
    plan.rounds = TopologyRounds(n_live, GroupsOf(config, fleet, live));
  } else if (plan.pairing == v1::PAIRING_SAMPLE) {
    uint32_t k = request.sample_rounds() ? request.sample_rounds() : config.sweep().sample_rounds();
    plan.rounds = SampleRounds(n_live, k, static_cast<uint64_t>(absl::ToUnixNanos(started)));
  } else {
    plan.pairing = v1::PAIRING_FULL;
    plan.rounds = FullRounds(n_live);
  }
  for (Round& round : plan.rounds) {
    for (Pair& p : round) p = {live[p.first], live[p.second]};
  }
  return plan;
}

}  // namespace fabricctl::controller::sweep
