#include "controller/verdict/paths.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "controller/verdict/retests.h"
#include "controller/verdict/robust_stats.h"

namespace fabricctl::controller {
namespace {

// The share of an element's measured pairs that must be slow: "every pair" of boolean
// tomography, with room for a pair that noise lifted past the line.
constexpr double kElementShare = 0.75;
// At most this many two-class splits of the figures are tried when groups are inferred.
constexpr int kMaxSplits = 6;
// The fewest nodes of a group inferred from the figures (GroupsAbove).
constexpr size_t kMinInferredGroup = 3;
// Inferred groups are named by their members, at most this many of them.
constexpr size_t kNamedMembers = 6;

// ln of a pair's worse measured direction; NaN when it has none.
float WorstLog(const PairInput& p) {
  if (p.status != PairStatus::kMeasured) return std::nan("");
  double worst = std::nan("");
  for (const auto& d : p.Directions()) {
    const float bw = d.figures.bw_gbps;
    if (std::isnan(bw) || bw <= 0) continue;
    worst = std::isnan(worst) ? bw : std::min<double>(worst, bw);
  }
  return static_cast<float>(std::isnan(worst) ? worst : std::log(worst));
}

// One level of grouping: each node's group (-1: unknown) and each group's parent (its group
// at the next level up, "" at the top: paths run only between groups of one parent).
struct Level {
  std::string name;
  std::vector<int32_t> group;
  std::vector<std::string> names, parents;
  std::vector<std::vector<uint32_t>> members;
  // The distinct parents, and each group's parent's index among them.
  std::vector<std::string> parent_names;
  std::vector<int32_t> parent_index;
  void IndexParents() {
    std::map<std::string, int32_t> ids;
    parent_index.clear();
    for (const std::string& parent : parents) {
      auto [it, fresh] = ids.try_emplace(parent, static_cast<int32_t>(parent_names.size()));
      if (fresh) parent_names.push_back(parent);
      parent_index.push_back(it->second);
    }
  }
};

// The typical figure (log) of a level's reference pairs, and its spread.
struct Reference {
  bool valid = false;
  double typical = 0, spread = 0;
  bool Slow(double x, const v1::Thresholds& t) const {
    return valid && x < typical + std::log(1 - t.min_effect()) &&
           typical - x > t.max_robust_z() * spread;
  }
};

struct Counts {
  uint32_t measured = 0, slow = 0;
  void Add(bool is_slow) { ++measured, slow += is_slow; }
  bool MostlySlow() const { return 2 * slow > measured; }
  bool MostlyFine() const { return 2 * slow < measured; }
};

// What one level's pairs say: which pairs reach the level (for a level above the lowest, those
// between different groups of the level below: pairs within a leaf never reach the spine),
// the reference (the pairs within a group of the level, which cross none of its uplinks),
// each pair's verdict against it, the nodes that are slow with their own group-mates (a
// host's fault, not a switch's), each node's counts within its group and to other groups, and
// per group its counts to each group (itself: within) over the pairs with no such node.
struct LevelView {
  Reference ref;
  std::vector<char> reaches, slow;              // per pair
  std::vector<char> suspect;                    // per node
  std::vector<Counts> own_within, own_cross;    // per node
  std::vector<std::map<int32_t, Counts>> rows;  // per group
};

LevelView ViewOf(const std::vector<Level>& levels, size_t l, const AnalysisInput& in,
                 const std::vector<float>& logs) {
  const Level& level = levels[l];
  LevelView v;
  v.reaches.assign(in.pairs.size(), 0);
  v.slow.assign(in.pairs.size(), 0);
  std::vector<double> within;
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const uint32_t a = in.pairs[p].client, b = in.pairs[p].server;
    if (std::isnan(logs[p]) || level.group[a] < 0 || level.group[b] < 0) continue;
    if (l > 0 && (levels[l - 1].group[a] < 0 || levels[l - 1].group[b] < 0 ||
                  levels[l - 1].group[a] == levels[l - 1].group[b])) {
      continue;
    }
    v.reaches[p] = 1;
    if (level.group[a] == level.group[b]) within.push_back(logs[p]);
  }
  if (within.size() < 2) return v;
  v.ref.valid = true;
  v.ref.typical = Median(within);
  std::vector<double> fast;
  for (double x : within) {
    if (x >= v.ref.typical) fast.push_back(x);
  }
  v.ref.spread =
      std::max({ScaledMad(within, v.ref.typical), ScaledMad(fast, v.ref.typical), kMinLogSpread});
  v.own_within.assign(in.nodes.size(), Counts());
  v.own_cross.assign(in.nodes.size(), Counts());
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    if (!v.reaches[p]) continue;
    v.slow[p] = v.ref.Slow(logs[p], in.thresholds);
    const uint32_t a = in.pairs[p].client, b = in.pairs[p].server;
    auto& own = level.group[a] == level.group[b] ? v.own_within : v.own_cross;
    own[a].Add(v.slow[p]);
    own[b].Add(v.slow[p]);
  }
  v.suspect.assign(in.nodes.size(), 0);
  for (size_t i = 0; i < in.nodes.size(); ++i)
    v.suspect[i] = v.own_within[i].measured > 0 && v.own_within[i].MostlySlow();
  v.rows.assign(level.names.size(), {});
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    const uint32_t a = in.pairs[p].client, b = in.pairs[p].server;
    if (!v.reaches[p] || v.suspect[a] || v.suspect[b]) continue;
    const int32_t ga = level.group[a], gb = level.group[b];
    v.rows[ga][gb].Add(v.slow[p]);
    if (ga != gb) v.rows[gb][ga].Add(v.slow[p]);
  }
  return v;
}

struct Element {
  PathFault::Kind kind = PathFault::Kind::kPath;
  size_t level = 0;
  int32_t a = -1, b = -1;  // groups; for kAbove, a is the parent's index in Level::parent_names
  uint32_t measured = 0, within = 0, within_slow = 0, stayed = 0, recovered = 0;
  std::vector<uint32_t> slow;
  double reference = 0;
};

// Whether the element's other evidence agrees with what it would be (over the pairs with no
// end slow with its own group-mates): a switch's every member slow with its group-mates and
// not mostly fine with other groups; a path's two groups fine within; an uplink's group fine
// within and not mostly fine with any other group; the switches above a set of groups: each
// fine within, no two of them mostly fine with each other. ("Not mostly fine" leaves room for
// a pair that noise lifted, where two pairs are all a plan measures between two groups.)
bool Shaped(const Element& e, const Level& level, const LevelView& v) {
  auto within_fine = [&](int32_t g) {
    auto it = v.rows[g].find(g);
    return it == v.rows[g].end() || !it->second.MostlySlow();
  };
  auto slow_to_others = [&](int32_t g, int32_t parent) {
    for (const auto& [other, counts] : v.rows[g]) {
      if (other == g || (parent >= 0 && level.parent_index[other] != parent)) continue;
      if (counts.MostlyFine()) return false;
    }
    return true;
  };
  switch (e.kind) {
    case PathFault::Kind::kSwitch:
      if (2 * e.within_slow <= e.within) return false;
      return std::all_of(level.members[e.a].begin(), level.members[e.a].end(), [&](uint32_t m) {
        return (v.own_within[m].measured == 0 || v.suspect[m]) && !v.own_cross[m].MostlyFine();
      });
    case PathFault::Kind::kPath:
      return within_fine(e.a) && within_fine(e.b);
    case PathFault::Kind::kUplink:
      return within_fine(e.a) && slow_to_others(e.a, -1);
    case PathFault::Kind::kAbove:
      for (size_t g = 0; g < level.names.size(); ++g) {
        if (level.parent_index[g] != e.a) continue;
        const auto group = static_cast<int32_t>(g);
        if (!within_fine(group) || !slow_to_others(group, e.a)) return false;
      }
      return true;
    case PathFault::Kind::kEcmpLink:  // ecmp.cc's, from flows
      return false;
  }
  return false;
}

// Every element the measured pairs cross, with its counts; those whose shape does not fit
// are dropped. A pair with an end that is slow with its own group-mates is no evidence about
// a path, an uplink or the switches above (it is the host's), only about its own switch.
std::vector<Element> Elements(const AnalysisInput& in, const std::vector<Level>& levels,
                              const std::vector<float>& logs, bool paths_only) {
  std::vector<Element> out;
  for (size_t l = 0; l < levels.size(); ++l) {
    const Level& level = levels[l];
    const LevelView v = ViewOf(levels, l, in, logs);
    if (!v.ref.valid || level.names.size() < 2) continue;
    std::map<std::tuple<int, int32_t, int32_t>, size_t> index;
    const size_t first = out.size();
    auto add = [&](PathFault::Kind kind, int32_t a, int32_t b, uint32_t p, bool within) {
      auto [it, fresh] = index.try_emplace({static_cast<int>(kind), a, b}, out.size());
      if (fresh) {
        Element e;
        e.kind = kind, e.level = l, e.a = a, e.b = b, e.reference = std::exp(v.ref.typical);
        out.push_back(std::move(e));
      }
      Element& e = out[it->second];
      const bool slow = v.slow[p];
      ++e.measured;
      if (slow) e.slow.push_back(p);
      if (within) ++e.within, e.within_slow += slow;
      if (in.pairs[p].attempts >= 2) ++(slow ? e.stayed : e.recovered);
    };
    for (uint32_t p = 0; p < in.pairs.size(); ++p) {
      if (!v.reaches[p]) continue;
      int32_t ga = level.group[in.pairs[p].client], gb = level.group[in.pairs[p].server];
      if (ga == gb) {
        if (!paths_only) add(PathFault::Kind::kSwitch, ga, -1, p, true);
        continue;
      }
      if (ga > gb) std::swap(ga, gb);
      if (!paths_only) {
        for (int32_t g : {ga, gb}) add(PathFault::Kind::kSwitch, g, -1, p, false);
      }
      if (v.suspect[in.pairs[p].client] || v.suspect[in.pairs[p].server]) continue;
      const bool siblings = level.parents[ga] == level.parents[gb];
      if (siblings) add(PathFault::Kind::kPath, ga, gb, p, false);
      if (paths_only) continue;
      for (int32_t g : {ga, gb}) add(PathFault::Kind::kUplink, g, -1, p, false);
      if (siblings) add(PathFault::Kind::kAbove, level.parent_index[ga], -1, p, false);
    }
    out.erase(std::remove_if(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                             [&](const Element& e) { return !Shaped(e, level, v); }),
              out.end());
  }
  return out;
}

// Whether one node is an end of every one of `pairs`.
bool OneEnd(const AnalysisInput& in, const std::vector<uint32_t>& pairs) {
  if (pairs.empty()) return false;
  for (uint32_t node : {in.pairs[pairs[0]].client, in.pairs[pairs[0]].server}) {
    if (std::all_of(pairs.begin(), pairs.end(), [&](uint32_t p) {
          return in.pairs[p].client == node || in.pairs[p].server == node;
        })) {
      return true;
    }
  }
  return false;
}

bool Consistent(const Element& e, bool require_retest) {
  if (e.slow.size() < kElementShare * e.measured) return false;
  return !require_retest || RetestsAgree(e.stayed, e.recovered);
}

PathFault FaultOf(const Element& e, const std::vector<Level>& levels, std::vector<uint32_t> pairs,
                  const std::vector<float>& logs) {
  const Level& level = levels[e.level];
  PathFault f;
  f.kind = e.kind;
  f.level = level.name;
  if (e.kind == PathFault::Kind::kAbove) {
    // The switches above the groups of one parent: named by the parent where the topology
    // has one, its members every node of those groups.
    f.a = level.parent_names[e.a];
    for (size_t g = 0; g < level.names.size(); ++g) {
      if (level.parent_index[g] != e.a) continue;
      f.members_a.insert(f.members_a.end(), level.members[g].begin(), level.members[g].end());
      f.b += (f.b.empty() ? "" : ",") + level.names[g];
    }
    std::sort(f.members_a.begin(), f.members_a.end());
  } else {
    f.a = level.names[e.a];
    f.members_a = level.members[e.a];
    if (e.b >= 0) f.b = level.names[e.b], f.members_b = level.members[e.b];
  }
  f.measured = e.measured;
  f.reference_gbps = e.reference;
  std::vector<double> slow;
  for (uint32_t p : pairs) slow.push_back(logs[p]);
  f.slow_median_gbps = std::exp(Median(slow));
  f.stayed = e.stayed;
  f.recovered = e.recovered;
  f.pairs = std::move(pairs);
  return f;
}

// The greedy cover: the consistent element explaining the most unexplained slow pairs, until
// none explains two more.
PathFaults Cover(const AnalysisInput& in, const std::vector<Level>& levels,
                 const std::vector<float>& logs, bool paths_only) {
  PathFaults out;
  out.pair_fault.assign(in.pairs.size(), -1);
  std::vector<Element> elements = Elements(in, levels, logs, paths_only);
  std::vector<char> taken(elements.size(), 0);
  for (;;) {
    int best = -1;
    std::vector<uint32_t> best_pairs;
    for (size_t k = 0; k < elements.size(); ++k) {
      const Element& e = elements[k];
      if (taken[k] || !Consistent(e, in.require_retest)) continue;
      std::vector<uint32_t> fresh;
      for (uint32_t p : e.slow) {
        if (out.pair_fault[p] < 0) fresh.push_back(p);
      }
      // Groups found from the figures rest on the figures alone: one more pair than a topology's.
      if (fresh.size() < (paths_only ? 3u : 2u) || OneEnd(in, fresh)) continue;
      if (best >= 0) {
        const Element& b = elements[best];
        if (std::make_tuple(-static_cast<int64_t>(fresh.size()), e.measured, e.level,
                            static_cast<int>(e.kind)) >=
            std::make_tuple(-static_cast<int64_t>(best_pairs.size()), b.measured, b.level,
                            static_cast<int>(b.kind))) {
          continue;
        }
      }
      best = static_cast<int>(k);
      best_pairs = std::move(fresh);
    }
    if (best < 0) break;
    taken[best] = 1;
    for (uint32_t p : best_pairs) out.pair_fault[p] = static_cast<int32_t>(out.faults.size());
    out.faults.push_back(FaultOf(elements[best], levels, std::move(best_pairs), logs));
  }
  return out;
}

// The topology's levels as given by the nodes' places.
std::vector<Level> TopologyLevels(const AnalysisInput& in) {
  std::vector<Level> levels(in.levels.size());
  for (size_t l = 0; l < in.levels.size(); ++l) {
    Level& level = levels[l];
    level.name = in.levels[l];
    level.group.assign(in.nodes.size(), -1);
    std::map<std::string, int32_t> ids;
    for (uint32_t i = 0; i < in.nodes.size(); ++i) {
      const auto& place = in.nodes[i].place;
      if (l >= place.size() || place[l].empty()) continue;
      auto [it, fresh] = ids.try_emplace(place[l], static_cast<int32_t>(level.names.size()));
      if (fresh) {
        level.names.push_back(place[l]);
        level.parents.push_back(l + 1 < place.size() ? place[l + 1] : "");
        level.members.emplace_back();
      }
      level.group[i] = it->second;
      level.members[it->second].push_back(i);
    }
    level.IndexParents();
  }
  return levels;
}

// Lines (log figures) between fast and slow pairs, coarsest first: Otsu's two-class split of
// the figures, kept only when the classes stand apart (a fabric's noise split in two does
// not), then the upper class split again the same way.
std::vector<double> SplitLines(std::vector<float> values, const v1::Thresholds& t) {
  std::sort(values.begin(), values.end());
  std::vector<double> lines;
  std::vector<float> scratch;
  size_t lo = 0;
  for (int depth = 0; depth < kMaxSplits && values.size() - lo >= 4; ++depth) {
    const size_t n = values.size() - lo;
    double total = 0;
    for (size_t k = lo; k < values.size(); ++k) total += values[k];
    double prefix = 0, best = -1;
    size_t cut = 0;
    for (size_t k = 1; k < n; ++k) {
      prefix += values[lo + k - 1];
      const double a = prefix / k, b = (total - prefix) / (n - k);
      const double between = static_cast<double>(k) * (n - k) * (a - b) * (a - b);
      if (between > best) best = between, cut = k;
    }
    const double ms =
        SortedMedianAndMad(values.begin() + lo, values.begin() + lo + cut, scratch).first;
    const auto [mf, fast_spread] =
        SortedMedianAndMad(values.begin() + lo + cut, values.end(), scratch);
    // Apart: the medians by min_effect, and the gap between the slow class's best figure and
    // the fast class's median both min_effect and twice max_robust_z of the fast class's
    // spread (the slow class's best an outlier even below the fast class's worst; how widely
    // the slow figures vary among themselves, as pairs share a slow uplink unevenly, does not
    // matter).
    const double gap = mf - values[lo + cut - 1];
    const double effect = -std::log(1 - t.min_effect());
    if (mf - ms < effect || gap < effect ||
        gap < 2 * t.max_robust_z() * std::max(fast_spread, kMinLogSpread)) {
      break;
    }
    lines.push_back(values[lo + cut]);
    lo += cut;
  }
  return lines;
}

size_t Root(std::vector<size_t>& parent, size_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

// The groups of nodes that pairs at or above `line` join; nodes alone are in none.
Level GroupsAbove(const AnalysisInput& in, const std::vector<float>& logs, double line) {
  const size_t n = in.nodes.size();
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    if (std::isnan(logs[p]) || logs[p] < line) continue;
    parent[Root(parent, in.pairs[p].client)] = Root(parent, in.pairs[p].server);
  }
  // Components in the order of their first node, so that names and order do not depend on
  // how the union went.
  std::map<size_t, size_t> order;
  std::vector<std::vector<uint32_t>> components;
  for (uint32_t i = 0; i < n; ++i) {
    auto [it, fresh] = order.try_emplace(Root(parent, i), components.size());
    if (fresh) components.emplace_back();
    components[it->second].push_back(i);
  }
  Level level;
  level.group.assign(n, -1);
  for (const auto& members : components) {
    // Two nodes fast with each other are no group: one lying agent, fast with the faulty node
    // it pairs with and as slow as that node with every other, would make a two-node "leaf"
    // whose slow path drains nobody. A two-node leaf is a group where the administrator's
    // topology says so (TopologyLevels).
    if (members.size() < kMinInferredGroup) continue;
    std::vector<std::string> names;
    for (size_t k = 0; k < members.size() && k < kNamedMembers; ++k)
      names.push_back(in.nodes[members[k]].name);
    std::string name = absl::StrJoin(names, ",");
    if (members.size() > kNamedMembers) absl::StrAppend(&name, ",... (", members.size(), " nodes)");
    for (uint32_t i : members) level.group[i] = static_cast<int32_t>(level.names.size());
    level.names.push_back(std::move(name));
    level.parents.emplace_back();
    level.members.push_back(members);
  }
  level.IndexParents();
  return level;
}

}  // namespace

PathFaults FindPathFaults(const AnalysisInput& in) {
  std::vector<float> logs(in.pairs.size());
  std::vector<float> measured;
  for (size_t p = 0; p < in.pairs.size(); ++p) {
    logs[p] = WorstLog(in.pairs[p]);
    if (!std::isnan(logs[p])) measured.push_back(logs[p]);
  }
  const std::vector<Level> topology = TopologyLevels(in);
  const bool placed = std::any_of(topology.begin(), topology.end(),
                                  [](const Level& l) { return l.names.size() >= 2; });
  if (placed) return Cover(in, topology, logs, /*paths_only=*/false);
  for (double line : SplitLines(std::move(measured), in.thresholds)) {
    Level groups = GroupsAbove(in, logs, line);
    if (groups.names.size() < 2) continue;
    PathFaults found = Cover(in, {groups}, logs, /*paths_only=*/true);
    if (!found.faults.empty()) return found;
  }
  PathFaults none;
  none.pair_fault.assign(in.pairs.size(), -1);
  return none;
}

}  // namespace fabricctl::controller
