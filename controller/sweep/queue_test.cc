// The sweeps' queue (sweep_queue.h): its rules one by one, then 50 clients at once against a
// runner of fake agents, one of them a Slurm prolog's.
#include "controller/sweep/queue.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "catch2/catch.hpp"
#include "controller/sweep/runner.h"
#include "tests/testing/sweeps.h"

namespace fabricctl::controller {
namespace {

QueuedSweep Over(const std::string& identity, std::set<std::string> nodes) {
  QueuedSweep q;
  q.identity = identity;
  q.nodes = std::move(nodes);
  q.measures.add_probes(v1::TCP_BW);
  return q;
}

const absl::Time kNever = absl::InfiniteFuture();

// Enters `sweep` on a thread of its own; its place (when it gets one) or its status lands in
// the fields.
struct Entrant {
  std::thread thread;
  std::atomic<bool> placed{false}, runs{false}, done{false};
  absl::Status status;
  std::atomic<bool> leave{false};
  std::unique_ptr<SweepQueue::Place> place;
  std::atomic<bool> release{false};
  void Start(SweepQueue& queue, QueuedSweep sweep) {
    thread = std::thread([this, &queue, sweep] {
      auto p = queue.Enter(
          sweep, kNever, [this] { return leave ? absl::CancelledError("gone") : absl::OkStatus(); },
          absl::ZeroDuration());
      status = p.status();
      if (p.ok()) {
        runs = p->runs();
        place = std::make_unique<SweepQueue::Place>(*std::move(p));
        placed = true;
        while (!release) absl::SleepFor(absl::Milliseconds(5));
        place.reset();
      }
      done = true;
    });
  }
  ~Entrant() {
    release = true;
    leave = true;
    if (thread.joinable()) thread.join();
  }
};

// Polls `what` for up to 30 s (a sanitizer's slow threads included).
bool Eventually(const std::function<bool()>& what) {
  for (int i = 0; i < 3000 && !what(); ++i) absl::SleepFor(absl::Milliseconds(10));
  return what();
}

TEST_CASE("a sweep covered by the running one shares its result, restricted to its nodes") {
  SweepQueue queue(4);
  auto running = queue.Enter(Over("ops", {"a", "b", "c"}), kNever, nullptr, absl::ZeroDuration());
  REQUIRE(running.ok());
  CHECK(running->runs());
  auto covered =
      queue.Enter(Over("fabric-prolog", {"a", "b"}), kNever, nullptr, absl::ZeroDuration());
  REQUIRE(covered.ok());
  CHECK_FALSE(covered->runs());
  // Another measurement, or a node outside, is not covered: it waits (here: not at all).
  QueuedSweep other = Over("fabric-prolog", {"a", "b"});
  other.measures.add_probes(v1::TCP_LAT);
  CHECK(absl::IsFailedPrecondition(
      queue.Enter(other, absl::Now(), nullptr, absl::ZeroDuration()).status()));
  CHECK(absl::IsFailedPrecondition(
      queue.Enter(Over("fabric-prolog", {"a", "d"}), absl::Now(), nullptr, absl::ZeroDuration())
          .status()));
  v1::Report report;
  report.mutable_sweep()->set_sweep_id(7);
  running->result().Publish(report);
  auto shared = covered->result().Wait(nullptr);
  REQUIRE(shared.ok());
  CHECK(shared->sweep().sweep_id() == 7);
}

TEST_CASE("the bound is per identity: one identity's flood refuses only its own sweeps") {
  SweepQueue queue(4);
  auto running = queue.Enter(Over("flood", {"a", "b"}), kNever, nullptr, absl::ZeroDuration());
  REQUIRE(running.ok());
  Entrant w1, w2, w3, prolog;
  w1.Start(queue, Over("flood", {"c", "d"}));
  w2.Start(queue, Over("flood", {"e", "f"}));
  w3.Start(queue, Over("flood", {"i", "j"}));
  REQUIRE(Eventually([&] { return queue.Held()["flood"] == 4; }));
  // The same identity asking again for nodes it already waits for: one sweep, shared, and a
  // shared place is no sweep of its own: not held against the bound.
  auto again = queue.Enter(Over("flood", {"c", "d"}), kNever, nullptr, absl::ZeroDuration());
  REQUIRE(again.ok());
  CHECK_FALSE(again->runs());
  CHECK(queue.Held()["flood"] == 5);
  auto refused = queue.Enter(Over("flood", {"g", "h"}), kNever, nullptr, absl::ZeroDuration());
  CHECK(absl::IsResourceExhausted(refused.status()));
  CHECK(std::string(refused.status().message()).find("'flood' already has 4") != std::string::npos);
  prolog.Start(queue, Over("fabric-prolog", {"x", "y"}));
  REQUIRE(Eventually([&] { return queue.Held()["fabric-prolog"] == 1; }));
  // The turn goes to the identity served longest ago: the prolog, before the flood's next.
  { auto done = std::move(*running); }
  CHECK(Eventually([&] { return prolog.placed.load(); }));
  CHECK(prolog.runs);
  CHECK_FALSE(w1.placed);
  CHECK_FALSE(w2.placed);
}

TEST_CASE("a burst of prologs for jobs on the same nodes all share one sweep, none refused") {
  SweepQueue queue(2);
  auto running =
      queue.Enter(Over("fabric-prolog", {"a", "b"}), kNever, nullptr, absl::ZeroDuration());
  REQUIRE(running.ok());
  std::vector<SweepQueue::Place> shared;
  for (int i = 0; i < 200; ++i) {
    auto place =
        queue.Enter(Over("fabric-prolog", {"a", "b"}), kNever, nullptr, absl::ZeroDuration());
    REQUIRE(place.ok());
    CHECK_FALSE(place->runs());
    shared.push_back(*std::move(place));
  }
  CHECK(queue.Held()["fabric-prolog"] == 201);
  shared.clear();
  CHECK(queue.Held()["fabric-prolog"] == 1);
}

TEST_CASE("waiting sweeps of overlapping nodes merge into one over the union; disjoint ones wait") {
  SweepQueue queue(8);
  auto running = queue.Enter(Over("ops", {"z"}), kNever, nullptr, absl::ZeroDuration());
  REQUIRE(running.ok());
  Entrant first, overlapping, disjoint;
  first.Start(queue, Over("fabric-prolog", {"a", "b", "c"}));
  REQUIRE(Eventually([&] { return queue.Held()["fabric-prolog"] == 1; }));
  overlapping.Start(queue,
                    Over("fabric-prolog", {"b", "c", "d"}));  // 6 pairs together, 3 + 3 apart
  disjoint.Start(queue, Over("fabric-prolog", {"x", "y"}));   // 15 together, 3 + 1 apart
  REQUIRE(Eventually([&] { return queue.Held()["fabric-prolog"] == 3; }));
  { auto done = std::move(*running); }
  REQUIRE(Eventually([&] { return first.placed && overlapping.placed; }));
  CHECK(first.runs);
  CHECK(first.place->nodes() == std::set<std::string>{"a", "b", "c", "d"});
  CHECK_FALSE(overlapping.runs);
  CHECK_FALSE(disjoint.placed);  // its turn comes next
  first.release = true;
  REQUIRE(Eventually([&] { return disjoint.placed.load(); }));
  CHECK(disjoint.runs);
  CHECK(disjoint.place->nodes() == std::set<std::string>{"x", "y"});
}

TEST_CASE("waiting sweeps that a sweep now starting covers share its result") {
  SweepQueue queue(8);
  auto running = queue.Enter(Over("ops", {"z"}), kNever, nullptr, absl::ZeroDuration());
  REQUIRE(running.ok());
  Entrant wide, narrow;
  wide.Start(queue, Over("ops", {"a", "b", "c"}));
  REQUIRE(Eventually([&] { return queue.Held()["ops"] == 2; }));
  narrow.Start(queue, Over("fabric-prolog", {"a", "c"}));  // covered by a waiting one: shares it
  REQUIRE(Eventually([&] { return narrow.placed.load(); }));
  CHECK_FALSE(narrow.runs);
  { auto done = std::move(*running); }
  REQUIRE(Eventually([&] { return wide.placed.load(); }));
  CHECK(wide.runs);
}

TEST_CASE("a waiting sweep leaves when its client goes away, and gives its place back") {
  SweepQueue queue(2);
  auto running = queue.Enter(Over("ops", {"a"}), kNever, nullptr, absl::ZeroDuration());
  REQUIRE(running.ok());
  Entrant waiting;
  waiting.Start(queue, Over("ops", {"b"}));
  REQUIRE(Eventually([&] { return queue.Held()["ops"] == 2; }));
  waiting.leave = true;
  REQUIRE(Eventually([&] { return waiting.done.load(); }));
  CHECK(absl::IsCancelled(waiting.status));
  CHECK(queue.Held()["ops"] == 1);
}

TEST_CASE("50 clients at once: a flood of one identity cannot keep a prolog's sweep out") {
  sweep::Harness h("queue_flood", {"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"},
                   [](SweepOptions& o) { o.config.mutable_sweep()->set_max_per_identity(8); });
  h.fake->Hold();  // the first sweep stays in flight until every client has asked
  std::atomic<int> exhausted{0}, ran{0}, other{0};
  std::atomic<bool> prolog_done{false}, prolog_ok{false};
  std::vector<std::thread> clients;
  for (int i = 0; i < 50; ++i) {
    clients.emplace_back([&, i] {
      v1::SweepRequest request;
      request.add_probes(v1::TCP_BW);
      request.mutable_wait()->set_seconds(300);
      const bool prolog = i == 49;
      // The flood: every client another pair of nodes; the prolog's job is on two of them.
      request.add_nodes(h.names[i % 8]);
      request.add_nodes(h.names[(i / 8 + i + 1) % 8]);
      if (request.nodes(0) == request.nodes(1)) request.set_nodes(1, h.names[(i + 3) % 8]);
      auto report = h.runner->Run(request, sweep::Registry(h.names), nullptr, nullptr,
                                  prolog ? "fabric-prolog" : "flood");
      if (prolog) {
        prolog_ok = report.ok();
        prolog_done = true;
      } else if (report.ok()) {
        ++ran;
      } else if (absl::IsResourceExhausted(report.status())) {
        ++exhausted;
      } else {
        ++other;
      }
    });
  }
  // With the first sweep held, the flood holds its 8 sweeps (and the places that share one of
  // them), the rest of it is refused at once; the prolog's sweep waits in a place of its own.
  const bool settled = Eventually([&] {
    auto held = h.runner->Queued();
    return exhausted + other + held["flood"] == 49 && held["fabric-prolog"] == 1;
  });
  CHECK(settled);
  CHECK(exhausted > 0);
  const int refused = exhausted;
  h.fake->Release();
  for (auto& c : clients) c.join();
  CHECK(prolog_ok);
  CHECK(other == 0);
  CHECK(ran == 49 - refused);
  CHECK(h.runner->Queued().empty());  // every place given back
}

}  // namespace
}  // namespace fabricctl::controller
