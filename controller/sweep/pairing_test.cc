#include "controller/sweep/pairing.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>

namespace fabricctl::controller {
namespace {

std::set<std::pair<uint32_t, uint32_t>> Unordered(const std::vector<Round>& rounds) {
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  for (const Round& round : rounds) {
    for (const Pair& p : round)
      pairs.insert({std::min(p.first, p.second), std::max(p.first, p.second)});
  }
  return pairs;
}

size_t PairCount(const std::vector<Round>& rounds) {
  size_t count = 0;
  for (const Round& round : rounds) count += round.size();
  return count;
}

}  // namespace

TEST_CASE("Full pairing covers every pair exactly once, no node twice in a round") {
  for (uint32_t n : {2u, 3u, 4u, 5u, 7u, 8u, 16u, 33u, 100u, 511u, 512u, 1023u, 1024u}) {
    INFO("n = " << n);
    auto rounds = FullRounds(n);
    REQUIRE(CheckRounds(rounds, n).ok());
    CHECK(rounds.size() == (n % 2 == 0 ? n - 1 : n));
    const size_t all = static_cast<size_t>(n) * (n - 1) / 2;
    CHECK(PairCount(rounds) == all);         // no pair twice...
    CHECK(Unordered(rounds).size() == all);  // ...and every pair once
    for (const Round& round : rounds) CHECK(round.size() == n / 2);
  }
  CHECK(FullRounds(1).empty());
  CHECK(FullRounds(0).empty());
}

TEST_CASE("Full pairing alternates client and server roles") {
  auto rounds = FullRounds(8);
  std::vector<int> clients(8, 0);
  for (const Round& round : rounds) {
    for (const Pair& p : round) ++clients[p.first];
  }
  for (int c : clients) {
    CHECK(c >= 2);
    CHECK(c <= 5);
  }
}

TEST_CASE("Quick pairing is one round of disjoint pairs, across groups when it can be") {
  auto quick = QuickRounds(9);
  REQUIRE(quick.size() == 1);
  CHECK(quick[0].size() == 4);
  CHECK(CheckRounds(quick, 9).ok());

  // Two racks of four: every pair crosses racks.
  std::vector<uint32_t> racks = {0, 0, 0, 0, 1, 1, 1, 1};
  auto across = QuickRounds(8, racks);
  REQUIRE(across.size() == 1);
  REQUIRE(across[0].size() == 4);
  CHECK(CheckRounds(across, 8).ok());
  for (const Pair& p : across[0]) CHECK(racks[p.first] != racks[p.second]);
}

TEST_CASE("Sample pairing draws k rounds with no repeated pair") {
  auto rounds = SampleRounds(64, 5, 42);
  REQUIRE(rounds.size() == 5);
  CHECK(CheckRounds(rounds, 64).ok());
  CHECK(PairCount(rounds) == 5 * 32);
  CHECK(Unordered(rounds).size() == 5 * 32);
  CHECK(SampleRounds(64, 5, 42) == rounds);  // the seed decides
  CHECK(SampleRounds(64, 5, 43) != rounds);
  CHECK(SampleRounds(6, 100, 1).size() == 5);  // at most the full plan
}

TEST_CASE("Packing puts arbitrary pairs into rounds without a node twice") {
  std::vector<Pair> pairs = {{0, 1}, {1, 2}, {2, 3}, {0, 3}, {4, 1}};
  auto rounds = PackRounds(pairs);
  CHECK(CheckRounds(rounds, 5).ok());
  CHECK(PairCount(rounds) == pairs.size());
  // First fit: {0-1, 2-3}, {1-2, 0-3}, and 4-1 needs a third (node 1 is busy in both).
  CHECK(rounds.size() == 3);
  CHECK(PackRounds({}).empty());
}

TEST_CASE("Pairing files name nodes; mistakes name the line") {
  std::vector<std::string> nodes = {"a", "b", "c", "d"};
  auto rounds = FileRounds("# two rounds\na:b c:d\n\na:c   b:d  # second\n", nodes);
  REQUIRE(rounds.ok());
  REQUIRE(rounds->size() == 2);
  CHECK((*rounds)[0] == Round{{0, 1}, {2, 3}});
  CHECK((*rounds)[1] == Round{{0, 2}, {1, 3}});

  auto unknown = FileRounds("a:b\nc:x\n", nodes);
  REQUIRE_FALSE(unknown.ok());
  CHECK(std::string(unknown.status().message()) ==
        "pairing file line 2: node 'x' is not in the sweep");
  auto twice = FileRounds("a:b b:c\n", nodes);
  REQUIRE_FALSE(twice.ok());
  CHECK(std::string(twice.status().message()).find("uses a node twice") != std::string::npos);
  CHECK_FALSE(FileRounds("a-b\n", nodes).ok());
  CHECK_FALSE(FileRounds("# nothing\n", nodes).ok());
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {

TEST_CASE("Topology rounds: every pair within small leaves, two across every two leaves") {
  // Six nodes on two leaves of three.
  const std::vector<std::vector<int32_t>> groups = {{0, 0, 0, 1, 1, 1}};
  const auto rounds = TopologyRounds(6, groups);
  REQUIRE(CheckRounds(rounds, 6).ok());
  std::set<std::pair<uint32_t, uint32_t>> within, across;
  std::set<uint32_t> cross_ends;
  for (const Round& round : rounds) {
    for (const Pair& p : round) {
      const auto key = std::minmax(p.first, p.second);
      (groups[0][p.first] == groups[0][p.second] ? within : across).insert(key);
      if (groups[0][p.first] != groups[0][p.second]) cross_ends.insert({p.first, p.second});
    }
  }
  CHECK(within.size() == 6);
  CHECK(across.size() == 2);
  CHECK(cross_ends.size() == 4);  // the two pairs share no end
}

TEST_CASE("Topology rounds: a large fabric is covered by pairs that grow with its links") {
  // 16,384 nodes: 512 leaves of 32 under 32 spines of 16 leaves.
  const uint32_t n = 16384;
  std::vector<std::vector<int32_t>> groups(2, std::vector<int32_t>(n));
  for (uint32_t i = 0; i < n; ++i)
    groups[0][i] = static_cast<int32_t>(i / 32), groups[1][i] = static_cast<int32_t>(i / 512);
  const auto rounds = TopologyRounds(n, groups);
  REQUIRE(CheckRounds(rounds, n).ok());
  std::map<std::pair<int32_t, int32_t>, uint32_t> leaf_pairs;
  uint64_t pairs = 0, within = 0;
  for (const Round& round : rounds) {
    for (const Pair& p : round) {
      ++pairs;
      const int32_t a = groups[0][p.first], b = groups[0][p.second];
      if (a == b)
        ++within;
      else if (groups[1][p.first] == groups[1][p.second])
        ++leaf_pairs[std::minmax(a, b)];
    }
  }
  CHECK(within == 512 * 8 * 16);         // 8 rounds of 16 pairs in each leaf
  CHECK(leaf_pairs.size() == 32 * 120);  // every two leaves of a spine...
  for (const auto& [key, count] : leaf_pairs) CHECK(count == 2);  // ...crossed twice
  CHECK(pairs < 200000);                                          // a full mesh: 134 million
  CHECK(rounds.size() < 100);                                     // a full mesh: 16,383 rounds
}

}  // namespace fabricctl::controller
