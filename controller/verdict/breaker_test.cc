// The drain breaker (controller/verdict/breaker.h) on reports the report builder finished.
#include "controller/verdict/breaker.h"

#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "report/builder.h"
#include "report/findings.h"

namespace fabricctl::controller {
namespace {

std::vector<std::string> Drain(const v1::Report& report) {
  return {report.summary().drain().begin(), report.summary().drain().end()};
}

const absl::Time kGenerated = absl::FromUnixSeconds(1700000000);

}  // namespace

TEST_CASE("The drain breaker: a verdict draining too many of its nodes drains none, and says so") {
  v1::DrainBreaker breaker;
  breaker.set_max_share(0.1);
  breaker.set_min_nodes(3);
  auto sweep = [&](int nodes, int slow, uint32_t vouched = 0) {
    report::ReportBuilder builder("sweep", "test");
    for (int i = 0; i < nodes; ++i) {
      const std::string name = "node-" + std::to_string(i);
      builder.AddNode(name, v1::HEALTH_OK);
      if (i < slow) builder.AddFinding(report::Make(report::kind::kStragglerNode, name, "slow"));
    }
    v1::Report report = builder.Finish(kGenerated, absl::Seconds(1));
    ApplyBreaker(breaker, vouched, {}, &report);
    return report;
  };
  // Three of eight: no more than min_nodes, drained (a small job's bad hosts).
  CHECK(Drain(sweep(8, 3)).size() == 3);
  // Four of 64: 6 %, within max_share, drained.
  CHECK(Drain(sweep(64, 4)).size() == 4);
  // Four of eight: more than both, nobody drained; each finding stays, asking to investigate,
  // and one drain_breaker_open names them; the verdict is critical.
  const v1::Report held = sweep(8, 4);
  CHECK(Drain(held).empty());
  REQUIRE(held.findings_size() == 5);
  CHECK(held.findings(0).kind() == "straggler_node");
  CHECK(held.findings(0).action() == v1::ACTION_INVESTIGATE);
  CHECK(held.findings(0).evidence().at("drain_held") == "breaker");
  CHECK(held.findings(4).kind() == "drain_breaker_open");
  CHECK(held.findings(4).evidence().at("would_drain") == "node-0,node-1,node-2,node-3");
  CHECK(held.findings(4).evidence().at("judged") == "8");
  CHECK(held.summary().worst_severity() == v1::SEVERITY_CRITICAL);
  // The same four of eight measured in a job of 48 whose other 40 were vouched for (--max-age):
  // 8 %, drained.
  CHECK(Drain(sweep(8, 4, 40)).size() == 4);
  // max_share 1 is off; a breaker without max_share (no defaults applied) is none.
  breaker.set_max_share(1);
  CHECK(Drain(sweep(8, 8)).size() == 8);
  breaker.clear_max_share();
  CHECK(Drain(sweep(8, 8)).size() == 8);
  CHECK(HoldsDrains(
      [] {
        v1::DrainBreaker b;
        b.set_max_share(0.5);
        b.set_min_nodes(0);
        return b;
      }(),
      5, 8));
}

TEST_CASE("The drain breaker over a window: a wave of small verdicts is weighed as one") {
  v1::DrainBreaker breaker;
  breaker.set_max_share(0.1);
  breaker.set_min_nodes(3);
  // A job of 4 nodes (offset: its names), 2 of them bad, after the earlier verdicts.
  auto job = [&](int offset, EarlierDrains earlier) {
    report::ReportBuilder builder("sweep", "test");
    for (int i = offset; i < offset + 4; ++i) {
      const std::string name = "node-" + std::to_string(i);
      builder.AddNode(name, v1::HEALTH_OK);
      if (i < offset + 2)
        builder.AddFinding(report::Make(report::kind::kStragglerNode, name, "slow"));
    }
    v1::Report report = builder.Finish(kGenerated, absl::Seconds(1));
    ApplyBreaker(breaker, 0, earlier, &report);
    return report;
  };
  // Alone, two of four: a small job's bad hosts, drained.
  CHECK(Drain(job(0, {})).size() == 2);
  // After three such verdicts within the window (6 drained of 12 judged), the fourth's two
  // would make 8 of 16: held, and the finding says what the window drained.
  EarlierDrains earlier;
  for (int i = 0; i < 12; ++i) {
    earlier.judged.insert("node-" + std::to_string(100 + i));
    if (i % 4 < 2) earlier.drained.insert("node-" + std::to_string(100 + i));
  }
  earlier.verdicts = 3;
  const v1::Report held = job(0, earlier);
  CHECK(Drain(held).empty());
  const v1::Finding& open = held.findings(held.findings_size() - 1);
  REQUIRE(open.kind() == "drain_breaker_open");
  CHECK(open.evidence().at("would_drain") == "node-0,node-1");
  CHECK(open.evidence().at("judged") == "16");
  CHECK(open.evidence().at("drained_within_window").find("node-100") != std::string::npos);
  CHECK(open.detail().find("within breaker.window") != std::string::npos);
  // A verdict that drains nothing opens nothing, whatever the window drained.
  report::ReportBuilder quiet("sweep", "test");
  quiet.AddNode("node-9", v1::HEALTH_OK);
  v1::Report none = quiet.Finish(kGenerated, absl::Seconds(1));
  ApplyBreaker(breaker, 0, earlier, &none);
  CHECK(none.findings_size() == 0);
  CHECK(none.summary().worst_severity() == v1::SEVERITY_OK);
}

}  // namespace fabricctl::controller
