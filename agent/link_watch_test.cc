#include "agent/link_watch.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "absl/status/statusor.h"
#include "catch2/catch.hpp"
#include "probes/audit/audit.h"
#include "probes/audit/fec_stats.h"
#include "tests/testing/testing.h"

namespace fabricctl::agent {
namespace {

void Write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text << "\n";
}

// A node with one netdev and one RDMA port, every counter at zero.
struct Node {
  std::string root;
  std::string net;
  std::string port;
  explicit Node(const std::string& name) : root(testing::TempDir(name)) {
    net = root + "/sys/class/net/eth0/";
    port = root + "/sys/class/infiniband/mlx5_0/ports/1/counters/";
    for (const char* c : {"carrier_changes", "carrier_down_count", "statistics/rx_crc_errors",
                          "statistics/tx_errors"})
      Write(net + c, "0");
    for (const char* c : {"link_downed", "symbol_error", "link_error_recovery"})
      Write(port + c, "0");
  }
  WatchedLinks Links() const {
    WatchedLinks links;
    links.interfaces = {"eth0"};
    links.rdma_ports = {{"mlx5_0", 1}};
    return links;
  }
};

const absl::Time kStart = absl::FromUnixSeconds(1800000000);

// The watch's FEC source without a NIC: each netdev's counts as the test sets them (a netdev
// without them answers as veth and lo do), and how often each was asked.
struct FakeFec {
  std::map<std::string, probes::FecCounts> counts;
  std::map<std::string, absl::Status> failures;  // answered instead of the counts
  std::map<std::string, int> asked;
  FecSource Source() {
    return [this](const std::string& netdev) -> absl::StatusOr<probes::FecCounts> {
      ++asked[netdev];
      if (auto failure = failures.find(netdev); failure != failures.end()) return failure->second;
      auto it = counts.find(netdev);
      if (it == counts.end()) return absl::UnimplementedError(netdev + ": Operation not supported");
      return it->second;
    };
  }
};

std::vector<v1::Finding> Findings(const v1::AuditResult& r, const std::string& kind) {
  std::vector<v1::Finding> out;
  for (const auto& f : r.findings())
    if (f.kind() == kind) out.push_back(f);
  return out;
}

TEST_CASE("the link watch names a link that flapped between its samples") {
  Node node("watch_flap");
  const probes::SysfsRoot sysfs(node.root);
  LinkWatch watch(&sysfs, node.Links(), LinkWatchSettings(), "n1");
  watch.Sample(kStart);
  CHECK(watch.Result(kStart).outcome() == v1::AUDIT_SKIPPED);  // a baseline only
  watch.Sample(kStart + absl::Seconds(10));
  v1::AuditResult quiet = watch.Result(kStart + absl::Seconds(10));
  CHECK(quiet.outcome() == v1::AUDIT_RAN);
  CHECK(quiet.findings().empty());
  CHECK(quiet.observed().at("links") == "eth0 mlx5_0:1");
  CHECK(quiet.observed().at("interval") == "10s");  // how fresh check wants it

  // Down and up once: a warning (a re-seated cable).
  Write(node.net + "carrier_changes", "2");
  Write(node.net + "carrier_down_count", "1");
  watch.Sample(kStart + absl::Seconds(20));
  auto once = Findings(watch.Result(kStart + absl::Seconds(20)), "link_flapping");
  REQUIRE(once.size() == 1);
  CHECK(once[0].severity() == v1::SEVERITY_WARNING);
  CHECK(once[0].device() == "eth0");
  CHECK(once[0].evidence().at("flaps") == "1");

  // Twice more on the netdev and once on the RDMA port: critical, drained, each link named.
  Write(node.net + "carrier_changes", "6");
  Write(node.net + "carrier_down_count", "3");
  Write(node.port + "link_downed", "1");
  watch.Sample(kStart + absl::Seconds(30));
  v1::AuditResult flapping = watch.Result(kStart + absl::Seconds(30));
  auto found = Findings(flapping, "link_flapping");
  REQUIRE(found.size() == 2);
  CHECK(found[0].device() == "eth0");
  CHECK(found[0].evidence().at("flaps") == "3");
  CHECK(found[0].severity() == v1::SEVERITY_CRITICAL);
  CHECK(found[0].action() == v1::ACTION_DRAIN);
  CHECK(found[0].node() == "n1");
  CHECK(found[1].device() == "mlx5_0:1");
  CHECK(found[1].severity() == v1::SEVERITY_WARNING);
  CHECK(flapping.observed().at("eth0 flaps") == "3");

  // Quiet for the recovery window: healthy again, the flaps still in the observed figures.
  const absl::Time later = kStart + absl::Seconds(30) + absl::Hours(1) + absl::Seconds(10);
  watch.Sample(later);
  v1::AuditResult recovered = watch.Result(later);
  CHECK(recovered.findings().empty());
  CHECK(recovered.observed().at("eth0 flaps") == "3");
  // And past the window, forgotten.
  watch.Sample(later + absl::Hours(24));
  CHECK(watch.Events().empty());
}

TEST_CASE("a NIC that comes up after the agent started is watched from the next look") {
  Node node("watch_later");
  const probes::SysfsRoot sysfs(node.root);
  LinkWatchSettings settings;
  settings.discover_every = 2;
  int looks = 0;
  bool eth1_up = false;
  settings.discover = [&] {
    ++looks;
    WatchedLinks found = node.Links();
    if (eth1_up) found.interfaces.push_back("eth1");
    return found;
  };
  LinkWatch watch(&sysfs, node.Links(), settings, "n1");
  watch.Sample(kStart);
  // eth1 comes up, with carrier changes from its bring-up: none of them is counted.
  const std::string eth1 = node.root + "/sys/class/net/eth1/";
  Write(eth1 + "carrier_changes", "4");
  Write(eth1 + "carrier_down_count", "2");
  eth1_up = true;
  watch.Sample(kStart + absl::Seconds(10));
  CHECK(looks == 0);  // the first look is due at the second sample
  CHECK(watch.Result(kStart + absl::Seconds(10)).observed().at("links") == "eth0 mlx5_0:1");
  watch.Sample(kStart + absl::Seconds(20));
  CHECK(looks == 1);
  v1::AuditResult found = watch.Result(kStart + absl::Seconds(20));
  CHECK(found.observed().at("links") == "eth0 eth1 mlx5_0:1");
  CHECK(found.findings().empty());  // its first reading is its baseline
  // Its first flap once watched is named.
  Write(eth1 + "carrier_changes", "6");
  Write(eth1 + "carrier_down_count", "3");
  watch.Sample(kStart + absl::Seconds(30));
  auto flaps = Findings(watch.Result(kStart + absl::Seconds(30)), "link_flapping");
  REQUIRE(flaps.size() == 1);
  CHECK(flaps[0].device() == "eth1");
  CHECK(flaps[0].evidence().at("flaps") == "1");
  // A look that finds less keeps what it watched.
  eth1_up = false;
  watch.Sample(kStart + absl::Seconds(40));
  CHECK(looks == 2);
  CHECK(watch.Result(kStart + absl::Seconds(40)).observed().at("links") == "eth0 eth1 mlx5_0:1");
}

TEST_CASE("the link watch counts errors within the recovery window against watch.max_errors") {
  Node node("watch_errors");
  const probes::SysfsRoot sysfs(node.root);
  LinkWatchSettings settings;
  settings.max_errors = 10;
  LinkWatch watch(&sysfs, node.Links(), settings, "n1");
  watch.Sample(kStart);
  Write(node.port + "symbol_error", "4");
  watch.Sample(kStart + absl::Minutes(10));
  CHECK(watch.Result(kStart + absl::Minutes(10)).findings().empty());  // 4: within the budget
  Write(node.port + "symbol_error", "40");
  Write(node.net + "statistics/rx_crc_errors", "3");
  watch.Sample(kStart + absl::Minutes(20));
  auto errors = Findings(watch.Result(kStart + absl::Minutes(20)), "link_errors");
  REQUIRE(errors.size() == 1);  // the netdev's 3 are within the budget
  CHECK(errors[0].device() == "mlx5_0:1");
  CHECK(errors[0].evidence().at("errors") == "40");
  CHECK(errors[0].evidence().at("counters") == "symbol_error +40");
  CHECK(errors[0].severity() == v1::SEVERITY_WARNING);
  // A counter that reads lower was reset (a driver reload): not a rise, and no event.
  const size_t events = watch.Events().size();
  Write(node.port + "symbol_error", "0");
  watch.Sample(kStart + absl::Minutes(30));
  CHECK(watch.Events().size() == events);
}

TEST_CASE("uncorrectable FEC blocks are errors: link_errors names fec_uncorrected") {
  Node node("watch_fec_uncorrected");
  const probes::SysfsRoot sysfs(node.root);
  FakeFec fec;
  fec.counts["eth0"].corrected = 1000;
  fec.counts["eth0"].uncorrected = 2;
  LinkWatchSettings settings;
  settings.fec = fec.Source();
  LinkWatch watch(&sysfs, node.Links(), settings, "n1");
  watch.Sample(kStart);  // the baseline: the 2 before it are not counted
  fec.counts["eth0"].uncorrected = 9;
  watch.Sample(kStart + absl::Seconds(10));
  v1::AuditResult r = watch.Result(kStart + absl::Seconds(10));
  auto errors = Findings(r, "link_errors");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].device() == "eth0");
  CHECK(errors[0].evidence().at("counters") == "fec_uncorrected +7");
  CHECK(errors[0].evidence().at("errors") == "7");
  CHECK(r.observed().at("eth0 fec_uncorrected") == "+7");
}

TEST_CASE("corrected FEC blocks are shown in the figures, not judged") {
  Node node("watch_fec_corrected");
  const probes::SysfsRoot sysfs(node.root);
  FakeFec fec;
  fec.counts["eth0"].corrected = 1000;
  fec.counts["eth0"].uncorrected = 0;
  LinkWatchSettings settings;
  settings.fec = fec.Source();
  LinkWatch watch(&sysfs, node.Links(), settings, "n1");
  watch.Sample(kStart);
  fec.counts["eth0"].corrected = 250000;
  watch.Sample(kStart + absl::Seconds(10));
  fec.counts["eth0"].corrected = 400000;
  watch.Sample(kStart + absl::Seconds(20));
  v1::AuditResult r = watch.Result(kStart + absl::Seconds(20));
  CHECK(r.findings().empty());
  CHECK(r.observed().at("eth0 fec_corrected") == "+399000");
  CHECK(watch.Events().empty());  // not in the ring of errors
  // Past the window, forgotten.
  const absl::Time later = kStart + absl::Hours(25);
  watch.Sample(later);
  CHECK(watch.Result(later).observed().count("eth0 fec_corrected") == 0);
}

TEST_CASE("a netdev without FEC counts is asked once, one that failed is asked again") {
  Node node("watch_fec_none");
  const probes::SysfsRoot sysfs(node.root);
  FakeFec fec;  // no counts for eth0: Unimplemented
  LinkWatchSettings settings;
  settings.fec = fec.Source();
  LinkWatch watch(&sysfs, node.Links(), settings, "n1");
  for (int i = 0; i < 5; ++i) watch.Sample(kStart + absl::Seconds(10 * i));
  CHECK(fec.asked["eth0"] == 1);
  CHECK(fec.asked.count("mlx5_0") == 0);  // RDMA ports have their own counters
  CHECK(watch.Result(kStart + absl::Seconds(40)).findings().empty());

  // No reply in time says nothing about the driver: asked again at the next sample.
  FakeFec slow;
  slow.failures["eth0"] = absl::DeadlineExceededError("netlink: no reply in 2s");
  settings.fec = slow.Source();
  LinkWatch patient(&sysfs, node.Links(), settings, "n1");
  for (int i = 0; i < 3; ++i) patient.Sample(kStart + absl::Seconds(10 * i));
  CHECK(slow.asked["eth0"] == 3);
}

TEST_CASE("without carrier_down_count a flap is half the carrier changes") {
  Node node("watch_old_kernel");
  std::filesystem::remove(node.net + "carrier_down_count");
  const probes::SysfsRoot sysfs(node.root);
  LinkWatch watch(&sysfs, node.Links(), LinkWatchSettings(), "n1");
  watch.Sample(kStart);
  Write(node.net + "carrier_changes", "4");
  watch.Sample(kStart + absl::Seconds(10));
  auto found = Findings(watch.Result(kStart + absl::Seconds(10)), "link_flapping");
  REQUIRE(found.size() == 1);
  CHECK(found[0].evidence().at("flaps") == "2");
}

TEST_CASE("the ring keeps at most max_events, and says how many it let go") {
  Node node("watch_ring");
  const probes::SysfsRoot sysfs(node.root);
  LinkWatchSettings settings;
  settings.max_events = 10;  // 5 falls and 5 errors
  settings.max_errors = 1000000;
  LinkWatch watch(&sysfs, node.Links(), settings, "n1");
  watch.Sample(kStart);
  for (int i = 1; i <= 8; ++i) {
    Write(node.port + "symbol_error", std::to_string(i));
    watch.Sample(kStart + absl::Seconds(10 * i));
  }
  CHECK(watch.Events().size() == 5);
  CHECK(watch.Result(kStart + absl::Seconds(80)).observed().at("events_dropped") == "3");
  // Errors at every sample never push out a fall: it still decides link_flapping.
  Write(node.net + "carrier_down_count", "1");
  watch.Sample(kStart + absl::Seconds(90));
  for (int i = 9; i <= 20; ++i) {
    Write(node.port + "symbol_error", std::to_string(i));
    watch.Sample(kStart + absl::Seconds(10 * i));
  }
  CHECK(Findings(watch.Result(kStart + absl::Seconds(200)), "link_flapping").size() == 1);
}

TEST_CASE("a fall and its return seen in two samples are one flap, not two") {
  Node node("watch_split_flap");
  std::filesystem::remove(node.net + "carrier_down_count");
  const probes::SysfsRoot sysfs(node.root);
  LinkWatch watch(&sysfs, node.Links(), LinkWatchSettings(), "n1");
  watch.Sample(kStart);
  Write(node.net + "carrier_changes", "1");  // down at this sample
  watch.Sample(kStart + absl::Seconds(10));
  Write(node.net + "carrier_changes", "2");  // up again by the next
  watch.Sample(kStart + absl::Seconds(20));
  auto found = Findings(watch.Result(kStart + absl::Seconds(20)), "link_flapping");
  REQUIRE(found.size() == 1);
  CHECK(found[0].evidence().at("flaps") == "1");
  CHECK(found[0].severity() == v1::SEVERITY_WARNING);
}

TEST_CASE("a bridge's carrier is its ports', not a link's: not watched") {
  Node node("watch_bridge");
  std::filesystem::create_directories(node.net + "bridge");
  const probes::SysfsRoot sysfs(node.root);
  LinkWatch watch(&sysfs, node.Links(), LinkWatchSettings(), "n1");
  watch.Sample(kStart);
  Write(node.net + "carrier_down_count", "3");  // its last container went, three times
  watch.Sample(kStart + absl::Seconds(10));
  CHECK(Findings(watch.Result(kStart + absl::Seconds(10)), "link_flapping").empty());
}

TEST_CASE("fabricctl check's link_watch audit reads the agent's verdict while it is fresh") {
  Node node("watch_file");
  const probes::SysfsRoot sysfs(node.root);
  LinkWatch watch(&sysfs, node.Links(), LinkWatchSettings(), "agent-name");
  const absl::Time now = absl::Now();
  watch.Sample(now - absl::Seconds(20));
  Write(node.net + "carrier_down_count", "2");
  watch.Sample(now - absl::Seconds(10));
  v1::AuditResult verdict = watch.Result(now);
  const std::string file = node.root + "/run/fabric-agent/link-watch";
  REQUIRE(WriteWatchVerdict(file, verdict).ok());
  CHECK(std::filesystem::status(file).permissions() ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
         std::filesystem::perms::group_read | std::filesystem::perms::others_read));

  probes::AuditContext ctx;
  ctx.root = &sysfs;
  ctx.node = "slurm-name";
  ctx.watch_file = file;
  auto results = probes::RunAudits(ctx, {"link_watch"});
  REQUIRE(results.ok());
  REQUIRE(results->size() == 1);
  const v1::AuditResult& read = (*results)[0];
  CHECK(read.outcome() == v1::AUDIT_RAN);
  REQUIRE(read.findings_size() == 1);
  CHECK(read.findings(0).kind() == "link_flapping");
  CHECK(read.findings(0).node() == "slurm-name");  // the check's name for this node
  CHECK(read.findings(0).detail().rfind("slurm-name: eth0 went down 2 times", 0) == 0);

  // An agent that stopped writing leaves no verdict.
  (*verdict.mutable_observed())["last_sample"] = "2020-01-01T00:00:00Z";
  REQUIRE(WriteWatchVerdict(file, verdict).ok());
  auto stale = probes::RunAudits(ctx, {"link_watch"});
  CHECK((*stale)[0].outcome() == v1::AUDIT_SKIPPED);
  CHECK((*stale)[0].reason().find("is fabric-agent running?") != std::string::npos);
  // No file: no agent here.
  ctx.watch_file = node.root + "/run/none";
  auto none = probes::RunAudits(ctx, {"link_watch"});
  CHECK((*none)[0].outcome() == v1::AUDIT_SKIPPED);
  // Garbage: a failed audit, not a pass.
  Write(file, "not a verdict {");
  ctx.watch_file = file;
  auto garbage = probes::RunAudits(ctx, {"link_watch"});
  CHECK((*garbage)[0].outcome() == v1::AUDIT_FAILED);
}

TEST_CASE("the known-good state the agent heard reaches fabricctl check through the watch file") {
  Node node("known_good");
  const probes::SysfsRoot sysfs(node.root);
  LinkWatch watch(&sysfs, node.Links(), LinkWatchSettings(), "agent-name");
  const absl::Time now = absl::Now();
  watch.Sample(now - absl::Seconds(20));
  watch.Sample(now - absl::Seconds(10));
  const std::string file = node.root + "/run/fabric-agent/link-watch";
  probes::AuditContext ctx;
  ctx.root = &sysfs;
  ctx.watch_file = file;
  auto known_good = [&](const v1::AuditResult& verdict) {
    REQUIRE(WriteWatchVerdict(file, verdict).ok());
    auto watched = probes::RunAudits(ctx, {"link_watch"});
    REQUIRE(watched.ok());
    return probes::KnownGoodOf(watched->front());
  };

  // No note: the agent has had no answer from a controller.
  v1::AuditResult unheard = known_good(watch.Result(now));
  CHECK(unheard.outcome() == v1::AUDIT_SKIPPED);
  CHECK(unheard.reason().find("no answer from a controller") != std::string::npos);

  v1::AuditResult verdict = watch.Result(now);
  probes::NoteKnownGood(nullptr, &verdict);
  v1::AuditResult never = known_good(verdict);
  CHECK(never.outcome() == v1::AUDIT_SKIPPED);
  CHECK(never.reason() == "no sweep has passed this node");

  v1::KnownGood kg;
  kg.set_sweep_id(42);
  kg.mutable_passed()->set_seconds(absl::ToUnixSeconds(
      absl::FromCivil(absl::CivilSecond(2026, 11, 28, 3, 0, 0), absl::UTCTimeZone())));
  verdict = watch.Result(now);
  probes::NoteKnownGood(&kg, &verdict);
  v1::AuditResult good = known_good(verdict);
  CHECK(good.outcome() == v1::AUDIT_RAN);
  CHECK(good.reason() == "sweep 42 passed at 2026-11-28T03:00:00Z");  // what fabric-health reads

  kg.mutable_lost()->set_seconds(kg.passed().seconds() + 600);
  kg.set_lost_why("sweep 43 flagged it: straggler_node");
  verdict = watch.Result(now);
  probes::NoteKnownGood(&kg, &verdict);
  v1::AuditResult lost = known_good(verdict);
  CHECK(lost.outcome() == v1::AUDIT_RAN);
  CHECK(lost.reason() ==
        "lost at 2026-11-28T03:10:00Z: sweep 43 flagged it: straggler_node (sweep 42 passed at "
        "2026-11-28T03:00:00Z)");

  // A note in a verdict the agent stopped writing says nothing.
  (*verdict.mutable_observed())["last_sample"] = "2020-01-01T00:00:00Z";
  v1::AuditResult stale = known_good(verdict);
  CHECK(stale.outcome() == v1::AUDIT_SKIPPED);
  CHECK(stale.reason().find("is fabric-agent running?") != std::string::npos);
}

}  // namespace
}  // namespace fabricctl::agent

namespace fabricctl::agent {

TEST_CASE("a counter that goes back, or a link that vanishes and returns, is a reset") {
  Node node("watch_reset");
  const probes::SysfsRoot sysfs(node.root);
  LinkWatch watch(&sysfs, node.Links(), LinkWatchSettings(), "n1");
  Write(node.port + "symbol_error", "7");
  watch.Sample(kStart);
  Write(node.port + "symbol_error", "9");  // a rise: errors, not a reset
  watch.Sample(kStart + absl::Seconds(10));
  CHECK(watch.Resets() == 0);
  Write(node.port + "symbol_error", "0");  // the driver reloaded
  watch.Sample(kStart + absl::Seconds(20));
  CHECK(watch.Resets() == 1);
  std::filesystem::remove(node.net + "carrier_changes");  // the netdev vanished ...
  watch.Sample(kStart + absl::Seconds(30));
  Write(node.net + "carrier_changes", "0");  // ... and came back
  watch.Sample(kStart + absl::Seconds(40));
  CHECK(watch.Resets() == 2);
  CHECK(watch.Links().interfaces == std::vector<std::string>{"eth0"});
}

}  // namespace fabricctl::agent
