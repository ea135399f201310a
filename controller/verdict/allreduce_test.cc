#include "controller/verdict/allreduce.h"

#include <catch2/catch.hpp>

namespace fabricctl::controller {
namespace {

// A ring of `members` whose busbw misses its floor (so that the slow link is looked for), each
// rank's link timed as `send_us` says (0: the rank timed none).
RingOutcome Ring(const std::vector<std::string>& members, const std::vector<double>& send_us) {
  RingOutcome ring;
  ring.members = members;
  ring.collective.set_kind(v1::ALLREDUCE);
  ring.collective.set_outcome(v1::PROBE_OK);
  ring.collective.set_node(members.front());
  v1::CollectivePoint* point = ring.collective.add_collective();
  point->set_size_bytes(64 << 20);
  point->set_time_us(100000);
  point->set_algbw_gbytes(0.6);
  point->set_busbw_gbytes(0.9);
  for (size_t r = 0; r < members.size(); ++r) {
    v1::ProbeResult rank;
    rank.set_node(members[r]);
    rank.add_collective()->set_send_time_us(send_us[r]);
    ring.rank_results.push_back(rank);
  }
  return ring;
}

v1::Thresholds Floor() {
  v1::Thresholds t;
  t.set_min_allreduce_busbw_gbytes(5);
  t.set_relative_allreduce_busbw(0.5);
  return t;
}

std::string Named(const std::vector<v1::Finding>& findings) {
  for (const auto& f : findings) {
    if (f.kind() == "allreduce_below_threshold") return f.node();
  }
  return "";
}

}  // namespace

TEST_CASE("a rank that timed no link (0) is no fastest link: its honest neighbour is not named") {
  // node-c's link (to node-d) is the slow one; node-a says 0 ("not timed", or a liar claiming
  // the fastest link). With the 0 among the fastest half, node-b's honest 900 us would be
  // twice the typical and named; without it, the typical is 900 and only node-c stands out.
  const auto findings =
      JudgeAllreduce(Ring({"node-a", "node-b", "node-c", "node-d"}, {0, 900, 5000, 950}), Floor());
  CHECK(Named(findings) == "node-c");
  // Every rank untimed: the ring's own figure still judged, no node named for it.
  const auto untimed = JudgeAllreduce(Ring({"node-a", "node-b", "node-c"}, {0, 0, 0}), Floor());
  REQUIRE(untimed.size() == 1);
  CHECK(untimed[0].kind() == "allreduce_below_threshold");
  CHECK(untimed[0].node().empty());
}

}  // namespace fabricctl::controller
