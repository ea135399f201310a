// The sweep's re-tests and localisation against fake agents (tests/testing/sweeps.h): what is
// measured again, how much, within what budget, and what is named from it.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/config.h"
#include "catch2/catch.hpp"
#include "controller/sweep/assemble.h"
#include "tests/testing/sweeps.h"

namespace fabricctl::controller::sweep {
namespace {

TEST_CASE("re-test: a pair that fails once is measured again and counts as measured") {
  Harness h("retest", {"a", "b", "c", "d"});
  h.fake->FailNext("a", "b", absl::InternalError("connection reset"));
  h.fake->FailNext("b", "a", absl::InternalError("connection reset"));
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(report->findings_size() == 0);
  CHECK(h.fake->Measurements("a", "b") == 2);  // the re-test's, both directions
  for (const auto& pair : report->health().pairs()) {
    const bool ab =
        (pair.node() == "a" && pair.peer() == "b") || (pair.node() == "b" && pair.peer() == "a");
    CHECK(pair.attempts() == (ab ? 2u : 1u));
  }
}

TEST_CASE("re-test: a pair that keeps failing is a probe_failed finding on that pair") {
  Harness h("retest_fail", {"a", "b", "c", "d"});
  h.fake->FailNext("a", "b", absl::InternalError("connection reset"), 5);
  h.fake->FailNext("b", "a", absl::InternalError("connection reset"), 5);
  auto report = h.Sweep();
  REQUIRE(report.ok());
  REQUIRE(report->findings_size() == 1);
  CHECK(report->findings(0).kind() == "probe_failed");
  CHECK(report->findings(0).detail().find("connection reset") != std::string::npos);
}

TEST_CASE("localisation: a quick sweep re-pairs the ends of a slow pair and names the slow node") {
  Harness h("localise", {"a", "b", "c", "d"});
  h.fake->Add("d", 3);  // d offers 3 Gb/s, the others 10
  auto report = h.Sweep(v1::PAIRING_QUICK);
  REQUIRE(report.ok());
  for (const auto& pair : report->health().pairs()) {
    for (const auto& r : pair.results()) {
      UNSCOPED_INFO(r.node() << "->" << r.peer() << " "
                             << (r.bw_size() ? r.bw(0).bw_avg_gbps() : -1) << " Gb/s, concurrency "
                             << r.concurrency() << ", attempts " << pair.attempts());
    }
  }
  CHECK(Kinds(*report) == std::vector<std::string>{"straggler_node:d"});
  CHECK(report->health().pairs_size() > 2);  // the quick round's two, and the re-pairings
  REQUIRE(report->summary().drain_size() == 1);
  CHECK(report->summary().drain(0) == "d");
}

TEST_CASE("a slow node costs two re-tests (two peers confirm it), not one per peer") {
  Harness h("slow_node", {"a", "b", "c", "d", "e", "f"});
  h.fake->Add("c", 2);
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(Kinds(*report) == std::vector<std::string>{"straggler_node:c"});
  int retested = 0;
  for (const auto& pair : report->health().pairs()) retested += pair.attempts() > 1;
  CHECK(retested == 2);
}

TEST_CASE(
    "a node slow only in the first rounds: cleared by its re-tests, and no link named on one "
    "measurement") {
  Harness h("passing_burst", {"a", "b", "c", "d", "e"});
  h.fake->SlowFirst("d", 2, 8);  // every first measurement with d: 4 peers, 2 directions
  auto report = h.Sweep();
  REQUIRE(report.ok());
  CHECK(Kinds(*report).empty());
  // d's re-tests recovered, so it is cleared, and its other flagged pairs were measured again
  // rather than left as slow links on one measurement each.
  for (const char* peer : {"a", "b", "c", "e"}) {
    INFO(peer);
    CHECK(h.fake->Measurements("d", peer) > h.fake->Measurements("a", "b"));
  }
}

TEST_CASE("a node whose one re-test is slow by chance is not blamed: two peers must confirm it") {
  Harness h("chance_retest", {"a", "b", "c", "d", "e"});
  h.fake->SlowFirst("d", 2, 10);  // its first measurements, and the first re-test's two directions
  auto report = h.Sweep();
  REQUIRE(report.ok());
  for (const auto& k : Kinds(*report)) CHECK(k.rfind("straggler_node", 0) != 0);
  CHECK(report->summary().drain_size() == 0);
}

TEST_CASE("re-tests within a budget: the first round of each pass, later ones while it lasts") {
  // Every client half takes 30 ms; d is slow in its first measurements only, so that each pass
  // has several rounds of its flagged pairs (each pair shares d).
  auto run = [](double budget) {
    Harness h(absl::StrCat("budget_", budget), {"a", "b", "c", "d", "e"});
    for (const char* n : {"a", "b", "c", "d", "e"}) h.fake->SetDelay(n, absl::Milliseconds(30));
    h.fake->SlowFirst("d", 2, 8);
    SweepOptions options;
    options.config = DefaultConfig();
    options.config.mutable_sweep()->set_retest_budget(budget);
    h.runner->SetConfig(options.config);
    auto report = h.Sweep();
    REQUIRE(report.ok());
    return *report;
  };
  const v1::Report tight = run(0.01), loose = run(10);
  INFO("tight: " << tight.summary().ShortDebugString()
                 << "\nloose: " << loose.summary().ShortDebugString());
  // A budget of 1 % of the measuring rounds is spent by the first round of the first pass.
  CHECK(tight.summary().retests_skipped() > 0);
  CHECK(tight.summary().retest_rounds() >= 1);
  CHECK(tight.summary().retest_rounds() < loose.summary().retest_rounds());
  CHECK(loose.summary().retests_skipped() == 0);
  CHECK(loose.summary().retested_pairs() > tight.summary().retested_pairs());
  // Nothing is named on pairs the budget left unmeasured.
  CHECK(Kinds(tight).empty());
  CHECK(Kinds(loose).empty());
}

TEST_CASE("re-tests within a budget: a pair left by two passes is one pair left, not two") {
  RetestStats stats;
  const std::vector<std::vector<Round>> pass = {{{{0, 1}}, {{0, 2}, {1, 3}}}};
  stats.Count(pass, 1);  // the first round ran: (0, 1) measured, (0, 2) and (1, 3) left
  stats.Count(pass, 1);  // the next pass leaves the same two
  CHECK(stats.skipped() == 2);
  CHECK(stats.pairs == 2);
  stats.Count(pass, 2);  // a later pass measures them: nothing is left
  CHECK(stats.skipped() == 0);
  CHECK(stats.rounds == 4);
  // A pair in a round that ran and again, the other way round, in one that did not: measured.
  stats.Count({{{{0, 4}}, {{4, 0}}}}, 1);
  CHECK(stats.skipped() == 0);
}

TEST_CASE("re-tests within a budget: a clear deficit not yet re-tested before a third attempt") {
  // Two links of one node at 30 % of the rate: their re-tests share b, so they are two rounds,
  // and a budget of 1 % runs only each pass's first round. The first pass re-tests one link;
  // the second must take the other, not measure the first a third time, or the other is never
  // named.
  Harness h("budget_two_links", {"a", "b", "c", "d", "e", "f"});
  for (const char* n : {"a", "b", "c", "d", "e", "f"}) h.fake->SetDelay(n, absl::Milliseconds(30));
  h.fake->SetLink("b", "d", 0.3);
  h.fake->SetLink("b", "f", 0.3);
  v1::Config config = DefaultConfig();
  config.mutable_sweep()->set_retest_budget(0.01);
  h.runner->SetConfig(config);
  auto report = h.Sweep();
  REQUIRE(report.ok());
  INFO(report->summary().ShortDebugString());
  REQUIRE(report->summary().retest_rounds() == 2);
  std::vector<std::string> kinds;
  for (const auto& f : report->findings()) {
    kinds.push_back(f.kind() + ":" + std::min(f.node(), f.peer()) + std::max(f.node(), f.peer()));
  }
  std::sort(kinds.begin(), kinds.end());
  CHECK(kinds == std::vector<std::string>{"slow_link:bd", "slow_link:bf"});
}

TEST_CASE("a slow link beside a host that only sends slowly: both named, the link on a re-test") {
  Harness h("egress_and_link", {"a", "b", "c", "d", "e", "f"});
  h.fake->SetEgress("e", 2);
  h.fake->SetLink("b", "e", 0.2);  // b -> e at 2 as well, which e's transmit side does not explain
  auto report = h.Sweep();
  REQUIRE(report.ok());
  std::vector<std::string> kinds;
  for (const auto& f : report->findings()) {
    std::vector<std::string> ends{f.node(), f.peer()};
    std::sort(ends.begin(), ends.end());
    kinds.push_back(f.kind() + ":" + ends[0] + ends[1]);
  }
  std::sort(kinds.begin(), kinds.end());
  CHECK(kinds == std::vector<std::string>{"slow_link:be", "straggler_node:e"});
}

TEST_CASE("a link that flaps is named unstable from its disagreeing attempts, not best-of") {
  Harness h("flapping", {"a", "b", "c", "d", "e", "f"});
  h.fake->FlapLink("b", "d", 0.1);  // slow, fine, slow: its best is typical, its worst a tenth
  auto report = h.Sweep();
  REQUIRE(report.ok());
  REQUIRE(report->findings_size() == 1);
  const v1::Finding& f = report->findings(0);
  CHECK(f.kind() == "unstable");
  CHECK(std::min(f.node(), f.peer()) + std::max(f.node(), f.peer()) == "bd");
  CHECK(f.severity() == v1::SEVERITY_WARNING);
  CHECK(f.evidence().at("attempts") == "3");
  CHECK(f.detail().find("attempts disagree over 3 attempts") != std::string::npos);
}

TEST_CASE("loss: a link that keeps losing is lossy_link; a chance loss its re-test clears is not") {
  Harness h("loss", {"a", "b", "c", "d", "e", "f"});
  h.fake->LoseOnLink("a", "b", 0.03, 2);  // the first measurement's two directions, then none
  h.fake->LoseOnLink("c", "e", 0.03);     // every measurement
  auto report = h.Sweep();
  REQUIRE(report.ok());
  REQUIRE(report->findings_size() == 1);
  const v1::Finding& f = report->findings(0);
  CHECK(f.kind() == "lossy_link");
  CHECK(std::min(f.node(), f.peer()) + std::max(f.node(), f.peer()) == "ce");
  CHECK(h.fake->Measurements("a", "b") == 4);  // re-tested, both directions
  CHECK(f.evidence().at("loss_rate") == "0.03000");
}

}  // namespace
}  // namespace fabricctl::controller::sweep
