#include "controller/verdict/regression.h"

#include <catch2/catch.hpp>

namespace fabricctl::controller {
namespace {

TEST_CASE("a regression in either direction of a pair is found against the same direction") {
  v1::Report baseline;
  v1::PairHealth* p = baseline.mutable_health()->add_pairs();
  p->set_node("a");
  p->set_peer("b");
  p->set_bw_gbps(100);          // a -> b
  p->set_bw_reverse_gbps(100);  // b -> a
  // Only b -> a fell: a sweep that compared the forward direction alone would miss it.
  const std::vector<PairFigure> now = {{"a", "b", 99}, {"b", "a", 40}};
  auto found = Regressions(baseline, 7, now, 0.9, "tcp_bw");
  REQUIRE(found.size() == 1);
  CHECK(found[0].node() == "b");
  CHECK(found[0].peer() == "a");
  CHECK(found[0].evidence().at("baseline_gbps") == "100.00");
  // A baseline with one direction only is compared with that one, whichever way round.
  p->clear_bw_reverse_gbps();
  CHECK(Regressions(baseline, 7, {{"b", "a", 40}}, 0.9, "tcp_bw").size() == 1);
}

}  // namespace
}  // namespace fabricctl::controller
