#include "controller/sweep/companions.h"

#include <catch2/catch.hpp>

namespace fabricctl::controller::sweep {
namespace {

PairInput Measured(uint32_t a, uint32_t b, float load, float lat_us = 10) {
  PairInput p;
  p.client = a;
  p.server = b;
  p.forward.bw_gbps = 9;
  p.forward.concurrency = load;
  p.lat_us = lat_us;
  p.lat_concurrency = load;
  return p;
}

PairInput Dead(uint32_t a, uint32_t b) {
  PairInput p;
  p.client = a;
  p.server = b;
  p.status = PairStatus::kUnreachable;
  return p;
}

// Six nodes measured three pairs at a time; 2-3 measured alone (its round-mate 0-1 was dead).
AnalysisInput SixNodes() {
  AnalysisInput in;
  in.nodes.resize(6);
  in.pairs = {Dead(0, 1),        Measured(2, 3, 1, 30), Measured(0, 4, 3),
              Measured(1, 5, 3), Measured(4, 5, 3),     Measured(2, 4, 3)};
  return in;
}

TEST_CASE("a pair measured alone is re-tested beside companions up to a full round's load") {
  const AnalysisInput in = SixNodes();
  CHECK(FullRoundLoad(in) == Approx(3));
  CHECK(TakenLight(in.pairs[1], 3));
  CHECK_FALSE(TakenLight(in.pairs[2], 3));
  CHECK_FALSE(TakenLight(in.pairs[0], 3));  // failed: no figure to have taken
  std::vector<Round> rounds = PackRounds({{0, 1}, {2, 3}});
  REQUIRE(rounds.size() == 1);
  const std::vector<Round> companions = AddCompanions(in, rounds);
  // The dead pair leaves for a round of its own: beside 2-3 it would load nothing again.
  REQUIRE(rounds.size() == 2);
  CHECK(rounds[0] == Round{{2, 3}});
  CHECK(rounds[1] == Round{{0, 1}});
  REQUIRE(companions.size() == 2);
  // Measured pairs clear of 2 and 3 (0 and 1 may serve: their re-test is another round's).
  CHECK(companions[0] == Round{{0, 4}, {1, 5}});
  CHECK(companions[1].empty());
}

TEST_CASE("rounds taken at full load, or full rounds of one pair, get no companions") {
  AnalysisInput in = SixNodes();
  in.pairs[1] = Measured(2, 3, 3, 30);  // slow, but measured as the others were
  std::vector<Round> rounds = PackRounds({{0, 1}, {2, 3}});
  const std::vector<Round> before = rounds;
  std::vector<Round> companions = AddCompanions(in, rounds);
  CHECK(rounds == before);
  REQUIRE(companions.size() == 1);
  CHECK(companions[0].empty());

  // A sweep whose rounds each hold one pair: alone is how every figure was taken.
  for (PairInput& p : in.pairs) {
    p.forward.concurrency = 1;
    p.lat_concurrency = 1;
  }
  companions = AddCompanions(in, rounds);
  CHECK(rounds == before);
  CHECK(companions[0].empty());
}

TEST_CASE("companions never share a node with the round, nor with each other") {
  AnalysisInput in;
  in.nodes.resize(5);
  in.pairs = {Measured(0, 1, 1), Measured(1, 2, 3), Measured(2, 3, 3),
              Measured(3, 4, 3), Measured(0, 4, 3), Measured(2, 4, 3)};
  std::vector<Round> rounds = PackRounds({{0, 1}});
  const std::vector<Round> companions = AddCompanions(in, rounds);
  REQUIRE(companions.size() == 1);
  // 0 and 1 are the round's; of 2-3, 3-4 and 2-4 only one fits.
  CHECK(companions[0] == Round{{2, 3}});
}

}  // namespace
}  // namespace fabricctl::controller::sweep
