#include "controller/store/store.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tests/testing/testing.h"

namespace fabricctl::controller {
namespace {

// Run under tests/postgres/with_postgres.sh, the same cases run against a real PostgreSQL:
// $FABRIC_TEST_POSTGRES is its URL.
const char* Postgres() {
  const char* url = std::getenv("FABRIC_TEST_POSTGRES");
  return url != nullptr && *url ? url : nullptr;
}

// A fresh database: an SQLite file in the test's directory, or a new PostgreSQL database.
std::string TempDb(const std::string& name) {
  if (const char* url = Postgres()) {
    std::string db = name;
    for (char& c : db) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    auto admin = Database::Open(url);
    REQUIRE(admin.ok());
    REQUIRE((*admin)->Script("DROP DATABASE IF EXISTS " + db).ok());
    REQUIRE((*admin)->Script("CREATE DATABASE " + db).ok());
    const std::string base = url;
    return base.substr(0, base.rfind('/') + 1) + db;
  }
  return testing::FreshDbPath(name);
}

v1::NodeInventory Node(const std::string& name, const std::string& address) {
  v1::NodeInventory inv;
  inv.set_node_name(name);
  inv.set_agent_address(address);
  return inv;
}

}  // namespace

TEST_CASE("Nodes are upserted, touched and listed in name order") {
  auto store = Store::Open(TempDb("upsert.db"));
  REQUIRE(store.ok());
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  REQUIRE((*store)->UpsertNode(Node("node-b", "127.0.0.1:2"), t0).ok());
  REQUIRE((*store)->UpsertNode(Node("node-a", "127.0.0.1:1"), t0 + absl::Seconds(1)).ok());

  auto touched = (*store)->TouchNode("node-b", t0 + absl::Seconds(5));
  REQUIRE(touched.ok());
  CHECK(touched->known);
  auto unknown = (*store)->TouchNode("node-z", t0);
  REQUIRE(unknown.ok());
  CHECK_FALSE(unknown->known);

  // Re-registration replaces the inventory and keeps first_seen.
  REQUIRE((*store)->UpsertNode(Node("node-b", "127.0.0.1:9"), t0 + absl::Seconds(7)).ok());

  auto nodes = (*store)->ListNodes({});
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 2);
  CHECK((*nodes)[0].inventory.node_name() == "node-a");
  CHECK((*nodes)[1].inventory.agent_address() == "127.0.0.1:9");
  CHECK((*nodes)[1].first_seen == t0);
  CHECK((*nodes)[1].last_seen == t0 + absl::Seconds(7));

  auto only = (*store)->ListNodes({"node-b"});
  REQUIRE(only.ok());
  REQUIRE(only->size() == 1);
  CHECK((*only)[0].inventory.node_name() == "node-b");
}

TEST_CASE("What was written survives closing and reopening the database") {
  std::string path = TempDb("reopen.db");
  {
    auto store = Store::Open(path);
    REQUIRE(store.ok());
    REQUIRE((*store)->UpsertNode(Node("node-a", "127.0.0.1:1"), absl::FromUnixSeconds(5)).ok());
  }
  auto reopened = Store::Open(path);
  REQUIRE(reopened.ok());
  auto nodes = (*reopened)->ListNodes({});
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 1);
  CHECK((*nodes)[0].last_seen == absl::FromUnixSeconds(5));
}

TEST_CASE("A PostgreSQL server that does not answer is an error saying so") {
  auto store = Store::Open("postgresql://fabric:secret@127.0.0.1:1/fabric?connect_timeout=2");
  REQUIRE_FALSE(store.ok());
  const std::string message(store.status().message());
  CHECK(message.find("--db: cannot connect to PostgreSQL") == 0);
  CHECK(message.find("secret") == std::string::npos);
}

TEST_CASE("A PostgreSQL URL is logged without its passwords") {
  CHECK(Database::Describe(
            "postgresql://fabric:s3cret@db.example:5432/fabric?sslmode=require&password=other") ==
        "postgresql://fabric:***@db.example:5432/fabric?sslmode=require&password=***");
  CHECK(Database::Describe("postgresql://fabric@db/fabric") == "postgresql://fabric@db/fabric");
  CHECK(Database::Describe("/var/lib/fabricctl/controller.db") ==
        "/var/lib/fabricctl/controller.db");
  CHECK(Database::Scrub("postgres://u:pw1@h/d", "could not parse postgres://u:pw1@h/d") ==
        "could not parse postgres://u:***@h/d");
}

TEST_CASE("A database that cannot be opened is an error naming the path") {
  if (Postgres()) return;  // SQLite's file
  auto store = Store::Open("/nonexistent-dir/fabric.db");
  REQUIRE_FALSE(store.ok());
  CHECK(std::string(store.status().message()).find("'/nonexistent-dir/fabric.db'") !=
        std::string::npos);
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {

TEST_CASE("Sweeps, results and reports are kept as history") {
  const std::string path = TempDb("history.db");
  int64_t first, second;
  {
    auto store = Store::Open(path);
    REQUIRE(store.ok());
    v1::SweepRequest request;
    request.add_nodes("a");
    request.add_nodes("b");
    auto id = (*store)->CreateSweep(request, absl::FromUnixSeconds(100));
    REQUIRE(id.ok());
    first = *id;
    v1::ProbeResult result;
    result.set_node("a");
    result.set_peer("b");
    result.set_kind(v1::TCP_BW);
    result.add_bw()->set_bw_avg_gbps(9.5);
    REQUIRE((*store)->InsertResult(first, 0, 1, result).ok());
    v1::Report report;
    report.mutable_sweep()->set_sweep_id(first);
    report.mutable_sweep()->set_state(v1::SWEEP_COMPLETED);
    report.mutable_sweep()->mutable_finished()->set_seconds(160);
    REQUIRE((*store)->FinishSweep(first, report).ok());
    // A second sweep left running when the controller stops.
    auto running = (*store)->CreateSweep(request, absl::FromUnixSeconds(200));
    REQUIRE(running.ok());
    second = *running;
    REQUIRE((*store)->InsertResult(second, 0, 1, result).ok());
  }
  auto store = Store::Open(path);
  REQUIRE(store.ok());
  auto interrupted = (*store)->MarkRunningInterrupted(absl::FromUnixSeconds(300));
  REQUIRE(interrupted.ok());
  CHECK(*interrupted == 1);
  auto sweeps = (*store)->ListSweeps(10);
  REQUIRE(sweeps.ok());
  REQUIRE(sweeps->size() == 2);
  CHECK((*sweeps)[0].sweep_id() == second);
  CHECK((*sweeps)[0].state() == v1::SWEEP_INTERRUPTED);
  CHECK((*sweeps)[0].nodes_size() == 2);
  CHECK((*sweeps)[1].state() == v1::SWEEP_COMPLETED);
  // Completed results survive, the interrupted sweep's included.
  auto results = (*store)->ListResults(second);
  REQUIRE(results.ok());
  REQUIRE(results->size() == 1);
  CHECK((*results)[0].bw(0).bw_avg_gbps() == 9.5);
  auto latest = (*store)->GetReport(0);
  REQUIRE(latest.ok());
  CHECK(latest->sweep().sweep_id() == first);
  CHECK(absl::IsNotFound((*store)->GetReport(second).status()));
}

TEST_CASE("History is pruned by age and by count, never a running sweep") {
  auto store = Store::Open(TempDb("prune.db"));
  REQUIRE(store.ok());
  Store& s = **store;
  v1::SweepRequest request;
  v1::ProbeResult result;
  result.set_node("a");
  result.set_peer("b");
  std::vector<int64_t> ids;
  // Five finished sweeps a day apart (days 1-5), three results each, and one running (day 0).
  auto running = s.CreateSweep(request, absl::FromUnixSeconds(0));
  REQUIRE(running.ok());
  REQUIRE(s.InsertResult(*running, 0, 1, result).ok());
  for (int day = 1; day <= 5; ++day) {
    auto id = s.CreateSweep(request, absl::FromUnixSeconds(day * 86400));
    REQUIRE(id.ok());
    for (int k = 0; k < 3; ++k) REQUIRE(s.InsertResult(*id, 0, 1, result).ok());
    v1::Report report;
    report.mutable_sweep()->set_sweep_id(*id);
    REQUIRE(s.FinishSweep(*id, report).ok());
    ids.push_back(*id);
  }
  // Older than day 2.5: days 1 and 2 go; the running sweep (day 0) stays.
  auto pruned = s.PruneSweeps(absl::FromUnixSeconds(2 * 86400 + 43200), 0);
  REQUIRE(pruned.ok());
  CHECK(pruned->sweeps == 2);
  CHECK(pruned->results == 6);
  CHECK(s.ListResults(ids[0])->empty());
  CHECK(absl::IsNotFound(s.GetReport(ids[1]).status()));
  // At most two: day 3 goes (the running one is among the newest by id, and stays anyway).
  pruned = s.PruneSweeps(absl::InfinitePast(), 2);
  REQUIRE(pruned.ok());
  CHECK(pruned->sweeps == 1);
  auto left = s.ListSweeps(10);
  REQUIRE(left.ok());
  std::vector<int64_t> kept;
  for (const auto& info : *left) kept.push_back(info.sweep_id());
  CHECK(kept == std::vector<int64_t>{ids[4], ids[3], *running});
  CHECK(s.ListResults(*running)->size() == 1);
  // Nothing to prune is no error.
  pruned = s.PruneSweeps(absl::InfinitePast(), 0);
  REQUIRE(pruned.ok());
  CHECK(pruned->sweeps == 0);
}

TEST_CASE(
    "Pruning keeps each node's last passing sweep and every sweep a kept one compared against") {
  auto store = Store::Open(TempDb("prune_kept.db"));
  REQUIRE(store.ok());
  Store& s = **store;
  // Sweep 1: node a passed (its last pass for ever after). Sweeps 2-5: a fails every time, b
  // passes; sweep 4 was compared against sweep 2.
  std::vector<int64_t> ids;
  for (int k = 1; k <= 5; ++k) {
    v1::SweepRequest request;
    if (k == 4) request.set_baseline_sweep_id(ids[1]);
    auto id = s.CreateSweep(request, absl::FromUnixSeconds(k * 86400));
    REQUIRE(id.ok());
    v1::Report report;
    report.mutable_sweep()->set_sweep_id(*id);
    report.mutable_sweep()->set_state(v1::SWEEP_COMPLETED);
    v1::NodeHealth* a = report.mutable_health()->add_nodes();
    a->set_node("a");
    a->set_status(k == 1 ? v1::HEALTH_OK : v1::HEALTH_CRITICAL);
    a->mutable_pass()->set_earned(k == 1);
    a->mutable_pass()->set_ends(k != 1);
    v1::NodeHealth* b = report.mutable_health()->add_nodes();
    b->set_node("b");
    b->set_status(v1::HEALTH_OK);
    b->mutable_pass()->set_earned(true);
    REQUIRE(s.FinishSweep(*id, report).ok());
    ids.push_back(*id);
  }
  // Keep two by count: no number of later sweeps pushes these out.
  auto pruned = s.PruneSweeps(absl::InfinitePast(), 2);
  REQUIRE(pruned.ok());
  auto listed = s.ListSweeps(10);
  REQUIRE(listed.ok());
  std::vector<int64_t> kept;
  for (const auto& info : *listed) kept.push_back(info.sweep_id());
  // 5 and 4: the newest two (5 is b's last pass); 2: 4's baseline; 1: a's last pass.
  CHECK(kept == std::vector<int64_t>{ids[4], ids[3], ids[1], ids[0]});
  CHECK(pruned->sweeps == 1);  // sweep 3
}

namespace {

// A completed sweep's report judging each node as given.
v1::Report Judged(int64_t id, const std::vector<std::pair<std::string, v1::HealthStatus>>& nodes) {
  v1::Report report;
  report.mutable_sweep()->set_sweep_id(id);
  report.mutable_sweep()->set_state(v1::SWEEP_COMPLETED);
  report.mutable_sweep()->mutable_started()->set_seconds(id * 1000 - 10);
  report.mutable_sweep()->mutable_finished()->set_seconds(id * 1000);
  for (const auto& [name, status] : nodes) {
    v1::NodeHealth* node = report.mutable_health()->add_nodes();
    node->set_node(name);
    node->set_status(status);
    node->set_median_bw_gbps(90 + id);
    // What the verdict decided (controller/verdict/earned.h): a pass, or the flag ends it.
    node->mutable_pass()->set_earned(status == v1::HEALTH_OK);
    if (status == v1::HEALTH_OK) {
      node->mutable_pass()->add_probes(v1::TCP_BW);
      node->mutable_pass()->add_rails()->set_peers(2);
    } else {
      node->mutable_pass()->set_ends(true);
      node->mutable_pass()->set_why_not("straggler concerns it");
    }
    if (status != v1::HEALTH_OK) {
      v1::Finding* f = report.add_findings();
      f->set_node(name);
      f->set_kind("straggler");
      f->set_severity(v1::SEVERITY_CRITICAL);
    }
  }
  return report;
}

}  // namespace

TEST_CASE("A passing sweep makes a node known-good; a flag, a restart or a link change ends it") {
  auto store = Store::Open(TempDb("known_good.db"));
  REQUIRE(store.ok());
  Store& s = **store;
  REQUIRE(s.UpsertNode(Node("a", "127.0.0.1:1"), absl::FromUnixSeconds(1)).ok());
  auto first = s.CreateSweep({}, absl::FromUnixSeconds(2));
  REQUIRE(first.ok());
  REQUIRE(s.FinishSweep(*first, Judged(*first, {{"a", v1::HEALTH_OK}, {"b", v1::HEALTH_OK}})).ok());
  auto listed = s.ListKnownGood({});
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 2);
  CHECK((*listed)[0].node == "a");
  CHECK((*listed)[0].Good());
  CHECK((*listed)[0].sweep_id == *first);
  CHECK((*listed)[0].figures.median_bw_gbps() == 90 + *first);

  // A link's state changes between heartbeats: the touch says what it was, and a and only a
  // loses its state, with the reason kept.
  REQUIRE(s.TouchNode("a", absl::FromUnixSeconds(3), "eth0 up 100000 Mb/s").ok());
  auto same = s.TouchNode("a", absl::FromUnixSeconds(4), "eth0 up 100000 Mb/s");
  REQUIRE(same.ok());
  CHECK(same->previous_link_state.empty());
  auto changed = s.TouchNode("a", absl::FromUnixSeconds(5), "eth0 up 50000 Mb/s");
  REQUIRE(changed.ok());
  CHECK(changed->previous_link_state == "eth0 up 100000 Mb/s");
  REQUIRE(s.LoseKnownGood("a", absl::FromUnixSeconds(5), "a link changed").ok());
  // The latest loss is kept: a sweep that measured the node before it must not pass it.
  REQUIRE(s.LoseKnownGood("a", absl::FromUnixSeconds(6), "its agent restarted").ok());
  REQUIRE(s.LoseKnownGood("a", absl::FromUnixSeconds(4), "an older word").ok());
  listed = s.ListKnownGood({"a"});
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 1);
  CHECK_FALSE((*listed)[0].Good());
  CHECK((*listed)[0].lost == absl::FromUnixSeconds(6));
  CHECK((*listed)[0].lost_why == "its agent restarted");
  CHECK((*listed)[0].coverage.probes_size() == 1);

  // A later sweep passes a again and flags b: a is known-good from that sweep, b lost it there.
  auto second = s.CreateSweep({}, absl::FromUnixSeconds(7));
  REQUIRE(second.ok());
  REQUIRE(
      s.FinishSweep(*second, Judged(*second, {{"a", v1::HEALTH_OK}, {"b", v1::HEALTH_CRITICAL}}))
          .ok());
  listed = s.ListKnownGood({});
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 2);
  CHECK((*listed)[0].Good());
  CHECK((*listed)[0].sweep_id == *second);
  CHECK_FALSE((*listed)[1].Good());
  CHECK((*listed)[1].sweep_id == *first);
  CHECK((*listed)[1].lost_why == "sweep " + std::to_string(*second) + ": straggler concerns it");
}

TEST_CASE("A drain is kept from its latest verdict until a sweep gives the node back") {
  auto store = Store::Open(TempDb("drained.db"));
  REQUIRE(store.ok());
  Store& s = **store;
  auto drains = [&](const std::vector<std::string>& drain,
                    const std::vector<std::string>& given_back) {
    auto id = s.CreateSweep({}, absl::FromUnixSeconds(2));
    REQUIRE(id.ok());
    v1::Report report = Judged(*id, {{"a", v1::HEALTH_CRITICAL}, {"b", v1::HEALTH_OK}});
    report.mutable_findings(0)->set_action(v1::ACTION_DRAIN);
    for (const auto& n : drain) report.mutable_summary()->add_drain(n);
    for (const auto& n : given_back) report.mutable_summary()->add_given_back(n);
    REQUIRE(s.FinishSweep(*id, report).ok());
    REQUIRE(s.RecordDrains(*id, report).ok());
    return *id;
  };
  drains({"a"}, {});
  const int64_t again = drains({"a"}, {});  // drained again: from this verdict now
  auto listed = s.ListDrained();
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0].node == "a");
  CHECK((*listed)[0].sweep_id == again);
  CHECK((*listed)[0].since == absl::FromUnixSeconds(again * 1000));
  CHECK((*listed)[0].kinds == "straggler");
  drains({}, {"a"});
  listed = s.ListDrained();
  REQUIRE(listed.ok());
  CHECK(listed->empty());
}

TEST_CASE("A loss while a sweep measures the node outlives that sweep's pass") {
  auto store = Store::Open(TempDb("loss_sticks.db"));
  REQUIRE(store.ok());
  Store& s = **store;
  auto id = s.CreateSweep({}, absl::FromUnixSeconds(1));
  REQUIRE(id.ok());
  const v1::Report report = Judged(*id, {{"a", v1::HEALTH_OK}, {"b", v1::HEALTH_OK}});
  // a's agent restarts after the sweep started (b was never passed before: its loss too).
  const absl::Time during = absl::FromUnixSeconds(*id * 1000 - 5);
  REQUIRE(s.LoseKnownGood("a", during, "its agent restarted").ok());
  REQUIRE(s.LoseKnownGood("b", absl::FromUnixSeconds(1), "registered").ok());  // before it
  REQUIRE(s.FinishSweep(*id, report).ok());
  auto listed = s.ListKnownGood({});
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 2);
  CHECK_FALSE((*listed)[0].Good());
  CHECK((*listed)[0].lost == during);
  CHECK((*listed)[0].lost_why == "its agent restarted");
  CHECK((*listed)[1].Good());  // b's loss was older than the sweep
}

TEST_CASE("Forgetting a node forgets its pass and its drain") {
  auto store = Store::Open(TempDb("forget.db"));
  REQUIRE(store.ok());
  Store& s = **store;
  REQUIRE(s.UpsertNode(Node("a", "127.0.0.1:1"), absl::FromUnixSeconds(1)).ok());
  REQUIRE(s.UpsertNode(Node("b", "127.0.0.1:2"), absl::FromUnixSeconds(1)).ok());
  auto id = s.CreateSweep({}, absl::FromUnixSeconds(1));
  REQUIRE(id.ok());
  v1::Report report = Judged(*id, {{"a", v1::HEALTH_OK}, {"b", v1::HEALTH_CRITICAL}});
  report.mutable_summary()->add_drain("b");
  REQUIRE(s.FinishSweep(*id, report).ok());
  REQUIRE(s.RecordDrains(*id, report).ok());
  REQUIRE(s.RemoveNodes({"a", "b"}).ok());
  auto passes = s.ListKnownGood({});
  REQUIRE(passes.ok());
  CHECK(passes->empty());
  auto drained = s.ListDrained();
  REQUIRE(drained.ok());
  CHECK(drained->empty());
  // A node a sweep never passed (a loss row only) is not listed as passed.
  REQUIRE(s.LoseKnownGood("c", absl::FromUnixSeconds(9), "registered").ok());
  passes = s.ListKnownGood({"c"});
  REQUIRE(passes.ok());
  CHECK(passes->empty());
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {

TEST_CASE("A damaged database is refused at start with the integrity check's words") {
  if (Postgres()) return;  // SQLite's file
  const std::string path = TempDb("damaged.db");
  {
    auto store = Store::Open(path);
    REQUIRE(store.ok());
    for (int i = 0; i < 200; ++i) {
      REQUIRE((*store)
                  ->UpsertNode(Node("node-" + std::to_string(i), "10.0.0.1:7401"), absl::Now())
                  .ok());
    }
  }  // closed: the WAL is checkpointed into the file
  // Scribble over the middle of the file: B-tree pages, not the header.
  FILE* f = std::fopen(path.c_str(), "r+b");
  REQUIRE(f != nullptr);
  REQUIRE(std::fseek(f, 0, SEEK_END) == 0);
  const long size = std::ftell(f);
  REQUIRE(size >= 3 * 4096);
  REQUIRE(std::fseek(f, 4096 + 8, SEEK_SET) == 0);  // page 2's header and cells
  const std::string junk(4000, '\x5a');
  REQUIRE(std::fwrite(junk.data(), 1, junk.size(), f) == junk.size());
  std::fclose(f);
  auto reopened = Store::Open(path);
  REQUIRE_FALSE(reopened.ok());
  const std::string message(reopened.status().message());
  INFO(message);
  CHECK(message.find("--db '" + path + "': ") == 0);
  CHECK((message.find("integrity check failed") != std::string::npos ||
         message.find("malformed") != std::string::npos));
}

}  // namespace fabricctl::controller

namespace fabricctl::controller {
namespace {

// node-5 accepted and node-6 rejected over `sweeps`, started at `started`.
v1::Acceptance Accepting(const std::vector<int64_t>& sweeps, absl::Time started) {
  v1::Acceptance a;
  for (const char* name : {"node-5", "node-6"}) {
    v1::Acceptance::NodeVerdict* node = a.add_nodes();
    node->set_node(name);
    node->set_accepted(std::string(name) == "node-5");
  }
  for (int64_t id : sweeps) a.add_sweep_ids(id);
  a.mutable_started()->set_seconds(absl::ToUnixSeconds(started));
  a.mutable_duration()->set_seconds(90);
  return a;
}

}  // namespace

TEST_CASE("Acceptances are recorded, listed newest first and pruned with the history") {
  auto store = Store::Open(TempDb("acceptances.db"));
  REQUIRE(store.ok());
  Store& s = **store;
  std::vector<int64_t> sweeps, ids;
  // A sweep and an acceptance over it a day (days 1-3); the last one cut short.
  for (int day = 1; day <= 3; ++day) {
    auto sweep = s.CreateSweep({}, absl::FromUnixSeconds(day * 86400));
    REQUIRE(sweep.ok());
    sweeps.push_back(*sweep);
    v1::Acceptance a = Accepting({*sweep}, absl::FromUnixSeconds(day * 86400));
    if (day == 3) a.set_incomplete("pass 2: controller unreachable");
    auto id = s.RecordAcceptance(a, "fabricctl", absl::FromUnixSeconds(day * 86400 + 100));
    REQUIRE(id.ok());
    ids.push_back(*id);
  }
  auto listed = s.ListAcceptances(10, 0, /*with_verdicts=*/false);
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 3);
  const v1::AcceptanceRecord& newest = (*listed)[0];
  CHECK(newest.acceptance_id() == ids[2]);
  CHECK(newest.recorded().seconds() == 3 * 86400 + 100);
  CHECK(newest.recorded_by() == "fabricctl");
  CHECK(newest.started().seconds() == 3 * 86400);
  CHECK(newest.duration().seconds() == 90);
  CHECK(std::vector<std::string>(newest.accepted().begin(), newest.accepted().end()) ==
        std::vector<std::string>{"node-5"});
  CHECK(std::vector<std::string>(newest.rejected().begin(), newest.rejected().end()) ==
        std::vector<std::string>{"node-6"});
  CHECK(std::vector<int64_t>(newest.sweep_ids().begin(), newest.sweep_ids().end()) ==
        std::vector<int64_t>{sweeps[2]});
  CHECK(newest.incomplete() == "pass 2: controller unreachable");
  CHECK_FALSE(newest.has_acceptance());
  CHECK((*listed)[2].acceptance_id() == ids[0]);
  // A page of one older than the newest, with its verdicts.
  auto page = s.ListAcceptances(1, ids[2], /*with_verdicts=*/true);
  REQUIRE(page.ok());
  REQUIRE(page->size() == 1);
  CHECK((*page)[0].acceptance_id() == ids[1]);
  REQUIRE((*page)[0].acceptance().nodes_size() == 2);
  CHECK((*page)[0].acceptance().nodes(1).node() == "node-6");

  // A sweep history does not hold is refused, named, and nothing is recorded.
  const int64_t missing = sweeps[2] + 7;
  auto refused = s.RecordAcceptance(Accepting({sweeps[0], missing}, absl::FromUnixSeconds(1)),
                                    "fabricctl", absl::FromUnixSeconds(4 * 86400));
  CHECK(absl::IsInvalidArgument(refused.status()));
  CHECK(std::string(refused.status().message()).find("no sweep " + std::to_string(missing)) !=
        std::string::npos);
  CHECK(s.ListAcceptances(10, 0, false)->size() == 3);

  // By age: the one recorded before day 2 goes; then by count, all but the newest.
  auto pruned = s.PruneSweeps(absl::FromUnixSeconds(2 * 86400), 0);
  REQUIRE(pruned.ok());
  CHECK(pruned->acceptances == 1);
  pruned = s.PruneSweeps(absl::InfinitePast(), 1);
  REQUIRE(pruned.ok());
  CHECK(pruned->acceptances == 1);
  listed = s.ListAcceptances(10, 0, false);
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0].acceptance_id() == ids[2]);

  // A burn-in whose first pass was pruned before it ended is recorded still: its last pass's
  // sweep is held, and an earlier id was a sweep once.
  auto burn_in = s.RecordAcceptance(Accepting({sweeps[0], sweeps[2]}, absl::FromUnixSeconds(1)),
                                    "fabricctl", absl::FromUnixSeconds(5 * 86400));
  CHECK(burn_in.ok());
}

TEST_CASE("Pruning by count keeps the sweep a current drain and a kept acceptance point at") {
  auto store = Store::Open(TempDb("prune_pointed.db"));
  REQUIRE(store.ok());
  Store& s = **store;
  std::vector<int64_t> ids;
  for (int k = 1; k <= 5; ++k) {
    auto id = s.CreateSweep({}, absl::FromUnixSeconds(k * 86400));
    REQUIRE(id.ok());
    v1::Report report = Judged(*id, {{"a", v1::HEALTH_OK}});
    if (k == 1) {  // sweep 1 drains b
      report = Judged(*id, {{"b", v1::HEALTH_CRITICAL}});
      report.mutable_summary()->add_drain("b");
    }
    REQUIRE(s.FinishSweep(*id, report).ok());
    if (k == 1) REQUIRE(s.RecordDrains(*id, report).ok());
    ids.push_back(*id);
  }
  // An acceptance over sweep 2, recorded last (the newest acceptance: kept).
  REQUIRE(s.RecordAcceptance(Accepting({ids[1]}, absl::FromUnixSeconds(1)), "fabricctl",
                             absl::FromUnixSeconds(6 * 86400))
              .ok());
  auto pruned = s.PruneSweeps(absl::InfinitePast(), 1);
  REQUIRE(pruned.ok());
  auto left = s.ListSweeps(10);
  REQUIRE(left.ok());
  std::vector<int64_t> kept;
  for (const auto& info : *left) kept.push_back(info.sweep_id());
  // 5: the newest (a's last pass); 2: the acceptance's pass; 1: b's drain.
  CHECK(kept == std::vector<int64_t>{ids[4], ids[1], ids[0]});
}

}  // namespace fabricctl::controller
