#include "controller/sweep/load_meter.h"

#include <catch2/catch.hpp>

namespace fabricctl::controller::sweep {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1000);
absl::Time At(double seconds) { return kT0 + absl::Seconds(seconds); }

TEST_CASE("a probe alone ran at concurrency 1") {
  LoadMeter meter;
  const auto mark = meter.Enter(At(0));
  CHECK(meter.Leave(mark, At(2)) == Approx(1.0));
}

TEST_CASE("probes of a full round ran at the round's size") {
  LoadMeter meter;
  LoadMeter::Mark marks[3];
  for (auto& m : marks) m = meter.Enter(At(0));
  for (auto& m : marks) CHECK(meter.Leave(m, At(2)) == Approx(3.0));
}

TEST_CASE("a partner that failed at once hardly loads the round") {
  // Two pairs start together; one fails after 10 ms, the other runs 2 s.
  LoadMeter meter;
  const auto failing = meter.Enter(At(0));
  const auto running = meter.Enter(At(0));
  CHECK(meter.Leave(failing, At(0.01)) == Approx(2.0));
  CHECK(meter.Leave(running, At(2)) == Approx((2 * 0.01 + 1 * 1.99) / 2).epsilon(1e-9));
}

TEST_CASE("a probe that overlaps part of another's run counts for the part") {
  LoadMeter meter;
  const auto first = meter.Enter(At(0));
  const auto second = meter.Enter(At(1));
  CHECK(meter.Leave(second, At(2)) == Approx(2.0));  // the first ran all its second
  CHECK(meter.Leave(first, At(4)) == Approx((1 + 2 + 2) / 4.0));
}

TEST_CASE("a run of no measurable length counts what runs at its end") {
  LoadMeter meter;
  const auto a = meter.Enter(At(0));
  const auto b = meter.Enter(At(1));
  CHECK(meter.Leave(b, At(1)) == Approx(2.0));
  CHECK(meter.Leave(a, At(1)) >= 1.0);
}

TEST_CASE("a clock read a hair out of order does not run time backwards") {
  LoadMeter meter;
  const auto a = meter.Enter(At(1));
  const auto b = meter.Enter(At(0.999));  // read before a's, locked after it
  CHECK(meter.Leave(b, At(2)) == Approx(2.0));
  CHECK(meter.Leave(a, At(3)) == Approx(1.5));
}

}  // namespace
}  // namespace fabricctl::controller::sweep
