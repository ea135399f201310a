#include "controller/sweep/load_meter.h"

#include <catch2/catch.hpp>

namespace fabricctl::controller::sweep {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);
absl::Time At(double seconds) { return kT0 + absl::Seconds(seconds); }

TEST_CASE("a probe alone ran at concurrency 1") {
  LoadMeter meter;
  const auto probe = meter.Enter(At(0));
  meter.Leave(probe, At(2), /*loaded=*/true);
  CHECK(meter.Concurrency(probe) == Approx(1.0));
}

TEST_CASE("probes of a full round ran at the round's size") {
  LoadMeter meter;
  LoadMeter::Ticket probes[3];
  for (auto& p : probes) p = meter.Enter(At(0));
  for (auto& p : probes) meter.Leave(p, At(2), true);
  for (auto& p : probes) CHECK(meter.Concurrency(p) == Approx(3.0));
}

TEST_CASE("a partner that failed at once hardly loads the round") {
  // Two pairs start together; one fails after 10 ms, the other runs 2 s.
  LoadMeter meter;
  const auto failing = meter.Enter(At(0));
  const auto running = meter.Enter(At(0));
  meter.Leave(failing, At(0.01), /*loaded=*/false);
  meter.Leave(running, At(2), true);
  CHECK(meter.Concurrency(running) == Approx(1.0));
}

TEST_CASE("a partner that waited out a dead path for longer loads nothing") {
  // The other pair's connect hangs 10 s and fails; this one measures for 2 s meanwhile.
  LoadMeter meter;
  const auto hung = meter.Enter(At(0));
  const auto measuring = meter.Enter(At(0.1));
  meter.Leave(measuring, At(2.1), true);
  meter.Leave(hung, At(10), /*loaded=*/false);
  CHECK(meter.Concurrency(measuring) == Approx(1.0));
}

TEST_CASE("a probe still running counts as load: it may yet measure") {
  LoadMeter meter;
  const auto a = meter.Enter(At(0));
  const auto b = meter.Enter(At(0));
  meter.Leave(a, At(2), true);
  CHECK(meter.Concurrency(a) == Approx(2.0));
  meter.Leave(b, At(3), true);
  CHECK(meter.Concurrency(b) == Approx((3 + 2) / 3.0));
}

TEST_CASE("a probe that overlaps part of another's run counts for the part") {
  LoadMeter meter;
  const auto first = meter.Enter(At(0));
  const auto second = meter.Enter(At(1));
  meter.Leave(second, At(2), true);
  meter.Leave(first, At(4), true);
  CHECK(meter.Concurrency(second) == Approx(2.0));  // the first ran all its second
  CHECK(meter.Concurrency(first) == Approx((1 + 2 + 2) / 4.0));
}

TEST_CASE("a run of no measurable length counts what runs at its instant") {
  LoadMeter meter;
  const auto a = meter.Enter(At(0));
  const auto b = meter.Enter(At(1));
  meter.Leave(b, At(1), true);
  CHECK(meter.Concurrency(b) == Approx(2.0));
  meter.Leave(a, At(1), true);
  CHECK(meter.Concurrency(a) >= 1.0);
}

TEST_CASE("a clock read a hair out of order does not run time backwards") {
  LoadMeter meter;
  const auto b = meter.Enter(At(1));
  meter.Leave(b, At(0.999), true);  // read before the enter, locked after it
  CHECK(meter.Concurrency(b) == Approx(1.0));
}

TEST_CASE("released runs are forgotten once nothing still asks about them") {
  LoadMeter meter;
  const auto a = meter.Enter(At(0));
  const auto b = meter.Enter(At(1));
  meter.Leave(a, At(2), true);
  meter.Release(a);
  // b, still unreleased, began before a ended: a's run still counts for it.
  meter.Leave(b, At(3), true);
  CHECK(meter.Concurrency(b) == Approx((1 + 2) / 2.0));
  meter.Release(b);
  // Forgotten: a later probe alone sees neither.
  const auto c = meter.Enter(At(5));
  meter.Leave(c, At(6), true);
  CHECK(meter.Concurrency(c) == Approx(1.0));
  CHECK(meter.Concurrency(a) == Approx(1.0));  // unknown: alone
}

}  // namespace
}  // namespace fabricctl::controller::sweep
