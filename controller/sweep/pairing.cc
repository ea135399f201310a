#include "controller/sweep/pairing.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace fabricctl::controller {

std::vector<Round> FullRounds(uint32_t n) {
  std::vector<Round> rounds;
  if (n < 2) return rounds;
  const uint32_t m = n % 2 == 0 ? n : n + 1;  // m-1 is the bye when n is odd
  // Position 0 stays; positions 1..m-1 rotate one step per round.
  std::vector<uint32_t> ring(m);
  std::iota(ring.begin(), ring.end(), 0);
  for (uint32_t r = 0; r + 1 < m; ++r) {
    Round round;
    for (uint32_t i = 0; i < m / 2; ++i) {
      uint32_t a = ring[i], b = ring[m - 1 - i];
      if (a >= n || b >= n) continue;  // the bye
      // Alternate which side is the client so that each node serves about half the time.
      round.push_back(r % 2 == 0 ? Pair{a, b} : Pair{b, a});
    }
    rounds.push_back(std::move(round));
    std::rotate(ring.begin() + 1, ring.end() - 1, ring.end());
  }
  return rounds;
}

std::vector<Round> QuickRounds(uint32_t n, const std::vector<uint32_t>& groups) {
  if (n < 2) return {};
  if (groups.size() != n) return {FullRounds(n).front()};
  // Interleave the groups (largest first), then pair position i with position i + n/2: the
  // two halves of an interleaving come from different groups wherever the sizes allow.
  std::map<uint32_t, std::vector<uint32_t>> by_group;
  for (uint32_t i = 0; i < n; ++i) by_group[groups[i]].push_back(i);
  std::vector<std::vector<uint32_t>> lists;
  for (auto& [group, members] : by_group) lists.push_back(std::move(members));
  std::stable_sort(lists.begin(), lists.end(),
                   [](const auto& a, const auto& b) { return a.size() > b.size(); });
  std::vector<uint32_t> order;
  for (const auto& list : lists) order.insert(order.end(), list.begin(), list.end());
  Round round;
  const uint32_t half = n / 2;
  for (uint32_t i = 0; i < half; ++i) round.push_back({order[i], order[i + half + n % 2]});
  return {round};
}

std::vector<Round> SampleRounds(uint32_t n, uint32_t k, uint64_t seed) {
  std::vector<Round> all = FullRounds(n);
  std::mt19937_64 random(seed);
  std::vector<uint32_t> label(n);
  std::iota(label.begin(), label.end(), 0);
  std::shuffle(label.begin(), label.end(), random);
  std::shuffle(all.begin(), all.end(), random);
  if (k < all.size()) all.resize(k);
  for (Round& round : all) {
    for (Pair& pair : round) pair = {label[pair.first], label[pair.second]};
  }
  return all;
}

absl::StatusOr<std::vector<Round>> FileRounds(const std::string& text,
                                              const std::vector<std::string>& nodes) {
  std::map<std::string, uint32_t> index;
  for (uint32_t i = 0; i < nodes.size(); ++i) index[nodes[i]] = i;
  std::vector<Round> rounds;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = line.substr(0, line.find('#'));
    Round round;
    std::vector<bool> used(nodes.size(), false);
    for (absl::string_view token :
         absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
      std::vector<std::string> ends = absl::StrSplit(token, ':');
      if (ends.size() != 2) {
        return absl::InvalidArgumentError(
            absl::StrCat("pairing file line ", line_number, ": '", token, "' is not a:b"));
      }
      uint32_t ids[2];
      for (int e = 0; e < 2; ++e) {
        auto it = index.find(ends[e]);
        if (it == index.end()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "pairing file line ", line_number, ": node '", ends[e], "' is not in the sweep"));
        }
        ids[e] = it->second;
      }
      if (ids[0] == ids[1] || used[ids[0]] || used[ids[1]]) {
        return absl::InvalidArgumentError(absl::StrCat("pairing file line ", line_number, ": '",
                                                       token, "' uses a node twice in one round"));
      }
      used[ids[0]] = used[ids[1]] = true;
      round.push_back({ids[0], ids[1]});
    }
    if (!round.empty()) rounds.push_back(std::move(round));
  }
  if (rounds.empty()) return absl::InvalidArgumentError("pairing file has no pairs");
  return rounds;
}

namespace {

// Members of each group of a level; unknown nodes (-1) together as one more group.
std::vector<std::vector<uint32_t>> MembersOf(const std::vector<int32_t>& group) {
  std::map<int32_t, std::vector<uint32_t>> by;
  for (uint32_t i = 0; i < group.size(); ++i) by[group[i]].push_back(i);
  std::vector<std::vector<uint32_t>> out;
  for (auto& [g, members] : by) out.push_back(std::move(members));
  return out;
}

// Two pairs between groups a and b, the ends taken in turn from each group's members.
void CrossPairs(const std::vector<uint32_t>& a, size_t& next_a, const std::vector<uint32_t>& b,
                size_t& next_b, std::vector<Pair>& out) {
  const size_t count = std::min<size_t>(2, std::max(a.size(), b.size()));
  for (size_t k = 0; k < count; ++k) {
    out.push_back({a[next_a++ % a.size()], b[next_b++ % b.size()]});
  }
}

}  // namespace

std::vector<Round> TopologyRounds(uint32_t n, const std::vector<std::vector<int32_t>>& groups,
                                  uint32_t leaf_peers) {
  if (n < 2) return {};
  const std::vector<int32_t> leaf = groups.empty() ? std::vector<int32_t>(n, -1) : groups[0];
  // Within each leaf: its circle method's first rounds, relabelled to its members.
  std::vector<Round> rounds;
  for (const auto& members : MembersOf(leaf)) {
    std::vector<Round> own = FullRounds(static_cast<uint32_t>(members.size()));
    // A small leaf (an odd one has a round more, with a bye) keeps every pair.
    if (members.size() > leaf_peers + 1 && own.size() > leaf_peers) own.resize(leaf_peers);
    for (size_t r = 0; r < own.size(); ++r) {
      if (rounds.size() <= r) rounds.emplace_back();
      for (const Pair& p : own[r]) rounds[r].push_back({members[p.first], members[p.second]});
    }
  }
  // Between sibling groups at each level, two pairs each.
  std::vector<Pair> cross;
  for (size_t l = 0; l < std::max<size_t>(groups.size(), 1); ++l) {
    const std::vector<int32_t>& level = groups.empty() ? leaf : groups[l];
    const std::vector<std::vector<uint32_t>> members = MembersOf(level);
    std::vector<size_t> next(members.size(), 0);
    auto parent = [&](size_t g) {
      return l + 1 < groups.size() ? groups[l + 1][members[g][0]] : -1;
    };
    for (size_t a = 0; a < members.size(); ++a) {
      for (size_t b = a + 1; b < members.size(); ++b) {
        if (parent(a) == parent(b)) CrossPairs(members[a], next[a], members[b], next[b], cross);
      }
    }
  }
  for (Round& round : PackRounds(cross, n)) rounds.push_back(std::move(round));
  return rounds;
}

std::vector<Round> PackRounds(const std::vector<Pair>& pairs) {
  uint32_t n = 0;
  for (const Pair& p : pairs) n = std::max({n, p.first + 1, p.second + 1});
  return PackRounds(pairs, n);
}

std::vector<Round> PackRounds(const std::vector<Pair>& pairs, uint32_t n) {
  std::vector<Round> rounds;
  std::vector<std::vector<bool>> used;  // per round, per node
  // Where each node's next free round starts: a node's rounds before it are all taken.
  std::vector<size_t> first_free(n, 0);
  for (const Pair& p : pairs) {
    size_t r = std::max(first_free[p.first], first_free[p.second]);
    while (r < rounds.size() && (used[r][p.first] || used[r][p.second])) ++r;
    if (r == rounds.size()) {
      rounds.emplace_back();
      used.emplace_back(n, false);
    }
    rounds[r].push_back(p);
    used[r][p.first] = used[r][p.second] = true;
    for (uint32_t end : {p.first, p.second}) {
      while (first_free[end] < rounds.size() && used[first_free[end]][end]) ++first_free[end];
    }
  }
  return rounds;
}

absl::Status CheckRounds(const std::vector<Round>& rounds, uint32_t n) {
  for (size_t r = 0; r < rounds.size(); ++r) {
    std::vector<bool> used(n, false);
    for (const Pair& p : rounds[r]) {
      if (p.first >= n || p.second >= n || p.first == p.second) {
        return absl::InternalError(absl::StrCat("round ", r, ": bad pair"));
      }
      if (used[p.first] || used[p.second]) {
        return absl::InternalError(absl::StrCat("round ", r, ": a node appears twice"));
      }
      used[p.first] = used[p.second] = true;
    }
  }
  return absl::OkStatus();
}

}  // namespace fabricctl::controller
