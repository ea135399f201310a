#include "report/group_matrix.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace fabricctl::report::internal {
namespace {

double MedianOf(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  return (values[mid] + *std::max_element(values.begin(), values.begin() + mid)) / 2;
}

}  // namespace

std::optional<GroupMatrix> GroupMatrixOf(const v1::Report& report, const std::string& rail) {
  const auto& health = report.health();
  if (health.levels().empty()) return std::nullopt;
  GroupMatrix m;
  m.level = health.levels(0);
  std::map<std::string, std::string> group_of;  // node -> group
  std::map<std::string, size_t> index;
  for (const auto& n : health.nodes()) {
    // On a rail, the rail's own leaf (label `<level>@<rail>`) where the node has one.
    auto it = rail.empty() ? n.labels().end() : n.labels().find(m.level + "@" + rail);
    if (it == n.labels().end()) it = n.labels().find(m.level);
    if (it == n.labels().end() || it->second.empty()) continue;
    group_of[n.node()] = it->second;
    index.emplace(it->second, 0);
  }
  if (index.size() < 2) return std::nullopt;
  for (auto& [group, i] : index) {
    i = m.groups.size();
    m.groups.push_back(group);
  }
  const size_t g = m.groups.size();
  m.members.resize(g);
  for (const auto& n : health.nodes()) {
    if (auto it = group_of.find(n.node()); it != group_of.end())
      m.members[index[it->second]].push_back(n.node());
  }
  std::vector<std::vector<std::vector<double>>> figures(g, std::vector<std::vector<double>>(g));
  m.pairs.assign(g, std::vector<int>(g, 0));
  m.bad.assign(g, std::vector<int>(g, 0));
  for (const auto& p : health.pairs()) {
    if (p.rail() != rail) continue;
    auto a = group_of.find(p.node()), b = group_of.find(p.peer());
    if (a == group_of.end() || b == group_of.end()) continue;
    const size_t ga = index[a->second], gb = index[b->second];
    if (p.has_bw_gbps()) figures[ga][gb].push_back(p.bw_gbps());
    if (p.has_bw_reverse_gbps()) figures[gb][ga].push_back(p.bw_reverse_gbps());
    const bool bad = p.status() == v1::HEALTH_WARNING || p.status() == v1::HEALTH_CRITICAL;
    for (auto [x, y] : {std::pair{ga, gb}, std::pair{gb, ga}}) {
      ++m.pairs[x][y];
      m.bad[x][y] += bad;
      if (ga == gb) break;
    }
  }
  m.median_gbps.assign(g, std::vector<double>(g, std::nan("")));
  for (size_t x = 0; x < g; ++x) {
    for (size_t y = 0; y < g; ++y) m.median_gbps[x][y] = MedianOf(std::move(figures[x][y]));
  }
  return m;
}

}  // namespace fabricctl::report::internal
