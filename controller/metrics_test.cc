#include "controller/metrics.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "tests/testing/testing.h"

namespace fabricctl::controller {
namespace {

std::string TempDb(const std::string& name) { return testing::FreshDbPath(name); }

void Register(Store& store, const std::string& name, absl::Time now) {
  v1::NodeInventory inv;
  inv.set_node_name(name);
  inv.set_agent_address(name + ":7401");
  REQUIRE(store.UpsertNode(inv, now).ok());
}

// A finished sweep over `nodes` (status by node) with one tcp_bw/tcp_lat pair a-b.
int64_t Finish(Store& store, int64_t finished_s,
               const std::map<std::string, v1::HealthStatus>& nodes, double bw_gbps,
               const std::vector<std::pair<std::string, v1::Severity>>& findings = {}) {
  v1::SweepRequest request;
  auto id = store.CreateSweep(request, absl::FromUnixSeconds(finished_s - 10));
  REQUIRE(id.ok());
  v1::Report report;
  report.set_source("sweep");
  report.set_generator("fabricctl 0.2.0");
  report.mutable_sweep()->set_sweep_id(*id);
  report.mutable_sweep()->set_state(v1::SWEEP_COMPLETED);
  report.mutable_sweep()->add_probes(v1::TCP_BW);
  report.mutable_sweep()->add_probes(v1::TCP_LAT);
  report.mutable_sweep()->mutable_finished()->set_seconds(finished_s);
  for (const auto& [name, status] : nodes) {
    auto* n = report.mutable_health()->add_nodes();
    n->set_node(name);
    n->set_status(status);
    n->mutable_pass()->set_earned(status == v1::HEALTH_OK);  // as the verdict would decide it
    n->mutable_pass()->set_ends(status != v1::HEALTH_OK);
  }
  if (bw_gbps > 0) {
    auto* p = report.mutable_health()->add_pairs();
    p->set_node("a");
    p->set_peer("b");
    p->set_bw_gbps(bw_gbps);
    p->set_lat_us(20);
  }
  for (const auto& [kind, severity] : findings) {
    auto* f = report.add_findings();
    f->set_kind(kind);
    f->set_severity(severity);
    if (severity > report.summary().worst_severity())
      report.mutable_summary()->set_worst_severity(severity);
  }
  REQUIRE(store.FinishSweep(*id, report).ok());
  return *id;
}

TEST_CASE(
    "/metrics keeps each node's and pair's last value with its time; counters count new sweeps") {
  auto opened = Store::Open(TempDb("metrics.db"));
  REQUIRE(opened.ok());
  Store& store = **opened;
  const absl::Time now = absl::FromUnixSeconds(100000);
  for (const char* n : {"a", "b", "c"}) Register(store, n, now);
  Finish(store, 1000, {{"a", v1::HEALTH_OK}, {"b", v1::HEALTH_OK}, {"c", v1::HEALTH_CRITICAL}}, 80);
  Finish(store, 2000, {{"a", v1::HEALTH_OK}, {"b", v1::HEALTH_WARNING}}, 0);  // c not in it

  ControllerMetrics metrics(&store, absl::Hours(1e6), [now] { return now; });
  std::string text = metrics.Render();
  INFO(text);
  // c kept its verdict from the sweep that last included it, with that sweep's time.
  CHECK(absl::StrContains(text, "fabricctl_node_status{node=\"c\"} 2\n"));
  CHECK(absl::StrContains(text, "fabricctl_node_last_sweep_timestamp_seconds{node=\"c\"} 1000\n"));
  CHECK(absl::StrContains(text, "fabricctl_node_status{node=\"b\"} 1\n"));
  CHECK(absl::StrContains(text, "fabricctl_node_last_sweep_timestamp_seconds{node=\"b\"} 2000\n"));
  // The pair a-b was not measured by the latest sweep: its last figure stays, dated.
  CHECK(absl::StrContains(
      text,
      "fabricctl_pair_bandwidth_bytes_per_second{node=\"a\",peer=\"b\",probe=\"tcp_bw\"} 1e+10\n"));
  CHECK(absl::StrContains(
      text, "fabricctl_pair_latency_seconds{node=\"a\",peer=\"b\",probe=\"tcp_lat\"} 2e-05\n"));
  CHECK(absl::StrContains(text,
                          "fabricctl_pair_last_measured_timestamp_seconds{node=\"a\",peer=\"b\","
                          "probe=\"tcp_bw\"} 1000\n"));
  // The latest sweep's own series, once each.
  CHECK(absl::StrContains(text, "fabricctl_sweep_worst_severity 0\n"));
  CHECK(absl::StrContains(text, "fabricctl_nodes{state=\"online\"} 3\n"));
  // a passed both sweeps; b passed the first, the second flagged it; c never passed.
  CHECK(absl::StrContains(text, "fabricctl_nodes_known_good 1\n"));
  // Its pass's age, for --max-age: a's, from the second sweep's end; none for b or c.
  CHECK(absl::StrContains(
      text, "fabricctl_node_pass_age_seconds{node=\"a\"} " +
                std::to_string(absl::ToInt64Seconds(now - absl::FromUnixSeconds(2000))) + "\n"));
  CHECK_FALSE(absl::StrContains(text, "fabricctl_node_pass_age_seconds{node=\"b\"}"));
  // History read at start is not counted as sweeps finished since.
  CHECK(absl::StrContains(text, "# TYPE fabricctl_sweeps_total counter\n"));
  CHECK(absl::StrContains(text, "fabricctl_sweeps_total{result=\"critical\"} 0\n"));
  CHECK(absl::StrContains(
      text, "fabricctl_findings_total{kind=\"tcp_fallback\",severity=\"critical\"} 0\n"));
  CHECK(absl::StrContains(text, "process_resident_memory_bytes "));
  CHECK(absl::StrContains(text, "process_cpu_seconds_total "));
  size_t count = 0;
  for (size_t at = 0; (at = text.find("# TYPE fabricctl_node_status ", at)) != std::string::npos;
       ++at)
    ++count;
  CHECK(count == 1);

  // A sweep finishing now is counted, and its figures replace the old ones.
  Finish(store, 3000, {{"a", v1::HEALTH_CRITICAL}, {"b", v1::HEALTH_OK}}, 40,
         {{"tcp_fallback", v1::SEVERITY_CRITICAL}});
  text = metrics.Render();
  CHECK(absl::StrContains(text, "fabricctl_sweeps_total{result=\"critical\"} 1\n"));
  CHECK(absl::StrContains(
      text, "fabricctl_findings_total{kind=\"tcp_fallback\",severity=\"critical\"} 1\n"));
  CHECK(absl::StrContains(text, "fabricctl_node_status{node=\"a\"} 2\n"));
  CHECK(absl::StrContains(
      text,
      "fabricctl_pair_bandwidth_bytes_per_second{node=\"a\",peer=\"b\",probe=\"tcp_bw\"} 5e+09\n"));
  // Read once: a scrape with nothing new counts nothing again.
  text = metrics.Render();
  CHECK(absl::StrContains(text, "fabricctl_sweeps_total{result=\"critical\"} 1\n"));

  // A node removed from the registry, and not in the latest sweep, leaves the exposition.
  REQUIRE(store.RemoveNodes({"c"}).ok());
  text = metrics.Render();
  CHECK_FALSE(absl::StrContains(text, "node=\"c\""));
}

TEST_CASE("/metrics reads every sweep that finished between two scrapes, however many") {
  auto opened = Store::Open(TempDb("metrics-burst.db"));
  REQUIRE(opened.ok());
  Store& store = **opened;
  const absl::Time now = absl::FromUnixSeconds(100000);
  for (const char* n : {"a", "b", "c"}) Register(store, n, now);
  ControllerMetrics metrics(&store, absl::Hours(1e6), [now] { return now; });
  // More than a page of sweeps; c is only in the first, which a newest-page-only read loses.
  const int burst = static_cast<int>(ControllerMetrics::kSeed) * 2 + 5;
  Finish(store, 1000, {{"a", v1::HEALTH_OK}, {"c", v1::HEALTH_CRITICAL}}, 80,
         {{"straggler_node", v1::SEVERITY_CRITICAL}});
  for (int i = 1; i < burst; ++i)
    Finish(store, 1000 + i, {{"a", v1::HEALTH_OK}, {"b", v1::HEALTH_OK}}, 80);
  const std::string text = metrics.Render();
  INFO(text.substr(0, 4000));
  CHECK(absl::StrContains(
      text, absl::StrFormat("fabricctl_sweeps_total{result=\"ok\"} %d\n", burst - 1)));
  CHECK(absl::StrContains(text, "fabricctl_sweeps_total{result=\"critical\"} 1\n"));
  CHECK(absl::StrContains(text, "fabricctl_node_status{node=\"c\"} 2\n"));
  CHECK(absl::StrContains(
      text, absl::StrFormat("fabricctl_node_last_sweep_timestamp_seconds{node=\"a\"} %d\n",
                            1000 + burst - 1)));
}

}  // namespace
}  // namespace fabricctl::controller
